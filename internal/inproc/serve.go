package inproc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"
)

// Options tunes Serve. The zero value is a plain request: Serve waits for the handler until the request's
// context is done, and no longer, as a client does.
type Options struct {
	// Grace is how long Serve still waits for the handler once the request's context is done, for the
	// response a handler writes as it stops (a watch ends its stream when its context does). A handler that
	// has not returned by then is left running: Serve returns the context's error, and what the handler
	// writes afterwards is dropped. Zero gives up at once.
	Grace time.Duration
	// Stream, when set, is handed each piece of the body as the handler writes it, in order and one at a
	// time, on the handler's goroutine; p must not be kept. It returns false when the caller has read enough:
	// the body ends with p, and later writes are dropped (they still succeed, as a socket's buffer takes what
	// a closed peer never reads). The response is returned once the handler returns, so a Stream that stops
	// early usually cancels the request's context as well. Stream does not see a HEAD response's body,
	// which is never sent.
	Stream func(p []byte) (more bool)
}

// Response is what a client reads: status, header and the whole body.
type Response struct {
	// StatusCode is the final status, 200 when the handler wrote none.
	StatusCode int
	// Header is the header as it was at WriteHeader, with Content-Type sniffed when unset (see the package
	// documentation). A header added several times keeps every value, in order.
	Header http.Header
	// Body is the whole body; nil when empty, as it always is for a HEAD request and for a status that
	// takes no body.
	Body []byte
}

// HTTP returns r as the *http.Response an http.Client gets for req.
func (r *Response) HTTP(req *http.Request) *http.Response {
	// The status line net/http's server writes.
	text := http.StatusText(r.StatusCode)
	if text == "" {
		text = "status code " + strconv.Itoa(r.StatusCode)
	}
	return &http.Response{
		Status:        strconv.Itoa(r.StatusCode) + " " + text,
		StatusCode:    r.StatusCode,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        r.Header,
		Body:          io.NopCloser(bytes.NewReader(r.Body)),
		ContentLength: int64(len(r.Body)),
		Request:       req,
	}
}

// PanicError is Serve's error when the handler panicked: net/http's server would have dropped the
// connection, so there is no response.
type PanicError struct {
	// Method and RequestURI name the request.
	Method, RequestURI string
	// Value is what the handler panicked with.
	Value any
	// Stack is the handler goroutine's stack at the panic.
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("panic serving %s %s: %v", e.Method, e.RequestURI, e.Value)
}

// Unwrap returns the panic value when it is an error (http.ErrAbortHandler, for one).
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Serve runs h on req and returns the response once h has returned. req is what NewRequest builds (a
// request from elsewhere is served as it is). The error is a *PanicError when h panicked, or wraps the
// request context's error when h was still running past Options.Grace after the context was done.
func Serve(h http.Handler, req *http.Request, opts Options) (*Response, error) {
	uri := req.RequestURI
	if uri == "" {
		uri = req.URL.RequestURI()
	}
	w := &responseWriter{header: http.Header{}, head: req.Method == http.MethodHead, stream: opts.Stream}
	done := make(chan *PanicError, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- &PanicError{Method: req.Method, RequestURI: uri, Value: p, Stack: debug.Stack()}
				return
			}
			done <- nil
		}()
		h.ServeHTTP(w, req)
	}()

	finish := func(perr *PanicError) (*Response, error) {
		if perr != nil {
			w.abandon()
			return nil, perr
		}
		return w.response(), nil
	}
	ctx := req.Context()
	select {
	case perr := <-done:
		return finish(perr)
	case <-ctx.Done():
	}
	if opts.Grace > 0 {
		// A timer that is stopped, not time.After: under js/wasm a pending Go timer keeps a JavaScript
		// timeout armed, which keeps node running long after the last request.
		t := time.NewTimer(opts.Grace)
		defer t.Stop()
		select {
		case perr := <-done:
			return finish(perr)
		case <-t.C:
		}
	}
	select {
	case perr := <-done: // returned as the context ended
		return finish(perr)
	default:
	}
	w.abandon()
	return nil, fmt.Errorf("%s %s: %w (the handler is still running)", req.Method, uri, ctx.Err())
}

// Transport is an http.RoundTripper that serves every request by Handler with Serve, for an http.Client
// that talks to a handler without a listener (tests, GOOS=js). Any URL with a host will do: the host becomes
// the request's Host. Request and response bodies are read whole, so it does not stream. A panicking handler
// is an error for that request, with the handler's stack in its message. Set the client's Timeout or the
// request's context to give up on a handler that hangs.
type Transport struct {
	Handler http.Handler
}

// RoundTrip serves req. It does not modify req, and closes its body.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	header := req.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	header.Set("Host", host)
	in, err := NewRequest(req.Context(), req.Method, req.URL.RequestURI(), header, body)
	if err != nil {
		return nil, err
	}
	resp, err := Serve(t.Handler, in, Options{})
	if perr, ok := errors.AsType[*PanicError](err); ok {
		return nil, fmt.Errorf("%w\n%s", err, perr.Stack)
	}
	if err != nil {
		return nil, err
	}
	return resp.HTTP(req), nil
}
