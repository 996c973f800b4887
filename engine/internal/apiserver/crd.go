package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	apistorage "k8s.io/apiserver/pkg/storage"
	"net/http"
	"sort"
	"strconv"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/apiserver/pkg/warning"

	"crdplay/engine/internal/crds"
	"crdplay/engine/storage"
)

var crdGR = schema.GroupResource{Group: apiextensionsv1.GroupName, Resource: "customresourcedefinitions"}
var crdGVK = apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// crdPrefix is where CRDs are stored.
const crdPrefix = keyPrefix + "/apiextensions.k8s.io/customresourcedefinitions/"

func crdKey(name string) string { return crdPrefix + name }

// getCRDShared is getCRD for callers that only read the CRD (serving its custom resources): it decodes a
// CRD once per storage revision, as kube-apiserver serves custom resources from its CRD informer's cache
// rather than from etcd. Decoding is what a request would otherwise pay for: about 25 ms natively, and more
// in the browser, for the largest real CRDs (2.8 MB). The returned CRD is shared and must not be modified.
func (s *Server) getCRDShared(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	o, err := s.cfg.Storage.Get(ctx, crdKey(name))
	if err != nil {
		return nil, err
	}
	if v, ok := s.decoded.Load(name); ok {
		if c := v.(*apiextensionsv1.CustomResourceDefinition); c.ResourceVersion == strconv.FormatInt(o.Revision, 10) {
			return c, nil
		}
	}
	c, err := decodeCRD(o)
	if err != nil {
		return nil, err
	}
	s.decoded.Store(name, c)
	return c, nil
}

// getCRD reads a CRD from storage.
func (s *Server) getCRD(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	o, err := s.cfg.Storage.Get(ctx, crdKey(name))
	if err != nil {
		return nil, err
	}
	return decodeCRD(o)
}

func decodeCRD(o storage.Object) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(o.Value, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Key, err)
	}
	crd.ResourceVersion = strconv.FormatInt(o.Revision, 10)
	crd.APIVersion, crd.Kind = crdGVK.GroupVersion().String(), crdGVK.Kind
	return crd, nil
}

func (s *Server) listCRDs(ctx context.Context) ([]*apiextensionsv1.CustomResourceDefinition, int64, error) {
	res, err := s.cfg.Storage.List(ctx, crdPrefix, storage.ListOptions{})
	if err != nil {
		return nil, 0, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, o := range res.Items {
		crd, err := decodeCRD(o)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, crd)
	}
	return out, res.Revision, nil
}

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

// unstructuredNop converts objects that are already in the only version served (apiextensions.k8s.io/v1).
type unstructuredNop struct{}

func (unstructuredNop) Convert(in, out, _ interface{}) error {
	ui, ok1 := in.(*unstructured.Unstructured)
	uo, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("unsupported conversion %T to %T", in, out)
	}
	uo.Object = ui.DeepCopy().Object
	return nil
}
func (unstructuredNop) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in.DeepCopyObject(), nil
}
func (unstructuredNop) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// trackManagedFields records a write by manager in the CRD's managedFields.
func trackManagedFields(fm *managedfields.FieldManager, live, obj *apiextensionsv1.CustomResourceDefinition, manager string) (*apiextensionsv1.CustomResourceDefinition, error) {
	if crdFieldManagers().err != nil {
		return nil, crdFieldManagers().err
	}
	out, ok := fm.UpdateNoErrors(live, obj, manager).(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("field manager returned an unexpected object")
	}
	return out, nil
}

// crdRequest is one request for customresourcedefinitions.
type crdRequest struct {
	s    *Server
	w    http.ResponseWriter
	req  *http.Request
	rec  *warnings
	info *request.RequestInfo
	mt   negotiation.MediaTypeOptions
}

