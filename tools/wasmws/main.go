// Command wasmws writes the Go workspace in which the engine is built for the browser: a go.work that uses this
// module and replaces a few upstream modules with copies from which code the browser build never runs is cut:
// whole files, or single top-level declarations. The cuts, each with its reason, are in the cuts list below.
//
// Why: the engine composes upstream packages (CRD validation, the CEL libraries, the Scale type) whose
// siblings in the same package build network clients, register types nothing reads, or set up HTTP
// transports at init. Go's linker keeps everything a package-level initializer refers to, so an unused
// initializer still ships. The cuts of k8s.io/apiserver/pkg/util/webhook keep gRPC, OpenTelemetry exporters
// and client-go's REST client out of the wasm; the others keep out the core/v1 API types, the HTTP client's
// TLS and HTTP/2 stack, audit and admission configuration types, and gnostic's protobuf OpenAPI models.
// docs/architecture.md has the measured effect.
//
// A test that links one of those on purpose (engine/internal/openapi compares with kube-apiserver's own
// OpenAPI builder, which needs client-go's REST client) cannot build here: it carries //go:build !js and
// runs natively.
//
// What makes a cut safe: it only removes. Nothing is rewritten or stubbed, so any code left in the graph
// behaves exactly as upstream's; if anything the engine builds on still referred to a cut name, the wasm
// build would fail with "undefined: X" instead of behaving differently. A cut is therefore allowed only for
// code the engine's graph provably never calls: the tool compiles every cut package for js/wasm before it
// finishes, and the engine's wasm build, wasm tests and dependency guard (internal/depguard) run in this
// workspace. A cut that no longer matches upstream (file or declaration gone) stops the tool.
//
// Why a workspace replace and not `go mod vendor` with a -overlay: go build -overlay refuses to replace files
// in the module cache, and a vendor tree must be regenerated whenever anyone adds an import (go reports
// "inconsistent vendoring" or a missing vendored package), while these copies depend only on the versions in
// go.mod. A workspace in build/ is used only by commands that set GOWORK to it (the wasm build, the wasm
// tests, the dependency guard), so plain `go build` and `go test ./...` are unaffected.
//
// Usage, from the module root:
//
//	go run ./tools/wasmws [-o build/wasm]
//	GOWORK=$PWD/build/wasm/go.work GOOS=js GOARCH=wasm go build ./tools/enginewasm
//
// The command is idempotent: it does nothing when the stamp in the output directory matches the current inputs.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A cut removes code from the copy of one upstream package: the whole file if decls is empty, otherwise the
// named top-level declarations of that file (a function, method as "Type.Method", type, var or const) and the
// imports only they used.
type cut struct {
	pkg, file string
	decls     []string
	why       string
}

