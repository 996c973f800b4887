package kubectl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"crdplay/engine"
)

// Recording expectations: every testdata/scripts/NAME.txt runs against a fresh real API server (the
// oracle, ../shared/oracle) with real kubectl v1.37.2, and what kubectl printed and requested becomes
// testdata/scripts/NAME.golden. Build the oracle and kubectl first (cd ../shared/oracle && ./build.sh), then:
//
//	go test ./playground/kubectl -run TestScripts -oracle=$PWD/../shared/oracle
//
// Without the flag, TestScripts runs the same scripts through this package against engine.NewHandler and
// compares with the golden files. The golden files are never written from this package's own output.
var oracleDir = flag.String("oracle", "", "record testdata/scripts/*.golden from real kubectl against the oracle in this directory (it needs bin/oracle and bin/kubectl)")

// step is one line of a script: a kubectl command line, or a directive for the recorder.
type step struct {
	line  string
	sleep time.Duration // "@sleep N": the recorder waits (the real server establishes CRDs asynchronously)
	// engineDiffers ("@engine-differs REASON" before the command) marks a command where the engine (not this
	// package) is known to answer differently from the real server: differences are logged, not failures,
	// and a command that matches anyway fails, so that the mark is removed once the engine is fixed.
	engineDiffers string
	// timing ("@timing REASON" before the command) marks a command whose requests depend on how fast the
	// real server finishes something in the background: request differences are logged, not failures; what
	// kubectl printed is still compared.
	timing string
}

func parseScript(t *testing.T, path string) []step {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []step
	pendingDiffers, pendingTiming := "", ""
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "@sleep "):
			secs, err := strconv.ParseFloat(strings.TrimPrefix(line, "@sleep "), 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", path, i+1, err)
			}
			steps = append(steps, step{sleep: time.Duration(secs * float64(time.Second))})
		case strings.HasPrefix(line, "@engine-differs "):
			pendingDiffers = strings.TrimPrefix(line, "@engine-differs ")
		case strings.HasPrefix(line, "@timing "):
			pendingTiming = strings.TrimPrefix(line, "@timing ")
		case strings.HasPrefix(line, "kubectl"):
			steps = append(steps, step{line: line, engineDiffers: pendingDiffers, timing: pendingTiming})
			pendingDiffers, pendingTiming = "", ""
		default:
			t.Fatalf("%s:%d: want a kubectl command, a comment or @sleep, got %q", path, i+1, line)
		}
	}
	return steps
}

// outcome is what one command did, as stored in a golden file.
type outcome struct {
	command  string
	exitCode int
	stdout   string
	stderr   string
	requests []string // "METHOD /path?query STATUS"
}

// bodyMark starts the lines of a request body, under its request.
const bodyMark = "  > "

const (
	markCommand  = "$ "
	markExit     = ">>> exit "
	markStdout   = ">>> stdout"
	markStderr   = ">>> stderr"
	markRequests = ">>> requests"
)

func formatGolden(outs []outcome) string {
	var b strings.Builder
	b.WriteString("# Recorded from real kubectl v1.37.2 against the oracle (a real apiextensions-apiserver v0.37.2); see\n")
	b.WriteString("# script_test.go. Normalised: timestamps, uids, resourceVersions, AGE columns, OpenAPI hashes.\n")
	for _, o := range outs {
		b.WriteString(markCommand + o.command + "\n")
		fmt.Fprintf(&b, "%s%d\n", markExit, o.exitCode)
		b.WriteString(markStdout + "\n")
		b.WriteString(o.stdout)
		if o.stdout != "" && !strings.HasSuffix(o.stdout, "\n") {
			b.WriteString("\n>>> (no newline at end)\n")
		}
		b.WriteString(markStderr + "\n")
		b.WriteString(o.stderr)
		if o.stderr != "" && !strings.HasSuffix(o.stderr, "\n") {
			b.WriteString("\n>>> (no newline at end)\n")
		}
		b.WriteString(markRequests + "\n")
		for _, r := range o.requests {
			b.WriteString(r + "\n")
		}
	}
	return b.String()
}

