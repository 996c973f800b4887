package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	apistorage "k8s.io/apiserver/pkg/storage"

	"crdplay/engine/storage"
)

// The watch behaviour below is that of kube-apiserver's watch cache (k8s.io/apiserver/pkg/storage/cacher), which
// serves every watch of a CRD or custom resource there, with the WatchList feature on as in v1.37:
//
//   - resourceVersion "" or "0" (which the handler turns into sendInitialEvents=true), or sendInitialEvents=true:
//     the current objects as ADDED events, then, when the client allows bookmarks, a BOOKMARK annotated
//     k8s.io/initial-events-end at the revision of that state, then the changes after it. With
//     sendInitialEvents and a resourceVersion the state must be at least that recent: the cache waits up to
//     3 seconds for it and otherwise ends the stream with a 504 "Too large resource version" ERROR event.
//   - resourceVersion N: the changes after N. A revision older than the store remembers ends the stream with a
//     410 Expired ERROR event ("too old resource version"), which tells clients to list again.
//   - A watch the store stops (one that fell too far behind) ends the stream without an ERROR event.
//   - An update that makes an object match the selectors is ADDED, one that makes it stop matching is DELETED
//     (with the previous content at the new revision).
//   - With allowWatchBookmarks, a BOOKMARK carrying the current revision about every minute and 2 seconds before
//     the timeout, when the revision has moved past the last event sent.
//
// The engine has no cache in front of its store: "the current state" is a list of the store, and what the
// cache's history window would hold is what the store remembers.

const (
	// watchFreshnessTimeout is how long the watch cache waits to reach a requested resourceVersion.
	watchFreshnessTimeout = 3 * time.Second
	// bookmarkFrequency is how often the watch cache sends bookmarks to a watcher that allows them.
	bookmarkFrequency = time.Minute
	// minRequestTimeout is kube-apiserver's --min-request-timeout default: a watch without timeoutSeconds lasts
	// between one and two times it.
	minRequestTimeout = 1800 * time.Second
)

// watchEvent is one line of a watch stream.
type watchEvent struct {
	Type   string      `json:"type"`
	Object interface{} `json:"object"`
}

// watchSource is what serveWatch needs of a resource: where its objects live and how to read them.
type watchSource struct {
	// prefix is the storage key prefix of the collection watched.
	prefix string
	// list returns the objects the watch selects, in key order, and the store revision of that state.
	list func(ctx context.Context) ([]runtime.Object, int64, error)
	// decode reads a stored document, stamped with the given revision as its resourceVersion.
	decode func(o storage.Object) (runtime.Object, error)
	// matches applies the watch's selectors.
	matches func(obj runtime.Object) bool
	// bookmark is an empty object of the kind carrying a resourceVersion, and the initial-events-end
	// annotation when initialEnd is set.
	bookmark func(rev int64, initialEnd bool) runtime.Object
}

// watchParams reads what serveWatch needs of the list options: the starting point and the deadline.
type watchParams struct {
	rv          uint64 // parsed resourceVersion; 0 for "" and "0"
	rvSet       bool   // resourceVersion was given and is not "0"
	sendInitial bool
	legacy      bool // no sendInitialEvents and no resourceVersion: initial state without a bookmark
	bookmarks   bool
	timeout     time.Duration
}

func newWatchParams(opts *metainternalversion.ListOptions) (watchParams, error) {
	p := watchParams{bookmarks: opts.AllowWatchBookmarks}
	if opts.ResourceVersion != "" {
		rv, err := apistorage.APIObjectVersioner{}.ParseResourceVersion(opts.ResourceVersion)
		if err != nil {
			return p, err // a 500, as the cache's versioner error reaches the client unchanged
		}
		p.rv, p.rvSet = rv, rv != 0
	}
	switch {
	case opts.SendInitialEvents != nil:
		p.sendInitial = *opts.SendInitialEvents
	case !p.rvSet:
		p.legacy = true
	}
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		p.timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	} else {
		p.timeout = time.Duration(float64(minRequestTimeout) * (rand.Float64() + 1))
	}
	return p, nil
}

