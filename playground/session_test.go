package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"crdplay/engine"
)

const crontabObject = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: my-new-cron-object\nspec:\n  cronSpec: \"* * * * */5\"\n  image: my-awesome-cron-image\n"

func TestSessionCachesCRDsAndResetsObjects(t *testing.T) {
	crd := readText(t, "basic-crontab", "crd.yaml")
	s := NewSession(Options{})
	first := evaluate(t, s, Input{CRDs: &crd, Objects: crontabObject})
	if first.CRDCached || first.SchemasOmitted || first.CRDs[0].Versions[0].Schema == nil {
		t.Fatalf("first evaluation: cached=%v omitted=%v", first.CRDCached, first.SchemasOmitted)
	}
	for i := 0; i < 3; i++ {
		// The same name every time: the previous evaluation's object must be gone (no 409).
		res := evaluate(t, s, Input{Objects: crontabObject, KnownCRDRevision: first.CRDRevision})
		if !res.CRDCached || !res.SchemasOmitted || res.CRDs[0].Versions[0].Schema != nil || res.CRDRevision != first.CRDRevision {
			t.Fatalf("evaluation %d: cached=%v omitted=%v revision %s/%s", i, res.CRDCached, res.SchemasOmitted, res.CRDRevision, first.CRDRevision)
		}
		if o := res.Objects[0]; o.Status != 201 {
			t.Fatalf("evaluation %d: create answered %d: %s", i, o.Status, o.Response)
		}
		if len(res.Tables) != 1 || len(res.Tables[0].Rows) != 1 {
			t.Errorf("evaluation %d: the table should list the one object: %+v", i, res.Tables)
		}
	}
	// The same text passed again is cached too; a different revision gets the schemas.
	res := evaluate(t, s, Input{CRDs: &crd, Objects: crontabObject, KnownCRDRevision: "stale"})
	if !res.CRDCached || res.SchemasOmitted {
		t.Errorf("same text: cached=%v omitted=%v", res.CRDCached, res.SchemasOmitted)
	}
	// A changed CRD is installed afresh: here its schema forbids what was fine before.
	tight := strings.Replace(crd, "                image:\n                  type: string\n", "                image:\n                  type: string\n                  maxLength: 3\n", 1)
	if tight == crd {
		t.Fatal("the CRD text did not change")
	}
	res = evaluate(t, s, Input{CRDs: &tight, Objects: crontabObject})
	if res.CRDCached || res.CRDRevision == first.CRDRevision || res.Objects[0].Status != 422 {
		t.Errorf("changed CRD: cached=%v revision %s status %d", res.CRDCached, res.CRDRevision, res.Objects[0].Status)
	}
	// No CRD text at all: objects have nothing to go to.
	empty := ""
	res = evaluate(t, s, Input{CRDs: &empty, Objects: crontabObject})
	if len(res.CRDs) != 0 || res.Objects[0].Status != 0 || len(res.Diagnostics) != 1 || res.Diagnostics[0].Type != "NoKindMatch" {
		t.Errorf("no CRDs: %+v %+v", res.Objects, res.Diagnostics)
	}
}

func TestSessionConcurrentUse(t *testing.T) {
	crd := readText(t, "basic-crontab", "crd.yaml")
	s := NewSession(Options{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Evaluate(context.Background(), Input{CRDs: &crd, Objects: crontabObject})
			if err != nil || res.Objects[0].Status != 201 {
				t.Errorf("err %v, %+v", err, res)
			}
		}()
	}
	wg.Wait()
}

func TestInputErrors(t *testing.T) {
	s := NewSession(Options{})
	if _, err := s.Evaluate(context.Background(), Input{Mode: "replace"}); err == nil {
		t.Error("an unknown mode is the caller's mistake")
	}
	if _, err := s.Evaluate(context.Background(), Input{FieldValidation: "strict"}); err == nil {
		t.Error("fieldValidation is case-sensitive, as the API's")
	}
}

