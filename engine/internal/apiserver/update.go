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
	out, created, err := r.guaranteedUpdate(ctx, strategy, len(opts.DryRun) > 0, func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		dedupOwnerReferences(ctx, obj)
		return fm.UpdateNoErrors(live, obj, manager).(*unstructured.Unstructured), nil
	})
	if err != nil {
		return reply{}, err
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	return reply{code: code, obj: out}, nil
}

// guaranteedUpdate is the registry's Update: read the live object, let mutate produce the new one, check the
// resourceVersion precondition, run the strategy, write with optimistic concurrency, and delete the object
// when it is being deleted and has no finalizers left.
func (r *crRequest) guaranteedUpdate(ctx context.Context, strategy updateStrategy, dryRun bool, mutate func(live *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, bool, error) {
	ctx = ctxWithNamespace(ctx, r.info.Namespace)
	name := r.info.Name
	key := r.key(r.info.Namespace, name)
	o, existing, err := r.read(ctx, key, name)
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
	data, err := r.encodeForStorage(obj)
	if err != nil {
		return nil, false, apierrors.NewInternalError(err)
	}
	out, err := r.writeUpdate(ctx, key, o, data, dryRun, shouldDeleteDuringUpdate(obj, existing))
	return out, false, err
}

// writeUpdate stores the update data of the object o read at key (or deletes it), as etcd3's GuaranteedUpdate
// does: a dry run and an update that changes nothing are not written, and answer what a read would.
func (r *crRequest) writeUpdate(ctx context.Context, key string, o storage.Object, data []byte, dryRun, deleteIt bool) (*unstructured.Unstructured, error) {
	name := r.info.Name
	switch {
	case dryRun:
		return r.storedResult(data, o.Revision)
	case deleteIt:
		if _, err := r.s.cfg.Storage.Delete(ctx, key, o.Revision); err != nil {
			if errors.Is(err, storage.ErrConflict) {
				return nil, apierrors.NewConflict(r.gr(), name, fmt.Errorf(optimisticLockErrorMsg))
			}
			return nil, storageUnavailable(err)
		}
		return r.storedResult(data, o.Revision)
	case bytes.Equal(data, o.Value):
		// The stored object with its resourceVersion: watchers see no event.
		return r.storedResult(o.Value, o.Revision)
	}
	rev, err := r.s.cfg.Storage.Update(ctx, key, data, o.Revision)
	if err != nil {
		if errors.Is(err, storage.ErrConflict) {
			return nil, apierrors.NewConflict(r.gr(), name, fmt.Errorf(optimisticLockErrorMsg))
		}
		if errors.Is(err, storage.ErrNotFound) {
			return nil, apierrors.NewNotFound(r.gr(), name)
		}
		return nil, storageUnavailable(err)
	}
	return r.storedResult(data, rev)
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
		return crd, nil
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
// as manager's update unless manager is empty: server-side apply records it itself.
func (r *crdRequest) updateWith(ctx context.Context, status bool, dryRun bool, manager string, mutate func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error)) (*apiextensionsv1.CustomResourceDefinition, error) {
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
	if obj.ResourceVersion == "" || obj.ResourceVersion == "0" {
		return nil, errNoResourceVersion(crdGR, obj.Name)
	}
	if obj.ResourceVersion != live.ResourceVersion {
		return nil, apierrors.NewConflict(crdGR, obj.Name, fmt.Errorf(optimisticLockErrorMsg))
	}
	if err := beforeCRDUpdate(ctx, status, obj, live); err != nil {
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
