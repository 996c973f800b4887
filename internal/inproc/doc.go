// Package inproc serves an http.Handler in the same process, with no listener and no connection, and gives
// the handler and its caller what a real HTTP round trip through net/http would give them. It is how the
// playground, its kubectl, the browser bridge (wasm/) and the oracle replay (internal/oraclecase) talk to the
// engine, so that the engine sees one kind of request and they all read one kind of response.
//
// NewRequest builds the *http.Request net/http's server hands a handler: origin-form URL, RequestURI, Host
// taken out of the header, a body that is never nil, a Content-Length. Serve runs the handler on it and
// returns the response a client reads:
//   - the header is the one the handler had at WriteHeader (or at its first Write): later changes to it are
//     not sent, as on a connection, where it is already on the wire;
//   - Content-Type, when the handler set none, is sniffed from the first bytes of the body with
//     http.DetectContentType, under net/http's rules: not for a body-less status, nor when the header has a
//     Content-Encoding or a Transfer-Encoding, nor when the handler put the key with no value. The bytes
//     sniffed are those written before the first Flush, as net/http sends the header then, or the first
//     512 of the body when the handler never flushes. net/http does not look at X-Content-Type-Options:
//     nosniff, and neither does Serve;
//   - a header the handler added several times (Warning) stays a list, in the order added;
//   - an invalid status code panics as net/http's WriteHeader does; a 1xx status other than 101 is not the
//     final one; 1xx, 204 and 304 take no body (Write returns http.ErrBodyNotAllowed) and lose the headers
//     net/http suppresses for them; a HEAD response has no body;
//   - a panicking handler is an error for that request (a *PanicError), as net/http's server drops the
//     connection, and never ends the caller's program: the browser's Go program serves every later request.
//
// What only a connection adds is left out: Date, Connection, Content-Length when the handler set none, and
// Transfer-Encoding, since the body is handed over whole.
//
// The handler runs on a goroutine of its own, so that a caller can stop waiting for one that ignores its
// cancelled context (Options.Grace); what such a handler writes afterwards is dropped, under a mutex, never
// raced. The writer implements http.Flusher, and Options.Stream hands the body to the caller as it is written,
// for a watch. Transport puts Serve behind an http.RoundTripper for code that wants an *http.Client.
//
// The package builds for GOOS=js GOARCH=wasm and imports neither syscall/js nor net/http/httptest.
package inproc