func TestRuntimeCostAndTrace(t *testing.T) {
	crd := readText(t, "cel-basic", "crd.yaml")
	obj, _ := stepText(t, "cel-basic", "04-create-valid.yaml")
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: obj, Trace: true})
	o := res.Objects[0]
	if o.Status != 201 || o.CEL == nil || o.CEL.Used <= 0 || o.CEL.Budget != res.Limits.RuntimeBudget {
		t.Errorf("status %d, cel %+v", o.Status, o.CEL)
	}
	// The trace: the CRD's POST and GET, discovery, the object's POST, the table (its v1 read is the POST's answer).
	var got []string
	for _, e := range res.Exchanges {
		got = append(got, e.Method+" "+e.Path)
	}
	want := []string{
		"POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		"GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
		"GET /apis/stable.example.com",
		"POST /apis/stable.example.com/v1/namespaces/default/crontabs",
		"GET /apis/stable.example.com/v1/crontabs",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("exchanges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestListDocuments: a List document (what kubectl get -o yaml prints) stands for its items, as with kubectl
// create -f: each item is sent as an object of its own, and its problems are placed at its lines.
func TestListDocuments(t *testing.T) {
	crd := readText(t, "preserve-unknown-fields-root", "crd.yaml")
	// The oracle's answer to the second item, sent alone (02-create-type-error).
	var want struct {
		Status int `json:"status"`
		Body   struct {
			Message string `json:"message"`
			Details struct {
				Causes []struct{ Field, Message string } `json:"causes"`
			} `json:"details"`
		} `json:"body"`
	}
	if err := json.Unmarshal([]byte(readText(t, "preserve-unknown-fields-root", "expected/02-create-type-error.json")), &want); err != nil {
		t.Fatal(err)
	}
	list := func(apiVersion, kind string) string {
		// Lines of the text: a comment and "---" before the List (1-2), then the List's head (3-5).
		return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nitems:\n" +
			"- apiVersion: stable.example.com/v1\n  kind: CronTab\n  metadata:\n    name: fine\n  spec:\n    replicas: 2\n    extra: pruned\n" + // 6-12
			"- apiVersion: stable.example.com/v1\n  kind: CronTab\n  metadata:\n    name: type-error\n  spec:\n    replicas: \"two\"\n" + // 13-18
			"- just a string\n" + // 19
			"- kind: CronTab\n  metadata: {name: no-version}\n" // 20-21
	}
	for _, tc := range []struct{ name, apiVersion, kind string }{
		{"List", "v1", "List"},
		{"CronTabList", "stable.example.com/v1", "CronTabList"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: "# kubectl get crontabs -o yaml\n---\n" + list(tc.apiVersion, tc.kind)})
			if len(res.Objects) != 4 {
				t.Fatalf("%d object results, want one per item: %+v", len(res.Objects), res.Objects)
			}
			for i, o := range res.Objects {
				if o.Document != 0 || o.Item != i+1 {
					t.Errorf("object %d: document %d item %d, want document 0 item %d", i, o.Document, o.Item, i+1)
				}
			}
			if o := res.Objects[0]; o.Status != 201 || o.Name != "fine" {
				t.Errorf("items[0]: %d %s: %s", o.Status, o.Name, o.Response)
			}
			o := res.Objects[1]
			var got struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(o.Response, &got)
			if o.Status != want.Status || got.Message != want.Body.Message {
				t.Errorf("items[1]: %d %q, want the oracle's %d %q", o.Status, got.Message, want.Status, want.Body.Message)
			}
			if res.Objects[2].Operation != "" || res.Objects[3].Operation != "" {
				t.Errorf("items 2 and 3 cannot be sent: %+v %+v", res.Objects[2], res.Objects[3])
			}
			wantDiags := []struct {
				item, line, col     int
				typ, field, message string
			}{
				{1, 12, 5, "Warning", "spec.extra", `unknown field "spec.extra"`}, // the Warning header of the create
				{2, 18, 5, "FieldValueTypeInvalid", "spec.replicas", want.Body.Details.Causes[0].Message},
				{3, 19, 3, "NotAnObject", "", "a Kubernetes object is a mapping with apiVersion, kind and metadata; items[2] is a string"},
				{4, 20, 3, "MissingKind", "", "apiVersion not set"},
			}
			if len(res.Diagnostics) != len(wantDiags) {
				t.Fatalf("diagnostics: %+v", res.Diagnostics)
			}
			for i, w := range wantDiags {
				d := res.Diagnostics[i]
				if d.Item != w.item || d.Line != w.line || d.Column != w.col || d.Type != w.typ || d.Field != w.field || d.Message != w.message {
					t.Errorf("diagnostic %d: item %d at %d:%d %s %s %q\nwant item %d at %d:%d %s %s %q", i, d.Item, d.Line, d.Column, d.Type, d.Field, d.Message,
						w.item, w.line, w.col, w.typ, w.field, w.message)
				}
			}
			// The stored object's marks are placed in the item's lines: items[0].spec.extra, pruned, is line 12.
			var pruned []string
			for _, m := range res.Objects[0].Marks {
				if m.Kind == "pruned" && m.Input != nil {
					pruned = append(pruned, fmt.Sprintf("%s %d:%d", m.Path, m.Input.Line, m.Input.Column))
				}
			}
			if strings.Join(pruned, ",") != "spec.extra 12:5" {
				t.Errorf("items[0]'s pruned fields: %v, want spec.extra at 12:5", pruned)
			}
			// An empty List sends nothing, and says so.
			res = evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: "apiVersion: v1\nkind: List\nitems: []\n"})
			if len(res.Objects) != 1 || res.Objects[0].Operation != "" || len(res.Diagnostics) != 1 || res.Diagnostics[0].Type != "NoItems" || res.Diagnostics[0].Line != 3 {
				t.Errorf("empty List: %+v %+v", res.Objects, res.Diagnostics)
			}
		})
	}
}

