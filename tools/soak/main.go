// Command soak runs mixed API load against a crdplay-server process for a while, on each storage, and checks
// two things a short test cannot: that the server's memory stays flat under steady load, and that on etcd no
// acknowledged write is lost when the process is killed with SIGKILL; then, in a flood phase (flood.go), that
// many concurrent paginated LISTs over large objects keep the server's peak RSS within a bound computed from
// their sizes. It is `make soak`, not part of `make test`.
//
//	go run ./tools/soak [-server bin/crdplay-server] [-duration 2m] [-storage memory,etcd] [-flood 30s]
//
// Each storage gets a fresh server on a free loopback port (etcd: embedded, in a temporary data directory) with
// the documentation's CronTab CRD. Clients create, patch, delete, get and list CronTabs drawn from a fixed pool,
// so that the live data stays the same size; watchers list and watch in a loop with short timeouts, so that
// watches start and end all the time. The figures are sampled once a second from /proc/PID/status (VmRSS,
// Threads) and, when the server serves them, /metrics (go_goroutines, go_memstats_heap_alloc_bytes); each
// figure of the table is the smallest over a window after the warm-up and over the last window of the run, so
// that a garbage collector's sawtooth does not read as growth. Growth beyond the stated bounds fails the run;
// on etcd the memory bounds allow for the revisions etcd keeps until its 5-minute compaction.
//
// On etcd the server is then killed (SIGKILL) while the load is still running, restarted on the same data
// directory, and every object is read back: each must be as its last acknowledged write left it, or as the
// write that was in flight at the kill would leave it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const crd = `{
 "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "crontabs.stable.example.com"},
 "spec": {"group": "stable.example.com", "scope": "Namespaced",
  "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
  "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
   "type": "object", "properties": {"spec": {"type": "object", "properties": {
    "cronSpec": {"type": "string"},
    "image": {"type": "string"},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}}}}}}}]}}`

const collection = "/apis/stable.example.com/v1/namespaces/default/crontabs"

// The bounds on growth between the start and the end of the load: memory may grow by a quarter or by 16 MiB,
// whichever is more (caches warming, the allocator's free lists); goroutines by 20 and threads by 4 (the
// watches and requests in flight at either moment differ).
const (
	memoryGrowthMin      = 16 << 20
	memoryGrowthFraction = 0.25
	goroutineGrowth      = 20
	threadGrowth         = 4
	// etcdHistoryPerWrite is added to the memory bounds on etcd for each write between the samples: etcd keeps
	// every revision until it is compacted, every 5 minutes as under kube-apiserver, so over a shorter soak its
	// memory grows with the writes by design (about 2.5 KiB each for these 1 KiB objects, measured).
	etcdHistoryPerWrite = 4 << 10
)

// window is how long each of the start and end samples lasts.
const window = 5 * time.Second

func main() {
	serverBin := flag.String("server", "bin/crdplay-server", "the crdplay-server `binary` to run")
	duration := flag.Duration("duration", 2*time.Minute, "how long the load runs on each storage")
	storages := flag.String("storage", "memory,etcd", "comma-separated storages to soak")
	clients := flag.Int("clients", 4, "concurrent writing and reading clients")
	watchers := flag.Int("watchers", 4, "concurrent list-and-watch loops")
	objects := flag.Int("objects", 200, "size of the pool of objects the clients write")
	var fl flood
	flag.DurationVar(&fl.duration, "flood", 30*time.Second, "how long the flood phase lasts on each storage (0: none)")
	flag.IntVar(&fl.objects, "flood-objects", 100, "large objects the flood phase writes")
	flag.IntVar(&fl.size, "flood-size", 512<<10, "`bytes` of each large object")
	flag.IntVar(&fl.clients, "flood-clients", 64, "clients paging through the collection at once in the flood phase")
	flag.IntVar(&fl.limit, "flood-limit", 2, "the limit of each of their LISTs")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	warmup := min(15*time.Second, *duration/4)
	if *duration < warmup+2*window {
		fmt.Fprintf(os.Stderr, "soak: -duration %v is too short: at least %v\n", *duration, warmup+2*window)
		os.Exit(2)
	}
	fmt.Printf("soak: %v per storage, %d clients over %d objects, %d watchers; start = smallest figure over %v after %v of warm-up, end = smallest over the last %v\n",
		*duration, *clients, *objects, *watchers, window, warmup, window)
	fmt.Printf("bounds: RSS and heap grow by at most %.0f%% or %d MiB (on etcd plus %d KiB a write), goroutines by %d, threads by %d\n\n",
		memoryGrowthFraction*100, memoryGrowthMin>>20, etcdHistoryPerWrite>>10, goroutineGrowth, threadGrowth)
	failed := false
	for _, st := range strings.Split(*storages, ",") {
		s := &soak{bin: *serverBin, storage: st, clients: *clients, watchers: *watchers, objects: *objects, flood: fl}
		if err := s.run(ctx, *duration, warmup); err != nil {
			fmt.Fprintf(os.Stderr, "soak: %s: %v\n", st, err)
			failed = true
		}
		fmt.Println()
	}
	if failed {
		os.Exit(1)
	}
}

// soak is one storage's run.
type soak struct {
	bin                        string
	storage                    string
	clients, watchers, objects int
	flood                      flood

	dataDir string
	proc    *process
	http    *http.Client
	states  []*objectState
	// stats
	requests, writes, events, relists atomic.Int64
}

// objectState is what the clients know of one object: its last acknowledged state and the state a write in
// flight would give it. A state is the object's generation label, or -1 for no object.
type objectState struct {
	name              string
	acked, inFlight   int
	hasInFlight, dead bool
}

func (s *soak) run(ctx context.Context, d, warmup time.Duration) (err error) {
	if s.storage != "memory" && s.storage != "etcd" {
		return fmt.Errorf("unknown storage %q (memory or etcd)", s.storage)
	}
	tmp, err := os.MkdirTemp("", "crdplay-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	s.dataDir = filepath.Join(tmp, "etcd")
	s.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: s.clients + s.watchers + 2}, Timeout: 30 * time.Second}
	if s.proc, err = s.start(ctx, tmp); err != nil {
		return err
	}
	defer func() {
		if s.proc != nil {
			s.proc.stop()
		}
	}()
	if err := s.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, http.StatusCreated); err != nil {
		return fmt.Errorf("creating the CRD: %w", err)
	}
	if err := s.waitServed(ctx); err != nil {
		return err
	}
	for i := range s.objects {
		s.states = append(s.states, &objectState{name: fmt.Sprintf("soak-%d", i), acked: -1})
	}

	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var wg sync.WaitGroup
	errs := make(chan error, s.clients+s.watchers)
	for c := range s.clients {
		wg.Go(func() { errs <- s.client(loadCtx, c) })
	}
	for range s.watchers {
		wg.Go(func() { errs <- s.watcher(loadCtx) })
	}
	loadFailed := func() error {
		select {
		case err := <-errs:
			return err
		default:
			return nil
		}
	}

	sleep := func(t time.Duration) error {
		select {
		case <-time.After(t):
			return loadFailed()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := sleep(warmup); err != nil {
		return err
	}
	start, err := s.sample(ctx, window)
	if err != nil {
		return err
	}
	writes := s.writes.Load()
	if err := sleep(d - warmup - 2*window); err != nil {
		return err
	}
	writes = s.writes.Load() - writes
	end, err := s.sample(ctx, window)
	if err != nil {
		return err
	}
	if err := loadFailed(); err != nil {
		return err
	}
	fmt.Printf("%s: %d requests, %d watch events, %d relists after 410 Gone\n", s.storage, s.requests.Load(), s.events.Load(), s.relists.Load())
	var allowance int64
	if s.storage == "etcd" {
		allowance = writes * etcdHistoryPerWrite
		fmt.Printf("etcd: %d writes between the samples: memory bounds include %.1f MiB for etcd's uncompacted history\n", writes, float64(allowance)/(1<<20))
	}
	bad := report(s.storage, start, end, allowance)

	if s.storage == "etcd" {
		// Killed under load, so that writes are in flight.
		if err := s.proc.kill(); err != nil {
			return err
		}
		s.proc = nil
		stopLoad()
		wg.Wait()
		if err := s.checkAfterKill(ctx, tmp); err != nil {
			return err
		}
	}
	stopLoad()
	wg.Wait()
	if s.flood.duration > 0 {
		fmt.Println()
		if err := s.flood.run(ctx, s); err != nil {
			bad = strings.TrimPrefix(bad+"; flood: "+err.Error(), "; ")
		}
	}
	if bad != "" {
		return errors.New(bad)
	}
	return nil
}

// checkAfterKill restarts the server on the data of the killed one and reads every object back.
func (s *soak) checkAfterKill(ctx context.Context, tmp string) error {
	var err error
	if s.proc, err = s.start(ctx, tmp); err != nil {
		return fmt.Errorf("restarting after SIGKILL: %w", err)
	}
	if err := s.waitServed(ctx); err != nil {
		return fmt.Errorf("after SIGKILL: %w", err)
	}
	var checked, inFlight, acked int
	var lost []string
	for _, st := range s.states {
		got, err := s.generation(st.name)
		if err != nil {
			return fmt.Errorf("after SIGKILL: %w", err)
		}
		checked++
		switch {
		case got == st.acked:
			if st.acked >= 0 {
				acked++
			}
		case st.hasInFlight && got == st.inFlight:
			inFlight++
		default:
			want := fmt.Sprintf("generation %d", st.acked)
			if st.acked < 0 {
				want = "no object"
			}
			lost = append(lost, fmt.Sprintf("%s: has generation %d, acknowledged %s", st.name, got, want))
		}
	}
	fmt.Printf("etcd: SIGKILL under load, restart on the same data: %d objects read back, %d as last acknowledged (%d existing), %d as the write in flight at the kill, %d lost\n",
		checked, checked-inFlight-len(lost), acked, inFlight, len(lost))
	if len(lost) > 0 {
		return fmt.Errorf("acknowledged writes lost after SIGKILL:\n  %s", strings.Join(lost, "\n  "))
	}
	return nil
}

// client writes and reads objects soak-N with N ≡ c (mod clients), so that it alone writes them and knows
// what it last did to each.
func (s *soak) client(ctx context.Context, c int) error {
	var mine []*objectState
	for i := c; i < len(s.states); i += s.clients {
		mine = append(mine, s.states[i])
	}
	gen := 0
	for ctx.Err() == nil {
		st := mine[rand.IntN(len(mine))]
		var err error
		switch r := rand.IntN(10); {
		case r < 5:
			gen++
			err = s.write(st, gen)
		case r < 8:
			err = s.ignoreStatus(http.StatusNotFound, s.do("GET", collection+"/"+st.name, "", http.StatusOK))
		default:
			err = s.list(ctx)
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	return nil
}

// write moves st to generation gen: a create if it has no object, a delete every fifth time, a patch
// otherwise. A write whose answer never came (the server was killed) stays in flight and ends the client.
func (s *soak) write(st *objectState, gen int) error {
	var method, path, body string
	var want int
	next := gen
	switch {
	case st.acked < 0:
		method, path, want = "POST", collection, http.StatusCreated
		body = fmt.Sprintf(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":%q,"labels":{"gen":"%d"}},"spec":{"cronSpec":"* * * * */5","image":%q}}`,
			st.name, gen, strings.Repeat("i", 1024))
	case gen%5 == 0:
		method, path, want, next = "DELETE", collection+"/"+st.name, http.StatusOK, -1
	default:
		method, path, want = "PATCH", collection+"/"+st.name, http.StatusOK
		body = fmt.Sprintf(`{"metadata":{"labels":{"gen":"%d"}}}`, gen)
	}
	st.inFlight, st.hasInFlight = next, true
	if err := s.do(method, path, body, want); err != nil {
		var se *statusError
		if errors.As(err, &se) {
			st.hasInFlight = false // answered: not applied
		}
		return err
	}
	st.acked, st.hasInFlight = next, false
	s.writes.Add(1)
	return nil
}

