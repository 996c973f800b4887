package depguard

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// importGraph is the non-test import graph of the guarded trees for js/wasm.
type importGraph struct {
	roots   []string            // the packages the patterns matched, sorted
	imports map[string][]string // package -> its direct imports
	std     map[string]bool     // packages of the standard library
}

// loadGraph lists the packages of patterns and everything they import, for js/wasm, with gowork set.
func loadGraph(t *testing.T, goTool, root, gowork string, patterns []string) importGraph {
	t.Helper()
	// One line per package: "+" marks the packages the patterns matched, "!" the standard library's.
	const format = `{{if not .DepOnly}}+{{end}}{{if .Standard}}!{{end}}{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`
	args := append([]string{"list", "-deps", "-f", format}, patterns...)
	g := parseGraph(goRun(t, goTool, root, []string{gowork, "GOOS=js", "GOARCH=wasm"}, args...))
	if len(g.roots) == 0 {
		t.Fatalf("go list (%s) matched no package of %v", gowork, patterns)
	}
	return g
}

// parseGraph reads loadGraph's go list output.
func parseGraph(out string) importGraph {
	g := importGraph{imports: map[string][]string{}, std: map[string]bool{}}
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
	return g
}

// matches reports whether the import path p is matched by pattern, as go list matches import paths: a
// pattern ending in "/..." matches its prefix and every path below it.
func matches(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// roots returns the graph's roots that belong to the guard's tree.
func (gd guard) roots(g importGraph) []string {
	var out []string
	for _, r := range g.roots {
		if matches(gd.pattern, r) {
			out = append(out, r)
		}
	}
	return out
}

// walk visits the graph breadth-first from roots, entering neither skip nor, if skipStd, the imports of
// standard-library packages. It returns the packages in visiting order and, for each, the package it was
// first reached from, so that chains are shortest.
func (g importGraph) walk(roots []string, skip string, skipStd bool) (order []string, prev map[string]string) {
	prev = map[string]string{}
	queue := append([]string(nil), roots...)
	for _, r := range roots {
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

// check returns one message per ban of the guard that its tree reaches in g without going through skip,
// with how many packages match and the shortest import chain to the first of them.
func (gd guard) check(g importGraph, skip string) []string {
	roots := gd.roots(g)
	var msgs []string
	for _, b := range gd.bans {
		order, prev := g.walk(roots, skip, b.viaStd)
		var hits []string
		for _, p := range order {
			if matches(b.prefix+"/...", p) {
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
		msgs = append(msgs, fmt.Sprintf("%s reaches %s (%d package(s)): %s\n\timport chain: %s",
			gd.pattern, b.prefix, len(hits), b.reason, strings.Join(chain, "\n\t\t-> ")))
	}
	return msgs
}

// goCommand returns the go command, or skips the test where none can run (under js/wasm in node, os/exec is
// not available).
func goCommand(t *testing.T) string {
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

// goRun runs the go command in dir with extra environment and returns its standard output.
func goRun(t *testing.T, goTool, dir string, env []string, args ...string) string {
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
