package apiserver

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"crdplay/engine/internal/conversion"
	"crdplay/engine/internal/crstrategy"
	"crdplay/engine/internal/openapi"
)

// crdInfo is what the server builds once per CRD (by uid and resourceVersion) to serve its resources, as
// kube-apiserver's getOrCreateServingInfoFor does.
type crdInfo struct {
	crd            *apiextensionsv1.CustomResourceDefinition
	gk             schema.GroupKind
	storageVersion string
	structural     map[string]*structuralschema.Structural
	safeConverter  runtime.ObjectConvertor
	versions       map[string]*versionInfo
	replicasPaths  managedfields.ResourcePathMappings

	// unsafeConverter converts in place: for objects nobody else holds (storedResult's decode).
	unsafeConverter runtime.ObjectConvertor
}

// versionInfo is the serving state of one version.
type versionInfo struct {
	name         string
	kind         schema.GroupVersionKind
	listKind     schema.GroupVersionKind
	strategy     *crstrategy.Strategy
	status       *crstrategy.StatusStrategy // nil without the status subresource
	table        rest.TableConvertor        // nil when the columns are invalid: default printing
	scaleTable   rest.TableConvertor
	fieldManager *managedfields.FieldManager
	statusFM     *managedfields.FieldManager
	scaleFM      *managedfields.FieldManager
	warnings     []string
	subresources *apiextensionsv1.CustomResourceSubresources
	requestCodec runtime.Codec // storage codec decoding into this version
}

var metadataDescriptions = metav1.ObjectMeta{}.SwaggerDoc()

// servingInfo returns the cached serving state of a CRD, rebuilding it when the CRD changed.
func (s *Server) servingInfo(crd *apiextensionsv1.CustomResourceDefinition) (*crdInfo, error) {
	if v, ok := s.infos.Load(crd.Name); ok {
		ci := v.(*crdInfo)
		if ci.crd.UID == crd.UID && ci.crd.ResourceVersion == crd.ResourceVersion {
			return ci, nil
		}
	}
	ci, err := newCRDInfo(crd, s.cfg.Webhook)
	if err != nil {
		return nil, err
	}
	s.infos.Store(crd.Name, ci)
	return ci, nil
}

// newCRDInfo builds the serving state of a CRD in the steps of getOrCreateServingInfoFor: the schemas of every
// version, the converter (call reaches a conversion webhook), the type converter of managed fields, the field
// paths of the subresources, then the serving state of each served or stored version.
func newCRDInfo(crd *apiextensionsv1.CustomResourceDefinition, call WebhookFunc) (*crdInfo, error) {
	storageVersion, err := apihelpers.GetCRDStorageVersion(crd)
	if err != nil {
		return nil, err
	}
	info := &crdInfo{
		crd:            crd,
		gk:             schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Status.AcceptedNames.Kind},
		storageVersion: storageVersion,
		versions:       map[string]*versionInfo{},
	}
	internalSchemas, structural, read, err := versionSchemas(crd)
	if err != nil {
		return nil, err
	}
	info.structural = structural
	if info.safeConverter, info.unsafeConverter, err = conversion.NewConverter(crd, call); err != nil {
		return nil, err
	}
	typeConverter, err := openapi.TypeConverterWith(crd, read)
	if err != nil {
		return nil, err
	}
	var statusReset map[fieldpath.APIVersion]*fieldpath.Set
	if info.replicasPaths, statusReset, err = subresourcePaths(crd); err != nil {
		return nil, err
	}
	for _, v := range crd.Spec.Versions {
		if !v.Storage && !v.Served {
			continue
		}
		vi, err := info.newVersionInfo(v, internalSchemas[v.Name], typeConverter, statusReset)
		if err != nil {
			return nil, err
		}
		info.versions[v.Name] = vi
	}
	return info, nil
}

// versionSchemas reads the schema of every version that has one: in the internal form the validators take, and
// as the structural schema that pruning, defaulting and coercion use (with its defaults pruned, unless the CRD
// preserves unknown fields). read hands the internal form and the structural schema before the pruning of
// defaults, which nothing else holds, on to the OpenAPI models of managed fields, which read the same.
func versionSchemas(crd *apiextensionsv1.CustomResourceDefinition) (internalSchemas map[string]*apiextensionsinternal.CustomResourceValidation, structural map[string]*structuralschema.Structural, read map[string]openapi.Schema, err error) {
	internalSchemas = map[string]*apiextensionsinternal.CustomResourceValidation{}
	structural = map[string]*structuralschema.Structural{}
	read = map[string]openapi.Schema{}
	for _, v := range crd.Spec.Versions {
		val, err := apihelpers.GetSchemaForVersion(crd, v.Name)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("the server could not properly serve the CR schema")
		}
		if val == nil {
			continue
		}
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
			return nil, nil, nil, fmt.Errorf("failed converting CRD validation to internal version: %v", err)
		}
		internalSchemas[v.Name] = internal
		s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if !crd.Spec.PreserveUnknownFields && err != nil {
			return nil, nil, nil, fmt.Errorf("the server could not properly serve the CR schema")
		}
		if !crd.Spec.PreserveUnknownFields {
			read[v.Name] = openapi.Schema{Internal: internal.OpenAPIV3Schema, Structural: s}
			s = s.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, nil, nil, fmt.Errorf("the server could not properly serve the CR schema")
			}
		}
		structural[v.Name] = s
	}
	return internalSchemas, structural, read, nil
}