// list reads the collection in pages of 50.
func (s *soak) list(ctx context.Context) error {
	cont := ""
	for ctx.Err() == nil {
		var l struct {
			Metadata struct{ Continue string } `json:"metadata"`
		}
		if err := s.getJSON(collection+"?limit=50&continue="+cont, &l); err != nil {
			return err
		}
		if cont = l.Metadata.Continue; cont == "" {
			return nil
		}
	}
	return nil
}

// watcher lists and watches from the list's resourceVersion with a short timeout, again and again; a 410 Gone
// makes it list again, as a client-go reflector does.
func (s *soak) watcher(ctx context.Context) error {
	rv := ""
	for ctx.Err() == nil {
		if rv == "" {
			var l struct {
				Metadata struct{ ResourceVersion string } `json:"metadata"`
			}
			if err := s.getJSON(collection, &l); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			rv = l.Metadata.ResourceVersion
		}
		next, err := s.watch(ctx, rv, 1+rand.IntN(5))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if next == "" {
			s.relists.Add(1)
		}
		rv = next
	}
	return nil
}

// watch reads one watch until it ends and returns the resourceVersion to resume from ("" after an ERROR event:
// list again).
func (s *soak) watch(ctx context.Context, rv string, timeoutSeconds int) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s%s?watch=1&resourceVersion=%s&timeoutSeconds=%d",
		s.proc.base, collection, rv, timeoutSeconds), nil)
	if err != nil {
		return "", err
	}
	s.requests.Add(1)
	resp, err := s.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return "", &statusError{"GET watch", resp.StatusCode, b}
	}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string
			Object struct {
				Metadata struct{ ResourceVersion string } `json:"metadata"`
			}
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return rv, nil
			}
			return "", fmt.Errorf("watch from %s: %w", rv, err)
		}
		s.events.Add(1)
		if ev.Type == "ERROR" {
			return "", nil
		}
		rv = ev.Object.Metadata.ResourceVersion
	}
}

