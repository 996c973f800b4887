// Command webdev builds crdplay's browser app into one directory and serves it on a loopback address, so that
// a browser (or the tests under web/test) can load the engine as WebAssembly:
//
//	go run ./tools/webdev                    # build into build/web, serve on http://127.0.0.1:8090/
//	go run ./tools/webdev -serve=false -test # build only, with the test assets (what web/test needs)
//	go run ./tools/webdev -build=false -addr 127.0.0.1:0  # serve what is there, on a free port
//
// The directory it builds is the whole site, and what server/ will host: the static files of web/static
// (index.html, client.js, worker.js, crdplay.d.ts), wasm_exec.js from the Go toolchain that built the wasm
// (the two must match), crdplay.wasm (the bridge in wasm/, built in the trimmed workspace of tools/wasmws) and,
// with -gzip, crdplay.wasm.gz next to it. With -test it adds test/oraclerunner.wasm (wasm/oraclerunner) and
// test/oracle-cases.json (testdata/oracle as one JSON object of file path to text), which the browser test
// loads into the page to replay every oracle case through window.crdplay.
//
// Serving is for development: every response is "Cache-Control: no-cache", types come from a fixed table
// (application/wasm matters: WebAssembly.instantiateStreaming refuses anything else), and a .wasm is sent
// gzip-encoded when the browser accepts it and the .gz exists, with its Content-Length and the decoded length
// in X-Decoded-Content-Length so that the worker can report download progress (http.ServeContent would drop
// Content-Length once Content-Encoding is set, so those responses are written here).
//
// The server listens on loopback addresses only and prints "webdev: serving DIR on http://HOST:PORT/" once it
// accepts connections (tests read the URL from that line). SIGINT or SIGTERM stops it.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"mime"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("webdev: ")
	addr := flag.String("addr", "127.0.0.1:8090", "loopback `host:port` to serve on (port 0 picks a free one)")
	out := flag.String("o", "build/web", "output `directory` (relative to the module root)")
	build := flag.Bool("build", true, "build the site before serving")
	serve := flag.Bool("serve", true, "serve the site (false: build and exit)")
	test := flag.Bool("test", false, "also build the browser test's assets under test/")
	gz := flag.Bool("gzip", true, "precompress .wasm files and serve them gzip-encoded")
	flag.Parse()
	if flag.NArg() != 0 {
		log.Fatal("no arguments expected")
	}

	root, err := moduleRoot()
	if err != nil {
		log.Fatal(err)
	}
	dir := *out
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	if *build {
		start := time.Now()
		if err := buildSite(root, dir, *test, *gz); err != nil {
			log.Fatal(err)
		}
		log.Printf("built %s in %.1fs", dir, time.Since(start).Seconds())
	}
	if *serve {
		if err := serveSite(*addr, dir, *gz); err != nil {
			log.Fatal(err)
		}
	}
}

// moduleRoot is the directory of crdplay's go.mod, so that webdev works from any directory of the module.
func moduleRoot() (string, error) {
	gomod, err := goOutput("env", "GOMOD")
	if err != nil {
		return "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the crdplay module (go env GOMOD is empty)")
	}
	return filepath.Dir(gomod), nil
}

