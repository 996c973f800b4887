package server_test

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

	"github.com/andybalholm/brotli"

	"crdplay/server"
)

// writeSite writes a small site as tools/webbuild lays it out, with real brotli and gzip variants.
func writeSite(t *testing.T) (dir string, wasm []byte) {
	t.Helper()
	dir = t.TempDir()
	wasm = bytes.Repeat([]byte("\x00asm engine bytes "), 4000)
	files := map[string][]byte{
		"index.html":                       []byte("<!doctype html><title>crdplay</title>"),
		"embed/index.html":                 []byte("<!doctype html><title>crdplay embed</title>"),
		"embed/engine.html":                []byte("<!doctype html><title>crdplay engine</title>"),
		"embed.js":                         []byte("(()=>{})()"),
		"embed-demo.html":                  []byte("<!doctype html><script src=embed.js></script>"),
		"assets/main.0123456789ab.js":      []byte("console.log('crdplay')"),
		"assets/crdplay.abcdef012345.wasm": wasm,
		"manifest.json":                    []byte(`{"crdplay.wasm":"assets/crdplay.abcdef012345.wasm"}`),
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"index.html", "assets/crdplay.abcdef012345.wasm"} {
		data := files[name]
		var br, gz bytes.Buffer
		bw := brotli.NewWriterLevel(&br, 5)
		bw.Write(data)
		bw.Close()
		gw := gzip.NewWriter(&gz)
		gw.Write(data)
		gw.Close()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.WriteFile(p+".br", br.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".gz", gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, wasm
}

// TestSite checks what the browser depends on when the server hosts the playground: types (instantiateStreaming
// wants application/wasm), the encoding chosen by Accept-Encoding with both lengths (the engine's progress
// bar), caching by name, security headers (framing only on the embed route), and that the API keeps its paths.
func TestSite(t *testing.T) {
	dir, wasm := writeSite(t)
	h, err := server.NewHandler(server.Options{Site: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()

	do := func(t *testing.T, method, path string, header map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Accept-Encoding", "") // set: the transport then leaves bodies encoded
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	const wasmPath = "/assets/crdplay.abcdef012345.wasm"
	brFile, _ := os.ReadFile(filepath.Join(dir, "assets/crdplay.abcdef012345.wasm.br"))
	gzFile, _ := os.ReadFile(filepath.Join(dir, "assets/crdplay.abcdef012345.wasm.gz"))

	for _, tc := range []struct {
		name, method, path, acceptEncoding string
		code                               int
		header                             map[string]string // want exactly (""= absent)
		body                               []byte            // want exactly, if set
	}{
		{name: "page", method: "GET", path: "/", code: 200, header: map[string]string{
			"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-cache", "X-Frame-Options": "DENY",
			"Content-Encoding": "", "X-Content-Type-Options": "nosniff",
		}},
		{name: "page brotli", method: "GET", path: "/", acceptEncoding: "gzip, deflate, br", code: 200, header: map[string]string{
			"Content-Encoding": "br", "Vary": "Accept-Encoding", "Cache-Control": "no-cache",
		}},
		{name: "embed redirect", method: "GET", path: "/embed?tab=table", code: 301, header: map[string]string{"Location": "/embed/?tab=table"}},
		{name: "embed page may be framed", method: "GET", path: "/embed/", code: 200, header: map[string]string{
			"Content-Type": "text/html; charset=utf-8", "X-Frame-Options": "",
		}},
		{name: "wasm brotli", method: "GET", path: wasmPath, acceptEncoding: "gzip, deflate, br, zstd", code: 200, body: brFile, header: map[string]string{
			"Content-Type": "application/wasm", "Content-Encoding": "br", "Content-Length": strconv.Itoa(len(brFile)),
			"X-Decoded-Content-Length": strconv.Itoa(len(wasm)), "Vary": "Accept-Encoding",
			"Cache-Control": "public, max-age=31536000, immutable",
		}},
		{name: "wasm gzip when brotli is refused", method: "GET", path: wasmPath, acceptEncoding: "br;q=0, gzip", code: 200, body: gzFile, header: map[string]string{
			"Content-Encoding": "gzip", "Content-Length": strconv.Itoa(len(gzFile)), "X-Decoded-Content-Length": strconv.Itoa(len(wasm)),
		}},
		{name: "wasm identity", method: "GET", path: wasmPath, acceptEncoding: "identity", code: 200, body: wasm, header: map[string]string{
			"Content-Encoding": "", "Content-Length": strconv.Itoa(len(wasm)), "X-Decoded-Content-Length": strconv.Itoa(len(wasm)),
			"Content-Type": "application/wasm", "Vary": "Accept-Encoding",
		}},
		{name: "wasm HEAD keeps the lengths", method: "HEAD", path: wasmPath, acceptEncoding: "br", code: 200, body: []byte{}, header: map[string]string{
			"Content-Encoding": "br", "Content-Length": strconv.Itoa(len(brFile)), "X-Decoded-Content-Length": strconv.Itoa(len(wasm)),
		}},
		{name: "script", method: "GET", path: "/assets/main.0123456789ab.js", acceptEncoding: "br", code: 200, header: map[string]string{
			"Content-Type": "text/javascript; charset=utf-8", "Content-Encoding": "", "Vary": "",
		}},
		{name: "embed.js is for every origin", method: "GET", path: "/embed.js", code: 200, header: map[string]string{
			"Content-Type": "text/javascript; charset=utf-8", "Access-Control-Allow-Origin": "*",
			"Cross-Origin-Resource-Policy": "cross-origin", "Cache-Control": "no-cache",
		}},
		{name: "embed.js through a dot segment", method: "GET", path: "/x/../embed.js", code: 200, header: map[string]string{
			"Access-Control-Allow-Origin": "*",
		}},
		{name: "the engine frame may be framed", method: "GET", path: "/embed/engine.html", code: 200, header: map[string]string{
			"X-Frame-Options": "", "Access-Control-Allow-Origin": "",
		}},
		{name: "the demo page is not for frames", method: "GET", path: "/embed-demo.html", code: 200, header: map[string]string{
			"X-Frame-Options": "DENY", "Access-Control-Allow-Origin": "",
		}},
		{name: "only embed.js is for every origin", method: "GET", path: "/assets/main.0123456789ab.js", code: 200, header: map[string]string{
			"Access-Control-Allow-Origin": "", "Cross-Origin-Resource-Policy": "",
		}},
		{name: "variants are not files", method: "GET", path: wasmPath + ".br", code: 404},
		{name: "API version", method: "GET", path: "/version", code: 200, header: map[string]string{"Content-Type": "application/json", "Content-Security-Policy": ""}},
		{name: "API discovery", method: "GET", path: "/apis", code: 200, header: map[string]string{"Content-Security-Policy": ""}},
		{name: "unknown path goes to the API", method: "GET", path: "/assets/nope.js", code: 404, header: map[string]string{"Content-Security-Policy": ""}},
		{name: "no writes to the site", method: "POST", path: "/index.html", code: 405},
		{name: "no escape from the directory", method: "GET", path: "/../../etc/passwd", code: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, tc.method, tc.path, map[string]string{"Accept-Encoding": tc.acceptEncoding})
			if resp.StatusCode != tc.code {
				t.Fatalf("%s %s: %d, want %d (%s)", tc.method, tc.path, resp.StatusCode, tc.code, body)
			}
			for k, want := range tc.header {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s: %q, want %q", k, got, want)
				}
			}
			if tc.body != nil && !bytes.Equal(body, tc.body) {
				t.Errorf("body: %d bytes, want %d", len(body), len(tc.body))
			}
		})
	}

	t.Run("CSP", func(t *testing.T) {
		resp, _ := do(t, "GET", "/", nil)
		csp := resp.Header.Get("Content-Security-Policy")
		for _, want := range []string{"'wasm-unsafe-eval'", "frame-ancestors 'none'", "worker-src 'self' blob:", "default-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("page CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "'unsafe-eval'") {
			t.Errorf("page CSP %q allows eval", csp)
		}
		resp, _ = do(t, "GET", "/embed/", nil)
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors *") || !strings.Contains(csp, "'wasm-unsafe-eval'") {
			t.Errorf("embed CSP %q", csp)
		}
	})

	// The request path reaches the server percent-decoded and uncleaned; headers must follow the file that is
	// served, or the main page could be framed through the embed route.
	t.Run("headers follow the file served", func(t *testing.T) {
		for _, tc := range []struct {
			path, frame, csp, cache string
		}{
			{path: "/embed%2F..%2Findex.html", frame: "DENY", csp: "frame-ancestors 'none'", cache: "no-cache"},
			{path: "/embed/..%2Findex.html", frame: "DENY", csp: "frame-ancestors 'none'", cache: "no-cache"},
			{path: "/embed/../index.html", frame: "DENY", csp: "frame-ancestors 'none'", cache: "no-cache"},
			{path: "/embed%2F.%2F..%2F", frame: "DENY", csp: "frame-ancestors 'none'", cache: "no-cache"},
			{path: "/assets%2F..%2Findex.html", frame: "DENY", csp: "frame-ancestors 'none'", cache: "no-cache"},
			{path: "/x%2F..%2Fembed%2Findex.html", frame: "", csp: "frame-ancestors *", cache: "no-cache"},
			{path: "/embed/.%2Findex.html", frame: "", csp: "frame-ancestors *", cache: "no-cache"},
		} {
			t.Run(tc.path, func(t *testing.T) {
				resp, body := do(t, "GET", tc.path, nil)
				if resp.StatusCode != 200 {
					t.Fatalf("%d (%s)", resp.StatusCode, body)
				}
				if got := resp.Header.Get("X-Frame-Options"); got != tc.frame {
					t.Errorf("X-Frame-Options %q, want %q", got, tc.frame)
				}
				if got := resp.Header.Get("Content-Security-Policy"); !strings.HasSuffix(got, tc.csp) {
					t.Errorf("Content-Security-Policy %q, want it to end with %q", got, tc.csp)
				}
				if got := resp.Header.Get("Cache-Control"); got != tc.cache {
					t.Errorf("Cache-Control %q, want %q", got, tc.cache)
				}
			})
		}
	})

	t.Run("revalidation", func(t *testing.T) {
		resp, _ := do(t, "GET", "/", map[string]string{"Accept-Encoding": "br"})
		tag := resp.Header.Get("ETag")
		if tag == "" {
			t.Fatal("no ETag")
		}
		resp, body := do(t, "GET", "/", map[string]string{"Accept-Encoding": "br", "If-None-Match": tag})
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Errorf("If-None-Match: %d with %d bytes, want 304", resp.StatusCode, len(body))
		}
		resp, _ = do(t, "GET", "/", map[string]string{"Accept-Encoding": "identity", "If-None-Match": tag})
		if resp.StatusCode != 200 {
			t.Errorf("the brotli ETag matched the plain page: %d", resp.StatusCode)
		}
	})

	t.Run("stale variant", func(t *testing.T) {
		// A variant older than its file is from an earlier build and must not be served.
		p := filepath.Join(dir, "index.html")
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
		resp, _ := do(t, "GET", "/", map[string]string{"Accept-Encoding": "br, gzip"})
		if enc := resp.Header.Get("Content-Encoding"); enc != "" {
			t.Errorf("served the stale %s variant", enc)
		}
	})
}

// TestSiteMissing: a site directory without index.html is a setup error, reported when the handler is made.
func TestSiteMissing(t *testing.T) {
	if _, err := server.NewHandler(server.Options{Site: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "index.html") {
		t.Errorf("NewHandler with an empty site: %v, want an error naming index.html", err)
	}
}