// generation reads an object's gen label, -1 when there is no object.
func (s *soak) generation(name string) (int, error) {
	var o struct {
		Metadata struct{ Labels map[string]string } `json:"metadata"`
	}
	err := s.getJSON(collection+"/"+name, &o)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusNotFound {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(o.Metadata.Labels["gen"])
}

// statusError is an answer with an unexpected status.
type statusError struct {
	op   string
	code int
	body []byte
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: status %d: %s", e.op, e.code, bytes.TrimSpace(e.body))
}

func (s *soak) ignoreStatus(code int, err error) error {
	var se *statusError
	if errors.As(err, &se) && se.code == code {
		return nil
	}
	return err
}

func (s *soak) do(method, path, body string, want int) error {
	_, err := s.call(method, path, body, want)
	return err
}

func (s *soak) getJSON(path string, v any) error {
	b, err := s.call("GET", path, "", http.StatusOK)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (s *soak) call(method, path, body string, want int) ([]byte, error) {
	req, err := http.NewRequest(method, s.proc.base+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	switch method {
	case "PATCH":
		req.Header.Set("Content-Type", "application/merge-patch+json")
	case "POST":
		req.Header.Set("Content-Type", "application/json")
	}
	s.requests.Add(1)
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, &statusError{method + " " + path, resp.StatusCode, b}
	}
	return b, nil
}

// waitServed waits until the CRD's collection answers.
func (s *soak) waitServed(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.do("GET", collection+"?limit=1", "", http.StatusOK)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the CRD is not served: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ---------------------------------------------------------------- the server process

// process is a running crdplay-server.
type process struct {
	cmd    *exec.Cmd
	base   string
	log    string
	exited chan struct{}
}

// start runs the server on a free loopback port and waits until /version answers.
func (s *soak) start(ctx context.Context, tmp string) (*process, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	args := []string{"--addr", addr, "--storage", s.storage, "--site", ""}
	if s.storage == "etcd" {
		args = append(args, "--etcd-embedded", "--data-dir", s.dataDir)
	}
	logPath := filepath.Join(tmp, fmt.Sprintf("server-%d.log", time.Now().UnixNano()))
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	p := &process{cmd: exec.Command(s.bin, args...), base: "http://" + addr, log: logPath, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := s.http.Get(p.base + "/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("%s exited: %s", s.bin, p.tail())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("%s not ready after 30s: %s", s.bin, p.tail())
		}
	}
}

// stop ends the server gracefully (SIGTERM), or with SIGKILL when it has not stopped within 10 seconds.
func (p *process) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// kill ends the server with SIGKILL, as a crash or the OOM killer would.
func (p *process) kill() error {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.exited
	return nil
}

// tail is the end of the server's log.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// ---------------------------------------------------------------- figures

// figures is one sample; -1 for a figure the server does not report.
type figures struct {
	rss, threads, goroutines, heap int64
}

// sample takes the smallest of each figure over d, one sample a second.
func (s *soak) sample(ctx context.Context, d time.Duration) (figures, error) {
	best := figures{-1, -1, -1, -1}
	low := func(cur *int64, v int64) {
		if v >= 0 && (*cur < 0 || v < *cur) {
			*cur = v
		}
	}
	for end := time.Now().Add(d); time.Now().Before(end); {
		f, err := s.figures()
		if err != nil {
			return best, err
		}
		low(&best.rss, f.rss)
		low(&best.threads, f.threads)
		low(&best.goroutines, f.goroutines)
		low(&best.heap, f.heap)
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return best, ctx.Err()
		}
	}
	return best, nil
}

// figures reads /proc/PID/status and, if the server has it, /metrics.
func (s *soak) figures() (figures, error) {
	f := figures{-1, -1, -1, -1}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.proc.cmd.Process.Pid))
	if err != nil {
		return f, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		switch k {
		case "VmRSS":
			f.rss = n << 10 // kB
		case "Threads":
			f.threads = n
		}
	}
	resp, err := s.http.Get(s.proc.base + "/metrics")
	if err != nil {
		return f, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return f, nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_goroutines":
			f.goroutines = int64(n)
		case "go_memstats_heap_alloc_bytes":
			f.heap = int64(n)
		}
	}
	return f, nil
}

