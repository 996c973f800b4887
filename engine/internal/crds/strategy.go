package crds

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apiextensionsfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/environment"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The functions in this file follow AE/registry/customresourcedefinition/strategy.go. Upstream's
// strategy works on the internal type; ours takes v1 objects and converts to the internal type only to
// compare specs, validate and scan schemas, which is where the conversion changes what upstream sees
// (identical per-version schemas are hoisted to spec.validation, so error paths read
// "spec.validation.openAPIV3Schema...").

// PrepareForCreate resets what a client may not set on a new CRD: status is cleared except for
// storedVersions (the storage version), and generation starts at 1.
func PrepareForCreate(crd *apiextensionsv1.CustomResourceDefinition) {
	crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	crd.Generation = 1
	addStorageVersion(crd)
	dropDisabledFields(crd, nil)
}

// Validate runs upstream's CRD validation (validation.ValidateCustomResourceDefinition) on a CRD that has
// been through PrepareForCreate. rest.ValidateCreate additionally checks ObjectMeta when this returns
// nothing; BeforeCreate does both.
func Validate(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	return validate(ctx, crd, nil)
}

func validate(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, conv *conversions) field.ErrorList {
	in, err := conv.internal(crd)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateCustomResourceDefinition(ctx, in)
}

// WarningsOnCreate returns the warnings upstream attaches to a CRD create: unrecognized schema formats
// and x-kubernetes-list-type: set over objects or arrays.
func WarningsOnCreate(crd *apiextensionsv1.CustomResourceDefinition) []string {
	return warningsOnCreate(crd, nil)
}

func warningsOnCreate(crd *apiextensionsv1.CustomResourceDefinition, conv *conversions) []string {
	in, err := conv.internal(crd)
	if err != nil {
		return nil
	}
	var warnings []string
	for _, f := range unrecognizedFormats(&in.Spec) {
		warnings = append(warnings, fmt.Sprintf("unrecognized format %q", f))
	}
	return append(warnings, nonScalarSetWarnings(&in.Spec)...)
}

// PrepareForUpdate carries the stored status over (status only changes through /status), keeps the old
// generation and bumps it when the spec changed, and records a new storage version in storedVersions.
func PrepareForUpdate(newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition) {
	// rest.BeforeUpdate already does this; repeating it keeps direct callers from trusting the request.
	newCRD.Generation = oldCRD.Generation
	newCRD.Status = *oldCRD.Status.DeepCopy()
	if !specsEqual(newCRD, oldCRD) {
		newCRD.Generation = oldCRD.Generation + 1
	}
	addStorageVersion(newCRD)
	dropDisabledFields(newCRD, oldCRD)
}

// ValidateUpdate runs upstream's update validation, which relaxes every rule the old CRD already broke
// and lets CEL rules that already existed use the stored-expression environment.
func ValidateUpdate(ctx context.Context, newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	return validateUpdate(ctx, newCRD, oldCRD, nil)
}

func validateUpdate(ctx context.Context, newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition, conv *conversions) field.ErrorList {
	in, old, err := conv.pair(newCRD, oldCRD)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateCustomResourceDefinitionUpdate(ctx, in, old)
}

// WarningsOnUpdate returns the create warnings that the old CRD did not already earn.
func WarningsOnUpdate(newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition) []string {
	return warningsOnUpdate(newCRD, oldCRD, nil)
}

func warningsOnUpdate(newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition, conv *conversions) []string {
	in, old, err := conv.pair(newCRD, oldCRD)
	if err != nil {
		return nil
	}
	var warnings []string
	seenFormats := sets.New(unrecognizedFormats(&old.Spec)...)
	for _, f := range unrecognizedFormats(&in.Spec) {
		if !seenFormats.Has(f) {
			warnings = append(warnings, fmt.Sprintf("unrecognized format %q", f))
		}
	}
	seenSets := sets.New(nonScalarSetWarnings(&old.Spec)...)
	for _, w := range nonScalarSetWarnings(&in.Spec) {
		if !seenSets.Has(w) {
			warnings = append(warnings, w)
		}
	}
	return warnings
}

// PrepareForStatusUpdate keeps the stored spec on a /status write. Upstream means to reset metadata too
// but passes the new object as both arguments of metav1.ResetObjectMetaForStatus
// (kubernetes/kubernetes#137681), so labels, annotations and finalizers sent to /status are kept; the
// finalizer controller relies on that to drop its finalizer through /status.
func PrepareForStatusUpdate(newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition) {
	newCRD.Generation = oldCRD.Generation
	// The stored spec itself, not a copy: after this a /status write only reads it (its validation and
	// Canonicalize leave the spec out) and encodes it.
	newCRD.Spec = oldCRD.Spec
}

