package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"crdplay/engine"
	"crdplay/engine/storage"
	"crdplay/policies"
	"crdplay/server/etcdstore"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// Storages NewHandler supports.
const (
	// StorageMemory is the in-memory storage: everything is lost when the process ends. It is the default.
	StorageMemory = "memory"
	// StorageEtcd keeps objects in etcd (Options.Etcd), where they outlive the process and can be shared by
	// several servers, as kube-apiserver replicas share theirs.
	StorageEtcd = "etcd"
)

// Options configure NewHandler. The zero value serves from memory without logging.
type Options struct {
	// Storage names where objects are kept: StorageMemory (also for "") or StorageEtcd.
	Storage string
	// Etcd says which etcd StorageEtcd uses; it must be empty for other storages.
	Etcd EtcdOptions
	// Log, if set, receives what operators need to know beside the responses: why a health check failed,
	// why an etcd request failed (with the endpoints and keys the responses leave out). Make it with NewLogger
	// for the lines to carry the request's audit ID.
	Log *slog.Logger
	// LogRequests logs one line per finished request to Log (method, URI, status, size, duration, audit ID).
	LogRequests bool
	// RequestTimeout bounds each request but watches, and caps a client's ?timeout=; DefaultRequestTimeout if
	// 0.
	RequestTimeout time.Duration
	// Site, if set, is the directory of the playground's static build (tools/webbuild), served beside the
	// API: its pages and assets at their paths, every other path to the API (see WithSite).
	Site string
	// Links bound the short links the server keeps in its storage (see Links); the zero value keeps
	// DefaultMaxLinks of them.
	Links LinkOptions
	// Auth configures authentication and authorization of the API (and of /metrics), as kube-apiserver's
	// flags do; the zero value lets everyone do everything. The page's site and the health endpoints are
	// public; short links are unless Auth.AuthenticateLinks.
	Auth AuthOptions
	// WebhookDestinations restricts where conversion webhooks may be called (see ParseWebhookDestinations);
	// nil allows every destination, as kube-apiserver does.
	WebhookDestinations *WebhookDestinations
	// MaxRequestsInFlight and MaxMutatingRequestsInFlight bound the reads (get, list) and the other requests
	// running at once, as kube-apiserver's --max-requests-inflight and --max-mutating-requests-inflight
	// (DefaultMaxRequestsInFlight, DefaultMaxMutatingRequestsInFlight): a request over its limit is answered
	// 429 with "Retry-After: 1" at once. Watches are not counted; neither are the health endpoints, which
	// kube-apiserver's default priority and fairness configuration exempts (its "probes" flow schema), nor the
	// page's files. 0 lifts a limit, as upstream's.
	MaxRequestsInFlight, MaxMutatingRequestsInFlight int
	// EmulatedVersion is the Kubernetes minor the API answers as (engine.Options.EmulatedVersion, kube-apiserver's
	// --emulated-version); "" is the newest. It is process-wide: one process serves one version.
	EmulatedVersion string
}

// EtcdOptions choose the etcd of StorageEtcd: either a cluster to connect to (Endpoints, and TLS files for
// https endpoints) or one started inside the process (Embedded, DataDir).
type EtcdOptions struct {
	// Endpoints are the cluster's client URLs, such as https://127.0.0.1:2379.
	Endpoints []string
	// CAFile verifies the servers' certificates (the system's roots if empty); CertFile and KeyFile are the
	// client's certificate, for clusters that require one.
	CAFile, CertFile, KeyFile string
	// Embedded starts etcd inside the process, serving on a free loopback port and keeping its data in
	// DataDir, which it needs.
	Embedded bool
	DataDir  string
	// UnsafeNoFsync runs the embedded etcd without fsync (etcd's --unsafe-no-fsync): writes are acknowledged
	// before they are on disk, so a crash loses acknowledged writes. For benchmarks only, never the default.
	UnsafeNoFsync bool
	// CompactionInterval is how often etcd's history is compacted, as kube-apiserver's
	// --etcd-compaction-interval (DefaultEtcdCompactionInterval there and in the command); 0 never compacts.
	CompactionInterval time.Duration
}

// DefaultEtcdCompactionInterval is kube-apiserver's default --etcd-compaction-interval.
const DefaultEtcdCompactionInterval = 5 * time.Minute

func (o EtcdOptions) isZero() bool {
	return len(o.Endpoints) == 0 && o.CAFile == "" && o.CertFile == "" && o.KeyFile == "" && !o.Embedded && o.DataDir == "" && !o.UnsafeNoFsync && o.CompactionInterval == 0
}

// Handler is the engine's Kubernetes API handler together with the storage it owns.
type Handler struct {
	http.Handler
	shuttingDown atomic.Bool
	closeOnce    sync.Once
	close        func() error
	closeErr     error
	clientCA     *dynamiccertificates.DynamicFileCAContent
}

// Close releases the storage: the connection to etcd, and an embedded etcd, which it stops (its data
// directory can then be opened again), and stops the admission policies' chain. Requests must be over. Calls after
// the first return its result.
func (h *Handler) Close() error {
	h.closeOnce.Do(func() {
		if h.close != nil {
			h.closeErr = h.close()
		}
	})
	return h.closeErr
}

