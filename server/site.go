package server

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// The security headers of the playground's pages. The CSP allows what the page needs and nothing else:
// 'wasm-unsafe-eval' to compile the engine, blob: workers for the page's conversion webhook (the user's
// JavaScript runs in a worker of its own, not in the page), inline styles for CodeMirror's injected style
// sheets. Framing is refused except on the embed route, which docs sites put in an iframe.
const (
	cspBase = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; " +
		"style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; " +
		"base-uri 'none'; form-action 'self'"
	cspNoFraming = cspBase + "; frame-ancestors 'none'"
	cspEmbed     = cspBase + "; frame-ancestors *"
)

// siteTypes are the types the site needs, fixed here rather than read from the machine's mime.types (which
// may, for instance, call .js application/x-javascript; instantiateStreaming refuses a wasm that is not
// application/wasm).
var siteTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
	".map":  "application/json",
	".wasm": "application/wasm",
	".ts":   "text/plain; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
}

// siteEncodings are the precompressed variants a site may hold beside a file (X.br, X.gz), best first.
var siteEncodings = []struct{ token, ext string }{{"br", ".br"}, {"gzip", ".gz"}}

// Site serves the playground's static build (tools/webbuild's output directory): index.html at /, the embed
// page at /embed/, content-hashed files under /assets/. It serves only files that exist there; Handler
// routes every other path to the API.
type Site struct {
	dir string
}

// NewSite returns the site in dir, which must hold an index.html.
func NewSite(dir string) (*Site, error) {
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		return nil, fmt.Errorf("site %s: no index.html (build it with go run ./tools/webbuild): %w", dir, err)
	}
	return &Site{dir: dir}, nil
}

