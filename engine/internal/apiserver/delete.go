package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/warning"

	"crdplay/engine/storage"
)

type fieldErrorList = field.ErrorList

func fieldInvalid(path string, value interface{}, msg string) *field.Error {
	return field.Invalid(field.NewPath(path), value, msg)
}

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
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

func (r *crRequest) delete() (reply, error) {
	ctx := ctxWithNamespace(r.req.Context(), r.info.Namespace)
	opts, err := deleteOptions(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
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

// deleteOne deletes an object, or, while it has finalizers, marks it as being deleted. deleted reports which.
func (r *crRequest) deleteOne(ctx context.Context, name string, opts *metav1.DeleteOptions) (*unstructured.Unstructured, bool, error) {
	key := r.key(r.info.Namespace, name)
	dryRun := len(opts.DryRun) > 0
	for {
		o, err := r.s.cfg.Storage.Get(ctx, key)
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil, false, apierrors.NewNotFound(r.gr(), name)
			}
			return nil, false, storageUnavailable(err)
		}
		existing, err := r.decodeStored(o)
		if err != nil {
			return nil, false, apierrors.NewInternalError(corrupt(key[len(keyPrefix):], o.Revision, err))
		}
		if p := opts.Preconditions; p != nil {
			if p.UID != nil && *p.UID != existing.GetUID() {
				return nil, false, apierrors.NewConflict(r.gr(), name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, existing.GetUID()))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != existing.GetResourceVersion() {
				return nil, false, apierrors.NewConflict(r.gr(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, existing.GetResourceVersion()))
			}
		}
		finalizers := gcFinalizers(existing.GetFinalizers(), opts)
		if len(finalizers) == 0 {
			if dryRun {
				return existing, true, nil
			}
			if _, err := r.s.cfg.Storage.Delete(ctx, key, o.Revision); err != nil {
				if errors.Is(err, storage.ErrConflict) {
					continue
				}
				if errors.Is(err, storage.ErrNotFound) {
					return nil, false, apierrors.NewNotFound(r.gr(), name)
				}
				return nil, false, storageUnavailable(err)
			}
			return existing, true, nil
		}
		// Marking for deletion is an update: generation bumps once, the timestamp is set once.
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
			return nil, false, apierrors.NewInternalError(err)
		}
		if dryRun {
			out, err := r.storedResult(data, o.Revision)
			return out, false, err
		}
		rev, err := r.s.cfg.Storage.Update(ctx, key, data, o.Revision)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, false, storageUnavailable(err)
		}
		out, err := r.storedResult(data, rev)
		return out, false, err
	}
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

// deleteCollection is the registry's DeleteCollection: list what the options select, delete each object (or mark
// it, while it has finalizers), and answer with the list as it was before the deletions.
func (r *crRequest) deleteCollection() (reply, error) {
	ctx := ctxWithNamespace(r.req.Context(), r.info.Namespace)
	opts, err := deleteOptions(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	lopts, err := r.listOptions()
	if err != nil {
		return reply{}, err
	}
	page, err := r.s.listState(ctx, lopts, r.listSource(lopts))
	if err != nil {
		return reply{}, err
	}
	list := &unstructured.UnstructuredList{Object: map[string]interface{}{}}
	list.SetGroupVersionKind(r.vi.listKind)
	list.SetResourceVersion(strconv.FormatInt(page.rev, 10))
	list.SetContinue(page.cont)
	list.SetRemainingItemCount(page.remaining)
	for _, o := range page.items {
		u := o.(*unstructured.Unstructured)
		if _, _, err := r.deleteOne(ctx, u.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
			return reply{}, err
		}
		list.Items = append(list.Items, *u)
	}
	return reply{code: http.StatusOK, obj: list}, nil
}

// dedupOwnerReferences removes owner references repeated with the same uid, warning about it.
func dedupOwnerReferences(ctx context.Context, obj *unstructured.Unstructured) {
	refs := obj.GetOwnerReferences()
	if len(refs) < 2 {
		return
	}
	seen := map[string]bool{}
	var out []metav1.OwnerReference
	var dups []string
	for _, ref := range refs {
		if seen[string(ref.UID)] {
			dups = append(dups, string(ref.UID))
			continue
		}
		seen[string(ref.UID)] = true
		out = append(out, ref)
	}
	if len(dups) == 0 {
		return
	}
	obj.SetOwnerReferences(out)
	warning.AddWarning(ctx, "", fmt.Sprintf(".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v", dups))
}
