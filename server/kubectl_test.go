package server_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"crdplay/server"
)

var (
	recordOracle = flag.String("record-oracle", "", "TestKubectlWalk: run the walk against the oracle at this `URL` and "+
		"rewrite testdata/kubectl/walk.oracle.txt with its normalised outputs instead of testing crdplay")
	kubectlBin = flag.String("kubectl", "", "TestKubectlWalk: use this kubectl `binary` instead of building tools/kubectl")
)

// kubectlVersion is the release stamped into the kubectl the test builds, as a release build of k8s.io/kubectl
// v0.37.2 is (/work/shared/oracle/build.sh stamps the oracle's the same way). Without it kubectl reports
// v0.0.0-master and cannot compare its version with the server's.
const kubectlVersion = "v1.37.2"

// kubectlLDFlags stamps kubectlVersion into component-base and client-go.
func kubectlLDFlags() string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(kubectlVersion, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var f []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		f = append(f, "-X", pkg+".gitVersion="+kubectlVersion, "-X", pkg+".gitMajor="+major, "-X", pkg+".gitMinor="+minor)
	}
	f = append(f, "-X", "k8s.io/component-base/version.gitTreeState=clean")
	return strings.Join(f, " ")
}

// TestKubectlWalk drives crdplay's server with upstream kubectl through the custom resource documentation
// ("Extend the Kubernetes API with CustomResourceDefinitions"): apply the CronTab CRD, wait until it is
// established, create objects, get them as tables, YAML, wide and through the "all" category, explain the schema,
// scale, diff, client- and server-side apply with a conflict, labels, a namespace that does not exist, the shirts
// CRD with field selectors, deletions. The commands are testdata/kubectl/walk.txt; the walk runs on memory and on
// an embedded etcd, and every command's exit status, stdout and stderr must equal what the real
// apiextensions-apiserver made kubectl print, in testdata/kubectl/walk.oracle.txt, after normalising what differs
// between any two runs (ages, timestamps, resourceVersions, uids, temporary file names).
//
// walk.oracle.txt is recorded from the oracle, never from crdplay:
//
//	(cd ../shared/oracle && ./build.sh && bin/oracle serve --port 18080 --discovery-shim) &
//	go test ./server -run TestKubectlWalk -record-oracle http://127.0.0.1:18080 [-kubectl ../shared/oracle/bin/kubectl]
//
// on a freshly started oracle (the walk expects no CRDs). The oracle answers /apis only with --discovery-shim; a
// standalone apiextensions-apiserver leaves it to kube-apiserver's aggregator.
func TestKubectlWalk(t *testing.T) {
	steps := readWalk(t)
	for _, f := range walkOrphans(t, steps) {
		t.Errorf("%s: no command of %s names it, so the walk never reads it", f, walkFile)
	}
	needSockets(t)
	if testing.Short() {
		t.Skip("builds kubectl")
	}
	kubectl := buildKubectl(t)

	if *recordOracle != "" {
		if err := checkIsOracle(*recordOracle); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.WriteString(oracleHeader)
		for _, s := range runWalk(t, kubectl, *recordOracle, steps) {
			buf.WriteString(s.String())
		}
		if err := os.WriteFile(oracleFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %d steps from %s into %s", len(steps), *recordOracle, oracleFile)
		return
	}

	want := readTranscript(t)
	if len(want) != len(steps) {
		t.Fatalf("%s has %d steps, %s %d: record it again (see the test's comment)", oracleFile, len(want), walkFile, len(steps))
	}
	etcdEndpoint := startEtcd(t)
	for _, storage := range []string{server.StorageMemory, server.StorageEtcd} {
		t.Run(storage, func(t *testing.T) {
			opts := server.Options{Storage: storage}
			if storage == server.StorageEtcd {
				opts.Etcd.Endpoints = []string{etcdEndpoint}
			}
			h, err := server.NewHandler(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			srv := httptest.NewServer(h) // on 127.0.0.1
			defer srv.Close()
			got := runWalk(t, kubectl, srv.URL, steps)
			for i := range got {
				if got[i].args != want[i].args {
					t.Fatalf("step %d is %q in %s but %q in %s: record it again", i+1, want[i].args, oracleFile, got[i].args, walkFile)
				}
				if g, w := got[i].String(), want[i].String(); g != w {
					t.Errorf("step %d differs from the oracle (-oracle +crdplay):\n%s", i+1, lineDiff(w, g))
				}
			}
		})
	}
}

const (
	walkFile   = "testdata/kubectl/walk.txt"
	oracleFile = "testdata/kubectl/walk.oracle.txt"
)

const oracleHeader = `# Outputs of testdata/kubectl/walk.txt recorded from the real apiextensions-apiserver v0.37.2 (the oracle, with
# --discovery-shim) and upstream kubectl v1.37.2, normalised by TestKubectlWalk. Do not edit: record again with
#   go test ./server -run TestKubectlWalk -record-oracle http://127.0.0.1:PORT
`

// step is one kubectl command and what it did.
type step struct {
	args           string // the line of walk.txt
	exit           int
	stdout, stderr string
}

// String renders a step for the transcript: the command, its exit status, then stdout and stderr. Output that
// does not end in a newline (jsonpath) is marked, so that the transcript stays line-oriented.
func (s step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ kubectl %s\n> exit %d\n", s.args, s.exit)
	for _, o := range []struct{ name, text string }{{"stdout", s.stdout}, {"stderr", s.stderr}} {
		if o.text == "" {
			continue
		}
		fmt.Fprintf(&b, "> %s\n", o.name)
		b.WriteString(o.text)
		if !strings.HasSuffix(o.text, "\n") {
			b.WriteString("\n> (no newline at end)\n")
		}
	}
	return b.String()
}

func readWalk(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(walkFile)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			steps = append(steps, line)
		}
	}
	return steps
}

