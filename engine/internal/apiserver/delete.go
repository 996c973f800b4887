package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"crdplay/engine/internal/crds"
	"crdplay/engine/storage"
)

// deleteOptions reads DeleteOptions from the body (JSON or YAML; at most maxBytes, as every body) or the query.
func deleteOptions(r *http.Request, maxBytes int64) (*metav1.DeleteOptions, error) {
	body, err := readBody(r, maxBytes)
	if err != nil {
		return nil, err
	}
	opts := &metav1.DeleteOptions{}
	if len(body) > 0 {
		obj, _, err := metainternalversionscheme.Codecs.UniversalDecoder(metav1.SchemeGroupVersion).Decode(body, &schema.GroupVersionKind{Group: "meta.k8s.io", Version: "v1", Kind: "DeleteOptions"}, opts)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if obj != opts {
			return nil, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
		}
	} else if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	dropUnsafeDeleteOption(opts)
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

// checkPreconditions checks a delete's preconditions against the object's uid and resourceVersion, as the
// generic store does.
func checkPreconditions(gr schema.GroupResource, name string, uid types.UID, rv string, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != uid {
		return apierrors.NewConflict(gr, name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, uid))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != rv {
		return apierrors.NewConflict(gr, name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, rv))
	}
	return nil
}

// gcFinalizers applies the propagation policy to the finalizers, as the registry does for garbage collection.
func gcFinalizers(current []string, opts *metav1.DeleteOptions) []string {
	set := sets.New(current...)
	policy := opts.PropagationPolicy
	if policy == nil && opts.OrphanDependents != nil {
		p := metav1.DeletePropagationBackground
		if *opts.OrphanDependents {
			p = metav1.DeletePropagationOrphan
		}
		policy = &p
	}
	if policy == nil {
		return current
	}
	out := append([]string(nil), current...)
	remove := func(f string) {
		var keep []string
		for _, x := range out {
			if x != f {
				keep = append(keep, x)
			}
		}
		out = keep
	}
	switch *policy {
	case metav1.DeletePropagationOrphan:
		remove(metav1.FinalizerDeleteDependents)
		if !set.Has(metav1.FinalizerOrphanDependents) {
			out = append(out, metav1.FinalizerOrphanDependents)
		}
	case metav1.DeletePropagationForeground:
		remove(metav1.FinalizerOrphanDependents)
		if !set.Has(metav1.FinalizerDeleteDependents) {
			out = append(out, metav1.FinalizerDeleteDependents)
		}
	case metav1.DeletePropagationBackground:
		remove(metav1.FinalizerOrphanDependents)
		remove(metav1.FinalizerDeleteDependents)
	}
	return out
}

func (r *crRequest) delete() (reply, error) {
	ctx := ctxWithNamespace(r.req.Context(), r.info.Namespace)
	opts, err := deleteOptions(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	if ignoresReadErrors(opts) {
		decodes := func(o storage.Object) error { _, err := r.decodeStored(o); return err }
		return unsafeDelete(ctx, r.s.cfg.Storage, r.gr(), r.vi.kind.Kind, r.key(r.info.Namespace, r.info.Name), r.info.Name, decodes, len(opts.DryRun) > 0)
	}
	out, deleted, err := r.deleteOne(ctx, r.info.Name, opts)
	if err != nil {
		return reply{}, err
	}
	code := http.StatusOK
	if deleted {
		return reply{code: code, obj: &metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusSuccess,
			Details: &metav1.StatusDetails{
				Name: out.GetName(), Group: r.gr().Group, Kind: r.gr().Resource, UID: out.GetUID(),
			},
		}}, nil
	}
	return reply{code: code, obj: out}, nil
}

// errRetry is a write that lost a race with another: the delete starts again from a fresh read.
var errRetry = errors.New("conflict: retry")

