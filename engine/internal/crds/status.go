package crds

import (
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/webhook"
)

// In kube-apiserver, four controllers watch CRDs and write their status through /status with the
// manager "kube-apiserver": naming (AE/controller/status), establishing (AE/controller/establish),
// non-structural schema (AE/controller/nonstructuralschema) and API approval (AE/controller/apiapproval).
// Here they run synchronously, in the order their writes usually land: naming, then establishing (queued
// by the handler once names are accepted), then the two condition controllers.
//
// Two simplifications: the condition controllers remember what they last saw (generation, annotation) and
// skip CRDs they already handled, so upstream leaves a condition alone that a client rewrote through
// /status without touching spec or annotation, where ComputeStatus puts it back. And upstream's
// controllers race, so with several conditions to add their order can differ between runs.

// ComputeStatus returns the status the CRD controllers settle on for crd, and whether it differs from
// crd.Status (in which case the REST layer writes it through /status as manager "kube-apiserver"). all
// holds every stored CRD, crd included or not, terminating ones too: names held by other CRDs of the same
// group cannot be accepted. lastTransitionTime is set to now on conditions whose status changes.
func ComputeStatus(crd *apiextensionsv1.CustomResourceDefinition, all []*apiextensionsv1.CustomResourceDefinition, now metav1.Time) (apiextensionsv1.CustomResourceDefinitionStatus, bool) {
	// Only status changes; sharing spec and metadata with crd saves copying large schemas.
	work := &apiextensionsv1.CustomResourceDefinition{TypeMeta: crd.TypeMeta, ObjectMeta: crd.ObjectMeta, Spec: crd.Spec}
	work.Status = *crd.Status.DeepCopy()
	changed := syncNames(work, all, now)
	changed = syncEstablished(work, now) || changed
	changed = syncNonStructural(work, now) || changed
	changed = syncAPIApproval(work, now) || changed
	return work.Status, changed
}

// Reconcile runs ComputeStatus over all until nothing changes and returns copies of the CRDs whose
// status changed, in the order of all; a copy has a status of its own and shares the rest with the CRD of all
// (read it, or copy it before changing anything but its status). The naming controller re-examines every CRD of a group when one
// of them changes its accepted names (or is deleted), so that a CRD waiting for a name gets it as soon
// as it is free; call Reconcile after every CRD write and delete with the CRDs that remain, ordered as
// they were created, since the first CRD to ask for a name gets it.
func Reconcile(all []*apiextensionsv1.CustomResourceDefinition, now metav1.Time) []*apiextensionsv1.CustomResourceDefinition {
	current := make([]*apiextensionsv1.CustomResourceDefinition, len(all))
	copy(current, all)
	touched := make([]bool, len(all))
	// Each round either changes nothing or moves some CRD's names towards its spec; a CRD's names
	// can flip only when another releases one, so a handful of rounds always settles.
	for round := 0; round < 2*len(all)+2; round++ {
		progress := false
		for i, crd := range current {
			status, changed := ComputeStatus(crd, current, now)
			if !changed {
				continue
			}
			// Only status changes: the copy shares the rest with crd, as ComputeStatus's work does.
			next := &apiextensionsv1.CustomResourceDefinition{TypeMeta: crd.TypeMeta, ObjectMeta: crd.ObjectMeta, Spec: crd.Spec, Status: status}
			current[i], touched[i], progress = next, true, true
		}
		if !progress {
			break
		}
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for i, t := range touched {
		if t {
			out = append(out, current[i])
		}
	}
	return out
}

// IsEstablished reports whether the Established condition is True: discovery lists only established
// CRDs.
func IsEstablished(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
}

// Served reports whether requests for version of crd's resources are served rather than 404: the version
// must exist with served: true and the names must be accepted or the CRD established (the handler accepts
// either, to cover the moment between the two controllers).
func Served(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	if !apihelpers.HasServedCRDVersion(crd, version) {
		return false
	}
	return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) || IsEstablished(crd)
}

// IsTerminating reports whether crd is being deleted: its custom resources may then still be read,
// updated and deleted, but creating one (by POST, or by a PATCH that would create) fails in admission
// with 403 Forbidden "create not allowed while custom resource definition is terminating".
func IsTerminating(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return !crd.DeletionTimestamp.IsZero() || apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating)
}

// setCondition adds or updates a condition, moving lastTransitionTime only when the status changes
// (apihelpers.SetCRDCondition, with our clock instead of time.Now).
func setCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition, now metav1.Time) {
	c.LastTransitionTime = now
	old := apihelpers.FindCRDCondition(crd, c.Type)
	if old == nil {
		crd.Status.Conditions = append(crd.Status.Conditions, c)
		return
	}
	if old.Status != c.Status || old.LastTransitionTime.IsZero() {
		old.LastTransitionTime = now
	}
	old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
}