// walkOrphans returns the files beside walkFile that none of its steps names (kubectl runs in that directory,
// so a step names a file by its base name).
func walkOrphans(t *testing.T, steps []string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(walkFile))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(steps, "\n")
	var orphans []string
	for _, e := range entries {
		p := filepath.Join(filepath.Dir(walkFile), e.Name())
		if p != filepath.Clean(walkFile) && p != filepath.Clean(oracleFile) && !strings.Contains(all, e.Name()) {
			orphans = append(orphans, p)
		}
	}
	return orphans
}

// readTranscript parses walk.oracle.txt back into steps.
func readTranscript(t *testing.T) []step {
	t.Helper()
	data, err := os.ReadFile(oracleFile)
	if err != nil {
		t.Fatalf("%v (record it: see TestKubectlWalk)", err)
	}
	var steps []step
	section := "" // "stdout" or "stderr" while reading output lines
	var text strings.Builder
	flush := func() {
		if section != "" {
			s := &steps[len(steps)-1]
			if section == "stdout" {
				s.stdout = text.String()
			} else {
				s.stderr = text.String()
			}
		}
		section = ""
		text.Reset()
	}
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		switch {
		case len(steps) == 0 && strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "$ kubectl "):
			flush()
			steps = append(steps, step{args: strings.TrimPrefix(line, "$ kubectl ")})
		case len(steps) == 0:
			t.Fatalf("%s:%d: %q before the first command", oracleFile, n+1, line)
		case strings.HasPrefix(line, "> exit "):
			flush()
			if _, err := fmt.Sscanf(line, "> exit %d", &steps[len(steps)-1].exit); err != nil {
				t.Fatalf("%s:%d: %v", oracleFile, n+1, err)
			}
		case line == "> stdout" || line == "> stderr":
			flush()
			section = line[2:]
		case line == "> (no newline at end)" && section != "":
			str := strings.TrimSuffix(text.String(), "\n")
			text.Reset()
			text.WriteString(str)
		case section != "":
			text.WriteString(line + "\n")
		default:
			t.Fatalf("%s:%d: unexpected %q", oracleFile, n+1, line)
		}
	}
	flush()
	return steps
}

