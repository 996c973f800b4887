package playground

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"crdplay/engine/storage"
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

// journal is the engine's storage as the session gives it: an in-memory store that remembers the keys the
// objects of an evaluation wrote, so that rollback can remove them and the next evaluation starts from the
// installed CRDs alone. The CRDs stay, with their uid and resourceVersion, so that the engine keeps its
// compiled schemas and CEL programs.
type journal struct {
	storage.Interface

	mu        sync.Mutex
	recording bool
	touched   map[string]bool
	// spoiled is set when an evaluation changed an object that existed before it (a CRD): rollback cannot
	// restore it, so the session reinstalls.
	spoiled bool
	// prefix is the engine's key prefix, learnt from the first CRD it stores (see crdKeySuffix).
	prefix string
}

// crdKeySuffix is the end of a CRD's storage key, minus the CRD's name: kube-apiserver's layout
// (<prefix>/apiextensions.k8s.io/customresourcedefinitions/<name>), which the engine keeps.
const crdKeySuffix = "/apiextensions.k8s.io/customresourcedefinitions/"

func newJournal(inner storage.Interface) *journal {
	return &journal{Interface: inner, touched: map[string]bool{}}
}

func (j *journal) note(ctx context.Context, key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.prefix == "" {
		if i := strings.Index(key, crdKeySuffix); i >= 0 {
			j.prefix = key[:i]
		}
	}
	if !j.recording || j.touched[key] {
		return
	}
	if _, err := j.Interface.Get(ctx, key); err == nil {
		j.spoiled = true
	}
	j.touched[key] = true
}

func (j *journal) Create(ctx context.Context, key string, value []byte) (int64, error) {
	j.note(ctx, key)
	return j.Interface.Create(ctx, key, value)
}

func (j *journal) Update(ctx context.Context, key string, value []byte, rev int64) (int64, error) {
	j.note(ctx, key)
	return j.Interface.Update(ctx, key, value, rev)
}

func (j *journal) Delete(ctx context.Context, key string, rev int64) (storage.Object, error) {
	j.note(ctx, key)
	return j.Interface.Delete(ctx, key, rev)
}

// record starts remembering writes.
func (j *journal) record() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.recording = true
}

// rollback deletes what was written since record and reports whether the store is back to where it was.
func (j *journal) rollback(ctx context.Context) bool {
	j.mu.Lock()
	keys := j.touched
	j.touched, j.recording = map[string]bool{}, false
	spoiled := j.spoiled
	j.mu.Unlock()
	if spoiled {
		return false
	}
	for k := range keys {
		if _, err := j.Interface.Delete(ctx, k, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return false
		}
	}
	return true
}

// objectKey is where the engine keeps a custom resource, or "" before any CRD was stored.
func (j *journal) objectKey(group, plural, namespace, name string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.prefix == "" {
		return ""
	}
	k := j.prefix + "/" + group + "/" + plural
	if namespace != "" {
		k += "/" + namespace
	}
	return k + "/" + name
}
