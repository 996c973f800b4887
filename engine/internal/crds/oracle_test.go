package crds

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/registry/rest"
)

// This file replays every CRD request recorded in the oracle cases through this package, with just
// enough of a REST layer around it (field managers, an in-memory list of CRDs, the controllers run
// after each write) to compare whole response bodies, status codes and warnings with the recordings.

// oracleDir prefers the repository's copy of the cases and falls back to the shared recordings.
func oracleDir(t testing.TB) string {
	for _, dir := range []string{"../../../testdata/oracle", "/work/shared/oracle/cases"} {
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			return dir
		}
	}
	t.Skip("no oracle cases found")
	return ""
}

type recording struct {
	Step    string `json:"step"`
	Request struct {
		Method      string          `json:"method"`
		Path        string          `json:"path"`
		ContentType string          `json:"contentType"`
		Body        json.RawMessage `json:"body"`
	} `json:"request"`
	Status   int             `json:"status"`
	Warnings []string        `json:"warnings"`
	Body     json.RawMessage `json:"body"`
}

const crdsPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// crdSteps returns the recordings of a case that talk to the CRD endpoint, in step order.
func crdSteps(t *testing.T, caseDir string) []recording {
	files, err := filepath.Glob(filepath.Join(caseDir, "expected", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []recording
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r recording
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if strings.HasPrefix(r.Request.Path, crdsPath) {
			out = append(out, r)
		}
	}
	return out
}

// apiServer is the test's stand-in for the REST layer: it stores CRDs in creation order.
type apiServer struct {
	t        *testing.T
	crds     []*apiextensionsv1.CustomResourceDefinition
	main     *managedfields.FieldManager
	status   *managedfields.FieldManager
	rv       int
	clock    time.Time
	warnings []string
}

type response struct {
	status   int
	body     any
	warnings []string
}

func newAPIServer(t *testing.T) *apiServer {
	mainFM, err := NewFieldManager("")
	if err != nil {
		t.Fatal(err)
	}
	statusFM, err := NewFieldManager("status")
	if err != nil {
		t.Fatal(err)
	}
	return &apiServer{t: t, main: mainFM, status: statusFM, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (s *apiServer) now() metav1.Time {
	s.clock = s.clock.Add(time.Second)
	return metav1.NewTime(s.clock)
}

func (s *apiServer) find(name string) int {
	for i, c := range s.crds {
		if c.Name == name {
			return i
		}
	}
	return -1
}

func (s *apiServer) store(crd *apiextensionsv1.CustomResourceDefinition) {
	s.rv++
	crd.ResourceVersion = fmt.Sprint(s.rv)
	if i := s.find(crd.Name); i >= 0 {
		s.crds[i] = crd
	} else {
		s.crds = append(s.crds, crd)
	}
}

func errorResponse(err error, warnings []string) response {
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		panic(fmt.Sprintf("not a StatusError: %T %v", err, err))
	}
	st := se.ErrStatus
	st.Kind, st.APIVersion = "Status", "v1"
	return response{status: int(st.Code), body: st, warnings: warnings}
}

func (s *apiServer) create(body []byte, contentType string) response {
	crd, warnings, err := Decode(body, contentType, "")
	if err != nil {
		return errorResponse(err, warnings)
	}
	rest.WipeObjectMetaSystemFields(crd)
	live := &apiextensionsv1.CustomResourceDefinition{}
	obj := s.main.UpdateNoErrors(live, crd, "oracle")
	crd = obj.(*apiextensionsv1.CustomResourceDefinition)
	rest.FillObjectMetaSystemFields(crd)
	if s.find(crd.Name) >= 0 {
		s.t.Fatalf("%s already exists in the test server", crd.Name)
	}
	more, err := BeforeCreate(context.Background(), crd)
	warnings = append(warnings, more...)
	if err != nil {
		return errorResponse(err, warnings)
	}
	s.store(crd)
	out := crd.DeepCopy()
	s.runControllers()
	return response{status: 201, body: out, warnings: warnings}
}

func (s *apiServer) update(name string, body []byte, contentType string) response {
	i := s.find(name)
	if i < 0 {
		s.t.Fatalf("PUT of unknown CRD %s", name)
	}
	old := s.crds[i]
	crd, warnings, err := Decode(body, contentType, "")
	if err != nil {
		return errorResponse(err, warnings)
	}
	obj := s.main.UpdateNoErrors(old, crd, "oracle")
	crd = obj.(*apiextensionsv1.CustomResourceDefinition)
	more, err := BeforeUpdate(context.Background(), crd, old)
	warnings = append(warnings, more...)
	if err != nil {
		return errorResponse(err, warnings)
	}
	s.store(crd)
	out := crd.DeepCopy()
	s.runControllers()
	return response{status: 200, body: out, warnings: warnings}
}

func (s *apiServer) get(name string) response {
	i := s.find(name)
	if i < 0 {
		return errorResponse(apierrors.NewNotFound(schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}, name), nil)
	}
	return response{status: 200, body: s.crds[i].DeepCopy()}
}

func (s *apiServer) delete(name string) response {
	i := s.find(name)
	if i < 0 {
		return s.get(name)
	}
	crd := s.crds[i].DeepCopy()
	if !PrepareForDelete(crd, s.now()) {
		s.t.Fatalf("second DELETE of %s is the REST layer's generic path", name)
	}
	s.store(crd)
	out := crd.DeepCopy()
	s.runControllers()
	return response{status: 200, body: out}
}

// writeStatus is a controller's UpdateStatus call.
func (s *apiServer) writeStatus(updated *apiextensionsv1.CustomResourceDefinition) {
	i := s.find(updated.Name)
	old := s.crds[i]
	obj := s.status.UpdateNoErrors(old, updated.DeepCopy(), "kube-apiserver")
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if err := BeforeStatusUpdate(context.Background(), crd, old); err != nil {
		s.t.Fatalf("controller status write for %s: %v", crd.Name, err)
	}
	if crd.DeletionTimestamp != nil && len(crd.Finalizers) == 0 {
		s.crds = append(s.crds[:i], s.crds[i+1:]...)
		return
	}
	s.store(crd)
}

// runControllers settles the naming/establishing controllers and finishes deletions.
func (s *apiServer) runControllers() {
	for _, c := range Reconcile(s.crds, s.now()) {
		s.writeStatus(c)
	}
	for _, c := range append([]*apiextensionsv1.CustomResourceDefinition(nil), s.crds...) {
		crd := c.DeepCopy()
		if pending, _ := BeginFinalize(crd, s.now()); !pending {
			continue
		}
		s.writeStatus(crd)
		crd = s.crds[s.find(crd.Name)].DeepCopy()
		FinishFinalize(crd, s.now(), nil)
		s.writeStatus(crd)
		for _, c := range Reconcile(s.crds, s.now()) {
			s.writeStatus(c)
		}
	}
}

func (s *apiServer) serve(r recording) response {
	name := strings.TrimPrefix(strings.TrimPrefix(r.Request.Path, crdsPath), "/")
	switch r.Request.Method {
	case "POST":
		return s.create(r.Request.Body, r.Request.ContentType)
	case "PUT":
		return s.update(name, r.Request.Body, r.Request.ContentType)
	case "GET":
		return s.get(name)
	case "DELETE":
		return s.delete(name)
	}
	s.t.Fatalf("unexpected request %s %s", r.Request.Method, r.Request.Path)
	return response{}
}

// TestOracleCRDRequests replays every CRD request of every case and compares status, body and warnings.
func TestOracleCRDRequests(t *testing.T) {
	dir := oracleDir(t)
	cases, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		steps := crdSteps(t, filepath.Join(dir, c.Name()))
		if len(steps) == 0 {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			s := newAPIServer(t)
			for _, r := range steps {
				t.Run(r.Step, func(t *testing.T) {
					s.t = t
					got := s.serve(r)
					if got.status != r.Status {
						t.Errorf("status %d, recorded %d", got.status, r.Status)
					}
					if want := parseWarnings(t, r.Warnings); !equalStrings(dedup(got.warnings), want) {
						t.Errorf("warnings\n got: %q\nwant: %q", dedup(got.warnings), want)
					}
					compareJSON(t, got.body, r.Body)
				})
			}
		})
	}
}