// runWalk runs the steps with kubectl against the server at url, with no kubeconfig, no user configuration
// (kuberc) and a discovery cache of its own, and returns the normalised results.
func runWalk(t *testing.T, kubectl, url string, steps []string) []step {
	t.Helper()
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), // kubectl diff runs diff(1)
		"HOME=" + home,
		"KUBECONFIG=/nonexistent",
		"KUBERC=off",
		"TMPDIR=" + os.TempDir(),
	}
	global := []string{"--server", url, "--cache-dir", filepath.Join(home, "cache")}
	var out []step
	for _, line := range steps {
		args, err := splitArgs(line)
		if err != nil {
			t.Fatalf("%s: %q: %v", walkFile, line, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, kubectl, append(append([]string{}, global...), args...)...)
		cmd.Dir = filepath.Dir(walkFile)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err = cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		s := step{args: line, stdout: stdout.String(), stderr: stderr.String()}
		var exitErr *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exitErr) && !timedOut:
			s.exit = exitErr.ExitCode()
		default:
			t.Fatalf("kubectl %s: %v after %v\nstdout:\n%s\nstderr:\n%s", line, err, time.Since(start), &stdout, &stderr)
		}
		out = append(out, normaliseStep(s))
	}
	return out
}

// splitArgs splits a walk line on spaces; 'single quotes' keep spaces and are removed.
func splitArgs(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inArg = !quoted, true
		case r == ' ' && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote")
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

var (
	// klog's header: severity, date, time, thread id.
	klogHeader = regexp.MustCompile(`(?m)^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ `)
	timestamp  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	// resourceVersion and uid values in YAML, JSON and diff lines; empty values (a List's "") stay.
	volatileValue = regexp.MustCompile(`(?m)^([-+ ]?\s*(?:- )?"?(resourceVersion|uid)"?: )("?)([^"\s,]+)("?)`)
	// kubectl diff's temporary directories and the file times diff prints.
	diffDir  = regexp.MustCompile(`\S*/(LIVE|MERGED)-\d+/`)
	diffTime = regexp.MustCompile(`(?m)^((?:---|\+\+\+) \S+)\t.*$`)
	// Build details of the binaries: the oracle's and the test's may come from different toolchains or machines.
	buildDetail = regexp.MustCompile(`"(goVersion|platform|compiler)": "[^"]*"`)
	tableHeader = regexp.MustCompile(`^(NAMESPACE|NAME) {3,}[A-Z]`)
)

// normaliseStep replaces what differs between two runs of the same walk on the same server: times, ages,
// resourceVersions, uids, temporary file names, klog headers; it sorts the causes of an Invalid error, which
// kube-apiserver lists in map order.
func normaliseStep(s step) step {
	for _, p := range []*string{&s.stdout, &s.stderr} {
		v := *p
		v = klogHeader.ReplaceAllString(v, "<klog> ")
		v = timestamp.ReplaceAllString(v, "<timestamp>")
		v = volatileValue.ReplaceAllString(v, "${1}${3}<${2}>${5}")
		v = diffDir.ReplaceAllString(v, "<tmp>/${1}/")
		v = diffTime.ReplaceAllString(v, "${1}\t<time>")
		v = buildDetail.ReplaceAllString(v, `"${1}": "<${1}>"`)
		v = normaliseTables(v)
		v = sortCauses(v)
		*p = v
	}
	return s
}

// normaliseTables rewrites kubectl's tables with every AGE cell as <age>, laid out again as kubectl lays them out
// (columns three spaces apart), so that an age of 9s or 10s does not move the columns.
func normaliseTables(text string) string {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !tableHeader.MatchString(lines[i]) {
			continue
		}
		starts := columnStarts(lines[i])
		end := i + 1
		for end < len(lines) && lines[end] != "" {
			end++
		}
		var buf bytes.Buffer
		tw := tabwriter.NewWriter(&buf, 0, 8, 3, ' ', 0)
		for j := i; j < end; j++ {
			cells := cutColumns(lines[j], starts)
			if j > i {
				for c, h := range cutColumns(lines[i], starts) {
					if h == "AGE" && cells[c] != "" {
						cells[c] = "<age>"
					}
				}
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		tw.Flush()
		block := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		for k := range block {
			block[k] = strings.TrimRight(block[k], " ")
		}
		lines = append(lines[:i], append(block, lines[end:]...)...)
		i = end - 1
	}
	return strings.Join(lines, "\n")
}

// columnStarts returns where each column of a header line begins: headers are separated by two spaces or more.
func columnStarts(header string) []int {
	starts := []int{0}
	for i := 1; i < len(header); i++ {
		if header[i] != ' ' && i >= 2 && header[i-1] == ' ' && header[i-2] == ' ' {
			starts = append(starts, i)
		}
	}
	return starts
}

// cutColumns splits a table line at the header's column starts.
func cutColumns(line string, starts []int) []string {
	cells := make([]string, len(starts))
	for c, s := range starts {
		e := len(line)
		if c+1 < len(starts) && starts[c+1] < e {
			e = starts[c+1]
		}
		if s < e {
			cells[c] = strings.TrimSpace(line[s:e])
		}
	}
	return cells
}

// sortCauses sorts each run of "* cause" lines.
func sortCauses(text string) string {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], "* ") {
			j++
		}
		if j > i {
			sort.Strings(lines[i:j])
			i = j
		} else {
			i++
		}
	}
	return strings.Join(lines, "\n")
}

