package inproc

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// semantics are the cases of Serve's response. Natively, each also runs through a real net/http server on
// loopback, which must answer the same: the point of the package is to be that server without the socket.
var semantics = []struct {
	name    string
	method  string
	handler http.HandlerFunc
	status  int
	header  http.Header
	body    string
	err     string // a substring of Serve's error; the real client gets an error too
}{
	{
		name:    "no WriteHeader is 200, and an HTML body is sniffed",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html><body>hi") },
		status:  200, header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, body: "<html><body>hi",
	},
	{
		name:    "JSON without a Content-Type is sniffed as text",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"a":1}`) },
		status:  200, header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: `{"a":1}`,
	},
	{
		name: "a Content-Type the handler set is kept",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "<html>")
		},
		status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: "<html>",
	},
	{
		name: "Content-Type present with no value: not sniffed, not sent",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			io.WriteString(w, "<html>")
		},
		status: 200, header: http.Header{}, body: "<html>",
	},
	{
		name: "X-Content-Type-Options: nosniff does not stop net/http sniffing",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Content-Type-Options", "nosniff")
			io.WriteString(w, "<html>")
		},
		status: 200, header: http.Header{"X-Content-Type-Options": {"nosniff"}, "Content-Type": {"text/html; charset=utf-8"}}, body: "<html>",
	},
	{
		name: "a Content-Encoding stops sniffing",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "identity")
			io.WriteString(w, "<html>")
		},
		status: 200, header: http.Header{"Content-Encoding": {"identity"}}, body: "<html>",
	},
	{
		name: "a Transfer-Encoding stops sniffing and is not part of the response",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Transfer-Encoding", "chunked")
			io.WriteString(w, "<html>")
		},
		status: 200, header: http.Header{}, body: "<html>",
	},
	{
		name:    "no body, no Content-Type",
		handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) },
		status:  202, header: http.Header{},
	},
	{
		name:    "an empty write sniffs nothing",
		handler: func(w http.ResponseWriter, r *http.Request) { w.Write(nil) },
		status:  200, header: http.Header{},
	},
	{
		name: "the header is frozen at WriteHeader",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-A", "1")
			w.WriteHeader(http.StatusCreated)
			w.Header().Set("X-A", "2")
			w.Header().Set("X-B", "late")
			io.WriteString(w, "x")
		},
		status: 201, header: http.Header{"X-A": {"1"}, "Content-Type": {"text/plain; charset=utf-8"}}, body: "x",
	},
	{
		name: "the header is frozen at the first Write",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-A", "1")
			io.WriteString(w, "x")
			w.Header().Set("X-A", "2")
			w.Header().Set("Content-Type", "application/json")
		},
		status: 200, header: http.Header{"X-A": {"1"}, "Content-Type": {"text/plain; charset=utf-8"}}, body: "x",
	},
	{
		name: "the sniffed bytes are all those written before the header goes out",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "\n")
			io.WriteString(w, "<html><body>")
		},
		status: 200, header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, body: "\n<html><body>",
	},
	{
		name: "a Flush sends the header: only what came before it is sniffed",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hello ")
			w.(http.Flusher).Flush()
			io.WriteString(w, "<html>")
		},
		status: 200, header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: "hello <html>",
	},
	{
		name: "a Flush before any body: no Content-Type at all",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			io.WriteString(w, "<html>")
		},
		status: 200, header: http.Header{}, body: "<html>",
	},
	{
		name: "a repeated header stays a list, in order",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Add("Warning", `299 - "one"`)
			w.Header().Add("Warning", `299 - "two"`)
			io.WriteString(w, "{}")
		},
		status: 200, header: http.Header{"Content-Type": {"application/json"}, "Warning": {`299 - "one"`, `299 - "two"`}}, body: "{}",
	},
	{
		name: "a second WriteHeader is ignored",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
			w.WriteHeader(http.StatusInternalServerError)
		},
		status: 201, header: http.Header{},
	},
	{
		name: "a 1xx status is not the final one, and the header it sent stays",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusConflict)
		},
		status: 409, header: http.Header{"Link": {"</style.css>; rel=preload"}},
	},
	{
		name: "no WriteHeader after a 1xx is 200",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			io.WriteString(w, "x")
		},
		status: 200, header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, body: "x",
	},
	{
		name: "204 takes no body nor Content-Length, and keeps its Content-Type",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "2")
			w.WriteHeader(http.StatusNoContent)
			io.WriteString(w, "{}")
		},
		status: 204, header: http.Header{"Content-Type": {"application/json"}},
	},
	{
		name: "304 takes no body, Content-Type nor Content-Length",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "2")
			w.Header().Set("Etag", `"1"`)
			w.WriteHeader(http.StatusNotModified)
			io.WriteString(w, "{}")
		},
		status: 304, header: http.Header{"Etag": {`"1"`}},
	},
	{
		name:    "HEAD: the body is sniffed, not sent",
		method:  http.MethodHead,
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html><body>hi") },
		status:  200, header: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
	},
	{
		name: "a Content-Length the handler set is kept",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "2")
			io.WriteString(w, "ok")
		},
		status: 200, header: http.Header{"Content-Length": {"2"}, "Content-Type": {"text/plain; charset=utf-8"}}, body: "ok",
	},
	{
		name:    "an invalid status code panics, as net/http's WriteHeader does",
		handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(42) },
		err:     "panic serving GET /x: invalid WriteHeader code 42",
	},
	{
		name: "a panic is an error, even after the header went out",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			panic("boom")
		},
		err: "panic serving GET /x: boom",
	},
}

func TestServe(t *testing.T) {
	for _, tc := range semantics {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req, err := NewRequest(context.Background(), method, "/x", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := Serve(tc.handler, req, Options{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if _, ok := errors.AsType[*PanicError](err); !ok {
					t.Errorf("err is a %T, want a *PanicError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status || string(resp.Body) != tc.body || !equalHeader(resp.Header, tc.header) {
				t.Errorf("got %d %v %q\nwant %d %v %q", resp.StatusCode, resp.Header, resp.Body, tc.status, tc.header, tc.body)
			}
		})
	}
}

// TestServeAsNetHTTP checks the cases' expectations against net/http itself.
func TestServeAsNetHTTP(t *testing.T) {
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no sockets")
	}
	for _, tc := range semantics {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(tc.handler)
			srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panics and superfluous WriteHeaders are meant
			srv.Start()
			defer srv.Close()
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req, _ := http.NewRequest(method, srv.URL+"/x", nil)
			resp, err := srv.Client().Do(req)
			if tc.err != "" {
				// The connection drops: before the response, or (after a Flush) in the middle of its body.
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if err == nil {
					t.Errorf("net/http answered %d in full, want an error", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			// What a connection adds: the date, and a length for a body it sent whole.
			resp.Header.Del("Date")
			if tc.header.Get("Content-Length") == "" {
				resp.Header.Del("Content-Length")
			}
			if resp.StatusCode != tc.status || string(body) != tc.body || !equalHeader(resp.Header, tc.header) {
				t.Errorf("net/http: %d %v %q\nwant %d %v %q", resp.StatusCode, resp.Header, body, tc.status, tc.header, tc.body)
			}
		})
	}
}

func TestWriteBodyNotAllowed(t *testing.T) {
	for _, status := range []int{http.StatusNoContent, http.StatusNotModified} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var n int
			var err error
			req, _ := NewRequest(context.Background(), "GET", "/", nil, nil)
			if _, serr := Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				n, err = w.Write([]byte("x"))
			}), req, Options{}); serr != nil {
				t.Fatal(serr)
			}
			if n != 0 || !errors.Is(err, http.ErrBodyNotAllowed) {
				t.Errorf("Write = %d, %v; want 0, http.ErrBodyNotAllowed", n, err)
			}
		})
	}
}

func TestNewRequest(t *testing.T) {
	tests := []struct {
		name                 string
		method, target       string
		header               http.Header
		body                 string
		wantMethod, wantPath string
		wantQuery, wantHost  string
		wantHeader           http.Header
		wantErr              string
	}{
		{
			name: "origin form with a query", method: "GET", target: "/apis/x/v1/things?fieldManager=a%3Db&limit=1",
			wantMethod: "GET", wantPath: "/apis/x/v1/things", wantQuery: "fieldManager=a%3Db&limit=1", wantHost: "localhost",
			wantHeader: http.Header{},
		},
		{
			name: "the header's Host is the request's, and leaves the header; keys are canonical", method: "POST", target: "/x",
			header: http.Header{"Host": {"engine"}, "content-type": {"application/json"}, "Accept": {"a", "b"}}, body: `{"a":1}`,
			wantMethod: "POST", wantPath: "/x", wantHost: "engine",
			wantHeader: http.Header{"Content-Type": {"application/json"}, "Accept": {"a", "b"}},
		},
		{
			name: "an empty method is GET", target: "/", wantMethod: "GET", wantPath: "/", wantHost: "localhost", wantHeader: http.Header{},
		},
		{name: "a target that is not a path", method: "GET", target: "apis", wantErr: "want an absolute path"},
		{name: "an absolute URL is not origin form", method: "GET", target: "http://engine/apis", wantErr: "want an absolute path"},
		{name: "a method that is not a token", method: "GE T", target: "/", wantErr: "invalid method"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := NewRequest(context.Background(), tc.method, tc.target, tc.header, []byte(tc.body))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(req.Body)
			if req.Method != tc.wantMethod || req.URL.Path != tc.wantPath || req.URL.RawQuery != tc.wantQuery ||
				req.URL.Host != "" || req.URL.Scheme != "" || req.RequestURI != tc.target || req.Host != tc.wantHost ||
				req.Proto != "HTTP/1.1" || req.RemoteAddr == "" || !equalHeader(req.Header, tc.wantHeader) ||
				req.ContentLength != int64(len(tc.body)) || string(body) != tc.body {
				t.Errorf("got %s %s (URI %q, host %q, proto %s, remote %q, length %d) %v body %q",
					req.Method, req.URL, req.RequestURI, req.Host, req.Proto, req.RemoteAddr, req.ContentLength, req.Header, body)
			}
			if tc.body == "" && req.Body != http.NoBody {
				t.Errorf("empty body is %T, want http.NoBody", req.Body)
			}
		})
	}
}

func TestServeContextDone(t *testing.T) {
	tests := []struct {
		name    string
		grace   time.Duration
		handler func(release <-chan struct{}) http.HandlerFunc
		body    string
		err     bool
	}{
		{
			name:  "a handler that stops with its context answers within the grace",
			grace: 10 * time.Second,
			handler: func(<-chan struct{}) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, "started\n")
					<-r.Context().Done()
					io.WriteString(w, "stopped\n")
				}
			},
			body: "started\nstopped\n",
		},
		{
			name: "without a grace Serve gives up at once",
			handler: func(release <-chan struct{}) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { <-release }
			},
			err: true,
		},
		{
			name:  "a handler that ignores its context is left running after the grace",
			grace: 20 * time.Millisecond,
			handler: func(release <-chan struct{}) http.HandlerFunc {
				return func(w http.ResponseWriter, r *http.Request) { <-release }
			},
			err: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			req, _ := NewRequest(ctx, "GET", "/x", nil, nil)
			resp, err := Serve(tc.handler(release), req, Options{Grace: tc.grace})
			if tc.err {
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "GET /x") {
					t.Errorf("err = %v, want the context's, naming the request", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != tc.body {
				t.Errorf("body %q, want %q", resp.Body, tc.body)
			}
		})
	}
}

// TestLateWrites: a handler Serve gave up on writes on, concurrently with the caller reading; run with -race.
func TestLateWrites(t *testing.T) {
	release, wrote := make(chan struct{}), make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := NewRequest(ctx, "GET", "/x", nil, nil)
	_, err := Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("X-Late", "1")
		w.WriteHeader(http.StatusTeapot)
		_, err := io.WriteString(w, "late")
		w.(http.Flusher).Flush()
		wrote <- err
	}), req, Options{})
	if err == nil {
		t.Fatal("want an error for a handler still running")
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Errorf("a late write failed: %v; it is dropped as a socket would take it", err)
	}
}

func TestStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen []string
	var afterStop []error
	req, _ := NewRequest(ctx, "GET", "/watch", nil, nil)
	resp, err := Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for _, ev := range []string{"a\n", "b\n"} {
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
		_, err := io.WriteString(w, "c\n") // after the caller stopped reading
		afterStop = append(afterStop, err)
	}), req, Options{Grace: 10 * time.Second, Stream: func(p []byte) bool {
		seen = append(seen, string(p))
		if string(p) == "b\n" {
			cancel()
			return false
		}
		return true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != "a\nb\n" || strings.Join(seen, "") != "a\nb\n" || len(afterStop) != 1 || afterStop[0] != nil {
		t.Errorf("body %q, streamed %q, write after stop %v", resp.Body, seen, afterStop)
	}
}

func TestTransport(t *testing.T) {
	var seen *http.Request
	c := &http.Client{Transport: Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		w.Header().Add("Warning", `299 - "one"`)
		w.Header().Add("Warning", `299 - "two"`)
		w.WriteHeader(299)
		io.WriteString(w, "<html>")
	})}}
	for _, method := range []string{"GET", "HEAD"} {
		t.Run(method, func(t *testing.T) {
			req, _ := http.NewRequest(method, "http://engine:8080/a?b=c", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := "<html>"
			if method == "HEAD" {
				want = ""
			}
			if resp.Status != "299 status code 299" || resp.Request != req || string(body) != want ||
				!equalHeader(resp.Header, http.Header{"Warning": {`299 - "one"`, `299 - "two"`}, "Content-Type": {"text/html; charset=utf-8"}}) {
				t.Errorf("response %q %v %q", resp.Status, resp.Header, body)
			}
			if seen.Host != "engine:8080" || seen.RequestURI != "/a?b=c" || seen.Header.Get("Host") != "" {
				t.Errorf("handler saw host %q, URI %q, header %v", seen.Host, seen.RequestURI, seen.Header)
			}
		})
	}
	t.Run("a panic is an error with the handler's stack", func(t *testing.T) {
		c := &http.Client{Transport: Transport{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })}}
		_, err := c.Get("http://engine/x")
		if !errors.Is(err, http.ErrAbortHandler) || !strings.Contains(err.Error(), "inproc_test.go") {
			t.Errorf("err = %v, want the panic and its stack", err)
		}
	})
}

func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, vs := range a {
		if strings.Join(vs, "\x00") != strings.Join(b[k], "\x00") || len(vs) != len(b[k]) {
			return false
		}
	}
	return true
}
