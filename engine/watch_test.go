package engine_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"crdplay/engine"
)

// TestWatch streams a collection: the existing object as ADDED, then a modification and a deletion made while
// the watch is open, each as one JSON WatchEvent per line.
func TestWatch(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("the watch stream is read over a loopback socket, which js/wasm under node does not have")
	}
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	const objects = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	obj := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},"spec":{"cronSpec":"* * * * *"}}`
	if rec := do(h, "POST", objects, "application/json", []byte(obj)); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + objects + "?watch=1&timeoutSeconds=5")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	next := func() (string, map[string]interface{}) {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("stream ended: %v", lines.Err())
		}
		var ev struct {
			Type   string                 `json:"type"`
			Object map[string]interface{} `json:"object"`
		}
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", lines.Text(), err)
		}
		return ev.Type, ev.Object
	}
	if typ, o := next(); typ != "ADDED" || o["metadata"].(map[string]interface{})["name"] != "a" {
		t.Fatalf("first event %s %v", typ, o)
	}
	patch := `{"spec":{"replicas":2}}`
	req, _ := http.NewRequest("PATCH", srv.URL+objects+"/a", strings.NewReader(patch))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 200 {
		t.Fatalf("patch: %v %v", r, err)
	}
	if typ, o := next(); typ != "MODIFIED" || o["spec"].(map[string]interface{})["replicas"] != float64(2) {
		t.Fatalf("second event %s %v", typ, o)
	}
	req, _ = http.NewRequest("DELETE", srv.URL+objects+"/a", nil)
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 200 {
		t.Fatalf("delete: %v %v", r, err)
	}
	if typ, _ := next(); typ != "DELETED" {
		t.Fatalf("third event %s", typ)
	}
}

// TestWatchCRDs follows a CRD by name, as `kubectl wait --for=condition=Established` does: it is added, then
// modified once the controllers have accepted its names and established it.
func TestWatchCRDs(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("the watch stream is read over a loopback socket, which js/wasm under node does not have")
	}
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1&timeoutSeconds=5&fieldSelector=metadata.name%3Dcrontabs.stable.example.com")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	lines := bufio.NewScanner(resp.Body)
	var types []string
	for len(types) < 2 && lines.Scan() {
		var ev crdEvent
		if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type)
		if ev.Type == "MODIFIED" {
			established := false
			for _, c := range ev.Object.Status.Conditions {
				established = established || (c.Type == "Established" && c.Status == "True")
			}
			if !established {
				t.Errorf("MODIFIED event without Established=True: %s", lines.Text())
			}
		}
	}
	if strings.Join(types, ",") != "ADDED,MODIFIED" {
		t.Errorf("events %v", types)
	}
}

// crdEvent is a watch event of a CRD, with what the tests read of it.
type crdEvent struct {
	Type   string `json:"type"`
	Object struct {
		Status struct {
			Conditions []struct{ Type, Status string } `json:"conditions"`
		} `json:"status"`
	} `json:"object"`
}

// TestWatchCRDsOpenedBeforeCreate is a watch opened before a CRD's create, with no request after it: the
// create answers before its controllers run (as kube-apiserver's does), and they must still run in the
// background, so that the watcher sees the CRD Established. Served in-process, so that it runs under js/wasm
// too, where the bridge serves requests concurrently in the same way.
func TestWatchCRDsOpenedBeforeCreate(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	watched := make(chan *httptest.ResponseRecorder)
	go func() {
		watched <- do(h, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1&timeoutSeconds=3&fieldSelector=metadata.name%3Dcrontabs.stable.example.com", "", nil)
	}()
	// Let the watch start first; were it to start after the create, it would only be a weaker test.
	time.Sleep(200 * time.Millisecond)
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	rec := <-watched
	established := false
	for _, line := range strings.Split(strings.TrimSpace(rec.Body.String()), "\n") {
		var ev crdEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		for _, c := range ev.Object.Status.Conditions {
			established = established || (ev.Type == "MODIFIED" && c.Type == "Established" && c.Status == "True")
		}
	}
	if !established {
		t.Errorf("the watch ended without a MODIFIED event with Established=True:\n%s", rec.Body)
	}
}
