package apiserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	listvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	apistorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/warning"

	"crdplay/engine/internal/crstrategy"
	"crdplay/engine/storage"
)

// crRequest is one request for a custom resource, with everything resolved.
type crRequest struct {
	s    *Server
	w    http.ResponseWriter
	req  *http.Request
	rec  *warnings
	info *request.RequestInfo
	ci   *crdInfo
	vi   *versionInfo
	mt   negotiation.MediaTypeOptions

	terminating bool
}

func (s *Server) serveCustomResource(w http.ResponseWriter, req *http.Request, rec *warnings, info *request.RequestInfo) {
	ctx := req.Context()
	crd, err := s.getCRDShared(ctx, info.Resource+"."+info.APIGroup)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			s.notFound(w, req, rec)
			return
		}
		s.fail(w, req, rec, storageUnavailable(err))
		return
	}
	namespacedCRD, namespacedReq := crd.Spec.Scope == apiextensionsv1.NamespaceScoped, info.Namespace != ""
	if !namespacedCRD && namespacedReq {
		s.notFound(w, req, rec)
		return
	}
	if namespacedCRD && !namespacedReq && info.Verb != "list" && info.Verb != "watch" {
		s.notFound(w, req, rec)
		return
	}
	if !apihelpers.HasServedCRDVersion(crd, info.APIVersion) {
		s.notFound(w, req, rec)
		return
	}
	if !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) && !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		s.notFound(w, req, rec)
		return
	}
	ci, err := s.servingInfo(crd)
	if err != nil {
		s.fail(w, req, rec, apierrors.NewInternalError(fmt.Errorf("error resolving resource")))
		return
	}
	vi := ci.versions[info.APIVersion]
	if vi == nil {
		s.notFound(w, req, rec)
		return
	}
	for _, msg := range vi.warnings {
		warning.AddWarning(ctx, "", msg)
	}
	r := &crRequest{s: s, w: w, req: req, rec: rec, info: info, ci: ci, vi: vi,
		terminating: !crd.DeletionTimestamp.IsZero() || apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Terminating)}
	mt, _, err := negotiation.NegotiateOutputMediaType(req, outputSerializers{}, restrictions{table: true})
	if err != nil {
		r.fail(err)
		return
	}
	r.mt = mt

	var result reply
	switch {
	case info.Subresource == "status" && vi.status != nil:
		result, err = r.serveStatus()
	case info.Subresource == "scale" && vi.subresources != nil && vi.subresources.Scale != nil:
		result, err = r.serveScale()
	case info.Subresource == "":
		result, err = r.serveMain()
	default:
		err = apierrors.NewNotFound(r.gr(), info.Name)
	}
	if err == errHandled {
		return
	}
	if err != nil {
		r.fail(err)
		return
	}
	r.respond(result)
}

func (r *crRequest) fail(err error) { r.s.fail(r.w, r.req, r.rec, err) }

func (r *crRequest) respond(res reply) {
	if res.obj != nil && res.raw == nil {
		var table rest.TableConvertor = r.vi.table
		if r.info.Subresource == "scale" {
			table = r.vi.scaleTable
		}
		if table == nil {
			table = rest.NewDefaultTableConvertor(r.gr())
		}
		obj, err := transform(r.req.Context(), r.req, r.mt, res.obj, table, r.vi.kind.GroupVersion(), r.ci.safeConverter)
		if err != nil {
			r.fail(err)
			return
		}
		res.obj = obj
	}
	r.s.write(r.w, r.req, r.rec, res, r.mt)
}

// gr is the qualified resource named in errors.
func (r *crRequest) gr() schema.GroupResource {
	return schema.GroupResource{Group: r.ci.crd.Spec.Group, Resource: r.ci.crd.Status.AcceptedNames.Plural}
}

