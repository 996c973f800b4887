// Package crstrategy is the create/update strategy for custom resources: what kube-apiserver's
// registry/customresource package does between decoding and storage (generation, status reset, validation with
// OpenAPI, list types, embedded metadata and CEL, ratcheting, warnings, field-selector attributes).
//
// Upstream's package cannot be imported (it pulls the etcd storage backend, which does not build for wasm), so its
// behaviour is written here from upstream's source, calling the same validation packages.
package crstrategy

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/operation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Strategy is the main-resource strategy of one served version of a custom resource. It satisfies
// k8s.io/apiserver/pkg/registry/rest's RESTCreateStrategy and RESTUpdateStrategy, so that rest.BeforeCreate and
// rest.BeforeUpdate run exactly as in kube-apiserver.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator

	namespaceScoped    bool
	validator          validator
	structural         *structuralschema.Structural
	celValidator       func() *cel.Validator
	status             *apiextensions.CustomResourceSubresourceStatus
	scale              *apiextensions.CustomResourceSubresourceScale
	kind               schema.GroupVersionKind
	selectableFieldSet []selectableField
}

type selectableField struct {
	name      string
	fieldPath *jsonpath.JSONPath
	err       error
}

// New builds the strategy; statusValidator is nil without a status subresource. The CEL rules are compiled once
// per CRD version, as upstream does, when the version first validates an object.
func New(typer runtime.ObjectTyper, namespaceScoped bool, kind schema.GroupVersionKind, schemaValidator, statusValidator validation.SchemaValidator, s *structuralschema.Structural, status *apiextensions.CustomResourceSubresourceStatus, scale *apiextensions.CustomResourceSubresourceScale, selectable []apiextensionsv1.SelectableField) *Strategy {
	st := &Strategy{
		ObjectTyper:     typer,
		NameGenerator:   names.SimpleNameGenerator,
		namespaceScoped: namespaceScoped,
		status:          status,
		scale:           scale,
		validator: validator{
			namespaceScoped: namespaceScoped,
			kind:            kind,
			schema:          schemaValidator,
			statusSchema:    statusValidator,
		},
		structural: s,
		// Compiled on the first validation: a version that is only read (every served version of a CRD is
		// readable, few are written to) never needs them, and a large CRD's rules take long to compile.
		celValidator: sync.OnceValue(func() *cel.Validator { return cel.NewValidator(s, true, celconfig.PerCallLimit) }),
		kind:         kind,
	}
	for _, sf := range selectable {
		p := jsonpath.New("selectableField")
		p.AllowMissingKeys(true)
		f := selectableField{name: strings.TrimPrefix(sf.JSONPath, ".")}
		if err := p.Parse("{" + sf.JSONPath + "}"); err != nil {
			f.err = err
		} else {
			f.fieldPath = p
		}
		st.selectableFieldSet = append(st.selectableFieldSet, f)
	}
	return st
}

// Kind is the kind this strategy validates objects as.
func (a *Strategy) Kind() schema.GroupVersionKind { return a.kind }

// HasStatus reports whether the status subresource is enabled.
func (a *Strategy) HasStatus() bool { return a.status != nil }

// Scale is the scale subresource definition, or nil.
func (a *Strategy) Scale() *apiextensions.CustomResourceSubresourceScale { return a.scale }

// NamespaceScoped implements rest.RESTCreateStrategy.
func (a *Strategy) NamespaceScoped() bool { return a.namespaceScoped }

// ResetFields are the fields the main resource's field manager must not claim: status when it has its own
// endpoint.
func (a *Strategy) ResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	fields := map[fieldpath.APIVersion]*fieldpath.Set{}
	if a.status != nil {
		fields[fieldpath.APIVersion(a.kind.GroupVersion().String())] = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	}
	return fields
}

// PrepareForCreate implements rest.RESTCreateStrategy.
func (a *Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if a.status != nil {
		delete(obj.(*unstructured.Unstructured).Object, "status")
	}
	accessor, _ := meta.Accessor(obj)
	accessor.SetGeneration(1)
}

// PrepareForUpdate implements rest.RESTUpdateStrategy: status changes are dropped when status has its own
// endpoint, and only changes outside metadata bump the generation.
func (a *Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newU, oldU := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	newC, oldC := newU.Object, oldU.Object
	if a.status != nil {
		_, newHas := newC["status"]
		_, oldHas := oldC["status"]
		switch {
		case oldHas:
			newC["status"] = oldC["status"]
		case newHas:
			delete(newC, "status")
		}
	}
	if !equality.Semantic.DeepEqual(withoutMetadata(newC), withoutMetadata(oldC)) {
		newU.SetGeneration(oldU.GetGeneration() + 1)
	}
}