// sameCondition compares what a controller compares: everything but the time.
func sameCondition(a, b *apiextensionsv1.CustomResourceDefinitionCondition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// syncNames is the naming controller: it accepts each requested name that this CRD already holds or
// that no CRD of the group holds, and reports the last conflict in NamesAccepted.
func syncNames(crd *apiextensionsv1.CustomResourceDefinition, all []*apiextensionsv1.CustomResourceDefinition, now metav1.Time) bool {
	if apiequality.Semantic.DeepEqual(crd.Spec.Names, crd.Status.AcceptedNames) {
		return false
	}

	// Names held by the group, this CRD's own accepted names included, as the controller's lister
	// includes the CRD itself.
	resources, kinds := sets.New[string](), sets.New[string]()
	for _, other := range all {
		if other.Name == crd.Name {
			continue
		}
		if other.Spec.Group == crd.Spec.Group {
			holdNames(other, resources, kinds)
		}
	}
	holdNames(crd, resources, kinds)

	want, have := crd.Spec.Names, crd.Status.AcceptedNames
	names := have
	cond := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionTrue,
		Reason: "NoConflicts", Message: "no conflicts found",
	}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}

	if err := freeOrOwn(want.Plural, have.Plural, resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = want.Plural
	}
	if err := freeOrOwn(want.Singular, have.Singular, resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = want.Singular
	}
	if !reflect.DeepEqual(want.ShortNames, have.ShortNames) {
		owned := sets.New(have.ShortNames...)
		var errs []error
		for _, s := range want.ShortNames {
			if owned.Has(s) {
				continue
			}
			if err := freeOrOwn(s, "", resources); err != nil {
				errs = append(errs, err)
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			conflict("ShortNamesConflict", err)
		} else {
			names.ShortNames = want.ShortNames
		}
	}
	if err := freeOrOwn(want.Kind, have.Kind, kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = want.Kind
	}
	if err := freeOrOwn(want.ListKind, have.ListKind, kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = want.ListKind
	}
	names.Categories = want.Categories

	if reflect.DeepEqual(have, names) && sameCondition(&cond, apihelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted)) {
		return false
	}

	// Established never goes back to False once True; before that it says whether names are the
	// obstacle. The establishing controller, not this one, makes it True.
	established := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
		Reason: "NotAccepted", Message: "not all names are accepted",
	}
	if old := apihelpers.FindCRDCondition(crd, apiextensionsv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextensionsv1.ConditionTrue && cond.Status == apiextensionsv1.ConditionTrue {
		established = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
			Reason: "Installing", Message: "the initial names have been accepted",
		}
	}

	crd.Status.AcceptedNames = names
	setCondition(crd, cond, now)
	setCondition(crd, established, now)
	return true
}

func holdNames(crd *apiextensionsv1.CustomResourceDefinition, resources, kinds sets.Set[string]) {
	n := crd.Status.AcceptedNames
	resources.Insert(n.Plural, n.Singular)
	resources.Insert(n.ShortNames...)
	kinds.Insert(n.Kind, n.ListKind)
}

// freeOrOwn accepts a name this CRD already holds or one nobody in the group holds.
func freeOrOwn(requested, accepted string, used sets.Set[string]) error {
	if requested == accepted || !used.Has(requested) {
		return nil
	}
	return fmt.Errorf("%q is already in use", requested)
}

// syncEstablished is the establishing controller: once names are accepted the CRD becomes Established,
// unless its conversion webhook's caBundle is unusable.
func syncEstablished(crd *apiextensionsv1.CustomResourceDefinition, now metav1.Time) bool {
	if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) || IsEstablished(crd) {
		return false
	}
	cond := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue,
		Reason: "InitialNamesAccepted", Message: "the initial names have been accepted",
	}
	if c := crd.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil &&
		len(webhook.ValidateCABundle(field.NewPath(""), c.Webhook.ClientConfig.CABundle)) > 0 {
		cond = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
			Reason: "InvalidCABundle", Message: "The conversion webhook CABundle is invalid",
		}
	}
	before := apihelpers.FindCRDCondition(crd, apiextensionsv1.Established)
	if sameCondition(&cond, before) {
		// Only the invalid-caBundle verdict can repeat; upstream rewrites it without effect.
		return false
	}
	setCondition(crd, cond, now)
	return true
}

