package openapi

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	openapiv2 "k8s.io/apiextensions-apiserver/pkg/controller/openapi/v2"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

var (
	objectMetaDescription = metav1beta1.PartialObjectMetadata{}.SwaggerDoc()["metadata"]
	listMetaDescription   = metav1beta1.PartialObjectMetadataList{}.SwaggerDoc()["metadata"]
)

// Descriptions of apiVersion and kind inside embedded resources. They are fixed strings upstream, so they stay
// the same if TypeMeta's own descriptions change.
const (
	embeddedAPIVersionDescription = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	embeddedKindDescription       = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
)

func toInternal(v *apiextensionsv1.CustomResourceValidation) (*apiextensions.CustomResourceValidation, error) {
	out := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

var openAPIV3Types = []string{"string", "number", "integer", "boolean", "array", "object"}

// hasInvalidType reports whether any subschema declares a type OpenAPI v3 does not have. Upstream publishes such
// a CRD without a schema rather than risk a document clients cannot read. It visits the same places as
// apiextensions validation's SchemaHas (which we cannot import: its package pulls gRPC into the build).
func hasInvalidType(s *apiextensions.JSONSchemaProps) bool {
	if s == nil {
		return false
	}
	if s.Type != "" && !slices.Contains(openAPIV3Types, s.Type) {
		return true
	}
	if s.Items != nil {
		if hasInvalidType(s.Items.Schema) {
			return true
		}
		for i := range s.Items.JSONSchemas {
			if hasInvalidType(&s.Items.JSONSchemas[i]) {
				return true
			}
		}
	}
	for _, list := range [][]apiextensions.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			if hasInvalidType(&list[i]) {
				return true
			}
		}
	}
	if hasInvalidType(s.Not) {
		return true
	}
	for _, m := range []map[string]apiextensions.JSONSchemaProps{s.Properties, s.PatternProperties, s.Definitions} {
		for _, sub := range m {
			if hasInvalidType(&sub) {
				return true
			}
		}
	}
	if s.AdditionalProperties != nil && hasInvalidType(s.AdditionalProperties.Schema) {
		return true
	}
	if s.AdditionalItems != nil && hasInvalidType(s.AdditionalItems.Schema) {
		return true
	}
	for _, d := range s.Dependencies {
		if hasInvalidType(d.Schema) {
			return true
		}
	}
	return false
}

// ref points at a definition in the v2 or v3 layout.
func ref(name string, v2 bool) spec.Ref {
	if v2 {
		return spec.MustCreateRef("#/definitions/" + name)
	}
	return spec.MustCreateRef("#/components/schemas/" + name)
}

func refSchema(name, description string, v2 bool) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(name, v2), Description: description}}
}

// kindSchema is the custom resource's definition: the CRD schema with ObjectMeta and TypeMeta filled in, or a
// bare object when there is no publishable schema. A bare object is deliberate: listing only apiVersion, kind and
// metadata would make kubectl treat every other field as unknown.
func (r *resource) kindSchema(crd *apiextensionsv1.CustomResourceDefinition, ss *structuralschema.Structural, opts Options) *spec.Schema {
	var s *spec.Schema
	switch {
	case ss == nil, opts.V2 && (ss.XPreserveUnknownFields || crd.Spec.PreserveUnknownFields):
		// OpenAPI v2 clients (kubectl's client-side validation) reject fields a schema does not list, so a
		// schema that keeps unknown fields cannot be published there, not even with metadata.
		s = &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}}}
	default:
		if opts.V2 {
			ss = openapiv2.ToStructuralOpenAPIV2(ss)
		}
		s = ss.ToKubeOpenAPI()
		s.SetProperty("metadata", refSchema(objectMetaType, objectMetaDescription, opts.V2))
		addTypeMeta(s)
		addEmbeddedProperties(s, opts)
	}
	s.AddExtension(extGVK, []interface{}{
		map[string]interface{}{"group": r.group, "version": r.version, "kind": r.kind},
	})
	if opts.IncludeSelectableFields {
		if f := selectableFields(crd, r.version); f != nil {
			s.AddExtension(extSelectableFields, f)
		}
	}
	return s
}

func addTypeMeta(s *spec.Schema) {
	s.SetProperty("apiVersion", typeMeta()["apiVersion"])
	s.SetProperty("kind", typeMeta()["kind"])
}

// addEmbeddedProperties gives every x-kubernetes-embedded-resource object the apiVersion, kind and metadata
// properties (and requires apiVersion and kind), following properties, items and additionalProperties.
func addEmbeddedProperties(s *spec.Schema, opts Options) {
	if s == nil {
		return
	}
	for k, v := range s.Properties {
		addEmbeddedProperties(&v, opts)
		s.Properties[k] = v
	}
	if s.Items != nil {
		addEmbeddedProperties(s.Items.Schema, opts)
	}
	if s.AdditionalProperties != nil {
		addEmbeddedProperties(s.AdditionalProperties.Schema, opts)
	}
	// In v2 these properties would make kubectl reject the unknown fields the schema means to keep.
	if preserve, ok := s.Extensions.GetBool("x-kubernetes-preserve-unknown-fields"); ok && preserve && opts.V2 {
		return
	}
	if embedded, ok := s.Extensions.GetBool("x-kubernetes-embedded-resource"); !ok || !embedded {
		return
	}
	apiVersion, kind := typeMeta()["apiVersion"], typeMeta()["kind"]
	s.SetProperty("apiVersion", *apiVersion.WithDescription(embeddedAPIVersionDescription))
	s.SetProperty("kind", *kind.WithDescription(embeddedKindDescription))
	s.SetProperty("metadata", refSchema(objectMetaType, objectMetaDescription, opts.V2))
	required := slices.Clone(s.Required)
	if !slices.Contains(required, "kind") {
		s.Required = append(s.Required, "kind")
	}
	if !slices.Contains(required, "apiVersion") {
		s.Required = append(s.Required, "apiVersion")
	}
}

// buildListSchema is the definition of the list kind.
func (r *resource) buildListSchema(crd *apiextensionsv1.CustomResourceDefinition, opts Options) *spec.Schema {
	itemsDoc := fmt.Sprintf("List of %s. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", r.plural)
	// Upstream builds this ref from a "#/definitions/" string, so it is not JSON-pointer escaped.
	items := refSchema(r.kindModel(), "", opts.V2)
	s := new(spec.Schema).
		Typed("object", "").
		WithDescription(fmt.Sprintf("%s is a list of %s", r.listKind, r.kind)).
		WithRequired("items").
		SetProperty("items", *spec.ArrayProperty(&items).WithDescription(itemsDoc)).
		SetProperty("metadata", refSchema(listMetaType, listMetaDescription, opts.V2))
	addTypeMeta(s)
	s.AddExtension(extGVK, []map[string]string{{"group": r.group, "version": r.version, "kind": r.listKind}})
	if opts.IncludeSelectableFields {
		if f := selectableFields(crd, r.version); f != nil {
			s.AddExtension(extSelectableFields, f)
		}
	}
	return s
}

// selectableFields lists the version's selectable fields as {fieldPath} objects without the leading dot, or
// nil if it has none.
func selectableFields(crd *apiextensionsv1.CustomResourceDefinition, version string) any {
	for _, v := range crd.Spec.Versions {
		if v.Name != version {
			continue
		}
		if len(v.SelectableFields) == 0 {
			return nil
		}
		out := make([]any, len(v.SelectableFields))
		for i, f := range v.SelectableFields {
			out[i] = map[string]any{"fieldPath": strings.TrimPrefix(f.JSONPath, ".")}
		}
		return out
	}
	return nil
}
