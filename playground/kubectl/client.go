package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"crdplay/internal/inproc"
)

// userAgent is the User-Agent real kubectl v1.37.2 sends from Linux. The API server derives the managedFields
// manager from it when a request names no fieldManager (kubectl scale, delete), so it is kept as it is.
const userAgent = "kubectl/v1.37.2 (linux/amd64) kubernetes/$Format"

// Content types kubectl sends and accepts.
const (
	acceptJSON      = "application/json"
	acceptAny       = "application/json, */*"
	acceptDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
	acceptTable     = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)

// Exchange is one HTTP request the command made and the response it got, for the playground's raw HTTP log.
type Exchange struct {
	Method string `json:"method"`
	// Path is the URL path, e.g. /apis/stable.example.com/v1/namespaces/default/crontabs.
	Path string `json:"path"`
	// Query is the raw query without '?', e.g. "limit=500"; empty when there is none.
	Query string `json:"query"`
	// RequestHeaders holds the headers that matter to the server's answer: Accept and Content-Type.
	RequestHeaders map[string]string `json:"requestHeaders,omitempty"`
	RequestBody    string            `json:"requestBody"`
	Status         int               `json:"status"`
	// ResponseHeaders holds Content-Type and the Warning headers (joined by newlines) of the response.
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	ResponseBody    string            `json:"responseBody"`
}

// request describes one call to the API, with what client-go's rest.Request knows about it to build an error
// message when the server does not answer with a Status.
type request struct {
	method      string
	path        string
	query       url.Values
	accept      string
	contentType string
	body        []byte

	// resource and name are what the request is about, for errors built from non-Status responses.
	resource schema.GroupResource
	name     string
}

// response is what the server answered.
type response struct {
	status int
	header http.Header
	body   []byte
}

// client sends requests to the handler and records them.
type client struct {
	ctx      context.Context
	h        http.Handler
	log      *[]Exchange
	warnings func(string)
	// stream, when set, reads the body of the next request as the handler writes it (watches).
	stream func(p []byte) (more bool)
}

// handlerGrace is how long the handler may go on once the request's context is done. A watch ends when its
// context does, and its response is what it streamed until then; the engine stops at once, so a handler
// that does not is stuck.
const handlerGrace = 5 * time.Second

// do sends r and returns the response whatever its status; err is only for a request that could not be
// made or answered at all (a panic in the handler: in the browser, the Go program serves every later
// request too, so it must not end).
func (c *client) do(r request) (*response, error) {
	u := r.path
	q := ""
	if len(r.query) > 0 {
		q = encodeQuery(r.query)
		u += "?" + q
	}
	header := http.Header{"User-Agent": {userAgent}}
	hdrs := map[string]string{}
	if r.accept != "" {
		header.Set("Accept", r.accept)
		hdrs["Accept"] = r.accept
	}
	if r.contentType != "" {
		header.Set("Content-Type", r.contentType)
		hdrs["Content-Type"] = r.contentType
	}
	req, err := inproc.NewRequest(c.ctx, r.method, u, header, r.body)
	if err != nil {
		return nil, err
	}
	res, err := inproc.Serve(c.h, req, inproc.Options{Grace: handlerGrace, Stream: c.stream})
	if err != nil {
		return nil, fmt.Errorf("the API server: %w", err)
	}
	resp := &response{status: res.StatusCode, header: res.Header, body: res.Body}
	ex := Exchange{
		Method:         r.method,
		Path:           r.path,
		Query:          q,
		RequestHeaders: hdrs,
		RequestBody:    string(r.body),
		Status:         resp.status,
		ResponseBody:   string(resp.body),
	}
	rh := map[string]string{}
	if ct := resp.header.Get("Content-Type"); ct != "" {
		rh["Content-Type"] = ct
	}
	if ws := resp.header.Values("Warning"); len(ws) > 0 {
		rh["Warning"] = strings.Join(ws, "\n")
	}
	if len(rh) > 0 {
		ex.ResponseHeaders = rh
	}
	*c.log = append(*c.log, ex)
	// client-go hands every warning of every response to kubectl's warning writer as it arrives.
	for _, v := range resp.header.Values("Warning") {
		if msg, ok := parseWarning(v); ok && c.warnings != nil {
			c.warnings(msg)
		}
	}
	return resp, nil
}

