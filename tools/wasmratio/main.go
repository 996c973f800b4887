// Command wasmratio reports how much slower the playground's evaluation runs as js/wasm than natively, phase by
// phase, beside a reference of at most 2.5x per phase. It is a report for `make bench`, never a test: it prints a
// Markdown table with each ratio beside the target and fails only when a benchmark cannot run.
//
//	go run ./tools/wasmratio [-wasm-workspace build/wasm/go.work] [-out build/bench]
//
// Both sides run the same benchmarks of package playground (BenchmarkReevaluate, BenchmarkInstall), whose
// "<phase>-ms/op" metrics split each evaluation into its phases: parse (the object texts to JSON), engine (the
// requests inside the engine's handler), place (answers placed in the texts: marks, stored YAML, positions),
// encode (the result as JSON for the bridge); crd-engine and crd-analysis for a CRD install. The wasm test
// binary is built in the trimmed workspace (what the browser gets) and run by node, whose V8 is Chromium's
// engine; the native one runs with GOMAXPROCS=1, because the wasm build has a single thread (its garbage
// collector included), so that the ratio compares the code's speed rather than the number of cores. When
// web/bench/load.mjs has run (make bench runs it first), the same phases measured in headless Chromium through
// the page's bridge are put beside them: that is where the playground runs (Chromium's V8 is also much newer
// than node's), so the verdict is Chromium's.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// runs are the benchmarks and how long each runs. V8 compiles Go's wasm functions in tiers (a baseline
// compiler first, the optimising one for functions that turn out hot), so the wasm side needs a few seconds
// of iterations before it reaches the speed an edit session sees; the installs of the largest CRD take
// seconds each under wasm, so they run a fixed few times.
var runs = []struct{ bench, benchtime string }{
	{"Reevaluate", "3s"},
	{"Install/crontab", "2s"},
	{"Install/corpus-largest", "2x"},
}

const maxRatio = 2.5

func main() {
	ws := flag.String("wasm-workspace", "build/wasm/go.work", "the go.work of the trimmed js/wasm workspace (make wasm-workspace)")
	out := flag.String("out", "build/bench", "where the two test binaries are built")
	chromium := flag.String("chromium", "build/bench/chromium-phases.json", "the phases web/bench/load.mjs measured in Chromium, if it ran")
	flag.Parse()
	if err := run(*ws, *out, *chromium); err != nil {
		fmt.Fprintln(os.Stderr, "wasmratio:", err)
		os.Exit(1)
	}
}

