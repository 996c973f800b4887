// Package apirace is the concurrent-write suite of the Kubernetes API, written against HTTP so that the engine
// on memory, servers on one etcd and the real server (the oracle) run the same requests: many clients at once
// patch (merge, JSON, server-side apply), update, delete and create objects of one custom resource, on one name
// and on several, through the main resource, /status and /scale, and patch one CRD.
//
// What it checks is what kube-apiserver guarantees: a patch (and apply, which creates a missing object) is
// re-applied to whatever object another write left, so it never fails for having raced; a PUT carries the
// resourceVersion it read and fails with 409 once another write came first; no request gets a 5xx; and the
// objects left at the end hold exactly what the acknowledged requests wrote: every acknowledged label is
// there, and none of a request that failed.
package apirace

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Target is one server of the API: a client and the base URL it reaches the server at. Several targets are
// replicas that share one storage.
type Target struct {
	Client *http.Client
	URL    string
}

// Options sizes the suite.
type Options struct {
	// Workers is the number of clients writing at once; OpsPerWorker the requests each sends in a mixed test.
	Workers, OpsPerWorker int
	// StormWorkers × StormPatches merge patches go to one object in the "storm" test.
	StormWorkers, StormPatches int
	// ExactCodes requires each kind of request to get only the codes upstream's semantics allow. Without it the
	// suite only records the codes (to compare a server whose answers are not known in advance) and still
	// requires no 5xx and a final state that matches the acknowledged requests.
	ExactCodes bool
}

const (
	group    = "race.example.com"
	crdName  = "racers." + group
	crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	objsPath = "/apis/" + group + "/v1/namespaces/default/racers"
)

const crdJSON = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + crdName + `"},
"spec":{"group":"` + group + `","scope":"Namespaced","names":{"plural":"racers","singular":"racer","kind":"Racer"},
"versions":[{"name":"v1","served":true,"storage":true,
"subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
"schema":{"openAPIV3Schema":{"type":"object","properties":{
"spec":{"type":"object","properties":{"replicas":{"type":"integer"}}},
"status":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`

// Run creates the suite's CRD through the first target, waits until every target serves it, runs the tests and
// deletes the CRD. Each test logs, per kind of request, how many got each status code.
func Run(t *testing.T, targets []Target, opts Options) {
	s := &suite{targets: targets, opts: opts}
	s.setUp(t)
	t.Run("storm", s.storm)
	t.Run("mixed/one-name", func(t *testing.T) { s.mixed(t, []string{"m"}) })
	t.Run("mixed/many-names", func(t *testing.T) { s.mixed(t, []string{"m0", "m1", "m2", "m3"}) })
	t.Run("churn/one-name", func(t *testing.T) { s.churn(t, []string{"c"}) })
	t.Run("churn/many-names", func(t *testing.T) { s.churn(t, []string{"c0", "c1", "c2", "c3"}) })
	t.Run("crd-patch", s.crdPatch)
}

type suite struct {
	targets []Target
	opts    Options
}

// response is one answer: its status code and body.
type response struct {
	code int
	body []byte
}

// do sends a request to the target of worker w. A 429 (the server is re-initialising a CRD's storage) is
// retried after a pause, as client-go retries it.
func (s *suite) do(t *testing.T, w int, method, path, contentType, body string) response {
	tg := s.targets[w%len(s.targets)]
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		req, err := http.NewRequestWithContext(ctx, method, tg.URL+path, strings.NewReader(body))
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("User-Agent", "apirace")
		resp, err := tg.Client.Do(req)
		if err != nil {
			cancel()
			t.Errorf("%s %s: %v", method, path, err)
			return response{}
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			t.Errorf("%s %s: reading the answer: %v", method, path, err)
		}
		if resp.StatusCode == http.StatusTooManyRequests && attempt < 50 {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		return response{code: resp.StatusCode, body: b}
	}
}

