// Command sidebyside prints, as one Markdown table, crdplay's figures beside the real API server's for the same
// work in the same run, with their ratio and a verdict against crdplay's speed goals (the goal column: the
// page's install at most half the real server's time, and so on). It is a report for `make bench`, not a
// test: it fails only when a server or a request fails.
//
//	go run ./tools/sidebyside [-oracle ../shared/oracle/bin/oracle] [-server bin/crdplay-server]
//	    [-page build/bench/page-corpus.json] [-edits build/bench/page-edits.json] [-reps 3] [-only SUBSTRING]
//	    [-creates-only] [-clients 8] [-duration 3s] [-load-reps 3] [-fsync-row=true]
//
// The real server is ../shared/oracle's apiextensions-apiserver v0.37 (`oracle serve`); ours is crdplay-server.
// Both run as processes of their own on loopback ports with an embedded etcd in a temporary directory, and both
// get the same requests from the same client, alternately, so that what else the machine does falls on both.
// Both etcds skip fsync: the oracle's always does (UnsafeNoFsync, its data is thrown away), so crdplay-server
// runs here with --etcd-unsafe-no-fsync, a benchmark setting that is never its default; with -fsync-row, the
// creates are measured a third time on a crdplay-server that fsyncs every write, as it runs for real.
// crdplay-server runs with authentication and authorization on, as an exposed deployment does: a
// --token-auth-file with one user outside system:masters, whom the default AuthenticatedWrite mode lets write,
// and every request of ours carries its bearer token. The oracle has neither (`oracle serve` lets every
// request in), so its figures are without that work.
//
//   - for every CRD of testdata/corpus: POST the CRD, GET it until its Established condition is True, POST its
//     object until the answer is 201 (a server may answer 404 until it serves the kind), timed from the POST of the
//     CRD to the object's 201 (or to the 422 that expected/01-create.json recorded, for the one invalid object); the POST of the CRD alone is timed too. The CRD is then deleted, untimed, and the
//     next repetition starts once it is gone. The page's time for the same work (the CRD edited to the first
//     results on screen, headless Chromium) comes from web/bench/corpus.mjs's JSON (-page): cold (a freshly
//     opened page, the goal's figure) and warm (a page that has installed CRDs before).
//   - creates of the documentation's CronTab by 8 concurrent clients for -duration, -load-reps times per server:
//     creates per second and the p50 and p99 latency, as tools/loadbench measures crdplay-server alone, after one
//     untimed create (the real server's first create of a kind waits 2 s). -creates-only measures only these.
//
// Figures are medians of the repetitions. The edit-to-results rows (no oracle figure: a server has no editor)
// come from web/bench/load.mjs's JSON (-edits).
package main

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"

	"crdplay/tools/loadbench/httpload"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("sidebyside: ")
	oracleBin := flag.String("oracle", "../shared/oracle/bin/oracle", "the oracle `binary` (../shared/oracle/build.sh builds it)")
	serverBin := flag.String("server", "bin/crdplay-server", "the crdplay-server `binary`")
	corpus := flag.String("corpus", "testdata/corpus", "`directory` of the corpus: PROJECT/KIND/{crd.yaml,01-create.yaml}")
	pageFile := flag.String("page", "build/bench/page-corpus.json", "web/bench/corpus.mjs's `JSON` (none: no page figures)")
	editsFile := flag.String("edits", "build/bench/page-edits.json", "web/bench/load.mjs's edit timings `JSON` (none: no edit rows)")
	reps := flag.Int("reps", 3, "repetitions of each corpus CRD per server")
	only := flag.String("only", "", "measure only the corpus CRDs whose PROJECT/KIND contains `substring`")
	clients := flag.Int("clients", 8, "concurrent clients of the create throughput")
	duration := flag.Duration("duration", 3*time.Second, "length of each create throughput run")
	loadReps := flag.Int("load-reps", 3, "create throughput runs per server")
	createsOnly := flag.Bool("creates-only", false, "measure only the create throughput (no corpus, page or edit rows)")
	fsyncRow := flag.Bool("fsync-row", true, "also measure the creates on a crdplay-server whose etcd fsyncs every write (its default)")
	flag.Parse()
	if *createsOnly {
		*reps, *pageFile, *editsFile = 0, "", ""
	}

	cases, err := readCorpus(*corpus, *only)
	if err != nil {
		log.Fatal(err)
	}
	page, err := readPage(*pageFile)
	if err != nil {
		log.Fatal(err)
	}
	edits, err := readEdits(*editsFile)
	if err != nil {
		log.Fatal(err)
	}

	c := httpload.Client(*clients)
	oracle, err := startOracle(*oracleBin, c)
	if err != nil {
		log.Fatal(err)
	}
	defer oracle.stop()
	ours, err := startOurs(*serverBin, nameOurs, true, c)
	if err != nil {
		oracle.stop()
		log.Fatal(err)
	}
	defer ours.stop()
	servers := []*server{oracle, ours}

	var durable *server // crdplay-server with fsync, for the creates alone
	fail := func(err error) {
		oracle.stop()
		ours.stop()
		if durable != nil {
			durable.stop()
		}
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "sidebyside: %d corpus CRDs x %d repetitions on the oracle and crdplay-server (etcd, both without fsync)\n", len(cases), *reps)
	for rep := range *reps {
		for _, k := range cases {
			order := servers
			if rep%2 == 1 {
				order = []*server{ours, oracle}
			}
			for _, s := range order {
				total, post, err := crdToObject(s.c, s.url, k)
				if err != nil {
					fail(fmt.Errorf("%s, %s: %w", s.name, k.name, err))
				}
				k.total[s.name] = append(k.total[s.name], total)
				k.post[s.name] = append(k.post[s.name], post)
				fmt.Fprint(os.Stderr, ".")
			}
		}
	}
	fmt.Fprintln(os.Stderr)

	creates := map[string][]httpload.Row{}
	if *fsyncRow {
		if durable, err = startOurs(*serverBin, nameDurable, false, c); err != nil {
			fail(err)
		}
		defer durable.stop()
		servers = append(servers, durable)
	}
	for _, s := range servers {
		if err := httpload.InstallCronTab(s.c, s.url); err != nil {
			fail(fmt.Errorf("%s: %w", s.name, err))
		}
		// Untimed: the real server's first create of a kind takes 2 s more than the next (the corpus rows
		// include it, as a first object's create does); a throughput is the steady state's.
		if err := httpload.Creates(s.c, s.url, "warm")(); err != nil {
			fail(fmt.Errorf("%s: %w", s.name, err))
		}
	}
	for rep := range *loadReps {
		fmt.Fprint(os.Stderr, ".")
		for _, s := range servers {
			res, err := httpload.Run(*clients, *duration, httpload.Creates(s.c, s.url, fmt.Sprintf("ct%d", rep)))
			if err != nil {
				fail(fmt.Errorf("%s: creates: %w", s.name, err))
			}
			creates[s.name] = append(creates[s.name], res.Row("creates"))
		}
	}

	fmt.Fprintln(os.Stderr)

	if *createsOnly {
		cases = nil
	}
	report(os.Stdout, cases, page, edits, creates, *reps, *loadReps, *clients, *duration)
}

