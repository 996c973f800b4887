package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

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
	apistorage "k8s.io/apiserver/pkg/storage"

	"crdplay/engine/storage"
)

// listOptions parses and checks a list or watch query as the list handler does: with the WatchList feature on,
// as in v1.37, a watch from resourceVersion "" or "0" becomes a watch that sends the initial events; field
// selectors go through the resource's field label conversion; the object a URL names (name) becomes a
// metadata.name selector.
func listOptions(req *http.Request, name string, convert fields.TransformFunc) (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	metainternalversion.SetListOptionsDefaults(opts, true)
	if errs := listvalidation.ValidateListOptions(opts, true); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if opts.FieldSelector != nil {
		fs, err := opts.FieldSelector.Transform(convert)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		opts.FieldSelector = fs
	}
	if err := selectName(opts, name); err != nil {
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

// selection is the selection the list options make of objects whose attributes attrs gives.
func selection(opts *metainternalversion.ListOptions, attrs apistorage.AttrFunc) apistorage.SelectionPredicate {
	pred := apistorage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), GetAttrs: attrs}
	if opts.LabelSelector != nil {
		pred.Label = opts.LabelSelector
	}
	if opts.FieldSelector != nil {
		pred.Field = opts.FieldSelector
	}
	return pred
}

// listSource is what a list needs of a resource.
type listSource struct {
	// prefix is the storage key prefix of the collection.
	prefix string
	// decode reads a stored document in the version served. Objects that fail are collected for corrupt.
	decode func(o storage.Object) (runtime.Object, error)
	// matches applies the selectors.
	matches func(obj runtime.Object) (bool, error)
	// corrupt is the error for objects that could not be decoded (each a *apistorage.StorageError), read at
	// revision rev.
	corrupt func(errs []error) error
}

// listPage is one page of a list.
type listPage struct {
	items     []runtime.Object
	rev       int64
	cont      string
	remaining *int64
}

// listState reads a page of src as kube-apiserver's storage does for the list options, with their
// resourceVersion semantics (the watch cache's where it serves the list, etcd's where it does not):
//
//   - no resourceVersion: the latest state, paginated by limit and continue;
//   - resourceVersion "0": any state, here the latest, and the watch cache ignores limit;
//   - resourceVersion N with resourceVersionMatch NotOlderThan, or without a match and without limit: a state
//     at least as recent as N, waiting up to 3 seconds for it (then 504 "Too large resource version");
//   - resourceVersion N with resourceVersionMatch Exact, or without a match but with a limit: the state at N
//     (410 Expired when the store no longer remembers it);
//   - continue: the next page of the state the first page was read at (with resourceVersion "0", the rest of
//     it, as the watch cache ignores the limit then too).
func (s *Server) listState(ctx context.Context, opts *metainternalversion.ListOptions, src listSource) (listPage, error) {
	var rev int64 // 0: the latest state
	start := ""
	limit := opts.Limit
	paging := opts.Continue != ""
	if paging {
		key, continueRV, err := apistorage.DecodeContinue(opts.Continue, src.prefix)
		if err != nil {
			return listPage{}, apierrors.NewBadRequest(fmt.Sprintf("invalid continue token: %v", err))
		}
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return listPage{}, apierrors.NewBadRequest("specifying resource version is not allowed when using continue")
		}
		if continueRV > 0 {
			rev = continueRV
		}
		if opts.ResourceVersion == "0" {
			// The watch cache serves it and ignores the limit: the rest of the list in one page.
			limit = 0
		}
		// The store lists the keys after StartKey; the token holds the first key to include.
		start = strings.TrimSuffix(key, "\x00")
	} else if opts.ResourceVersion != "" {
		parsed, err := apistorage.APIObjectVersioner{}.ParseResourceVersion(opts.ResourceVersion)
		if err != nil {
			return listPage{}, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %v", err))
		}
		n := int64(parsed)
		exact := opts.ResourceVersionMatch == metav1.ResourceVersionMatchExact ||
			(opts.ResourceVersionMatch == "" && opts.Limit > 0 && n > 0)
		switch {
		case n == 0:
			limit = 0
		case exact:
			rev = n
			fallthrough
		default:
			if err := s.waitForRevision(ctx, src.prefix, n); err != nil {
				if apierrors.IsTimeout(err) {
					return listPage{}, err
				}
				return listPage{}, storageUnavailable(err)
			}
		}
	}

	return s.readPages(ctx, opts, src, limit, start, rev, paging)
}

// maxListChunk caps how many keys one storage read of a selective list asks for, etcd3's maxLimit.
const maxListChunk = 10000

