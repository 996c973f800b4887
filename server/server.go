package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"crdplay/engine"
)

// StorageMemory is the in-memory storage: everything is lost when the process ends. It is the only storage
// today and the default.
const StorageMemory = "memory"

// Options configure NewHandler. The zero value serves from memory without logging.
type Options struct {
	// Storage names where objects are kept. "" means StorageMemory; any other value is an error.
	Storage string
	// Log, if set, receives one line per finished request (method, URI, status, size, duration).
	Log *slog.Logger
}

// NewHandler returns the engine's Kubernetes API handler configured by opts.
func NewHandler(opts Options) (http.Handler, error) {
	// Conversion webhooks are called over HTTPS as kube-apiserver calls them; only a native host can.
	eopts := engine.Options{Webhook: HTTPSWebhook{}}
	switch opts.Storage {
	case "", StorageMemory:
		eopts.Storage = engine.NewMemoryStorage()
	default:
		return nil, fmt.Errorf("unsupported storage %q (supported: %s)", opts.Storage, StorageMemory)
	}
	h, err := engine.NewHandler(eopts)
	if err != nil {
		return nil, err
	}
	if opts.Log != nil {
		h = accessLog(h, opts.Log)
	}
	return h, nil
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
