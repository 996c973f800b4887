// Command enginewasm links the engine alone into a program the way the browser build does, so that `make bench`
// can report the engine's share of the download apart from the bridge's (wasm/, which adds the playground and
// its evaluator). It builds for any platform; make bench builds it for js/wasm in the workspace written by
// tools/wasmws (the trimmed dependency graph the browser loads).
//
// It serves one GET request (the path in its first argument, default /version) and prints the response status,
// which keeps the whole handler reachable for the linker and doubles as a smoke test under node:
//
//	node "$(go env GOROOT)/lib/wasm/wasm_exec_node.js" build/bench/engine.wasm /version
package main

import (
	"fmt"
	"net/http"
	"os"

	"crdplay/engine"
)

func main() {
	path := "/version"
	if len(os.Args) > 1 {
		path = os.Args[1]
	}
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "enginewasm:", err)
		os.Exit(1)
	}
	req, err := http.NewRequest(http.MethodGet, path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "enginewasm:", err)
		os.Exit(2)
	}
	w := &statusWriter{header: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	fmt.Println(path, w.status, w.bytes, "bytes")
}

// statusWriter is the smallest http.ResponseWriter: it keeps the status and counts the body.
type statusWriter struct {
	header http.Header
	status int
	bytes  int
}

func (w *statusWriter) Header() http.Header { return w.header }

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.bytes += len(p)
	return len(p), nil
}