func (r *crRequest) serveMain() (reply, error) {
	switch r.info.Verb {
	case "get":
		return r.get()
	case "list":
		return r.list()
	case "create":
		return r.create()
	case "update":
		return r.update(r.vi.strategy, r.vi.fieldManager)
	case "patch":
		return r.patch(r.vi.strategy, r.vi.fieldManager)
	case "delete":
		return r.delete()
	case "deletecollection":
		return r.deleteCollection()
	case "watch":
		r.watch()
		return reply{}, errHandled
	}
	return reply{}, apierrors.NewMethodNotSupported(r.gr(), r.info.Verb)
}

func (r *crRequest) serveStatus() (reply, error) {
	switch r.info.Verb {
	case "get":
		return r.get()
	case "update":
		return r.update(r.vi.status, r.vi.statusFM)
	case "patch":
		return r.patch(r.vi.status, r.vi.statusFM)
	}
	return reply{}, apierrors.NewMethodNotSupported(r.gr(), r.info.Verb)
}

// errHandled means the response was already written (watch streams).
var errHandled = errors.New("handled")

// ---------------------------------------------------------------- storage access

func (r *crRequest) key(ns, name string) string {
	k := keyPrefix + "/" + r.ci.crd.Spec.Group + "/" + r.ci.crd.Status.AcceptedNames.Plural
	if ns != "" {
		k += "/" + ns
	}
	return k + "/" + name
}

// collectionPrefix is the key prefix of a list: one namespace, or all of them.
func (r *crRequest) collectionPrefix(ns string) string {
	k := keyPrefix + "/" + r.ci.crd.Spec.Group + "/" + r.ci.crd.Status.AcceptedNames.Plural + "/"
	if ns != "" {
		k += ns + "/"
	}
	return k
}

// decodeStored turns stored bytes into the request version.
func (r *crRequest) decodeStored(o storage.Object) (*unstructured.Unstructured, error) {
	into := &unstructured.Unstructured{}
	into.SetGroupVersionKind(r.vi.kind)
	out, _, err := r.vi.requestCodec.Decode(o.Value, nil, into)
	if err != nil {
		return nil, err
	}
	u, ok := out.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", out)
	}
	u.SetResourceVersion(strconv.FormatInt(o.Revision, 10))
	return u, nil
}

// corrupt is the error for a stored object that cannot be turned into the request version (e.g. a failing
// conversion webhook), with the key relative to the storage prefix as etcd3's store reports it on reads.
func corrupt(key string, rev int64, err error) error {
	return apistorage.NewCorruptObjError(key, fmt.Errorf("object not decodable revision=%d: %w", rev, err))
}

// get reads one object, translating storage errors as the generic registry does.
func (r *crRequest) getObject(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	key := r.key(ns, name)
	o, err := r.s.cfg.Storage.Get(ctx, key)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, apierrors.NewNotFound(r.gr(), name)
		}
		return nil, storageUnavailable(err)
	}
	u, err := r.decodeStored(o)
	if err != nil {
		return nil, apierrors.NewInternalError(corrupt(key[len(keyPrefix):], o.Revision, err))
	}
	return u, nil
}

// encodeForStorage converts obj to the storage version and serialises it without a resourceVersion.
func (r *crRequest) encodeForStorage(obj *unstructured.Unstructured) ([]byte, error) {
	c := obj.DeepCopy()
	c.SetResourceVersion("")
	c.SetSelfLink("")
	return runtime.Encode(r.vi.requestCodec, c)
}

// storedResult is what a write returns: the stored bytes read back as a read would see them.
func (r *crRequest) storedResult(data []byte, rev int64) (*unstructured.Unstructured, error) {
	return r.decodeStored(storage.Object{Value: data, Revision: rev})
}

func storageUnavailable(err error) error {
	if errors.Is(err, storage.ErrUnavailable) {
		return apierrors.NewServiceUnavailable(err.Error())
	}
	return apierrors.NewInternalError(err)
}

// ---------------------------------------------------------------- verbs