func (s *Server) serveCRD(w http.ResponseWriter, req *http.Request, rec *warnings, info *request.RequestInfo) {
	r := &crdRequest{s: s, w: w, req: req, rec: rec, info: info}
	if info.APIVersion != "v1" || info.Namespace != "" {
		s.notFound(w, req, rec)
		return
	}
	mt, _, err := negotiation.NegotiateOutputMediaType(req, outputSerializers{}, restrictions{table: true})
	if err != nil {
		s.fail(w, req, rec, err)
		return
	}
	r.mt = mt
	var res reply
	switch {
	case info.Subresource == "" && info.Verb == "create":
		res, err = r.create()
	case info.Subresource == "" && (info.Verb == "list" || info.Verb == "watch"):
		res, err = r.list()
	case info.Verb == "get" && (info.Subresource == "" || info.Subresource == "status"):
		res, err = r.get()
	case info.Verb == "update" && (info.Subresource == "" || info.Subresource == "status"):
		res, err = r.update()
	case info.Verb == "patch" && (info.Subresource == "" || info.Subresource == "status"):
		res, err = r.patch()
	case info.Subresource == "" && info.Verb == "delete":
		res, err = r.delete()
	case info.Subresource == "" && info.Verb == "deletecollection":
		res, err = r.deleteCollection()
	case info.Subresource == "":
		err = apierrors.NewMethodNotSupported(crdGR, info.Verb)
	default:
		err = apierrors.NewNotFound(crdGR, info.Name)
	}
	if err == errHandled {
		return
	}
	if err != nil {
		s.fail(w, req, rec, err)
		return
	}
	if res.obj != nil {
		obj, err := transform(req.Context(), req, mt, res.obj, crdTableConvertor{}, crdGVK.GroupVersion(), unstructuredNop{})
		if err != nil {
			s.fail(w, req, rec, err)
			return
		}
		res.obj = obj
	}
	s.write(w, req, rec, res, mt)
}

func (r *crdRequest) get() (reply, error) {
	crd, err := r.s.getCRD(r.req.Context(), r.info.Name)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return reply{}, apierrors.NewNotFound(crdGR, r.info.Name)
		}
		return reply{}, storageUnavailable(err)
	}
	return reply{code: http.StatusOK, obj: crd}, nil
}

// listOptions parses and checks a CRD list or watch query as the list handler does; CRDs select on labels and
// on metadata.name (and metadata.namespace, which a cluster-scoped object does not have).
func (r *crdRequest) listOptions() (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	metainternalversion.SetListOptionsDefaults(opts, true)
	if errs := metainternalversionValidate(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if opts.FieldSelector != nil {
		fs, err := opts.FieldSelector.Transform(runtime.DefaultMetaV1FieldSelectorConversion)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		opts.FieldSelector = fs
	}
	if err := selectName(opts, r.info.Name); err != nil {
		return nil, err
	}
	return opts, nil
}

// crdPredicate is the selection the list options make.
func crdPredicate(opts *metainternalversion.ListOptions) apistorage.SelectionPredicate {
	pred := apistorage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), GetAttrs: crdAttrs}
	if opts.LabelSelector != nil {
		pred.Label = opts.LabelSelector
	}
	if opts.FieldSelector != nil {
		pred.Field = opts.FieldSelector
	}
	return pred
}

// crdAttrs are the registry's attributes of a CRD: its labels, and metadata.name (no namespace field: CRDs are
// cluster-scoped).
func crdAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		return nil, nil, fmt.Errorf("not a CustomResourceDefinition: %T", obj)
	}
	return crd.Labels, fields.Set{"metadata.name": crd.Name}, nil
}

// crdListSource reads the CRDs selected by opts.
func crdListSource(opts *metainternalversion.ListOptions) listSource {
	pred := crdPredicate(opts)
	return listSource{
		prefix:  crdPrefix,
		decode:  func(o storage.Object) (runtime.Object, error) { return decodeCRD(o) },
		matches: pred.Matches,
		corrupt: func(errs []error) error { return listCorrupt(crdGR, errs) },
	}
}

func (r *crdRequest) list() (reply, error) {
	opts, err := r.listOptions()
	if err != nil {
		return reply{}, err
	}
	if opts.Watch || r.info.Verb == "watch" {
		r.s.serveWatch(r.w, r.req, r.rec, opts, r.watchSource(opts))
		return reply{}, errHandled
	}
	page, err := r.s.listState(r.req.Context(), opts, crdListSource(opts))
	if err != nil {
		return reply{}, err
	}
	return reply{code: http.StatusOK, obj: crdList(page)}, nil
}