// deleteOne deletes an object, or, while it has finalizers, marks it as being deleted. deleted reports which.
func (r *crRequest) deleteOne(ctx context.Context, name string, opts *metav1.DeleteOptions) (*unstructured.Unstructured, bool, error) {
	key := r.key(r.info.Namespace, name)
	dryRun := len(opts.DryRun) > 0
	for {
		o, existing, err := r.read(ctx, key, name)
		if err != nil {
			return nil, false, err
		}
		if err := checkPreconditions(r.gr(), name, existing.GetUID(), existing.GetResourceVersion(), opts.Preconditions); err != nil {
			return nil, false, err
		}
		// The registry's deleteValidation, which the store runs on the object it is about to delete or mark.
		if err := r.s.admitDelete(ctx, r.req, r.admissionTarget(name), existing, opts); err != nil {
			return nil, false, err
		}
		finalizers := gcFinalizers(existing.GetFinalizers(), opts)
		if len(finalizers) == 0 {
			err := r.remove(ctx, key, name, o.Revision, dryRun)
			if err == errRetry {
				continue
			}
			if err != nil {
				return nil, false, err
			}
			return existing, true, nil
		}
		out, err := r.markDeleting(ctx, key, o, existing, finalizers, dryRun)
		if err == errRetry {
			continue
		}
		return out, false, err
	}
}

// remove deletes the object stored at key at revision rev (nothing in a dry run).
func (r *crRequest) remove(ctx context.Context, key, name string, rev int64, dryRun bool) error {
	if dryRun {
		return nil
	}
	if _, err := r.s.cfg.Storage.Delete(ctx, key, rev); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			return errRetry
		}
		if errors.Is(err, storage.ErrNotFound) {
			return apierrors.NewNotFound(r.gr(), name)
		}
		return storageWriteError(err)
	}
	return nil
}

// markDeleting marks the object o read at key as being deleted, with finalizers left to run. Marking is an
// update: the generation bumps once, the timestamp is set once.
func (r *crRequest) markDeleting(ctx context.Context, key string, o storage.Object, existing *unstructured.Unstructured, finalizers []string, dryRun bool) (*unstructured.Unstructured, error) {
	updated := existing.DeepCopy()
	updated.SetFinalizers(finalizers)
	if updated.GetDeletionTimestamp() == nil {
		if updated.GetGeneration() > 0 {
			updated.SetGeneration(updated.GetGeneration() + 1)
		}
		now := metav1.NewTime(r.s.now())
		updated.SetDeletionTimestamp(&now)
		zero := int64(0)
		updated.SetDeletionGracePeriodSeconds(&zero)
	}
	data, err := r.encodeForStorage(updated)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if dryRun {
		return r.storedResult(data, o.Revision, nil)
	}
	rev, err := r.s.cfg.Storage.Update(ctx, key, data, o.Revision)
	if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
		// Gone since the read: the retry's read answers 404.
		return nil, errRetry
	}
	if err != nil {
		return nil, storageWriteError(err)
	}
	return r.storedResult(data, rev, nil)
}

// deleteCollection is the registry's DeleteCollection: list what the options select, delete each object (or mark
// it, while it has finalizers), and answer with the list as it was before the deletions.
func (r *crRequest) deleteCollection() (reply, error) {
	ctx := ctxWithNamespace(r.req.Context(), r.info.Namespace)
	// The handler reads the list options first, then the delete options.
	lopts, err := r.listOptions()
	if err != nil {
		return reply{}, err
	}
	opts, err := deleteOptions(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	if ignoresReadErrors(opts) {
		return reply{}, errUnsafeDeleteCollection()
	}
	page, err := r.s.listState(ctx, lopts, r.listSource(lopts))
	if err != nil {
		return reply{}, err
	}
	for _, o := range page.items {
		if _, _, err := r.deleteOne(ctx, o.(*unstructured.Unstructured).GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
			return reply{}, err
		}
	}
	return reply{code: http.StatusOK, obj: r.listOf(page)}, nil
}

func (r *crdRequest) delete() (reply, error) {
	ctx := r.req.Context()
	opts, err := deleteOptions(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if ignoresReadErrors(opts) {
		decodes := func(o storage.Object) error { _, err := decodeCRD(o); return err }
		out, err := unsafeDelete(ctx, r.s.cfg.Storage, crdGR, crdGVK.Kind, crdKey(r.info.Name), r.info.Name, decodes, len(opts.DryRun) > 0)
		if err == nil && len(opts.DryRun) == 0 {
			r.s.runControllers(ctx)
		}
		return out, err
	}
	for {
		out, err := r.markCRDDeleting(ctx, opts)
		if isLostRace(err) {
			// Another replica wrote the CRD since the read: start again from a fresh one.
			continue
		}
		if err != nil {
			return reply{}, err
		}
		if len(opts.DryRun) == 0 {
			r.s.runControllers(ctx)
		}
		return reply{code: http.StatusOK, obj: out}, nil
	}
}

// markCRDDeleting is one attempt of a CRD's delete: the CRD registry's marking of the CRD as being deleted (its
// finalizer then deletes the objects and the CRD).
func (r *crdRequest) markCRDDeleting(ctx context.Context, opts *metav1.DeleteOptions) (*apiextensionsv1.CustomResourceDefinition, error) {
	live, err := r.s.readCRD(ctx, r.info.Name)
	if err != nil {
		return nil, err
	}
	// The CRD registry's Delete checks the preconditions itself, in its own words, before the generic store's
	// (apiextensions-apiserver pkg/registry/customresourcedefinition/etcd.go).
	if p := opts.Preconditions; p != nil && p.UID != nil && *p.UID != live.UID {
		return nil, apierrors.NewConflict(crdGR, live.Name, fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, live.UID))
	}
	if p := opts.Preconditions; p != nil && p.ResourceVersion != nil && *p.ResourceVersion != live.ResourceVersion {
		return nil, apierrors.NewConflict(crdGR, live.Name, fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, live.ResourceVersion))
	}
	next := live.DeepCopy()
	if !crds.PrepareForDelete(next, metav1.NewTime(r.s.now())) {
		// Already being deleted: the generic store only returns the object, applying DeleteOptions' garbage
		// collection finalizers.
		next.Finalizers = gcFinalizers(next.Finalizers, opts)
	}
	if len(opts.DryRun) > 0 {
		return next, nil
	}
	return r.s.writeCRD(ctx, next, live)
}

