package crds

import (
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Deleting a CRD takes three writes in kube-apiserver, all mirrored here:
//
//  1. DELETE (AE/registry/customresourcedefinition/etcd.go) does not delete: it sets deletionTimestamp,
//     adds the customresourcecleanup.apiextensions.k8s.io finalizer and a Terminating condition, stores
//     that directly (no managedFields update, no admission beyond the delete check) and answers 200 with
//     the stored CRD. See PrepareForDelete.
//  2. The finalizer controller (AE/controller/finalizer) sees it and writes Terminating=True
//     "InstanceDeletionInProgress" through /status (BeginFinalize), then, if the CRD was established,
//     deletes every custom resource namespace by namespace (deletecollection, which honours the
//     resources' own finalizers) and waits until none is left.
//  3. It records the outcome and drops its finalizer in one more /status write (FinishFinalize). With
//     no finalizers left and deletionTimestamp set, the store deletes the CRD during that update.

// PrepareForDelete applies what DELETE does to a CRD that is not yet being deleted and returns true; the
// caller stores crd (honouring the request's preconditions, with the stored uid as the default uid
// precondition) and answers 200 with it. It returns false, changing nothing, when crd already has a
// deletionTimestamp: upstream then falls back to the generic store delete, which with the cleanup
// finalizer still present only returns the object (and applies DeleteOptions' orphan/foreground
// finalizers, as for any object with finalizers).
func PrepareForDelete(crd *apiextensionsv1.CustomResourceDefinition, now metav1.Time) bool {
	if !crd.DeletionTimestamp.IsZero() {
		return false
	}
	crd.DeletionTimestamp = &now
	if !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		crd.Finalizers = append(crd.Finalizers, apiextensionsv1.CustomResourceCleanupFinalizer)
	}
	setCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Terminating,
		Status:  apiextensionsv1.ConditionTrue,
		Reason:  "InstanceDeletionPending",
		Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
	}, now)
	return true
}

// BeginFinalize is the first half of the finalizer controller. It returns pending=false and leaves crd
// alone unless crd is being deleted and still carries the cleanup finalizer. Otherwise it sets
// Terminating=True "InstanceDeletionInProgress" (the caller writes that through /status) and tells
// whether the custom resources must be deleted before FinishFinalize: only for an established CRD
// whose resource does not overlap a built-in one.
func BeginFinalize(crd *apiextensionsv1.CustomResourceDefinition, now metav1.Time) (pending, deleteInstances bool) {
	if crd.DeletionTimestamp.IsZero() || !apihelpers.CRDHasFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer) {
		return false, false
	}
	setCondition(crd, apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Terminating,
		Status:  apiextensionsv1.ConditionTrue,
		Reason:  "InstanceDeletionInProgress",
		Message: "CustomResource deletion is in progress",
	}, now)
	return true, !overlapsBuiltIn(crd) && IsEstablished(crd)
}

// FinishFinalize is the second half of the finalizer controller, after the instances are gone (or were
// never there). deleteErr is the failure of deleting or listing them, if any: upstream then records
// InstanceDeletionFailed, keeps the finalizer and retries later, so FinishFinalize returns false and the
// caller should call BeginFinalize again later. Otherwise it records why the CRD may go, removes the
// cleanup finalizer and returns true; the caller writes crd through /status and deletes it when no
// finalizer is left.
func FinishFinalize(crd *apiextensionsv1.CustomResourceDefinition, now metav1.Time, deleteErr error) bool {
	cond := apiextensionsv1.CustomResourceDefinitionCondition{
		Type:    apiextensionsv1.Terminating,
		Status:  apiextensionsv1.ConditionFalse,
		Reason:  "InstanceDeletionCompleted",
		Message: "removed all instances",
	}
	switch {
	case overlapsBuiltIn(crd):
		cond.Reason, cond.Message = "OverlappingBuiltInResource", "instances overlap with built-in resources in storage"
	case !IsEstablished(crd):
		cond.Reason, cond.Message = "NeverEstablished", "resource was never established"
	case deleteErr != nil:
		cond.Status, cond.Reason = apiextensionsv1.ConditionTrue, "InstanceDeletionFailed"
		cond.Message = fmt.Sprintf("could not issue all deletes: %v", deleteErr)
		setCondition(crd, cond, now)
		return false
	}
	setCondition(crd, cond, now)
	apihelpers.CRDRemoveFinalizer(crd, apiextensionsv1.CustomResourceCleanupFinalizer)
	return true
}

// overlapsBuiltIn reports CRDs whose resource has the storage prefix of a built-in resource of the
// apiextensions server; deleting their "instances" would delete the built-in objects.
func overlapsBuiltIn(crd *apiextensionsv1.CustomResourceDefinition) bool {
	switch crd.Spec.Group + "/" + crd.Spec.Names.Plural {
	case "apiregistration.k8s.io/apiservices", "apiextensions.k8s.io/customresourcedefinitions":
		return true
	}
	return false
}