// report prints the start/end table and returns what exceeded its bound ("" for nothing); allowance is added to
// the memory bounds.
func report(storage string, start, end figures, allowance int64) string {
	memBound := func(v int64) int64 {
		return v + max(memoryGrowthMin, int64(float64(v)*memoryGrowthFraction)) + allowance
	}
	rows := []struct {
		name       string
		start, end int64
		bound      int64
		mib        bool
	}{
		{"RSS", start.rss, end.rss, memBound(start.rss), true},
		{"heap", start.heap, end.heap, memBound(start.heap), true},
		{"goroutines", start.goroutines, end.goroutines, start.goroutines + goroutineGrowth, false},
		{"threads", start.threads, end.threads, start.threads + threadGrowth, false},
	}
	show := func(v int64, mib bool) string {
		switch {
		case v < 0:
			return "n/a"
		case mib:
			return fmt.Sprintf("%.1f MiB", float64(v)/(1<<20))
		}
		return strconv.FormatInt(v, 10)
	}
	fmt.Printf("%-8s %-11s %12s %12s %12s %s\n", "storage", "figure", "start", "end", "bound", "")
	var bad []string
	for _, r := range rows {
		verdict := "ok"
		switch {
		case r.start < 0 || r.end < 0:
			verdict = "not served by this server"
			r.bound = -1
		case r.end > r.bound:
			verdict = "GREW"
			bad = append(bad, fmt.Sprintf("%s grew from %s to %s (bound %s)", r.name, show(r.start, r.mib), show(r.end, r.mib), show(r.bound, r.mib)))
		}
		fmt.Printf("%-8s %-11s %12s %12s %12s %s\n", storage, r.name, show(r.start, r.mib), show(r.end, r.mib), show(r.bound, r.mib), verdict)
	}
	return strings.Join(bad, "; ")
}