// isAPIPath reports whether p belongs to the Kubernetes API, which the site must never shadow.
func isAPIPath(p string) bool {
	for _, prefix := range []string{"/api", "/apis", "/version", "/openapi"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}

// file maps a request path to a file of the site, or "" when the site has none for it.
func (s *Site) file(urlPath string) string {
	_, f := s.resolve(urlPath)
	return f
}

// resolve maps a request path to the cleaned name of a site file ("/embed/index.html") and the file itself,
// or to "", "" when the site has none. Every decision about a response (framing, caching) is made from the
// name, never from the request path: the path is already percent-decoded, so "/embed%2F..%2Findex.html" is
// "/embed/../index.html", which starts like the embed route but names the main page.
func (s *Site) resolve(urlPath string) (name, file string) {
	if isAPIPath(urlPath) || strings.Contains(urlPath, "\x00") {
		return "", ""
	}
	name = path.Clean("/" + urlPath)
	if strings.HasSuffix(urlPath, "/") {
		name = path.Join(name, "index.html")
	}
	// Precompressed variants are chosen by Accept-Encoding, never requested by name.
	if strings.HasSuffix(name, ".br") || strings.HasSuffix(name, ".gz") {
		return "", ""
	}
	f := filepath.Join(s.dir, filepath.FromSlash(name))
	if info, err := os.Stat(f); err != nil || !info.Mode().IsRegular() {
		return "", ""
	}
	return name, f
}

// Handles reports whether the site serves r's path (a file it has, or /embed, which redirects to /embed/).
func (s *Site) Handles(r *http.Request) bool {
	return r.URL.Path == "/embed" || s.file(r.URL.Path) != ""
}

// ServeHTTP serves one file of the site with the headers the playground relies on.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/embed" {
		http.Redirect(w, r, "/embed/"+queryOf(r), http.StatusMovedPermanently)
		return
	}
	name, file := s.resolve(r.URL.Path)
	if file == "" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	ext := path.Ext(file)
	ctype, ok := siteTypes[ext]
	if !ok {
		ctype = mime.TypeByExtension(ext)
	}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if strings.HasPrefix(name, "/embed/") {
		h.Set("Content-Security-Policy", cspEmbed)
	} else {
		h.Set("Content-Security-Policy", cspNoFraming)
		h.Set("X-Frame-Options", "DENY")
	}
	if name == "/embed.js" {
		// Docs pages on any origin load it (docs/embedding.md): readable across origins, also by pages that
		// load scripts with crossorigin or under Cross-Origin-Embedder-Policy.
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	}
	if strings.HasPrefix(name, "/assets/") {
		// Content-hashed names: a changed file has a new name, so a cached one is never stale.
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}

	info, err := os.Stat(file)
	if err != nil {
		http.Error(w, "file vanished", http.StatusNotFound)
		return
	}
	// Whether or not this response is encoded, it may be for another request: caches must key on the header.
	variants := false
	for _, e := range siteEncodings {
		if _, err := os.Stat(file + e.ext); err == nil {
			variants = true
		}
	}
	if variants {
		h.Add("Vary", "Accept-Encoding")
	}
	for _, e := range siteEncodings {
		if !accepts(r.Header.Get("Accept-Encoding"), e.token) {
			continue
		}
		encInfo, err := os.Stat(file + e.ext)
		// A variant older than its file is left from an earlier build: never serve it.
		if err != nil || encInfo.ModTime().Before(info.ModTime()) {
			continue
		}
		serveEncoded(w, r, file+e.ext, e.token, encInfo, info.Size())
		return
	}
	// Identity: Content-Length is the decoded length too; say so the same way, for the engine's progress bar.
	h.Set("X-Decoded-Content-Length", strconv.FormatInt(info.Size(), 10))
	f, err := os.Open(file)
	if err != nil {
		http.Error(w, "cannot open file", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	h.Set("ETag", etag(info, ""))
	http.ServeContent(w, r, path.Base(file), info.ModTime(), f)
}

// serveEncoded sends a precompressed file as the Content-Encoding of the file it compresses. It writes the
// response itself because http.ServeContent drops Content-Length once Content-Encoding is set, and the page's
// progress bar needs it (X-Decoded-Content-Length gives the total the decoded stream will reach).
func serveEncoded(w http.ResponseWriter, r *http.Request, encFile, coding string, encInfo os.FileInfo, decoded int64) {
	h := w.Header()
	tag := etag(encInfo, coding)
	h.Set("ETag", tag)
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	f, err := os.Open(encFile)
	if err != nil {
		http.Error(w, "cannot open file", http.StatusInternalServerError)
		return
	}
	defer f.Close()
	h.Set("Content-Encoding", coding)
	h.Set("Content-Length", strconv.FormatInt(encInfo.Size(), 10))
	h.Set("X-Decoded-Content-Length", strconv.FormatInt(decoded, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		io.Copy(w, f)
	}
}

// etag identifies a file's version (size and modification time; the builder rewrites only changed files) and
// the encoding, so that an encoded and a plain response never share a tag.
func etag(info os.FileInfo, coding string) string {
	t := fmt.Sprintf(`"%x-%x`, info.ModTime().UnixNano(), info.Size())
	if coding != "" {
		t += "-" + coding
	}
	return t + `"`
}

func etagMatches(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "W/"))
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}

// accepts reports whether an Accept-Encoding header allows coding (listed, or by "*", with a non-zero q).
func accepts(header, coding string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.TrimSpace(name)
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		switch {
		case strings.EqualFold(name, coding):
			return q > 0
		case name == "*":
			star = q > 0
		}
	}
	return star
}

func queryOf(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	return "?" + r.URL.RawQuery
}

// WithSite routes requests for the site's files to site and everything else to api, so that the playground
// and the Kubernetes API share one origin (the page's engine needs no server, but the same host serves both).
func WithSite(api http.Handler, site *Site) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if site.Handles(r) {
			site.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// DefaultSiteDir is where tools/webbuild writes the site, relative to the repository root; crdplay-server
// serves it when --site is not given and the directory exists.
const DefaultSiteDir = "build/web"