// TestDeferredAnalysis: an evaluation with DeferAnalysis answers as one without, less the analysis (rules'
// costs, compat, explain trees, objects' CEL costs); the next evaluation without it has everything, equal to
// an evaluation that never deferred. The cases are every oracle case's CRD with its create steps as objects
// (CEL rules, rules the API skipped, refused CRDs), and a corpus CRD with many rules.
func TestDeferredAnalysis(t *testing.T) {
	type tc struct{ name, crd, objects string }
	var cases []tc
	dirs, err := os.ReadDir(oracleDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		crd := readText(t, d.Name(), "crd.yaml")
		steps, _ := filepath.Glob(filepath.Join(oracleDir, d.Name(), "[0-9]*-create*.yaml"))
		var objs []string
		for _, f := range steps {
			text, _ := stepText(t, d.Name(), filepath.Base(f))
			objs = append(objs, text)
		}
		cases = append(cases, tc{d.Name(), crd, strings.Join(objs, "\n---\n")})
	}
	corpus, err := os.ReadFile("../testdata/corpus/gateway-api/HTTPRoute/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := os.ReadFile("../testdata/corpus/gateway-api/HTTPRoute/01-create.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, tc{"corpus-HTTPRoute", string(corpus), string(obj)})
	// A CRD that goes to the API as YAML (a duplicate key: the API warns): analysed at once, the objects'
	// diagnostics placed by its cost report.
	for _, c := range cases {
		if c.name == "cel-basic" {
			dup := strings.Replace(c.crd, "metadata:\n  name: crontabs.stable.example.com\n", "metadata:\n  name: crontabs.stable.example.com\n  labels: {a: \"1\", a: \"2\"}\n", 1)
			if dup == c.crd {
				t.Fatal("cel-basic's CRD did not change")
			}
			cases = append(cases, tc{"cel-basic-sent-as-YAML", dup, c.objects})
			break
		}
	}
	// What differs between two sessions whatever they do: the objects' uids, generated names and the
	// managedFields' times (the field managers' own clock).
	norm := func(r *Result) string {
		r.Timings, r.CRDCached = Timings{}, false
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(inMapOrder(v, ""))
		return volatile.ReplaceAllString(string(b), "<volatile>")
	}
	now := func() time.Time { return time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC) }
	pending := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := NewSession(Options{Now: now})
			full := evaluate(t, fs, Input{CRDs: &c.crd, Objects: c.objects})
			// The same evaluation again, in the session that did not defer: the store's history (its
			// resourceVersions) is then the same as the deferring session's second evaluation's.
			full2 := evaluate(t, fs, Input{Objects: c.objects})
			s := NewSession(Options{Now: now})
			first := evaluate(t, s, Input{CRDs: &c.crd, Objects: c.objects, DeferAnalysis: true})
			if first.AnalysisPending {
				pending++
			} else if got, want := norm(first), norm(full); got != want {
				// Nothing left for later (no CRD, or one that went as YAML): the complete answer at once.
				t.Errorf("an install with nothing deferred differs from one that never deferred: %s", firstDiff(got, want))
			}
			if strings.HasSuffix(c.name, "-sent-as-YAML") && first.AnalysisPending {
				t.Errorf("a CRD sent as YAML has its analysis deferred")
			}
			// Less the analysis, the first answer is the complete one.
			strip := func(r *Result) *Result {
				cp := *r
				cp.AnalysisPending = false
				cp.CRDs = make([]CRDResult, len(r.CRDs))
				for i, cr := range r.CRDs {
					cr.Compat = nil
					cr.Versions = append([]VersionInfo(nil), cr.Versions...)
					for j := range cr.Versions {
						cr.Versions[j].Schema, cr.Versions[j].CEL = nil, VersionCost{Version: cr.Versions[j].Name, Rules: []RuleCost{}}
					}
					cp.CRDs[i] = cr
				}
				cp.Objects = append([]ObjectResult(nil), r.Objects...)
				for i := range cp.Objects {
					cp.Objects[i].CEL = nil
				}
				return &cp
			}
			if got, want := norm(strip(first)), norm(strip(full)); got != want {
				t.Errorf("deferred answer differs from the complete one less its analysis: %s", firstDiff(got, want))
			}
			for _, o := range first.Objects {
				if o.CEL != nil && first.AnalysisPending {
					t.Errorf("object %s has a CEL cost before the analysis", o.Name)
				}
			}
			second := evaluate(t, s, Input{Objects: c.objects})
			if second.AnalysisPending || (first.AnalysisPending && second.Timings.Analysis <= 0) {
				t.Errorf("second evaluation: pending=%v analysis %v ms", second.AnalysisPending, second.Timings.Analysis)
			}
			if got, want := norm(second), norm(full2); got != want {
				t.Errorf("the evaluation after a deferred one differs from one that never deferred: %s", firstDiff(got, want))
			}
		})
	}
	if pending < len(cases)/2 {
		t.Errorf("only %d of %d cases deferred an analysis", pending, len(cases))
	}
}