// serveWatch answers a watch request on src.
func (s *Server) serveWatch(w http.ResponseWriter, req *http.Request, rec *warnings, opts *metainternalversion.ListOptions, src watchSource) {
	p, err := newWatchParams(opts)
	if err != nil {
		s.fail(w, req, rec, err)
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), p.timeout)
	defer cancel()

	var initial []runtime.Object
	var from int64
	var errEvent error // ends the stream at once, as the cache's error watcher does
	switch {
	case p.sendInitial || p.legacy:
		if p.sendInitial && p.rvSet {
			if err := s.waitForRevision(ctx, src.prefix, int64(p.rv)); err != nil {
				if !apierrors.IsTimeout(err) {
					s.fail(w, req, rec, storageUnavailable(err))
					return
				}
				errEvent = err
				break
			}
		}
		if initial, from, err = src.list(ctx); err != nil {
			s.fail(w, req, rec, err)
			return
		}
	case !p.rvSet:
		// sendInitialEvents=false from "any" or the latest revision: only what happens from now on.
		if from, err = s.currentRevision(ctx, src.prefix); err != nil {
			s.fail(w, req, rec, storageUnavailable(err))
			return
		}
	default:
		from = int64(p.rv)
	}

	var ch <-chan storage.Event
	if errEvent == nil {
		ch, err = s.cfg.Storage.Watch(ctx, src.prefix, from)
		var ce *storage.CompactedError
		switch {
		case errors.As(err, &ce):
			errEvent = apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", ce.Revision, ce.Compacted))
		case errors.Is(err, storage.ErrCompacted):
			errEvent = apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d", from))
		case err != nil:
			s.fail(w, req, rec, storageUnavailable(err))
			return
		}
	}

	ws := startWatchStream(w, rec)
	if errEvent != nil {
		ws.send("ERROR", errorToStatus(errEvent))
		return
	}
	for _, o := range initial {
		if !ws.send("ADDED", o) {
			return
		}
	}
	if p.sendInitial && p.bookmarks && !ws.send("BOOKMARK", src.bookmark(from, true)) {
		return
	}

	last := from // the revision the client has seen everything up to
	var bookmarkC <-chan time.Time
	nextBookmark := func() {
		if !p.bookmarks {
			return
		}
		next := bookmarkFrequency
		deadline, _ := ctx.Deadline()
		if pre := time.Until(deadline) - 2*time.Second; pre < next {
			next = pre
		}
		if next <= 0 {
			bookmarkC = nil
			return
		}
		bookmarkC = time.After(next)
	}
	nextBookmark()
	for {
		select {
		case <-ctx.Done():
			return
		case <-bookmarkC:
			if rev, err := s.currentRevision(ctx, src.prefix); err == nil && rev > last {
				if !ws.send("BOOKMARK", src.bookmark(rev, false)) {
					return
				}
				last = rev
			}
			nextBookmark()
		case ev, ok := <-ch:
			if !ok {
				// The store stopped the watch (it fell behind): the stream ends without an ERROR event, as the
				// watch handler ends it when the watch cache terminates a watcher that cannot keep up. The
				// client watches again from the last resourceVersion it got, which answers 410 only if the
				// store has forgotten it.
				return
			}
			last = ev.Object.Revision
			if typ, obj := watchTransition(ev, src); obj != nil && !ws.send(typ, obj) {
				return
			}
		}
	}
}

// watchTransition turns a storage event into the event a watcher with src's selectors sees, as the watch cache
// does: by whether the object matches before and after the change. It returns a nil object for none.
func watchTransition(ev storage.Event, src watchSource) (string, runtime.Object) {
	var cur, prev runtime.Object
	if ev.Type == storage.EventPut {
		if o, err := src.decode(ev.Object); err == nil && src.matches(o) {
			cur = o
		}
	}
	if len(ev.Prev) > 0 {
		// The previous content is sent for a deletion, at the revision of the deletion.
		if o, err := src.decode(storage.Object{Key: ev.Object.Key, Value: ev.Prev, Revision: ev.Object.Revision}); err == nil && src.matches(o) {
			prev = o
		}
	}
	switch {
	case cur != nil && prev == nil:
		return "ADDED", cur
	case cur != nil:
		return "MODIFIED", cur
	case prev != nil:
		return "DELETED", prev
	}
	return "", nil
}

