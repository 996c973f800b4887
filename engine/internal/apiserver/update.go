package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"

	"crdplay/engine/internal/crds"
	"crdplay/engine/storage"
)

// updateOptions reads and checks the UpdateOptions of a request's query.
func updateOptions(req *http.Request) (*metav1.UpdateOptions, error) {
	opts := &metav1.UpdateOptions{}
	err := queryOptions(req, opts, "UpdateOptions", func() field.ErrorList { return metav1validation.ValidateUpdateOptions(opts) })
	return opts, err
}

// checkName rejects a body whose name or namespace disagrees with the URL.
func checkName(obj runtime.Object, name, namespace string) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: %v", name, err))
	}
	if m.GetName() != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	if namespace != "" && m.GetNamespace() != "" && m.GetNamespace() != namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", m.GetNamespace(), namespace))
	}
	return nil
}

// errNoResourceVersion is the 422 of an update without a resourceVersion. As the generic store's, its GroupKind
// carries the resource of gr where the kind would be.
func errNoResourceVersion(gr schema.GroupResource, name string) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: gr.Resource}, name, field.ErrorList{
		field.Invalid(field.NewPath("metadata.resourceVersion"), int64(0), "must be specified for an update"),
	})
}

// updateStrategy is what PUT and PATCH need of a strategy: the main resource's or the status subresource's.
type updateStrategy interface {
	rest.RESTUpdateStrategy
}

