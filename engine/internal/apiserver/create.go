package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/apiserver/pkg/warning"

	"crdplay/engine/internal/crds"
	"crdplay/engine/storage"
)

// createOptions reads and checks the CreateOptions of a request's query.
func createOptions(req *http.Request) (*metav1.CreateOptions, error) {
	opts := &metav1.CreateOptions{}
	err := queryOptions(req, opts, "CreateOptions", func() field.ErrorList { return metav1validation.ValidateCreateOptions(opts) })
	return opts, err
}

func (r *crRequest) create() (reply, error) {
	ctx := r.req.Context()
	body, err := readBody(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	opts, err := createOptions(r.req)
	if err != nil {
		return reply{}, err
	}
	obj, err := r.decodeBody(body, opts.FieldValidation)
	if err != nil {
		return reply{}, err
	}
	ns := r.info.Namespace
	ctx = ctxWithNamespace(ctx, ns)
	rest.WipeObjectMetaSystemFields(obj)
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(ns, obj); err != nil {
		return reply{}, err
	}
	if r.terminating {
		return reply{}, errTerminatingCreate(r.gr(), obj.GetName())
	}
	dedupOwnerReferences(ctx, obj)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(r.vi.kind)
	// As in kube-apiserver's create handler, managedFields are computed before validation: a body with a value of
	// the wrong type makes UpdateNoErrors log "[SHOULD NOT HAPPEN] failed to update managedFields" through klog,
	// and validation then rejects the object with a 422. The oracle logs the same line for the same request.
	obj = r.vi.fieldManager.UpdateNoErrors(live, obj, managerOrUserAgent(opts.FieldManager, r.req.UserAgent())).(*unstructured.Unstructured)
	if err := r.s.admitMutation(ctx, r.req, r.admissionTarget(""), obj, nil, admission.Create, len(opts.DryRun) > 0); err != nil {
		return reply{}, err
	}

	out, err := r.store(ctx, obj, len(opts.DryRun) > 0)
	if isTooLarge(err) {
		// As the create handler does: managedFields can be large, so an object too large to store with them is
		// stored without them.
		obj.SetManagedFields(nil)
		out, err = r.store(ctx, obj, len(opts.DryRun) > 0)
	}
	if err != nil {
		return reply{}, err
	}
	return reply{code: http.StatusCreated, obj: out}, nil
}

// store runs the registry's create: system fields, name generation (retried on conflicts), the strategy, the
// write. obj is changed (its callers do not use it afterwards).
func (r *crRequest) store(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	generate := obj.GetGenerateName() != "" && obj.GetName() == ""
	var lastErr error
	for attempt := 0; attempt < 8; attempt++ {
		o := obj
		if generate {
			// Each attempt starts again from obj, under a new name. Without one there is a single attempt, and
			// obj is the caller's to give.
			o = obj.DeepCopy()
		}
		rest.FillObjectMetaSystemFields(o)
		o.SetCreationTimestamp(metav1.NewTime(r.s.now()))
		if generate {
			o.SetName(r.vi.strategy.GenerateName(o.GetGenerateName()))
		}
		if err := rest.BeforeCreate(r.vi.strategy, ctx, o); err != nil {
			return nil, err
		}
		if err := r.s.admitValidation(ctx, r.req, r.admissionTarget(""), o, nil, admission.Create, dryRun); err != nil {
			return nil, err
		}
		rv := o.GetResourceVersion()            // the encoding clears it
		data, err := r.encodeOwnedForStorage(o) // o is this attempt's copy
		if err != nil {
			// kube-apiserver passes encoding (conversion) errors through unwrapped: a 500 without a reason.
			return nil, err
		}
		key := r.key(r.info.Namespace, o.GetName())
		if dryRun {
			return r.dryRunCreate(ctx, key, o.GetName(), rv, data, o)
		}
		if err := resourceVersionSetOnCreate(rv); err != nil {
			return nil, err
		}
		rev, err := r.s.cfg.Storage.Create(ctx, key, data)
		if err == nil {
			return r.storedResult(data, rev, o)
		}
		if errors.Is(err, storage.ErrExists) {
			lastErr = apierrors.NewAlreadyExists(r.gr(), o.GetName())
			if generate {
				continue
			}
			return nil, lastErr
		}
		return nil, storageWriteError(err)
	}
	return nil, lastErr
}

// dryRunCreate answers a dry-run create as the dry-run storage does: a name in use is a conflict as for a real
// create, and the object, never stored, has the resourceVersion its body had (none, unless it was exported).
func (r *crRequest) dryRunCreate(ctx context.Context, key, name, rv string, data []byte, written *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if _, err := r.s.cfg.Storage.Get(ctx, key); err == nil {
		return nil, apierrors.NewAlreadyExists(r.gr(), name)
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, storageUnavailable(err)
	}
	out, err := r.storedResult(data, 0, written)
	if err == nil {
		out.SetResourceVersion(rv)
	}
	return out, err
}

// errResourceVersionSetOnCreate is k8s.io/apiserver/pkg/storage's ErrResourceVersionSetOnCreate, with which
// kube-apiserver's etcd3 store refuses a create whose object has a resourceVersion (a body exported with
// kubectl get -o yaml): the registry passes it through unwrapped, so the client gets a 500 without a reason.
var errResourceVersionSetOnCreate = errors.New("resourceVersion should not be set on objects to be created")

// resourceVersionSetOnCreate is the etcd3 store's check of a create's resourceVersion: one that parses as a
// non-zero number (APIObjectVersioner.ObjectResourceVersion) is refused; "0" and one that does not parse are
// let through and cleared. The dry-run storage does not check it.
func resourceVersionSetOnCreate(rv string) error {
	if v, err := strconv.ParseUint(rv, 10, 64); err == nil && v != 0 {
		return errResourceVersionSetOnCreate
	}
	return nil
}

// errTerminatingCreate is what kube-apiserver's admission answers to creates while the CRD is being deleted.
func errTerminatingCreate(gr schema.GroupResource, name string) error {
	return apierrors.NewForbidden(gr, name, fmt.Errorf("create not allowed while custom resource definition is terminating"))
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

func (r *crdRequest) create() (reply, error) {
	ctx := r.req.Context()
	body, err := readBody(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	opts, err := createOptions(r.req)
	if err != nil {
		return reply{}, err
	}
	crd, err := r.decodeBody(body, opts.FieldValidation)
	if err != nil {
		return reply{}, err
	}
	rest.WipeObjectMetaSystemFields(crd)
	// CRDs are cluster-scoped: a namespace in the body is dropped.
	crd.Namespace = ""
	crd, err = trackManagedFields(crdFieldManagers().main, &apiextensionsv1.CustomResourceDefinition{}, crd, managerOrUserAgent(opts.FieldManager, r.req.UserAgent()))
	if err != nil {
		return reply{}, apierrors.NewInternalError(err)
	}
	if err := r.s.admitMutation(ctx, r.req, r.admissionTarget(""), crd, nil, admission.Create, len(opts.DryRun) > 0); err != nil {
		return reply{}, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	out, err := r.s.createCRD(ctx, crd, len(opts.DryRun) > 0, r.validateCreate)
	if err != nil {
		return reply{}, err
	}
	if len(opts.DryRun) == 0 {
		// The naming and establishing controllers run after the answer, as kube-apiserver's do; no request
		// after it is served before they ran (settleControllers).
		r.s.controllersDue.Store(true)
		r.s.settleLater()
	}
	return reply{code: http.StatusCreated, obj: out}, nil
}

// validateCreate is the registry's createValidation of a CRD: the validating admission chain.
func (r *crdRequest) validateCreate(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, dryRun bool) error {
	return r.s.admitValidation(ctx, r.req, r.admissionTarget(""), crd, nil, admission.Create, dryRun)
}

// createCRD is the registry's create for CRDs: system fields, strategy, validate (the admission chain), write.
func (s *Server) createCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, dryRun bool, validate func(context.Context, *apiextensionsv1.CustomResourceDefinition, bool) error) (*apiextensionsv1.CustomResourceDefinition, error) {
	rest.FillObjectMetaSystemFields(crd)
	crd.CreationTimestamp = metav1.NewTime(s.now())
	if crd.GenerateName != "" && crd.Name == "" {
		crd.Name = names.SimpleNameGenerator.GenerateName(crd.GenerateName)
	}
	warns, err := crds.BeforeCreate(ctxWithNamespace(ctx, ""), crd)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		warning.AddWarning(ctx, "", w)
	}
	if err := validate(ctx, crd, dryRun); err != nil {
		return nil, err
	}
	data, err := encodeCRD(crd)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if dryRun {
		return crd, nil
	}
	if err := resourceVersionSetOnCreate(crd.ResourceVersion); err != nil {
		return nil, err
	}
	rev, err := s.cfg.Storage.Create(ctx, crdKey(crd.Name), data)
	if err != nil {
		if errors.Is(err, storage.ErrExists) {
			return nil, apierrors.NewAlreadyExists(crdGR, crd.Name)
		}
		return nil, storageWriteError(err)
	}
	out, err := decodeCRD(storage.Object{Key: crdKey(crd.Name), Value: data, Revision: rev})
	if err == nil {
		// The answer is only encoded, never modified: the controllers, which list every CRD right after,
		// and the first request for the new resource read this decode rather than decoding it again.
		s.decoded.Store(out.Name, out)
		s.rememberStoredSpec(out, data) // for the 201's encoding (marshalCRD)
	}
	return out, err
}
