package playground

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"crdplay/internal/inproc"
)

// handlerGrace is how long the engine may go on once the evaluation's context is done: it answers at once
// (with an error Status), so one that does not is stuck, and the evaluation must not wait for it.
const handlerGrace = 5 * time.Second

// response is one answer of the engine.
type response struct {
	status   int
	header   http.Header
	body     []byte
	warnings []string
}

// do sends one request to the engine in-process (inproc: as over a real connection), and records it in the
// evaluation's trace when asked to.
func (ev *evaluation) do(method, path, contentType, accept string, body []byte) *response {
	header := http.Header{"User-Agent": {ev.s.userAgent}}
	if contentType != "" {
		header.Set("Content-Type", contentType)
	}
	if accept != "" {
		header.Set("Accept", accept)
	}
	req, err := inproc.NewRequest(ev.ctx, method, path, header, body)
	if err != nil {
		// Only a malformed path or method, which the playground builds itself.
		return &response{status: http.StatusBadRequest, body: []byte(err.Error())}
	}
	start := time.Now()
	resp, err := inproc.Serve(ev.st.handler, req, inproc.Options{Grace: handlerGrace})
	ev.engineTime += time.Since(start)
	if err != nil {
		// A panic past the engine's own recovery (which answers 500), or a handler stuck past its context:
		// a fault of ours, not an answer. Evaluate's recover reports it and starts over on a new engine.
		if perr, ok := errors.AsType[*inproc.PanicError](err); ok {
			err = fmt.Errorf("%w\n%s", err, perr.Stack)
		}
		panic(err)
	}
	r := &response{status: resp.StatusCode, header: resp.Header, body: resp.Body}
	if hs := resp.Header.Values("Warning"); len(hs) > 0 {
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
