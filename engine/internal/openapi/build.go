package openapi

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	utilopenapi "k8s.io/apiserver/pkg/util/openapi"
	openapibuilder "k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Options choose the variant of the document, with the meaning of builder.Options upstream.
//
// The apply type converter uses the zero Options. kube-apiserver publishes /openapi/v3 with
// IncludeSelectableFields and /openapi/v2 with V2 and IncludeSelectableFields (and then prunes defaults).
type Options struct {
	// V2 shapes the schema for OpenAPI v2: refs to #/definitions/, no nullable or oneOf/anyOf/not, and a bare
	// object for schemas that preserve unknown fields (kubectl would reject unknown fields otherwise).
	V2 bool
	// StripValueValidation removes value validations (patterns, enums, bounds, ...).
	StripValueValidation bool
	// StripNullable removes nullable.
	StripNullable bool
	// AllowNonStructural keeps a schema that fails the structural checks instead of publishing a bare object.
	AllowNonStructural bool
	// IncludeSelectableFields adds x-kubernetes-selectable-fields to the kind and list definitions.
	IncludeSelectableFields bool
}

// BuildV3 returns the OpenAPI v3 document of one version of crd, identical to
// builder.BuildOpenAPIV3(crd, version, builder.Options{}) in kube-apiserver: the paths of the version's endpoints
// and, under components/schemas, the custom resource and its list with the metadata, status, options and scale
// definitions they reference. It fails if crd has no such version.
func BuildV3(crd *apiextensionsv1.CustomResourceDefinition, version string) (*spec3.OpenAPI, error) {
	return BuildV3WithOptions(crd, version, Options{})
}

// BuildV3WithOptions is BuildV3 for other Options, as builder.BuildOpenAPIV3(crd, version, opts).
func BuildV3WithOptions(crd *apiextensionsv1.CustomResourceDefinition, version string, opts Options) (doc *spec3.OpenAPI, err error) {
	return buildV3(crd, version, opts, Schema{})
}

// buildV3 is BuildV3WithOptions, with the version's schema as given (see Schema) when it has one.
func buildV3(crd *apiextensionsv1.CustomResourceDefinition, version string, opts Options, given Schema) (doc *spec3.OpenAPI, err error) {
	defer recoverError(&err)
	r, err := newResource(crd, version, opts, given)
	if err != nil {
		return nil, err
	}
	return builder3.BuildOpenAPISpecFromRoutes([]common.RouteContainer{r.buildRoutes()}, &common.OpenAPIV3Config{
		Info:                           crdSwaggerInfo(),
		CommonResponses:                map[int]*spec3.Response{401: {ResponseProps: spec3.ResponseProps{Description: "Unauthorized"}}},
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
		GetDefinitionName:              definitionName,
		GetDefinitions:                 r.definitions,
	})
}

// BuildV2 returns the OpenAPI v2 document of one version of crd, as builder.BuildOpenAPIV2(crd, version, opts).
// kube-apiserver's /openapi/v2 uses Options{V2: true, IncludeSelectableFields: true}.
func BuildV2(crd *apiextensionsv1.CustomResourceDefinition, version string, opts Options) (doc *spec.Swagger, err error) {
	defer recoverError(&err)
	r, err := newResource(crd, version, opts, Schema{})
	if err != nil {
		return nil, err
	}
	return openapibuilder.BuildOpenAPISpecFromRoutes([]common.RouteContainer{r.buildRoutes()}, &common.Config{
		ProtocolList:                   []string{"https"},
		Info:                           crdSwaggerInfo(),
		CommonResponses:                map[int]spec.Response{401: {ResponseProps: spec.ResponseProps{Description: "Unauthorized"}}},
		GetOperationIDAndTagsFromRoute: operationIDAndTags,
		GetDefinitionName:              definitionName,
		GetDefinitions:                 r.definitions,
	})
}

func crdSwaggerInfo() *spec.Info {
	return &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes CRD Swagger", Version: "v0.1.0"}}
}

// recoverError turns a panic in the upstream packages into an error: the engine builds documents for
// user-supplied CRDs, and one odd schema must fail that CRD, not the playground.
func recoverError(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("building OpenAPI: panic: %v\n%s", r, debug.Stack())
	}
}