// TestOracleYAMLBodies decodes the YAML files the recorded JSON bodies came from: same object, same
// warnings.
func TestOracleYAMLBodies(t *testing.T) {
	dir := oracleDir(t)
	cases, _ := os.ReadDir(dir)
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		for _, r := range crdSteps(t, filepath.Join(dir, c.Name())) {
			if r.Request.Method != "POST" && r.Request.Method != "PUT" {
				continue
			}
			file := r.Step + ".yaml"
			if r.Step == "00-crd" {
				file = "crd.yaml"
			}
			t.Run(c.Name()+"/"+r.Step, func(t *testing.T) {
				y, err := os.ReadFile(filepath.Join(dir, c.Name(), file))
				if err != nil {
					t.Skip(err)
				}
				fromYAML, yw, yerr := Decode(y, "application/yaml", "")
				fromJSON, jw, jerr := Decode(r.Request.Body, "application/json", "")
				if (yerr == nil) != (jerr == nil) {
					t.Fatalf("yaml error %v, json error %v", yerr, jerr)
				}
				if yerr != nil {
					return
				}
				fromJSON.ResourceVersion = ""
				// The runner turned the YAML into JSON itself and may spell numbers differently.
				Canonicalize(fromYAML)
				Canonicalize(fromJSON)
				a, _ := json.Marshal(fromYAML)
				b, _ := json.Marshal(fromJSON)
				if !bytes.Equal(a, b) {
					t.Errorf("yaml and json decode differ\nyaml: %s\njson: %s", a, b)
				}
				if !equalStrings(yw, jw) {
					t.Errorf("warnings differ: yaml %q json %q", yw, jw)
				}
			})
		}
	}
}

