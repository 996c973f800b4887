package conversion

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// WebhookTimeout is how long kube-apiserver waits for a conversion webhook.
// CRDs have no field to change it: it is the 30s that apiserver's webhook
// client manager sets on every webhook REST client.
const WebhookTimeout = 30 * time.Second

// WebhookFunc delivers one ConversionReview to a CRD's conversion webhook and
// returns the body of its answer. The embedder supplies it so that this
// package never opens a connection itself.
//
// cfg is the CRD's spec.conversion.webhook.clientConfig and review the JSON
// request body. To behave like kube-apiserver, a transport:
//   - POSTs review with Content-Type application/json and Accept
//     "application/json, */*" to the webhook URL (for a service reference
//     https://<name>.<namespace>.svc:<port><path>, port 443 when unset);
//   - appends the query "?timeout=30s" itself: client-go's REST client adds
//     it for clients with a timeout, and the engine builds no URLs;
//   - trusts only cfg.CABundle, or the system roots when it is blank;
//   - honours ctx, which carries the [WebhookTimeout] deadline;
//   - returns the body of a 2xx response, and otherwise an error worded as
//     client-go's REST client words it: for a connection failure net/http's
//     `Post "https://127.0.0.1:1/crdconvert?timeout=30s": dial tcp
//     127.0.0.1:1: connect: connection refused`, for a 500 with body "boom"
//     `an error on the server ("boom") has prevented the request from
//     succeeding`.
//
// The engine reports a transport error as
// "conversion webhook for <group/version, Kind=kind> failed: <error>" and
// adds nothing else, so the error text must be complete as returned. An empty
// body without error is reported as client-go reports an empty 200 response
// with Content-Type application/json.
type WebhookFunc func(ctx context.Context, cfg apiextensionsv1.WebhookClientConfig, review []byte) ([]byte, error)

// ErrNoWebhookTransport is the transport error of every webhook call when
// NewConverter was given a nil WebhookFunc.
var ErrNoWebhookTransport = errors.New("webhook unreachable: no webhook transport is configured")

// upstreamSchemeName is what the webhook scheme calls itself in "no kind is
// registered" errors of the reference server. runtime.NewScheme names a
// scheme after its caller's file and line, skipping apimachinery's own
// scheme.go only when that file's path has no module version in it; built
// from the module cache (as the oracle is) it is not skipped and the name is
// scheme.go's own line. A kube-apiserver built inside the kubernetes tree
// says "pkg/util/webhook/client.go:74" instead. Our scheme's name depends on
// how this binary is built, so it is replaced by this constant.
const upstreamSchemeName = "pkg/runtime/scheme.go:111"

// reviewCodec encodes requests and decodes responses the way upstream's
// webhook REST client does (it ignores the response Content-Type and sniffs
// JSON, YAML or protobuf), so that malformed responses fail with the same
// messages. Built on first use (only webhook conversion needs it), so that
// it costs nothing at the browser engine's start-up.
var reviewCodec = sync.OnceValues(func() (runtime.Codec, string) {
	s := runtime.NewScheme()
	if err := apiextensionsv1beta1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	codecs := serializer.NewCodecFactory(s)
	return codecs.LegacyCodec(apiextensionsv1.SchemeGroupVersion, apiextensionsv1beta1.SchemeGroupVersion), s.Name()
})

// webhookConverter is the Webhook strategy.
type webhookConverter struct {
	call           WebhookFunc
	clientConfig   apiextensionsv1.WebhookClientConfig
	reviewVersions []string
}

func newWebhookConverter(crd *apiextensionsv1.CustomResourceDefinition, call WebhookFunc) (*webhookConverter, error) {
	if err := checkClientConfig(crd); err != nil {
		return nil, err
	}
	w := crd.Spec.Conversion.Webhook
	return &webhookConverter{
		call:           call,
		clientConfig:   *w.ClientConfig.DeepCopy(),
		reviewVersions: w.ConversionReviewVersions,
	}, nil
}

