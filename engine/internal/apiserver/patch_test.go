package apiserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"crdplay/engine/storage"
)

const scaledCronTabCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"crontabs.stable.example.com"},
"spec":{"group":"stable.example.com","scope":"Namespaced",
 "names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","listKind":"CronTabList"},
 "versions":[{"name":"v1","served":true,"storage":true,
  "subresources":{"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}},
  "schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","properties":{"replicas":{"type":"integer"}}},
   "status":{"type":"object","properties":{"replicas":{"type":"integer"}}}}}}}]}}`

// TestPatchSetUp checks what every PATCH (of a CRD, a custom resource, its /scale) does before its patch
// mechanism, as upstream's PatchResource handler does it. The expected answers come from that handler's code
// (k8s.io/apiserver v0.37.2, pkg/endpoints/handlers/patch.go): the patch type is the Content-Type up to its
// first ';', compared as sent with the endpoint's patch types (no case folding, no trimming), 415 listing them
// otherwise (the custom resource list as recorded in testdata/oracle/server-side-apply, the CRD list in the
// order of installer.go); then the PatchOptions are validated (force only with apply), then the body must be
// JSON.
func TestPatchSetUp(t *testing.T) {
	const (
		crdPath   = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com"
		crPath    = "/apis/stable.example.com/v1/namespaces/default/crontabs/a"
		scalePath = crPath + "/scale"
		crTypes   = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
		crdTypes  = "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
	)
	s, err := New(Config{Storage: storage.NewMemory(), Now: time.Now, MaxRequestBytes: 3 << 20})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, contentType, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	if rec := do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", scaledCronTabCRD); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	cr := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},"spec":{"replicas":1}}`
	if rec := do("POST", "/apis/stable.example.com/v1/namespaces/default/crontabs", "application/json", cr); rec.Code != http.StatusCreated {
		t.Fatalf("creating the custom resource: %d %s", rec.Code, rec.Body)
	}

	unsupported := func(types string) string {
		return "the body of the request was in an unknown format - accepted media types include: " + types
	}
	for _, tc := range []struct {
		name, path, contentType, body string
		wantCode                      int
		wantMessage                   string // of the Status, for failures
	}{
		{name: "cr merge", path: crPath, contentType: "application/merge-patch+json", body: `{"spec":{"replicas":2}}`, wantCode: 200},
		{name: "cr charset", path: crPath, contentType: "application/merge-patch+json; charset=utf-8", body: `{"spec":{"replicas":2}}`, wantCode: 200},
		{name: "cr upper case", path: crPath, contentType: "Application/Merge-Patch+JSON", body: `{}`, wantCode: 415, wantMessage: unsupported(crTypes)},
		{name: "cr space before charset", path: crPath, contentType: "application/merge-patch+json ; charset=utf-8", body: `{}`, wantCode: 415, wantMessage: unsupported(crTypes)},
		{name: "cr strategic", path: crPath, contentType: "application/strategic-merge-patch+json", body: `{}`, wantCode: 415, wantMessage: unsupported(crTypes)},
		{name: "cr not JSON", path: crPath, contentType: "application/merge-patch+json", body: `{`, wantCode: 400, wantMessage: "invalid JSON patch"},
		{name: "crd strategic", path: crdPath, contentType: "application/strategic-merge-patch+json", body: `{"metadata":{"labels":{"a":"b"}}}`, wantCode: 200},
		{name: "crd charset", path: crdPath, contentType: "application/merge-patch+json;charset=utf-8", body: `{"metadata":{"labels":{"a":"c"}}}`, wantCode: 200},
		// The CRD route's go-restful router compares the Content-Type itself, before the handler (recorded from the
		// oracle): exactly, but without parameters and the spaces around the type.
		{name: "crd upper case", path: crdPath, contentType: "APPLICATION/STRATEGIC-MERGE-PATCH+JSON", body: `{}`, wantCode: 415, wantMessage: "415: Unsupported Media Type"},
		{name: "crd space before charset", path: crdPath, contentType: "application/merge-patch+json ; charset=utf-8", body: `{}`, wantCode: 415, wantMessage: unsupported(crdTypes)},
		{name: "crd not JSON", path: crdPath, contentType: "application/json-patch+json", body: `[`, wantCode: 400, wantMessage: "invalid JSON patch"},
		{name: "scale merge", path: scalePath, contentType: "application/merge-patch+json", body: `{"spec":{"replicas":3}}`, wantCode: 200},
		{name: "scale upper case", path: scalePath, contentType: "Application/merge-patch+json", body: `{}`, wantCode: 415, wantMessage: unsupported(crTypes)},
		{name: "scale strategic", path: scalePath, contentType: "application/strategic-merge-patch+json", body: `{}`, wantCode: 415, wantMessage: unsupported(crTypes)},
		{name: "scale force without apply", path: scalePath + "?force=true", contentType: "application/merge-patch+json", body: `{}`, wantCode: 422,
			wantMessage: `PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`},
		{name: "scale not JSON", path: scalePath, contentType: "application/merge-patch+json", body: `{`, wantCode: 400, wantMessage: "invalid JSON patch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do("PATCH", tc.path, tc.contentType, tc.body)
			if rec.Code != tc.wantCode {
				t.Fatalf("code %d, want %d: %s", rec.Code, tc.wantCode, rec.Body)
			}
			if tc.wantMessage == "" {
				return
			}
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatalf("not a Status: %v: %s", err, rec.Body)
			}
			if st.Message != tc.wantMessage {
				t.Errorf("message %q, want %q", st.Message, tc.wantMessage)
			}
		})
	}
}
