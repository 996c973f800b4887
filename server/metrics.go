package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"

	"crdplay/engine/storage"
)

// latencyBuckets are kube-apiserver's buckets for apiserver_request_duration_seconds and
// etcd_request_duration_seconds, so that dashboards and SLO rules written for it read ours unchanged.
var latencyBuckets = []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15,
	20, 30, 45, 60}

// metrics are the server's Prometheus metrics, named and labelled as kube-apiserver's (k8s.io/apiserver
// pkg/endpoints/metrics and pkg/storage/etcd3/metrics). Each Handler has its own registry, served at /metrics.
type metrics struct {
	registry        *prometheus.Registry
	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	etcdDuration    *prometheus.HistogramVec
	etcdRequests    *prometheus.CounterVec
}

// requestInfoKey is the context key of the request's parse by requestInfos (nil when it failed), which the
// request deadline makes and the metrics and the in-flight limit read, so that a request is parsed once for all.
type requestInfoKey struct{}

// requestInfoOf is r's parse by requestInfos: the one in its context, or a new one.
func requestInfoOf(r *http.Request) *request.RequestInfo {
	if info, ok := r.Context().Value(requestInfoKey{}).(*request.RequestInfo); ok {
		return info
	}
	info, err := requestInfos.NewRequestInfo(r)
	if err != nil {
		return nil
	}
	return info
}

// requestInfos parse requests as the engine does: the same paths are resource requests.
var requestInfos = &request.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "apiserver_request_total",
			Help: "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component", "code"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "apiserver_request_duration_seconds",
			Help:    "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
			Buckets: latencyBuckets,
		}, []string{"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"}),
		etcdDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "etcd_request_duration_seconds",
			Help:    "Etcd request latency in seconds for each operation and object type.",
			Buckets: latencyBuckets,
		}, []string{"operation", "group", "resource"}),
		etcdRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "etcd_requests_total",
			Help: "Etcd request counts for each operation and object type.",
		}, []string{"operation", "group", "resource"}),
	}
	m.registry.MustRegister(m.requests, m.requestDuration, m.etcdDuration, m.etcdRequests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the registry in the Prometheus text format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// requestLabels are the labels of one request in apiserver_request_total, less the code.
type requestLabels struct {
	verb, dryRun, group, version, resource, subresource, scope, component string
}

func (l requestLabels) values() []string {
	return []string{l.verb, l.dryRun, l.group, l.version, l.resource, l.subresource, l.scope, l.component}
}

// validVerbs are the verbs kube-apiserver reports; others are counted as "other".
var validVerbs = sets.NewString("APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION", "GET", "LIST", "PATCH",
	"POST", "PROXY", "PUT", "UPDATE", "WATCH", "WATCHLIST")

// labels computes r's labels as kube-apiserver's request metrics do: the request's verb upper-cased (WATCH for
// ?watch=true, APPLY for a server-side apply patch), its group, version, resource and subresource, and its
// scope: "resource" for a named object or a create, "namespace", "cluster" for the other resource requests.
// Other paths (discovery, /version, /openapi) have only a verb and their path as subresource, as upstream's
// non-resource handlers report themselves.
func (m *metrics) labels(r *http.Request, info *request.RequestInfo) requestLabels {
	if info == nil || !info.IsResourceRequest {
		return requestLabels{verb: r.Method, subresource: r.URL.Path}
	}
	verb := strings.ToUpper(info.Verb)
	if w := r.URL.Query()["watch"]; len(w) > 0 && (verb == "GET" || verb == "LIST") {
		if v := strings.ToLower(w[0]); v != "0" && v != "false" {
			verb = "WATCH"
		}
	}
	switch {
	case verb == "WATCHLIST":
		verb = "WATCH"
	case verb == "PATCH" && r.Header.Get("Content-Type") == string(types.ApplyPatchType):
		verb = "APPLY"
	}
	if !validVerbs.Has(verb) {
		verb = "other"
	}
	l := requestLabels{verb: verb, group: info.APIGroup, version: info.APIVersion, resource: info.Resource,
		subresource: info.Subresource, component: "apiserver"}
	switch {
	case info.Name != "" || info.Verb == "create":
		l.scope = "resource"
	case info.Namespace != "":
		l.scope = "namespace"
	default:
		l.scope = "cluster"
	}
	if strings.Contains(r.URL.RawQuery, "dryRun") {
		// As upstream: the sorted distinct values when valid (only "All" is), "invalid" otherwise, so that
		// clients cannot grow the label's values.
		values := sets.NewString(r.URL.Query()["dryRun"]...)
		if values.Len() > 0 && !values.Equal(sets.NewString("All")) {
			l.dryRun = "invalid"
		} else {
			l.dryRun = strings.Join(values.List(), ",")
		}
	}
	return l
}

// instrument counts and times the requests h serves. A 404 is counted without the path's group, version,
// resource and subresource: upstream counts only the resources it serves, and the names of paths that do not
// exist are chosen by clients, so they would grow the metrics without bound.
func (m *metrics) instrument(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// Authentication, when on, has parsed the request with the same factory already.
		info, parsed := request.RequestInfoFrom(r.Context())
		if !parsed {
			info = requestInfoOf(r)
		}
		l := m.labels(r, info)
		rw := &recordingWriter{ResponseWriter: w}
		// The in-flight limit, inside, reads this parse when authentication has made none; the API's
		// deadline, outside, has put it there already.
		if _, ok := r.Context().Value(requestInfoKey{}).(*request.RequestInfo); !ok {
			r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		}
		h.ServeHTTP(rw, r)
		code := rw.status
		if code == 0 {
			code = http.StatusOK
		}
		if code == http.StatusNotFound {
			l.group, l.version, l.resource, l.subresource = "", "", "", ""
		}
		m.requests.WithLabelValues(append(l.values(), strconv.Itoa(code))...).Inc()
		m.requestDuration.WithLabelValues(l.values()...).Observe(time.Since(start).Seconds())
	})
}

