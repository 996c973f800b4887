package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSite checks what the browser depends on: types (instantiateStreaming wants application/wasm), the
// gzip-encoded wasm with both lengths (the worker's progress), and nothing else served by mistake.
func TestSite(t *testing.T) {
	dir := t.TempDir()
	wasm := bytes.Repeat([]byte("\x00asm wasm bytes "), 1000)
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("index.html", []byte("<!doctype html>"))
	write("client.js", []byte("export {}"))
	write("crdplay.wasm", wasm)
	write("test/other.wasm", wasm)
	if err := gzipFile(filepath.Join(dir, "crdplay.wasm")); err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile(filepath.Join(dir, "crdplay.wasm.gz"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(site{dir: dir, gzip: true})
	defer srv.Close()

	get := func(method, path, acceptEncoding string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Accept-Encoding", acceptEncoding) // set: the transport then leaves the body encoded
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	for _, tc := range []struct{ path, ctype string }{
		{"/", "text/html; charset=utf-8"},
		{"/client.js", "text/javascript; charset=utf-8"},
		{"/test/other.wasm", "application/wasm"},
	} {
		if resp, _ := get("GET", tc.path, ""); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("GET %s: %d %q, want 200 %q", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.ctype)
		}
	}

	resp, body := get("GET", "/crdplay.wasm", "gzip, deflate, br")
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(body, gz) ||
		resp.Header.Get("Content-Length") != strconv.Itoa(len(gz)) ||
		resp.Header.Get("X-Decoded-Content-Length") != strconv.Itoa(len(wasm)) ||
		resp.Header.Get("Content-Type") != "application/wasm" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("gzip: %d bytes, headers %v", len(body), resp.Header)
	}
	if zr, err := gzip.NewReader(bytes.NewReader(body)); err != nil {
		t.Error(err)
	} else if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, wasm) {
		t.Error("the .gz does not decode to the wasm")
	}
	resp, _ = get("HEAD", "/crdplay.wasm", "gzip")
	if resp.Header.Get("Content-Length") != strconv.Itoa(len(gz)) {
		t.Errorf("HEAD: Content-Length %q", resp.Header.Get("Content-Length"))
	}
	for _, ae := range []string{"", "identity", "br", "gzip;q=0"} {
		resp, body := get("GET", "/crdplay.wasm", ae)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, wasm) ||
			resp.Header.Get("X-Decoded-Content-Length") != strconv.Itoa(len(wasm)) {
			t.Errorf("Accept-Encoding %q: encoding %q, %d bytes", ae, resp.Header.Get("Content-Encoding"), len(body))
		}
	}
	// A .gz older than its wasm is stale: never send it.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "crdplay.wasm.gz"), old, old); err != nil {
		t.Fatal(err)
	}
	if resp, _ := get("GET", "/crdplay.wasm", "gzip"); resp.Header.Get("Content-Encoding") != "" {
		t.Error("stale .gz served")
	}

	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/nope.js", 404},
		{"GET", "/test", 404},
		{"GET", "/../main.go", 404},
		{"POST", "/index.html", 405},
	} {
		if resp, _ := get(tc.method, tc.path, ""); resp.StatusCode != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.code)
		}
	}
}

func TestServeSiteLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8090", "example.com:80"} {
		if err := serveSite(addr, t.TempDir(), false); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("serveSite(%q) = %v, want a loopback-only error", addr, err)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for in, want := range map[string]bool{
		"": false, "gzip": true, "br, gzip;q=0.5": true, "GZIP": true, "gzip;q=0": false, "gzip; q=0.000": false,
		"x-gzip": false, "deflate, br": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", in)
		if got := acceptsGzip(r); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", in, got, want)
		}
	}
}
