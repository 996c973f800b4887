package crds

import (
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apimachinery/pkg/util/managedfields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	openapiutil "k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	kubeopenapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

var (
	typeConverterOnce sync.Once
	typeConverter     managedfields.TypeConverter
	typeConverterErr  error
)

// TypeConverter returns the structured-merge-diff type converter for apiextensions.k8s.io/v1
// CustomResourceDefinition that kube-apiserver's field manager uses: the generated OpenAPI definitions
// (with disabled-feature fields reverted), named and tagged with x-kubernetes-group-version-kind from the
// CRD scheme, built into components the way genericapiserver's getOpenAPIModels does. It decides, for
// example, that spec.versions is atomic ("f:versions": {}) and status.conditions a map keyed by type.
// It is built once, on first use.
func TypeConverter() (managedfields.TypeConverter, error) {
	typeConverterOnce.Do(func() {
		typeConverter, typeConverterErr = buildTypeConverter()
	})
	return typeConverter, typeConverterErr
}

func buildTypeConverter() (managedfields.TypeConverter, error) {
	namer := openapinamer.NewDefinitionNamer(scheme)
	getDefinitions := openapiutil.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	config := &common.OpenAPIV3Config{
		GetDefinitions:    getDefinitions,
		GetDefinitionName: namer.GetDefinitionName,
	}
	config.Definitions = getDefinitions(func(name string) spec.Ref {
		defName, _ := namer.GetDefinitionName(name)
		return spec.MustCreateRef("#/components/schemas/" + common.EscapeJsonPointer(defName))
	})
	schemas, err := builder3.BuildOpenAPIDefinitionsForResources(config, kubeopenapiutil.GetCanonicalTypeName(&apiextensionsv1.CustomResourceDefinition{}))
	if err != nil {
		return nil, err
	}
	return managedfields.NewTypeConverter(schemas, false)
}

// ResetFields returns the fields a write to subresource ("" or "status") may not change, as upstream's
// strategies declare them for server-side apply: the main resource resets status, /status resets spec.
func ResetFields(subresource string) map[fieldpath.APIVersion]*fieldpath.Set {
	reset := fieldpath.MakePathOrDie("status")
	if subresource == "status" {
		reset = fieldpath.MakePathOrDie("spec")
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{
		"apiextensions.k8s.io/v1":      fieldpath.NewSet(reset),
		"apiextensions.k8s.io/v1beta1": fieldpath.NewSet(reset),
	}
}

// NewFieldManager returns the field manager kube-apiserver's CRD endpoint uses for subresource ("" or
// "status"), with v1 as the hub version since that is what the REST layer holds. Upstream builds one
// per endpoint at start-up; so should the caller.
func NewFieldManager(subresource string) (*managedfields.FieldManager, error) {
	tc, err := TypeConverter()
	if err != nil {
		return nil, err
	}
	return managedfields.NewDefaultFieldManager(tc, scheme, scheme, scheme,
		apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"),
		apiextensionsv1.SchemeGroupVersion, subresource,
		fieldpath.NewExcludeFilterSetMap(ResetFields(subresource)))
}