// ValidateStatusUpdate runs upstream's /status validation: the ObjectMeta update rules and
// status.acceptedNames. Nothing ties storedVersions to the versions there, so a /status write may drop the
// storage version from it (the next spec update puts it back).
func ValidateStatusUpdate(ctx context.Context, newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition) field.ErrorList {
	// Upstream's status validation reads metadata and status only: the specs, all but the whole of a large
	// CRD, are left out of the conversion.
	in, old, err := toInternalPair(withoutSpec(newCRD), withoutSpec(oldCRD))
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return validation.ValidateUpdateCustomResourceDefinitionStatus(ctx, in, old)
}

// Canonicalize rewrites crd into the form kube-apiserver stores and returns: upstream keeps CRDs in the
// internal version and encodes them to v1 for etcd, so JSON values inside schemas (default, enum,
// example) are re-marshalled (1.0 becomes 1, object keys sorted, null defaults dropped). Upstream's own
// Canonicalize does nothing; this does the storage round trip's part, after validation and the
// generation check have seen the request as sent.
func Canonicalize(crd *apiextensionsv1.CustomResourceDefinition) {
	canonicalize(crd, nil)
}

func canonicalize(crd *apiextensionsv1.CustomResourceDefinition, conv *conversions) {
	in, err := conv.internal(crd)
	if err != nil {
		return // only unparseable JSON fails, and decoding already rejected that
	}
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_apiextensions_CustomResourceDefinition_To_v1_CustomResourceDefinition(in, out, nil); err != nil {
		return
	}
	out.TypeMeta = crd.TypeMeta
	*crd = *out
}

// BeforeCreate is rest.BeforeCreate with the CRD strategy: namespace check, PrepareForCreate, Validate
// and then ObjectMeta validation, warnings, Canonicalize. The caller must have set the system fields first
// (rest.FillObjectMetaSystemFields, and a name when only generateName was given), as
// registry.Store.Create does. Errors are 422 Invalid (or 400/500) *apierrors.StatusError values.
func BeforeCreate(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	ctx, rec := withWarnings(ctx)
	err := rest.BeforeCreate(Strategy{conv: &conversions{}}, ctx, crd)
	if err == nil {
		// Create validation requires every schema to be structural and preserveUnknownFields false, which is
		// all the non-structural schema controller checks: its verdict on the new CRD is known, and it need not
		// build every structural schema again (tens of milliseconds for a large CRD).
		rememberNonStructural(crd, nil)
	}
	return rec.warnings, err
}

// BeforeUpdate is rest.BeforeUpdate with the CRD strategy, for PUT and PATCH of a CRD: it keeps uid,
// creationTimestamp and deletion fields from old, runs PrepareForUpdate, the ObjectMeta update rules and
// ValidateUpdate, returns WarningsOnUpdate and finally canonicalizes newCRD.
func BeforeUpdate(ctx context.Context, newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition) ([]string, error) {
	ctx, rec := withWarnings(ctx)
	err := rest.BeforeUpdate(Strategy{conv: &conversions{}}, ctx, newCRD, oldCRD)
	return rec.warnings, err
}

// BeforeStatusUpdate is rest.BeforeUpdate with the /status strategy. It never warns.
func BeforeStatusUpdate(ctx context.Context, newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition) error {
	ctx, _ = withWarnings(ctx)
	return rest.BeforeUpdate(StatusStrategy{}, ctx, newCRD, oldCRD)
}

// Strategy is the CRD create/update strategy as a rest.RESTCreateStrategy and rest.RESTUpdateStrategy
// over *apiextensionsv1.CustomResourceDefinition, for use with rest.BeforeCreate and rest.BeforeUpdate.
type Strategy struct {
	// conv, when set, is shared by the steps of one rest.BeforeCreate or rest.BeforeUpdate call.
	conv *conversions
}

// StatusStrategy is the rest.RESTUpdateStrategy of the /status subresource.
type StatusStrategy struct{}

var (
	_ rest.RESTCreateStrategy = Strategy{}
	_ rest.RESTUpdateStrategy = Strategy{}
	_ rest.RESTUpdateStrategy = StatusStrategy{}
)

// ObjectKinds reports the kinds of obj from the CRD scheme.
func (Strategy) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return scheme.ObjectKinds(obj)
}