// BeginShutdown makes /readyz fail from now on, so that load balancers and Kubernetes stop sending requests
// while those in flight finish. Call it when the server is told to stop, before Serve shuts down.
func (h *Handler) BeginShutdown() { h.shuttingDown.Store(true) }

// NewHandler returns the engine's Kubernetes API handler configured by opts. An etcd that cannot be reached is
// no error here: requests answer 503 Service Unavailable until it can.
func NewHandler(opts Options) (*Handler, error) {
	// Conversion webhooks are called over HTTPS as kube-apiserver calls them; only a native host can.
	eopts := engine.Options{Webhook: HTTPSWebhook{Destinations: opts.WebhookDestinations}, EmulatedVersion: opts.EmulatedVersion}
	authn, err := newAuth(opts.Auth)
	if err != nil {
		return nil, err
	}
	limit, err := newInFlightLimit(opts.MaxRequestsInFlight, opts.MaxMutatingRequestsInFlight)
	if err != nil {
		return nil, err
	}
	var closeStorage func() error
	m := newMetrics()
	// The checks of /healthz, /livez and /readyz, as kube-apiserver's: etcd's joins them with etcd storage.
	health := &healthEndpoints{log: opts.Log, checks: map[string][]healthCheck{}}
	var etcdChecks []healthCheck
	switch opts.Storage {
	case "", StorageMemory:
		if !opts.Etcd.isZero() {
			return nil, fmt.Errorf("etcd settings need storage %q, not %q", StorageEtcd, StorageMemory)
		}
		eopts.Storage = engine.NewMemoryStorage()
	case StorageEtcd:
		store, closeEtcd, err := openEtcd(opts.Etcd, opts.Log)
		if err != nil {
			return nil, err
		}
		store.StartCompactor(opts.Etcd.CompactionInterval)
		// The engine reads the CRD of each custom resource request from a watched copy, as kube-apiserver
		// reads it from its informer, not from etcd.
		mirror := storage.NewMirror(instrumentedStorage{store, m}, storage.CRDPrefix)
		eopts.Storage = mirror
		closeStorage = func() error {
			mirror.Close()
			return closeEtcd()
		}
		check := func(r *http.Request) error { return store.Check(r.Context()) }
		etcdChecks = []healthCheck{{"etcd", check}}
	default:
		return nil, fmt.Errorf("unsupported storage %q (supported: %s, %s)", opts.Storage, StorageMemory, StorageEtcd)
	}
	// Admission policies and their bindings are served, kept in the same storage, and run on writes, as
	// kube-apiserver runs them (a native host has room for their plugins; the browser's engine has not).
	policyAPI, err := policies.NewAPI(eopts.Storage, nil)
	if err != nil {
		if closeStorage != nil {
			closeStorage()
		}
		return nil, err
	}
	eopts.Admission = policyAPI
	h, err := engine.NewHandler(eopts)
	if err != nil {
		if closeStorage != nil {
			closeStorage()
		}
		return nil, err
	}
	policyAPI.Attach(h)
	closeStore := closeStorage
	closeStorage = func() error {
		policyAPI.Close()
		if closeStore == nil {
			return nil
		}
		return closeStore()
	}
	timeout := opts.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	// Only the API is counted: the site's and the links' paths are not kube-apiserver's. The filters are in
	// DefaultBuildHandlerChain's order: the deadline, authentication, the in-flight limit, authorization. The
	// limit is inside the deadline, so a request that timed out holds its place until its work has stopped;
	// and before authorization, so a request over it is answered 429 even if it would be forbidden. The
	// metrics count what authentication lets in, 429s included, as upstream's apiserver_request_total.
	h = withRequestDeadline(authn.authenticate(m.instrument(limit.wrap(authn.authorize(h)))), timeout)
	if opts.Site != "" {
		site, err := NewSite(opts.Site)
		if err != nil {
			if closeStorage != nil {
				closeStorage()
			}
			return nil, err
		}
		h = WithSite(h, site)
	}
	if !opts.Links.Off {
		var links http.Handler = NewLinks(eopts.Storage, opts.Links)
		if opts.Auth.AuthenticateLinks {
			links = authn.wrap(limit, links)
		} else {
			links = limit.wrap(links)
		}
		h = withLinks(h, links)
	}
	// The client CA is watched for as long as the storage is open.
	ctx, stopAuth := context.WithCancel(context.Background())
	authn.run(ctx)
	handler := &Handler{close: func() error {
		stopAuth()
		if closeStorage != nil {
			return closeStorage()
		}
		return nil
	}, clientCA: authn.clientCA}
	shutdown := healthCheck{"shutdown", func(*http.Request) error {
		if handler.shuttingDown.Load() {
			return errors.New("process is shutting down")
		}
		return nil
	}}
	health.checks["healthz"] = append([]healthCheck{pingCheck}, etcdChecks...)
	health.checks["livez"] = append([]healthCheck{pingCheck}, etcdChecks...)
	if len(etcdChecks) > 0 {
		etcdChecks = append(etcdChecks, healthCheck{"etcd-readiness", etcdChecks[0].check})
	}
	health.checks["readyz"] = append(append([]healthCheck{pingCheck}, etcdChecks...), shutdown)
	h = withOperations(h, health, m, func(h http.Handler) http.Handler { return authn.wrap(limit, h) })
	if opts.LogRequests && opts.Log != nil {
		h = accessLog(h, opts.Log)
	}
	handler.Handler = withBodyReadTimeout(withAuditID(h), timeout)
	return handler, nil
}