// must sends a request that must get code.
func (s *suite) must(t *testing.T, method, path, contentType, body string, code int) []byte {
	t.Helper()
	r := s.do(t, 0, method, path, contentType, body)
	if r.code != code {
		t.Fatalf("%s %s: %d %.500s; want %d", method, path, r.code, r.body, code)
	}
	return r.body
}

// waitFor polls path on every target until it answers code.
func (s *suite) waitFor(t *testing.T, path string, code int) {
	t.Helper()
	for w := range s.targets {
		deadline := time.Now().Add(60 * time.Second)
		for {
			r := s.do(t, w, "GET", path, "", "")
			if r.code == code {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s on %s: still %d after 60s, want %d", path, s.targets[w].URL, r.code, code)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (s *suite) setUp(t *testing.T) {
	// A CRD left by an interrupted run against a long-lived server is deleted first.
	if r := s.do(t, 0, "DELETE", crdsPath+"/"+crdName, "", ""); r.code == http.StatusOK {
		s.waitFor(t, crdsPath+"/"+crdName, http.StatusNotFound)
	}
	s.must(t, "POST", crdsPath, "application/json", crdJSON, http.StatusCreated)
	s.waitFor(t, objsPath, http.StatusOK)
	t.Cleanup(func() {
		s.do(t, 0, "DELETE", crdsPath+"/"+crdName, "", "")
		s.waitFor(t, crdsPath+"/"+crdName, http.StatusNotFound)
	})
}

// histogram counts status codes per kind of request.
type histogram struct {
	mu     sync.Mutex
	counts map[string]map[int]int
}

func (h *histogram) add(kind string, code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts == nil {
		h.counts = map[string]map[int]int{}
	}
	if h.counts[kind] == nil {
		h.counts[kind] = map[int]int{}
	}
	h.counts[kind][code]++
}

// String is one line per kind: "kind: 200×n 409×m".
func (h *histogram) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	kinds := make([]string, 0, len(h.counts))
	for k := range h.counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	for _, k := range kinds {
		codes := make([]int, 0, len(h.counts[k]))
		for c := range h.counts[k] {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		fmt.Fprintf(&b, "\n  %-12s", k+":")
		for _, c := range codes {
			fmt.Fprintf(&b, " %d×%d", c, h.counts[k][c])
		}
	}
	return b.String()
}

// check records an answer of kind and fails the test on a 5xx, or, with ExactCodes, on a code outside allowed.
func (s *suite) check(t *testing.T, h *histogram, kind, what string, r response, allowed ...int) {
	h.add(kind, r.code)
	if r.code >= 500 || (s.opts.ExactCodes && !slices.Contains(allowed, r.code)) {
		t.Errorf("%s (%s): %d %.300s; want one of %v", what, kind, r.code, r.body, allowed)
	}
}

// object is the part of a custom resource the suite reads.
type object struct {
	Metadata struct {
		Name            string            `json:"name"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec   map[string]any `json:"spec"`
	Status map[string]any `json:"status"`
}

func decode(t *testing.T, body []byte) object {
	t.Helper()
	var o object
	if err := json.Unmarshal(body, &o); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
	return o
}

func objJSON(name string, labels map[string]string, replicas int) string {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": group + "/v1", "kind": "Racer",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec":     map[string]any{"replicas": replicas},
	})
	return string(b)
}

// ledger records acknowledged writes: for each object and key, the value its last acknowledged write set, and
// every (object, key, value) some acknowledged write set. Each worker writes keys of its own (kind-worker) with
// the number of its request as value, one request after another, so the last value a worker's acknowledged
// write set is the one the object must hold at the end.
type ledger struct {
	mu   sync.Mutex
	last map[string]map[string]string
	ever map[string]bool
}

// ack records that the write of key=value to object obj was acknowledged, if r says so.
func (l *ledger) ack(r response, obj, key, value string) {
	if r.code < 200 || r.code > 299 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.ever = map[string]map[string]string{}, map[string]bool{}
	}
	if l.last[obj] == nil {
		l.last[obj] = map[string]string{}
	}
	l.last[obj][key] = value
	l.ever[obj+"/"+key+"="+value] = true
}

// want is what obj must hold at the end: keep and the last acknowledged value of every key.
func (l *ledger) want(obj string, keep map[string]string) map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]string{}
	for k, v := range keep {
		out[k] = v
	}
	for k, v := range l.last[obj] {
		out[k] = v
	}
	return out
}

// acked reports whether some acknowledged write set key=value on obj.
func (l *ledger) acked(obj, key, value string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ever[obj+"/"+key+"="+value]
}

// same fails unless got equals want, naming what differs.
func same(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s missing (acknowledged %q)", k, v))
		} else if g != v {
			diffs = append(diffs, fmt.Sprintf("%s=%q, the last acknowledged write set %q", k, g, v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s=%q, which no acknowledged write set", k, v))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: %s", what, strings.Join(diffs, "; "))
	}
}

// labelPatch is a merge patch that sets one label.
func labelPatch(key, value string) string {
	return `{"metadata":{"labels":{"` + key + `":"` + value + `"}}}`
}

// applyBody is a server-side apply configuration of the object name that sets one label.
func applyBody(name, key, value string) string {
	return `{"apiVersion":"` + group + `/v1","kind":"Racer","metadata":{"name":"` + name + `","labels":{"` + key + `":"` + value + `"}}}`
}

// storm: many clients merge-patch one object at once; every patch succeeds, and each client's label holds the
// value of its last patch.
func (s *suite) storm(t *testing.T) {
	s.must(t, "POST", objsPath, "application/json", objJSON("storm", map[string]string{"init": "x"}, 1), http.StatusCreated)
	var h histogram
	var l ledger
	var wg sync.WaitGroup
	for w := 0; w < s.opts.StormWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("s-%d", w)
			for i := 0; i < s.opts.StormPatches; i++ {
				r := s.do(t, w, "PATCH", objsPath+"/storm", "application/merge-patch+json", labelPatch(key, fmt.Sprint(i)))
				s.check(t, &h, "merge", fmt.Sprintf("%s=%d", key, i), r, http.StatusOK)
				l.ack(r, "storm", key, fmt.Sprint(i))
			}
		}()
	}
	wg.Wait()
	t.Logf("%d clients × %d merge patches of one object:%s", s.opts.StormWorkers, s.opts.StormPatches, h.String())
	got := decode(t, s.must(t, "GET", objsPath+"/storm", "", "", http.StatusOK))
	same(t, "storm's labels", got.Metadata.Labels, l.want("storm", map[string]string{"init": "x"}))
}

// op is one request of a client in mixed or churn: client w's i-th, of kind on the object name at path, writing
// the label (or status field) key=val; what names it in failures.
type op struct {
	w, i                             int
	kind, name, key, val, path, what string
}

// clients runs s.opts.Workers clients at once, each making s.opts.OpsPerWorker requests, and waits for them:
// client w's i-th request is of kinds[(w+i)%len(kinds)] on names[(w*stride+i)%len(names)].
func (s *suite) clients(kinds, names []string, stride int, do func(op)) {
	var wg sync.WaitGroup
	for w := 0; w < s.opts.Workers; w++ {
		wg.Go(func() {
			for i := 0; i < s.opts.OpsPerWorker; i++ {
				kind, name := kinds[(w+i)%len(kinds)], names[(w*stride+i)%len(names)]
				key, val := fmt.Sprintf("%s-%d", kind, w), fmt.Sprint(i)
				do(op{w: w, i: i, kind: kind, name: name, key: key, val: val, path: objsPath + "/" + name, what: name + " " + key + "=" + val})
			}
		})
	}
	wg.Wait()
}

// mixed: every kind of update at once on names that are never deleted. Patches (merge, JSON, apply with force,
// /status, /scale) never fail; a PUT of the object as read succeeds or gets 409, a PUT with an old
// resourceVersion gets 409, one without a resourceVersion 422. At the end each object holds the labels and
// status fields of its last acknowledged writes and nothing else, and spec.replicas is a value a successful
// /scale patch wrote.
func (s *suite) mixed(t *testing.T, names []string) {
	stale := map[string]string{}
	for _, n := range names {
		o := decode(t, s.must(t, "POST", objsPath, "application/json", objJSON(n, map[string]string{"init": "x"}, 1), http.StatusCreated))
		// The resourceVersion of the create is stale once the object has been written again.
		stale[n] = o.Metadata.ResourceVersion
		s.must(t, "PATCH", objsPath+"/"+n, "application/merge-patch+json", labelPatch("init", "y"), http.StatusOK)
	}
	kinds := []string{"merge", "json", "apply", "status", "scale", "put", "put-stale", "put-no-rv"}
	var h histogram
	var labels, status, replicas ledger
	s.clients(kinds, names, 7, func(o op) {
		switch o.kind {
		case "merge":
			r := s.do(t, o.w, "PATCH", o.path, "application/merge-patch+json", labelPatch(o.key, o.val))
			s.check(t, &h, o.kind, o.what, r, http.StatusOK)
			labels.ack(r, o.name, o.key, o.val)
		case "json":
			r := s.do(t, o.w, "PATCH", o.path, "application/json-patch+json", `[{"op":"add","path":"/metadata/labels/`+o.key+`","value":"`+o.val+`"}]`)
			s.check(t, &h, o.kind, o.what, r, http.StatusOK)
			labels.ack(r, o.name, o.key, o.val)
		case "apply":
			r := s.do(t, o.w, "PATCH", o.path+"?fieldManager="+o.key+"&force=true", "application/apply-patch+yaml", applyBody(o.name, o.key, o.val))
			s.check(t, &h, o.kind, o.what, r, http.StatusOK)
			labels.ack(r, o.name, o.key, o.val)
		case "status":
			r := s.do(t, o.w, "PATCH", o.path+"/status", "application/merge-patch+json", `{"status":{"`+o.key+`":"`+o.val+`"}}`)
			s.check(t, &h, o.kind, o.what, r, http.StatusOK)
			status.ack(r, o.name, o.key, o.val)
		case "scale":
			n := fmt.Sprint(o.w*1000 + o.i)
			r := s.do(t, o.w, "PATCH", o.path+"/scale", "application/merge-patch+json", `{"spec":{"replicas":`+n+`}}`)
			s.check(t, &h, o.kind, o.what, r, http.StatusOK)
			replicas.ack(r, o.name, "replicas", n)
		case "put", "put-stale", "put-no-rv":
			r := s.put(t, o.w, o.kind, o.path, o.key, o.val, stale[o.name])
			s.check(t, &h, o.kind, o.what, r, map[string][]int{
				"put":       {http.StatusOK, http.StatusConflict},
				"put-stale": {http.StatusConflict},
				"put-no-rv": {http.StatusUnprocessableEntity},
			}[o.kind]...)
			labels.ack(r, o.name, o.key, o.val)
		}
	})
	t.Logf("%d clients × %d requests on %d name(s):%s", s.opts.Workers, s.opts.OpsPerWorker, len(names), h.String())
	for _, n := range names {
		got := decode(t, s.must(t, "GET", objsPath+"/"+n, "", "", http.StatusOK))
		same(t, n+"'s labels", got.Metadata.Labels, labels.want(n, map[string]string{"init": "y"}))
		gotStatus := map[string]string{}
		for k, v := range got.Status {
			gotStatus[k] = fmt.Sprint(v)
		}
		same(t, n+"'s status", gotStatus, status.want(n, nil))
		r := fmt.Sprint(got.Spec["replicas"])
		if !replicas.acked(n, "replicas", r) && r != "1" {
			t.Errorf("%s: spec.replicas %s, a value no acknowledged /scale patch wrote", n, r)
		}
	}
}

// put PUTs the object at path as read, with label key=val, and: "put" its resourceVersion as read, "put-stale"
// the resourceVersion stale, "put-no-rv" none.
func (s *suite) put(t *testing.T, w int, kind, path, key, val, stale string) response {
	g := s.do(t, w, "GET", path, "", "")
	if g.code != http.StatusOK {
		t.Errorf("GET %s: %d %.300s", path, g.code, g.body)
		return g
	}
	var o map[string]any
	if err := json.Unmarshal(g.body, &o); err != nil {
		t.Errorf("GET %s: %v", path, err)
		return response{}
	}
	md := o["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	labels[key] = val
	md["labels"] = labels
	switch kind {
	case "put-stale":
		md["resourceVersion"] = stale
	case "put-no-rv":
		delete(md, "resourceVersion")
	}
	body, _ := json.Marshal(o)
	return s.do(t, w, "PUT", path, "application/json", string(body))
}

// churn: objects come and go while they are patched. Apply creates a missing object and otherwise updates it,
// so it never gets 404 or 409; a merge patch or a delete of a missing object gets 404, a create of a present
// one 409. An object left at the end carries only labels acknowledged writes set.
func (s *suite) churn(t *testing.T, names []string) {
	kinds := []string{"apply", "merge", "delete", "create", "apply", "merge"}
	var h histogram
	var l ledger
	s.clients(kinds, names, 5, func(o op) {
		switch o.kind {
		case "apply":
			r := s.do(t, o.w, "PATCH", o.path+"?fieldManager="+o.key+"&force=true", "application/apply-patch+yaml", applyBody(o.name, o.key, o.val))
			s.check(t, &h, o.kind, o.what, r, http.StatusOK, http.StatusCreated)
			l.ack(r, o.name, o.key, o.val)
		case "merge":
			r := s.do(t, o.w, "PATCH", o.path, "application/merge-patch+json", labelPatch(o.key, o.val))
			s.check(t, &h, o.kind, o.what, r, http.StatusOK, http.StatusNotFound)
			l.ack(r, o.name, o.key, o.val)
		case "delete":
			r := s.do(t, o.w, "DELETE", o.path, "", "")
			s.check(t, &h, o.kind, o.what, r, http.StatusOK, http.StatusNotFound)
		case "create":
			r := s.do(t, o.w, "POST", objsPath, "application/json", objJSON(o.name, map[string]string{o.key: o.val}, 1))
			s.check(t, &h, o.kind, o.what, r, http.StatusCreated, http.StatusConflict)
			l.ack(r, o.name, o.key, o.val)
		}
	})
	t.Logf("%d clients × %d requests on %d name(s):%s", s.opts.Workers, s.opts.OpsPerWorker, len(names), h.String())
	for _, n := range names {
		r := s.do(t, 0, "GET", objsPath+"/"+n, "", "")
		if r.code == http.StatusNotFound {
			continue
		}
		if r.code != http.StatusOK {
			t.Fatalf("GET %s: %d %.300s", n, r.code, r.body)
		}
		for k, v := range decode(t, r.body).Metadata.Labels {
			if !l.acked(n, k, v) {
				t.Errorf("%s: label %s=%s, which no acknowledged write set", n, k, v)
			}
		}
	}
}

// crdPatch: clients merge-patch the labels of the suite's CRD through every target at once; all succeed.
func (s *suite) crdPatch(t *testing.T) {
	var h histogram
	var l ledger
	var wg sync.WaitGroup
	patches := max(1, s.opts.OpsPerWorker/4)
	for w := 0; w < s.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("crd-%d", w)
			for i := 0; i < patches; i++ {
				r := s.do(t, w, "PATCH", crdsPath+"/"+crdName, "application/merge-patch+json", labelPatch(key, fmt.Sprint(i)))
				s.check(t, &h, "crd-merge", fmt.Sprintf("%s=%d", key, i), r, http.StatusOK)
				l.ack(r, crdName, key, fmt.Sprint(i))
			}
		}()
	}
	wg.Wait()
	t.Logf("%d clients × %d merge patches of one CRD:%s", s.opts.Workers, patches, h.String())
	got := decode(t, s.must(t, "GET", crdsPath+"/"+crdName, "", "", http.StatusOK))
	same(t, "the CRD's labels", got.Metadata.Labels, l.want(crdName, nil))
}