// lineDiff shows two texts line by line, marking lines only in want with - and lines only in got with +.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	// Longest common subsequence by dynamic programming: the outputs are short.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+ " + b[j] + "\n")
			j++
		default:
			out.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return out.String()
}

// checkIsOracle refuses to record expectations from anything but a kube-apiserver: every response of its handler
// chain carries an Audit-Id header, which crdplay does not send.
func checkIsOracle(url string) error {
	resp, err := http.Get(url + "/version")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.Header.Get("Audit-Id") == "" {
		return fmt.Errorf("%s does not look like the oracle (no Audit-Id header): expectations come from the real server only", url)
	}
	return nil
}

// kubectlBuild is the kubectl the tests build once per test binary.
var kubectlBuild struct {
	once sync.Once
	path string
	err  error
}

// buildKubectl builds tools/kubectl (a module of its own) into build/kubectl at the repository root, once per test
// run. go build relinks only when something changed, so later runs take seconds; the first one on a cold cache
// downloads and compiles kubectl's dependencies (a few minutes on two cores).
func buildKubectl(t *testing.T) string {
	t.Helper()
	if *kubectlBin != "" {
		return *kubectlBin
	}
	kubectlBuild.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		root, err := filepath.Abs("..")
		if err != nil {
			kubectlBuild.err = err
			return
		}
		kubectlBuild.path = filepath.Join(root, "build", "kubectl", "kubectl")
		start := time.Now()
		cmd := exec.Command(goTool, "build", "-C", filepath.Join(root, "tools", "kubectl"),
			"-ldflags", kubectlLDFlags(), "-o", kubectlBuild.path, ".")
		// The tools module is built on its own, whatever workspace the caller's environment names.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOOS=", "GOARCH=")
		if out, err := cmd.CombinedOutput(); err != nil {
			kubectlBuild.err = fmt.Errorf("building kubectl: %v\n%s", err, out)
			return
		}
		t.Logf("built %s in %v", kubectlBuild.path, time.Since(start).Round(time.Second))
	})
	if kubectlBuild.err != nil {
		t.Fatal(kubectlBuild.err)
	}
	return kubectlBuild.path
}