func withoutMetadata(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		if k != "metadata" {
			out[k] = v
		}
	}
	return out
}

// Validate implements rest.RESTCreateStrategy.
func (a *Strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{field.Invalid(field.NewPath(""), obj, fmt.Sprintf("has type %T. Must be a pointer to an Unstructured type", obj))}
	}
	var errs field.ErrorList
	errs = append(errs, a.validator.validate(ctx, u, a.scale)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, a.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, a.structural, u.Object)...)
	return append(errs, a.validateCEL(ctx, errs, u, nil)...)
}

// validateCEL runs the CEL rules unless earlier errors mean the object is too broken for them.
func (a *Strategy) validateCEL(ctx context.Context, errs field.ErrorList, obj, old *unstructured.Unstructured, opts ...cel.Option) field.ErrorList {
	celValidator := a.celValidator()
	if celValidator == nil {
		return nil
	}
	if blocking := blockingError(errs); blocking != nil {
		return field.ErrorList{blocking}
	}
	var oldObj interface{}
	if old != nil {
		oldObj = old.Object
	}
	celErrs, _ := celValidator.Validate(ctx, nil, a.structural, obj.Object, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return celErrs
}

// WarningsOnCreate implements rest.RESTCreateStrategy.
func (a *Strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return finalizerWarnings(obj, nil)
}

// Canonicalize implements rest.RESTCreateStrategy.
func (*Strategy) Canonicalize(runtime.Object) {}

// AllowCreateOnUpdate implements rest.RESTUpdateStrategy.
func (*Strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate implements rest.RESTUpdateStrategy.
func (*Strategy) AllowUnconditionalUpdate(context.Context) bool { return false }

// ValidateUpdate implements rest.RESTUpdateStrategy, ratcheting errors of unchanged fields.
func (a *Strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	uNew, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{field.Invalid(field.NewPath(""), obj, fmt.Sprintf("has type %T. Must be a pointer to an Unstructured type", obj))}
	}
	uOld, ok := old.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{field.Invalid(field.NewPath(""), old, fmt.Sprintf("has type %T. Must be a pointer to an Unstructured type", old))}
	}
	corr := common.NewCorrelatedObject(uNew.Object, uOld.Object, &model.Structural{Structural: a.structural})
	var errs field.ErrorList
	errs = append(errs, a.validator.validateUpdate(ctx, uNew, uOld, a.scale, validation.WithRatcheting(corr))...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, uNew.Object, a.structural, false)...)
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, a.structural, uOld.Object); len(oldErrs) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, a.structural, uNew.Object)...)
	}
	return append(errs, a.validateCEL(ctx, errs, uNew, uOld, cel.WithRatcheting(corr))...)
}

// WarningsOnUpdate implements rest.RESTUpdateStrategy.
func (a *Strategy) WarningsOnUpdate(_ context.Context, obj, old runtime.Object) []string {
	return finalizerWarnings(obj, old)
}

// Attrs returns the labels and the field-selector attributes of obj: metadata.name, metadata.namespace for
// namespaced resources, and the version's selectable fields ("" when missing).
func (a *Strategy) Attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	set := fields.Set{"metadata.name": accessor.GetName()}
	if a.namespaceScoped {
		set["metadata.namespace"] = accessor.GetNamespace()
	}
	if len(a.selectableFieldSet) > 0 {
		u, ok := obj.(runtime.Unstructured)
		if !ok {
			return nil, nil, fmt.Errorf("unexpected error casting a custom resource to unstructured")
		}
		content := u.UnstructuredContent()
		for _, sf := range a.selectableFieldSet {
			if sf.err != nil {
				return nil, nil, fmt.Errorf("unexpected error parsing jsonPath: %w", sf.err)
			}
			results, err := sf.fieldPath.FindResults(content)
			if err != nil {
				return nil, nil, fmt.Errorf("unexpected error finding value with jsonPath: %w", err)
			}
			var value any
			if len(results) > 0 && len(results[0]) > 0 {
				if len(results) > 1 || len(results[0]) > 1 {
					return nil, nil, fmt.Errorf("unexpectedly received more than one JSON path result")
				}
				value = results[0][0].Interface()
			}
			if value != nil {
				set[sf.name] = fmt.Sprint(value)
			} else {
				set[sf.name] = ""
			}
		}
	}
	return accessor.GetLabels(), set, nil
}