// cuts, grouped by reason. If a package the engine imports ever needs a cut name, the wasm build fails with
// "undefined: X": the fix is to stop importing that package, not to restore the code.
var cuts = []cut{
	// k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation (the CRD validation kube-apiserver runs)
	// imports this package only for ValidateWebhookURL, ValidateWebhookService and ValidateCABundle, which live
	// in validation.go. The other files build webhook HTTP clients and through them reach gRPC (egressselector,
	// konnectivity), OpenTelemetry exporters and client-go's REST client: about 160 packages and 2.7 MB of
	// brotli, none of which a browser tab can use. The engine calls conversion webhooks through its own
	// WebhookCaller, which the host supplies.
	{"k8s.io/apiserver/pkg/util/webhook", "authentication.go", nil, "kubeconfig-based client auth: client-go/rest, clientcmd, egressselector (gRPC), tracing (OTel)"},
	{"k8s.io/apiserver/pkg/util/webhook", "client.go", nil, "ClientManager, the cache of webhook REST clients: client-go/rest, x509metrics"},
	{"k8s.io/apiserver/pkg/util/webhook", "webhook.go", nil, "GenericWebhook, REST calls with retries: client-go/rest, clientcmd"},
	{"k8s.io/apiserver/pkg/util/webhook", "serviceresolver.go", nil, "Service to URL resolution for the clients above"},
	{"k8s.io/apiserver/pkg/util/webhook", "metrics.go", nil, "Prometheus counters for the clients' certificates"},
	{"k8s.io/apiserver/pkg/util/webhook", "error.go", nil, "error types returned by the clients above"},

	// k8s.io/api/core/v1 is linked only for field types: autoscaling/v1 (the Scale of /scale; its
	// HorizontalPodAutoscaler fields use core/v1 names) and the CEL library's service-account helpers import
	// it. The engine never installs core/v1 into a scheme nor reads its Swagger docs, yet the package's
	// initializer stores addKnownTypes (which names every core type, so every method of every core type is
	// kept: protobuf, deep copy, String) and the doc maps: 5.3 MB of code, 8 MB of the raw wasm.
	{"k8s.io/api/core/v1", "register.go", []string{"SchemeBuilder", "AddToScheme", "addKnownTypes"}, "installs the core types into a scheme; the engine's schemes hold CRDs, Scale and meta types only"},
	{"k8s.io/api/core/v1", "types_swagger_doc_generated.go", nil, "SwaggerDoc() descriptions; the engine's OpenAPI comes from apiextensions-apiserver's generated definitions"},
	// The same holds for authentication/v1, linked for the UserInfo of audit events (k8s.io/apiserver/pkg/apis/audit)
	// and the service-account helpers: its TokenReview, TokenRequest and SelfSubjectReview are never installed.
	{"k8s.io/api/authentication/v1", "register.go", []string{"SchemeBuilder", "localSchemeBuilder", "AddToScheme", "addKnownTypes"}, "installs the authentication types into a scheme; nothing in the engine's graph calls it"},
	{"k8s.io/api/authentication/v1", "types_swagger_doc_generated.go", nil, "SwaggerDoc() descriptions, read by nothing in the engine's graph"},

	// k8s.io/apimachinery/pkg/util/net, which the API server's handlers import for request helpers, copies
	// http.DefaultTransport into a package variable at init, for the defaults of the HTTP clients it sets
	// up. That initializer alone kept net/http's client transport, the HTTP/2 client, proxy support and
	// crypto/tls's handshake (1.5 MB of code). The engine is a handler: it opens no connection.
	{"k8s.io/apimachinery/pkg/util/net", "http.go", []string{"defaultTransport", "SetOldTransportDefaults", "SetTransportDefaults", "defaultProxyFuncPointer", "isDefault"}, "defaults for client transports, the copy of http.DefaultTransport and the proxy check they use"},
	// SetTransportDefaults's only caller in the graph is client-go's transport cache. The package stays for
	// TLSConfigFor, with which ValidateCABundle (validation.go above) checks a conversion webhook's caBundle.
	{"k8s.io/client-go/transport", "cache.go", nil, "the cache of TLS client transports, SetTransportDefaults's caller"},
	{"k8s.io/client-go/transport", "cache_go118.go", nil, "a compile-time check on that cache's key type"},
	{"k8s.io/client-go/transport", "transport.go", []string{"New"}, "the constructor of client round trippers, the cache's only user"},

	// Audit events are encoded with this scheme by audit backends (log file, webhook); the engine has none.
	// The rest of the package, which admission uses to annotate the request's audit context, stays.
	{"k8s.io/apiserver/pkg/audit", "scheme.go", nil, "the scheme and codecs of audit backends, with audit/v1's conversions"},
	// Admission plugins read their configuration from a file named by --admission-control-config-file; the
	// engine runs no admission plugin and has no files. The file brings the apiserver.config.k8s.io types.
	{"k8s.io/apiserver/pkg/admission", "config.go", nil, "reads the admission configuration file"},

	// gnostic's protobuf models of OpenAPI documents are how clients read a server's protobuf OpenAPI; the
	// engine builds its OpenAPI from kube-openapi's spec types and never parses a gnostic document. Its
	// importers below are converters to and from gnostic, and its initializers register protobuf
	// descriptors, so the converters alone kept gnostic and its YAML compiler.
	{"k8s.io/apiserver/pkg/util/openapi", "proto.go", nil, "ToProtoModels: spec.Swagger to proto.Models through gnostic"},
	{"k8s.io/kube-openapi/pkg/validation/spec", "gnostic.go", nil, "FromGnostic: gnostic documents to spec types"},
	{"k8s.io/kube-openapi/pkg/util/proto", "document.go", []string{"VendorExtensionToMap", "NewOpenAPIData", "Definitions.parseReference", "parseDefault", "Definitions.parseBaseSchema", "Definitions.parseMap", "Definitions.parsePrimitive", "Definitions.parseArray", "Definitions.parseKind", "Definitions.parseArbitrary", "Definitions.ParseSchema"}, "the OpenAPI v2 parser from gnostic documents (proto.Models and its types stay: managedfields uses them)"},
	{"k8s.io/kube-openapi/pkg/util/proto", "document_v3.go", nil, "the OpenAPI v3 parser from gnostic documents"},

	// text/template's initializer keeps its builtin functions (eq, lt, index, slice...: 72 kB of code) in every
	// program that imports it, whether or not it executes a template. Two imports in the graph execute none:
	// cel-go's prompt.go, which renders prompts for AI-assisted CEL authoring (nothing in Kubernetes calls it),
	// and component-base's help formatter for cobra commands, which also brings cobra.
	{"github.com/google/cel-go/cel", "prompt.go", nil, "AuthoringPrompt and its text/template: prompts for AI-assisted CEL authoring, called by nothing in the graph"},
	{"k8s.io/component-base/cli/flag", "sectioned.go", []string{"SetUsageAndHelpFunc"}, "sets a cobra command's help and usage functions; the engine has no commands (NamedFlagSets, which the compatibility registry uses, stays)"},

	// Metrics with a context attach the request's OpenTelemetry span as an exemplar. Nothing in the graph asks
	// for a metric with a context (and a browser tab has no tracing span), yet these methods alone import
	// OpenTelemetry's trace API, its semantic conventions and attribute encoders (about 150 kB of code).
	{"k8s.io/component-base/metrics", "counter.go", []string{"exemplarCounterMetric", "Counter.WithContext", "exemplarCounterMetric.Add", "exemplarCounterMetric.Inc",
		"CounterVec.WithContext", "CounterVecWithContext", "CounterVecWithContext.WithLabelValues", "CounterVecWithContext.With"}, "counters with a context: exemplars from the context's OpenTelemetry span"},
	{"k8s.io/component-base/metrics", "histogram.go", []string{"exemplarHistogramMetric", "exemplarHistogramVec", "exemplarHistogramMetric.Observe", "Histogram.WithContext",
		"HistogramVec.WithContext", "HistogramVecWithContext", "exemplarHistogramVec.Observe", "exemplarHistogramVec.withExemplar",
		"HistogramVecWithContext.WithLabelValues", "HistogramVecWithContext.With", "HistogramVecWithContext.ObserveSince"}, "histograms with a context: exemplars from the context's OpenTelemetry span"},
	// Their callers in the audit package count the events an audit sink processes; the engine has no sink.
	{"k8s.io/apiserver/pkg/audit", "metrics.go", []string{"ObserveEvent", "ObservePolicyLevel"}, "count audit events and policy levels with the request's context (the audit filter's and ProcessEventStage's metrics)"},
	{"k8s.io/apiserver/pkg/audit", "context.go", []string{"AuditContext.ProcessEventStage"}, "hands an audit event to the audit sink: called by the audit filter of a server's handler chain, which the engine does not run"},
}

