package depguard

import (
	"fmt"
	"path/filepath"
	"testing"
)

// A ban is a package that a guarded tree must never reach in its js/wasm build, with the reason. The prefix
// matches the package itself and everything below it. Only non-test imports count (go list -deps without
// -test), so tests may still use httptest and the like.
type ban struct {
	prefix, reason string
	// viaStd allows reaching the package through the standard library: net/http imports syscall/js under js
	// for its fetch-based RoundTripper, which the engine and the playground do not use, but only wasm/ may
	// import it itself.
	viaStd bool
}

// shippedBans apply to every tree the browser runs. The one rule they cannot express, that the engine opens
// no listener or connection, cannot be read from imports (net/http needs net); it is kept by engine.Options:
// storage and webhook calls are interfaces the host supplies.
var shippedBans = []ban{
	{"go.etcd.io", "storage is an interface; the etcd client belongs to the server", false},
	{"google.golang.org/grpc", "no network clients in the browser's code (gRPC)", false},
	{"go.opentelemetry.io/otel/exporters", "no network clients in the browser's code (trace exporters send spans over gRPC/HTTP)", false},
	{"go.opentelemetry.io/otel/sdk", "no tracing pipeline in the browser's code (the SDK exists to feed exporters)", false},
	{"sigs.k8s.io/apiserver-network-proxy", "no network clients in the browser's code (konnectivity tunnel)", false},
	{"k8s.io/client-go/rest", "no network clients: the engine serves the Kubernetes API and the playground calls it in-process; nothing calls a cluster", false},
	{"k8s.io/client-go/tools/clientcmd", "no kubeconfig: there is no cluster to connect to", false},
	{"net/http/httptest", "a test helper (NewServer opens a listener); what the browser runs reaches the engine through http.Handler", false},
	{"crdplay/server", "server/ hosts the engine natively; nothing the browser runs may depend on it", false},
	{"crdplay/web", "web/ is the UI that talks to the bridge; the Go it loads must not depend on it", false},
	{"crdplay/tools", "tools/ are build helpers, not product code", false},
	{"crdplay/internal/oraclecase", "the oracle case runner is test code; the browser tests load it as a wasm of its own (wasm/oraclerunner)", false},
	{"crdplay/policies", "the admission policy plugins bring client-go's clientsets, informers and every built-in type (tens of MB raw, docs/architecture.md: Admission policies); native hosts only", false},
	{"crdplay/internal/examples", "the gallery is read at build time (tools/webbuild writes examples.json); the browser reads no testdata", false},
}

// portableBans apply to the engine and the playground, which are portable Go: server/ and the native tests
// run them too.
var portableBans = []ban{
	{"syscall/js", "the engine and the playground are portable Go; only wasm/ bridges to JavaScript", true},
	{"crdplay/wasm", "wasm/ is the bridge that wraps the engine and the playground; they must not depend on their host", false},
}

// A guard is one tree of packages the browser ships and what it must not reach.
type guard struct {
	// pattern is the tree's import path pattern as go list takes it: a path, or a path with "/..." for the
	// packages below it too.
	pattern string
	bans    []ban
}

// guards are the trees of what the browser ships. wasm/oraclerunner is not one of them: tools/webbuild builds
// it only with -test, for the browser tests (web/test/oracle.spec.mjs), and it exists to run the oracle case
// runner (crdplay/internal/oraclecase) in the page; it is never served to users.
var guards = []guard{
	{"crdplay/engine/...", concat(portableBans, shippedBans, []ban{
		{"crdplay/playground", "the playground is built on the engine; the engine must not depend on it", false},
	})},
	{"crdplay/playground/...", concat(portableBans, shippedBans)},
	// The bridge may import syscall/js, the engine and the playground: that is its job.
	{"crdplay/wasm", shippedBans},
}

func concat(lists ...[]ban) []ban {
	var out []ban
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// trimmedPackage is the package whose cut in the wasm workspace (tools/wasmws) keeps the banned packages out:
// in the plain module graph, every route to a banned package must go through it. The workspace's other cuts
// only remove code from packages the engine links; they keep no banned package out.
const trimmedPackage = "k8s.io/apiserver/pkg/util/webhook"

// TestDependencies checks the js/wasm import graph of every guarded tree twice:
//
//   - as shipped, in the workspace written by tools/wasmws (the one the browser's wasm, `make bench` and the
//     wasm tests build in): no banned package is reached;
//   - in the plain module graph: every route to a banned package goes through trimmedPackage, so that a new
//     route (say, an import of k8s.io/apiserver/pkg/endpoints/handlers, which reaches gRPC through
//     component-base/tracing) fails here with its import chain rather than growing the download.
func TestDependencies(t *testing.T) {
	goTool := goCommand(t)
	root := filepath.Dir(goRun(t, goTool, "", []string{"GOWORK=off"}, "env", "GOMOD"))

	// A private workspace, so that the test neither depends on nor disturbs build/wasm.
	ws := t.TempDir()
	goRun(t, goTool, root, nil, "run", "./tools/wasmws", "-o", ws)

	var patterns []string
	for _, g := range guards {
		patterns = append(patterns, g.pattern)
	}
	shipped := loadGraph(t, goTool, root, "GOWORK="+filepath.Join(ws, "go.work"), patterns)
	plain := loadGraph(t, goTool, root, "GOWORK=off", patterns)

	for _, g := range guards {
		t.Run(g.pattern, func(t *testing.T) {
			if len(g.roots(shipped)) == 0 {
				t.Fatalf("go list found no package of %s", g.pattern)
			}
			t.Run("shipped", func(t *testing.T) {
				for _, msg := range g.check(shipped, "") {
					t.Error(msg)
				}
			})
			t.Run("plain-only-through-trim", func(t *testing.T) {
				for _, msg := range g.check(plain, trimmedPackage) {
					t.Errorf("%s\n\tonly %s is trimmed for the wasm build (tools/wasmws); avoid this import instead", msg, trimmedPackage)
				}
			})
		})
	}
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