func (r *crRequest) update(strategy updateStrategy, fm *managedfields.FieldManager) (reply, error) {
	ctx := r.req.Context()
	body, err := readBody(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	opts, err := updateOptions(r.req)
	if err != nil {
		return reply{}, err
	}
	obj, err := r.decodeBody(body, opts.FieldValidation)
	if err != nil {
		return reply{}, err
	}
	if err := checkName(obj, r.info.Name, r.info.Namespace); err != nil {
		return reply{}, err
	}
	manager := managerOrUserAgent(opts.FieldManager, r.req.UserAgent())
	dedupOwnerReferences(ctx, obj)
	withoutManagedFields := false
	mutate := func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		updated := fm.UpdateNoErrors(live, obj.DeepCopy(), manager).(*unstructured.Unstructured)
		if withoutManagedFields {
			updated.SetManagedFields(nil)
		}
		return updated, r.admitUpdateMutation(ctx, updated, live, len(opts.DryRun) > 0)
	}
	out, created, err := r.guaranteedUpdate(ctx, strategy, len(opts.DryRun) > 0, false, mutate)
	if isTooLarge(err) {
		// As the update handler does: managedFields can be large, so an object too large to store with them is
		// stored without them.
		withoutManagedFields = true
		out, created, err = r.guaranteedUpdate(ctx, strategy, len(opts.DryRun) > 0, false, mutate)
	}
	if err != nil {
		return reply{}, err
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	return reply{code: code, obj: out}, nil
}

// guaranteedUpdate is the registry's Update over etcd3's GuaranteedUpdate: read the live object, let mutate
// produce the new one, check the resourceVersion precondition, run the strategy, write with optimistic
// concurrency, and delete the object when it is being deleted and has no finalizers left. A write that loses a
// race with another (the stored revision moved, or the object went away) starts again from a fresh read, with
// mutate run again on it: a patch is re-applied to the object another write left, while a PUT, whose body
// carries the resourceVersion it read, then fails its precondition with a 409. With allowCreate (server-side
// apply's forceAllowCreate) a missing object is created from what mutate makes of an empty one; created
// reports that.
func (r *crRequest) guaranteedUpdate(ctx context.Context, strategy updateStrategy, dryRun, allowCreate bool, mutate func(live *unstructured.Unstructured) (*unstructured.Unstructured, error)) (out *unstructured.Unstructured, created bool, err error) {
	ctx = ctxWithNamespace(ctx, r.info.Namespace)
	for {
		if err := ctx.Err(); err != nil {
			return nil, false, apierrors.NewTimeoutError(err.Error(), 0)
		}
		out, created, err = r.tryUpdate(ctx, strategy, dryRun, allowCreate, mutate)
		if !isLostRace(err) {
			return out, created, err
		}
	}
}

// tryUpdate is one attempt of guaranteedUpdate; a lost race comes back as an error isLostRace reports.
func (r *crRequest) tryUpdate(ctx context.Context, strategy updateStrategy, dryRun, allowCreate bool, mutate func(live *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, bool, error) {
	name := r.info.Name
	key := r.key(r.info.Namespace, name)
	o, existing, err := r.read(ctx, key, name)
	if allowCreate && apierrors.IsNotFound(err) {
		out, err := r.createOnUpdate(ctx, mutate, dryRun)
		return out, err == nil, err
	}
	if err != nil {
		return nil, false, err
	}
	obj, err := mutate(existing.DeepCopy())
	if err != nil {
		return nil, false, err
	}
	rv := obj.GetResourceVersion()
	if rv == "" || rv == "0" {
		return nil, false, errNoResourceVersion(r.gr(), name)
	}
	if rv != strconv.FormatInt(o.Revision, 10) {
		return nil, false, apierrors.NewConflict(r.gr(), name, fmt.Errorf(optimisticLockErrorMsg))
	}
	// BeforeUpdate logs "Found duplicate validation error" (klog, info) when upstream's checks report one problem
	// twice, such as a finalizer added while the object is being deleted; kube-apiserver logs it alike.
	if err := rest.BeforeUpdate(strategy, ctx, obj, existing); err != nil {
		return nil, false, err
	}
	if err := r.s.admitValidation(ctx, r.req, r.admissionTarget(name), obj, existing, admission.Update, dryRun); err != nil {
		return nil, false, err
	}
	data, err := r.encodeForStorage(obj)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	out, err := r.writeUpdate(ctx, key, o, data, dryRun, shouldDeleteDuringUpdate(obj, existing))
	return out, false, err
}

// createOnUpdate is the create branch of the registry's Update, taken by server-side apply of a missing object
// (not while the CRD is being deleted). A create that finds the name taken lost a race with another create: the
// update starts again and finds the object.
func (r *crRequest) createOnUpdate(ctx context.Context, mutate func(live *unstructured.Unstructured) (*unstructured.Unstructured, error), dryRun bool) (*unstructured.Unstructured, error) {
	if r.terminating {
		return nil, errTerminatingCreate(r.gr(), r.info.Name)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(r.vi.kind)
	obj, err := mutate(live)
	if err != nil {
		return nil, err
	}
	rest.WipeObjectMetaSystemFields(obj)
	out, err := r.store(ctx, obj, dryRun)
	if apierrors.IsAlreadyExists(err) {
		return nil, errLostRace(r.gr(), r.info.Name)
	}
	return out, err
}

// writeUpdate stores the update data of the object o read at key (or deletes it), as etcd3's GuaranteedUpdate
// does: a dry run and an update that changes nothing are not written, and answer what a read would. A write
// that finds the revision moved or the object gone lost a race (errLostRace).
func (r *crRequest) writeUpdate(ctx context.Context, key string, o storage.Object, data []byte, dryRun, deleteIt bool) (*unstructured.Unstructured, error) {
	name := r.info.Name
	switch {
	case dryRun:
		return r.storedResult(data, o.Revision, nil)
	case deleteIt:
		if _, err := r.s.cfg.Storage.Delete(ctx, key, o.Revision); err != nil {
			if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
				return nil, errLostRace(r.gr(), name)
			}
			return nil, storageWriteError(err)
		}
		return r.storedResult(data, o.Revision, nil)
	case bytes.Equal(data, o.Value):
		// The stored object with its resourceVersion: watchers see no event.
		return r.storedResult(o.Value, o.Revision, nil)
	}
	rev, err := r.s.cfg.Storage.Update(ctx, key, data, o.Revision)
	if err != nil {
		if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
			return nil, errLostRace(r.gr(), name)
		}
		return nil, storageWriteError(err)
	}
	return r.storedResult(data, rev, nil)
}

// shouldDeleteDuringUpdate: an object marked for deletion goes away once its last finalizer is removed.
func shouldDeleteDuringUpdate(obj, existing *unstructured.Unstructured) bool {
	return len(obj.GetFinalizers()) == 0 && obj.GetDeletionTimestamp() != nil && existing.GetDeletionTimestamp() != nil &&
		obj.GetDeletionGracePeriodSeconds() != nil && *obj.GetDeletionGracePeriodSeconds() == 0
}

func (r *crdRequest) update() (reply, error) {
	ctx := r.req.Context()
	body, err := readBody(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	opts, err := updateOptions(r.req)
	if err != nil {
		return reply{}, err
	}
	crd, err := r.decodeBody(body, opts.FieldValidation)
	if err != nil {
		return reply{}, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	out, err := r.updateWith(ctx, r.info.Subresource == "status", len(opts.DryRun) > 0, managerOrUserAgent(opts.FieldManager, r.req.UserAgent()), func(*apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
		return crd.DeepCopy(), nil
	})
	if err != nil {
		return reply{}, err
	}
	if len(opts.DryRun) == 0 {
		r.s.runControllers(ctx)
	}
	return reply{code: http.StatusOK, obj: out}, nil
}

// updateWith is PUT (and the core of PATCH) for CRDs and their /status. The write is recorded in managedFields
// as manager's update unless manager is empty: server-side apply records it itself. As guaranteedUpdate for
// custom resources, a write that loses a race with another replica's starts again from a fresh read.
func (r *crdRequest) updateWith(ctx context.Context, status bool, dryRun bool, manager string, mutate func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error)) (*apiextensionsv1.CustomResourceDefinition, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, apierrors.NewTimeoutError(err.Error(), 0)
		}
		out, err := r.tryUpdate(ctx, status, dryRun, manager, mutate)
		if !isLostRace(err) {
			return out, err
		}
	}
}