// stampVersion changes whenever the output's layout or the cutting changes, so that old outputs are rebuilt.
const stampVersion = "wasmws 7"

func main() {
	log.SetFlags(0)
	log.SetPrefix("wasmws: ")
	out := flag.String("o", "build/wasm", "output `directory` (created; its contents are owned by this command)")
	flag.Parse()
	if flag.NArg() != 0 {
		log.Fatal("no arguments expected; use -o DIR")
	}
	if err := run(*out); err != nil {
		log.Fatal(err)
	}
}

// module is an upstream module that the workspace replaces with a cut copy.
type module struct {
	path, version, dir string
	copyDir            string // directory name of the copy inside the output
}

func run(out string) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	goVersion, err := goCmd(root, nil, "list", "-m", "-f", "{{.GoVersion}}")
	if err != nil {
		return err
	}
	mods, pkgMod, err := modulesOf(root)
	if err != nil {
		return err
	}

	var stamp strings.Builder
	fmt.Fprintf(&stamp, "%s\ngo %s\nroot %s\n", stampVersion, goVersion, root)
	for _, m := range mods {
		fmt.Fprintf(&stamp, "module %s %s %s\n", m.path, m.version, m.dir)
	}
	for _, c := range cuts {
		fmt.Fprintf(&stamp, "cut %s %s %s\n", c.pkg, c.file, strings.Join(c.decls, " "))
	}
	stampFile := filepath.Join(out, "stamp")
	if old, err := os.ReadFile(stampFile); err == nil && string(old) == stamp.String() {
		return nil // up to date
	}

	// Build in a fresh directory and move it into place at the end, so that an interrupted run never leaves a
	// half-copied module behind a valid stamp.
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".wasmws-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	for _, m := range mods {
		if err := copyModule(m.dir, filepath.Join(tmp, m.copyDir), dropFiles(m, pkgMod)); err != nil {
			return err
		}
	}
	for _, c := range cuts {
		if len(c.decls) == 0 {
			continue
		}
		m := pkgMod[c.pkg]
		name := filepath.Join(tmp, m.copyDir, filepath.FromSlash(strings.TrimPrefix(c.pkg, m.path+"/")), c.file)
		if err := cutDecls(root, name, c.decls); err != nil {
			return fmt.Errorf("%s/%s: %w", c.pkg, c.file, err)
		}
	}

	use, err := filepath.Rel(out, root)
	if err != nil {
		use = root
	}
	var work strings.Builder
	fmt.Fprintf(&work, `// Code generated by tools/wasmws; DO NOT EDIT.
// The workspace in which the engine is built for js/wasm: see tools/wasmws and docs/architecture.md.

go %s

use %s
`, goVersion, filepath.ToSlash(use))
	for _, m := range mods {
		fmt.Fprintf(&work, "\nreplace %s %s => ./%s", m.path, m.version, m.copyDir)
	}
	work.WriteString("\n")
	if err := os.WriteFile(filepath.Join(tmp, "go.work"), []byte(work.String()), 0o644); err != nil {
		return err
	}
	readme := "Generated by `go run ./tools/wasmws`; safe to delete. See docs/architecture.md.\n"
	if err := os.WriteFile(filepath.Join(tmp, "README"), []byte(readme), 0o644); err != nil {
		return err
	}

	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	if err := verify(root, out, mods); err != nil {
		return err
	}
	return os.WriteFile(stampFile, []byte(stamp.String()), 0o644)
}

