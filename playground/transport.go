package playground

import (
	"bytes"
	"net/http"
	"net/url"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// response is one answer of the engine.
type response struct {
	status   int
	header   http.Header
	body     []byte
	warnings []string
}

// do sends one request to the engine in-process, as net/http's server would hand it over, and records it in
// the evaluation's trace when asked to.
func (ev *evaluation) do(method, path, contentType, accept string, body []byte) *response {
	req, err := http.NewRequestWithContext(ev.ctx, method, "http://localhost"+path, bytes.NewReader(body))
	if err != nil {
		// Only a malformed path or method, which the playground builds itself.
		return &response{status: http.StatusBadRequest, body: []byte(err.Error())}
	}
	u, err := url.ParseRequestURI(path)
	if err == nil {
		req.URL = u
	}
	req.RequestURI = path
	req.Host = "localhost"
	req.RemoteAddr = "127.0.0.1:0"
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set("User-Agent", ev.s.userAgent)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	w := &recorder{header: http.Header{}}
	start := time.Now()
	ev.st.handler.ServeHTTP(w, req)
	ev.engineTime += time.Since(start)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	r := &response{status: w.status, header: w.header, body: w.body.Bytes()}
	if hs := w.header.Values("Warning"); len(hs) > 0 {
		parsed, _ := utilnet.ParseWarningHeaders(hs)
		for _, p := range parsed {
			r.warnings = append(r.warnings, p.Text)
		}
	}
	if r.warnings == nil {
		r.warnings = []string{}
	}
	if ev.trace != nil {
		*ev.trace = append(*ev.trace, Exchange{
			Method: method, Path: path, ContentType: contentType, Accept: accept, RequestBody: string(body),
			Status: r.status, Warnings: r.warnings, Body: string(r.body),
		})
	}
	return r
}

// recorder is the http.ResponseWriter the engine writes to. The engine's handler runs on the caller's
// goroutine and returns when the response is complete (the playground never watches).
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.header = w.header.Clone() // later changes are not sent, as with a real connection
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}

func (w *recorder) Flush() {}
