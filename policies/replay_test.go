package policies_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"

	"sigs.k8s.io/yaml"

	"crdplay/engine"
	"crdplay/internal/oraclecase"
	"crdplay/policies"
)

// TestAdmissionCases replays testdata/admission, recorded from kube-apiserver v1.37.2, against the engine with
// the policies API as its admission chain: every request for a custom resource, a CRD or admission
// configuration must get the real server's answer (status, warnings, normalised body). The core API (namespaces,
// ConfigMaps, Secrets) is not the engine's: those writes are not compared, and the namespaces and ConfigMaps the
// real server accepted are given to the API as the objects policies read (SetCoreObjects).
// Run one case with go test ./policies -run TestAdmissionCases/vap-deny.
func TestAdmissionCases(t *testing.T) {
	root := filepath.Join("..", "testdata", "admission")
	dirs, err := filepath.Glob(filepath.Join(root, "*", "expected"))
	if err != nil {
		t.Fatal(err)
	}
	compared, skipped := 0, 0
	for _, d := range dirs {
		dir := filepath.Dir(d)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if why, ok := notReplayed[filepath.Base(dir)]; ok {
				t.Skip(why)
			}
			c, s := replayCase(t, dir, "", nil)
			compared += c
			skipped += s
		})
	}
	t.Logf("%d case(s), %d not replayed: %d requests compared, %d core API requests (not the engine's) not compared", len(dirs), len(notReplayed), compared, skipped)
}

// notReplayed are the cases this replay cannot run, and why. The emulated-1.34 group is
// TestAdmissionCasesEmulated's.
var notReplayed = map[string]string{
	"kube-vs-standalone": "it records where kube-apiserver answers differently from the standalone apiextensions-apiserver, whose answers the engine keeps (testdata/admission/README.md)",
}

type recordedStep struct {
	Step    string `json:"step"`
	Request struct {
		Method      string `json:"method"`
		Path        string `json:"path"`
		ContentType string `json:"contentType"`
		Accept      string `json:"accept"`
		Body        any    `json:"body"`
	} `json:"request"`
	Status   int      `json:"status"`
	Warnings []string `json:"warnings"`
	Body     any      `json:"body"`
	BodyText string   `json:"bodyText"`
}

// oracleUser is who the recorder's requests came from (../shared/oracle-kube authenticates every plain-HTTP
// request as it); policies see it in request.userInfo.
var oracleUser = &user.DefaultInfo{Name: "oracle-admin", Groups: []string{"system:masters", user.AllAuthenticated}}

// envEmulated names the version a test process emulates for TestAdmissionCasesEmulated; upstream keeps the
// emulated version process-wide.
const envEmulated = "CRDPLAY_ADMISSION_EMULATED_VERSION"

// emulatedGaps are the steps of testdata/admission/emulated-1.34 where the engine is known to answer otherwise
// than kube-apiserver, with what differs; the replay fails if one of them matches (the gap is closed).
var emulatedGaps = map[string]string{
	"02-request-discovery-admissionregistration-v1": "kube-apiserver lists the group's webhook configurations, which crdplay does not serve, " +
		"and watch, deletecollection and storage version hashes, which the policies API does not offer",
}

// TestAdmissionCasesEmulated replays testdata/admission/emulated-1.34, recorded from kube-apiserver v1.37.2
// run with --emulated-version=1.34 (MutatingAdmissionPolicy not served, CEL libraries of 1.34), against the
// engine emulating 1.34, in a process of its own.
func TestAdmissionCasesEmulated(t *testing.T) {
	const version = "1.34"
	if os.Getenv(envEmulated) == "" {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestAdmissionCasesEmulated$", "-test.count=1")
		cmd.Env = append(os.Environ(), envEmulated+"="+version)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("replaying emulated %s in its own process: %v\n%s", version, err, tail(out, 4000))
		}
		return
	}
	dirs, err := filepath.Glob(filepath.Join("..", "testdata", "admission", "emulated-"+version, "*", "expected"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases for %s (%v)", version, err)
	}
	for _, d := range dirs {
		dir := filepath.Dir(d)
		t.Run(filepath.Base(dir), func(t *testing.T) { replayCase(t, dir, os.Getenv(envEmulated), emulatedGaps) })
	}
}

// tail is the end of a process's output, where its failures are.
func tail(out []byte, n int) []byte {
	if len(out) > n {
		return out[len(out)-n:]
	}
	return out
}