// modulesOf returns the modules that hold the cut packages, in go.mod's versions, and the module of each cut
// package. It downloads them if needed.
func modulesOf(root string) ([]*module, map[string]*module, error) {
	var pkgs []string
	for _, c := range cuts {
		if !slices.Contains(pkgs, c.pkg) {
			pkgs = append(pkgs, c.pkg)
		}
	}
	// Listed for js/wasm outside any workspace: the packages as the module cache has them.
	const format = "{{.ImportPath}} {{.Module.Path}} {{.Module.Version}} {{with .Module.Replace}}{{.Path}}@{{.Version}}{{else}}-{{end}} {{.Module.Dir}}"
	args := append([]string{"list", "-f", format}, pkgs...)
	lines, err := goCmd(root, []string{"GOOS=js", "GOARCH=wasm"}, args...)
	if err != nil {
		return nil, nil, err
	}
	byPath := map[string]*module{}
	pkgMod := map[string]*module{}
	var mods []*module
	for _, line := range strings.Split(lines, "\n") {
		f := strings.SplitN(line, " ", 5)
		if len(f) != 5 {
			return nil, nil, fmt.Errorf("unexpected go list output %q", line)
		}
		if f[3] != "-" {
			// A replace by the same module at a released version (go.mod pins k8s.io/kubernetes' staging
			// modules so) is that version; any other is not a release this tool can cut.
			path, version, _ := strings.Cut(f[3], "@")
			if path != f[1] || version == "" {
				return nil, nil, fmt.Errorf("go.mod replaces %s by %s; tools/wasmws only knows how to cut a released version", f[1], f[3])
			}
			f[2] = version
		}
		m := byPath[f[1]]
		if m == nil {
			m = &module{path: f[1], version: f[2], dir: f[4], copyDir: strings.NewReplacer("/", "_", ".", "_").Replace(f[1])}
			byPath[m.path] = m
			mods = append(mods, m)
		}
		pkgMod[f[0]] = m
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].path < mods[j].path })
	return mods, pkgMod, nil
}