func parseGolden(t *testing.T, path string) []outcome {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with -oracle)", err)
	}
	var outs []outcome
	var cur *outcome
	section := ""
	var buf strings.Builder
	flush := func() {
		if cur == nil {
			return
		}
		text := buf.String()
		text = strings.TrimSuffix(text, "\n>>> (no newline at end)\n")
		switch section {
		case "stdout":
			cur.stdout = text
		case "stderr":
			cur.stderr = text
		case "requests":
			for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				switch {
				case l == "":
				case strings.HasPrefix(l, bodyMark) && len(cur.requests) > 0:
					cur.requests[len(cur.requests)-1] += "\n" + l
				default:
					cur.requests = append(cur.requests, l)
				}
			}
		}
		buf.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# ") && cur == nil:
		case strings.HasPrefix(line, markCommand):
			flush()
			outs = append(outs, outcome{command: strings.TrimPrefix(line, markCommand)})
			cur = &outs[len(outs)-1]
			section = ""
		case strings.HasPrefix(line, markExit):
			cur.exitCode, _ = strconv.Atoi(strings.TrimPrefix(line, markExit))
		case line == markStdout:
			flush()
			section = "stdout"
		case line == markStderr:
			flush()
			section = "stderr"
		case line == markRequests:
			flush()
			section = "requests"
		default:
			buf.WriteString(line + "\n")
		}
	}
	flush()
	return outs
}

func loadFiles(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob("testdata/files/*")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(n)] = string(data)
	}
	return files
}

func TestScripts(t *testing.T) {
	scripts, err := filepath.Glob("testdata/scripts/*.txt")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	orphans, err := scriptOrphans("testdata", *oracleDir != "")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orphans {
		t.Error(o)
	}
	files := loadFiles(t)
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".txt")
		golden := strings.TrimSuffix(script, ".txt") + ".golden"
		t.Run(name, func(t *testing.T) {
			steps := parseScript(t, script)
			if *oracleDir != "" {
				record(t, steps, golden)
				return
			}
			want := parseGolden(t, golden)
			h, err := engine.NewHandler(engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for _, st := range steps {
				if st.line == "" {
					continue
				}
				if i >= len(want) {
					t.Fatalf("%s has %d commands, the script more: re-record it", golden, len(want))
				}
				w := want[i]
				i++
				if w.command != st.line {
					t.Fatalf("%s: command %d is %q, the script says %q: re-record it", golden, i, w.command, st.line)
				}
				res := Run(context.Background(), h, st.line, Options{Files: files})
				got := outcome{
					command:  st.line,
					exitCode: res.ExitCode,
					stdout:   normalize(res.Stdout),
					stderr:   normalize(res.Stderr),
				}
				for _, r := range res.Requests {
					got.requests = append(got.requests, requestLine(r.Method, r.Path, r.Query, r.Status)+bodyLines(r.Method, r.RequestBody))
				}
				if st.engineDiffers != "" {
					diffs := outcomeDiffs(i, w, got)
					if len(diffs) == 0 {
						t.Errorf("#%d %s: marked @engine-differs (%s) but matches kubectl now: remove the mark", i, st.line, st.engineDiffers)
					}
					for _, d := range diffs {
						t.Logf("known engine difference (%s): %s", st.engineDiffers, d)
					}
					continue
				}
				if st.timing != "" {
					if d := requestDiff(i, w, got); d != "" {
						t.Logf("timing-dependent requests (%s): %s", st.timing, d)
					}
					w.requests, got.requests = nil, nil
				}
				for _, d := range outcomeDiffs(i, w, got) {
					t.Error(d)
				}
			}
			if i != len(want) {
				t.Errorf("%s has %d commands, the script %d: re-record it", golden, len(want), i)
			}
		})
	}
}