func run(ws, out, chromiumFile string) error {
	ws, err := filepath.Abs(ws)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return err
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %v", err)
	}
	execNode := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec_node.js")

	native := filepath.Join(out, "playground.test")
	wasm := filepath.Join(out, "playground.test.wasm")
	if err := build(nil, native); err != nil {
		return fmt.Errorf("building the native test binary: %v", err)
	}
	if err := build([]string{"GOWORK=" + ws, "GOOS=js", "GOARCH=wasm"}, wasm); err != nil {
		return fmt.Errorf("building the wasm test binary: %v", err)
	}

	var rows []row
	for _, r := range runs {
		args := []string{"-test.run", "^$", "-test.bench", "^Benchmark" + strings.ReplaceAll(r.bench, "/", "$/^") + "$", "-test.benchtime", r.benchtime}
		n, err := bench(command([]string{"GOMAXPROCS=1"}, native, args...))
		if err != nil {
			return fmt.Errorf("native %s: %v", r.bench, err)
		}
		w, err := bench(command(nil, "node", append([]string{execNode, wasm}, args...)...))
		if err != nil {
			return fmt.Errorf("wasm %s: %v", r.bench, err)
		}
		for _, name := range n.names {
			wr, ok := w.results[name]
			if !ok {
				return fmt.Errorf("wasm %s: no result for %s", r.bench, name)
			}
			rows = append(rows, row{name: name, native: n.results[name], wasm: wr})
		}
	}

	chromium, agent, err := readChromium(chromiumFile)
	if err != nil {
		return err
	}
	fmt.Printf("Evaluation phases, ms per evaluation: native (GOMAXPROCS=1) and js/wasm under node %s (go test -bench ./playground)", nodeVersion())
	if chromium != nil {
		fmt.Printf(", and js/wasm in headless Chromium (%s) through the page's bridge (web/bench/load.mjs); the verdict is Chromium's, where the playground runs", agent)
	}
	fmt.Print(".\n\n")
	fmt.Println("| benchmark | phase | native | wasm, node | node / native | wasm, Chromium | Chromium / native | target | verdict |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		for _, p := range r.native.phases {
			nv, wv := r.native.ms[p], r.wasm.ms[p]
			if _, ok := r.wasm.ms[p]; !ok {
				return fmt.Errorf("wasm %s: no %s-ms/op metric", r.name, p)
			}
			ratio := wv / nv
			cell, cratio := "-", "-"
			if cv, ok := chromium[r.name][p]; ok {
				ratio = cv / nv
				cell, cratio = fmt.Sprintf("%.3f", cv), fmt.Sprintf("%.1fx", ratio)
			}
			verdict := "within"
			if ratio > maxRatio {
				verdict = "OVER"
			}
			fmt.Printf("| %s | %s | %.3f | %.3f | %.1fx | %s | %s | %.1fx | %s |\n", r.name, p, nv, wv, wv/nv, cell, cratio, maxRatio, verdict)
		}
	}
	return nil
}

type row struct {
	name         string
	native, wasm result
}

// result is one benchmark's line: its phases in their order and milliseconds per op of each.
type result struct {
	phases []string
	ms     map[string]float64
}

type results struct {
	names   []string
	results map[string]result
}

// build builds the playground's test binary.
func build(env []string, out string) error {
	c := exec.Command("go", "test", "-c", "-o", out, "./playground")
	c.Env = append(os.Environ(), env...)
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	return c.Run()
}

// command runs in the playground's directory, where its benchmarks find ../testdata.
func command(env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir = "playground"
	c.Env = append(os.Environ(), env...)
	c.Stderr = os.Stderr
	return c
}

// bench runs a test binary and reads its benchmark lines: "BenchmarkX/y[-P] N T ns/op V phase-ms/op ...".
func bench(c *exec.Cmd) (results, error) {
	var stdout bytes.Buffer
	c.Stdout = &stdout
	if err := c.Run(); err != nil {
		return results{}, fmt.Errorf("%v\n%s", err, stdout.String())
	}
	rs := results{results: map[string]result{}}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the GOMAXPROCS suffix
			}
		}
		r := result{ms: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return rs, fmt.Errorf("%q: %v", sc.Text(), err)
			}
			if unit := f[i+1]; strings.HasSuffix(unit, "-ms/op") {
				p := strings.TrimSuffix(unit, "-ms/op")
				r.phases = append(r.phases, p)
				r.ms[p] = v
			}
		}
		rs.names = append(rs.names, name)
		rs.results[name] = r
	}
	if len(rs.names) == 0 {
		return rs, fmt.Errorf("no benchmark ran:\n%s", stdout.String())
	}
	return rs, sc.Err()
}

func nodeVersion() string {
	v, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(v))
}

// readChromium reads web/bench/load.mjs's measurements: ms per phase by benchmark name. A missing file is no
// error (load.mjs did not run): the table then has node's figures only.
func readChromium(file string) (map[string]map[string]float64, string, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var v struct {
		UserAgent  string                        `json:"userAgent"`
		Benchmarks map[string]map[string]float64 `json:"benchmarks"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, "", fmt.Errorf("%s: %v", file, err)
	}
	agent := v.UserAgent
	if i := strings.Index(agent, "HeadlessChrome/"); i >= 0 {
		agent = strings.Fields(agent[i:])[0]
	}
	return v.Benchmarks, agent, nil
}
