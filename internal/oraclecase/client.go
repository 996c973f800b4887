package oraclecase

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime/debug"
)

// HandlerClient returns an http.Client that serves every request by calling
// h.ServeHTTP in-process, without a listener, so cases run where there are no
// sockets (tests, GOOS=js). Any URL with a host will do as base URL.
//
// Requests and responses are buffered whole (no streaming or watches). The
// response carries the handler's status, headers (all values, e.g. several
// Warning headers) and body. A panicking handler turns into an error for
// that request instead of taking the test binary down, much as net/http's
// server drops the connection. Like the oracle's client, it gives up on a
// request after 60 s.
func HandlerClient(h http.Handler) *http.Client {
	return &http.Client{Transport: handlerTransport{h}, Timeout: clientTimeout}
}

type handlerTransport struct {
	h http.Handler
}

// remoteAddr is what the handler sees as the client's address; it is the
// documentation address httptest.NewRequest uses too.
const remoteAddr = "192.0.2.1:1234"

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}

	// Build the request as net/http's server would hand it over: a fresh
	// copy (a RoundTripper must not modify req), origin-form URL, Host
	// split out, a non-nil body.
	in := req.Clone(req.Context())
	in.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	in.RequestURI = req.URL.RequestURI()
	in.Host = req.Host
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1
	in.RemoteAddr = remoteAddr
	in.ContentLength = int64(len(body))
	in.Body = http.NoBody
	if len(body) > 0 {
		in.Body = io.NopCloser(bytes.NewReader(body))
	}
	in.GetBody = nil
	in.Close = false

	rec := httptest.NewRecorder()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("handler panicked on %s %s: %v\n%s", req.Method, in.RequestURI, p, debug.Stack())
			}
		}()
		t.h.ServeHTTP(rec, in)
		done <- nil
	}()
	// The handler runs on its own goroutine so that the client's timeout
	// still works when a handler hangs; rec is only read after it returned.
	select {
	case err := <-done:
		if err != nil {
			return nil, err
		}
	case <-req.Context().Done():
		return nil, fmt.Errorf("%s %s: %w (handler still running)", req.Method, in.RequestURI, req.Context().Err())
	}

	resp := rec.Result()
	resp.Request = req
	if req.Method == http.MethodHead {
		// net/http's server discards a HEAD response's body.
		resp.Body = http.NoBody
	}
	return resp, nil
}