var volatile = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|"name":"[a-z0-9.-]*-[a-z0-9]{5}"`)

// firstDiff shows where two texts first differ.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-150)
	return fmt.Sprintf("at byte %d:\n got ...%s\nwant ...%s", i, got[from:min(len(got), i+150)], want[from:min(len(want), i+150)])
}

// inMapOrder sorts what upstream's validation lists in Go's map order, as kube-apiserver does (the causes of
// an error, the errors joined in its message, and so the diagnostics made of them), so that two answers to
// the same request compare equal.
func inMapOrder(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = inMapOrder(e, k)
		}
	case []any:
		for i, e := range v {
			v[i] = inMapOrder(e, "")
		}
		if key == "causes" || key == "diagnostics" {
			sort.Slice(v, func(i, j int) bool {
				a, _ := json.Marshal(v[i])
				b, _ := json.Marshal(v[j])
				return string(a) < string(b)
			})
		}
	case string:
		return invalidList.ReplaceAllStringFunc(v, func(m string) string {
			items := strings.Split(m[len("is invalid: ["):len(m)-1], ", ")
			sort.Strings(items)
			return "is invalid: [" + strings.Join(items, ", ") + "]"
		})
	}
	return v
}

var invalidList = regexp.MustCompile(`is invalid: \[.*\]`)

// TestCRDSentAsJSON: a CRD document goes to the API as JSON (converted as the API's YAML decoder does) only when
// the API reads its YAML the same way, and the answer is then the one the YAML gets; a document with keys
// that YAML 1.1 may read as one (duplicates, booleans, numbers), anchors or aliases is sent as written, so that
// the API's duplicate-key errors stay its own.
func TestCRDSentAsJSON(t *testing.T) {
	crd := readText(t, "basic-crontab", "crd.yaml")
	at := func(old, new string) string {
		t.Helper()
		if !strings.Contains(crd, old) {
			t.Fatalf("no %q in the CRD", old)
		}
		return strings.Replace(crd, old, new, 1)
	}
	for _, c := range []struct {
		name, text, contentType string
	}{
		{"plain", crd, "application/json"},
		{"unknown field", at("  scope: Namespaced\n", "  scope: Namespaced\n  unknownField: 1\n"), "application/json"},
		{"quoted keys", at("                image:\n", "                \"yes\":\n                  type: string\n                'image':\n"), "application/json"},
		{"duplicate key", at("  scope: Namespaced\n", "  scope: Namespaced\n  scope: Cluster\n"), "application/yaml"},
		{"duplicate quoted key", at("                image:\n", "                \"cronSpec\":\n                  type: string\n                image:\n"), "application/yaml"},
		{"boolean key", at("                image:\n", "                on:\n                  type: string\n                image:\n"), "application/yaml"},
		{"numeric key", at("                image:\n", "                1:\n                  type: string\n                image:\n"), "application/yaml"},
		{"anchor", at("                image:\n                  type: string\n", "                image: &s\n                  type: string\n                other: *s\n"), "application/yaml"},
		{"not YAML", at("  scope: Namespaced\n", "  scope: [Namespaced\n"), "application/yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &c.text, Trace: true})
			if len(res.Exchanges) == 0 || res.Exchanges[0].Method != "POST" {
				t.Fatalf("exchanges %+v", res.Exchanges)
			}
			post := res.Exchanges[0]
			if post.ContentType != c.contentType {
				t.Errorf("sent as %s, want %s", post.ContentType, c.contentType)
			}
			// What the API answers to the YAML itself.
			h, err := engine.NewHandler(engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, crdsPath, strings.NewReader(c.text))
			req.Header.Set("Content-Type", "application/yaml")
			req.Header.Set("User-Agent", "crdplay")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			norm := func(s string) string { return volatile.ReplaceAllString(s, "<volatile>") }
			if post.Status != rec.Code || norm(post.Body) != norm(rec.Body.String()) || strings.Join(post.Warnings, "\n") != strings.Join(unquotedWarnings(rec.Header()), "\n") {
				t.Errorf("answer to what was sent: %d %q %s\nanswer to the YAML: %d %q %s", post.Status, post.Warnings, post.Body, rec.Code, unquotedWarnings(rec.Header()), rec.Body)
			}
		})
	}
}

// unquotedWarnings are a response's Warning headers' texts.
func unquotedWarnings(h http.Header) []string {
	var out []string
	for _, w := range h.Values("Warning") {
		// 299 - "text"
		if i := strings.Index(w, `"`); i >= 0 {
			if s, err := strconv.Unquote(w[i:]); err == nil {
				out = append(out, s)
				continue
			}
		}
		out = append(out, w)
	}
	return out
}