// openEtcd connects to the etcd o describes, starting it first if it is embedded, and returns the store and
// what releases both.
func openEtcd(o EtcdOptions, log *slog.Logger) (*etcdstore.Store, func() error, error) {
	cfg := etcdstore.Config{Endpoints: o.Endpoints, Log: log}
	switch {
	case o.Embedded && len(o.Endpoints) > 0:
		return nil, nil, errors.New("either etcd endpoints or an embedded etcd, not both")
	case o.Embedded && (o.CAFile != "" || o.CertFile != "" || o.KeyFile != ""):
		return nil, nil, errors.New("TLS files are for etcd endpoints; the embedded etcd serves plain HTTP on loopback")
	case o.Embedded && o.DataDir == "":
		return nil, nil, errors.New("the embedded etcd needs a data directory")
	case o.UnsafeNoFsync && !o.Embedded:
		return nil, nil, errors.New("skipping fsync is a setting of the embedded etcd; a cluster has its own")
	case o.Embedded:
		// The server calls its own etcd in the process, without gRPC over loopback; others reach it at ep.
		store, ep, err := etcdstore.OpenEmbedded(o.DataDir, o.UnsafeNoFsync, cfg)
		if err != nil {
			return nil, nil, err
		}
		if log != nil {
			// Its port is chosen at start: another server on this host shares the objects through this URL.
			log.Info("embedded etcd started", "clientURL", ep, "dataDir", o.DataDir)
			if o.UnsafeNoFsync {
				log.Warn("the embedded etcd skips fsync: a crash loses writes that were acknowledged (a benchmark setting)")
			}
		}
		return store, store.Close, nil
	case o.DataDir != "":
		return nil, nil, errors.New("a data directory is for the embedded etcd; a cluster keeps its own")
	case len(o.Endpoints) == 0:
		return nil, nil, errors.New("no etcd endpoints, and no embedded etcd")
	case o.CAFile != "" || o.CertFile != "" || o.KeyFile != "":
		var err error
		if cfg.TLS, err = etcdstore.LoadTLS(o.CAFile, o.CertFile, o.KeyFile); err != nil {
			return nil, nil, fmt.Errorf("etcd TLS: %w", err)
		}
	}
	store, err := etcdstore.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return store, store.Close, nil
}

// serverIdleTimeout is how long Serve keeps an idle kept-alive connection open, as kube-apiserver's 90 s.
const serverIdleTimeout = 90 * time.Second

// Serve serves h on ln until ctx is done, then shuts down: it stops accepting connections, lets requests in
// flight finish for up to grace, and then cancels the contexts of those still running and closes their
// connections. The second step is for watches, which stream until their client or the server ends them and
// would otherwise hold the process for the whole grace period. Serve returns nil after a shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration) error {
	return serve(ctx, ln, h, grace, nil)
}

// ServeTLS is Serve over TLS with cfg (see Handler.TLSConfig).
func ServeTLS(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration, cfg *tls.Config) error {
	if cfg == nil {
		return errors.New("ServeTLS needs a TLS configuration")
	}
	return serve(ctx, ln, h, grace, cfg)
}

func serve(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration, tlsConfig *tls.Config) error {
	// Requests get a context that outlives ctx, so that stopping to accept does not abort requests in flight;
	// it is cancelled only when the grace period is over.
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	srv := &http.Server{
		Handler: h,
		// Guards against clients that open connections and never finish their headers. There is no
		// WriteTimeout, nor ReadTimeout: watch responses legitimately stream for minutes, and a read deadline
		// left on the connection would end them. NewHandler's Handler bounds the body's upload instead.
		ReadHeaderTimeout: 10 * time.Second,
		// Kept-alive connections that carry no request are closed, so that idle clients do not pile up.
		IdleTimeout: serverIdleTimeout,
		BaseContext: func(net.Listener) context.Context { return base },
		TLSConfig:   tlsConfig,
	}
	served := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			served <- srv.ServeTLS(ln, "", "")
			return
		}
		served <- srv.Serve(ln)
	}()

	select {
	case err := <-served:
		return err // the listener failed; http.Server.Serve never returns nil
	case <-ctx.Done():
	}

	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		cancelBase()
		err = srv.Close()
	}
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// recordingWriter remembers the status and counts the body bytes of a response.
type recordingWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Flush keeps watch streaming working for handlers that type-assert http.Flusher.
func (w *recordingWriter) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the underlying writer's other features.
func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