// replayCase replays one case against a fresh engine emulating version ("" for the newest); the steps gaps
// names must differ from the recording, the others match it.
func replayCase(t *testing.T, dir, version string, gaps map[string]string) (compared, skipped int) {
	files, err := filepath.Glob(filepath.Join(dir, "expected", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	store := engine.NewMemoryStorage()
	api, err := policies.NewAPI(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()
	h, err := engine.NewHandler(engine.Options{Storage: store, Admission: api, EmulatedVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	api.Attach(h)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), oracleUser)))
	})
	core := &coreObjects{objects: map[string][]byte{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var st recordedStep
		if err := json.Unmarshal(data, &st); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var body []byte
		if st.Request.Body != nil {
			if s, ok := st.Request.Body.(string); ok {
				body = []byte(s)
			} else {
				// Without HTML escaping, so that the "<resourceVersion>" placeholder stays as recorded.
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(st.Request.Body); err != nil {
					t.Fatal(err)
				}
				body = buf.Bytes()
			}
		}
		if strings.HasPrefix(st.Request.Path, "/api/") || st.Request.Path == "/apis" {
			// The core API and kube-apiserver's discovery are not the engine's (testdata/admission/README.md).
			if core.take(st, body) {
				if err := core.give(api); err != nil {
					t.Fatalf("%s: %v", st.Step, err)
				}
			}
			skipped++
			continue
		}
		// A step recorded in brief sent a release file, summarised in the recording: send the file, and
		// compare the summary of the answer.
		brief := recordedInBrief(t, dir, st.Step)
		if m, ok := st.Request.Body.(map[string]any); ok && m["x-oracle-file"] != nil {
			if body, err = releaseFile(dir, m["x-oracle-file"].(string)); err != nil {
				t.Fatalf("%s: %v", st.Step, err)
			}
			if st.Request.Method == http.MethodPut {
				body = withLiveResourceVersion(handler, st.Request.Path, body)
			}
		}
		// As the recorder does, an update is sent with the resourceVersion its object has now.
		body = withCurrentResourceVersion(handler, st.Request.Path, body)
		req := httptest.NewRequest(st.Request.Method, st.Request.Path, bytes.NewReader(body))
		if st.Request.ContentType != "" {
			req.Header.Set("Content-Type", st.Request.ContentType)
		}
		req.Header.Set("User-Agent", "oracle") // the recorder's, which names the field manager
		if st.Request.Accept != "" {
			req.Header.Set("Accept", st.Request.Accept)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		got := recordedStep{Step: st.Step, Status: rec.Code, Warnings: rec.Result().Header.Values("Warning")}
		if v, err := decode(rec.Body.Bytes()); err == nil {
			got.Body = v
			if m, ok := v.(map[string]any); ok && brief && m["kind"] != "Status" {
				got.Body = summary(m)
			}
		} else {
			got.BodyText = rec.Body.String()
		}
		compared++
		want := recordedStep{Step: st.Step, Status: st.Status, Warnings: st.Warnings, Body: renameServerManager(st.Body), BodyText: st.BodyText}
		a, b := normalized(t, want), normalized(t, got)
		switch why, gap := gaps[st.Step]; {
		case gap && a == b:
			t.Errorf("%s: matches the real server's answer, but is listed as a known gap (%s): drop the entry", st.Step, why)
		case !gap && a != b:
			t.Errorf("%s: differs from the real server's answer:\n%s", st.Step, oraclecase.UnifiedDiff("oracle", "engine", []byte(a), []byte(b)))
		}
	}
	return compared, skipped
}

func decode(data []byte) (any, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("empty")
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	err := d.Decode(&v)
	return v, err
}

func normalized(t *testing.T, s recordedStep) string {
	t.Helper()
	// The body alone, as the recorder normalises it (a Status's causes are sorted only at its top level).
	body := []byte("null")
	if s.Body != nil {
		data, err := json.Marshal(s.Body)
		if err != nil {
			t.Fatal(err)
		}
		if body, err = oraclecase.NormalizeJSON(data); err != nil {
			t.Fatal(err)
		}
	}
	data, err := json.Marshal(map[string]any{"status": s.Status, "warnings": s.Warnings, "body": json.RawMessage(body), "bodyText": s.BodyText})
	if err != nil {
		t.Fatal(err)
	}
	out, err := oraclecase.NormalizeJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// coreObjects are the namespaces and ConfigMaps of a case, as the real server accepted them.
type coreObjects struct {
	objects map[string][]byte // request path of the object -> its JSON
}

// take keeps a write of a namespace or a ConfigMap that the real server accepted, and reports whether st was
// one.
func (c *coreObjects) take(st recordedStep, body []byte) bool {
	p := st.Request.Path
	if !(p == "/api/v1/namespaces" || strings.Contains(p, "/configmaps")) || st.Status >= 300 {
		return false
	}
	switch st.Request.Method {
	case http.MethodPost:
		var m struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		_ = json.Unmarshal(body, &m)
		c.objects[p+"/"+m.Metadata.Name] = body
	case http.MethodPut:
		c.objects[p] = body
	case http.MethodDelete:
		delete(c.objects, p)
	default:
		return false
	}
	return true
}

// give sets the namespaces and ConfigMaps on api.
func (c *coreObjects) give(api *policies.API) error {
	var namespaces []*corev1.Namespace
	var configMaps []*corev1.ConfigMap
	for k, data := range c.objects {
		if strings.Contains(k, "/configmaps/") {
			cm := &corev1.ConfigMap{}
			if err := json.Unmarshal(data, cm); err != nil {
				return err
			}
			cm.Namespace = strings.Split(k, "/")[4]
			configMaps = append(configMaps, cm)
			continue
		}
		ns := &corev1.Namespace{}
		if err := json.Unmarshal(data, ns); err != nil {
			return err
		}
		namespaces = append(namespaces, ns)
	}
	api.SetCoreObjects(namespaces, configMaps)
	return nil
}

// recordedInBrief reports whether a step's file asks the recorder for summaries (x-oracle.brief).
func recordedInBrief(t *testing.T, dir, step string) bool {
	file := step + ".yaml"
	if step == "00-crd" {
		file = "crd.yaml" // the case's CRD, created first
	}
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		XOracle struct {
			Brief bool `json:"brief"`
		} `json:"x-oracle"`
	}
	if err := yaml.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return s.XOracle.Brief
}

// releaseFile is the JSON of a case's release file (a step's x-oracle.file).
func releaseFile(dir, file string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return nil, err
	}
	return yaml.YAMLToJSON(data)
}