// TestAdmissionConfigurationNotApplied: a policy, a binding or a webhook configuration among the inputs (a
// release bundle's, beside its CRDs or its objects) is a warning at its document, since a cluster holding it
// would run it on the writes answered here; other documents not checked (a Namespace, a Deployment) stay notes.
func TestAdmissionConfigurationNotApplied(t *testing.T) {
	crd := readText(t, "basic-crontab", "crd.yaml") + `
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replicas-limit
spec:
  validations:
  - expression: "object.spec.replicas <= 5"
---
apiVersion: v1
kind: Namespace
metadata:
  name: crons
`
	objects := crontabObject + `---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: defaults
spec:
  policyName: defaults
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cron-controller
`
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: objects})
	var got []string
	for _, d := range res.Diagnostics {
		if d.Type == "NotChecked" {
			got = append(got, fmt.Sprintf("%s %s line %d: %s", d.Source, d.Severity, d.Line, strings.SplitN(d.Message, " is ", 2)[0]))
		}
	}
	want := []string{
		"crds warning line 44: not applied: ValidatingAdmissionPolicy replicas-limit (admissionregistration.k8s.io/v1)",
		"crds info line 52: not checked: Namespace crons (v1)",
		"objects warning line 9: not applied: MutatingAdmissionPolicyBinding (admissionregistration.k8s.io/v1)",
		"objects info line 16: not checked: Deployment (apps/v1)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("not checked:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Objects[0].Status != 201 {
		t.Errorf("the CronTab: %d", res.Objects[0].Status)
	}
}