func parseWarnings(t *testing.T, headers []string) []string {
	parsed, errs := utilnet.ParseWarningHeaders(headers)
	if len(errs) > 0 {
		t.Fatalf("recorded warnings: %v", errs)
	}
	var out []string
	for _, w := range parsed {
		out = append(out, w.Text)
	}
	return out
}

func dedup(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// compareJSON normalises both sides as the oracle does and reports the first differing lines.
func compareJSON(t *testing.T, got any, want json.RawMessage) {
	t.Helper()
	raw, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	g, w := normalizedJSON(t, raw), normalizedJSON(t, want)
	if g == w {
		return
	}
	gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
	i := 0
	for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
		i++
	}
	from := max(0, i-8)
	t.Errorf("body differs at line %d\n--- got\n%s\n--- want\n%s", i+1,
		strings.Join(gl[from:min(len(gl), i+8)], "\n"), strings.Join(wl[from:min(len(wl), i+8)], "\n"))
}

func normalizedJSON(t *testing.T, data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	v = normalize(v, "")
	if m, ok := v.(map[string]any); ok && m["kind"] == "Status" {
		sortCauses(m)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var placeholders = map[string]string{
	"creationTimestamp":  "<timestamp>",
	"deletionTimestamp":  "<timestamp>",
	"lastTransitionTime": "<timestamp>",
	"resourceVersion":    "<resourceVersion>",
	"uid":                "<uid>",
}

// normalize replaces clock, revision and uid values with the oracle's placeholders and orders
// managedFields by (operation, manager, apiVersion, subresource).
func normalize(v any, parent string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if s, ok := child.(string); ok && s != "" {
				if ph, ok := placeholders[k]; ok {
					t[k] = ph
					continue
				}
				if parent == "managedFields" && k == "time" {
					t[k] = "<timestamp>"
					continue
				}
			}
			t[k] = normalize(child, k)
		}
		if mf, ok := t["managedFields"].([]any); ok {
			key := func(x any) string {
				m, _ := x.(map[string]any)
				return fmt.Sprint(m["operation"], "\x00", m["manager"], "\x00", m["apiVersion"], "\x00", m["subresource"])
			}
			sort.SliceStable(mf, func(i, j int) bool { return key(mf[i]) < key(mf[j]) })
		}
		return t
	case []any:
		for i := range t {
			t[i] = normalize(t[i], parent)
		}
	}
	return v
}

// sortCauses orders Status causes by (field, message) and rewrites the aggregated message to match,
// because upstream builds some cause lists in map order.
func sortCauses(m map[string]any) {
	details, _ := m["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	if len(causes) < 2 {
		return
	}
	text := func(x any) (string, string) {
		c, _ := x.(map[string]any)
		f, _ := c["field"].(string)
		msg, _ := c["message"].(string)
		return f, msg
	}
	join := func() string {
		parts := make([]string, len(causes))
		for i, c := range causes {
			f, msg := text(c)
			parts[i] = f + ": " + msg
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	before := join()
	sort.SliceStable(causes, func(i, j int) bool {
		fi, mi := text(causes[i])
		fj, mj := text(causes[j])
		if fi != fj {
			return fi < fj
		}
		return mi < mj
	})
	if msg, ok := m["message"].(string); ok && strings.HasSuffix(msg, before) {
		m["message"] = strings.TrimSuffix(msg, before) + join()
	}
}

// TestOracleValidate runs Decode, PrepareForCreate and Validate alone on every recorded CRD create and
// checks that apierrors.NewInvalid of the result is the recorded 422 body, and that recorded 201s
// validate cleanly.
func TestOracleValidate(t *testing.T) {
	dir := oracleDir(t)
	cases, _ := os.ReadDir(dir)
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		for _, r := range crdSteps(t, filepath.Join(dir, c.Name())) {
			if r.Request.Method != "POST" {
				continue
			}
			t.Run(c.Name()+"/"+r.Step, func(t *testing.T) {
				crd, _, err := Decode(r.Request.Body, r.Request.ContentType, "")
				if err != nil {
					t.Fatal(err)
				}
				PrepareForCreate(crd)
				errs := Validate(context.Background(), crd)
				switch r.Status {
				case 201:
					if len(errs) > 0 {
						t.Errorf("recorded 201, got %v", errs)
					}
				case 422:
					st := apierrors.NewInvalid(GroupKind, crd.Name, errs).ErrStatus
					st.Kind, st.APIVersion = "Status", "v1"
					compareJSON(t, st, r.Body)
				default:
					t.Fatalf("unexpected recorded status %d", r.Status)
				}
			})
		}
	}
}