// withLiveResourceVersion sets the resourceVersion of the object at path in body, as the recorder does for an
// update whose object has none.
func withLiveResourceVersion(h http.Handler, path string, body []byte) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var live, obj unstructured.Unstructured
	if rec.Code != http.StatusOK || live.UnmarshalJSON(rec.Body.Bytes()) != nil || obj.UnmarshalJSON(body) != nil || obj.GetResourceVersion() != "" {
		return body
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	out, err := obj.MarshalJSON()
	if err != nil {
		return body
	}
	return out
}

// summary is the recorder's summary of an answer recorded in brief: kind, name, annotations, generation and
// resourceVersion.
func summary(obj map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for _, k := range []string{"name", "namespace", "annotations", "generation", "resourceVersion"} {
			if v, ok := md[k]; ok {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	return out
}

// withCurrentResourceVersion replaces a "<resourceVersion>" placeholder in body by the resourceVersion of the
// object at path.
func withCurrentResourceVersion(h http.Handler, path string, body []byte) []byte {
	if !bytes.Contains(body, []byte(`"<resourceVersion>"`)) {
		return body
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var live unstructured.Unstructured
	if rec.Code != http.StatusOK || live.UnmarshalJSON(rec.Body.Bytes()) != nil {
		return body
	}
	return bytes.Replace(body, []byte(`"<resourceVersion>"`), []byte(`"`+live.GetResourceVersion()+`"`), 1)
}

// renameServerManager renames the field manager "oracle-kube" to "kube-apiserver" in a recorded body: the
// server's own controllers (the CRD naming and establishing controllers) write status with a loopback
// client whose user agent, and so field manager, is the name of the server's binary, which the recorder runs
// as oracle-kube and a cluster as kube-apiserver.
func renameServerManager(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if k == "manager" && c == "oracle-kube" {
				t[k] = "kube-apiserver"
				continue
			}
			t[k] = renameServerManager(c)
		}
	case []any:
		for i := range t {
			t[i] = renameServerManager(t[i])
		}
	}
	return v
}