func (r *crRequest) get() (reply, error) {
	opts := metav1.GetOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.req.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil {
		return reply{}, apierrors.NewBadRequest(err.Error())
	}
	u, err := r.getObject(r.req.Context(), r.info.Namespace, r.info.Name)
	if err != nil {
		return reply{}, err
	}
	return reply{code: http.StatusOK, obj: u}, nil
}

// listOptions parses and checks the list query, converting field labels as the CRD allows, as the list handler
// does: with the WatchList feature on, a watch from resourceVersion "" or "0" becomes a watch that sends the
// initial events; the object a watch URL names becomes a metadata.name selector.
func (r *crRequest) listOptions() (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	metainternalversion.SetListOptionsDefaults(opts, true)
	if errs := metainternalversionValidate(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if opts.FieldSelector != nil {
		fs, err := opts.FieldSelector.Transform(func(label, value string) (string, string, error) {
			return r.ci.safeConverter.ConvertFieldLabel(r.vi.kind, label, value)
		})
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

// selectName restricts a list or watch whose URL names an object to that object, as a metadata.name selector.
func selectName(opts *metainternalversion.ListOptions, name string) error {
	if name == "" {
		return nil
	}
	if opts.FieldSelector != nil && !opts.FieldSelector.Empty() {
		if selected, ok := opts.FieldSelector.RequiresExactMatch("metadata.name"); !ok || selected != name {
			return apierrors.NewBadRequest("fieldSelector metadata.name doesn't match requested name")
		}
		return nil
	}
	opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", name)
	return nil
}

// predicate is the selection the list options make.
func (r *crRequest) predicate(opts *metainternalversion.ListOptions) apistorage.SelectionPredicate {
	pred := apistorage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), GetAttrs: r.vi.strategy.Attrs}
	if opts.LabelSelector != nil {
		pred.Label = opts.LabelSelector
	}
	if opts.FieldSelector != nil {
		pred.Field = opts.FieldSelector
	}
	return pred
}

func (r *crRequest) list() (reply, error) {
	opts, err := r.listOptions()
	if err != nil {
		return reply{}, err
	}
	if opts.Watch {
		r.watch()
		return reply{}, errHandled
	}
	page, err := r.s.listState(r.req.Context(), opts, r.listSource(opts))
	if err != nil {
		return reply{}, err
	}
	list := &unstructured.UnstructuredList{Object: map[string]interface{}{}}
	list.SetGroupVersionKind(r.vi.listKind)
	list.SetResourceVersion(strconv.FormatInt(page.rev, 10))
	list.SetContinue(page.cont)
	list.SetRemainingItemCount(page.remaining)
	for _, o := range page.items {
		list.Items = append(list.Items, *o.(*unstructured.Unstructured))
	}
	return reply{code: http.StatusOK, obj: list}, nil
}

// listSource reads the collection of the request's namespace (all namespaces for a cluster-wide list) in the
// request version, selected by opts.
func (r *crRequest) listSource(opts *metainternalversion.ListOptions) listSource {
	pred := r.predicate(opts)
	return listSource{
		prefix:  r.collectionPrefix(r.info.Namespace),
		decode:  func(o storage.Object) (runtime.Object, error) { return r.decodeStored(o) },
		matches: pred.Matches,
		corrupt: func(errs []error) error { return listCorrupt(r.gr(), errs) },
	}
}

// listMatching reads every object of the collection that opts selects, now, whatever their paging options.
func (r *crRequest) listMatching(ctx context.Context, opts *metainternalversion.ListOptions) ([]*unstructured.Unstructured, int64, error) {
	all := &metainternalversion.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector}
	page, err := r.s.listState(ctx, all, r.listSource(opts))
	if err != nil {
		return nil, 0, err
	}
	out := make([]*unstructured.Unstructured, len(page.items))
	for i, o := range page.items {
		out[i] = o.(*unstructured.Unstructured)
	}
	return out, page.rev, nil
}

