package inproc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

const (
	// defaultHost is the request's Host when the header names none.
	defaultHost = "localhost"
	// remoteAddr is the client address the handler sees: there is no connection, and a loopback address is
	// what a local client would have.
	remoteAddr = "127.0.0.1:0"
)

// NewRequest returns the request net/http's server hands a handler for method, target, header and body
// sent by a client over HTTP/1.1. target is in origin form, a path with an optional query ("/apis?limit=1"),
// as on the request line. The header's keys are canonicalized as the server reads them; its Host, if any, is
// the request's Host (else "localhost") and is taken out of the header, as the server does. The body is
// http.NoBody when empty, and ContentLength is its length. An empty method is GET, as with http.NewRequest.
// NewRequest takes ownership of header.
func NewRequest(ctx context.Context, method, target string, header http.Header, body []byte) (*http.Request, error) {
	if !strings.HasPrefix(target, "/") {
		return nil, fmt.Errorf("target %q: want an absolute path such as /apis", target)
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		return nil, err
	}
	// http.NewRequestWithContext checks the method as the server does (a token) and fills in the protocol.
	req, err := http.NewRequestWithContext(ctx, method, target, nil)
	if err != nil {
		return nil, err
	}
	req.URL = u
	req.RequestURI = target
	req.RemoteAddr = remoteAddr
	req.Header = make(http.Header, len(header))
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Host = defaultHost
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	req.Header.Del("Host")
	req.ContentLength = int64(len(body))
	req.Body = http.NoBody
	if len(body) > 0 {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	return req, nil
}
