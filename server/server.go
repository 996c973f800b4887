package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"crdplay/engine"
	"crdplay/server/etcdstore"
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
	// Log, if set, receives one line per finished request (method, URI, status, size, duration).
	Log *slog.Logger
	// Site, if set, is the directory of the playground's static build (tools/webbuild), served beside the
	// API: its pages and assets at their paths, every other path to the API (see WithSite).
	Site string
	// Links bound the short links the server keeps in its storage (see Links); the zero value keeps
	// DefaultMaxLinks of them.
	Links LinkOptions
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
}

func (o EtcdOptions) isZero() bool {
	return len(o.Endpoints) == 0 && o.CAFile == "" && o.CertFile == "" && o.KeyFile == "" && !o.Embedded && o.DataDir == ""
}

// Handler is the engine's Kubernetes API handler together with the storage it owns.
type Handler struct {
	http.Handler
	closeOnce sync.Once
	close     func() error
	closeErr  error
}

// Close releases the storage: the connection to etcd, and an embedded etcd, which it stops (its data
// directory can then be opened again). Requests must be over. Close is a no-op for StorageMemory; calls after
// the first return its result.
func (h *Handler) Close() error {
	h.closeOnce.Do(func() {
		if h.close != nil {
			h.closeErr = h.close()
		}
	})
	return h.closeErr
}

// NewHandler returns the engine's Kubernetes API handler configured by opts. An etcd that cannot be reached is
// no error here: requests answer 503 Service Unavailable until it can.
func NewHandler(opts Options) (*Handler, error) {
	// Conversion webhooks are called over HTTPS as kube-apiserver calls them; only a native host can.
	eopts := engine.Options{Webhook: HTTPSWebhook{}}
	var closeStorage func() error
	switch opts.Storage {
	case "", StorageMemory:
		if !opts.Etcd.isZero() {
			return nil, fmt.Errorf("etcd settings need storage %q, not %q", StorageEtcd, StorageMemory)
		}
		eopts.Storage = engine.NewMemoryStorage()
	case StorageEtcd:
		store, closeEtcd, err := openEtcd(opts.Etcd)
		if err != nil {
			return nil, err
		}
		eopts.Storage, closeStorage = store, closeEtcd
	default:
		return nil, fmt.Errorf("unsupported storage %q (supported: %s, %s)", opts.Storage, StorageMemory, StorageEtcd)
	}
	h, err := engine.NewHandler(eopts)
	if err != nil {
		if closeStorage != nil {
			closeStorage()
		}
		return nil, err
	}
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
		h = WithLinks(h, NewLinks(eopts.Storage, opts.Links))
	}
	if opts.Log != nil {
		h = accessLog(h, opts.Log)
	}
	return &Handler{Handler: h, close: closeStorage}, nil
}

// openEtcd connects to the etcd o describes, starting it first if it is embedded, and returns the store and
// what releases both.
func openEtcd(o EtcdOptions) (*etcdstore.Store, func() error, error) {
	cfg := etcdstore.Config{Endpoints: o.Endpoints}
	stopEmbedded := func() {}
	switch {
	case o.Embedded && len(o.Endpoints) > 0:
		return nil, nil, errors.New("either etcd endpoints or an embedded etcd, not both")
	case o.Embedded && (o.CAFile != "" || o.CertFile != "" || o.KeyFile != ""):
		return nil, nil, errors.New("TLS files are for etcd endpoints; the embedded etcd serves plain HTTP on loopback")
	case o.Embedded && o.DataDir == "":
		return nil, nil, errors.New("the embedded etcd needs a data directory")
	case o.Embedded:
		ep, stop, err := etcdstore.StartEmbedded(o.DataDir)
		if err != nil {
			return nil, nil, err
		}
		cfg.Endpoints, stopEmbedded = []string{ep}, stop
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
		stopEmbedded()
		return nil, nil, err
	}
	return store, func() error {
		err := store.Close()
		stopEmbedded()
		return err
	}, nil
}

// Serve serves h on ln until ctx is done, then shuts down: it stops accepting connections, lets requests in
// flight finish for up to grace, and then cancels the contexts of those still running and closes their
// connections. The second step is for watches, which stream until their client or the server ends them and
// would otherwise hold the process for the whole grace period. Serve returns nil after a shutdown.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, grace time.Duration) error {
	// Requests get a context that outlives ctx, so that stopping to accept does not abort requests in flight;
	// it is cancelled only when the grace period is over.
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	srv := &http.Server{
		Handler: h,
		// Guards against clients that open connections and never finish their headers. There is no
		// WriteTimeout: watch responses legitimately stream for minutes.
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

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

// accessLog logs each request when its handler returns.
func accessLog(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &recordingWriter{ResponseWriter: w}
		defer func() {
			status := rw.status
			if status == 0 {
				status = http.StatusOK // the handler wrote nothing, which net/http sends as 200
			}
			log.Info("request", "method", r.Method, "uri", r.URL.RequestURI(), "status", status,
				"bytes", rw.bytes, "duration", time.Since(start).Round(time.Microsecond))
		}()
		h.ServeHTTP(rw, r)
	})
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
