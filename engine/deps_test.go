package engine_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// bannedDeps are the packages the engine must never reach in its js/wasm build, each with the reason. A prefix
// matches the package itself and everything below it. Only non-test imports count (go list -deps without
// -test), so engine tests may still use httptest and the like.
//
// The engine's other rule, that it opens no listener or connection, cannot be read from imports (net/http needs
// net); it is kept by Options: storage and webhook calls are interfaces the host supplies.
var bannedDeps = []struct {
	prefix, reason string
	// viaStd allows reaching the package through the standard library: net/http imports syscall/js under js
	// for its fetch-based RoundTripper, which the engine does not use, but only wasm/ may import it itself.
	viaStd bool
}{
	{"syscall/js", "the engine is portable Go; only wasm/ bridges to JavaScript", true},
	{"go.etcd.io", "storage is an interface; the etcd client belongs to the server", false},
	{"google.golang.org/grpc", "no network clients in the engine (gRPC)", false},
	{"go.opentelemetry.io/otel/exporters", "no network clients in the engine (trace exporters send spans over gRPC/HTTP)", false},
	{"go.opentelemetry.io/otel/sdk", "no tracing pipeline in the engine (the SDK exists to feed exporters)", false},
	{"sigs.k8s.io/apiserver-network-proxy", "no network clients in the engine (konnectivity tunnel)", false},
	{"k8s.io/client-go/rest", "no network clients: the engine serves the Kubernetes API, it never calls one", false},
	{"k8s.io/client-go/tools/clientcmd", "no kubeconfig: the engine has no cluster to connect to", false},
	{"net/http/httptest", "a test helper (NewServer opens a listener); engine code is reached through http.Handler", false},
	{"crdplay/wasm", "wasm/ wraps the engine; the engine must not depend on its host", false},
	{"crdplay/web", "web/ is the UI that talks to the engine; the engine must not depend on it", false},
	{"crdplay/server", "server/ hosts the engine natively; the engine must not depend on it", false},
	{"crdplay/tools", "tools/ are build helpers, not product code", false},
}

// trimmedPackage is the package whose cut in the wasm workspace (tools/wasmws) keeps the banned packages out:
// in the plain module graph, every route to a banned package must go through it. The workspace's other cuts
// only remove code from packages the engine links; they keep no banned package out.
const trimmedPackage = "k8s.io/apiserver/pkg/util/webhook"

// TestDependencies checks the engine's js/wasm import graph twice:
//
//   - as shipped, in the workspace written by tools/wasmws (the one `make bench` and the wasm tests build in):
//     no banned package is reached;
//   - in the plain module graph: every route to a banned package goes through trimmedPackage, so that a new
//     route (say, an import of k8s.io/apiserver/pkg/endpoints/handlers, which reaches gRPC through
//     component-base/tracing) fails here with its import chain rather than growing the download.
func TestDependencies(t *testing.T) {
	goTool := depsGoTool(t)
	root := filepath.Dir(depsRun(t, goTool, "", []string{"GOWORK=off"}, "env", "GOMOD"))

	// A private workspace, so that the test neither depends on nor disturbs build/wasm.
	ws := t.TempDir()
	depsRun(t, goTool, root, nil, "run", "./tools/wasmws", "-o", ws)

	shipped := depsGraph(t, goTool, root, "GOWORK="+filepath.Join(ws, "go.work"))
	plain := depsGraph(t, goTool, root, "GOWORK=off")

	t.Run("shipped", func(t *testing.T) {
		for _, msg := range shipped.banned("") {
			t.Error(msg)
		}
	})
	t.Run("plain-only-through-trim", func(t *testing.T) {
		for _, msg := range plain.banned(trimmedPackage) {
			t.Errorf("%s\n\tonly %s is trimmed for the wasm build (tools/wasmws); avoid this import instead", msg, trimmedPackage)
		}
	})
	t.Run("trim-only-removes", func(t *testing.T) {
		// The workspace may only remove: same roots, no package the plain graph lacks.
		for p := range shipped.imports {
			if _, ok := plain.imports[p]; !ok {
				t.Errorf("%s is in the shipped graph but not in the plain one: the workspace must only remove code", p)
			}
		}
		if fmt.Sprint(shipped.roots) != fmt.Sprint(plain.roots) {
			t.Errorf("roots differ: shipped %v, plain %v", shipped.roots, plain.roots)
		}
	})
}

// depsGoTool returns the go command, or skips the test where none can run (under js/wasm in node, os/exec is
// not available).
func depsGoTool(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skipf("cannot run the go command under %s", runtime.GOOS)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command not found: %v", err)
	}
	return goTool
}

// depsImportGraph is the non-test import graph of ./engine/... for js/wasm.
type depsImportGraph struct {
	roots   []string            // the engine's own packages, sorted
	imports map[string][]string // package -> its direct imports
	std     map[string]bool     // packages of the standard library
}

func depsGraph(t *testing.T, goTool, root, gowork string) depsImportGraph {
	t.Helper()
	// One line per package: "+" marks the engine's own packages, "!" the standard library's.
	const format = `{{if not .DepOnly}}+{{end}}{{if .Standard}}!{{end}}{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`
	out := depsRun(t, goTool, root, []string{gowork, "GOOS=js", "GOARCH=wasm"}, "list", "-deps", "-f", format, "./engine/...")
	g := depsImportGraph{imports: map[string][]string{}, std: map[string]bool{}}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		p, isRoot := strings.CutPrefix(f[0], "+")
		p, isStd := strings.CutPrefix(p, "!")
		if isRoot {
			g.roots = append(g.roots, p)
		}
		g.imports[p] = f[1:]
		g.std[p] = isStd
	}
	sort.Strings(g.roots)
	if len(g.roots) == 0 {
		t.Fatalf("go list (%s) found no engine packages", gowork)
	}
	return g
}

// walk visits the graph breadth-first from the roots, entering neither skip nor, if skipStd, the imports of
// standard-library packages. It returns the packages in visiting order and, for each,
// the package it was first reached from, so that chains are shortest.
func (g depsImportGraph) walk(skip string, skipStd bool) (order []string, prev map[string]string) {
	prev = map[string]string{}
	queue := append([]string(nil), g.roots...)
	for _, r := range g.roots {
		prev[r] = ""
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		order = append(order, p)
		if skipStd && g.std[p] {
			continue
		}
		for _, q := range g.imports[p] {
			if _, seen := prev[q]; seen || q == skip {
				continue
			}
			prev[q] = p
			queue = append(queue, q)
		}
	}
	return order, prev
}

// banned returns one message per banned rule that the engine reaches without going through skip, with how many
// packages match and the shortest import chain to the first of them.
func (g depsImportGraph) banned(skip string) []string {
	var msgs []string
	for _, b := range bannedDeps {
		order, prev := g.walk(skip, b.viaStd)
		var hits []string
		for _, p := range order {
			if p == b.prefix || strings.HasPrefix(p, b.prefix+"/") {
				hits = append(hits, p)
			}
		}
		if len(hits) == 0 {
			continue
		}
		var chain []string
		for p := hits[0]; p != ""; p = prev[p] {
			chain = append([]string{p}, chain...)
		}
		msgs = append(msgs, fmt.Sprintf("engine reaches %s (%d package(s)): %s\n\timport chain: %s",
			b.prefix, len(hits), b.reason, strings.Join(chain, "\n\t\t-> ")))
	}
	return msgs
}

// depsRun runs the go command in dir with extra environment and returns its standard output.
func depsRun(t *testing.T, goTool, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goTool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(stdout.String())
}