// crdList is a page of CRDs as a CustomResourceDefinitionList.
func crdList(page listPage) *apiextensionsv1.CustomResourceDefinitionList {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	list.APIVersion, list.Kind = crdGVK.GroupVersion().String(), "CustomResourceDefinitionList"
	list.ResourceVersion = strconv.FormatInt(page.rev, 10)
	list.Continue = page.cont
	list.RemainingItemCount = page.remaining
	list.Items = []apiextensionsv1.CustomResourceDefinition{}
	for _, o := range page.items {
		// The items of a typed list carry no apiVersion and kind: only the list is stamped when encoded.
		crd := *o.(*apiextensionsv1.CustomResourceDefinition)
		crd.TypeMeta = metav1.TypeMeta{}
		list.Items = append(list.Items, crd)
	}
	return list
}

// watchSource is the watch source of CRDs: bookmarks are empty CRDs, as the registry's typed objects are.
func (r *crdRequest) watchSource(opts *metainternalversion.ListOptions) watchSource {
	pred := crdPredicate(opts)
	src := crdListSource(opts)
	return watchSource{
		prefix: crdPrefix,
		list: func(ctx context.Context) ([]runtime.Object, int64, error) {
			all := &metainternalversion.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector}
			page, err := r.s.listState(ctx, all, src)
			return page.items, page.rev, err
		},
		decode: src.decode,
		matches: func(obj runtime.Object) bool {
			ok, _ := pred.Matches(obj)
			return ok
		},
		bookmark: func(rev int64, initialEnd bool) runtime.Object {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			crd.APIVersion, crd.Kind = crdGVK.GroupVersion().String(), crdGVK.Kind
			crd.ResourceVersion = strconv.FormatInt(rev, 10)
			if initialEnd {
				crd.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
			}
			return crd
		},
	}
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
	crd, warns, err := crds.Decode(body, r.req.Header.Get("Content-Type"), opts.FieldValidation)
	if err != nil {
		return reply{}, err
	}
	for _, w := range warns {
		r.rec.AddWarning("", w)
	}
	crd.ObjectMeta.CreationTimestamp = metav1.Time{}
	crd.UID, crd.DeletionTimestamp, crd.DeletionGracePeriodSeconds, crd.SelfLink = "", nil, nil, ""
	if crd.Namespace != "" {
		crd.Namespace = ""
	}
	crd, err = trackManagedFields(crdFieldManagers().main, &apiextensionsv1.CustomResourceDefinition{}, crd, managerOrUserAgent(opts.FieldManager, r.req.UserAgent()))
	if err != nil {
		return reply{}, apierrors.NewInternalError(err)
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	out, err := r.s.createCRD(ctx, crd, len(opts.DryRun) > 0)
	if err != nil {
		return reply{}, err
	}
	if len(opts.DryRun) == 0 {
		r.s.runControllers(ctx)
	}
	return reply{code: http.StatusCreated, obj: out}, nil
}

// createCRD is the registry's create for CRDs: system fields, strategy, write.
func (s *Server) createCRD(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, dryRun bool) (*apiextensionsv1.CustomResourceDefinition, error) {
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
	data, err := encodeCRD(crd)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if dryRun {
		return crd, nil
	}
	rev, err := s.cfg.Storage.Create(ctx, crdKey(crd.Name), data)
	if err != nil {
		if errors.Is(err, storage.ErrExists) {
			return nil, apierrors.NewAlreadyExists(crdGR, crd.Name)
		}
		return nil, storageUnavailable(err)
	}
	return decodeCRD(storage.Object{Key: crdKey(crd.Name), Value: data, Revision: rev})
}

func encodeCRD(crd *apiextensionsv1.CustomResourceDefinition) ([]byte, error) {
	c := crd.DeepCopy()
	c.ResourceVersion = ""
	c.APIVersion, c.Kind = crdGVK.GroupVersion().String(), crdGVK.Kind
	return json.Marshal(c)
}

// runControllers does synchronously what kube-apiserver's CRD controllers do shortly after a CRD write:
// accept names, establish, report schema problems, and finish deletions. Their status writes are recorded as
// manager "kube-apiserver" on the status subresource.
func (s *Server) runControllers(ctx context.Context) {
	for round := 0; round < 4; round++ {
		all, _, err := s.listCRDs(ctx)
		if err != nil {
			return
		}
		sort.SliceStable(all, func(i, j int) bool {
			if !all[i].CreationTimestamp.Equal(&all[j].CreationTimestamp) {
				return all[i].CreationTimestamp.Before(&all[j].CreationTimestamp)
			}
			return all[i].Name < all[j].Name
		})
		progress := false
		for _, crd := range all {
			if crd.DeletionTimestamp != nil {
				if s.finishCRDDeletion(ctx, crd) {
					progress = true
				}
			}
		}
		if progress {
			continue
		}
		changed := crds.Reconcile(all, metav1.NewTime(s.now()))
		for _, c := range changed {
			var live *apiextensionsv1.CustomResourceDefinition
			for _, a := range all {
				if a.Name == c.Name {
					live = a
				}
			}
			if live == nil {
				continue
			}
			next := live.DeepCopy()
			next.Status = c.Status
			if _, err := s.writeCRDStatus(ctx, next, live); err == nil {
				progress = true
			}
		}
		if !progress {
			return
		}
	}
}