// Recognizes reports whether the CRD scheme knows gvk.
func (Strategy) Recognizes(gvk schema.GroupVersionKind) bool { return scheme.Recognizes(gvk) }

// GenerateName appends five random characters to base, as names.SimpleNameGenerator does.
func (Strategy) GenerateName(base string) string { return names.SimpleNameGenerator.GenerateName(base) }

// NamespaceScoped is false: CRDs are cluster-scoped.
func (Strategy) NamespaceScoped() bool { return false }

// PrepareForCreate calls PrepareForCreate.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) { PrepareForCreate(asCRD(obj)) }

// Validate calls Validate.
func (s Strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validate(ctx, asCRD(obj), s.conv)
}

// WarningsOnCreate calls WarningsOnCreate.
func (s Strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warningsOnCreate(asCRD(obj), s.conv)
}

// Canonicalize calls Canonicalize.
func (s Strategy) Canonicalize(obj runtime.Object) { canonicalize(asCRD(obj), s.conv) }

// AllowCreateOnUpdate is false: a CRD is created by POST only.
func (Strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is false: updates must carry metadata.resourceVersion.
func (Strategy) AllowUnconditionalUpdate(context.Context) bool { return false }

// PrepareForUpdate calls PrepareForUpdate.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	PrepareForUpdate(asCRD(obj), asCRD(old))
}

// ValidateUpdate calls ValidateUpdate.
func (s Strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validateUpdate(ctx, asCRD(obj), asCRD(old), s.conv)
}

// WarningsOnUpdate calls WarningsOnUpdate.
func (s Strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	return warningsOnUpdate(asCRD(obj), asCRD(old), s.conv)
}

// ObjectKinds reports the kinds of obj from the CRD scheme.
func (StatusStrategy) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	return scheme.ObjectKinds(obj)
}

// Recognizes reports whether the CRD scheme knows gvk.
func (StatusStrategy) Recognizes(gvk schema.GroupVersionKind) bool { return scheme.Recognizes(gvk) }

// NamespaceScoped is false: CRDs are cluster-scoped.
func (StatusStrategy) NamespaceScoped() bool { return false }

// AllowCreateOnUpdate is false.
func (StatusStrategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is false.
func (StatusStrategy) AllowUnconditionalUpdate(context.Context) bool { return false }

// Canonicalize canonicalizes metadata and status. The spec is the stored one (PrepareForStatusUpdate put it
// there), which Canonicalize already rewrote when it was stored, and its round trip is the identity: leaving it
// out spares a /status write the conversion of every schema of the CRD, twice.
func (StatusStrategy) Canonicalize(obj runtime.Object) {
	crd := asCRD(obj)
	spec := crd.Spec
	crd.Spec = apiextensionsv1.CustomResourceDefinitionSpec{}
	Canonicalize(crd)
	crd.Spec = spec
}

// PrepareForUpdate calls PrepareForStatusUpdate.
func (StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	PrepareForStatusUpdate(asCRD(obj), asCRD(old))
}

// ValidateUpdate calls ValidateStatusUpdate.
func (StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateStatusUpdate(ctx, asCRD(obj), asCRD(old))
}

// WarningsOnUpdate returns nothing: upstream's /status strategy never warns.
func (StatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func asCRD(obj runtime.Object) *apiextensionsv1.CustomResourceDefinition {
	return obj.(*apiextensionsv1.CustomResourceDefinition)
}

// warningCollector stands in for the HTTP warning recorder so that rest.BeforeCreate's warnings come
// back as a slice; duplicates are left for the caller's recorder to drop, as upstream's does.
type warningCollector struct{ warnings []string }

// AddWarning implements warning.Recorder.
func (c *warningCollector) AddWarning(_, text string) { c.warnings = append(c.warnings, text) }

func withWarnings(ctx context.Context) (context.Context, *warningCollector) {
	if _, ok := genericapirequest.NamespaceFrom(ctx); !ok {
		// CRDs are cluster-scoped: their requests carry the empty namespace.
		ctx = genericapirequest.WithNamespace(ctx, "")
	}
	c := &warningCollector{}
	return warning.WithWarningRecorder(ctx, c), c
}

// addStorageVersion appends the storage version to status.storedVersions unless already listed.
func addStorageVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		for _, s := range crd.Status.StoredVersions {
			if s == v.Name {
				return
			}
		}
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v.Name)
		return
	}
}

