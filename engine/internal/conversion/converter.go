package conversion

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// NewConverter returns the converters kube-apiserver would build for crd.
//
// unsafe may modify and return the object it is given; safe deep-copies its
// input first. Both reject versions the CRD does not define and answer
// ConvertFieldLabel for the CRD's selectable fields. call is only used by the
// Webhook strategy and may be nil (every webhook call then fails).
//
// err is non-nil where upstream fails to build the converter: an unknown
// strategy, or a webhook client configuration its HTTP client refuses (no URL
// or service, unparsable URL, unusable caBundle). kube-apiserver only logs
// that text and answers every request for the resource with a 500
// "Internal error occurred: error resolving resource".
func NewConverter(crd *apiextensionsv1.CustomResourceDefinition, call WebhookFunc) (safe, unsafe runtime.ObjectConvertor, err error) {
	strategy := apiextensionsv1.NoneConverter
	// Defaulting always sets spec.conversion; treat a CRD that skipped
	// defaulting like the default rather than panicking as upstream would.
	if crd.Spec.Conversion != nil {
		strategy = crd.Spec.Conversion.Strategy
	}

	var delegate versionConverter
	switch strategy {
	case apiextensionsv1.NoneConverter:
		delegate = nopConverter{}
	case apiextensionsv1.WebhookConverter:
		delegate, err = newWebhookConverter(crd, call)
		if err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("unknown conversion strategy %q for CRD %s", strategy, crd.Name)
	}

	c := &crConverter{
		delegate:         delegate,
		validVersions:    map[schema.GroupVersion]bool{},
		clusterScoped:    crd.Spec.Scope == apiextensionsv1.ClusterScoped,
		selectableFields: map[schema.GroupVersion]sets.Set[string]{},
	}
	for _, v := range crd.Spec.Versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
		c.validVersions[gv] = true
		if v.Subresources != nil && v.Subresources.Scale != nil {
			c.convertScale = true
		}
		// CRD selectableFields are written as JSONPaths (".spec.x") but field
		// selectors name them without the leading dot.
		fields := sets.New[string]()
		for _, sf := range v.SelectableFields {
			fields.Insert(strings.TrimPrefix(sf.JSONPath, "."))
		}
		c.selectableFields[gv] = fields
	}
	return &safeConverter{unsafe: c}, c, nil
}

// versionConverter is one conversion strategy. It may mutate in and return it;
// crConverter has already checked that both versions belong to the CRD.
type versionConverter interface {
	Convert(in runtime.Object, to schema.GroupVersion) (runtime.Object, error)
}

// nopConverter is the None strategy: objects are the same in every version,
// so only apiVersion changes.
type nopConverter struct{}

func (nopConverter) Convert(in runtime.Object, to schema.GroupVersion) (runtime.Object, error) {
	// The storage layer hands over lists whose items are still in the stored
	// version, so the items need rewriting as well as the list.
	if list, ok := in.(*unstructured.UnstructuredList); ok {
		for i := range list.Items {
			list.Items[i].SetGroupVersionKind(to.WithKind(list.Items[i].GroupVersionKind().Kind))
		}
	}
	in.GetObjectKind().SetGroupVersionKind(to.WithKind(in.GetObjectKind().GroupVersionKind().Kind))
	return in, nil
}

// scaleScheme knows only autoscaling/v1. The /scale subresource runs its
// typed Scale objects through the CR converter, and upstream hands them to
// client-go's scheme; that scheme is too heavy for the wasm build and nothing
// else in it matters for Scale. Built on first use: most CRDs have no /scale,
// and package initialisation is the browser engine's start-up time.
var scaleScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := autoscalingv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
})

// crConverter adds what every strategy shares: version checks, Scale
// pass-through and field labels.
type crConverter struct {
	delegate         versionConverter
	validVersions    map[schema.GroupVersion]bool
	clusterScoped    bool
	convertScale     bool
	selectableFields map[schema.GroupVersion]sets.Set[string]
}

// ConvertFieldLabel accepts the field selectors a CR list supports.
func (c *crConverter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	if label == "metadata.name" ||
		(!c.clusterScoped && label == "metadata.namespace") ||
		c.selectableFields[gvk.GroupVersion()].Has(label) {
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// Convert converts in into out, which must both be unstructured unless they
// are Scale objects of a CRD with a scale subresource.
func (c *crConverter) Convert(in, out, context interface{}) error {
	if c.convertScale {
		_, inScale := in.(*autoscalingv1.Scale)
		_, outScale := out.(*autoscalingv1.Scale)
		if inScale || outScale {
			return scaleScheme().Convert(in, out, context)
		}
	}
	uin, ok := in.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("input type %T in not valid for unstructured conversion to %T", in, out)
	}
	uout, ok := out.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("output type %T in not valid for unstructured conversion from %T", out, in)
	}
	converted, err := c.ConvertToVersion(uin, uout.GroupVersionKind().GroupVersion())
	if err != nil {
		return err
	}
	content, ok := converted.(runtime.Unstructured)
	if !ok {
		return fmt.Errorf("CR conversion failed")
	}
	uout.SetUnstructuredContent(content.UnstructuredContent())
	return nil
}