// scriptOrphans names what under dir (the package's testdata) TestScripts would silently leave out: a golden
// file without its script, a script without its golden file (unless recording, which writes it), any other
// file among the scripts, and a file of files/ that no script names.
func scriptOrphans(dir string, recording bool) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "scripts"))
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for _, e := range entries {
		has[e.Name()] = true
	}
	var orphans []string
	var scripts strings.Builder
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, "scripts", name)
		stem, ext := strings.TrimSuffix(name, filepath.Ext(name)), filepath.Ext(name)
		switch {
		case e.IsDir():
			orphans = append(orphans, p+": a directory among the scripts: nothing reads it")
		case ext == ".golden" && !has[stem+".txt"]:
			orphans = append(orphans, p+": a golden file without its script ("+stem+".txt), so nothing compares with it")
		case ext == ".golden":
		case ext == ".txt":
			if !has[stem+".golden"] && !recording {
				orphans = append(orphans, p+": a script without its golden file ("+stem+".golden): record it with -oracle")
			}
			text, err := os.ReadFile(p)
			if err != nil {
				return nil, err
			}
			scripts.Write(text)
		default:
			orphans = append(orphans, p+": neither a script (.txt) nor a golden file (.golden): nothing reads it")
		}
	}
	files, err := os.ReadDir(filepath.Join(dir, "files"))
	if err != nil {
		return nil, err
	}
	for _, e := range files {
		if !strings.Contains(scripts.String(), e.Name()) {
			orphans = append(orphans, filepath.Join(dir, "files", e.Name())+": no script names it, so no command reads it")
		}
	}
	return orphans, nil
}

// outcomeDiffs describes how got differs from what kubectl did.
func outcomeDiffs(n int, want, got outcome) []string {
	var out []string
	if got.exitCode != want.exitCode {
		out = append(out, fmt.Sprintf("#%d %s: exit code %d, kubectl exits %d", n, want.command, got.exitCode, want.exitCode))
	}
	if got.stdout != want.stdout {
		out = append(out, fmt.Sprintf("#%d %s: stdout differs from kubectl's:\n%s", n, want.command, lineDiff(want.stdout, got.stdout)))
	}
	if got.stderr != want.stderr {
		out = append(out, fmt.Sprintf("#%d %s: stderr differs from kubectl's:\n%s", n, want.command, lineDiff(want.stderr, got.stderr)))
	}
	if d := requestDiff(n, want, got); d != "" {
		out = append(out, d)
	}
	return out
}

// requestDiff describes how the requests differ, or is empty.
func requestDiff(n int, want, got outcome) string {
	wr, gr := comparableRequests(want.requests), comparableRequests(got.requests)
	if strings.Join(wr, "\n") == strings.Join(gr, "\n") {
		return ""
	}
	return fmt.Sprintf("#%d %s: requests differ from kubectl's (discovery and OpenAPI requests left out):\n%s", n, want.command,
		lineDiff(strings.Join(wr, "\n")+"\n", strings.Join(gr, "\n")+"\n"))
}

// comparableRequests leaves out what legitimately differs between the oracle and the engine: discovery (the
// oracle's --discovery-shim answers /apis the legacy way, so kubectl then asks every group version; the
// engine answers with aggregated discovery, as kube-apiserver does) and OpenAPI documents (the oracle also
// publishes apiextensions.k8s.io/v1 and kubectl's HTTP cache revalidates them).
func comparableRequests(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		f := strings.Fields(r)
		if len(f) < 2 {
			continue
		}
		p := f[1]
		if i := strings.Index(p, "?"); i >= 0 {
			p = p[:i]
		}
		if f[0] == "GET" && (p == "/api" || p == "/apis" || discoveryPath.MatchString(p) || strings.HasPrefix(p, "/openapi/")) {
			continue
		}
		out = append(out, r)
	}
	return out
}

var discoveryPath = regexp.MustCompile(`^/apis?/[^/]+(/[^/]+)?$`)

// bodyLines is a request body as the golden files list it under the request: writes only, normalised, each
// line after bodyMark.
func bodyLines(method, body string) string {
	if method == "GET" || body == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(normalize(sortManagedFieldsPatch(body)), "\n"), "\n") {
		b.WriteString("\n" + bodyMark + l)
	}
	return b.String()
}