// listCorrupt is the error a list gets when some of its objects cannot be decoded: one cause per object (at
// most 100), the first error in the message, as etcd3's store aggregates them.
func listCorrupt(gr schema.GroupResource, errs []error) error {
	const maxCauses = 100
	var causes []metav1.StatusCause
	for i, err := range errs {
		if i == maxCauses {
			causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeTooMany, Message: "too many errors, the list is truncated"})
			break
		}
		var se *apistorage.StorageError
		if errors.As(err, &se) {
			causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: se.Key, Message: err.Error()})
		}
	}
	msg := fmt.Sprintf("failed to read one or more %s from the storage: %v", gr.String(), errs[0])
	if len(errs) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(errs)-1)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonStoreReadError,
		Message: msg,
		Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: "list", Causes: causes},
	}}
}

// metainternalversionValidate checks list options with the WatchList feature on, as in v1.37.
func metainternalversionValidate(opts *metainternalversion.ListOptions) fieldErrorList {
	return listvalidation.ValidateListOptions(opts, true)
}

// decodeBody decodes a request body for this endpoint, applying the fieldValidation directive.
func (r *crRequest) decodeBody(body []byte, directive string) (*unstructured.Unstructured, *schema.GroupVersionKind, error) {
	asYAML, err := inputFormat(r.req, []string{"application/json", "application/yaml"})
	if err != nil {
		return nil, nil, err
	}
	strict := directive == metav1.FieldValidationWarn || directive == metav1.FieldValidationStrict
	dec := r.ci.requestDecoder(asYAML, strict, r.vi.kind.GroupVersion())
	into := &unstructured.Unstructured{}
	into.SetGroupVersionKind(r.vi.kind)
	def := r.vi.kind
	obj, gvk, err := dec.Decode(body, &def, into)
	if err != nil {
		se, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case isStrict && obj != nil && directive == metav1.FieldValidationWarn:
			addStrictWarnings(r.req.Context(), se.Errors())
		default:
			return nil, gvk, decodeError(r.vi.kind.Kind, err, gvk, body)
		}
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, gvk, apierrors.NewBadRequest(fmt.Sprintf("unexpected object %T", obj))
	}
	return u, gvk, nil
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
	obj, gvk, err := r.decodeBody(body, fieldValidation(opts.FieldValidation))
	if err != nil {
		return reply{}, err
	}
	if gv := gvk.GroupVersion(); gv != r.vi.kind.GroupVersion() {
		return reply{}, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%v)", gv.String(), r.vi.kind.GroupVersion().String()))
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

	out, err := r.store(ctx, obj, len(opts.DryRun) > 0)
	if err != nil {
		return reply{}, err
	}
	return reply{code: http.StatusCreated, obj: out}, nil
}

