package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// Log formats NewLogger supports.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// NewLogger returns a logger writing to w in format (LogFormatText, also for "", or LogFormatJSON) whose
// records made with a request's context (the *Context methods) carry the request's audit ID, so that every
// line about one request can be found from the Audit-Id header its client received.
func NewLogger(w io.Writer, format string) (*slog.Logger, error) {
	var h slog.Handler
	switch format {
	case "", LogFormatText:
		h = slog.NewTextHandler(w, nil)
	case LogFormatJSON:
		h = slog.NewJSONHandler(w, nil)
	default:
		return nil, fmt.Errorf("unsupported log format %q (supported: %s, %s)", format, LogFormatText, LogFormatJSON)
	}
	return slog.New(auditIDHandler{h}), nil
}

// auditIDHandler adds the audit ID of the record's context to the record.
type auditIDHandler struct{ slog.Handler }

func (h auditIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := AuditID(ctx); id != "" {
		r.AddAttrs(slog.String("auditID", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h auditIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return auditIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h auditIDHandler) WithGroup(name string) slog.Handler {
	return auditIDHandler{h.Handler.WithGroup(name)}
}

// auditIDHeader is kube-apiserver's request ID header: it answers every request with one, taking the
// client's when the request has it.
const auditIDHeader = "Audit-ID"

type auditIDKey struct{}

// AuditID returns the ID of the request whose context ctx is, or "" outside a request.
func AuditID(ctx context.Context) string {
	id, _ := ctx.Value(auditIDKey{}).(string)
	return id
}

// withAuditID gives each request an ID, as kube-apiserver's WithAuditInit: the client's Audit-ID header if
// it sent one, a new UUID otherwise. The response carries it in Audit-Id, and the request's context has it
// for the log.
func withAuditID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(auditIDHeader)
		if id == "" {
			id = uuid.NewString()
		}
		w.Header().Set(auditIDHeader, id)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), auditIDKey{}, id)))
	})
}

// accessLog logs each request when its handler returns: method, URI, status, body size and duration, and,
// through the request's context, its audit ID.
func accessLog(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &recordingWriter{ResponseWriter: w}
		defer func() {
			status := rw.status
			if status == 0 {
				status = http.StatusOK // the handler wrote nothing, which net/http sends as 200
			}
			log.InfoContext(r.Context(), "request", "method", r.Method, "uri", r.URL.RequestURI(), "status", status,
				"bytes", rw.bytes, "duration", time.Since(start).Round(time.Microsecond), "remote", r.RemoteAddr)
		}()
		h.ServeHTTP(rw, r)
	})
}