// instrumentedStorage times each call of a storage.Interface in etcd_request_duration_seconds, labelled with
// the operation and the group and resource of the key (/registry/<prefix>/<group>/<resource>/...).
type instrumentedStorage struct {
	storage.Interface
	m *metrics
}

func (s instrumentedStorage) observe(op, key string, start time.Time) {
	group, resource := keyResource(key)
	s.m.etcdDuration.WithLabelValues(op, group, resource).Observe(time.Since(start).Seconds())
	s.m.etcdRequests.WithLabelValues(op, group, resource).Inc()
}

// keyResource is the group and resource of a storage key or prefix, as the engine lays them out:
// /registry/apiextensions.kubernetes.io/<group>/<resource>/[<namespace>/]<name>.
func keyResource(key string) (group, resource string) {
	parts := strings.Split(strings.TrimPrefix(key, "/"), "/")
	if len(parts) < 4 {
		return "", ""
	}
	return parts[2], parts[3]
}

// Get implements storage.Interface.
func (s instrumentedStorage) Get(ctx context.Context, key string) (storage.Object, error) {
	defer s.observe("get", key, time.Now())
	return s.Interface.Get(ctx, key)
}

// List implements storage.Interface.
func (s instrumentedStorage) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	defer s.observe("list", prefix, time.Now())
	return s.Interface.List(ctx, prefix, opts)
}

// Create implements storage.Interface.
func (s instrumentedStorage) Create(ctx context.Context, key string, value []byte) (int64, error) {
	defer s.observe("create", key, time.Now())
	return s.Interface.Create(ctx, key, value)
}

// Update implements storage.Interface.
func (s instrumentedStorage) Update(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	defer s.observe("update", key, time.Now())
	return s.Interface.Update(ctx, key, value, expected)
}

// Delete implements storage.Interface.
func (s instrumentedStorage) Delete(ctx context.Context, key string, expected int64) (storage.Object, error) {
	defer s.observe("delete", key, time.Now())
	return s.Interface.Delete(ctx, key, expected)
}

// Watch implements storage.Interface; it times the start of the watch, not its life.
func (s instrumentedStorage) Watch(ctx context.Context, prefix string, from int64) (<-chan storage.Event, error) {
	defer s.observe("watch", prefix, time.Now())
	return s.Interface.Watch(ctx, prefix, from)
}
