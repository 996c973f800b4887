package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// sameJSON reports whether two JSON texts are the same value (key order and spacing aside).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}

// TestKubectlJSON: one document to the JSON kubectl create -f sends. The expectations are kubectl v1.37.2's
// (checked with the real binary: kubectl label --local -f FILE -o json reads files through the same
// builder): YAML 1.1 scalars (yes, on, y are booleans, and so are the keys y and n; 0x1F is 31), a key given
// twice keeps its last value, an integer past int64 goes through float64, and metadata of the wrong types or
// a missing kind is refused on the client. The resourceVersion is cleared by kubectl create's
// Helper.CreateWithOptions, which label does not call.
func TestKubectlJSON(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // JSON; "" for nothing sent
		err       string // a part of the error
	}{
		{name: "YAML", src: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`},
		{name: "a duplicate key keeps its last value", src: "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: twice\nspec:\n  replicas: 1\n  replicas: 2\n",
			want: `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"twice"},"spec":{"replicas":2}}`},
		{name: "a duplicate key in a JSON document keeps its last value", src: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"x","k":"z"}}`,
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"z"}}`},
		{name: "YAML 1.1 scalars", src: "kind: X\nv: yes\nw: on\nz: y\nh: 0x1F\no: 0o17\nf: 1.0\ne: 1e3\nd: 2024-01-01\n",
			want: `{"kind":"X","v":true,"w":true,"z":true,"h":31,"o":15,"f":1,"e":1000,"d":"2024-01-01"}`},
		{name: "a key that YAML 1.1 reads as a boolean or number", src: "kind: X\ny: a\nn: b\n1: c\n",
			want: `{"kind":"X","true":"a","false":"b","1":"c"}`},
		{name: "an integer past int64 loses digits", src: "kind: X\nbig: 12345678901234567890\n",
			want: `{"kind":"X","big":12345678901234567000}`},
		{name: "a merge key", src: "kind: X\nbase: &b {a: 1, b: 2}\nm:\n  <<: *b\n  b: 3\n",
			want: `{"kind":"X","base":{"a":1,"b":2},"m":{"a":1,"b":3}}`},
		{name: "the resourceVersion of an exported object is cleared", src: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  resourceVersion: \"123\"\n  uid: u\n",
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"u"}}`},
		{name: "a UTF-8 byte order mark", src: "\ufeffkind: X\n", want: `{"kind":"X"}`},
		{name: "UTF-16 with a byte order mark", src: "\xff\xfek\x00i\x00n\x00d\x00:\x00 \x00X\x00\n\x00", want: `{"kind":"X"}`},
		{name: "bytes that are not UTF-8", src: "kind: X\nx: \xff\n", want: `{"kind":"X","x":"\ufffd"}`},
		{name: "a flow mapping is YAML, not JSON", src: "{kind: X, a: 1}\n", want: `{"kind":"X","a":1}`},
		{name: "only comments", src: "# nothing\n\n", want: ""},
		{name: "null", src: "null\n", want: ""},
		{name: "an empty List", src: "apiVersion: v1\nkind: List\nitems: []\n", want: ""},
		{name: "no kind", src: "apiVersion: v1\nmetadata:\n  name: a\n", err: "unable to decode: Object 'Kind' is missing"},
		{name: "a kind that is not a string", src: "apiVersion: v1\nkind: 5\n", err: "Object 'Kind' is missing"},
		{name: "labels that are not strings", src: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    n: 1\n",
			err: "unable to decode: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"},
		{name: "not a mapping", src: "- a\n- b\n", err: "unable to decode: json: cannot unmarshal array"},
		{name: "not YAML", src: "kind: X\na: [\n", err: "error parsing: error converting YAML to JSON"},
		{name: "a List", src: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n", err: "kubectl sends 1 objects"},
		{name: "two JSON values", src: `{"kind":"A"} {"kind":"B"}`, err: "kubectl sends 2 objects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kubectlJSON(tt.src)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q (JSON %s)", err, tt.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if got != nil {
					t.Fatalf("got %s, want nothing sent", got)
				}
				return
			}
			if !sameJSON(t, got, []byte(tt.want)) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestKubectlJSONUpstream: a key given twice resolves as the upstream functions kubectl calls resolve it
// (util/yaml's YAMLOrJSONDecoder into a RawExtension, whose YAML path is sigs.k8s.io/yaml), so that the
// expectation above is upstream's, not ours.
func TestKubectlJSONUpstream(t *testing.T) {
	for _, src := range []string{
		"kind: X\nspec:\n  replicas: 1\n  replicas: 2\n",
		"kind: X\na: 1\nb: {c: 1, c: [1, 2]}\na: 3\n",
		`{"kind":"X","a":1,"a":{"b":2}}`,
	} {
		ext := runtime.RawExtension{}
		if err := yaml.NewYAMLOrJSONDecoder(strings.NewReader(src), 4096).Decode(&ext); err != nil {
			t.Fatal(err)
		}
		// The YAML path converts the whole document with sigs.k8s.io/yaml.
		if !strings.HasPrefix(src, "{") {
			j, err := sigsyaml.YAMLToJSON([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, ext.Raw, j) {
				t.Errorf("%q: the decoder gave %s, sigs.k8s.io/yaml %s", src, ext.Raw, j)
			}
		}
		got, err := kubectlJSON(src)
		if err != nil {
			t.Fatal(err)
		}
		// The JSON path keeps the text as it is; the unstructured decoding keeps the last value, as
		// encoding/json does for a map.
		var want map[string]any
		if err := json.Unmarshal(ext.Raw, &want); err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(want)
		if !sameJSON(t, got, wantJSON) {
			t.Errorf("%q: got %s, upstream %s", src, got, wantJSON)
		}
	}
}

// TestKubectlObjects: a List stands for its items, each sent alone, as FlattenListVisitor flattens it; an
// item without kind and apiVersion takes the List's (UnstructuredJSONScheme strips "List" off its kind);
// an item kubectl cannot type fails alone; a List in a List fails the whole document (meta.ExtractList has no
// Items field in an unstructured item), and so does a custom resource in a List that has an items field;
// a custom resource with a top-level items array is read as a List of them, so the resource itself is
// never sent. Checked with the real kubectl v1.37.2.
func TestKubectlObjects(t *testing.T) {
	type obj struct {
		item []int
		json string // "" when err
		err  string
	}
	tests := []struct {
		name string
		src  string
		want []obj
		err  string
	}{
		{name: "a List's items", src: "apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"9\"}\nitems:\n" +
			"- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, resourceVersion: \"7\"}}\n" +
			"- {apiVersion: v1, kind: Secret, metadata: {name: b}}\n",
			want: []obj{{item: []int{0}, json: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`},
				{item: []int{1}, json: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"b"}}`}}},
		{name: "an item takes the List's kind and apiVersion", src: "apiVersion: ex.com/v1\nkind: WidgetList\nitems:\n- {metadata: {name: a}}\n",
			want: []obj{{item: []int{0}, json: `{"apiVersion":"ex.com/v1","kind":"Widget","metadata":{"name":"a"}}`}}},
		{name: "items kubectl cannot type fail alone", src: "apiVersion: v1\nkind: List\nitems:\n" +
			"- {metadata: {name: nokind}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: ok}}\n- {kind: ConfigMap, metadata: {name: noversion}}\n",
			want: []obj{{item: []int{0}, err: "Object 'Kind' is missing"},
				{item: []int{1}, json: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ok"}}`},
				{item: []int{2}, err: "Object 'apiVersion' is missing"}}},
		{name: "a List in a List", src: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n" +
			"- {apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: Secret, metadata: {name: n}}]}\n",
			want: []obj{{err: "*unstructured.Unstructured is not a list"}}},
		{name: "a custom resource with a top-level items array", src: "apiVersion: ex.com/v1\nkind: Widget\nmetadata: {name: w}\nitems: [{metadata: {name: i}}]\n",
			want: []obj{{item: []int{0}, json: `{"apiVersion":"ex.com/v1","kind":"Widget","metadata":{"name":"i"}}`}}},
		{name: "a custom resource with items that are not objects", src: "apiVersion: ex.com/v1\nkind: Widget\nmetadata: {name: w}\nitems: [1, 2]\n",
			want: []obj{{err: "unable to decode"}}},
		{name: "a stream", src: "kind: A\n---\n# only a comment\n---\nkind: B\n",
			want: []obj{{json: `{"kind":"A"}`}, {json: `{"kind":"B"}`}}},
		{name: "a refused document does not stop the stream", src: "apiVersion: v1\n---\nkind: B\n",
			want: []obj{{err: "Object 'Kind' is missing"}, {json: `{"kind":"B"}`}}},
		{name: "a parse error stops it", src: "kind: A\n---\na: [\n---\nkind: C\n",
			want: []obj{{json: `{"kind":"A"}`}}, err: "error parsing"},
		{name: "JSON then something else", src: `{"kind":"A"} xyz`,
			want: []obj{{json: `{"kind":"A"}`}}, err: "error parsing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kubectlObjects(tt.src)
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d objects, want %d: %+v", len(got), len(tt.want), got)
			}
			for i, w := range tt.want {
				g := got[i]
				if !slices.Equal(g.item, w.item) {
					t.Errorf("object %d: item %v, want %v", i, g.item, w.item)
				}
				if w.err != "" {
					if g.err == nil || !strings.Contains(g.err.Error(), w.err) || g.json != nil {
						t.Errorf("object %d: error %v (JSON %s), want %q", i, g.err, g.json, w.err)
					}
					continue
				}
				if g.err != nil {
					t.Errorf("object %d: %v", i, g.err)
					continue
				}
				if !sameJSON(t, g.json, []byte(w.json)) {
					t.Errorf("object %d: got %s, want %s", i, g.json, w.json)
				}
			}
		})
	}
}

// TestKubectlNamespace: a namespaced object without a namespace gets the default one, one with a namespace
// keeps it, and a cluster-scoped object loses it (SetNamespace, FilterNamespace).
func TestKubectlNamespace(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		namespaced bool
		want       string
	}{
		{"namespaced, none", `{"kind":"X","metadata":{"name":"a"}}`, true, `{"kind":"X","metadata":{"name":"a","namespace":"default"}}`},
		{"namespaced, its own", `{"kind":"X","metadata":{"name":"a","namespace":"prod"}}`, true, `{"kind":"X","metadata":{"name":"a","namespace":"prod"}}`},
		{"namespaced, no metadata", `{"kind":"X"}`, true, `{"kind":"X","metadata":{"namespace":"default"}}`},
		{"cluster-scoped", `{"kind":"X","metadata":{"name":"a","namespace":"prod"}}`, false, `{"kind":"X","metadata":{"name":"a"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := kubectlNamespace([]byte(tt.body), tt.namespaced, "default")
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, []byte(tt.want)) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// kubectlReadDir holds what the real kubectl v1.37.2 sent for input files (its README says how they were
// recorded): <name>.kubectl.json beside the input <name>.yaml, one record per write kubectl made, an array
// when it made several, and a record without a body when it refused the file and sent nothing.
const kubectlReadDir = "testdata/kubectl-read"

// kubectlRecord is one recorded request (the fields the test needs).
type kubectlRecord struct {
	Command     string  `json:"command"`
	ContentType *string `json:"contentType"`
	Body        *string `json:"body"`
	Status      int     `json:"status"`
	// Output is kubectl's stdout and stderr: its error when it sent nothing.
	Output string `json:"output"`
}

// lastApplied is the annotation kubectl apply (client-side) adds: the object as it read it.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// TestKubectlRecorded: for every recording, what kubectlObjects reads from the input's documents is what the
// real kubectl sent, request by request, as JSON values, once the namespace is defaulted as the mapping's
// scope made kubectl do (a recorded body has metadata.namespace exactly when the kind is namespaced); for
// kubectl apply, the last-applied annotation apply adds holds the same reading. A file kubectl refused is
// one kubectlObjects refuses with the same upstream error. Skipped only while the directory does not exist.
func TestKubectlRecorded(t *testing.T) {
	if _, err := os.Stat(kubectlReadDir); errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s does not exist yet", kubectlReadDir)
	} else if err != nil {
		t.Fatal(err)
	}
	records, err := filepath.Glob(filepath.Join(kubectlReadDir, "*.kubectl.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) == 0 {
		t.Fatalf("%s holds no *.kubectl.json", kubectlReadDir)
	}
	for _, rec := range records {
		name := strings.TrimSuffix(filepath.Base(rec), ".kubectl.json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			var want []kubectlRecord
			if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
				err = json.Unmarshal(raw, &want)
			} else {
				var one kubectlRecord
				err = json.Unmarshal(raw, &one)
				want = []kubectlRecord{one}
			}
			if err != nil {
				t.Fatalf("%s: %v", rec, err)
			}
			input, found := "", false
			for _, ext := range []string{".yaml", ".yml", ".json"} {
				if b, err := os.ReadFile(filepath.Join(kubectlReadDir, name+ext)); err == nil {
					input, found = kubectlText(b), true
					break
				}
			}
			if !found {
				t.Fatalf("no input %s.yaml, .yml or .json beside %s", name, rec)
			}
			// The documents as expandOperands and splitDocs give them to the check.
			var sent []kubectlObject
			var refusals []error
			for _, d := range splitDocs(&file{name: name, text: input}) {
				objs, err := kubectlObjects(d.src)
				for _, o := range objs {
					if o.err != nil {
						refusals = append(refusals, o.err)
						continue
					}
					sent = append(sent, o)
				}
				if err != nil {
					refusals = append(refusals, err)
					break
				}
			}
			var bodies []kubectlRecord
			for _, w := range want {
				if w.Body != nil {
					bodies = append(bodies, w)
					continue
				}
				// kubectl sent nothing: its error is upstream's, with the file's name added.
				if len(refusals) == 0 {
					t.Errorf("kubectl refused the file (%q), kubectlObjects did not", w.Output)
				}
				for _, e := range refusals {
					_, msg, _ := strings.Cut(e.Error(), ": ")
					if !strings.Contains(w.Output, msg) {
						t.Errorf("kubectl said %q, kubectlObjects %q", w.Output, e)
					}
				}
			}
			if len(sent) != len(bodies) {
				t.Fatalf("kubectlObjects sends %d objects, kubectl sent %d", len(sent), len(bodies))
			}
			for i, w := range bodies {
				if w.ContentType == nil || !strings.HasPrefix(*w.ContentType, "application/json") {
					t.Errorf("request %d: kubectl sent %v, not JSON", i, w.ContentType)
					continue
				}
				var recorded map[string]any
				if err := json.Unmarshal([]byte(*w.Body), &recorded); err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				md, _ := recorded["metadata"].(map[string]any)
				ns, namespaced := md["namespace"].(string)
				got, err := kubectlNamespace(sent[i].json, namespaced, ns)
				if err != nil {
					t.Fatal(err)
				}
				body := []byte(*w.Body)
				if strings.HasPrefix(w.Command, "kubectl apply") {
					// apply reads as create does, then annotates the object with what it read (its own
					// annotation left out, which leaves an empty annotations map there).
					annotations, _ := md["annotations"].(map[string]any)
					applied, _ := annotations[lastApplied].(string)
					var a map[string]any
					if err := json.Unmarshal([]byte(applied), &a); err != nil {
						t.Fatalf("request %d: the %s annotation: %v", i, lastApplied, err)
					}
					if amd, _ := a["metadata"].(map[string]any); amd != nil {
						if an, _ := amd["annotations"].(map[string]any); an != nil && len(an) == 0 {
							delete(amd, "annotations")
						}
					}
					aj, _ := json.Marshal(a)
					if !sameJSON(t, got, aj) {
						t.Errorf("request %d: the %s annotation:\nkubectlObjects %s\nkubectl        %s", i, lastApplied, got, applied)
					}
					delete(annotations, lastApplied)
					if len(annotations) == 0 {
						delete(md, "annotations")
					}
					body, _ = json.Marshal(recorded)
				}
				if !sameJSON(t, got, body) {
					t.Errorf("request %d:\nkubectlObjects %s\nkubectl        %s", i, got, body)
				}
			}
		})
	}
}

// FuzzKubectlJSON: reading any text never panics, and whatever it returns as JSON is JSON.
func FuzzKubectlJSON(f *testing.F) {
	for _, s := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  resourceVersion: \"1\"\ndata:\n  k: v\n  k: w\n",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"x","k":"z"}}`,
		"apiVersion: v1\nkind: List\nitems:\n- {metadata: {name: a}}\n- {apiVersion: v1, kind: List, items: [{kind: B}]}\n",
		"apiVersion: ex.com/v1\nkind: Widget\nitems: [{a: 1}, 2]\n",
		"apiVersion: ex.com/v1\nkind: WidgetList\nitems: null\n",
		"kind: X\nbase: &b {a: 1}\nm: {<<: *b, y: yes, big: 12345678901234567890}\n",
		"kind: X\nmetadata: {labels: {a: 1}}\n",
		"\xff\xfek\x00i\x00n\x00d\x00:\x00 \x00X\x00\n\x00",
		"\ufeff{\"kind\": \"X\"}\n---\nkind: Y\n",
		"{\"kind\":\"A\"} xyz",
		"kind: X\na: [\n",
		"# only\n",
		"null",
		"- 1\n- 2\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		objs, _ := kubectlObjects(src)
		for _, o := range objs {
			if o.json != nil && !json.Valid(o.json) {
				t.Fatalf("not JSON: %q from %q", o.json, src)
			}
			if o.json != nil {
				if _, err := kubectlNamespace(o.json, true, "default"); err != nil {
					t.Fatalf("kubectlNamespace of %s: %v", o.json, err)
				}
			}
		}
		if j, err := kubectlJSON(src); err == nil && j != nil && !json.Valid(j) {
			t.Fatalf("not JSON: %q from %q", j, src)
		}
	})
}