// writeCRD stores crd over live with optimistic concurrency.
func (s *Server) writeCRD(ctx context.Context, crd, live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := encodeCRD(crd)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	liveRev, _ := strconv.ParseInt(live.ResourceVersion, 10, 64)
	// As etcd3's GuaranteedUpdate, an object whose encoding is what is stored is not written: the answer is the
	// stored object with its resourceVersion, and watchers see no event.
	if cur, err := s.cfg.Storage.Get(ctx, crdKey(crd.Name)); err == nil && cur.Revision == liveRev && bytes.Equal(cur.Value, data) {
		return decodeCRD(cur)
	}
	rev, err := s.cfg.Storage.Update(ctx, crdKey(crd.Name), data, liveRev)
	if err != nil {
		switch {
		case errors.Is(err, storage.ErrConflict):
			return nil, apierrors.NewConflict(crdGR, crd.Name, fmt.Errorf(optimisticLockErrorMsg))
		case errors.Is(err, storage.ErrNotFound):
			return nil, apierrors.NewNotFound(crdGR, crd.Name)
		}
		return nil, storageUnavailable(err)
	}
	return decodeCRD(storage.Object{Key: crdKey(crd.Name), Value: data, Revision: rev})
}

// finishCRDDeletion is the finalizer controller: mark the deletion in progress, delete every instance, record
// the outcome and release the CRD, which the store then deletes.
func (s *Server) finishCRDDeletion(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) bool {
	now := metav1.NewTime(s.now())
	next := crd.DeepCopy()
	pending, deleteInstances := crds.BeginFinalize(next, now)
	if !pending {
		return false
	}
	live, err := s.writeCRDStatus(ctx, next, crd)
	if err != nil {
		return false
	}
	var deleteErr error
	if deleteInstances {
		prefix := keyPrefix + "/" + crd.Spec.Group + "/" + crd.Status.AcceptedNames.Plural + "/"
		res, err := s.cfg.Storage.List(ctx, prefix, storage.ListOptions{})
		if err != nil {
			deleteErr = err
		}
		for _, o := range res.Items {
			if _, err := s.cfg.Storage.Delete(ctx, o.Key, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
				deleteErr = err
			}
		}
	}
	next = live.DeepCopy()
	if !crds.FinishFinalize(next, metav1.NewTime(s.now()), deleteErr) {
		s.writeCRDStatus(ctx, next, live)
		return false
	}
	if _, err := s.writeCRDStatus(ctx, next, live); err != nil {
		return false
	}
	s.infos.Delete(crd.Name)
	return true
}

// writeCRDStatus is a controller's write through /status as manager "kube-apiserver"; with the last
// finalizer gone from a CRD being deleted, the store deletes it instead.
func (s *Server) writeCRDStatus(ctx context.Context, next, live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	next, err := trackManagedFields(crdFieldManagers().status, live, next, "kube-apiserver")
	if err != nil {
		return nil, err
	}
	if err := crds.BeforeStatusUpdate(ctxWithNamespace(ctx, ""), next, live); err != nil {
		return nil, err
	}
	return s.writeOrDeleteCRD(ctx, next, live)
}

// writeOrDeleteCRD stores crd over live, or deletes it when it is being deleted and no finalizer is left.
func (s *Server) writeOrDeleteCRD(ctx context.Context, crd, live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	if crd.DeletionTimestamp != nil && len(crd.Finalizers) == 0 {
		rev, _ := strconv.ParseInt(live.ResourceVersion, 10, 64)
		if _, err := s.cfg.Storage.Delete(ctx, crdKey(crd.Name), rev); err != nil {
			return nil, storageUnavailable(err)
		}
		s.infos.Delete(crd.Name)
		return crd, nil
	}
	return s.writeCRD(ctx, crd, live)
}

