package oraclecase

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const testdataRoot = "../../testdata/oracle"

func TestNormalizeJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "volatile keys anywhere, empty values kept",
			in:   `{"metadata":{"uid":"abc","resourceVersion":"12","creationTimestamp":"2026-01-01T00:00:00Z","deletionTimestamp":""},"status":{"conditions":[{"lastTransitionTime":"2026-01-01T00:00:00Z"}]},"x":{"uid":7}}`,
			want: `{"metadata":{"creationTimestamp":"<timestamp>","deletionTimestamp":"","resourceVersion":"<resourceVersion>","uid":"<uid>"},"status":{"conditions":[{"lastTransitionTime":"<timestamp>"}]},"x":{"uid":7}}`,
		},
		{
			name: "list continue token",
			in:   `{"kind":"List","metadata":{"continue":"eyJ2Ijo","resourceVersion":"5"}}`,
			want: `{"kind":"List","metadata":{"continue":"<continue>","resourceVersion":"<resourceVersion>"}}`,
		},
		{
			name: "numbers keep their text and HTML is not escaped",
			in:   `{"a":1.0,"b":1e3,"c":12345678901234567890,"d":"<a&b>"}`,
			want: `{"a":1.0,"b":1e3,"c":12345678901234567890,"d":"<a&b>"}`,
		},
		{
			name: "managedFields time replaced and entries sorted without time",
			in:   `{"metadata":{"managedFields":[{"manager":"b","operation":"Update","time":"t2"},{"manager":"oracle","operation":"Apply","time":"t3"},{"manager":"a","operation":"Update","time":"t1","subresource":"status"}]},"time":"kept"}`,
			want: `{"metadata":{"managedFields":[{"manager":"oracle","operation":"Apply","time":"<timestamp>"},{"manager":"a","operation":"Update","subresource":"status","time":"<timestamp>"},{"manager":"b","operation":"Update","time":"<timestamp>"}]},"time":"kept"}`,
		},
		{
			name: "etcd revision in messages",
			in:   `{"message":"conversion failed (revision=123), again revision=4"}`,
			want: `{"message":"conversion failed (revision=<revision>), again revision=<revision>"}`,
		},
		{
			name: "table date columns become age",
			in:   `{"kind":"Table","columnDefinitions":[{"name":"Name","type":"string"},{"name":"Age","type":"date"},{"name":"Created","type":"string","format":"date"},{"name":"AGE","type":"string","format":"date"}],"rows":[{"cells":["x","3s","5m","7h"]},{"cells":["y","<unknown>","a",""]},{"cells":["z"]}]}`,
			want: `{"columnDefinitions":[{"name":"Name","type":"string"},{"name":"Age","type":"date"},{"format":"date","name":"Created","type":"string"},{"format":"date","name":"AGE","type":"string"}],"kind":"Table","rows":[{"cells":["x","<age>","5m","<age>"]},{"cells":["y","<unknown>","a",""]},{"cells":["z"]}]}`,
		},
		{
			name: "table date column without a string name does not panic",
			in:   `{"kind":"Table","columnDefinitions":[{"name":5,"format":"date"}],"rows":[{"cells":["1s"]}]}`,
			want: `{"columnDefinitions":[{"format":"date","name":5}],"kind":"Table","rows":[{"cells":["1s"]}]}`,
		},
		{
			name: "status causes sorted and aggregate message rebuilt",
			in:   `{"kind":"Status","message":"X \"a\" is invalid: [spec.b: Invalid value: 2, spec.a: Required value]","details":{"causes":[{"field":"spec.b","message":"Invalid value: 2"},{"field":"spec.a","message":"Required value"}]}}`,
			want: `{"details":{"causes":[{"field":"spec.a","message":"Required value"},{"field":"spec.b","message":"Invalid value: 2"}]},"kind":"Status","message":"X \"a\" is invalid: [spec.a: Required value, spec.b: Invalid value: 2]"}`,
		},
		{
			name: "status message not the aggregate of causes is kept",
			in:   `{"kind":"Status","message":"something else","details":{"causes":[{"field":"b","message":"m"},{"field":"a","message":"m"}]}}`,
			want: `{"details":{"causes":[{"field":"a","message":"m"},{"field":"b","message":"m"}]},"kind":"Status","message":"something else"}`,
		},
		{
			name: "causes of nested objects are not sorted",
			in:   `{"kind":"List","items":[{"kind":"Status","details":{"causes":[{"field":"b"},{"field":"a"}]}}]}`,
			want: `{"items":[{"details":{"causes":[{"field":"b"},{"field":"a"}]},"kind":"Status"}],"kind":"List"}`,
		},
		{
			name: "non-object values",
			in:   `["revision=1", 2, null]`,
			want: `["revision=<revision>",2,null]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeJSON([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			want := indentJSON(t, tt.want)
			if string(got) != want {
				t.Errorf("NormalizeJSON:\n%s", UnifiedDiff("want", "got", []byte(want), got))
			}
		})
	}
	t.Run("invalid JSON", func(t *testing.T) {
		if _, err := NormalizeJSON([]byte(`{"a":`)); err == nil {
			t.Error("want an error")
		}
	})
}

// indentJSON formats compact test JSON the way encodeJSON does, keeping the
// key order of the literal (which the tests write sorted).
func indentJSON(t *testing.T, s string) string {
	t.Helper()
	v, err := decodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return string(encodeJSON(v))
}

// The recorded bodies are already normalised, so normalising them again
// must not change a byte; anything else means the port disagrees with the
// oracle's normaliser on real data.
func TestNormalizeIdempotentOnExpected(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdataRoot, "*", "expected", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no expected files under %s (%v)", testdataRoot, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		v, err := decodeJSON(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		m := v.(map[string]any)
		for _, key := range []string{"body"} {
			b, ok := m[key]
			if !ok {
				continue
			}
			before := encodeJSON(b)
			after, err := NormalizeJSON(before)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if string(after) != string(before) {
				t.Errorf("%s: normalising the recorded %s changes it:\n%s", f, key, truncate(UnifiedDiff("recorded", "renormalised", before, after), 2000))
			}
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	alpha := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\no\np\n"
	repl := func(pairs ...string) string { return strings.NewReplacer(pairs...).Replace(alpha) }
	// Expected outputs are GNU diff -u's, minus its header.
	tests := []struct {
		name, a, b, want string
	}{
		{name: "equal", a: alpha, b: alpha, want: ""},
		{name: "both empty", a: "", b: "", want: ""},
		{
			name: "two hunks",
			a:    alpha, b: repl("b\n", "B\n", "n\n", "N\n"),
			want: "@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -11,6 +11,6 @@\n k\n l\n m\n-n\n+N\n o\n p\n",
		},
		{
			name: "changes six lines apart share a hunk",
			a:    alpha, b: repl("b\n", "B\n", "i\n", "I\n"),
			want: "@@ -1,12 +1,12 @@\n a\n-b\n+B\n c\n d\n e\n f\n g\n h\n-i\n+I\n j\n k\n l\n",
		},
		{
			name: "changes seven lines apart do not",
			a:    alpha, b: repl("b\n", "B\n", "j\n", "J\n"),
			want: "@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -7,7 +7,7 @@\n g\n h\n i\n-j\n+J\n k\n l\n m\n",
		},
		{
			name: "insert at start",
			a:    alpha, b: "x\n" + alpha,
			want: "@@ -1,3 +1,4 @@\n+x\n a\n b\n c\n",
		},
		{
			name: "delete at end",
			a:    alpha, b: strings.TrimSuffix(alpha, "p\n"),
			want: "@@ -13,4 +13,3 @@\n m\n n\n o\n-p\n",
		},
		{
			name: "only the final newline differs",
			a:    "a\nb", b: "a\nb\n",
			want: "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
		},
		{
			name: "from empty",
			a:    "", b: "a\nb\n",
			want: "@@ -0,0 +1,2 @@\n+a\n+b\n",
		},
		{
			name: "to empty",
			a:    "a\nb\n", b: "",
			want: "@@ -1,2 +0,0 @@\n-a\n-b\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UnifiedDiff("A", "B", []byte(tt.a), []byte(tt.b))
			want := tt.want
			if want != "" {
				want = "--- A\n+++ B\n" + want
			}
			if got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// diffLines must produce a script that rebuilds both sides and is minimal,
// which is checked against a plain LCS on random small inputs.
func TestDiffLinesMinimal(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	gen := func() []string {
		n := rng.Intn(12)
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + rng.Intn(4)))
		}
		return out
	}
	for i := 0; i < 2000; i++ {
		a, b := gen(), gen()
		script := diffLines(a, b)
		var ra, rb []string
		edits := 0
		for _, l := range script {
			if l.kind != diffInsert {
				ra = append(ra, l.text)
			}
			if l.kind != diffDelete {
				rb = append(rb, l.text)
			}
			if l.kind != diffEqual {
				edits++
			}
		}
		if !slices.Equal(ra, a) || !slices.Equal(rb, b) {
			t.Fatalf("script for %q -> %q does not rebuild the inputs: %v", a, b, script)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); edits != want {
			t.Fatalf("script for %q -> %q has %d edits, minimum is %d", a, b, edits, want)
		}
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestUnifiedDiffLargeInputs(t *testing.T) {
	// Beyond maxEditDistance the diff degrades to one replace block but
	// still has to be correct and quick.
	var a, b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	start := time.Now()
	d := UnifiedDiff("A", "B", []byte(a.String()), []byte(b.String()))
	if !strings.HasPrefix(d, "--- A\n+++ B\n@@ -1,3000 +1,3000 @@\n-a0\n") {
		t.Errorf("unexpected diff start: %.100q", d)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("diff took %v", el)
	}
}

func TestTruncate(t *testing.T) {
	if got := truncate("short", 10); got != "short" {
		t.Errorf("got %q", got)
	}
	if got := truncate("abcdef", 3); got != "abc\n..." {
		t.Errorf("got %q", got)
	}
	if got := truncate("aé", 2); got != "a\n..." { // never split a rune
		t.Errorf("got %q", got)
	}
}

func TestCaseDirs(t *testing.T) {
	dirs, err := CaseDirs(testdataRoot)
	if err != nil {
		t.Fatal(err)
	}
	// every directory there is a case
	entries, err := os.ReadDir(testdataRoot)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		if e.IsDir() {
			want = append(want, filepath.Join(testdataRoot, e.Name()))
		}
	}
	if !slices.Equal(dirs, want) || len(dirs) == 0 {
		t.Errorf("CaseDirs = %v\nwant %v", dirs, want)
	}
	one := filepath.Join(testdataRoot, "basic-crontab")
	if got, err := CaseDirs(one); err != nil || !slices.Equal(got, []string{one}) {
		t.Errorf("CaseDirs(%s) = %v, %v; want the dir itself", one, got, err)
	}
	if _, err := CaseDirs(t.TempDir()); err == nil {
		t.Error("CaseDirs on an empty dir: want an error")
	}
}

func TestHandlerClient(t *testing.T) {
	var seen *http.Request
	var seenBody string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		b, _ := io.ReadAll(r.Body)
		seenBody = string(b)
		w.Header().Add("Warning", `299 - "one"`)
		w.Header().Add("Warning", `299 - "two"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"ok":true}`)
	})
	c := HandlerClient(h)
	req, _ := http.NewRequest("POST", "http://engine/apis/x/v1/things?fieldManager=a%3Db", strings.NewReader(`{"a":1}`))
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 || string(body) != `{"ok":true}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("response %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if w := resp.Header.Values("Warning"); !slices.Equal(w, []string{`299 - "one"`, `299 - "two"`}) {
		t.Errorf("Warning headers %q", w)
	}
	if seen.Method != "POST" || seen.URL.Path != "/apis/x/v1/things" || seen.URL.Query().Get("fieldManager") != "a=b" ||
		seen.RequestURI != "/apis/x/v1/things?fieldManager=a%3Db" || seen.Host != "engine" || seen.URL.Host != "" ||
		seen.ContentLength != 7 || seenBody != `{"a":1}` || seen.Header.Get("Accept") != "application/json" {
		t.Errorf("handler saw %s %s (URI %q, host %q, len %d) body %q header %v", seen.Method, seen.URL, seen.RequestURI, seen.Host, seen.ContentLength, seenBody, seen.Header)
	}

	t.Run("no body", func(t *testing.T) {
		resp, err := c.Get("http://engine/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if seen.Body == nil || seen.ContentLength != 0 {
			t.Errorf("handler got body %v, length %d", seen.Body, seen.ContentLength)
		}
	})
	t.Run("panic becomes an error", func(t *testing.T) {
		c := HandlerClient(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
		_, err := c.Get("http://engine/x")
		if err == nil || !strings.Contains(err.Error(), "boom") {
			t.Errorf("err = %v, want the panic", err)
		}
	})
	t.Run("hanging handler times out", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		c := HandlerClient(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
		c.Timeout = 50 * time.Millisecond
		if _, err := c.Get("http://engine/x"); err == nil {
			t.Error("want a timeout error")
		}
	})
}

// fakeServer is just enough of an apiserver for one namespaced CRD to drive
// the runner through a case: CRDs are Established at once, objects get
// increasing resourceVersions, and every request is logged.
type fakeServer struct {
	mu      sync.Mutex
	crds    map[string]map[string]any
	objects map[string]map[string]any
	rv      int
	log     []string
}

func newFakeServer() *fakeServer {
	return &fakeServer{crds: map[string]map[string]any{}, objects: map[string]map[string]any{}}
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	entry := fmt.Sprintf("%s %s accept=%s ua=%s", r.Method, r.URL.RequestURI(), r.Header.Get("Accept"), r.Header.Get("User-Agent"))
	if len(body) > 0 {
		entry += fmt.Sprintf(" ct=%s body=%s", r.Header.Get("Content-Type"), body)
	}
	f.log = append(f.log, entry)
	reply := func(code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	notFound := func() { reply(404, map[string]any{"kind": "Status", "code": 404}) }
	var obj map[string]any
	if len(body) > 0 {
		json.Unmarshal(body, &obj)
	}
	p := r.URL.Path
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	served := len(f.crds) > 0
	switch {
	case p == crds && r.Method == "POST":
		f.rv++
		obj["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(f.rv)
		obj["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": "True", "lastTransitionTime": "now"}}}
		f.crds[obj["metadata"].(map[string]any)["name"].(string)] = obj
		reply(201, obj)
	case strings.HasPrefix(p, crds+"/"):
		name := strings.TrimPrefix(p, crds+"/")
		crd, ok := f.crds[name]
		switch {
		case !ok:
			notFound()
		case r.Method == "DELETE":
			delete(f.crds, name)
			reply(200, crd)
		default:
			reply(200, crd)
		}
	case p == "/apis/example.com/v1" && served:
		reply(200, map[string]any{"resources": []any{map[string]any{"name": "widgets"}}})
	case (p == "/apis/example.com/v1/widgets" || p == widgets) && served:
		if strings.Contains(r.Header.Get("Accept"), "as=Table") {
			reply(200, map[string]any{"kind": "Table", "columnDefinitions": []any{map[string]any{"name": "Age", "type": "date"}}, "rows": []any{map[string]any{"cells": []any{"1s"}}}})
			return
		}
		if r.Method == "POST" {
			f.rv++
			obj["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(f.rv)
			f.objects[obj["metadata"].(map[string]any)["name"].(string)] = obj
			w.Header().Add("Warning", `299 - "unknown field \"spec.x\""`)
			reply(201, obj)
			return
		}
		reply(200, map[string]any{"kind": "WidgetList", "metadata": map[string]any{"resourceVersion": fmt.Sprint(f.rv)}, "items": []any{}})
	case strings.HasPrefix(p, widgets+"/") && served:
		name := strings.TrimPrefix(p, widgets+"/")
		cur, ok := f.objects[name]
		if !ok {
			notFound()
			return
		}
		if r.Method == "PUT" {
			if obj["metadata"].(map[string]any)["resourceVersion"] != cur["metadata"].(map[string]any)["resourceVersion"] {
				reply(409, map[string]any{"kind": "Status", "code": 409})
				return
			}
			f.rv++
			obj["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(f.rv)
			f.objects[name] = obj
			reply(200, obj)
			return
		}
		reply(200, cur)
	default:
		notFound()
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunCaseFake drives a whole case through the runner against the fake
// server: requests built from the step files (rv injection, x-oracle,
// list + Table, raw request), CRD waits and cleanup, and the comparison.
func TestRunCaseFake(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"desc.txt": "fake\n",
		"crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions: [{name: v1, served: true, storage: true}]
`,
		"01-create.yaml":      "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 1.50} # YAMLToJSON turns this into 1.5\n",
		"02-update-spec.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nspec: {size: 2}\n",
		"03-list.yaml":        "apiVersion: example.com/v1\nkind: Widget\nx-oracle: {query: limit=1}\n",
		"04-request-raw.yaml": "method: get\npath: /healthz\naccept: text/plain\nbodyText: hi\n",
		"05-sleep.yaml":       "seconds: 0.01\n",
		"06-get.yaml":         "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1}\nx-oracle: {allNamespaces: false}\n",
		"README.md":           "not a step\n",
		// recorded by hand in the oracle's format
		"expected/01-create.json": `{
  "step": "01-create",
  "request": {
    "method": "POST",
    "path": "/apis/example.com/v1/namespaces/default/widgets",
    "contentType": "application/json",
    "body": {
      "apiVersion": "example.com/v1",
      "kind": "Widget",
      "metadata": {
        "name": "w1"
      },
      "spec": {
        "size": 1.5
      }
    }
  },
  "status": 201,
  "warnings": [
    "299 - \"unknown field \\\"spec.x\\\"\""
  ],
  "body": {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {
      "name": "w1",
      "resourceVersion": "<resourceVersion>"
    },
    "spec": {
      "size": 1.5
    }
  }
}
`,
		"expected/03-list.table.json": `{
  "step": "03-list",
  "request": {
    "method": "GET",
    "path": "/apis/example.com/v1/namespaces/default/widgets?limit=1",
    "accept": "application/json;as=Table;v=v1;g=meta.k8s.io"
  },
  "status": 200,
  "body": {
    "columnDefinitions": [
      {
        "name": "Age",
        "type": "date"
      }
    ],
    "kind": "Table",
    "rows": [
      {
        "cells": [
          "<age>"
        ]
      }
    ]
  }
}
`,
		"expected/06-get.json":    "{}\n",
		"expected/99-gone.json":   "{}\n",
		"expected/not-json.txt":   "ignored\n",
		"expected/04-request-raw": "ignored\n",
	})

	f := newFakeServer()
	// Pre-clean must remove a CRD left behind by an aborted run.
	f.crds["widgets.example.com"] = map[string]any{"metadata": map[string]any{"name": "widgets.example.com"}, "spec": map[string]any{"group": "example.com", "names": map[string]any{"plural": "widgets", "kind": "Widget"}, "versions": []any{map[string]any{"name": "v1", "served": true}}}}
	r := New(HandlerClient(f), "http://engine", Options{PollInterval: time.Millisecond})
	res, err := r.RunCase(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 7 {
		t.Errorf("Steps = %d, want 7 (crd + 6 files)", res.Steps)
	}

	var got []string
	for _, d := range res.Diffs {
		got = append(got, strings.SplitN(d, "\n", 2)[0])
	}
	want := []string{
		"99-gone.json: expected file but no such step output",
		"00-crd.json: new output, no expected file",
		"02-update-spec.json: new output, no expected file",
		"03-list.json: new output, no expected file",
		"04-request-raw.json: new output, no expected file",
		"06-get.json:",
	}
	if !slices.Equal(got, want) {
		t.Errorf("diff summary:\n%s\nwant:\n%s\nfull:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), strings.Join(res.Diffs, "\n"))
	}
	if d := res.Diffs[len(res.Diffs)-1]; !strings.Contains(d, "--- expected/06-get.json\n+++ got/06-get.json\n@@ -1 +1,19 @@\n-{}\n+{\n") {
		t.Errorf("06-get diff:\n%s", d)
	}

	const ua = " ua=" + ClientUserAgent
	const j = "accept=application/json" + ua
	mustLog := []string{
		// pre-clean of the left-over CRD, then the case's own create
		"DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com " + j,
		`POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions ` + j + ` ct=application/json body={"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true}]}}`,
		"GET /apis/example.com/v1 " + j,
		`POST /apis/example.com/v1/namespaces/default/widgets ` + j + ` ct=application/json body={"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1.5}}`,
		// update: current rv fetched and injected
		"GET /apis/example.com/v1/namespaces/default/widgets/w1 " + j,
		`PUT /apis/example.com/v1/namespaces/default/widgets/w1 ` + j + ` ct=application/json body={"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","resourceVersion":"2"},"spec":{"size":2}}`,
		"GET /apis/example.com/v1/namespaces/default/widgets?limit=1 " + j,
		"GET /apis/example.com/v1/namespaces/default/widgets?limit=1 accept=" + tableAccept + ua,
		"GET /healthz accept=text/plain" + ua + " ct=application/json body=hi",
		// cleanup
		"DELETE /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com " + j,
	}
	pos := 0
	for _, w := range mustLog {
		i := slices.Index(f.log[pos:], w)
		if i < 0 {
			t.Fatalf("request log lacks (in order) %q; log:\n%s", w, strings.Join(f.log, "\n"))
		}
		pos += i + 1
	}
	if len(f.crds) != 0 {
		t.Errorf("CRDs left after the case: %v", f.crds)
	}
}

func TestRunCaseErrors(t *testing.T) {
	t.Run("unknown op", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"crd.yaml": "kind: X\n", "01-frobnicate.yaml": "a: 1\n"})
		_, err := New(HandlerClient(http.NotFoundHandler()), "http://engine", Options{}).RunCase(dir)
		if err == nil || !strings.Contains(err.Error(), `unknown op "frobnicate"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("CRD never established", func(t *testing.T) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"crd.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\nspec: {group: b, names: {plural: a, kind: A}, versions: [{name: v1, served: true}]}\n"})
		var created bool
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == "POST":
				created = true
				w.WriteHeader(201)
				io.WriteString(w, `{"metadata":{"name":"a.b"},"spec":{"group":"b","names":{"plural":"a","kind":"A"},"versions":[{"name":"v1","served":true}]}}`)
			case r.Method == "DELETE":
				created = false
				w.WriteHeader(200)
			case created && strings.HasSuffix(r.URL.Path, "/a.b"):
				io.WriteString(w, `{"metadata":{"name":"a.b"},"spec":{"group":"b","names":{"plural":"a","kind":"A"},"versions":[{"name":"v1","served":true}]}}`)
			default:
				w.WriteHeader(404)
			}
		})
		start := time.Now()
		_, err := New(HandlerClient(h), "http://engine", Options{WaitTimeout: 100 * time.Millisecond, PollInterval: time.Millisecond}).RunCase(dir)
		if err == nil || !strings.Contains(err.Error(), "not established") {
			t.Errorf("err = %v", err)
		}
		if created {
			t.Error("CRD not cleaned up after the failed step")
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("WaitTimeout not honoured: %v", el)
		}
	})
	t.Run("transport error", func(t *testing.T) {
		dir := filepath.Join(testdataRoot, "basic-crontab")
		c := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("no route") })}
		// The oracle's GETs swallow transport errors (status 0), so the
		// first sign is the pre-clean's GET of the CRD.
		if _, err := New(c, "http://engine", Options{}).RunCase(dir); err == nil || !strings.Contains(err.Error(), "pre-clean") {
			t.Errorf("err = %v", err)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestAgainstRealOracle validates the port: against the real server (an
// `oracle serve` at CRDPLAY_ORACLE_URL) every recorded case must reproduce
// byte for byte. It takes about 100 s, mostly the oracle's CRD waits.
func TestAgainstRealOracle(t *testing.T) {
	base := os.Getenv("CRDPLAY_ORACLE_URL")
	if base == "" {
		t.Skip("CRDPLAY_ORACLE_URL not set; start `/work/shared/oracle/bin/oracle serve --port 18080` and set it to http://127.0.0.1:18080")
	}
	dirs, err := CaseDirs(testdataRoot)
	if err != nil {
		t.Fatal(err)
	}
	r := New(nil, base, DefaultOptions())
	ran, failed := 0, 0
	for _, dir := range dirs {
		ok := t.Run(filepath.Base(dir), func(t *testing.T) {
			ran++ // not counting cases that -run filtered out
			start := time.Now()
			res, err := r.RunCase(dir)
			if err != nil {
				t.Fatalf("after %d step(s): %v", res.Steps, err)
			}
			for _, d := range res.Diffs {
				t.Errorf("%s", d)
			}
			t.Logf("%d steps, %.1fs", res.Steps, time.Since(start).Seconds())
		})
		if !ok {
			failed++
		}
	}
	t.Logf("%d case(s), %d failed", ran, failed)
}