func (c *webhookConverter) Convert(in runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	// apiserver's cacher converts an object holding only apiVersion and kind
	// as a smoke test; calling the webhook for that would be pointless load.
	if isEmptyObject(in) {
		return nopConverter{}.Convert(in, to)
	}
	desired := to.String()
	gvk := in.GetObjectKind().GroupVersionKind()
	list, isList := in.(*unstructured.UnstructuredList)

	objects := objectsToConvert(in, desired)
	uid := uuid.NewUUID()
	request, response, err := newReview(c.reviewVersions, objects, desired, uid)
	if err != nil {
		return nil, err
	}
	if len(objects) == 0 {
		if !isList {
			return in, nil
		}
		out := list.DeepCopy()
		out.SetAPIVersion(desired)
		return out, nil
	}

	if err := c.roundTrip(request, response); err != nil {
		return nil, fmt.Errorf("conversion webhook for %v failed: %w", gvk, err)
	}
	converted, err := convertedObjects(uid, response)
	if err != nil {
		return nil, fmt.Errorf("conversion webhook for %v failed: %v", gvk, err)
	}
	if len(converted) != len(objects) {
		return nil, fmt.Errorf("conversion webhook for %v returned %d objects, expected %d", gvk, len(converted), len(objects))
	}

	if isList {
		// The response holds only the items that were sent; the others keep
		// their place in the copy.
		out := list.DeepCopy()
		next := 0
		for i := range out.Items {
			original := &out.Items[i]
			if original.GetAPIVersion() == desired {
				continue
			}
			u, err := rawObject(converted[next])
			if err != nil {
				return nil, fmt.Errorf("conversion webhook for %v returned invalid converted object at index %v: %v", gvk, next, err)
			}
			if got := u.GroupVersionKind().GroupVersion(); got != to {
				return nil, fmt.Errorf("conversion webhook for %v returned invalid converted object at index %v: invalid groupVersion (expected %v, received %v)", gvk, next, to, got)
			}
			if want, got := original.GroupVersionKind().Kind, u.GroupVersionKind().Kind; want != got {
				return nil, fmt.Errorf("conversion webhook for %v returned invalid converted object at index %v: invalid kind (expected %v, received %v)", gvk, next, want, got)
			}
			if err := checkIdentity(original, u); err != nil {
				return nil, fmt.Errorf("conversion webhook for %v returned invalid converted object at index %v: %v", gvk, next, err)
			}
			if err := restoreObjectMeta(original, u); err != nil {
				return nil, fmt.Errorf("conversion webhook for %v returned invalid metadata in object at index %v: %v", gvk, next, err)
			}
			out.Items[i] = *u
			next++
		}
		out.SetAPIVersion(desired)
		return out, nil
	}

	// Upstream returns this decoding error without the usual prefix.
	u, err := rawObject(converted[0])
	if err != nil {
		return nil, err
	}
	if got := u.GroupVersionKind().GroupVersion(); got != to {
		return nil, fmt.Errorf("conversion webhook for %v returned invalid object at index 0: invalid groupVersion (expected %v, received %v)", gvk, to, got)
	}
	if want, got := gvk.Kind, u.GroupVersionKind().Kind; want != got {
		return nil, fmt.Errorf("conversion webhook for %v returned invalid object at index 0: invalid kind (expected %v, received %v)", gvk, want, got)
	}
	original, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("conversion webhook for %v failed unexpected input type %T", gvk, in)
	}
	if err := checkIdentity(original, u); err != nil {
		return nil, fmt.Errorf("conversion webhook for %v returned invalid object: %v", gvk, err)
	}
	if err := restoreObjectMeta(original, u); err != nil {
		return nil, fmt.Errorf("conversion webhook for %v returned invalid metadata: %v", gvk, err)
	}
	return u, nil
}