// blockingError is the single error that replaces CEL validation when the object already has errors that make
// rule evaluation meaningless (missing, mistyped, too long or too many values).
func blockingError(errs field.ErrorList) *field.Error {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}

var standardFinalizers = sets.New(metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents, "kubernetes")

// finalizerWarnings warns about newly added finalizers whose names may collide with other writers'.
func finalizerWarnings(obj, old runtime.Object) []string {
	newMeta, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	added := sets.New(newMeta.GetFinalizers()...)
	if old != nil {
		oldMeta, err := meta.Accessor(old)
		if err != nil {
			return nil
		}
		added = added.Difference(sets.New(oldMeta.GetFinalizers()...))
	}
	path := field.NewPath("metadata", "finalizers")
	var warnings []string
	for _, f := range sets.List(added) {
		for _, msg := range utilvalidation.IsQualifiedName(f) {
			warnings = append(warnings, fmt.Sprintf("%s: %q: %s", path, f, msg))
		}
		if !strings.Contains(f, "/") && !standardFinalizers.Has(f) {
			if strings.Contains(f, ".") {
				warnings = append(warnings, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers", path, f))
			} else {
				warnings = append(warnings, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers", path, f))
			}
		}
	}
	return warnings
}

// StatusStrategy is the strategy of the /status subresource: only status may change.
type StatusStrategy struct {
	*Strategy
}

// ResetFields are the fields the status field manager must not claim.
func (a StatusStrategy) ResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(a.kind.GroupVersion().String()): fieldpath.NewSet(
			fieldpath.MakePathOrDie("metadata"),
			fieldpath.MakePathOrDie("spec"),
		),
	}
}

// PrepareForUpdate keeps everything of old except status and the request's managedFields.
func (a StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	newU := obj.(*unstructured.Unstructured)
	status, ok := newU.Object["status"]
	managed := newU.GetManagedFields()
	*newU = *old.(*unstructured.Unstructured).DeepCopy()
	newU.SetManagedFields(managed)
	if ok {
		newU.Object["status"] = status
	} else {
		delete(newU.Object, "status")
	}
}

// ValidateUpdate validates status against the status schema (ratcheted) and the whole object's CEL rules.
func (a StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	uNew, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{field.Invalid(field.NewPath(""), obj, fmt.Sprintf("has type %T. Must be a pointer to an Unstructured type", obj))}
	}
	uOld, ok := old.(*unstructured.Unstructured)
	if !ok {
		return field.ErrorList{field.Invalid(field.NewPath(""), old, fmt.Sprintf("has type %T. Must be a pointer to an Unstructured type", old))}
	}
	corr := common.NewCorrelatedObject(uNew.Object, uOld.Object, &model.Structural{Structural: a.structural})
	var opts []validation.ValidationOption
	if a.structural != nil {
		opts = append(opts, validation.WithRatcheting(corr.Key("status")))
	}
	var errs field.ErrorList
	errs = append(errs, a.validator.validateStatusUpdate(ctx, uNew, uOld, a.scale, opts...)...)
	if newErrs := structurallisttype.ValidateListSetsAndMaps(nil, a.structural, uNew.Object); len(newErrs) > 0 {
		if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, a.structural, uOld.Object); len(oldErrs) == 0 {
			errs = append(errs, newErrs...)
		}
	}
	return append(errs, a.validateCEL(ctx, errs, uNew, uOld, cel.WithRatcheting(corr))...)
}

// WarningsOnUpdate: the status endpoint warns about nothing.
func (StatusStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// validator checks type meta, object meta, the OpenAPI schema and the scale paths.
type validator struct {
	namespaceScoped bool
	kind            schema.GroupVersionKind
	schema          validation.SchemaValidator
	statusSchema    validation.SchemaValidator
}

func (a validator) validate(ctx context.Context, obj *unstructured.Unstructured, scale *apiextensions.CustomResourceSubresourceScale) field.ErrorList {
	if errs := a.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, a.validateObjectMeta(ctx, operation.Create, obj, nil)...)
	errs = append(errs, validation.ValidateCustomResource(nil, obj.UnstructuredContent(), a.schema)...)
	errs = append(errs, validateScaleSpec(obj, scale)...)
	return append(errs, validateScaleStatus(obj, scale)...)
}