// dropFiles returns the files of m dropped whole, checking that every file a cut names exists.
func dropFiles(m *module, pkgMod map[string]*module) map[string]bool {
	drop := map[string]bool{}
	for _, c := range cuts {
		if pkgMod[c.pkg] != m || len(c.decls) != 0 {
			continue
		}
		drop[filepath.Join(m.dir, filepath.FromSlash(strings.TrimPrefix(c.pkg, m.path+"/")), c.file)] = true
	}
	return drop
}

// verify checks that the workspace really substitutes the copies and that every cut package still compiles
// for js/wasm, so that a bad cut fails here and not as a puzzling error in a later build.
func verify(root, out string, mods []*module) error {
	env := []string{"GOWORK=" + filepath.Join(out, "go.work"), "GOOS=js", "GOARCH=wasm"}
	var pkgs []string
	for _, c := range cuts {
		if !slices.Contains(pkgs, c.pkg) {
			pkgs = append(pkgs, c.pkg)
		}
	}
	args := append([]string{"list", "-f", "{{.ImportPath}} {{.Module.Dir}}"}, pkgs...)
	lines, err := goCmd(root, env, args...)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(lines, "\n") {
		pkg, dir, _ := strings.Cut(line, " ")
		i := slices.IndexFunc(mods, func(m *module) bool { return pkg == m.path || strings.HasPrefix(pkg, m.path+"/") })
		if want := filepath.Join(out, mods[i].copyDir); dir != want {
			return fmt.Errorf("in the generated workspace %s resolves to module directory %s, want %s", pkg, dir, want)
		}
	}
	// A cut can break a package that imports the cut one, so those are compiled too: every package outside this
	// module, in the graph of the engine and of the browser bridge, that imports a cut package.
	const format = `{{if not .Module}}{{else if .Module.Main}}{{else}}{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{end}}`
	roots := []string{"./engine/..."}
	if _, err := os.Stat(filepath.Join(root, "wasm")); err == nil {
		roots = append(roots, "./wasm/...")
	}
	lines, err = goCmd(root, env, append([]string{"list", "-e", "-deps", "-f", format}, roots...)...)
	if err != nil {
		return err
	}
	build := slices.Clone(pkgs)
	for _, line := range strings.Split(lines, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && slices.ContainsFunc(f[1:], func(p string) bool { return slices.Contains(pkgs, p) }) && !slices.Contains(build, f[0]) {
			build = append(build, f[0])
		}
	}
	if _, err := goCmd(root, env, append([]string{"build"}, build...)...); err != nil {
		return fmt.Errorf("a cut package or one that imports it does not compile: %w", err)
	}
	return nil
}

// copyModule copies the module at src to dst without tests, test data and the files in drop, which must all
// exist. Files in the module cache are read-only; the copies are writable so that `rm -rf build` and later
// runs work.
func copyModule(src, dst string, drop map[string]bool) error {
	for name := range drop {
		if _, err := os.Stat(name); err != nil {
			// Upstream renamed or removed a file: the cut must be reviewed, not silently ignored.
			return fmt.Errorf("%s is gone: review the cuts in tools/wasmws", name)
		}
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == "testdata":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case strings.HasSuffix(path, "_test.go"), drop[path], !d.Type().IsRegular():
			return nil
		}
		return copyFile(path, target)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// cutDecls removes the named top-level declarations, with their doc comments, from the Go file name, then the
// imports that only they used, and gofmts the rest. Everything else in the file stays byte for byte.
func cutDecls(root, name string, decls []string) error {
	src, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, d := range decls {
		want[d] = true
	}
	found := map[string]bool{}
	type span struct{ from, to token.Pos }
	var spans []span
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			n := funcName(d)
			if want[n] {
				found[n] = true
				spans = append(spans, span{docStart(d.Doc, d.Pos()), d.End()})
			}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			var hit []ast.Spec
			for _, s := range d.Specs {
				names := specNames(s)
				n := 0
				for _, nm := range names {
					if want[nm] {
						found[nm] = true
						n++
					}
				}
				switch {
				case n == len(names):
					hit = append(hit, s)
				case n > 0:
					return fmt.Errorf("%v declares %s together: cut all of them or none", fset.Position(s.Pos()), strings.Join(names, ", "))
				}
			}
			switch {
			case len(hit) == len(d.Specs):
				spans = append(spans, span{docStart(d.Doc, d.Pos()), d.End()})
			default:
				for _, s := range hit {
					var doc *ast.CommentGroup
					switch s := s.(type) {
					case *ast.ValueSpec:
						doc = s.Doc
					case *ast.TypeSpec:
						doc = s.Doc
					}
					spans = append(spans, span{docStart(doc, s.Pos()), s.End()})
				}
			}
		}
	}
	for _, d := range decls {
		if !found[d] {
			return fmt.Errorf("no top-level declaration %s: review the cuts in tools/wasmws", d)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from > spans[j].from })
	for _, s := range spans {
		from, to := fset.Position(s.from).Offset, fset.Position(s.to).Offset
		src = append(src[:from:from], src[to:]...)
	}
	if src, err = dropUnusedImports(root, name, src); err != nil {
		return err
	}
	if src, err = format.Source(src); err != nil {
		return err
	}
	return os.WriteFile(name, src, 0o644)
}

