// Package httpload drives an API server over loopback HTTP for the benchmarks of `make bench`
// (tools/loadbench, tools/sidebyside): concurrent clients each calling an operation until a deadline, with every
// call timed, and the documentation's CronTab CRD whose creates they measure. It works against any server that
// speaks the Kubernetes API (crdplay-server or the real apiextensions-apiserver of ../shared/oracle).
package httpload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// CRD is the documentation's CronTab CRD, as JSON.
const CRD = `{
 "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "crontabs.stable.example.com"},
 "spec": {"group": "stable.example.com", "scope": "Namespaced",
  "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
  "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
   "type": "object", "properties": {"spec": {"type": "object", "properties": {
    "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
    "image": {"type": "string"},
    "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}}}}}}}]}}`

// CRDs is the path of the CRD collection; Collection that of the CronTabs in namespace default.
const (
	CRDs       = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	Collection = "/apis/stable.example.com/v1/namespaces/default/crontabs"
)

// Client returns an HTTP client for clients concurrent callers (keep-alive, as many idle connections).
func Client(clients int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}, Timeout: 60 * time.Second}
}

// WithBearer returns a client that sends c's requests over c's transport with `Authorization: Bearer token`,
// as a kubeconfig's token user does.
func WithBearer(c *http.Client, token string) *http.Client {
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &http.Client{Transport: bearer{token, rt}, Timeout: c.Timeout}
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(req)
}

// InstallCronTab creates the CronTab CRD on the server at base and waits until its collection answers.
func InstallCronTab(c *http.Client, base string) error {
	if _, err := Do(c, "POST", base+CRDs, CRD, http.StatusCreated); err != nil {
		return fmt.Errorf("creating the CRD: %w", err)
	}
	return WaitServed(c, base+Collection)
}

// WaitServed waits until a collection answers: crdplay-server establishes a CRD synchronously, but an
// etcd-backed replica learns of it through its watch, and the real server through its controllers.
func WaitServed(c *http.Client, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := Do(c, "GET", url+"?limit=1", "", http.StatusOK)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the CRD is not served: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Creates returns an operation that creates a new CronTab (POST) on each call, named prefix-1, prefix-2...
func Creates(c *http.Client, base, prefix string) func() error {
	var seq atomic.Int64
	return func() error {
		name := fmt.Sprintf("%s-%d", prefix, seq.Add(1))
		body := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"` + name +
			`"},"spec":{"cronSpec":"* * * * */5","image":"my-awesome-cron-image"}}`
		_, err := Do(c, "POST", base+Collection, body, http.StatusCreated)
		return err
	}
}

// Result is the latency of every call of a Run and the time it took.
type Result struct {
	Lat     []time.Duration
	Elapsed time.Duration
}

// Row summarises a Result: calls per second and the latency percentiles.
type Row struct {
	Phase    string
	RPS      float64
	P50, P99 time.Duration
	N        int
}

// Row summarises r under the phase's name.
func (r Result) Row(phase string) Row {
	if len(r.Lat) == 0 {
		return Row{Phase: phase}
	}
	slices.Sort(r.Lat)
	pct := func(p float64) time.Duration { return r.Lat[int(p*float64(len(r.Lat)-1))].Round(time.Microsecond) }
	return Row{Phase: phase, RPS: float64(len(r.Lat)) / r.Elapsed.Seconds(), P50: pct(0.50), P99: pct(0.99), N: len(r.Lat)}
}

// Run calls op from each of clients goroutines until d has passed, timing every call. A failed call ends its
// client; the first failure is returned with what was measured.
func Run(clients int, d time.Duration, op func() error) (Result, error) {
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
	return Result{Lat: all, Elapsed: time.Since(start)}, first
}

// Do sends a JSON request (body may be empty) and returns the response body; a status other than want is an
// error quoting the start of the body.
func Do(c *http.Client, method, url, body string, want int) ([]byte, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		msg := buf.String()
		if len(msg) > 300 {
			msg = msg[:300] + "..."
		}
		return buf.Bytes(), &StatusError{Code: resp.StatusCode, Err: errors.New(method + " " + url + ": " + resp.Status + ": " + msg)}
	}
	return buf.Bytes(), nil
}

// StatusError is a response whose status was not the one wanted.
type StatusError struct {
	Code int
	Err  error
}

func (e *StatusError) Error() string { return e.Err.Error() }
