// Command loadbench reports the write and read throughput of crdplay-server's API on each storage: requests
// per second and latency percentiles with concurrent clients over loopback HTTP. It is a report for
// `make bench`, not a test: it prints a table and fails only when a request fails.
//
//	go run ./tools/loadbench [-clients 8] [-duration 5s] [-storage memory,etcd]
//
// Each storage gets a fresh server (etcd: an embedded etcd in a temporary directory, as
// `crdplay-server --storage etcd --etcd-embedded` runs it) with the documentation's CronTab CRD. The write
// phase creates CronTabs (POST, each a new object); the read phase GETs objects that the write phase made,
// chosen round-robin, so reads hit storage rather than one hot key.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"crdplay/server"
)

const crd = `{
 "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "crontabs.stable.example.com"},
 "spec": {"group": "stable.example.com", "scope": "Namespaced",
  "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
  "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
   "type": "object", "properties": {"spec": {"type": "object", "properties": {
    "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
    "image": {"type": "string"},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}}}}}}}]}}`

const collection = "/apis/stable.example.com/v1/namespaces/default/crontabs"

func main() {
	clients := flag.Int("clients", 8, "concurrent clients")
	duration := flag.Duration("duration", 5*time.Second, "length of each phase")
	storages := flag.String("storage", "memory,etcd", "comma-separated storages to measure")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (server included) to `file`")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	fmt.Printf("API throughput: %d concurrent clients, %s per phase, loopback HTTP/1.1 keep-alive\n\n", *clients, *duration)
	fmt.Printf("%-8s %-36s %10s %10s %10s %9s\n", "storage", "phase", "req/s", "p50", "p99", "requests")
	failed := false
	for _, name := range strings.Split(*storages, ",") {
		rows, err := measure(name, *clients, *duration)
		for _, r := range rows {
			fmt.Printf("%-8s %-36s %10.0f %10s %10s %9d\n", name, r.phase, r.rps, r.p50, r.p99, r.n)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadbench: %s: %v\n", name, err)
			failed = true
		}
	}
	if failed {
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

type row struct {
	phase    string
	rps      float64
	p50, p99 time.Duration
	n        int
}

// measure starts a server on the named storage and runs the phases against it.
func measure(storage string, clients int, d time.Duration) ([]row, error) {
	opts := server.Options{Storage: storage}
	if storage == server.StorageEtcd {
		dir, err := os.MkdirTemp("", "loadbench-etcd-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		opts.Etcd = server.EtcdOptions{Embedded: true, DataDir: dir}
	}
	h, err := server.NewHandler(opts)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Serve(ctx, ln, h, time.Second) }()
	defer func() { cancel(); <-done }()

	base := "http://" + ln.Addr().String()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}, Timeout: 30 * time.Second}
	if err := do(c, "POST", base+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd, http.StatusCreated); err != nil {
		return nil, fmt.Errorf("creating the CRD: %w", err)
	}
	if err := waitServed(c, base+collection); err != nil {
		return nil, err
	}

	var seq atomic.Int64
	write, err := run(clients, d, func() error {
		name := fmt.Sprintf("ct-%d", seq.Add(1))
		body := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"` + name +
			`"},"spec":{"cronSpec":"* * * * */5","image":"my-awesome-cron-image"}}`
		return do(c, "POST", base+collection, body, http.StatusCreated)
	})
	rows := []row{write.row("write: POST create")}
	if err != nil {
		return rows, fmt.Errorf("write phase: %w", err)
	}
	made := seq.Load()
	var next atomic.Int64
	read, err := run(clients, d, func() error {
		i := next.Add(1)%made + 1
		return do(c, "GET", fmt.Sprintf("%s/ct-%d", base+collection, i), "", http.StatusOK)
	})
	rows = append(rows, read.row("read: GET one object"))
	if err != nil {
		return rows, fmt.Errorf("read phase: %w", err)
	}
	return rows, nil
}

// waitServed waits until the CRD's collection answers: the server establishes a CRD synchronously, but an
// etcd-backed replica learns of it through its watch.
func waitServed(c *http.Client, url string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := do(c, "GET", url+"?limit=1", "", http.StatusOK)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the CRD is not served: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type result struct {
	lat     []time.Duration
	elapsed time.Duration
}

func (r result) row(phase string) row {
	if len(r.lat) == 0 {
		return row{phase: phase}
	}
	slices.Sort(r.lat)
	pct := func(p float64) time.Duration { return r.lat[int(p*float64(len(r.lat)-1))].Round(time.Microsecond) }
	return row{phase: phase, rps: float64(len(r.lat)) / r.elapsed.Seconds(), p50: pct(0.50), p99: pct(0.99), n: len(r.lat)}
}

// run calls op from each of clients goroutines until d has passed, timing every call.
func run(clients int, d time.Duration, op func() error) (result, error) {
	var (
		mu    sync.Mutex
		all   []time.Duration
		first error
		wg    sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(d)
	for range clients {
		wg.Go(func() {
			var lat []time.Duration
			for time.Now().Before(end) {
				t := time.Now()
				err := op()
				lat = append(lat, time.Since(t))
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					break
				}
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return result{lat: all, elapsed: time.Since(start)}, first
}

func do(c *http.Client, method, url, body string, want int) error {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != want {
		msg := buf.String()
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return errors.New(method + " " + url + ": " + resp.Status + ": " + msg)
	}
	return nil
}