// deleteCollection is the generic registry's DeleteCollection, which for CRDs does not go through the CRD
// registry's Delete (the generic store calls its own): a selected CRD without finalizers is removed at once,
// without the customresourcecleanup finalizer, so its objects are not deleted and reappear if a CRD of that name
// comes back. The answer is the list as it was before the deletions.
func (r *crdRequest) deleteCollection() (reply, error) {
	ctx := r.req.Context()
	// The handler reads the list options first, then the delete options.
	lopts, err := r.listOptions()
	if err != nil {
		return reply{}, err
	}
	opts, err := deleteOptions(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	if ignoresReadErrors(opts) {
		return reply{}, errUnsafeDeleteCollection()
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	page, err := r.s.listState(ctx, lopts, crdListSource(lopts))
	if err != nil {
		return reply{}, err
	}
	dryRun := len(opts.DryRun) > 0
	for _, o := range page.items {
		crd := o.(*apiextensionsv1.CustomResourceDefinition)
		err := r.s.deleteCRDGeneric(ctx, crd, opts, dryRun)
		// A CRD another replica wrote since the list is deleted from a fresh read, as the store's Delete reads it.
		for isLostRace(err) {
			if crd, err = r.s.readCRD(ctx, crd.Name); err == nil {
				err = r.s.deleteCRDGeneric(ctx, crd, opts, dryRun)
			}
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return reply{}, err
		}
	}
	if !dryRun {
		r.s.runControllers(ctx)
	}
	return reply{code: http.StatusOK, obj: crdList(page)}, nil
}

// deleteCRDGeneric deletes a CRD as the generic store does: at once without finalizers, otherwise by marking it
// (deletionTimestamp and the garbage collector's finalizers the options ask for).
func (s *Server) deleteCRDGeneric(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, opts *metav1.DeleteOptions, dryRun bool) error {
	if err := checkPreconditions(crdGR, crd.Name, crd.UID, crd.ResourceVersion, opts.Preconditions); err != nil {
		return err
	}
	next := crd.DeepCopy()
	next.Finalizers = gcFinalizers(next.Finalizers, opts)
	if len(next.Finalizers) == 0 {
		if dryRun {
			return nil
		}
		rev, _ := strconv.ParseInt(crd.ResourceVersion, 10, 64)
		if _, err := s.cfg.Storage.Delete(ctx, crdKey(crd.Name), rev); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return apierrors.NewNotFound(crdGR, crd.Name)
			}
			if errors.Is(err, storage.ErrConflict) {
				return errLostRace(crdGR, crd.Name)
			}
			return storageWriteError(err)
		}
		s.infos.Delete(crd.Name)
		return nil
	}
	if next.DeletionTimestamp == nil {
		now := metav1.NewTime(s.now())
		next.DeletionTimestamp = &now
		zero := int64(0)
		next.DeletionGracePeriodSeconds = &zero
		if next.Generation > 0 {
			next.Generation++
		}
	}
	if dryRun {
		return nil
	}
	_, err := s.writeCRD(ctx, next, crd)
	return err
}
