package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// DefaultRequestTimeout is how long a request other than a watch may take, and the most a client's ?timeout=
// may ask for: kube-apiserver's --request-timeout default.
const DefaultRequestTimeout = 60 * time.Second

// invalidTimeoutInURL begins the message of a request whose ?timeout= does not parse, as upstream's.
const invalidTimeoutInURL = "invalid timeout specified in the request URL"

// statusCodecs encode the Status of the requests this package refuses itself (before the engine sees them),
// negotiated as the engine and kube-apiserver negotiate theirs.
var statusCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme)
}()

// withRequestDeadline bounds each request that is not a watch by a deadline on its context, as
// kube-apiserver's WithRequestDeadline filter: max, or the request's ?timeout= (a Go duration) when that is
// shorter and above zero. A ?timeout= that does not parse is answered 400 with upstream's message. At the
// deadline the request is answered 504 (see serveWithin). Watches are long-running: their ?timeout= is the
// watch's own, which the engine applies.
func withRequestDeadline(h http.Handler, max time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Parsed once here, outermost as upstream's WithRequestInfo, for the filters inside.
		info := requestInfoOf(r)
		ctx := context.WithValue(r.Context(), requestInfoKey{}, info)
		if info != nil {
			ctx = request.WithRequestInfo(ctx, info)
		}
		r = r.WithContext(ctx)
		if isWatch(r) {
			h.ServeHTTP(w, r)
			return
		}
		timeout := max
		if value := r.URL.Query().Get("timeout"); value != "" {
			d, err := time.ParseDuration(value)
			if err != nil {
				writeStatus(w, r, apierrors.NewBadRequest(fmt.Sprintf("%s - %s", invalidTimeoutInURL, err)))
				return
			}
			if d > 0 && d < max {
				timeout = d
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		serveWithin(ctx, h, w, r)
	})
}

// serveWithin serves r with h until ctx is done, as kube-apiserver's WithTimeoutForNonLongRunningRequests:
// a handler that has not answered by then is answered 504 with upstream's Status (and its later writes are
// dropped), one that has begun its answer has its connection aborted, since the answer cannot be finished.
func serveWithin(ctx context.Context, h http.Handler, w http.ResponseWriter, r *http.Request) {
	tw := &timeoutWriter{w: w, header: w.Header().Clone()}
	// The request is copied: the handler may go on with it after serveWithin has returned.
	r = r.Clone(ctx)
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		h.ServeHTTP(tw, r)
	}()
	select {
	case p := <-done:
		if p != nil {
			panic(p) // where net/http recovers it, as if the handler had run here
		}
	case <-ctx.Done():
		tw.timeout()
	}
}

// timeoutWriter is the handler's ResponseWriter under serveWithin: it passes the answer through until the
// deadline, and nothing after it.
type timeoutWriter struct {
	w      http.ResponseWriter
	header http.Header // the handler's, copied to w's when the answer begins

	mu          sync.Mutex
	wroteHeader bool
	timedOut    bool
}

func (tw *timeoutWriter) Header() http.Header { return tw.header }

func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.begin()
	tw.w.WriteHeader(code)
}

func (tw *timeoutWriter) Write(p []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	if !tw.wroteHeader {
		tw.begin()
	}
	return tw.w.Write(p)
}

// Flush keeps streaming answers streaming.
func (tw *timeoutWriter) Flush() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if !tw.timedOut {
		_ = http.NewResponseController(tw.w).Flush()
	}
}

// begin copies the handler's headers to the answer; tw.mu is held.
func (tw *timeoutWriter) begin() {
	tw.wroteHeader = true
	maps.Copy(tw.w.Header(), tw.header)
}

// timeout ends the answer at the deadline: upstream's 504 Status (encoded as upstream's filter encodes it,
// plain encoding/json) if the handler has not begun its answer, else an aborted connection.
func (tw *timeoutWriter) timeout() {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.timedOut = true
	if tw.wroteHeader {
		panic(http.ErrAbortHandler) // net/http closes the connection without logging a stack
	}
	tw.w.Header().Set("Cache-Control", "no-cache, private")
	tw.w.WriteHeader(http.StatusGatewayTimeout)
	_ = json.NewEncoder(tw.w).Encode(&timeoutStatus)
}

// timeoutStatus is the Status of a request that ran out of time, as upstream's timeout filter sends it.
var timeoutStatus = apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0).ErrStatus

// isWatch reports whether r asks for a watch, as the engine reads its path and query (?watch=true, or the
// deprecated /watch/ paths).
func isWatch(r *http.Request) bool {
	info := requestInfoOf(r)
	return info != nil && info.IsResourceRequest && info.Verb == "watch"
}

// writeStatus answers r with err's Status, encoded as the request's Accept header asks.
func writeStatus(w http.ResponseWriter, r *http.Request, err *apierrors.StatusError) {
	w.Header().Set("Cache-Control", "no-cache, private") // as on every answer of the API
	responsewriters.ErrorNegotiated(err, statusCodecs, schema.GroupVersion{Version: "v1"}, w, r)
}

// withBodyReadTimeout bounds the time a client may take to send a request's body, so that a client that
// trickles or stalls its upload cannot hold a request (and its memory) open. It is no http.Server
// ReadTimeout, which would also end watches: once the body is read, the connection has no read deadline.
func withBodyReadTimeout(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			h.ServeHTTP(w, r) // a writer without deadlines (a test recorder): nothing to bound
			return
		}
		// The deadline stays when the body was not read to its end: net/http reads the rest after the handler,
		// to reuse the connection, and must give up (closing it) when the client stalls.
		r.Body = &deadlineBody{ReadCloser: r.Body, clear: func() { rc.SetReadDeadline(time.Time{}) }}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody clears the connection's read deadline once the body has been read to its end, before the
// handler goes on: net/http then reads the connection in the background to notice a client that goes away,
// and that read must not fail at the deadline, which would cancel the request.
type deadlineBody struct {
	io.ReadCloser
	clear func()
	done  bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.clear()
	}
	return n, err
}
