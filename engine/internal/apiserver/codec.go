package apiserver

import (
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"
)

// scheme plays the part of apiextensions-apiserver's Scheme for custom resources: for Unstructured objects it
// only copies content (no conversion) and reports the object's own kind, which is what the request decoder relies
// on.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// unstructuredCreator makes empty custom resources of a kind.
type unstructuredCreator struct{}

func (unstructuredCreator) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// unstructuredTyper reports an Unstructured object's kind from its content.
type unstructuredTyper struct{}

func (unstructuredTyper) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if _, ok := obj.(runtime.Unstructured); !ok {
		return scheme.ObjectKinds(obj)
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	if len(gvk.Kind) == 0 {
		return nil, false, runtime.NewMissingKindErr("object has no kind field ")
	}
	if len(gvk.Version) == 0 {
		return nil, false, runtime.NewMissingVersionErr("object has no apiVersion field")
	}
	return []schema.GroupVersionKind{gvk}, false, nil
}

func (unstructuredTyper) Recognizes(schema.GroupVersionKind) bool { return false }

// coercer is what kube-apiserver applies to every custom resource it decodes or converts: ObjectMeta round trip,
// pruning, removal of nulls that are neither nullable nor defaulted, and embedded-resource metadata.
type coercer struct {
	dropInvalidMetadata bool
	repairGeneration    bool

	structural            map[string]*structuralschema.Structural // by version
	gk                    schema.GroupKind
	preserveUnknownFields bool
	returnUnknownPaths    bool
}

func (v *coercer) apply(u *unstructured.Unstructured) (unknown []string, err error) {
	kind, foundKind, err := unstructured.NestedString(u.Object, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.Object, "apiVersion")
	if err != nil {
		return nil, err
	}
	objectMeta, foundObjectMeta, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields:     v.dropInvalidMetadata,
		ReturnUnknownFieldPaths: v.returnUnknownPaths,
	})
	if err != nil {
		return nil, err
	}
	unknown = append(unknown, metaUnknown...)

	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	// Other objects (DeleteOptions, Scale) pass through the same codecs; only our kind is coerced.
	if gv.Group == v.gk.Group && kind == v.gk.Kind {
		s := v.structural[gv.Version]
		if !v.preserveUnknownFields {
			opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: v.returnUnknownPaths}
			unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, s, true, opts)...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
		}
		ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{
			DropInvalidFields:       v.dropInvalidMetadata,
			ReturnUnknownFieldPaths: v.returnUnknownPaths,
		})
		if ferr != nil {
			return nil, ferr
		}
		unknown = append(unknown, paths...)
		if v.repairGeneration && objectMeta.Generation == 0 {
			objectMeta.Generation = 1
		}
	}
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// coercingDecoder decodes with its delegate and then coerces, folding unknown fields into a strict decoding
// error when asked to report them.
type coercingDecoder struct {
	delegate runtime.Decoder
	coercer  coercer
}

func (d coercingDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var strictErrs []error
	obj, gvk, err := d.delegate.Decode(data, defaults, into)
	if err != nil {
		se, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, gvk, err
		}
		strictErrs = se.Errors()
	}
	var unknown []string
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if unknown, err = d.coercer.apply(u); err != nil {
			return nil, gvk, err
		}
	}
	if d.coercer.returnUnknownPaths && (len(strictErrs) > 0 || len(unknown) > 0) {
		for _, p := range unknown {
			strictErrs = append(strictErrs, fmt.Errorf(`unknown field "%s"`, p))
		}
		return obj, gvk, runtime.NewStrictDecodingError(strictErrs)
	}
	return obj, gvk, nil
}

// coercingConverter converts with its delegate and coerces the result against the target version's schema,
// which is where fields the target version does not declare are lost.
type coercingConverter struct {
	delegate runtime.ObjectConvertor
	coercer  coercer
}

func (c coercingConverter) Convert(in, out, context interface{}) error {
	if err := c.delegate.Convert(in, out, context); err != nil {
		return err
	}
	if u, ok := out.(*unstructured.Unstructured); ok {
		if _, err := c.coercer.apply(u); err != nil {
			return err
		}
	}
	return nil
}

func (c coercingConverter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	out, err := c.delegate.ConvertToVersion(in, gv)
	if err != nil {
		return nil, err
	}
	if u, ok := out.(*unstructured.Unstructured); ok {
		if _, err := c.coercer.apply(u); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c coercingConverter) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return c.delegate.ConvertFieldLabel(gvk, label, value)
}

// defaulter applies the structural defaults of the object's own version.
type defaulter struct {
	structural map[string]*structuralschema.Structural
	gk         schema.GroupKind
}

func (d defaulter) Default(in runtime.Object) {
	u, ok := in.(runtime.Unstructured)
	if !ok || u.GetObjectKind().GroupVersionKind().GroupKind() != d.gk {
		return
	}
	structuraldefaulting.Default(u.UnstructuredContent(), d.structural[u.GetObjectKind().GroupVersionKind().Version])
}

// requestDecoder decodes a request body for an endpoint of version gv, as the CR handler's negotiated serializer
// does: parse (strict or not, JSON or YAML), coerce, default in the body's own version, then copy (no
// conversion: a body in another version is rejected afterwards).
func (c *crdInfo) requestDecoder(yaml, strict bool, gv schema.GroupVersion) runtime.Decoder {
	base := json.NewSerializerWithOptions(json.DefaultMetaFactory, unstructuredCreator{}, unstructuredTyper{}, json.SerializerOptions{Yaml: yaml, Strict: strict})
	d := coercingDecoder{delegate: base, coercer: coercer{
		structural: c.structural, gk: c.gk, preserveUnknownFields: c.crd.Spec.PreserveUnknownFields, returnUnknownPaths: strict,
	}}
	return versioning.NewCodec(nil, d, runtime.UnsafeObjectConvertor(scheme), scheme, scheme, defaulter{c.structural, c.gk}, nil, gv, "unstructuredNegotiatedSerializer")
}

// storageCodec encodes to the storage version and decodes stored bytes into version gv: on the way in it
// converts and prunes with the storage schema; on the way out it repairs metadata, applies the storage version's
// defaults, converts and prunes with the target schema.
func (c *crdInfo) storageCodec(gv schema.GroupVersion) runtime.Codec {
	d, conv, def := c.storageDecoding()
	storageGV := schema.GroupVersion{Group: c.crd.Spec.Group, Version: c.storageVersion}
	return versioning.NewCodec(unstructured.UnstructuredJSONScheme, d, conv, unstructuredCreator{}, unstructuredTyper{}, def, storageGV, gv, "crdStorage")
}

// storageDecoding is the storage codec's decoder (the JSON parse, then repair and coercion), converter and
// defaulter; storedResult applies them to a parsed object as the codec does.
func (c *crdInfo) storageDecoding() (coercingDecoder, coercingConverter, defaulter) {
	d := coercingDecoder{delegate: unstructured.UnstructuredJSONScheme, coercer: coercer{
		dropInvalidMetadata: true, repairGeneration: true,
		structural: c.structural, gk: c.gk, preserveUnknownFields: c.crd.Spec.PreserveUnknownFields,
	}}
	conv := coercingConverter{delegate: c.safeConverter, coercer: coercer{
		structural: c.structural, gk: c.gk, preserveUnknownFields: c.crd.Spec.PreserveUnknownFields,
	}}
	return d, conv, defaulter{c.structural, c.gk}
}
