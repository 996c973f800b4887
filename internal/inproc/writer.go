package inproc

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
)

// sniffLen is how much of the body http.DetectContentType looks at.
const sniffLen = 512

// responseWriter is the http.ResponseWriter Serve hands the handler. It keeps what net/http's server would
// send; its comments name the net/http code each rule follows (server.go). Every method but Header takes mu,
// because a handler Serve gave up on may still write while Serve's caller reads the response.
type responseWriter struct {
	head   bool              // a HEAD request: the body is sniffed, never sent
	stream func([]byte) bool // Options.Stream

	mu sync.Mutex
	// header is the handler's, from Header(). Only the handler touches it; Serve reads it at WriteHeader.
	header http.Header
	// sent is header as it was at WriteHeader, the one a client gets; nil until then.
	sent   http.Header
	status int
	// onWire is set once sent is final: Content-Type sniffed, suppressed headers removed. net/http does it
	// when the first bytes leave its buffer: at the first Flush, or when the handler returns (or once 2 KiB
	// are buffered, which sniffs the same 512 bytes as at the end).
	onWire bool
	body   bytes.Buffer
	// closed is set when nobody reads any more (Stream said so, or Serve returned): writes are dropped.
	closed bool
}

// Header returns the header the next WriteHeader sends; after it, changes are not sent.
func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader follows (*response).WriteHeader.
func (w *responseWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeader(code)
}

func (w *responseWriter) writeHeader(code int) {
	if w.sent != nil {
		return // superfluous: net/http logs it and ignores it
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code)) // net/http's checkWriteHeaderCode
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		return // informational: sent ahead of the response, whose final status is still to come
	}
	w.status = code
	w.sent = w.header.Clone()
}

// Write follows (*response).write and (*chunkWriter).Write.
func (w *responseWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent == nil {
		w.writeHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.closed {
		return len(p), nil
	}
	if w.head {
		// Only sniffed: keep what DetectContentType reads, until the header is sent.
		if !w.onWire && w.body.Len() < sniffLen {
			w.body.Write(p[:min(len(p), sniffLen-w.body.Len())])
		}
		return len(p), nil
	}
	w.body.Write(p)
	if w.stream != nil && !w.stream(p) {
		w.closed = true
	}
	return len(p), nil
}

// Flush sends the header if it was not sent yet; the body so far is with the caller already.
func (w *responseWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent == nil {
		w.writeHeader(http.StatusOK)
	}
	w.putOnWire()
}

// putOnWire makes sent final, as (*chunkWriter).writeHeader does with the body's first bytes.
func (w *responseWriter) putOnWire() {
	if w.onWire {
		return
	}
	w.onWire = true
	h := w.sent
	if bodyAllowed(w.status) {
		// The key's presence counts, even with no value: that is how a handler asks for no Content-Type.
		_, haveType := h["Content-Type"]
		if !haveType && h.Get("Content-Encoding") == "" && h.Get("Transfer-Encoding") == "" && w.body.Len() > 0 {
			h.Set("Content-Type", http.DetectContentType(w.body.Bytes()))
		}
	} else {
		// suppressedHeaders: no framing for a response without a body, nor a type for a 304.
		h.Del("Content-Length")
		if w.status == http.StatusNotModified {
			h.Del("Content-Type")
		}
	}
	// Transfer-Encoding describes the connection's framing; the body is handed over whole.
	h.Del("Transfer-Encoding")
	for k, vs := range h {
		if len(vs) == 0 {
			delete(h, k) // a key with no value is sent as nothing (see http.ResponseWriter's Header)
		}
	}
}

// response is the response once the handler has returned, as (*response).finishRequest completes it.
func (w *responseWriter) response() *Response {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent == nil {
		w.writeHeader(http.StatusOK)
	}
	w.putOnWire()
	w.closed = true
	r := &Response{StatusCode: w.status, Header: w.sent}
	if !w.head && w.body.Len() > 0 {
		r.Body = w.body.Bytes()
	}
	return r
}

// abandon drops whatever the handler writes from now on.
func (w *responseWriter) abandon() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}

// bodyAllowed is net/http's bodyAllowedForStatus (RFC 9110: 1xx, 204 and 304 have no body).
func bodyAllowed(status int) bool {
	return !(status >= 100 && status <= 199 || status == http.StatusNoContent || status == http.StatusNotModified)
}