// funcName is "Name" for a function and "Type.Name" for a method (with or without a pointer receiver).
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + d.Name.Name
		}
		return d.Name.Name
	}
}

func specNames(s ast.Spec) []string {
	switch s := s.(type) {
	case *ast.ValueSpec:
		var names []string
		for _, n := range s.Names {
			names = append(names, n.Name)
		}
		return names
	case *ast.TypeSpec:
		return []string{s.Name.Name}
	}
	return nil
}

func docStart(doc *ast.CommentGroup, pos token.Pos) token.Pos {
	if doc != nil {
		return doc.Pos()
	}
	return pos
}

// dropUnusedImports removes the imports of src whose package name no longer appears as a qualifier. Package
// names come from the go command, since an import path's last element need not be the name. A mistake here
// cannot go unnoticed: the file would not compile, and verify compiles it.
func dropUnusedImports(root, name string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var unnamed []string
	for _, imp := range f.Imports {
		if imp.Name == nil {
			p, _ := strconv.Unquote(imp.Path.Value)
			unnamed = append(unnamed, p)
		}
	}
	names := map[string]string{}
	if len(unnamed) > 0 {
		args := append([]string{"list", "-f", "{{.ImportPath}} {{.Name}}"}, unnamed...)
		lines, err := goCmd(root, []string{"GOOS=js", "GOARCH=wasm"}, args...)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(lines, "\n") {
			p, n, _ := strings.Cut(line, " ")
			names[p] = n
		}
	}
	var spans [][2]int
	for _, decl := range f.Decls {
		d, ok := decl.(*ast.GenDecl)
		if !ok || d.Tok != token.IMPORT {
			continue
		}
		for _, s := range d.Specs {
			imp := s.(*ast.ImportSpec)
			p, _ := strconv.Unquote(imp.Path.Value)
			n := names[p]
			if imp.Name != nil {
				n = imp.Name.Name
			}
			if n == "_" || n == "." || n == "" || used[n] {
				continue
			}
			from, end := docStart(imp.Doc, imp.Pos()), imp.End()
			if imp.Comment != nil {
				end = imp.Comment.End()
			}
			if !d.Lparen.IsValid() { // import "x": the whole declaration goes
				from, end = docStart(d.Doc, d.Pos()), d.End()
			}
			to := fset.Position(end).Offset
			if to < len(src) && src[to] == '\n' {
				to++ // the spec's line, not only its text
			}
			spans = append(spans, [2]int{fset.Position(from).Offset, to})
		}
	}
	for i := len(spans) - 1; i >= 0; i-- {
		src = append(src[:spans[i][0]:spans[i][0]], src[spans[i][1]:]...)
	}
	return src, nil
}

// moduleRoot returns the directory of the main module (the crdplay repository), ignoring any go.work.
func moduleRoot() (string, error) {
	gomod, err := goCmd("", []string{"GOWORK=off"}, "env", "GOMOD")
	if err != nil {
		return "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run from inside the crdplay module")
	}
	return filepath.Dir(gomod), nil
}

// goCmd runs the go command in dir with extra environment and returns its trimmed standard output. Commands
// run outside the generated workspace unless env sets GOWORK, so that a stale or broken workspace cannot
// influence how it is regenerated.
func goCmd(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return strings.TrimSpace(stdout.String()), nil
}
