package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	apistorage "k8s.io/apiserver/pkg/storage"

	"crdplay/engine/storage"
)

// watchEvent is one line of a watch stream.
type watchEvent struct {
	Type   string      `json:"type"`
	Object interface{} `json:"object"`
}

// watch streams changes of the collection as JSON WatchEvents. Without a resourceVersion it starts with the
// current objects as ADDED events, as kube-apiserver's "get state and start at most recent" does.
func (r *crRequest) watch() {
	opts, err := r.listOptions()
	if err != nil {
		r.fail(err)
		return
	}
	timeout := 30 * time.Minute
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	ctx, cancel := context.WithTimeout(r.req.Context(), timeout)
	defer cancel()

	var from int64
	var initial []*unstructured.Unstructured
	if opts.ResourceVersion == "" || opts.ResourceVersion == "0" {
		items, rev, err := r.listMatching(ctx, opts)
		if err != nil {
			r.fail(err)
			return
		}
		initial, from = items, rev
	} else if from, err = strconv.ParseInt(opts.ResourceVersion, 10, 64); err != nil {
		r.fail(apierrors.NewBadRequest("invalid resource version: " + opts.ResourceVersion))
		return
	}
	prefix := r.collectionPrefix(r.info.Namespace)
	if r.info.Name != "" {
		prefix = r.key(r.info.Namespace, r.info.Name)
	}
	ch, err := r.s.cfg.Storage.Watch(ctx, prefix, from)
	if err != nil {
		r.fail(apierrors.NewResourceExpired(err.Error()))
		return
	}
	label, field := labels.Everything(), fields.Everything()
	if opts.LabelSelector != nil {
		label = opts.LabelSelector
	}
	if opts.FieldSelector != nil {
		field = opts.FieldSelector
	}
	pred := apistorage.SelectionPredicate{Label: label, Field: field, GetAttrs: r.vi.strategy.Attrs}

	var first []interface{}
	for _, u := range initial {
		first = append(first, u.Object)
	}
	streamWatch(ctx, r.w, r.rec, first, ch, func(ev storage.Event) (string, interface{}, bool) {
		typ, obj := r.watchObject(ev)
		if obj == nil {
			return "", nil, false
		}
		if ok, _ := pred.Matches(obj); !ok && typ != "DELETED" {
			return "", nil, false
		}
		return typ, obj.Object, true
	})
}

// streamWatch writes a watch response: the initial objects as ADDED events, then one event per storage change
// that convert accepts, until ctx ends. A closed channel means the store could not keep up: the client gets
// an ERROR event (410 Expired) and lists again.
func streamWatch(ctx context.Context, w http.ResponseWriter, rec *warnings, initial []interface{}, ch <-chan storage.Event, convert func(storage.Event) (string, interface{}, bool)) {
	for _, h := range rec.headers() {
		w.Header().Add("Warning", h)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	send := func(typ string, obj interface{}) bool {
		if err := enc.Encode(watchEvent{Type: typ, Object: obj}); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if flusher != nil {
		flusher.Flush()
	}
	for _, o := range initial {
		if !send("ADDED", o) {
			return
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-ch:
			if !ok {
				if ctx.Err() == nil {
					send("ERROR", errorToStatus(apierrors.NewResourceExpired("the watch could not keep up; list again")))
				}
				return
			}
			if typ, obj, ok := convert(ev); ok && !send(typ, obj) {
				return
			}
		}
	}
}

// watchObject decodes the object of a storage event in the request version.
func (r *crRequest) watchObject(ev storage.Event) (string, *unstructured.Unstructured) {
	switch ev.Type {
	case storage.EventDelete:
		u, err := r.decodeStored(storage.Object{Key: ev.Object.Key, Value: ev.Prev, Revision: ev.Object.Revision})
		if err != nil {
			return "", nil
		}
		return "DELETED", u
	default:
		u, err := r.decodeStored(ev.Object)
		if err != nil {
			return "", nil
		}
		if ev.Prev == nil {
			return "ADDED", u
		}
		return "MODIFIED", u
	}
}

var _ runtime.Object = &metav1.Status{}