// buildSite writes the whole site into dir.
func buildSite(root, dir string, test, gz bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ws := filepath.Join(root, "build", "wasm")
	// The trimmed workspace: the same graph that make test-wasm and make bench build (see tools/wasmws).
	if err := goRun(root, nil, "run", "./tools/wasmws", "-o", ws); err != nil {
		return err
	}
	wasmEnv := []string{"GOWORK=" + filepath.Join(ws, "go.work"), "GOOS=js", "GOARCH=wasm"}
	buildArgs := []string{"build", "-trimpath", "-ldflags=-s -w"}
	// The default, -buildvcs=auto, leaves the commit out of this cross-compiled workspace build, and
	// crdplay.version() reports it; -buildvcs=true fails outside a git checkout, so ask git first.
	if exec.Command("git", "-C", root, "rev-parse", "--git-dir").Run() == nil {
		buildArgs = append(buildArgs, "-buildvcs=true")
	}
	wasms := map[string]string{"crdplay.wasm": "./wasm"}
	if test {
		wasms["test/oraclerunner.wasm"] = "./wasm/oraclerunner"
	}
	for name, pkg := range wasms {
		target := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		// Through a temporary file, so that an unchanged wasm keeps its modification time: the .gz is redone
		// only when it is older, and go build rewrites its output every time.
		if err := goRun(root, wasmEnv, append(buildArgs, "-o", target+".tmp", pkg)...); err != nil {
			return err
		}
		if err := replaceIfChanged(target+".tmp", target); err != nil {
			return err
		}
		if gz {
			if err := gzipFile(target); err != nil {
				return err
			}
		}
	}

	goroot, err := goOutput("env", "GOROOT")
	if err != nil {
		return err
	}
	if err := copyFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"), filepath.Join(dir, "wasm_exec.js")); err != nil {
		return err
	}
	static := filepath.Join(root, "web", "static")
	entries, err := os.ReadDir(static)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if err := copyFile(filepath.Join(static, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if test {
		return writeCaseBundle(filepath.Join(root, "testdata", "oracle"), filepath.Join(dir, "test", "oracle-cases.json"))
	}
	return nil
}

// writeCaseBundle writes every file of every case directory under root as one JSON object {"files": {path:
// text}}, paths relative to root with slashes: the page has no file system, and wasm/oraclerunner reads the
// cases from this bundle through an fs.FS.
func writeCaseBundle(root, target string) error {
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if !strings.Contains(filepath.ToSlash(rel), "/") {
			return nil // root's own files (the README) belong to no case
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		return err
	}
	data, err := json.Marshal(map[string]any{"files": files})
	if err != nil {
		return err
	}
	return writeIfChanged(target, data)
}

// gzipFile writes name.gz unless it is newer than name. Best compression: this runs once per change of the
// wasm and the dev server sends the result many times.
func gzipFile(name string) error {
	src, err := os.Stat(name)
	if err != nil {
		return err
	}
	if dst, err := os.Stat(name + ".gz"); err == nil && !dst.ModTime().Before(src.ModTime()) {
		return nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(name+".gz", buf.Bytes(), 0o644)
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return writeIfChanged(to, data)
}

// writeIfChanged leaves an identical file alone, so that its modification time (and a browser's
// revalidation against it) stays put.
func writeIfChanged(name string, data []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return os.WriteFile(name, data, 0o644)
}

// replaceIfChanged renames tmp to target, or removes it when target has the same content.
func replaceIfChanged(tmp, target string) error {
	fresh, err := os.ReadFile(tmp)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(target); err == nil && bytes.Equal(old, fresh) {
		return os.Remove(tmp)
	}
	return os.Rename(tmp, target)
}

// goRun runs the go command in dir with extra environment, its output passed through.
func goRun(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s go %s: %w", strings.Join(env, " "), strings.Join(args, " "), err)
	}
	return nil
}

func goOutput(args ...string) (string, error) {
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// serveSite serves dir on addr until SIGINT or SIGTERM.
func serveSite(addr, dir string, gz bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-addr %s: a development server listens on loopback addresses only", addr)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		return fmt.Errorf("nothing to serve (%v): build first, without -build=false", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: site{dir: dir, gzip: gz}, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	log.Printf("serving %s on http://%s/", dir, ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// contentTypes are the types the site needs, fixed here rather than read from the machine's mime.types
// (which may, for instance, call .js application/x-javascript).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".ts":   "text/plain; charset=utf-8", // crdplay.d.ts, for reading
	".json": "application/json",
	".wasm": "application/wasm",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// site serves the files of dir.
type site struct {
	dir  string
	gzip bool
}

func (s site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := path.Clean("/" + r.URL.Path)
	if strings.HasSuffix(r.URL.Path, "/") {
		name = path.Join(name, "index.html")
	}
	file := filepath.Join(s.dir, filepath.FromSlash(name))
	info, err := os.Stat(file)
	if err != nil || info.IsDir() {
		http.NotFound(w, r)
		return
	}
	ext := path.Ext(name)
	ctype, ok := contentTypes[ext]
	if !ok {
		ctype = mime.TypeByExtension(ext)
	}
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.Header().Set("Cache-Control", "no-cache")
	if ext == ".wasm" {
		w.Header().Set("Vary", "Accept-Encoding")
		if s.gzip && acceptsGzip(r) {
			if gzInfo, err := os.Stat(file + ".gz"); err == nil && !gzInfo.ModTime().Before(info.ModTime()) {
				serveEncoded(w, r, file+".gz", gzInfo.Size(), info.Size())
				return
			}
		}
		// Uncompressed, Content-Length is the decoded length too; say so the same way.
		w.Header().Set("X-Decoded-Content-Length", strconv.FormatInt(info.Size(), 10))
	}
	f, err := os.Open(file)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, name, info.ModTime(), f)
}

// serveEncoded sends a gzip file as the Content-Encoding of the file it compresses, with both lengths.
func serveEncoded(w http.ResponseWriter, r *http.Request, gzFile string, size, decoded int64) {
	f, err := os.Open(gzFile)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Encoding", "gzip")
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("X-Decoded-Content-Length", strconv.FormatInt(decoded, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		io.Copy(w, f)
	}
}

// acceptsGzip reports whether the request's Accept-Encoding lists gzip with a non-zero q.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