// store runs the registry's create: system fields, name generation (retried on conflicts), the strategy, the
// write.
func (r *crRequest) store(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	generate := obj.GetGenerateName() != "" && obj.GetName() == ""
	var lastErr error
	for attempt := 0; attempt < 8; attempt++ {
		o := obj.DeepCopy()
		rest.FillObjectMetaSystemFields(o)
		o.SetCreationTimestamp(metav1.NewTime(r.s.now()))
		if generate {
			o.SetName(r.vi.strategy.GenerateName(o.GetGenerateName()))
		}
		if err := rest.BeforeCreate(r.vi.strategy, ctx, o); err != nil {
			return nil, err
		}
		data, err := r.encodeForStorage(o)
		if err != nil {
			// kube-apiserver passes encoding (conversion) errors through unwrapped: a 500 without a reason.
			return nil, err
		}
		key := r.key(r.info.Namespace, o.GetName())
		if dryRun {
			// As the dry-run storage: a name in use is a conflict as for a real create, and the object, never
			// stored, has no resourceVersion.
			if _, err := r.s.cfg.Storage.Get(ctx, key); err == nil {
				return nil, apierrors.NewAlreadyExists(r.gr(), o.GetName())
			} else if !errors.Is(err, storage.ErrNotFound) {
				return nil, storageUnavailable(err)
			}
			out, err := r.storedResult(data, 0)
			if err == nil {
				out.SetResourceVersion("")
			}
			return out, err
		}
		rev, err := r.s.cfg.Storage.Create(ctx, key, data)
		if err == nil {
			return r.storedResult(data, rev)
		}
		if errors.Is(err, storage.ErrExists) {
			lastErr = apierrors.NewAlreadyExists(r.gr(), o.GetName())
			if generate {
				continue
			}
			return nil, lastErr
		}
		return nil, storageUnavailable(err)
	}
	return nil, lastErr
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
	obj, gvk, err := r.decodeBody(body, fieldValidation(opts.FieldValidation))
	if err != nil {
		return reply{}, err
	}
	if gv := gvk.GroupVersion(); gv != r.vi.kind.GroupVersion() {
		return reply{}, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", gv, r.vi.kind.GroupVersion()))
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
	obj, err := mutate(existing.DeepCopy())
	if err != nil {
		return nil, false, err
	}
	rv := obj.GetResourceVersion()
	if rv == "" || rv == "0" {
		qk := schema.GroupKind{Group: r.gr().Group, Kind: r.gr().Resource}
		return nil, false, apierrors.NewInvalid(qk, name, fieldErrorList{fieldInvalid("metadata.resourceVersion", int64(0), "must be specified for an update")})
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
	if shouldDeleteDuringUpdate(obj, existing) {
		if dryRun {
			out, err := r.storedResult(data, o.Revision)
			return out, false, err
		}
		if _, err := r.s.cfg.Storage.Delete(ctx, key, o.Revision); err != nil {
			if errors.Is(err, storage.ErrConflict) {
				return nil, false, apierrors.NewConflict(r.gr(), name, fmt.Errorf(optimisticLockErrorMsg))
			}
			return nil, false, storageUnavailable(err)
		}
		out, err := r.storedResult(data, o.Revision)
		return out, false, err
	}
	if dryRun {
		out, err := r.storedResult(data, o.Revision)
		return out, false, err
	}
	if bytes.Equal(data, o.Value) {
		// etcd3's GuaranteedUpdate does not write an object whose encoding is what is stored: the answer is the
		// stored object with its resourceVersion, and watchers see no event.
		out, err := r.storedResult(o.Value, o.Revision)
		return out, false, err
	}
	rev, err := r.s.cfg.Storage.Update(ctx, key, data, o.Revision)
	if err != nil {
		if errors.Is(err, storage.ErrConflict) {
			return nil, false, apierrors.NewConflict(r.gr(), name, fmt.Errorf(optimisticLockErrorMsg))
		}
		if errors.Is(err, storage.ErrNotFound) {
			return nil, false, apierrors.NewNotFound(r.gr(), name)
		}
		return nil, false, storageUnavailable(err)
	}
	out, err := r.storedResult(data, rev)
	return out, false, err
}

const optimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// shouldDeleteDuringUpdate: an object marked for deletion goes away once its last finalizer is removed.
func shouldDeleteDuringUpdate(obj, existing *unstructured.Unstructured) bool {
	return len(obj.GetFinalizers()) == 0 && obj.GetDeletionTimestamp() != nil && existing.GetDeletionTimestamp() != nil &&
		obj.GetDeletionGracePeriodSeconds() != nil && *obj.GetDeletionGracePeriodSeconds() == 0
}

var _ = crstrategy.New

// errTerminatingCreate is what kube-apiserver's admission answers to creates while the CRD is being deleted.
func errTerminatingCreate(gr schema.GroupResource, name string) error {
	return apierrors.NewForbidden(gr, name, fmt.Errorf("create not allowed while custom resource definition is terminating"))
}
