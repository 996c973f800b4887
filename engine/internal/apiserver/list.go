package apiserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apistorage "k8s.io/apiserver/pkg/storage"

	"crdplay/engine/storage"
)

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
//   - continue: the next page of the state the first page was read at.
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

	res, err := s.cfg.Storage.List(ctx, src.prefix, storage.ListOptions{StartKey: start, Revision: rev})
	if err != nil {
		return listPage{}, listError(err, paging, start, src.prefix)
	}
	page := listPage{rev: res.Revision}
	var keys []string
	var corrupt []error
	for _, o := range res.Items {
		obj, err := src.decode(o)
		if err != nil {
			corrupt = append(corrupt, apistorage.NewCorruptObjError(o.Key, fmt.Errorf("object not decodable revision=%d: %w", res.Revision, err)))
			continue
		}
		ok, err := src.matches(obj)
		if err != nil {
			return listPage{}, apierrors.NewInternalError(err)
		}
		if ok {
			page.items = append(page.items, obj)
			keys = append(keys, o.Key)
		}
	}
	if len(corrupt) > 0 {
		return listPage{}, src.corrupt(corrupt)
	}
	if limit > 0 && int64(len(page.items)) > limit {
		n := int64(len(page.items)) - limit
		page.items = page.items[:limit]
		if page.cont, err = apistorage.EncodeContinue(keys[limit-1]+"\x00", src.prefix, res.Revision); err != nil {
			return listPage{}, apierrors.NewInternalError(err)
		}
		everything := (opts.LabelSelector == nil || opts.LabelSelector.Empty()) && (opts.FieldSelector == nil || opts.FieldSelector.Empty())
		if everything {
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
