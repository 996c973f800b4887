package crds

import (
	"encoding/hex"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
)

// upstreamSchemeName is what the apiextensions scheme calls itself in "no kind is registered" errors.
// runtime.NewScheme names a scheme after the first caller outside apimachinery's runtime package, but it
// recognises that package by an import path the module cache spells with "@v0.37.2", so in a server built
// from modules (the oracle) the name is scheme.go's own line. A kube-apiserver built from the
// kubernetes repository would say "k8s.io/apiextensions-apiserver/pkg/apiserver/apiserver.go:56"; the
// recordings are the reference. Ours depends on the build's file paths, so it is replaced.
const upstreamSchemeName = "pkg/runtime/scheme.go:111"

var (
	// scheme mirrors the apiextensions-apiserver scheme: the apiextensions group in all its versions,
	// plus the meta types in the empty group that the server registers beside them.
	scheme = newScheme()
	codecs = serializer.NewCodecFactory(scheme)

	// GroupKind identifies CustomResourceDefinitions in errors such as apierrors.NewInvalid.
	GroupKind = schema.GroupKind{Group: apiextensions.GroupName, Kind: "CustomResourceDefinition"}
)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	s.AddUnversionedTypes(schema.GroupVersion{Version: "v1"},
		&metav1.Status{}, &metav1.WatchEvent{}, &metav1.APIVersions{},
		&metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return s
}

// Scheme returns the runtime scheme CRDs are decoded, defaulted and converted with. Callers must not
// register anything in it.
func Scheme() *runtime.Scheme { return scheme }

// Decode turns a CRD request body (POST or PUT to .../customresourcedefinitions) into a defaulted
// apiextensions/v1 object, as kube-apiserver's create and update handlers do.
//
// contentType is the request's Content-Type (application/json, application/yaml or
// application/vnd.kubernetes.protobuf; empty means JSON). directive is the fieldValidation query value:
// "" and "Warn" return unknown and duplicate fields as warnings, "Strict" rejects them with 400, "Ignore"
// drops them silently. Any other directive yields the 422 upstream gives for CreateOptions; handlers of
// PUT should validate their UpdateOptions before calling Decode, as upstream does.
//
// Every error is an *apierrors.StatusError carrying upstream's message. The object comes back defaulted
// but otherwise as sent: JSON values inside schemas (default, enum, example) keep their spelling, because
// upstream's generation bump sees it (a default of 1.0 replacing 1 is a spec change). Canonicalize, which
// BeforeCreate and BeforeUpdate call last, rewrites them the way storing the object does. The caller
// still owns system metadata (rest.WipeObjectMetaSystemFields and friends).
func Decode(body []byte, contentType string, directive string) (*apiextensionsv1.CustomResourceDefinition, []string, error) {
	if errs := metav1validation.ValidateFieldValidation(field.NewPath("fieldValidation"), directive); len(errs) > 0 {
		return nil, nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "CreateOptions"}, "", errs)
	}
	if directive == "" {
		directive = metav1.FieldValidationWarn
	}

	info, err := negotiation.NegotiateInputSerializerForMediaType(contentType, false, codecs)
	if err != nil {
		return nil, nil, asStatusError(err)
	}
	decoder := info.Serializer
	if directive != metav1.FieldValidationIgnore {
		decoder = info.StrictSerializer
	}

	obj, gvk, err := decodeInto(decoder, body, &apiextensionsv1.CustomResourceDefinition{})
	if err != nil && !warnOnly(err, obj, directive) {
		// Upstream decodes into the internal version. That differs only where conversion to v1 fails:
		// a v1beta1 body (which upstream converts, then rejects for its version) and other kinds of
		// the scheme (whose conversion error names the internal type). Redo those the upstream way.
		obj, gvk, err = decodeInto(decoder, body, &apiextensions.CustomResourceDefinition{})
		if err != nil && !warnOnly(err, obj, directive) {
			return nil, nil, transformDecodeError(err, gvk, body)
		}
	}

	var warnings []string
	if strictErr, ok := runtime.AsStrictDecodingError(err); ok {
		for _, e := range strictErr.Errors() {
			warnings = append(warnings, splitYAMLErrors(e.Error())...)
		}
	}
	if gv := gvk.GroupVersion(); gv != apiextensionsv1.SchemeGroupVersion {
		return nil, warnings, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%v)", gv.String(), apiextensionsv1.SchemeGroupVersion.String()))
	}
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, warnings, apierrors.NewInternalError(fmt.Errorf("decoded %T instead of a v1 CustomResourceDefinition", obj))
	}
	crd.APIVersion, crd.Kind = crdGVK.ToAPIVersionAndKind()
	return crd, warnings, nil
}

var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// decodeInto decodes body as the handlers do: kind and version default to the endpoint's, the object is
// defaulted in the version it was sent in, then converted into into's version.
func decodeInto(decoder runtime.Decoder, body []byte, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	gvk := crdGVK
	target := apiextensionsv1.SchemeGroupVersion
	if _, internal := into.(*apiextensions.CustomResourceDefinition); internal {
		target = apiextensions.SchemeGroupVersion
	}
	return codecs.DecoderToVersion(decoder, target).Decode(body, &gvk, into)
}

// warnOnly reports a decode that succeeded apart from unknown or duplicate fields the directive only
// warns about.
func warnOnly(err error, obj runtime.Object, directive string) bool {
	_, strict := runtime.AsStrictDecodingError(err)
	return strict && obj != nil && directive == metav1.FieldValidationWarn
}

// transformDecodeError words a failed decode as the create and update handlers do.
func transformDecodeError(err error, gvk *schema.GroupVersionKind, body []byte) error {
	msg := strings.ReplaceAll(err.Error(), scheme.Name(), upstreamSchemeName)
	if gvk != nil && len(gvk.Kind) > 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a CustomResourceDefinition: %s", gvk.Kind, gvk.Version, msg))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type CustomResourceDefinition): %s (%s)", msg, SummarizeBody(body, 30)))
}

// SummarizeBody shortens a request body for a decode error's message as upstream's handlers do (summarizeData in
// k8s.io/apiserver/pkg/endpoints/handlers): JSON-looking text as is, anything else in hex, max bytes at most.
func SummarizeBody(data []byte, max int) string {
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

// splitYAMLErrors turns one YAML strict error, which lists every duplicate key on its own line, into one
// warning per line, as the handlers do; any other error stays a single warning.
func splitYAMLErrors(msg string) []string {
	rest, ok := strings.CutPrefix(msg, "yaml: unmarshal errors:\n")
	if !ok {
		rest, ok = strings.CutPrefix(msg, "error converting YAML to JSON: yaml: unmarshal errors:\n")
	}
	if !ok {
		return []string{msg}
	}
	lines := strings.Split(rest, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}

// asStatusError keeps errors that already carry an API status (such as negotiation's 415) and wraps
// anything else as an internal error, so callers only ever see *apierrors.StatusError.
func asStatusError(err error) *apierrors.StatusError {
	if se, ok := err.(*apierrors.StatusError); ok {
		return se
	}
	if s, ok := err.(apierrors.APIStatus); ok {
		return &apierrors.StatusError{ErrStatus: s.Status()}
	}
	return apierrors.NewInternalError(err)
}
