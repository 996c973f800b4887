package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"crdplay/server"
)

// TestScripts runs the HTTP scripts in testdata/script against a server built by NewHandler, in the manner of
// golang.org/x/website's webtest. A script is a list of requests, each followed by checks:
//
//	# comment
//	GET /path                (or POST, PUT, PATCH, DELETE)
//	reqheader Name: value    (optional, before the checks)
//	reqbody one line of body (optional)
//	code == 404
//	header Content-Type contains json
//	body contains text
//	body !contains text
//
// Every request goes to one handler per file, so a script may create something and then read it back.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "script", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/script")
	}
	// Every script runs on both storages: what a request means must not depend on where objects are kept.
	etcdEndpoint := startEtcd(t)
	for _, file := range files {
		for _, storage := range []string{server.StorageMemory, server.StorageEtcd} {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".txt")+"/"+storage, func(t *testing.T) {
				opts := server.Options{Storage: storage}
				if storage == server.StorageEtcd {
					// Scripts create the same objects: each one gets a clean etcd.
					opts.Etcd.Endpoints = []string{etcdEndpoint}
					wipeEtcd(t, etcdEndpoint)
				}
				h, err := server.NewHandler(opts)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				srv := httptest.NewServer(h)
				defer srv.Close()
				runScript(t, file, srv.URL)
			})
		}
	}
}

// scriptRequest is one request of a script and the checks on its response.
type scriptRequest struct {
	line         int // where the request starts, for messages
	method, path string
	header       http.Header
	body         string
	checks       []scriptCheck
	gotCode      int
	gotHeader    http.Header
	gotBody      string
}

type scriptCheck struct {
	line int
	text string
}

func runScript(t *testing.T, file, baseURL string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []*scriptRequest
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "GET", "POST", "PUT", "PATCH", "DELETE":
			reqs = append(reqs, &scriptRequest{line: n, method: verb, path: rest, header: http.Header{}})
			continue
		}
		if len(reqs) == 0 {
			t.Fatalf("%s:%d: %q before the first request", file, n, line)
		}
		r := reqs[len(reqs)-1]
		switch verb {
		case "reqheader":
			k, v, ok := strings.Cut(rest, ":")
			if !ok || len(r.checks) > 0 {
				t.Fatalf("%s:%d: want \"reqheader Name: value\" before the checks", file, n)
			}
			r.header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		case "reqbody":
			r.body = rest
		default:
			r.checks = append(r.checks, scriptCheck{n, line})
		}
	}
	if len(reqs) == 0 {
		t.Fatalf("%s: no requests", file)
	}
	for _, r := range reqs {
		req, err := http.NewRequest(r.method, baseURL+r.path, strings.NewReader(r.body))
		if err != nil {
			t.Fatalf("%s:%d: %v", file, r.line, err)
		}
		req.Header = r.header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s:%d: %v", file, r.line, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s:%d: reading body: %v", file, r.line, err)
		}
		r.gotCode, r.gotHeader, r.gotBody = resp.StatusCode, resp.Header, string(body)
		for _, c := range r.checks {
			if err := r.check(c.text); err != nil {
				t.Errorf("%s:%d: %s %s: %s: %v\nbody:\n%s", file, c.line, r.method, r.path, c.text, err, r.gotBody)
			}
		}
	}
}

// check evaluates one check line against the response.
func (r *scriptRequest) check(line string) error {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "code" && f[1] == "==":
		want, err := strconv.Atoi(f[2])
		if err != nil {
			return errors.New("bad status code")
		}
		if r.gotCode != want {
			return errors.New("got " + strconv.Itoa(r.gotCode))
		}
	case len(f) >= 3 && f[0] == "body" && (f[1] == "contains" || f[1] == "!contains"):
		text := strings.SplitN(line, f[1]+" ", 2)[1]
		if strings.Contains(r.gotBody, text) != (f[1] == "contains") {
			return errors.New("check failed")
		}
	case len(f) >= 4 && f[0] == "header" && f[2] == "contains":
		text := strings.SplitN(line, " contains ", 2)[1]
		if got := r.gotHeader.Get(f[1]); !strings.Contains(got, text) {
			return errors.New("got " + strconv.Quote(got))
		}
	default:
		return errors.New("unknown check")
	}
	return nil
}

func TestNewHandlerRejectsUnknownStorage(t *testing.T) {
	for _, s := range []string{"Etcd", "Memory", "mem"} {
		_, err := server.NewHandler(server.Options{Storage: s})
		if err == nil || !strings.Contains(err.Error(), `unsupported storage "`+s+`"`) {
			t.Errorf("Storage %q: got error %v, want unsupported storage", s, err)
		}
	}
	for _, s := range []string{"", server.StorageMemory} {
		if _, err := server.NewHandler(server.Options{Storage: s}); err != nil {
			t.Errorf("Storage %q: %v", s, err)
		}
	}
}

func TestAccessLog(t *testing.T) {
	var buf bytes.Buffer
	h, err := server.NewHandler(server.Options{Log: slog.New(slog.NewTextHandler(&buf, nil)), LogRequests: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/no-such-path?x=1", nil))
	// The engine's answer for an unknown path is 404, today and in kube-apiserver.
	for _, want := range []string{"method=GET", "uri=\"/no-such-path?x=1\"", "status=404"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log %q lacks %s", buf.String(), want)
		}
	}
}

// TestServeShutdown checks both halves of Serve's shutdown: a request in flight completes, and one that would
// run forever (like a watch) has its context cancelled once the grace period is over.
func TestServeShutdown(t *testing.T) {
	entered := make(chan string, 2)
	release := make(chan struct{}) // lets the short request finish, once shutdown has begun
	foreverDone := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		entered <- "short"
		<-release
		io.WriteString(w, "done")
	})
	mux.HandleFunc("/forever", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		entered <- "forever"
		<-r.Context().Done()
		close(foreverDone)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Long enough that the short request finishes well within it even on a loaded machine.
	const grace = 2 * time.Second
	served := make(chan error, 1)
	go func() { served <- server.Serve(ctx, ln, mux, grace) }()

	base := "http://" + ln.Addr().String()
	short := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/short")
		if err != nil {
			short <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		short <- string(b)
	}()
	resp, err := http.Get(base + "/forever")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for range 2 {
		<-entered
	}

	start := time.Now()
	cancel()
	time.Sleep(50 * time.Millisecond) // let Shutdown begin before the short request ends
	close(release)
	if got := <-short; got != "done" {
		t.Errorf("request in flight at shutdown: got %q, want it to complete", got)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(grace + 10*time.Second):
		t.Fatal("Serve did not return after the grace period")
	}
	if d := time.Since(start); d < grace {
		t.Errorf("Serve returned after %v, before the grace period of %v", d, grace)
	}
	select {
	case <-foreverDone:
	case <-time.After(5 * time.Second):
		t.Error("the endless request's context was not cancelled")
	}
	if _, err := http.Get(base + "/short"); err == nil {
		t.Error("server still accepts requests after Serve returned")
	}
}