func (a validator) validateUpdate(ctx context.Context, obj, old *unstructured.Unstructured, scale *apiextensions.CustomResourceSubresourceScale, opts ...validation.ValidationOption) field.ErrorList {
	if errs := a.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, a.validateObjectMeta(ctx, operation.Update, obj, old)...)
	errs = append(errs, validation.ValidateCustomResourceUpdate(nil, obj.UnstructuredContent(), old.UnstructuredContent(), a.schema, opts...)...)
	errs = append(errs, validateScaleSpec(obj, scale)...)
	return append(errs, validateScaleStatus(obj, scale)...)
}

func (a validator) validateStatusUpdate(ctx context.Context, obj, old *unstructured.Unstructured, scale *apiextensions.CustomResourceSubresourceScale, opts ...validation.ValidationOption) field.ErrorList {
	if errs := a.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, a.validateObjectMeta(ctx, operation.Update, obj, old)...)
	if status, ok := obj.UnstructuredContent()["status"]; ok {
		errs = append(errs, validation.ValidateCustomResourceUpdate(field.NewPath("status"), status, old.UnstructuredContent()["status"], a.statusSchema, opts...)...)
	}
	return append(errs, validateScaleStatus(obj, scale)...)
}

func (a validator) validateTypeMeta(obj *unstructured.Unstructured) field.ErrorList {
	typeAccessor, err := meta.TypeAccessor(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), nil, err.Error())}
	}
	var errs field.ErrorList
	if typeAccessor.GetKind() != a.kind.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), typeAccessor.GetKind(), fmt.Sprintf("must be %v", a.kind.Kind)))
	}
	if want := a.kind.Group + "/" + a.kind.Version; typeAccessor.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), typeAccessor.GetAPIVersion(), fmt.Sprintf("must be %v", want)))
	}
	return errs
}

func (a validator) validateObjectMeta(ctx context.Context, op operation.Type, obj, old *unstructured.Unstructured) field.ErrorList {
	m, errs := objectMeta(obj)
	if len(errs) > 0 {
		return errs
	}
	var oldMeta *metav1.ObjectMeta
	nameFn := apimachineryvalidation.NameIsDNSSubdomain
	if old != nil {
		if oldMeta, errs = objectMeta(old); len(errs) > 0 {
			return errs
		}
		nameFn = nil
	}
	return apimachineryvalidation.ValidateObjectMetaDeclaratively(ctx, op, m, oldMeta, a.namespaceScoped, nameFn, field.NewPath("metadata"), utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta))
}

func objectMeta(obj *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	raw := obj.UnstructuredContent()["metadata"]
	if raw == nil {
		return &metav1.ObjectMeta{}, nil
	}
	m, ok := raw.(map[string]interface{})
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	out := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return out, nil
}

func validateScaleSpec(obj *unstructured.Unstructured, scale *apiextensions.CustomResourceSubresourceScale) field.ErrorList {
	if scale == nil {
		return nil
	}
	return validateReplicas(obj, scale.SpecReplicasPath)
}

func validateScaleStatus(obj *unstructured.Unstructured, scale *apiextensions.CustomResourceSubresourceScale) field.ErrorList {
	if scale == nil {
		return nil
	}
	errs := validateReplicas(obj, scale.StatusReplicasPath)
	if scale.LabelSelectorPath != nil {
		p := strings.TrimPrefix(*scale.LabelSelectorPath, ".")
		sel, _, err := unstructured.NestedString(obj.UnstructuredContent(), strings.Split(p, ".")...)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath(*scale.LabelSelectorPath), sel, err.Error()))
		}
	}
	return errs
}

// validateReplicas checks a replicas path the way upstream does, including its habit of naming the field by the
// raw path with its leading dot.
func validateReplicas(obj *unstructured.Unstructured, path string) field.ErrorList {
	p := strings.TrimPrefix(path, ".")
	n, _, err := unstructured.NestedInt64(obj.UnstructuredContent(), strings.Split(p, ".")...)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, err.Error())}
	case n < 0:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, "should be a non-negative integer")}
	case n > math.MaxInt32:
		return field.ErrorList{field.Invalid(field.NewPath(path), n, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32))}
	}
	return nil
}

var (
	_ rest.RESTCreateStrategy = (*Strategy)(nil)
	_ rest.RESTUpdateStrategy = (*Strategy)(nil)
	_ rest.RESTUpdateStrategy = StatusStrategy{}
)
