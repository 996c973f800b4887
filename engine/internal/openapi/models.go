package openapi

import (
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Models returns the schemas kube-apiserver builds for server-side apply of crd's custom resources
// (buildOpenAPIModelsForApply): the components/schemas of BuildV3 for every version, merged. A metadata
// (meta.v1) or autoscaling.v1 definition met again is skipped, since every version carries the same copy; any
// other name met twice is an error, as upstream.
//
// Upstream also hands its static spec (the CRD API's own definitions) to the merge, but the merge ignores any
// document without paths and the static one has none, so its definitions never reach the models. They are left
// out here for the same result; TestModelsMatchUpstreamMerge runs upstream's merge to hold us to that.
//
// A CRD without versions yields no models (upstream would dereference a nil spec there; such a CRD never passes
// validation).
func Models(crd *apiextensionsv1.CustomResourceDefinition) (map[string]*spec.Schema, error) {
	return buildModels(crd, nil)
}

// Schema is a version's schema as the serving state has read it already: Internal, the internal form of
// its openAPIV3Schema, and Structural, structuralschema.NewStructural of Internal, which the builder may change
// (it unfolds int-or-string and embedded resources in place), so the caller must not use it afterwards.
type Schema struct {
	Internal   *apiextensions.JSONSchemaProps
	Structural *structuralschema.Structural
}

func buildModels(crd *apiextensionsv1.CustomResourceDefinition, given map[string]Schema) (map[string]*spec.Schema, error) {
	var models map[string]*spec.Schema
	for _, v := range crd.Spec.Versions {
		doc, err := buildV3(crd, v.Name, Options{}, given[v.Name])
		if err != nil {
			return nil, err
		}
		if doc.Paths == nil || doc.Components == nil {
			continue
		}
		if models == nil {
			models = map[string]*spec.Schema{}
		}
		for name, s := range doc.Components.Schemas {
			if _, dup := models[name]; dup {
				if strings.HasPrefix(name, "io.k8s.apimachinery.pkg.apis.meta.v1") || strings.HasPrefix(name, "io.k8s.api.autoscaling.v1") {
					continue
				}
				return nil, fmt.Errorf("OpenAPI V3 merge schema conflict on %s", name)
			}
			models[name] = s
		}
	}
	return models, nil
}

// TypeConverter returns the type converter kube-apiserver uses for crd's managedFields and server-side apply:
// one built from Models, honouring spec.preserveUnknownFields. Where upstream cannot build the models it logs
// the error and deduces the types from the objects instead (so every list is atomic), and so does this. An error
// from building the converter itself is returned, as it makes upstream refuse to serve the CRD.
func TypeConverter(crd *apiextensionsv1.CustomResourceDefinition) (tc managedfields.TypeConverter, err error) {
	return TypeConverterWith(crd, nil)
}

// TypeConverterWith is TypeConverter for a CRD whose schemas the caller has read (by version; a version
// missing from given is read here), which saves converting and building them again.
func TypeConverterWith(crd *apiextensionsv1.CustomResourceDefinition, given map[string]Schema) (tc managedfields.TypeConverter, err error) {
	defer recoverError(&err)
	models, err := buildModels(crd, given)
	if err != nil || len(models) == 0 {
		return managedfields.NewDeducedTypeConverter(), nil
	}
	return managedfields.NewTypeConverter(models, crd.Spec.PreserveUnknownFields)
}