// updateWith is PUT (and the core of PATCH) for CRDs and their /status. The write is recorded in managedFields
// as manager's update unless manager is empty: server-side apply records it itself.
func (r *crdRequest) updateWith(ctx context.Context, status bool, dryRun bool, manager string, mutate func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error)) (*apiextensionsv1.CustomResourceDefinition, error) {
	live, err := r.s.getCRD(ctx, r.info.Name)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, apierrors.NewNotFound(crdGR, r.info.Name)
		}
		return nil, storageUnavailable(err)
	}
	obj, err := mutate(live.DeepCopy())
	if err != nil {
		return nil, err
	}
	if obj.Name != r.info.Name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.Name, r.info.Name))
	}
	fm := crdFieldManagers().main
	if status {
		fm = crdFieldManagers().status
	}
	if manager != "" {
		if obj, err = trackManagedFields(fm, live, obj, manager); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	if obj.ResourceVersion == "" || obj.ResourceVersion == "0" {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: crdGR.Group, Kind: crdGR.Resource}, obj.Name, fieldErrorList{fieldInvalid("metadata.resourceVersion", int64(0), "must be specified for an update")})
	}
	if obj.ResourceVersion != live.ResourceVersion {
		return nil, apierrors.NewConflict(crdGR, obj.Name, fmt.Errorf(optimisticLockErrorMsg))
	}
	cctx := ctxWithNamespace(ctx, "")
	if status {
		err = crds.BeforeStatusUpdate(cctx, obj, live)
	} else {
		var warns []string
		warns, err = crds.BeforeUpdate(cctx, obj, live)
		for _, w := range warns {
			warning.AddWarning(ctx, "", w)
		}
	}
	if err != nil {
		return nil, err
	}
	if dryRun {
		return obj, nil
	}
	return r.s.writeOrDeleteCRD(ctx, obj, live)
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
	crd, warns, err := crds.Decode(body, r.req.Header.Get("Content-Type"), opts.FieldValidation)
	if err != nil {
		return reply{}, err
	}
	for _, w := range warns {
		r.rec.AddWarning("", w)
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

func (r *crdRequest) patch() (reply, error) {
	ctx := r.req.Context()
	ct, _, _ := mimeType(r.req.Header.Get("Content-Type"))
	pt := types.PatchType(ct)
	if pt != types.JSONPatchType && pt != types.MergePatchType && pt != types.StrategicMergePatchType && pt != types.ApplyYAMLPatchType {
		return reply{}, negotiation.NewUnsupportedMediaTypeError([]string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType)})
	}
	body, err := readBody(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	opts := &metav1.PatchOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return reply{}, apierrors.NewBadRequest(err.Error())
	}
	if errs := metav1validation.ValidatePatchOptions(opts, pt); len(errs) > 0 {
		return reply{}, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	if body, err = validatePatchBytes(body, pt); err != nil {
		return reply{}, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if pt == types.ApplyYAMLPatchType {
		return r.apply(ctx, body, opts)
	}
	out, err := r.updateWith(ctx, r.info.Subresource == "status", len(opts.DryRun) > 0, managerOrUserAgent(opts.FieldManager, r.req.UserAgent()), func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
		if pt == types.StrategicMergePatchType {
			// CRDs are a built-in type of the server, so unlike custom resources they take strategic merge
			// patches, with the patch meta of their Go type.
			crd, warns, err := crds.StrategicMergePatch(live, body, opts.FieldValidation)
			if err != nil {
				return nil, err
			}
			for _, w := range warns {
				r.rec.AddWarning("", w)
			}
			return crd, nil
		}
		cur, err := json.Marshal(live)
		if err != nil {
			return nil, err
		}
		directive := fieldValidation(opts.FieldValidation)
		patched, strictErrs, err := applyJSPatch(cur, body, pt, directive)
		if err != nil {
			return nil, err
		}
		crd, warns, err := crds.DecodePatched(patched, strictErrs, directive)
		if err != nil {
			return nil, err
		}
		for _, w := range warns {
			r.rec.AddWarning("", w)
		}
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

// apply is server-side apply of a CRD (the caller holds the server's lock): an update of the stored CRD, or
// the creation of a missing one, as the PATCH handler's applyPatcher with the CRD registry's forceAllowCreate;
// /status never creates.
func (r *crdRequest) apply(ctx context.Context, body []byte, opts *metav1.PatchOptions) (reply, error) {
	status := r.info.Subresource == "status"
	fm := crdFieldManagers().main
	if status {
		fm = crdFieldManagers().status
	}
	if crdFieldManagers().err != nil {
		return reply{}, apierrors.NewInternalError(crdFieldManagers().err)
	}
	force := opts.Force != nil && *opts.Force
	dryRun := len(opts.DryRun) > 0
	applyTo := func(live *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
		crd, warns, err := crds.Apply(fm, live, body, opts.FieldManager, force, opts.FieldValidation)
		if err != nil {
			return nil, err
		}
		for _, w := range warns {
			r.rec.AddWarning("", w)
		}
		return crd, nil
	}
	if _, err := r.s.getCRD(ctx, r.info.Name); errors.Is(err, storage.ErrNotFound) && !status {
		crd, err := applyTo(&apiextensionsv1.CustomResourceDefinition{})
		if err != nil {
			return reply{}, err
		}
		if crd.UID != "" {
			return reply{}, apierrors.NewConflict(crdGR, r.info.Name, fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", crd.UID))
		}
		if crd.Name != r.info.Name {
			return reply{}, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", crd.Name, r.info.Name))
		}
		crd.CreationTimestamp = metav1.Time{}
		crd.DeletionTimestamp, crd.DeletionGracePeriodSeconds, crd.SelfLink, crd.Namespace = nil, nil, "", ""
		out, err := r.s.createCRD(ctx, crd, dryRun)
		if err != nil {
			return reply{}, err
		}
		if !dryRun {
			r.s.runControllers(ctx)
		}
		return reply{code: http.StatusCreated, obj: out}, nil
	}
	out, err := r.updateWith(ctx, status, dryRun, "", applyTo)
	if err != nil {
		return reply{}, err
	}
	if !dryRun {
		r.s.runControllers(ctx)
	}
	return reply{code: http.StatusOK, obj: out}, nil
}

func (r *crdRequest) delete() (reply, error) {
	ctx := r.req.Context()
	opts, err := deleteOptions(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	live, err := r.s.getCRD(ctx, r.info.Name)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return reply{}, apierrors.NewNotFound(crdGR, r.info.Name)
		}
		return reply{}, storageUnavailable(err)
	}
	if p := opts.Preconditions; p != nil && p.UID != nil && *p.UID != live.UID {
		return reply{}, apierrors.NewConflict(crdGR, live.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, live.UID))
	}
	next := live.DeepCopy()
	if !crds.PrepareForDelete(next, metav1.NewTime(r.s.now())) {
		// Already being deleted: the generic store only returns the object, applying DeleteOptions' garbage
		// collection finalizers.
		next.Finalizers = gcFinalizers(next.Finalizers, opts)
	}
	if len(opts.DryRun) > 0 {
		return reply{code: http.StatusOK, obj: next}, nil
	}
	out, err := r.s.writeCRD(ctx, next, live)
	if err != nil {
		return reply{}, err
	}
	r.s.runControllers(ctx)
	return reply{code: http.StatusOK, obj: out}, nil
}

// deleteCollection is the generic registry's DeleteCollection, which for CRDs does not go through the CRD
// registry's Delete (the generic store calls its own): a selected CRD without finalizers is removed at once,
// without the customresourcecleanup finalizer, so its objects are not deleted and reappear if a CRD of that name
// comes back. The answer is the list as it was before the deletions.
func (r *crdRequest) deleteCollection() (reply, error) {
	ctx := r.req.Context()
	opts, err := deleteOptions(r.req, r.s.cfg.MaxRequestBytes)
	if err != nil {
		return reply{}, err
	}
	lopts, err := r.listOptions()
	if err != nil {
		return reply{}, err
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	page, err := r.s.listState(ctx, lopts, crdListSource(lopts))
	if err != nil {
		return reply{}, err
	}
	dryRun := len(opts.DryRun) > 0
	for _, o := range page.items {
		if err := r.s.deleteCRDGeneric(ctx, o.(*apiextensionsv1.CustomResourceDefinition), opts, dryRun); err != nil && !apierrors.IsNotFound(err) {
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
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != crd.UID {
			return apierrors.NewConflict(crdGR, crd.Name, fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, crd.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != crd.ResourceVersion {
			return apierrors.NewConflict(crdGR, crd.Name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, crd.ResourceVersion))
		}
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
			return storageUnavailable(err)
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
