package oraclecase

import (
	"net/http"

	"crdplay/internal/inproc"
)

// HandlerClient returns an http.Client that serves every request by calling
// h.ServeHTTP in-process, without a listener, so cases run where there are no
// sockets (tests, GOOS=js). Any URL with a host will do as base URL.
//
// It is an inproc.Transport: the handler gets the request net/http's server
// would hand it, and the client the response a real connection would carry
// (status, every value of a repeated header such as Warning, a Content-Type
// sniffed when the handler set none), buffered whole, so there is no
// streaming and no watch. A panicking handler turns into an error for that
// request instead of taking the test binary down, much as net/http's server
// drops the connection. Like the oracle's client, it gives up on a request
// after 60 s.
func HandlerClient(h http.Handler) *http.Client {
	return &http.Client{Transport: inproc.Transport{Handler: h}, Timeout: clientTimeout}
}
