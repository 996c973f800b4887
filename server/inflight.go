package server

import (
	"context"
	"errors"
	"net/http"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
)

// kube-apiserver's defaults of --max-requests-inflight and --max-mutating-requests-inflight.
const (
	DefaultMaxRequestsInFlight         = 400
	DefaultMaxMutatingRequestsInFlight = 200
)

// longRunning is kube-apiserver's check of the requests that no in-flight limit counts (and no request deadline
// bounds): watches and the streaming subresources. A watch holds its connection for minutes; counting it would
// let a few hundred watchers shut everyone else out.
var longRunning = genericfilters.BasicLongRunningRequestCheck(
	sets.NewString("watch", "proxy"),
	sets.NewString("attach", "exec", "proxy", "log", "portforward"),
)

// limitedHandlerKey is the context key of the handler an inFlightLimit passes a request on to.
type limitedHandlerKey struct{}

// inFlightLimit bounds how many requests run at once, as kube-apiserver's --max-requests-inflight (reads:
// get, list) and --max-mutating-requests-inflight (every other verb): upstream's WithMaxInFlightLimit, which
// answers a request over the limit at once with 429, "Retry-After: 1" and its plain-text message, lets
// system:masters through, and counts no long-running request. A limit of 0 lifts it, as upstream's.
//
// One filter, and so one pair of counters, serves every handler wrap puts behind it (the API, /metrics, short
// links): the limit is the process's, not each path's.
type inFlightLimit struct {
	limited http.Handler // upstream's filter in front of a handler that serves the one in the request's context
}

// newInFlightLimit returns the limit of readOnly and mutating requests in flight; nil when both are 0.
func newInFlightLimit(readOnly, mutating int) (*inFlightLimit, error) {
	switch {
	case readOnly < 0:
		return nil, errors.New("--max-requests-inflight can not be negative value")
	case mutating < 0:
		return nil, errors.New("--max-mutating-requests-inflight can not be negative value")
	case readOnly == 0 && mutating == 0:
		return nil, nil
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Context().Value(limitedHandlerKey{}).(http.Handler).ServeHTTP(w, r)
	})
	return &inFlightLimit{limited: genericfilters.WithMaxInFlightLimit(next, readOnly, mutating, longRunning)}, nil
}

// wrap puts h behind the limit; a nil limit returns h.
func (l *inFlightLimit) wrap(h http.Handler) http.Handler {
	if l == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), limitedHandlerKey{}, h)
		// Upstream's filter reads the verb from the RequestInfo that authentication's chain puts in the
		// context; without authentication the request is parsed here, by the same factory.
		if _, ok := request.RequestInfoFrom(ctx); !ok {
			info := requestInfoOf(r)
			if info == nil {
				h.ServeHTTP(w, r) // a request nothing can parse: the API refuses it on its own
				return
			}
			ctx = request.WithRequestInfo(ctx, info)
		}
		// As every answer of kube-apiserver (its WithCacheControl filter), the 429 too.
		if w.Header().Get("Cache-Control") == "" {
			w.Header().Set("Cache-Control", "no-cache, private")
		}
		l.limited.ServeHTTP(w, r.WithContext(ctx))
	})
}