// The servers' names in the figures: the oracle, crdplay-server on an etcd that skips fsync as the oracle's
// does, and crdplay-server as it runs for real.
const (
	nameOracle  = "oracle"
	nameOurs    = "crdplay"
	nameDurable = "crdplay-fsync"
)

// A corpusCase is one CRD of the corpus with its object, and what was measured.
type corpusCase struct {
	name       string // PROJECT/KIND
	size       int    // bytes of crd.yaml
	crdName    string
	crd        string // JSON
	object     string // JSON
	objectURL  string // the object's collection
	objectName string // metadata.name, when the object has finalizers to strip before the CRD's deletion
	want       int    // the object's status as the real server recorded it (expected/01-create.json): 201, or 422 where the corpus object is invalid
	total      map[string][]time.Duration
	post       map[string][]time.Duration
}

func readCorpus(dir, only string) ([]*corpusCase, error) {
	crds, err := filepath.Glob(filepath.Join(dir, "*", "*", "crd.yaml"))
	if err != nil {
		return nil, err
	}
	var cases []*corpusCase
	for _, f := range crds {
		d := filepath.Dir(f)
		name := filepath.Base(filepath.Dir(d)) + "/" + filepath.Base(d)
		if !strings.Contains(name, only) {
			continue
		}
		k, err := readCase(d, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		cases = append(cases, k)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("no corpus CRD in %s matches %q", dir, only)
	}
	return cases, nil
}

func readCase(dir, name string) (*corpusCase, error) {
	crdYAML, err := os.ReadFile(filepath.Join(dir, "crd.yaml"))
	if err != nil {
		return nil, err
	}
	objYAML, err := os.ReadFile(filepath.Join(dir, "01-create.yaml"))
	if err != nil {
		return nil, err
	}
	crd, err := yaml.YAMLToJSON(crdYAML)
	if err != nil {
		return nil, fmt.Errorf("crd.yaml: %w", err)
	}
	obj, err := yaml.YAMLToJSON(objYAML)
	if err != nil {
		return nil, fmt.Errorf("01-create.yaml: %w", err)
	}
	var c struct {
		Metadata struct{ Name string }
		Spec     struct {
			Scope string
			Names struct{ Plural string }
		}
	}
	var o struct {
		APIVersion string
		Metadata   struct {
			Name, Namespace string
			Finalizers      []string
		}
	}
	want := http.StatusCreated
	if rec, err := os.ReadFile(filepath.Join(dir, "expected", "01-create.json")); err == nil {
		var r struct{ Status int }
		if json.Unmarshal(rec, &r) == nil && r.Status != 0 {
			want = r.Status
		}
	}
	if err := json.Unmarshal(crd, &c); err != nil {
		return nil, fmt.Errorf("crd.yaml: %w", err)
	}
	if err := json.Unmarshal(obj, &o); err != nil {
		return nil, fmt.Errorf("01-create.yaml: %w", err)
	}
	url := "/apis/" + o.APIVersion + "/"
	if c.Spec.Scope == "Namespaced" {
		url += "namespaces/" + cmp.Or(o.Metadata.Namespace, "default") + "/"
	}
	objectName := ""
	if len(o.Metadata.Finalizers) > 0 {
		objectName = o.Metadata.Name
	}
	return &corpusCase{name: name, objectName: objectName, size: len(crdYAML), crdName: c.Metadata.Name, crd: string(crd), object: string(obj),
		objectURL: url + c.Spec.Names.Plural, want: want, total: map[string][]time.Duration{}, post: map[string][]time.Duration{}}, nil
}

// crdToObject times the POST of the CRD to the answer to its object on the server at base (the status the real
// server recorded for it: 201, or 422 for the corpus's one invalid object), then deletes the CRD and waits until
// it is gone.
func crdToObject(c *http.Client, base string, k *corpusCase) (total, post time.Duration, err error) {
	crdURL := base + httpload.CRDs + "/" + k.crdName
	t0 := time.Now()
	if _, err := httpload.Do(c, "POST", base+httpload.CRDs, k.crd, http.StatusCreated); err != nil {
		return 0, 0, err
	}
	post = time.Since(t0)
	deadline := t0.Add(2 * time.Minute)
	for {
		body, err := httpload.Do(c, "GET", crdURL, "", http.StatusOK)
		if err != nil {
			return 0, 0, err
		}
		if established(body) {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, errors.New("the CRD is not Established after 2 minutes")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		_, err := httpload.Do(c, "POST", base+k.objectURL, k.object, k.want)
		if err == nil {
			break
		}
		var se *httpload.StatusError
		if !errors.As(err, &se) || se.Code != http.StatusNotFound || time.Now().After(deadline) {
			return 0, 0, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	total = time.Since(t0)

	// The CRD's deletion deletes its objects, which wait for their own finalizers (argo-cd's Application has
	// one) as on the oracle's case runner: strip them first.
	if k.objectName != "" && k.want == http.StatusCreated {
		if err := stripFinalizers(c, base+k.objectURL+"/"+k.objectName); err != nil {
			return 0, 0, err
		}
	}
	if _, err := httpload.Do(c, "DELETE", crdURL, "", http.StatusOK); err != nil {
		return 0, 0, err
	}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		_, err := httpload.Do(c, "GET", crdURL, "", http.StatusNotFound)
		if err == nil {
			return total, post, nil
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("the CRD is not gone 2 minutes after its DELETE: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stripFinalizers removes an object's finalizers (a JSON merge patch).
func stripFinalizers(c *http.Client, url string) error {
	req, err := http.NewRequest("PATCH", url, strings.NewReader(`{"metadata":{"finalizers":null}}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("PATCH %s: %s: %.300s", url, resp.Status, body)
	}
	return nil
}

func established(crd []byte) bool {
	var c struct {
		Status struct {
			Conditions []struct{ Type, Status string }
		}
	}
	if json.Unmarshal(crd, &c) != nil {
		return false
	}
	for _, cond := range c.Status.Conditions {
		if cond.Type == "Established" && cond.Status == "True" {
			return true
		}
	}
	return false
}

// A server is a running API server process.
type server struct {
	name string
	url  string
	c    *http.Client // sends the server's requests, with its credentials
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	dir  string        // removed on stop
}

func (s *server) stop() {
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// start runs the command and waits for a line of its output (stdout or stderr) that find turns into the
// server's URL, then until the CRD collection answers.
func start(name string, cmd *exec.Cmd, dir string, c *http.Client, find func(line string) string) (*server, error) {
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{name: name, c: c, cmd: cmd, done: make(chan struct{}), dir: dir}
	found := make(chan string, 1)
	var seen strings.Builder
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if seen.Len() < 1<<14 {
				seen.WriteString(sc.Text() + "\n")
			}
			if u := find(sc.Text()); u != "" {
				found <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr) // the server keeps logging
	}()
	var waitErr error
	go func() { waitErr = cmd.Wait(); pw.Close(); close(s.done) }()
	select {
	case s.url = <-found:
	case <-s.done:
		s.stop()
		return nil, fmt.Errorf("%s exited before serving (%v): %s", name, waitErr, seen.String())
	case <-time.After(3 * time.Minute):
		s.stop()
		return nil, fmt.Errorf("%s is not serving after 3 minutes: %s", name, seen.String())
	}
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := httpload.Do(c, "GET", s.url+httpload.CRDs, "", http.StatusOK); err == nil {
			return s, nil
		} else if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func startOracle(bin string, c *http.Client) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	return start(nameOracle, exec.Command(bin, "serve", "--port", fmt.Sprint(port)), "", c, func(line string) string {
		if strings.Contains(line, "apiextensions-apiserver ready") {
			return url
		}
		return ""
	})
}

// startOurs starts crdplay-server on an embedded etcd in a temporary directory, without fsync when noFsync
// (--etcd-unsafe-no-fsync: the oracle's etcd durability, for benchmarks only), with a --token-auth-file whose
// one user (not in system:masters: the AuthenticatedWrite authorizer decides) the returned server's client
// (c with the user's bearer token) is.
func startOurs(bin, name string, noFsync bool, c *http.Client) (*server, error) {
	dir, err := os.MkdirTemp("", "sidebyside-etcd-")
	if err != nil {
		return nil, err
	}
	token := rand.Text()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",bench,bench-uid\n"), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "etcd")
	args := []string{"--addr", "127.0.0.1:0", "--storage", "etcd", "--etcd-embedded", "--data-dir", data, "--site", "",
		"--token-auth-file", tokens}
	if noFsync {
		args = append(args, "--etcd-unsafe-no-fsync")
	}
	s, err := start(name, exec.Command(bin, args...), dir, httpload.WithBearer(c, token), func(line string) string {
		if _, after, ok := strings.Cut(line, "url=http://127.0.0.1:"); ok {
			return "http://127.0.0.1:" + strings.FieldsFunc(after, func(r rune) bool { return r < '0' || r > '9' })[0]
		}
		return ""
	})
	if err != nil {
		_ = os.RemoveAll(dir)
	}
	return s, err
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// pageCase is web/bench/corpus.mjs's measure of one repetition.
type pageCase struct {
	Wall     float64 `json:"wall"` // ms, the CRD edit to the results on screen
	Statuses []int   `json:"statuses"`
}

// pageFigures are web/bench/corpus.mjs's repetitions per corpus CRD: warm (a page that has installed a CRD
// before) and cold (a freshly opened page in a new browser profile, the CRD the first it installs after its
// default example).
type pageFigures struct {
	Warm map[string][]pageCase `json:"cases"`
	Cold map[string][]pageCase `json:"cold"`
	// Gallery: the largest example chosen in the gallery menu of a freshly opened page, to its first results
	// (the objects' answers) and to its complete ones (the analysis after them), ms.
	Gallery []struct {
		Example  string  `json:"example"`
		First    float64 `json:"first"`
		Complete float64 `json:"complete"`
	} `json:"gallery"`
}

func readPage(file string) (*pageFigures, error) {
	if file == "" {
		return &pageFigures{}, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the page's figures (run web/bench/corpus.mjs, or -page ''): %w", err)
	}
	var p pageFigures
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &p, nil
}

// editTimes is web/bench/load.mjs's summary of the edits of one example, ms.
type editTimes struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
	Engine float64 `json:"engine"` // median of the evaluation itself
}

func readEdits(file string) (map[string]editTimes, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the page's edit timings (run web/bench/load.mjs, or -edits ''): %w", err)
	}
	var e map[string]editTimes
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return e, nil
}

func median[T cmp.Ordered](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func report(w io.Writer, cases []*corpusCase, page *pageFigures, edits map[string]editTimes,
	creates map[string][]httpload.Row, reps, loadReps, clients int, d time.Duration) {
	fmt.Fprintf(w, "crdplay beside the real API server (../shared/oracle: apiextensions-apiserver v0.37.2), same machine, same run;\n")
	fmt.Fprintf(w, "both on an embedded etcd WITHOUT FSYNC: the oracle's always skips it (UnsafeNoFsync: its data is thrown away),\n")
	fmt.Fprintf(w, "and crdplay-server runs here with --etcd-unsafe-no-fsync (a benchmark setting: a crash loses acknowledged\n")
	if len(cases) == 0 {
		reps = loadReps
	}
	fmt.Fprintf(w, "writes; its default fsyncs every write, measured in the \"with fsync\" rows). Medians of %d repetitions\n", reps)
	fmt.Fprintf(w, "(ratio: ours / the oracle's). The oracle answers a kind's first create about 2 s after its CRD is\n")
	fmt.Fprintf(w, "Established (the creates/s runs start after one untimed create).\n\n")
	fmt.Fprintln(w, "| work | crdplay | the real server (oracle) | ratio | goal | verdict |")
	fmt.Fprintln(w, "|---|---|---:|---|---|---|")
	for _, k := range cases {
		o := median(k.total[nameOracle])
		n := median(k.total[nameOurs])
		ours := "native " + secs(n)
		ratio := fmt.Sprintf("native %.2fx", n.Seconds()/o.Seconds())
		goal, v := "page ≤ 0.5x", "-"
		if len(page.Cold[k.name]) > 0 {
			goal = "page cold ≤ 0.5x"
		}
		// The goal is judged on the cold figure (what a visitor meets), on the warm one when there is none.
		for _, f := range []struct {
			name string
			ps   []pageCase
		}{{"warm", page.Warm[k.name]}, {"cold", page.Cold[k.name]}} {
			if len(f.ps) == 0 {
				continue
			}
			walls := make([]float64, len(f.ps))
			ok := true
			for i, p := range f.ps {
				walls[i] = p.Wall
				ok = ok && len(p.Statuses) > 0 && p.Statuses[0] == k.want
			}
			pm := time.Duration(median(walls) * float64(time.Millisecond))
			ours = "page " + f.name + " " + secs(pm) + ", " + ours
			r := pm.Seconds() / o.Seconds()
			ratio = fmt.Sprintf("page %s %.2fx, ", f.name, r) + ratio
			v = verdict(r <= 0.5)
			if !ok {
				v = fmt.Sprintf("**the page (%s) answered %v, not %d**", f.name, f.ps[0].Statuses, k.want)
			}
		}
		answer := ""
		if k.want != http.StatusCreated {
			answer = fmt.Sprintf(", the object's answer %d as recorded", k.want)
		}
		fmt.Fprintf(w, "| CRD POST to Established to first object 201: %s (%.0f kB%s) | %s | %s | %s | %s | %s |\n",
			k.name, float64(k.size)/1000, answer, ours, secs(o), ratio, goal, v)
	}
	if g := page.Gallery; len(g) > 0 {
		var first, complete []float64
		for _, r := range g {
			first, complete = append(first, r.First), append(complete, r.Complete)
		}
		fmt.Fprintf(w, "| the gallery: %s chosen in a freshly opened page, to its first results / complete results (%d runs, min-max) | %s (%s) / %s (%s) | - | - | - | - |\n",
			g[0].Example, len(g), secs(msDur(median(first))), msSpan(first), secs(msDur(median(complete))), msSpan(complete))
	}
	if len(cases) > 0 {
		largest := slices.MaxFunc(cases, func(a, b *corpusCase) int { return cmp.Compare(a.size, b.size) })
		o, n := median(largest.post[nameOracle]), median(largest.post[nameOurs])
		fmt.Fprintf(w, "| POST of the largest CRD alone (%s), to its 201 | native %s | %s | %.2fx | ≤ 1x | %s |\n",
			largest.name, secs(n), secs(o), n.Seconds()/o.Seconds(), verdict(n <= o))
	}
	// Cold: the first edits after the page's load; warm: the ones after those (web/bench/load.mjs). An older
	// edits file has only the cold keys.
	for _, kind := range []string{"", "-warm"} {
		which := "cold: the first edits after the page's load"
		if kind != "" {
			which = "warm: the edits after those"
		}
		if e, ok := edits["crontab"+kind]; ok {
			fmt.Fprintf(w, "| object edit to results on screen, CronTab, %s (%d edits; the evaluation itself %.1f ms) | median %.1f ms, p90 %.1f ms, max %.0f ms | - | - | median ≤ 10 ms, p90 ≤ 16 ms | %s |\n",
				which, e.N, e.Engine, e.Median, e.P90, e.Max, verdict(e.Median <= 10 && e.P90 <= 16))
		}
		if e, ok := edits["largest"+kind]; ok {
			fmt.Fprintf(w, "| same, largest corpus CRD, %s (%d edits; the evaluation itself %.1f ms) | median %.1f ms, p90 %.1f ms, max %.0f ms | - | - | p90 ≤ 40 ms | %s |\n",
				which, e.N, e.Engine, e.Median, e.P90, e.Max, verdict(e.P90 <= 40))
		}
	}
	if len(creates[nameOracle]) > 0 {
		pick := func(name string, f func(httpload.Row) float64) float64 {
			var xs []float64
			for _, r := range creates[name] {
				xs = append(xs, f(r))
			}
			return median(xs)
		}
		rps := func(r httpload.Row) float64 { return r.RPS }
		p50 := func(r httpload.Row) float64 { return float64(r.P50.Microseconds()) / 1000 }
		p99 := func(r httpload.Row) float64 { return float64(r.P99.Microseconds()) / 1000 }
		or, nr := pick(nameOracle, rps), pick(nameOurs, rps)
		fmt.Fprintf(w, "| creates/s, %d clients, embedded etcd, both without fsync, crdplay with authentication and authorization (bearer token; the oracle has none) (%d runs of %s each) | %.0f/s | %.0f/s | %.2fx | ≥ 2x | %s |\n",
			clients, loadReps, d, nr, or, nr/or, verdict(nr >= 2*or))
		o50, n50 := pick(nameOracle, p50), pick(nameOurs, p50)
		fmt.Fprintf(w, "| same, p50 latency | %.1f ms | %.1f ms | %.2fx | - | - |\n", n50, o50, n50/o50)
		o99, n99 := pick(nameOracle, p99), pick(nameOurs, p99)
		fmt.Fprintf(w, "| same, p99 latency | %.1f ms | %.1f ms | %.2fx | ≤ 1x | %s |\n", n99, o99, n99/o99, verdict(n99 <= o99))
		if len(creates[nameDurable]) > 0 {
			fr, f50, f99 := pick(nameDurable, rps), pick(nameDurable, p50), pick(nameDurable, p99)
			fmt.Fprintf(w, "| same, crdplay-server with fsync (its default; the oracle without) | %.0f/s, p50 %.1f ms, p99 %.1f ms | %.0f/s, p50 %.1f ms, p99 %.1f ms | %.2fx | - | - |\n",
				fr, f50, f99, or, o50, o99, fr/or)
		}
	}
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// msSpan is the range of figures in ms, in seconds.
func msSpan(ms []float64) string {
	return fmt.Sprintf("%.2f-%.2f s", slices.Min(ms)/1000, slices.Max(ms)/1000)
}
