package playground

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/yaml"

	"crdplay/engine"
	"crdplay/playground/internal/yamlpos"
)

// kubectlWay prints obj as kubectl's printer does, with sigs.k8s.io/yaml.Marshal (JSON, then JSONToYAML),
// managedFields hidden: the reference for kubectlYAML.
func kubectlWay(t testing.TB, obj map[string]interface{}) (string, error) {
	t.Helper()
	o := deepCopyMap(obj)
	if md, ok := o["metadata"].(map[string]interface{}); ok {
		delete(md, "managedFields")
	}
	j, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(j)
	return string(y), err
}

// kubectlMayPrint reports whether kubectl's printer may print obj as got. go-yaml v2 sorts map keys with a
// comparison that is not an order for some keys of digits and letters ("100101", "00000A0"...), so that their
// order depends on Go's random map order; kubectl prints such an object in several ways. got is one of them
// when the printer gave it, or when it is the same YAML (the same lines) as one the printer gave.
func kubectlMayPrint(t testing.TB, obj map[string]interface{}, got string) bool {
	var ways []string
	for range 50 {
		y, _ := kubectlWay(t, obj)
		ways = append(ways, y)
	}
	sort.Strings(ways)
	if ways[0] == ways[len(ways)-1] {
		return false // kubectl prints it one way, and got is not that
	}
	lines := func(y string) string {
		l := strings.Split(y, "\n")
		sort.Strings(l)
		return strings.Join(l, "\n")
	}
	var a, b interface{}
	return slices.Contains(ways, got) || (lines(got) == lines(ways[0]) &&
		yamlv2.Unmarshal([]byte(got), &a) == nil && yamlv2.Unmarshal([]byte(ways[0]), &b) == nil && reflect.DeepEqual(a, b))
}

// decodeJSON decodes an object as the playground decodes the engine's answers (numbers as json.Number).
func decodeJSON(data []byte) (map[string]interface{}, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]interface{}
	err := dec.Decode(&m)
	return m, err
}

// checkKubectlYAML fails unless kubectlYAML prints the JSON object as kubectl does, and leaves it as it was.
func checkKubectlYAML(t *testing.T, data []byte) {
	t.Helper()
	obj, err := decodeJSON(data)
	if err != nil || obj == nil {
		t.Skipf("not a JSON object: %v", err)
	}
	want, wantErr := kubectlWay(t, obj)
	before, _ := json.Marshal(obj)
	got, err := kubectlYAML(obj)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("kubectlYAML of %s: error %v; kubectl's printer: error %v", data, err, wantErr)
	}
	if got != want && !kubectlMayPrint(t, obj, got) {
		t.Errorf("kubectlYAML of %s:\n%s\nkubectl prints:\n%s", data, got, want)
	}
	if after, _ := json.Marshal(obj); !bytes.Equal(before, after) {
		t.Errorf("kubectlYAML changed its argument:\n%s\nto\n%s", before, after)
	}
}

