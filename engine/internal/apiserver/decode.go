package apiserver

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/warning"

	"crdplay/engine/internal/crds"
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

// queryOptions decodes a request's query into opts and checks them with validate, as the handlers do before
// anything else; kind names the options in the 422 of invalid ones.
func queryOptions(req *http.Request, opts runtime.Object, kind string, validate func() field.ErrorList) error {
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if errs := validate(); len(errs) > 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
	}
	return nil
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

// bodyMediaTypes are the media types of custom resource bodies, in the order a 415 lists them.
var bodyMediaTypes = []string{"application/json", "application/yaml"}

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
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, baseErr, crds.SummarizeBody(body, 30)))
}

// decodeBody decodes a POST or PUT body for this endpoint under the fieldValidation option asked for, as the
// create and update handlers do; a body of another version of the kind is rejected.
func (r *crRequest) decodeBody(body []byte, validation string) (*unstructured.Unstructured, error) {
	directive := fieldValidation(validation)
	asYAML, err := inputFormat(r.req, bodyMediaTypes)
	if err != nil {
		return nil, err
	}
	strict := directive == metav1.FieldValidationWarn || directive == metav1.FieldValidationStrict
	dec := r.ci.requestDecoder(asYAML, strict, r.vi.kind.GroupVersion())
	into := &unstructured.Unstructured{}
	into.SetGroupVersionKind(r.vi.kind)
	def := r.vi.kind
	obj, gvk, err := dec.Decode(body, &def, into)
	if err != nil {
		se, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case isStrict && obj != nil && directive == metav1.FieldValidationWarn:
			addStrictWarnings(r.req.Context(), se.Errors())
		default:
			return nil, decodeError(r.vi.kind.Kind, err, gvk, body)
		}
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unexpected object %T", obj))
	}
	if gv := gvk.GroupVersion(); gv != r.vi.kind.GroupVersion() {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", gv, r.vi.kind.GroupVersion()))
	}
	return u, nil
}

// decodeBody decodes a POST or PUT body of a CRD under the fieldValidation option asked for, reporting its
// warnings.
func (r *crdRequest) decodeBody(body []byte, validation string) (*apiextensionsv1.CustomResourceDefinition, error) {
	return r.warn(crds.Decode(body, r.req.Header.Get("Content-Type"), validation))
}