// specsEqual compares specs the way upstream does, in the internal version with semantic equality, so
// that differences the conversion erases (such as JSON number spelling in defaults) bump nothing.
func specsEqual(a, b *apiextensionsv1.CustomResourceDefinition) bool {
	ia, ib, err := toInternalPair(a, b)
	if err != nil {
		return apiequality.Semantic.DeepEqual(a.Spec, b.Spec)
	}
	return apiequality.Semantic.DeepEqual(ia.Spec, ib.Spec)
}

// conversions keeps the internal form of the CRDs that the steps of one rest.BeforeCreate or rest.BeforeUpdate
// call convert after its PrepareFor step: validation, warnings and Canonicalize read the same objects, which
// nothing changes between them, and the conversion of a large CRD is a deep copy of every schema in it (about
// a tenth of the create of a 2.8 MB CRD, each). Canonicalize comes last and takes the memoized form over. A nil
// *conversions converts every time.
type conversions struct {
	from []*apiextensionsv1.CustomResourceDefinition
	to   []*apiextensions.CustomResourceDefinition
}

func (c *conversions) internal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	if c == nil {
		return toInternal(crd)
	}
	for i, f := range c.from {
		if f == crd {
			return c.to[i], nil
		}
	}
	in, err := toInternal(crd)
	if err != nil {
		return nil, err
	}
	c.from, c.to = append(c.from, crd), append(c.to, in)
	return in, nil
}

func (c *conversions) pair(a, b *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, *apiextensions.CustomResourceDefinition, error) {
	ia, err := c.internal(a)
	if err != nil {
		return nil, nil, err
	}
	ib, err := c.internal(b)
	if err != nil {
		return nil, nil, err
	}
	return ia, ib, nil
}

// withoutSpec is a shallow copy of crd with an empty spec.
func withoutSpec(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	c := *crd
	c.Spec = apiextensionsv1.CustomResourceDefinitionSpec{}
	return &c
}

func toInternal(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	// Without a copy, as upstream's decoder converts (runtime.UnsafeObjectConvertor): the internal object
	// shares slices with the v1 one, and nothing here writes to either (validation and warnings read it,
	// canonicalize converts it back into a new object). A copy was a tenth of a large CRD's create.
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func toInternalPair(a, b *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, *apiextensions.CustomResourceDefinition, error) {
	ia, err := toInternal(a)
	if err != nil {
		return nil, nil, err
	}
	ib, err := toInternal(b)
	if err != nil {
		return nil, nil, err
	}
	return ia, ib, nil
}

// unrecognizedFormats lists the formats upstream does not know at the default compatibility version, in
// schema walk order; an internal spec holds either one hoisted schema or one per version.
func unrecognizedFormats(s *apiextensions.CustomResourceDefinitionSpec) []string {
	compat := environment.DefaultCompatibilityVersion()
	var out []string
	eachSchema(s, func(p *apiextensions.JSONSchemaProps) {
		if p.Format != "" {
			sch := &spec.Schema{SchemaProps: spec.SchemaProps{Format: p.Format, Type: []string{p.Type}}}
			out = append(out, apiservervalidation.GetUnrecognizedFormats(sch, compat)...)
		}
	})
	return out
}

// nonScalarSetWarnings returns, sorted and once each, the warning for every set-typed list whose items
// are objects or arrays (server-side apply and CEL cannot treat those as sets).
func nonScalarSetWarnings(s *apiextensions.CustomResourceDefinitionSpec) []string {
	seen := sets.New[string]()
	eachSchema(s, func(p *apiextensions.JSONSchemaProps) {
		if p.XListType != nil && *p.XListType == "set" && p.Items != nil && p.Items.Schema != nil {
			if t := p.Items.Schema.Type; t == "object" || t == "array" {
				seen.Insert(fmt.Sprintf("x-kubernetes-list-type: set for items of type %q is not supported by server-side apply or CEL validation rules", t))
			}
		}
	})
	return sets.List(seen)
}

// eachSchema visits every schema of the spec in the order of upstream's validation.SchemaHas, except
// that map entries (properties and the like) are visited in key order: upstream walks them in Go's
// random map order, so the order of its format warnings changes from run to run.
func eachSchema(s *apiextensions.CustomResourceDefinitionSpec, visit func(*apiextensions.JSONSchemaProps)) {
	if s.Validation != nil {
		walkSchema(s.Validation.OpenAPIV3Schema, visit)
	}
	for _, v := range s.Versions {
		if v.Schema != nil {
			walkSchema(v.Schema.OpenAPIV3Schema, visit)
		}
	}
}

func walkSchema(s *apiextensions.JSONSchemaProps, visit func(*apiextensions.JSONSchemaProps)) {
	if s == nil {
		return
	}
	visit(s)
	if s.Items != nil {
		walkSchema(s.Items.Schema, visit)
		for i := range s.Items.JSONSchemas {
			walkSchema(&s.Items.JSONSchemas[i], visit)
		}
	}
	for _, list := range [][]apiextensions.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			walkSchema(&list[i], visit)
		}
	}
	walkSchema(s.Not, visit)
	walkSchemaMap(s.Properties, visit)
	if s.AdditionalProperties != nil {
		walkSchema(s.AdditionalProperties.Schema, visit)
	}
	walkSchemaMap(s.PatternProperties, visit)
	if s.AdditionalItems != nil {
		walkSchema(s.AdditionalItems.Schema, visit)
	}
	walkSchemaMap(s.Definitions, visit)
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		walkSchema(s.Dependencies[k].Schema, visit)
	}
}