// ConvertToVersion converts in, an object or an UnstructuredList of the CRD,
// to target, possibly in place.
func (c *crConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	fromGVK := in.GetObjectKind().GroupVersionKind()
	toGVK, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{fromGVK})
	if !ok {
		return nil, fmt.Errorf("%v is unstructured and is not suitable for converting to %q", fromGVK.String(), target)
	}
	if c.convertScale {
		if _, isScale := in.(*autoscalingv1.Scale); isScale {
			return scaleScheme().ConvertToVersion(in, target)
		}
	}
	if !c.validVersions[toGVK.GroupVersion()] {
		return nil, fmt.Errorf("request to convert CR to an invalid group/version: %s", toGVK.GroupVersion().String())
	}
	// A list carries the version it was requested in, not the items'
	// version; the items are checked one by one below.
	if !c.validVersions[fromGVK.GroupVersion()] {
		return nil, fmt.Errorf("request to convert CR from an invalid group/version: %s", fromGVK.GroupVersion().String())
	}
	if list, ok := in.(*unstructured.UnstructuredList); ok {
		for i := range list.Items {
			gv := list.Items[i].GroupVersionKind().GroupVersion()
			if !c.validVersions[gv] {
				return nil, fmt.Errorf("request to convert CR list failed, list index %d has invalid group/version: %s", i, gv.String())
			}
		}
	}
	return c.delegate.Convert(in, toGVK.GroupVersion())
}

// safeConverter protects callers' objects (often straight from a cache)
// from the in-place conversion of crConverter.
type safeConverter struct {
	unsafe runtime.ObjectConvertor
}

// ConvertFieldLabel needs no copy; it only looks at strings.
func (c *safeConverter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return c.unsafe.ConvertFieldLabel(gvk, label, value)
}

// Convert converts a deep copy of in into out.
func (c *safeConverter) Convert(in, out, context interface{}) error {
	obj, ok := in.(runtime.Object)
	if !ok {
		return fmt.Errorf("input type %T in not valid for object conversion", in)
	}
	return c.unsafe.Convert(obj.DeepCopyObject(), out, context)
}

// ConvertToVersion converts a deep copy of in.
func (c *safeConverter) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	return c.unsafe.ConvertToVersion(in.DeepCopyObject(), target)
}

// checkClientConfig fails where upstream's webhook client manager refuses to
// build a REST client for the CRD, which happens when the converter is
// created rather than when the webhook is called.
func checkClientConfig(crd *apiextensionsv1.CustomResourceDefinition) error {
	var cc apiextensionsv1.WebhookClientConfig
	if w := crd.Spec.Conversion.Webhook; w != nil && w.ClientConfig != nil {
		cc = *w.ClientConfig
	}
	name := "conversion_webhook_for_" + crd.Name
	if cc.Service == nil {
		if cc.URL == nil || *cc.URL == "" {
			return callingWebhookError(name, errors.New("webhook configuration must have either service or URL"))
		}
		if _, err := url.Parse(*cc.URL); err != nil {
			return callingWebhookError(name, fmt.Errorf("Unparsable URL: %v", err))
		}
	}
	// Whitespace-only bundles count as absent: the system roots are used.
	if ca := cc.CABundle; len(bytes.TrimSpace(ca)) > 0 && !x509.NewCertPool().AppendCertsFromPEM(ca) {
		return fmt.Errorf("unable to load root certificates: %w", caBundleError(ca))
	}
	return nil
}

// callingWebhookError words err as apiserver's ErrCallingWebhook does.
func callingWebhookError(name string, err error) error {
	return fmt.Errorf("failed calling webhook %q: %w", name, err)
}

// caBundleError says why a bundle holds no usable certificate, as client-go
// does; the x509 pool itself only reports success or failure.
func caBundleError(ca []byte) error {
	for len(ca) > 0 {
		var block *pem.Block
		block, ca = pem.Decode(ca)
		if block == nil {
			return errors.New("unable to parse bytes as PEM block")
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("failed to parse certificate: %w", err)
		}
	}
	return errors.New("no valid certificate authority data seen")
}