// sortManagedFieldsPatch sorts the managedFields of kubectl's managed-fields migration patch by operation,
// manager, apiVersion and subresource: the API server keeps them in the order of their write times in
// seconds, so two writes within a second come in any order.
func sortManagedFieldsPatch(body string) string {
	var ops []map[string]interface{}
	if json.Unmarshal([]byte(body), &ops) != nil {
		return body
	}
	changed := false
	for _, op := range ops {
		if op["path"] != "/metadata/managedFields" {
			continue
		}
		entries, ok := op["value"].([]interface{})
		if !ok {
			continue
		}
		key := func(e interface{}) string {
			m, _ := e.(map[string]interface{})
			return fmt.Sprint(m["operation"], "\x00", m["manager"], "\x00", m["apiVersion"], "\x00", m["subresource"])
		}
		sort.SliceStable(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
		changed = true
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(ops)
	if err != nil {
		return body
	}
	return string(out) + "\n"
}

// requestLine is a request as the golden files list it, normalised.
func requestLine(method, path, query string, status int) string {
	u := path
	if query != "" {
		u += "?" + query
	}
	return fmt.Sprintf("%s %s %d", method, normalizeURL(u), status)
}

var (
	reTimestamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
	reUID       = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reRVYAML    = regexp.MustCompile(`(resourceVersion: )"\d+"`)
	reRVJSON    = regexp.MustCompile(`("resourceVersion": ?)"\d+"`)
	reRVDesc    = regexp.MustCompile(`(Resource Version:\s+)\d+`)
	reRVPatch   = regexp.MustCompile(`("path":"/metadata/resourceVersion","value":)"\d+"`)
	// An object quoted as escaped JSON in a message (a strict merge patch's refusal quotes the patched object).
	reRVQuoted = regexp.MustCompile(`(\\"resourceVersion\\":)\\"\d+\\"`)
	reHash     = regexp.MustCompile(`hash=[0-9A-F]+`)
	reTimeout  = regexp.MustCompile(`timeoutSeconds=\d+`)
	reRVQuery  = regexp.MustCompile(`resourceVersion=\d+`)
	reFieldSel = regexp.MustCompile(`fieldSelector=([^&]*)`)
)

// normalize replaces what changes from run to run: timestamps, uids, resourceVersions and the cells of AGE
// columns (whose width changes with them).
func normalize(s string) string {
	s = reTimestamp.ReplaceAllString(s, "<timestamp>")
	s = reUID.ReplaceAllString(s, "<uid>")
	s = reRVYAML.ReplaceAllString(s, `${1}"<rv>"`)
	s = reRVJSON.ReplaceAllString(s, `${1}"<rv>"`)
	s = reRVDesc.ReplaceAllString(s, `${1}<rv>`)
	s = reRVPatch.ReplaceAllString(s, `${1}"<rv>"`)
	s = reRVQuoted.ReplaceAllString(s, `${1}\"<rv>\"`)
	return sortCauses(normalizeAgeColumns(s))
}

// sortCauses sorts the "* field: message" lines kubectl prints for an invalid object: the API server lists
// the causes of some errors in Go map order, so real kubectl prints them in any order.
func sortCauses(s string) string {
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasSuffix(lines[i], " is invalid: ") {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.HasPrefix(lines[j], "* ") {
			j++
		}
		sort.Strings(lines[i+1 : j])
		i = j - 1
	}
	return strings.Join(lines, "\n")
}

func normalizeURL(u string) string {
	u = reHash.ReplaceAllString(u, "hash=<hash>")
	u = reTimeout.ReplaceAllString(u, "timeoutSeconds=<n>")
	u = reRVQuery.ReplaceAllString(u, "resourceVersion=<rv>")
	u = reUID.ReplaceAllString(u, "<uid>")
	// kubectl builds the event search's field selector from a Go map: its terms come in any order.
	u = reFieldSel.ReplaceAllStringFunc(u, func(m string) string {
		v := strings.TrimPrefix(m, "fieldSelector=")
		terms := strings.Split(v, "%2C")
		sort.Strings(terms)
		return "fieldSelector=" + strings.Join(terms, "%2C")
	})
	return u
}

var reAge = regexp.MustCompile(`^(\d+[smhdy])+$|^<unknown>$|^<invalid>$`)

// normalizeAgeColumns replaces the cells of table columns that hold ages (every cell a duration such as
// "5s" or "3m2s": AGE, and printer columns of type date) by "<age>" and pads those columns to a fixed
// width, leaving every other column as it was, so that alignment is still compared.
func normalizeAgeColumns(s string) string {
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		h := lines[i]
		if !strings.HasPrefix(h, "NAME") {
			continue
		}
		starts := columnStarts(h)
		end := i + 1
		for end < len(lines) && lines[end] != "" && !strings.HasPrefix(lines[end], "NAME") {
			end++
		}
		rows := lines[i+1 : end]
		// Right to left: rewriting a column moves only the text after its start.
		for c := len(starts) - 1; c >= 0; c-- {
			start := starts[c]
			next := -1
			if c+1 < len(starts) {
				next = starts[c+1]
			}
			cell := func(l string) string {
				if len(l) <= start {
					return ""
				}
				if next < 0 || next > len(l) {
					return strings.TrimSpace(l[start:])
				}
				return strings.TrimSpace(l[start:next])
			}
			isAge, any := true, false
			for _, r := range rows {
				v := cell(r)
				if v == "" {
					continue
				}
				any = true
				if !reAge.MatchString(v) {
					isAge = false
					break
				}
			}
			if !isAge || !any {
				continue
			}
			rewrite := func(l, v string) string {
				for len(l) < start {
					l += " "
				}
				if next < 0 {
					return l[:start] + v
				}
				tail := ""
				if len(l) > next {
					tail = l[next:]
				}
				return l[:start] + fmt.Sprintf("%-8s", v) + tail
			}
			lines[i] = rewrite(lines[i], cell(lines[i]))
			for j := range rows {
				if cell(rows[j]) != "" {
					rows[j] = rewrite(rows[j], "<age>")
				}
			}
		}
		i = end - 1
	}
	return strings.Join(lines, "\n")
}

// columnStarts are the offsets where a table header's columns start: after two or more spaces (tab writer
// padding is three; single spaces belong to names like "CREATED AT").
func columnStarts(header string) []int {
	starts := []int{0}
	for i := 1; i < len(header); i++ {
		if header[i] != ' ' && header[i-1] == ' ' && i >= 2 && header[i-2] == ' ' {
			starts = append(starts, i)
		}
	}
	return starts
}

func lineDiff(want, got string) string {
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	var b strings.Builder
	n := len(w)
	if len(g) > n {
		n = len(g)
	}
	for i := 0; i < n; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			fmt.Fprintf(&b, "   %q\n", wl)
			continue
		}
		if i < len(w) {
			fmt.Fprintf(&b, " - %q\n", wl)
		}
		if i < len(g) {
			fmt.Fprintf(&b, " + %q\n", gl)
		}
	}
	return b.String()
}