// tryUpdate is one attempt of updateWith.
func (r *crdRequest) tryUpdate(ctx context.Context, status bool, dryRun bool, manager string, mutate func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error)) (*apiextensionsv1.CustomResourceDefinition, error) {
	live, err := r.s.readCRD(ctx, r.info.Name)
	if err != nil {
		return nil, err
	}
	obj, err := mutate(live.DeepCopy())
	if err != nil {
		return nil, err
	}
	if obj.Name != r.info.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.Name, r.info.Name))
	}
	if manager != "" {
		if obj, err = trackManagedFields(crdFieldManager(status), live, obj, manager); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	if err := r.s.admitMutation(ctx, r.req, r.admissionTarget(r.info.Name), obj, live, admission.Update, dryRun); err != nil {
		return nil, err
	}
	if obj.ResourceVersion == "" || obj.ResourceVersion == "0" {
		return nil, errNoResourceVersion(crdGR, obj.Name)
	}
	if obj.ResourceVersion != live.ResourceVersion {
		return nil, apierrors.NewConflict(crdGR, obj.Name, fmt.Errorf(optimisticLockErrorMsg))
	}
	if err := beforeCRDUpdate(ctx, status, obj, live); err != nil {
		return nil, err
	}
	if err := r.s.admitValidation(ctx, r.req, r.admissionTarget(r.info.Name), obj, live, admission.Update, dryRun); err != nil {
		return nil, err
	}
	if dryRun {
		return obj, nil
	}
	return r.s.writeOrDeleteCRD(ctx, obj, live)
}

// beforeCRDUpdate runs the CRD strategy of the endpoint (main or /status) on an update, reporting its warnings.
func beforeCRDUpdate(ctx context.Context, status bool, obj, live *apiextensionsv1.CustomResourceDefinition) error {
	cctx := ctxWithNamespace(ctx, "")
	if status {
		return crds.BeforeStatusUpdate(cctx, obj, live)
	}
	warns, err := crds.BeforeUpdate(cctx, obj, live)
	for _, w := range warns {
		warning.AddWarning(ctx, "", w)
	}
	return err
}

// admitUpdateMutation is the update handlers' mutating admission step on the object an update or patch made
// of live: an update, or a create when live is the empty object server-side apply starts a missing one from.
func (r *crRequest) admitUpdateMutation(ctx context.Context, obj, live *unstructured.Unstructured, dryRun bool) error {
	if live.GetUID() == "" {
		return r.s.admitMutation(ctx, r.req, r.admissionTarget(""), obj, nil, admission.Create, dryRun)
	}
	return r.s.admitMutation(ctx, r.req, r.admissionTarget(r.info.Name), obj, live, admission.Update, dryRun)
}
