package apiserver

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"mime"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/warning"
)

// readBody reads at most limit bytes, answering 413 above it.
func readBody(req *http.Request, limit int64) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	lr := &io.LimitedReader{R: req.Body, N: limit + 1}
	data, err := io.ReadAll(lr)
	if err != nil {
		var mbe *http.MaxBytesError
		if ok := asMaxBytes(err, &mbe); ok {
			return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
		}
		return nil, err
	}
	if lr.N <= 0 {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))
	}
	return data, nil
}

func asMaxBytes(err error, target **http.MaxBytesError) bool {
	e, ok := err.(*http.MaxBytesError)
	if ok {
		*target = e
	}
	return ok
}

// fieldValidation gives the directive in force: Warn when none was asked for.
func fieldValidation(directive string) string {
	if directive == "" {
		return metav1.FieldValidationWarn
	}
	return directive
}

const (
	yamlShortPrefix = "yaml: unmarshal errors:\n"
	yamlLongPrefix  = "error converting YAML to JSON: yaml: unmarshal errors:\n"
)

// addStrictWarnings turns strict decoding errors into warnings, one per YAML error line.
func addStrictWarnings(ctx context.Context, errs []error) {
	for _, e := range errs {
		s := e.Error()
		var rest string
		switch {
		case strings.HasPrefix(s, yamlShortPrefix):
			rest = strings.TrimPrefix(s, yamlShortPrefix)
		case strings.HasPrefix(s, yamlLongPrefix):
			rest = strings.TrimPrefix(s, yamlLongPrefix)
		default:
			warning.AddWarning(ctx, "", s)
			continue
		}
		for _, line := range strings.Split(rest, "\n") {
			warning.AddWarning(ctx, "", strings.TrimSpace(line))
		}
	}
}

// decodeError is the 400 kube-apiserver answers for a body it cannot decode as kind.
func decodeError(kind string, baseErr error, gvk *schema.GroupVersionKind, body []byte) error {
	if gvk != nil && len(gvk.Kind) > 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, kind, baseErr))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, baseErr, summarizeData(body, 30)))
}

func summarizeData(data []byte, max int) string {
	switch {
	case len(data) == 0:
		return "<empty>"
	case data[0] == '{':
		if len(data) > max {
			return string(data[:max]) + " ..."
		}
		return string(data)
	default:
		if len(data) > max {
			return hex.EncodeToString(data[:max]) + " ..."
		}
		return hex.EncodeToString(data)
	}
}

// checkName rejects a body whose name or namespace disagrees with the URL.
func checkName(obj runtime.Object, name, namespace string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: %v", name, err))
	}
	if m.GetName() != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	if namespace != "" && m.GetNamespace() != "" && m.GetNamespace() != namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", m.GetNamespace(), namespace))
	}
	return nil
}

// managerOrUserAgent names the field manager of a write: the fieldManager option, or the client's user agent
// up to its first '/', made printable and capped at 128 bytes.
func managerOrUserAgent(manager, userAgent string) string {
	if manager != "" {
		return manager
	}
	return prefixFromUserAgent(userAgent)
}

func prefixFromUserAgent(u string) string {
	m := strings.Split(u, "/")[0]
	buf := []rune{}
	for _, r := range m {
		if unicode.IsPrint(r) {
			buf = append(buf, r)
		} else {
			buf = append(buf, utf8.RuneError)
		}
	}
	s := string(buf)
	for len(s) > 128 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// inputFormat says how a body is encoded, by Content-Type: JSON (the default) or YAML.
func inputFormat(req *http.Request, supported []string) (yaml bool, err error) {
	ct := req.Header.Get("Content-Type")
	if ct == "" {
		return false, nil
	}
	mt, _, perr := mime.ParseMediaType(ct)
	if perr != nil {
		return false, negotiation.NewUnsupportedMediaTypeError(supported)
	}
	switch mt {
	case "application/json":
		return false, nil
	case "application/yaml":
		return true, nil
	}
	return false, negotiation.NewUnsupportedMediaTypeError(supported)
}

func mimeType(ct string) (string, map[string]string, error) { return mime.ParseMediaType(ct) }

// createOptions reads and checks the CreateOptions of a request's query.
func createOptions(req *http.Request) (*metav1.CreateOptions, error) {
	opts := &metav1.CreateOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if errs := metav1validation.ValidateCreateOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "CreateOptions"}, "", errs)
	}
	return opts, nil
}

// updateOptions reads and checks the UpdateOptions of a request's query.
func updateOptions(req *http.Request) (*metav1.UpdateOptions, error) {
	opts := &metav1.UpdateOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if errs := metav1validation.ValidateUpdateOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "UpdateOptions"}, "", errs)
	}
	return opts, nil
}