// record runs the script with real kubectl against a fresh oracle and writes the golden file.
func record(t *testing.T, steps []step, golden string) {
	oracle := filepath.Join(*oracleDir, "bin", "oracle")
	kubectlBin := filepath.Join(*oracleDir, "bin", "kubectl")
	for _, b := range []string{oracle, kubectlBin} {
		if _, err := os.Stat(b); err != nil {
			t.Fatalf("%v: build it with %s/build.sh", err, *oracleDir)
		}
	}
	port := freePort(t)
	srv := exec.Command(oracle, "serve", "--port", strconv.Itoa(port), "--discovery-shim")
	var srvLog bytes.Buffer
	srv.Stdout, srv.Stderr = &srvLog, &srvLog
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = srv.Process.Kill()
		}
	}()
	server := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(server + "/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("oracle did not start: %v\n%s", err, srvLog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	tmp := t.TempDir()
	config := filepath.Join(tmp, "config")
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: oracle\n  cluster:\n    server: %s\n"+
		"contexts:\n- name: oracle\n  context:\n    cluster: oracle\n    user: anonymous\nusers:\n- name: anonymous\n  user: {}\ncurrent-context: oracle\n", server)
	if err := os.WriteFile(config, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	filesDir, err := filepath.Abs("testdata/files")
	if err != nil {
		t.Fatal(err)
	}
	var outs []outcome
	for i, st := range steps {
		if st.line == "" {
			time.Sleep(st.sleep)
			continue
		}
		args, err := SplitCommandLine(st.line)
		if err != nil {
			t.Fatalf("%s: %v", st.line, err)
		}
		args = args[1:] // kubectl
		// Log each request (round_trippers.go at level 6) and nothing else: at -v=6 kubectl also logs
		// debugging details to stderr. The flag goes after the command's own arguments unless they end with "--".
		// client-go's request.go logs request bodies, in full at level 10, under the name of the file that
		// made the request: helper.go (cli-runtime's resource helper) and client.go (client-go's dynamic and
		// scale clients); klog checks the level for both files.
		const logFlag = "--vmodule=round_trippers=6,request=10,helper=10,client=10"
		vArgs := append(append([]string{}, args...), logFlag)
		for j, a := range args {
			if a == "--" {
				vArgs = append(append(append([]string{}, args[:j]...), logFlag), args[j:]...)
				break
			}
		}
		cmd := exec.Command(kubectlBin, vArgs...)
		cmd.Dir = filesDir
		cmd.Env = []string{
			"KUBECONFIG=" + config,
			"KUBECACHEDIR=" + filepath.Join(tmp, fmt.Sprintf("cache-%d", i)), // a fresh cache for every command
			"HOME=" + tmp,
			"PATH=/usr/bin:/bin",
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", st.line, err)
		}
		plain, reqs := splitKlog(stderr.String())
		outs = append(outs, outcome{
			command:  st.line,
			exitCode: code,
			stdout:   normalize(stdout.String()),
			stderr:   normalize(plain),
			requests: reqs,
		})
	}
	if err := os.WriteFile(golden, []byte(formatGolden(outs)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s (%d commands)", golden, len(outs))
}

var (
	reKlog     = regexp.MustCompile(`^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]]+\] `)
	reResponse = regexp.MustCompile(`"Response" verb="([A-Z]+)" url="https?://[^/"]+([^"]*)" status="(\d+)`)
)

// splitKlog separates kubectl's log (klog lines, some with indented continuation lines) from what kubectl
// printed to stderr, and returns the requests the log lists, each with the body logged before it.
func splitKlog(stderr string) (plain string, requests []string) {
	var b strings.Builder
	var block *strings.Builder // the lines of a multi-line value being read
	blockIsRequestBody := false
	pendingBody, havePending := "", false
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if line == "" {
			continue
		}
		trimmed := strings.TrimSuffix(line, "\n")
		if block != nil {
			if trimmed == " >" || strings.HasPrefix(trimmed, " > ") {
				if blockIsRequestBody {
					pendingBody, havePending = block.String(), true
				}
				block = nil
				continue
			}
			block.WriteString(strings.TrimPrefix(trimmed, "\t") + "\n")
			continue
		}
		if !reKlog.MatchString(trimmed) {
			b.WriteString(line)
			continue
		}
		switch {
		case reResponse.MatchString(trimmed):
			m := reResponse.FindStringSubmatch(trimmed)
			code, _ := strconv.Atoi(m[3])
			p, q, _ := strings.Cut(m[2], "?")
			body := ""
			if havePending {
				body = pendingBody
			}
			requests = append(requests, requestLine(m[1], p, q, code)+bodyLines(m[1], body))
			pendingBody, havePending = "", false
		case strings.Contains(trimmed, `"Request Body" body=`):
			v := trimmed[strings.Index(trimmed, `"Request Body" body=`)+len(`"Request Body" body=`):]
			if v == "<" {
				block, blockIsRequestBody = &strings.Builder{}, true
				continue
			}
			if uq, err := strconv.Unquote(v); err == nil {
				pendingBody, havePending = uq, true
			}
		}
		if strings.HasSuffix(trimmed, "=<") {
			block, blockIsRequestBody = &strings.Builder{}, false
		}
	}
	return b.String(), requests
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