// syncNonStructural is the non-structural schema controller: NonStructuralSchema=True lists the
// structural-schema violations, which only CRDs from before apiextensions/v1 can still have.
func syncNonStructural(crd *apiextensionsv1.CustomResourceDefinition, now metav1.Time) bool {
	cond := cachedNonStructuralCondition(crd)
	old := apihelpers.FindCRDCondition(crd, apiextensionsv1.NonStructuralSchema)
	switch {
	case cond == nil && old == nil:
		return false
	case cond != nil && old != nil && sameCondition(cond, old):
		return false
	case cond == nil:
		apihelpers.RemoveCRDCondition(crd, apiextensionsv1.NonStructuralSchema)
	default:
		setCondition(crd, *cond, now)
	}
	return true
}

// nonStructuralCache remembers the verdict per CRD uid and generation, which pins the spec of a stored
// CRD: building structural schemas of a large CRD takes long enough (tens of milliseconds, several times
// that in wasm) to matter when Reconcile looks at every CRD after every write.
var nonStructuralCache = struct {
	sync.Mutex
	m map[types.UID]nonStructuralVerdict
}{m: map[types.UID]nonStructuralVerdict{}}

type nonStructuralVerdict struct {
	generation int64
	cond       *apiextensionsv1.CustomResourceDefinitionCondition
}

func cachedNonStructuralCondition(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionCondition {
	if crd.UID == "" || crd.Generation == 0 {
		return nonStructuralCondition(crd)
	}
	c := &nonStructuralCache
	c.Lock()
	v, ok := c.m[crd.UID]
	c.Unlock()
	if !ok || v.generation != crd.Generation {
		v = nonStructuralVerdict{generation: crd.Generation, cond: nonStructuralCondition(crd)}
		rememberNonStructural(crd, v.cond)
	}
	if v.cond == nil {
		return nil
	}
	cond := *v.cond
	return &cond
}

// rememberNonStructural records cond as the non-structural schema controller's verdict on crd's uid and
// generation.
func rememberNonStructural(crd *apiextensionsv1.CustomResourceDefinition, cond *apiextensionsv1.CustomResourceDefinitionCondition) {
	if crd.UID == "" || crd.Generation == 0 {
		return
	}
	c := &nonStructuralCache
	c.Lock()
	c.m[crd.UID] = nonStructuralVerdict{generation: crd.Generation, cond: cond}
	c.Unlock()
}

func nonStructuralCondition(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinitionCondition {
	cond := &apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.NonStructuralSchema, Status: apiextensionsv1.ConditionUnknown,
	}
	var errs field.ErrorList
	if crd.Spec.PreserveUnknownFields {
		errs = append(errs, field.Invalid(field.NewPath("spec", "preserveUnknownFields"), crd.Spec.PreserveUnknownFields, "must be false"))
	}
	for i, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
			continue // upstream logs and skips the version
		}
		s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			cond.Reason = "StructuralError"
			cond.Message = fmt.Sprintf("failed to check validation schema for version %s: %v", v.Name, err)
			return cond
		}
		pth := field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema")
		errs = append(errs, structuralschema.ValidateStructural(pth, s)...)
	}
	if len(errs) == 0 {
		return nil
	}
	cond.Status, cond.Reason, cond.Message = apiextensionsv1.ConditionTrue, "Violations", errs.ToAggregate().Error()
	return cond
}

// syncAPIApproval is the API approval controller: CRDs in *.k8s.io and *.kubernetes.io groups get
// KubernetesAPIApprovalPolicyConformant from their api-approved.kubernetes.io annotation.
func syncAPIApproval(crd *apiextensionsv1.CustomResourceDefinition, now metav1.Time) bool {
	if !apihelpers.IsProtectedCommunityGroup(crd.Spec.Group) {
		return false
	}
	state, reason := apihelpers.GetAPIApprovalState(crd.Annotations)
	cond := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.KubernetesAPIApprovalPolicyConformant, Message: reason,
	}
	switch state {
	case apihelpers.APIApprovalInvalid:
		cond.Status, cond.Reason = apiextensionsv1.ConditionFalse, "InvalidAnnotation"
	case apihelpers.APIApprovalMissing:
		cond.Status, cond.Reason = apiextensionsv1.ConditionFalse, "MissingAnnotation"
	case apihelpers.APIApproved:
		cond.Status, cond.Reason = apiextensionsv1.ConditionTrue, "ApprovedAnnotation"
	case apihelpers.APIApprovalBypassed:
		cond.Status, cond.Reason = apiextensionsv1.ConditionFalse, "UnapprovedAnnotation"
	default:
		cond.Status, cond.Reason = apiextensionsv1.ConditionUnknown, "UnknownAnnotation"
	}
	if sameCondition(&cond, apihelpers.FindCRDCondition(crd, cond.Type)) {
		return false
	}
	setCondition(crd, cond, now)
	return true
}