// subresourcePaths gives, by group/version, where /scale's managed fields map onto a custom resource (its spec
// replicas path; none without /scale), and the fields a /status write leaves to other managers (metadata and
// spec) where the version has /status.
func subresourcePaths(crd *apiextensionsv1.CustomResourceDefinition) (managedfields.ResourcePathMappings, map[fieldpath.APIVersion]*fieldpath.Set, error) {
	replicasPaths := managedfields.ResourcePathMappings{}
	statusReset := map[fieldpath.APIVersion]*fieldpath.Set{}
	for _, v := range crd.Spec.Versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()
		sub, err := apihelpers.GetSubresourcesForVersion(crd, v.Name)
		if err != nil {
			return nil, nil, fmt.Errorf("the server could not properly serve the CR subresources")
		}
		if sub == nil || sub.Scale == nil {
			replicasPaths[gv] = nil
		} else {
			path := fieldpath.Path{}
			for _, el := range strings.Split(strings.TrimPrefix(sub.Scale.SpecReplicasPath, "."), ".") {
				el := el
				path = append(path, fieldpath.PathElement{FieldName: &el})
			}
			replicasPaths[gv] = path
		}
		if sub != nil && sub.Status != nil {
			statusReset[fieldpath.APIVersion(gv)] = fieldpath.NewSet(fieldpath.MakePathOrDie("metadata"), fieldpath.MakePathOrDie("spec"))
		}
	}
	return replicasPaths, statusReset, nil
}

// newVersionInfo builds the serving state of version v from its schema (internal, nil without one): its
// strategies, printer columns, field managers, deprecation warning and storage codec.
func (info *crdInfo) newVersionInfo(v apiextensionsv1.CustomResourceDefinitionVersion, internal *apiextensionsinternal.CustomResourceValidation, typeConverter managedfields.TypeConverter, statusReset map[fieldpath.APIVersion]*fieldpath.Set) (*versionInfo, error) {
	crd := info.crd
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
	vi := &versionInfo{
		name:     v.Name,
		kind:     gv.WithKind(crd.Status.AcceptedNames.Kind),
		listKind: gv.WithKind(crd.Status.AcceptedNames.ListKind),
	}
	var props *apiextensionsinternal.JSONSchemaProps
	if internal != nil {
		props = internal.OpenAPIV3Schema
	}
	scaleSpec, err := info.versionStrategies(vi, v, props)
	if err != nil {
		return nil, err
	}
	// An invalid column definition makes kube-apiserver fall back to default printing (nil table here).
	if t, err := tableconvertor.New(columnsFor(v)); err == nil {
		vi.table = t
	}
	vi.scaleTable, _ = tableconvertor.New(scaleColumnsFor(v))
	if err := info.versionFieldManagers(vi, typeConverter, statusReset, scaleSpec != nil); err != nil {
		return nil, err
	}
	vi.warnings = deprecationWarnings(v, crd.Spec)
	vi.requestCodec = info.storageCodec(gv)
	return vi, nil
}

// versionStrategies sets the subresources of version v and the strategies of its custom resources and, when
// the version has it, of /status, validating with the version's schema props; it returns the /scale spec,
// nil without /scale.
func (info *crdInfo) versionStrategies(vi *versionInfo, v apiextensionsv1.CustomResourceDefinitionVersion, props *apiextensionsinternal.JSONSchemaProps) (*apiextensionsinternal.CustomResourceSubresourceScale, error) {
	validator, _, err := apiservervalidation.NewSchemaValidator(props)
	if err != nil {
		return nil, err
	}
	sub, _ := apihelpers.GetSubresourcesForVersion(info.crd, v.Name)
	vi.subresources = sub
	var statusSpec *apiextensionsinternal.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	if sub != nil && sub.Status != nil {
		statusSpec = &apiextensionsinternal.CustomResourceSubresourceStatus{}
		if props != nil && props.Properties != nil {
			if statusSchema, ok := props.Properties["status"]; ok {
				if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema); err != nil {
					return nil, err
				}
			}
		}
	}
	var scaleSpec *apiextensionsinternal.CustomResourceSubresourceScale
	if sub != nil && sub.Scale != nil {
		scaleSpec = &apiextensionsinternal.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sub.Scale, scaleSpec, nil); err != nil {
			return nil, err
		}
	}
	namespaced := info.crd.Spec.Scope == apiextensionsv1.NamespaceScoped
	vi.strategy = crstrategy.New(unstructuredTyper{}, namespaced, vi.kind, validator, statusValidator, info.structural[v.Name], statusSpec, scaleSpec, v.SelectableFields)
	if statusSpec != nil {
		vi.status = &crstrategy.StatusStrategy{Strategy: vi.strategy}
	}
	return scaleSpec, nil
}