// roundTrip sends request through the transport and decodes the answer into
// response. Its errors are those upstream's REST client would return.
func (c *webhookConverter) roundTrip(request, response runtime.Object) error {
	codec, schemeName := reviewCodec()
	body, err := runtime.Encode(codec, request)
	if err != nil {
		return err
	}
	if c.call == nil {
		return ErrNoWebhookTransport
	}
	ctx, cancel := context.WithTimeout(context.Background(), WebhookTimeout)
	defer cancel()
	body, err = c.call(ctx, c.clientConfig, body)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return fmt.Errorf("0-length response with status code: %d and content type: %s", 200, "application/json")
	}
	if _, _, err := codec.Decode(body, nil, response); err != nil {
		msg := strings.ReplaceAll(err.Error(), strconv.Quote(schemeName), strconv.Quote(upstreamSchemeName))
		return errors.New(msg)
	}
	return nil
}

// isEmptyObject reports whether in is an unstructured object with nothing
// but apiVersion and kind.
func isEmptyObject(in runtime.Object) bool {
	u, ok := in.(*unstructured.Unstructured)
	if !ok || len(u.Object) != 2 {
		return false
	}
	_, hasKind := u.Object["kind"]
	_, hasAPIVersion := u.Object["apiVersion"]
	return hasKind && hasAPIVersion
}

// objectsToConvert lists what must go to the webhook: a list's items, or the
// object itself, unless already at apiVersion.
func objectsToConvert(in runtime.Object, apiVersion string) []runtime.RawExtension {
	var objects []runtime.RawExtension
	if list, ok := in.(*unstructured.UnstructuredList); ok {
		for i := range list.Items {
			if list.Items[i].GetAPIVersion() != apiVersion {
				objects = append(objects, runtime.RawExtension{Object: &list.Items[i]})
			}
		}
		return objects
	}
	if in.GetObjectKind().GroupVersionKind().GroupVersion().String() != apiVersion {
		objects = append(objects, runtime.RawExtension{Object: in})
	}
	return objects
}

// newReview builds the request in the first review version of the CRD that
// the server speaks, and an empty review of the same version for the answer.
func newReview(versions []string, objects []runtime.RawExtension, apiVersion string, uid types.UID) (request, response runtime.Object, err error) {
	for _, v := range versions {
		switch v {
		case apiextensionsv1beta1.SchemeGroupVersion.Version:
			return &apiextensionsv1beta1.ConversionReview{
				Request:  &apiextensionsv1beta1.ConversionRequest{UID: uid, DesiredAPIVersion: apiVersion, Objects: objects},
				Response: &apiextensionsv1beta1.ConversionResponse{},
			}, &apiextensionsv1beta1.ConversionReview{}, nil
		case apiextensionsv1.SchemeGroupVersion.Version:
			return &apiextensionsv1.ConversionReview{
				Request:  &apiextensionsv1.ConversionRequest{UID: uid, DesiredAPIVersion: apiVersion, Objects: objects},
				Response: &apiextensionsv1.ConversionResponse{},
			}, &apiextensionsv1.ConversionReview{}, nil
		}
	}
	return nil, nil, errors.New("no supported conversion review versions")
}

// convertedObjects checks the envelope of a decoded answer and returns the
// converted objects, or the webhook's own failure message.
func convertedObjects(uid types.UID, response runtime.Object) ([]runtime.RawExtension, error) {
	var result metav1.Status
	var objects []runtime.RawExtension
	switch r := response.(type) {
	case *apiextensionsv1.ConversionReview:
		// A decoded body without apiVersion/kind, or of another type, must
		// not pass for an answer.
		want := apiextensionsv1.SchemeGroupVersion.WithKind("ConversionReview")
		if got := r.GroupVersionKind(); got != want {
			return nil, fmt.Errorf("expected webhook response of %v, got %v", want.String(), got.String())
		}
		if r.Response == nil {
			return nil, errors.New("no response provided")
		}
		if r.Response.UID != uid {
			return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.Response.UID)
		}
		result, objects = r.Response.Result, r.Response.ConvertedObjects
	case *apiextensionsv1beta1.ConversionReview:
		// v1beta1 answers were never checked for kind or uid; webhooks in
		// the wild rely on that.
		if r.Response == nil {
			return nil, errors.New("no response provided")
		}
		result, objects = r.Response.Result, r.Response.ConvertedObjects
	default:
		return nil, fmt.Errorf("unrecognized response type: %T", response)
	}
	if result.Status != metav1.StatusSuccess {
		if result.Message != "" {
			return nil, errors.New(result.Message)
		}
		return nil, fmt.Errorf("response.result.status was '%s', not 'Success'", result.Status)
	}
	return objects, nil
}

