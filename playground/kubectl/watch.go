package kubectl

import (
	"net/url"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The watches of one object that kubectl delete and kubectl wait make.

// watchListQuery is the query of kubectl's watch of one object with the watch-list semantics of client-go:
// the current object as initial events, a bookmark, then changes. timeout is the watch's timeoutSeconds.
func watchListQuery(name string, timeout time.Duration) url.Values {
	secs := int(timeout / time.Second)
	if secs <= 0 {
		secs = 1
	}
	q := url.Values{}
	q.Set("allowWatchBookmarks", "true")
	q.Set("fieldSelector", "metadata.name="+name)
	q.Set("resourceVersionMatch", "NotOlderThan")
	q.Set("sendInitialEvents", "true")
	q.Set("timeoutSeconds", strconv.Itoa(secs))
	q.Set("watch", "true")
	return q
}

// watchObject watches the object (timeout is what the request asks the server for) for at most wait, and
// calls stop with each event until it returns true.
func (k *kubectl) watchObject(it *info, timeout, wait time.Duration, stop func(watchEvent) bool) error {
	_, err := k.client.watch(request{method: "GET", path: it.mapping.path(it.namespace, ""), query: watchListQuery(it.name, timeout), accept: acceptJSON},
		wait, stop)
	return err
}

// watchForDeletion watches the object for at most wait and reports whether it saw its DELETED event.
func (k *kubectl) watchForDeletion(it *info, timeout, wait time.Duration) bool {
	deleted := false
	_ = k.watchObject(it, timeout, wait, func(ev watchEvent) bool {
		deleted = ev.Type == "DELETED"
		return deleted
	})
	return deleted
}

// isInitialEventsEnd reports whether ev is the bookmark that ends the initial events.
func isInitialEventsEnd(ev watchEvent) bool {
	if ev.Type != "BOOKMARK" {
		return false
	}
	u := unstructured.Unstructured{Object: ev.Object}
	return u.GetAnnotations()["k8s.io/initial-events-end"] == "true"
}
