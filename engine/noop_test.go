package engine_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"crdplay/engine"
)

// TestNoOpWriteNoWatchEvent: a write that changes nothing is not written (etcd3's GuaranteedUpdate compares the
// encoded object with the stored bytes), so it keeps the resourceVersion and a watch sees no event for it: the
// next event is the next real change. testdata/oracle-api/no-op-writes records the real server counting the
// writes; this is the watch side of it, for a custom resource and for a CRD.
func TestNoOpWriteNoWatchEvent(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("the watch stream is read over a loopback socket, which js/wasm under node does not have")
	}
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	if rec := do(h, "POST", crds, "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	const objects = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	obj := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},"spec":{"cronSpec":"* * * * *"}}`
	if rec := do(h, "POST", objects, "application/json", []byte(obj)); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, tc := range []struct {
		name, collection, object, noop, change string
	}{
		{"custom resource", objects, "a", `{"spec":{"cronSpec":"* * * * *"}}`, `{"metadata":{"labels":{"changed":"yes"}}}`},
		{"CRD", crds, "crontabs.stable.example.com", `{"spec":{"scope":"Namespaced"}}`, `{"metadata":{"labels":{"changed":"yes"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patch := func(body string) map[string]any {
				t.Helper()
				rec := do(h, "PATCH", tc.collection+"/"+tc.object, "application/merge-patch+json", []byte(body))
				if rec.Code != http.StatusOK {
					t.Fatalf("patch %s: %d %s", body, rec.Code, rec.Body)
				}
				var o map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &o); err != nil {
					t.Fatal(err)
				}
				return o
			}
			rv := func(o map[string]any) string { return o["metadata"].(map[string]any)["resourceVersion"].(string) }

			get := do(h, "GET", tc.collection+"/"+tc.object, "", nil)
			var before map[string]any
			if err := json.Unmarshal(get.Body.Bytes(), &before); err != nil {
				t.Fatalf("get: %d %s", get.Code, get.Body)
			}
			resp, err := http.Get(srv.URL + tc.collection + "?watch=1&timeoutSeconds=5&fieldSelector=metadata.name%3D" + tc.object + "&resourceVersion=" + rv(before))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()

			if after := patch(tc.noop); rv(after) != rv(before) {
				t.Errorf("a patch that changes nothing moved the resourceVersion from %s to %s", rv(before), rv(after))
			}
			changed := patch(tc.change)

			lines := bufio.NewScanner(resp.Body)
			if !lines.Scan() {
				t.Fatalf("stream ended: %v", lines.Err())
			}
			var ev struct {
				Type   string         `json:"type"`
				Object map[string]any `json:"object"`
			}
			if err := json.Unmarshal(lines.Bytes(), &ev); err != nil {
				t.Fatalf("%s: %v", lines.Text(), err)
			}
			if ev.Type != "MODIFIED" || rv(ev.Object) != rv(changed) || !strings.Contains(lines.Text(), `"changed":"yes"`) {
				t.Errorf("first event after the no-op patch: %s, want the MODIFIED of the change at resourceVersion %s", lines.Text(), rv(changed))
			}
		})
	}
}