// resource is one version of a CRD, prepared for the OpenAPI builders.
type resource struct {
	group, version, kind, listKind, plural string
	namespaced                             bool
	subresources                           *apiextensionsv1.CustomResourceSubresources

	schema, listSchema *spec.Schema
}

func newResource(crd *apiextensionsv1.CustomResourceDefinition, version string, opts Options, given Schema) (*resource, error) {
	v, err := apihelpers.GetSchemaForVersion(crd, version)
	if err != nil {
		return nil, err
	}
	ss, err := structuralFor(v, opts, given)
	if err != nil {
		return nil, err
	}
	subresources, err := apihelpers.GetSubresourcesForVersion(crd, version)
	if err != nil {
		return nil, err
	}
	r := &resource{
		group:        crd.Spec.Group,
		version:      version,
		kind:         crd.Spec.Names.Kind,
		listKind:     crd.Spec.Names.ListKind,
		plural:       crd.Spec.Names.Plural,
		namespaced:   crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		subresources: subresources,
	}
	r.schema = r.kindSchema(crd, ss, opts)
	r.listSchema = r.buildListSchema(crd, opts)
	return r, nil
}

// kindModel is the definition name of the custom resource: the group reversed, then version and kind
// (stable.example.com/v1 CronTab is com.example.stable.v1.CronTab).
func (r *resource) kindModel() string { return modelName(r.group, r.version, r.kind) }

func (r *resource) listModel() string { return modelName(r.group, r.version, r.listKind) }

func modelName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + version + "." + kind
}

// definitions are the generated definitions (ObjectMeta, Status, Scale, ...) plus the resource and its list.
// They are generated afresh for every document because kube-openapi writes namer extensions into them.
func (r *resource) definitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := staticDefinitions(ref)
	defs[r.kindModel()] = common.OpenAPIDefinition{Schema: *r.schema, Dependencies: []string{objectMetaType}}
	defs[r.listModel()] = common.OpenAPIDefinition{Schema: *r.listSchema}
	return defs
}

// staticDefinitions are the definitions generated for apiextensions-apiserver, less what disabled features add,
// as upstream's builder uses them.
var staticDefinitions = utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)

const (
	objectMetaType = metaV1 + "ObjectMeta"
	listMetaType   = metaV1 + "ListMeta"
	typeMetaType   = metaV1 + "TypeMeta"
)

// typeMeta holds TypeMeta's apiVersion and kind property schemas. They contain no references, so one copy
// serves v2 and v3.
var typeMeta = sync.OnceValue(func() map[string]spec.Schema {
	defs := staticDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + common.EscapeJsonPointer(name))
	})
	return defs[typeMetaType].Schema.Properties
})

// structuralFor returns the schema to publish, or nil where upstream publishes a bare object: no schema, a type
// outside OpenAPI v3's six, a schema that does not convert, or (unless AllowNonStructural) a non-structural one.
func structuralFor(v *apiextensionsv1.CustomResourceValidation, opts Options, given Schema) (*structuralschema.Structural, error) {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil, nil
	}
	internal, ss := given.Internal, given.Structural
	if internal == nil || ss == nil {
		in, err := toInternal(v)
		if err != nil {
			return nil, fmt.Errorf("failed converting CRD validation to internal version: %v", err)
		}
		internal = in.OpenAPIV3Schema
		if hasInvalidType(internal) {
			return nil, nil
		}
		if ss, err = structuralschema.NewStructural(internal); err != nil {
			return nil, nil
		}
	} else if hasInvalidType(internal) {
		return nil, nil
	}
	if !opts.AllowNonStructural && len(structuralschema.ValidateStructural(nil, ss)) > 0 {
		return nil, nil
	}
	// Unfold adds the anyOf/allOf of int-or-string and embedded resources; stripping comes after so it can
	// remove them again.
	ss = ss.Unfold()
	if opts.StripValueValidation {
		ss = ss.StripValueValidations()
	}
	if opts.StripNullable {
		ss = ss.StripNullable()
	}
	return ss, nil
}