// rawObject decodes one converted object of the response. Decoding the
// review leaves every object as raw bytes, so there is no typed case.
func rawObject(rx runtime.RawExtension) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(rx.Raw); err != nil {
		return nil, err
	}
	return u, nil
}

// checkIdentity makes sure the webhook answered for the object it was sent:
// a conversion may not rename or move an object.
func checkIdentity(in, out *unstructured.Unstructured) error {
	if want, got := in.GetKind(), out.GetKind(); want != got {
		return fmt.Errorf("must have the same kind: %v != %v", want, got)
	}
	if want, got := in.GetName(), out.GetName(); want != got {
		return fmt.Errorf("must have the same name: %v != %v", want, got)
	}
	if want, got := in.GetNamespace(), out.GetNamespace(); want != got {
		return fmt.Errorf("must have the same namespace: %v != %v", want, got)
	}
	if want, got := in.GetUID(), out.GetUID(); want != got {
		return fmt.Errorf("must have the same UID: %v != %v", want, got)
	}
	return nil
}

// restoreObjectMeta puts the original metadata back into converted: a webhook
// may change labels and annotations, which differ between versions in some
// conversion schemes, but nothing else in metadata.
func restoreObjectMeta(original, converted *unstructured.Unstructured) error {
	raw, found := converted.Object["metadata"]
	if !found {
		return errors.New("missing metadata in converted object")
	}
	returned, ok := raw.(map[string]interface{})
	if !ok {
		return fmt.Errorf("invalid metadata of type %T in converted object", raw)
	}

	var meta interface{} = map[string]interface{}{}
	if m, ok := original.Object["metadata"]; ok {
		meta = runtime.DeepCopyJSONValue(m)
	}
	converted.Object["metadata"] = meta
	restored, ok := meta.(map[string]interface{})
	if !ok {
		return fmt.Errorf("invalid metadata of type %T in input object", meta)
	}

	for _, name := range []string{"labels", "annotations"} {
		v, found := returned[name]
		if !found || v == nil {
			delete(restored, name)
			continue
		}
		values, ok := v.(map[string]interface{})
		if !ok {
			return fmt.Errorf("invalid metadata.%s of type %T in converted object", name, v)
		}
		old, ok := restored[name].(map[string]interface{})
		if !ok && restored[name] != nil {
			return fmt.Errorf("invalid metadata.%s of type %T in original object", name, restored[name])
		}

		// Only changed maps are validated, so that an object stored before a
		// validation rule tightened still converts.
		changed := len(old) != len(values)
		strs := make(map[string]string, len(values))
		for k, v := range values {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", name, k, v)
			}
			if o, ok := old[k].(string); !ok || o != s {
				changed = true
			}
			strs[k] = s
		}
		if changed {
			var errs field.ErrorList
			if name == "labels" {
				errs = metav1validation.ValidateLabels(strs, field.NewPath("metadata", "labels"))
			} else {
				// Upstream's path really is singular here.
				errs = apivalidation.ValidateAnnotations(strs, field.NewPath("metadata", "annotation"))
			}
			if len(errs) > 0 {
				return errs.ToAggregate()
			}
		}
		restored[name] = values
	}
	return nil
}