// waitForRevision waits, as the watch cache waits to become fresh enough, until the store has reached rev. It
// fails with the cache's 504 "Too large resource version" when it does not within watchFreshnessTimeout.
func (s *Server) waitForRevision(ctx context.Context, prefix string, rev int64) error {
	deadline := time.Now().Add(watchFreshnessTimeout)
	for {
		cur, err := s.currentRevision(ctx, prefix)
		if err != nil {
			return err
		}
		if cur >= rev {
			return nil
		}
		if time.Now().After(deadline) {
			return apistorage.NewTooLargeResourceVersionError(uint64(rev), uint64(cur), 1)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// currentRevision is the store's revision now.
func (s *Server) currentRevision(ctx context.Context, prefix string) (int64, error) {
	res, err := s.cfg.Storage.List(ctx, prefix, storage.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	return res.Revision, nil
}

// watchStream writes the events of a watch response, one JSON WatchEvent per line, flushed one by one.
type watchStream struct {
	w       http.ResponseWriter
	enc     *json.Encoder
	flusher http.Flusher
}

func startWatchStream(w http.ResponseWriter, rec *warnings) *watchStream {
	for _, h := range rec.headers() {
		w.Header().Add("Warning", h)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	ws := &watchStream{w: w, enc: json.NewEncoder(w)}
	ws.flusher, _ = w.(http.Flusher)
	if ws.flusher != nil {
		ws.flusher.Flush()
	}
	return ws
}

// send writes one event; false means the client is gone.
func (ws *watchStream) send(typ string, obj runtime.Object) bool {
	var v interface{} = obj
	if u, ok := obj.(*unstructured.Unstructured); ok {
		v = u.Object
	}
	if err := ws.enc.Encode(watchEvent{Type: typ, Object: v}); err != nil {
		return false
	}
	if ws.flusher != nil {
		ws.flusher.Flush()
	}
	return true
}

// watchSourceOf is the watch of what a list source selects; bookmark makes the resource's bookmark objects.
func (s *Server) watchSourceOf(opts *metainternalversion.ListOptions, src listSource, bookmark func(rev int64, initialEnd bool) runtime.Object) watchSource {
	return watchSource{
		prefix: src.prefix,
		list: func(ctx context.Context) ([]runtime.Object, int64, error) {
			// Every object selected, now, whatever the paging options.
			all := &metainternalversion.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector}
			page, err := s.listState(ctx, all, src)
			return page.items, page.rev, err
		},
		decode: src.decode,
		matches: func(obj runtime.Object) bool {
			ok, _ := src.matches(obj)
			return ok
		},
		bookmark: bookmark,
	}
}

// watchSource is the watch source of a custom resource request: the collection of the request's namespace (or
// all of them), the objects in the request version.
func (r *crRequest) watchSource(opts *metainternalversion.ListOptions) watchSource {
	return r.s.watchSourceOf(opts, r.listSource(opts), func(rev int64, initialEnd bool) runtime.Object {
		u := &unstructured.Unstructured{Object: map[string]interface{}{}}
		u.SetGroupVersionKind(r.vi.kind)
		u.SetResourceVersion(fmt.Sprint(rev))
		if initialEnd {
			u.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		}
		return u
	})
}

// watch streams changes of the collection (or of the object the URL names) as JSON WatchEvents.
func (r *crRequest) watch() {
	opts, err := r.listOptions()
	if err != nil {
		r.fail(err)
		return
	}
	r.s.serveWatch(r.w, r.req, r.rec, opts, r.watchSource(opts))
}

// watchSource is the watch source of CRDs: bookmarks are empty CRDs, as the registry's typed objects are.
func (r *crdRequest) watchSource(opts *metainternalversion.ListOptions) watchSource {
	return r.s.watchSourceOf(opts, crdListSource(opts), func(rev int64, initialEnd bool) runtime.Object {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		crd.APIVersion, crd.Kind = crdGVK.GroupVersion().String(), crdGVK.Kind
		crd.ResourceVersion = strconv.FormatInt(rev, 10)
		if initialEnd {
			crd.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
		}
		return crd
	})
}