// versionFieldManagers builds the field managers of a version: its custom resources', and those of /status and
// (with scale set) /scale when it has them.
func (info *crdInfo) versionFieldManagers(vi *versionInfo, typeConverter managedfields.TypeConverter, statusReset map[fieldpath.APIVersion]*fieldpath.Set, scale bool) error {
	gv := vi.kind.GroupVersion()
	def := defaulter{info.structural, info.gk}
	newFM := func(kind schema.GroupVersionKind, sub string, reset map[fieldpath.APIVersion]*fieldpath.Set) (*managedfields.FieldManager, error) {
		return managedfields.NewDefaultCRDFieldManager(typeConverter, info.safeConverter, def, unstructuredCreator{}, kind, gv, sub, fieldpath.NewExcludeFilterSetMap(reset))
	}
	var err error
	if vi.fieldManager, err = newFM(vi.kind, "", vi.strategy.ResetFields()); err != nil {
		return err
	}
	if vi.status != nil {
		if vi.statusFM, err = newFM(vi.kind, "status", statusReset); err != nil {
			return err
		}
	}
	if scale {
		// The /scale field manager tracks autoscaling/v1 Scale objects; the scale handler maps its entries
		// onto the custom resource's replicas path.
		if vi.scaleFM, err = newFM(scaleGVK, "scale", nil); err != nil {
			return err
		}
	}
	return nil
}

// deprecationWarnings are the warnings the requests of a deprecated version carry: its deprecationWarning, or
// the default one.
func deprecationWarnings(v apiextensionsv1.CustomResourceDefinitionVersion, spec apiextensionsv1.CustomResourceDefinitionSpec) []string {
	switch {
	case !v.Deprecated:
		return nil
	case v.DeprecationWarning != nil:
		return []string{*v.DeprecationWarning}
	}
	return []string{defaultDeprecationWarning(v.Name, spec)}
}

func columnsFor(v apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceColumnDefinition {
	if len(v.AdditionalPrinterColumns) > 0 {
		return v.AdditionalPrinterColumns
	}
	return []apiextensionsv1.CustomResourceColumnDefinition{ageColumn()}
}

func ageColumn() apiextensionsv1.CustomResourceColumnDefinition {
	return apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", Description: metadataDescriptions["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"}
}

func scaleColumnsFor(v apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceColumnDefinition {
	var cols []apiextensionsv1.CustomResourceColumnDefinition
	if v.Subresources != nil && v.Subresources.Scale != nil {
		if v.Subresources.Scale.SpecReplicasPath != "" {
			cols = append(cols, apiextensionsv1.CustomResourceColumnDefinition{Name: "Desired", Type: "integer", Description: "Number of desired replicas", JSONPath: ".spec.replicas"})
		}
		if v.Subresources.Scale.StatusReplicasPath != "" {
			cols = append(cols, apiextensionsv1.CustomResourceColumnDefinition{Name: "Available", Type: "integer", Description: "Number of actual replicas", JSONPath: ".status.replicas"})
		}
	}
	return append(cols, ageColumn())
}

// defaultDeprecationWarning names the newest served, non-deprecated version newer than the deprecated one.
func defaultDeprecationWarning(deprecated string, spec apiextensionsv1.CustomResourceDefinitionSpec) string {
	msg := fmt.Sprintf("%s/%s %s is deprecated", spec.Group, deprecated, spec.Names.Kind)
	var newer []string
	for _, v := range spec.Versions {
		if v.Served && !v.Deprecated && version.CompareKubeAwareVersionStrings(deprecated, v.Name) < 0 {
			newer = append(newer, v.Name)
		}
	}
	if len(newer) == 0 {
		return msg
	}
	sort.Slice(newer, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(newer[i], newer[j]) > 0 })
	return msg + fmt.Sprintf("; use %s/%s %s", spec.Group, newer[0], spec.Names.Kind)
}