func walkSchemaMap(m map[string]apiextensions.JSONSchemaProps, visit func(*apiextensions.JSONSchemaProps)) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p := m[k]
		walkSchema(&p, visit)
	}
}

// dropDisabledFields clears fields whose feature gate is off, unless the old object already used them
// (so turning a gate off never breaks an update of an existing CRD). At the 1.37 defaults every gate
// involved is on and this does nothing; an emulated older version has CRDObservedGenerationTracking off
// before 1.36 (the gates follow engine.Options.EmulatedVersion).
func dropDisabledFields(newCRD, oldCRD *apiextensionsv1.CustomResourceDefinition) {
	gates := utilfeature.DefaultFeatureGate
	if !gates.Enabled(apiextensionsfeatures.CRDValidationRatcheting) && (oldCRD == nil || !usesOptionalOldSelf(oldCRD)) {
		for _, v := range newCRD.Spec.Versions {
			if v.Schema != nil {
				dropOptionalOldSelf(v.Schema.OpenAPIV3Schema)
			}
		}
	}
	if !gates.Enabled(apiextensionsfeatures.CustomResourceFieldSelectors) && (oldCRD == nil || !usesSelectableFields(oldCRD)) {
		for i := range newCRD.Spec.Versions {
			newCRD.Spec.Versions[i].SelectableFields = nil
		}
	}
	if !gates.Enabled(apiextensionsfeatures.CRDObservedGenerationTracking) && (oldCRD == nil || !usesObservedGeneration(&oldCRD.Status)) {
		newCRD.Status.ObservedGeneration = 0
		for i := range newCRD.Status.Conditions {
			newCRD.Status.Conditions[i].ObservedGeneration = 0
		}
	}
}

// dropOptionalOldSelf walks the same subtrees as upstream (properties, additionalProperties, items), not
// the junctors: rules under allOf and friends are rejected by validation anyway.
func dropOptionalOldSelf(s *apiextensionsv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	for i := range s.XValidations {
		s.XValidations[i].OptionalOldSelf = nil
	}
	if s.AdditionalProperties != nil {
		dropOptionalOldSelf(s.AdditionalProperties.Schema)
	}
	for name, p := range s.Properties {
		dropOptionalOldSelf(&p)
		s.Properties[name] = p
	}
	if s.Items != nil {
		dropOptionalOldSelf(s.Items.Schema)
		for i := range s.Items.JSONSchemas {
			dropOptionalOldSelf(&s.Items.JSONSchemas[i])
		}
	}
}

func usesOptionalOldSelf(crd *apiextensionsv1.CustomResourceDefinition) bool {
	in, err := toInternal(crd)
	if err != nil {
		return false
	}
	return validation.HasSchemaWith(&in.Spec, func(s *apiextensions.JSONSchemaProps) bool {
		return validation.SchemaHas(s, func(s *apiextensions.JSONSchemaProps) bool {
			for _, r := range s.XValidations {
				if r.OptionalOldSelf != nil {
					return true
				}
			}
			return false
		})
	})
}

func usesSelectableFields(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if v.SelectableFields != nil {
			return true
		}
	}
	return false
}

func usesObservedGeneration(s *apiextensionsv1.CustomResourceDefinitionStatus) bool {
	if s.ObservedGeneration != 0 {
		return true
	}
	for _, c := range s.Conditions {
		if c.ObservedGeneration != 0 {
			return true
		}
	}
	return false
}