// call sends r and converts a failed response into the error client-go returns for it.
func (c *client) call(r request) ([]byte, error) {
	resp, err := c.do(r)
	if err != nil {
		return nil, err
	}
	if resp.status < http.StatusOK || resp.status > http.StatusPartialContent {
		return nil, responseError(r, resp)
	}
	// A 2xx body that is a failed Status is an error too (client-go's transformResponse).
	if st, ok := decodeStatus(resp.body); ok && st.Status == metav1.StatusFailure {
		return nil, &apierrors.StatusError{ErrStatus: *st}
	}
	return resp.body, nil
}

// responseError is client-go's error for a non-2xx response: the Status the server sent, or a generic
// error built from the status code.
func responseError(r request, resp *response) error {
	if st, ok := decodeStatus(resp.body); ok {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	message := "unknown"
	ct := resp.header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/") || ct == "" {
		text := resp.body
		if len(text) > 1024 {
			text = text[:1024]
		}
		message = strings.TrimSpace(string(text))
	}
	retryAfter := 0
	if s := resp.header.Get("Retry-After"); s != "" {
		retryAfter, _ = strconv.Atoi(s)
	}
	return apierrors.NewGenericServerResponse(resp.status, r.method, r.resource, r.name, message, retryAfter, true)
}

// decodeStatus reads body as a metav1.Status if it is one.
func decodeStatus(body []byte) (*metav1.Status, bool) {
	var probe struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if json.Unmarshal(body, &probe) != nil || probe.Kind != "Status" {
		return nil, false
	}
	st := &metav1.Status{}
	if json.Unmarshal(body, st) != nil {
		return nil, false
	}
	return st, true
}

// parseWarning extracts the text of a Warning header (RFC 7234: `299 - "text"`).
func parseWarning(v string) (string, bool) {
	v = strings.TrimSpace(v)
	fields := strings.SplitN(v, " ", 3)
	if len(fields) != 3 || fields[0] != "299" {
		return "", false
	}
	rest := strings.TrimSpace(fields[2])
	if !strings.HasPrefix(rest, `"`) {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			if i+1 < len(rest) {
				i++
				b.WriteByte(rest[i])
			}
		case '"':
			return b.String(), true
		default:
			b.WriteByte(rest[i])
		}
	}
	return "", false
}

// encodeQuery encodes query parameters in the order client-go's request builder writes them: sorted by key,
// as url.Values.Encode does.
func encodeQuery(q url.Values) string { return q.Encode() }

// watchEvent is one event of a watch stream.
type watchEvent struct {
	Type   string                 `json:"type"`
	Object map[string]interface{} `json:"object"`
}

// watch runs a watch request and hands each event to stop as it arrives; the watch ends when stop returns
// true, when the server ends it, or after wait. A watch never ends by itself, and the handler runs in this
// process, so the stream is read as the handler writes it, one JSON object per line, and the request's
// context is cancelled to end it. The response's body is the stream up to the write that held the last
// event read.
func (c *client) watch(r request, wait time.Duration, stop func(watchEvent) bool) (*response, error) {
	ctx, cancel := context.WithTimeout(c.ctx, wait)
	defer cancel()
	var pending []byte
	cc := *c
	cc.ctx = ctx
	cc.stream = func(p []byte) bool {
		pending = append(pending, p...)
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				return true
			}
			line := pending[:i]
			pending = pending[i+1:]
			var ev watchEvent
			if json.Unmarshal(line, &ev) == nil && stop(ev) {
				// kubectl stops reading: what the handler writes from now on is dropped.
				cancel()
				return false
			}
		}
	}
	return cc.do(r)
}