// kubectlYAMLCases are JSON objects whose values go-yaml reads back from JSON with a type of its own choosing
// (numbers: int, int64, uint64, float64, or a string when no number fits), or that JSON changes (strings
// that are not UTF-8), or that look like other YAML types.
var kubectlYAMLCases = map[string]string{
	"ints":          `{"a":0,"b":-0,"c":1,"d":-17,"e":2147483648,"f":9223372036854775807,"g":-9223372036854775808}`,
	"big ints":      `{"a":9223372036854775808,"b":18446744073709551615,"c":18446744073709551616,"d":-9223372036854775809,"e":123456789012345678901234567890}`,
	"floats":        `{"a":1.0,"b":1.5,"c":-0.0,"d":1e3,"e":1E+3,"f":1e-7,"g":6.02214076e23,"h":0.1,"i":1e400,"j":-1e400,"k":4.9e-324,"l":100.00}`,
	"in lists":      `{"a":[1,[2.5,{"b":3}],"x",null,true],"b":[],"c":{}}`,
	"strings":       `{"a":"1","b":"1.5","c":"true","d":"null","e":"~","f":"yes","g":"2024-01-02T03:04:05Z","h":"0x1F","i":"1_000","j":"","k":" x ","l":"a: b","m":"- x","n":"#c"}`,
	"multi-line":    `{"a":"line 1\nline 2\n","b":"tab\there","c":"\u2028\u2029","d":"\u0000\u0007\u001f","e":"<>&","f":"é ü 日本 🙂"}`,
	"not utf-8":     "{\"a\":\"\xff\xfe\",\"b\":[\"ok\",\"\xc3\"],\"c\":{\"d\":\"x\xe2\x82\"}}",
	"keys":          `{"<<":{"a":1},"1":"one","true":"t","null":"n","":"empty","a b":1,"a10":1,"a9":1,"A":1,"é":1}`,
	"metadata":      `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x","generation":1,"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}],"labels":{"a":"1"}},"spec":{"replicas":3,"ratio":0.5}}`,
	"no metadata":   `{"metadata":"not a map","spec":{"n":7}}`,
	"null":          `{"a":null,"b":{"c":null}}`,
	"key not utf-8": "{\"k\xff\":1,\"a\":{\"\xc3\":[1]}}",
	// Characters JSON does not escape and go-yaml's reader refuses: kubectl's printer fails on them.
	"delete":       `{"a":"x\u007fy"}`,
	"c1 control":   `{"a":{"b":["\u0086"]}}`,
	"next line":    `{"a":"\u0085"}`,
	"noncharacter": `{"a":"\uffff"}`,
	"key control":  `{"\u0080":1}`,
	"long key":     `{"` + strings.Repeat("k", 1100) + `":1}`,
	"long keys":    `{"` + strings.Repeat("k", 1000) + `":1,"` + strings.Repeat("\u0001", 180) + `":1,"` + strings.Repeat("k", 129) + `":1}`,
	"deep":         `{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	"bom":          `{"a":"x\ufeffy","\ufeff":1}`,
	"long value":   `{"a":"` + strings.Repeat("v", 5000) + `"}`,
}

// TestKubectlYAML compares kubectlYAML with kubectl's printer on the cases above, on every object of the
// examples and the corpus, and on the engine's answers for them (with managedFields).
func TestKubectlYAML(t *testing.T) {
	for name, data := range kubectlYAMLCases {
		t.Run(name, func(t *testing.T) { checkKubectlYAML(t, []byte(data)) })
	}
	files, err := filepath.Glob("../testdata/corpus/*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../testdata/examples/*/*.yaml")
	files = append(files, more...)
	if len(files) < 50 {
		t.Fatalf("found %d YAML files under ../testdata: the test needs the corpus and the examples", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, _ := yamlpos.Split(string(data))
		for _, d := range docs {
			j, err := yaml.YAMLToJSON([]byte(d.Source))
			if err != nil || !bytes.HasPrefix(bytes.TrimSpace(j), []byte("{")) {
				continue
			}
			t.Run(f, func(t *testing.T) { checkKubectlYAML(t, j) })
		}
	}
	// The engine's answers: what kubectlYAML prints in the playground.
	s := NewSession(Options{})
	crd, err := os.ReadFile("../testdata/examples/crontab/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	object, err := os.ReadFile("../testdata/examples/crontab/01-create.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crdText := string(crd)
	res, err := s.Evaluate(t.Context(), Input{CRDs: &crdText, Objects: string(object)})
	if err != nil || len(res.Objects) != 1 || res.Objects[0].Stored == nil {
		t.Fatalf("the CronTab example: %v %+v", err, res)
	}
	t.Run("stored", func(t *testing.T) { checkKubectlYAML(t, res.Objects[0].Stored) })
}

// FuzzKubectlYAML: kubectlYAML prints any JSON object as kubectl's printer does.
func FuzzKubectlYAML(f *testing.F) {
	for _, data := range kubectlYAMLCases {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkKubectlYAML(t, data) })
}

// TestObjectSentAsJSON checks that an object document goes to the API as JSON only when the API would read its
// YAML the same way, and that the API's answer (status, body, warnings) to what was sent is its answer to the
// YAML itself, with each fieldValidation.
func TestObjectSentAsJSON(t *testing.T) {
	crdData, err := os.ReadFile("../testdata/examples/crontab/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := string(crdData)
	const object = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: x\nspec:\n  cronSpec: \"* * * * */5\"\n  image: my-image\n"
	at := func(old, new string) string {
		t.Helper()
		if !strings.Contains(object, old) {
			t.Fatalf("no %q in the object", old)
		}
		return strings.Replace(object, old, new, 1)
	}
	rv := regexp.MustCompile(`"resourceVersion":"\d+"`)
	norm := func(s string) string { return rv.ReplaceAllString(volatile.ReplaceAllString(s, "<volatile>"), "<rv>") }
	for _, c := range []struct {
		name, text, contentType string
	}{
		{"plain", object, "application/json"},
		{"unknown fields", at("  image: my-image\n", "  image: my-image\n  unknownField: 1\n  nested: {a: [1, 2]}\n"), "application/json"},
		{"YAML 1.1 values", at("  image: my-image\n", "  image: yes\n  replicas: 0x1F\n  other: [on, ~, 1e3, 0777, 2024-01-02]\n"), "application/json"},
		{"wrong type", at("  image: my-image\n", "  image: 5\n"), "application/json"},
		{"quoted keys", at("  image: my-image\n", "  \"image\": my-image\n  'cron': x\n"), "application/json"},
		{"duplicate key", at("  image: my-image\n", "  image: my-image\n  image: other\n"), "application/yaml"},
		{"duplicate quoted key", at("  image: my-image\n", "  image: my-image\n  \"image\": other\n"), "application/yaml"},
		{"boolean key", at("  image: my-image\n", "  image: my-image\n  on: x\n"), "application/yaml"},
		{"numeric key", at("  image: my-image\n", "  image: my-image\n  1: x\n"), "application/yaml"},
		{"anchor", at("  image: my-image\n", "  image: &i my-image\n  other: *i\n"), "application/yaml"},
		{"merge key", at("spec:\n", "base: &b {image: a}\nspec:\n  <<: *b\n"), "application/yaml"},
	} {
		for _, fv := range []string{"", "Strict", "Warn", "Ignore"} {
			t.Run(c.name+"/"+fv, func(t *testing.T) {
				res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: c.text, FieldValidation: fv, Trace: true})
				var post *Exchange
				for i, x := range res.Exchanges {
					if x.Method == http.MethodPost && strings.Contains(x.Path, "/crontabs") {
						post = &res.Exchanges[i]
					}
				}
				if post == nil {
					t.Fatalf("no POST of the object in %+v", res.Exchanges)
				}
				if post.ContentType != c.contentType {
					t.Errorf("sent as %s, want %s", post.ContentType, c.contentType)
				}
				// What the API answers to the YAML itself.
				h, err := engine.NewHandler(engine.Options{})
				if err != nil {
					t.Fatal(err)
				}
				serve := func(path, body string) *httptest.ResponseRecorder {
					req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
					req.Header.Set("Content-Type", "application/yaml")
					req.Header.Set("User-Agent", "crdplay")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					return rec
				}
				if rec := serve(crdsPath, crd); rec.Code != http.StatusCreated {
					t.Fatalf("the CRD: %d %s", rec.Code, rec.Body)
				}
				rec := serve(post.Path, c.text)
				if post.Status != rec.Code || norm(post.Body) != norm(rec.Body.String()) || strings.Join(post.Warnings, "\n") != strings.Join(unquotedWarnings(rec.Header()), "\n") {
					t.Errorf("answer to what was sent: %d %q %s\nanswer to the YAML: %d %q %s", post.Status, post.Warnings, post.Body, rec.Code, unquotedWarnings(rec.Header()), rec.Body)
				}
			})
		}
	}
}

// TestSkipTables checks that Input.SkipTables leaves out the tables and the requests that make them, and
// nothing else: the rest of the result is the same as with them.
func TestSkipTables(t *testing.T) {
	crdData, err := os.ReadFile("../testdata/examples/crontab/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objData, err := os.ReadFile("../testdata/examples/crontab/01-create.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := string(crdData)
	tableRequests := func(res *Result) (n int) {
		for _, x := range res.Exchanges {
			if strings.Contains(x.Accept, "as=Table") {
				n++
			}
		}
		return n
	}
	timings := regexp.MustCompile(`"timings":\{[^}]*\}`)
	norm := func(res *Result) string {
		res.Exchanges = nil
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return timings.ReplaceAllString(volatile.ReplaceAllString(string(b), "<volatile>"), "")
	}
	for _, c := range []struct {
		name, objects string
		tables        int
	}{
		{"object", string(objData), 1},
		{"no object", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Two sessions, each with the CRD installed and then the objects: the same resourceVersions.
			with := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: c.objects, Trace: true})
			without := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: c.objects, Trace: true, SkipTables: true})
			if n := tableRequests(with); n != c.tables || len(with.Tables) != c.tables || with.Tables == nil {
				t.Errorf("with tables: %d Table requests, tables %+v; want %d", n, with.Tables, c.tables)
			}
			if n := tableRequests(without); n != 0 || without.Tables != nil {
				t.Errorf("SkipTables: %d Table requests, tables %+v; want none", n, without.Tables)
			}
			b, _ := json.Marshal(without)
			if strings.Contains(string(b), `"tables"`) {
				t.Errorf("SkipTables: the JSON has tables: %s", b)
			}
			with.Tables = nil
			if a, b := norm(with), norm(without); a != b {
				t.Errorf("SkipTables changed more than the tables:\n%s\n%s", a, b)
			}
		})
	}
}