// readPages reads from the store what a list of at most limit items (0: all) returns, starting after the key
// start, at revision rev (0: the latest, then pinned to the first read's), as etcd3's store does: a read of
// limit keys, and when the selectors drop some of them, further reads of twice as many keys from the last one
// read, until limit items match or the collection ends. Only the keys read are decoded, so a page costs its
// own items and not the collection's. The continue token starts after the last item returned and carries the
// first read's revision; remainingItemCount is the store's count of the keys after the page, only when every
// object matches (with selectors it would count objects that do not).
func (s *Server) readPages(ctx context.Context, opts *metainternalversion.ListOptions, src listSource, limit int64, start string, rev int64, paging bool) (listPage, error) {
	var page listPage
	var corrupt []error
	var lastKey string
	var count, decoded int64
	hasMore := false
	chunk := limit
	for {
		res, err := s.cfg.Storage.List(ctx, src.prefix, storage.ListOptions{Limit: chunk, StartKey: start, Revision: rev})
		if err != nil {
			return listPage{}, listError(err, paging, start, src.prefix)
		}
		if rev == 0 {
			rev = res.Revision
		}
		count = res.Count
		limitReached := false
		for _, o := range res.Items {
			if limit > 0 && int64(len(page.items)) >= limit {
				limitReached = true
				break
			}
			// Decoding is most of a long list's work (conversion, pruning, defaulting of each object): a request
			// past its deadline, already answered, stops it.
			if decoded++; decoded%listContextCheck == 0 {
				if err := ctx.Err(); err != nil {
					return listPage{}, requestGone()
				}
			}
			lastKey = o.Key
			obj, err := src.decode(o)
			if err != nil {
				corrupt = append(corrupt, apistorage.NewCorruptObjError(o.Key, fmt.Errorf("object not decodable revision=%d: %w", rev, err)))
				continue
			}
			ok, err := src.matches(obj)
			if err != nil {
				return listPage{}, apierrors.NewInternalError(err)
			}
			if ok {
				page.items = append(page.items, obj)
			}
		}
		hasMore = res.More || limitReached
		if limitReached || !res.More || len(res.Items) == 0 || (limit > 0 && int64(len(page.items)) >= limit) {
			break
		}
		start = res.Items[len(res.Items)-1].Key
		if chunk > 0 && chunk < maxListChunk {
			// Selectors dropped objects: read more at once.
			chunk = min(2*chunk, maxListChunk)
		}
	}
	page.rev = rev
	if len(corrupt) > 0 {
		return listPage{}, src.corrupt(corrupt)
	}
	if hasMore {
		// The token's start key is relative to the collection's key without its final slash, as the watch
		// cache, which serves kube-apiserver's paginated lists, makes it ("/name" or "/namespace/name").
		cont, err := apistorage.EncodeContinue(lastKey+"\x00", strings.TrimSuffix(src.prefix, "/"), rev)
		if err != nil {
			return listPage{}, apierrors.NewInternalError(err)
		}
		page.cont = cont
		everything := (opts.LabelSelector == nil || opts.LabelSelector.Empty()) && (opts.FieldSelector == nil || opts.FieldSelector.Empty())
		if everything {
			n := count - limit
			page.remaining = &n
		}
	}
	return page, nil
}

// listError translates a storage error of a list as etcd3's store does.
func listError(err error, paging bool, continueKey, prefix string) error {
	switch {
	case errors.Is(err, storage.ErrCompacted) && paging:
		// The next page can still be read at the latest revision (-1), inconsistently with the first pages.
		e := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
			"You can start a new list without the continue parameter, or use the continue token in this response to retrieve " +
			"the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that " +
			"were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
		if token, terr := apistorage.EncodeContinue(continueKey+"\x00", prefix, -1); terr == nil {
			e.ErrStatus.ListMeta.Continue = token
		}
		return e
	case errors.Is(err, storage.ErrCompacted):
		return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
	}
	return storageUnavailable(err)
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

// listOptions reads the list or watch query of a custom resource request, whose field labels the CRD's
// selectable fields and version convert.
func (r *crRequest) listOptions() (*metainternalversion.ListOptions, error) {
	return listOptions(r.req, r.info.Name, func(label, value string) (string, string, error) {
		return r.ci.safeConverter.ConvertFieldLabel(r.vi.kind, label, value)
	})
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
	return reply{code: http.StatusOK, obj: r.listOf(page)}, nil
}

// listSource reads the collection of the request's namespace (all namespaces for a cluster-wide list) in the
// request version, selected by opts.
func (r *crRequest) listSource(opts *metainternalversion.ListOptions) listSource {
	pred := selection(opts, r.vi.strategy.Attrs)
	return listSource{
		prefix:  r.collectionPrefix(r.info.Namespace),
		decode:  func(o storage.Object) (runtime.Object, error) { return r.decodeStored(o) },
		matches: pred.Matches,
		corrupt: func(errs []error) error { return listCorrupt(r.gr(), errs) },
	}
}

// listOf is a page of custom resources as a list of the request's kind.
func (r *crRequest) listOf(page listPage) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]interface{}{}}
	list.SetGroupVersionKind(r.vi.listKind)
	list.SetResourceVersion(strconv.FormatInt(page.rev, 10))
	list.SetContinue(page.cont)
	list.SetRemainingItemCount(page.remaining)
	for _, o := range page.items {
		list.Items = append(list.Items, *o.(*unstructured.Unstructured))
	}
	return list
}

// listOptions reads the list or watch query of CRDs, which select on labels and on metadata.name (and
// metadata.namespace, which a cluster-scoped object does not have).
func (r *crdRequest) listOptions() (*metainternalversion.ListOptions, error) {
	return listOptions(r.req, r.info.Name, runtime.DefaultMetaV1FieldSelectorConversion)
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
	pred := selection(opts, crdAttrs)
	return listSource{
		prefix:  crdPrefix,
		decode:  func(o storage.Object) (runtime.Object, error) { return decodeCRD(o) },
		matches: pred.Matches,
		corrupt: func(errs []error) error { return listCorrupt(crdGR, errs) },
	}
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
