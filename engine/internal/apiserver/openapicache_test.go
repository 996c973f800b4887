package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"crdplay/engine/storage"
)

func newTestServer(t *testing.T, st storage.Interface) *Server {
	t.Helper()
	s, err := New(Config{Storage: st, Now: time.Now, MaxRequestBytes: 3 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func serve(s *Server, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// testCRD is a namespaced CRD of kind in group serving v1, with a description that tells its revisions apart.
func testCRD(group, kind, description string) string {
	plural := strings.ToLower(kind) + "s"
	return fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":%q},"spec":{"group":%q,"scope":"Namespaced",
"names":{"plural":%q,"singular":%q,"kind":%q,"listKind":%q},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
"properties":{"spec":{"type":"object","description":%q,"properties":{"size":{"type":"integer","default":1}}}}}}}]}}`,
		plural+"."+group, group, plural, strings.ToLower(kind), kind, kind+"List", description)
}

// TestOpenAPICache holds the OpenAPI documents to upstream's controllers' economy: each CRD's documents are built
// once per change of that CRD, a group/version's v3 document from that group's CRDs only, and every answer is
// what a server building from nothing answers for the same CRDs.
func TestOpenAPICache(t *testing.T) {
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	type step struct {
		name                 string
		method, path, body   string
		get                  string // then GET this document
		wantBuilds           int    // per-CRD documents built so far
		wantContains, absent string
		v3Cached             string // the group/versions whose v3 documents are kept, if not ""
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"v2 twice without a change builds once", []step{
			{name: "first", get: "/openapi/v2", wantBuilds: 3, wantContains: "com.a.v1.Widget"},
			{name: "second", get: "/openapi/v2", wantBuilds: 3},
		}},
		{"a CRD change rebuilds only that CRD", []step{
			{name: "first", get: "/openapi/v2", wantBuilds: 3},
			{name: "change widgets", method: "PUT", path: crds + "/widgets.a.com", body: "widgets", get: "/openapi/v2", wantBuilds: 4, wantContains: "second revision"},
			{name: "again", get: "/openapi/v2", wantBuilds: 4},
		}},
		{"a deleted CRD leaves without builds", []step{
			{name: "first", get: "/openapi/v2", wantBuilds: 3},
			{name: "delete gadgets", method: "DELETE", path: crds + "/gadgets.a.com", get: "/openapi/v2", wantBuilds: 3, absent: "com.a.v1.Gadget"},
		}},
		{"one group's v3 builds only that group", []step{
			{name: "group a", get: "/openapi/v3/apis/a.com/v1", wantBuilds: 2, wantContains: "com.a.v1.Gadget", absent: "com.b.v1.Sprocket"},
			{name: "group a again", get: "/openapi/v3/apis/a.com/v1", wantBuilds: 2},
			{name: "group b", get: "/openapi/v3/apis/b.com/v1", wantBuilds: 3, wantContains: "com.b.v1.Sprocket"},
			{name: "change b's CRD", method: "PUT", path: crds + "/sprockets.b.com", body: "sprockets", get: "/openapi/v3/apis/a.com/v1", wantBuilds: 3},
			{name: "index", get: "/openapi/v3", wantBuilds: 4, wantContains: "apis/b.com/v1?hash="},
			{name: "unknown group", get: "/openapi/v3/apis/c.com/v1", wantBuilds: 4},
		}},
		{"a group's v3 document leaves with its CRDs", []step{
			{name: "group b", get: "/openapi/v3/apis/b.com/v1", wantBuilds: 1, v3Cached: "b.com/v1"},
			{name: "group a", get: "/openapi/v3/apis/a.com/v1", wantBuilds: 3, v3Cached: "a.com/v1 b.com/v1"},
			{name: "delete b's CRD", method: "DELETE", path: crds + "/sprockets.b.com", get: "/openapi/v2", wantBuilds: 5, v3Cached: "a.com/v1"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := storage.NewMemory()
			s := newTestServer(t, st)
			for _, crd := range []string{testCRD("a.com", "Widget", "first"), testCRD("a.com", "Gadget", "first"), testCRD("b.com", "Sprocket", "first")} {
				if rec := serve(s, "POST", crds, crd); rec.Code != http.StatusCreated {
					t.Fatalf("creating a CRD: %d %s", rec.Code, rec.Body)
				}
			}
			serve(s, "GET", crds, "") // the establishing controller runs before the next request
			for _, step := range tc.steps {
				switch step.method {
				case "PUT":
					live := serve(s, "GET", step.path, "").Body.String()
					group := strings.SplitN(strings.TrimPrefix(step.path, crds+"/"), ".", 2)[1]
					kind := map[string]string{"widgets": "Widget", "sprockets": "Sprocket"}[step.body]
					rv := live[strings.Index(live, `"resourceVersion":"`)+19:]
					rv = rv[:strings.Index(rv, `"`)]
					body := strings.Replace(testCRD(group, kind, "second revision"), `"metadata":{`, `"metadata":{"resourceVersion":"`+rv+`",`, 1)
					if rec := serve(s, "PUT", step.path, body); rec.Code != http.StatusOK {
						t.Fatalf("%s: %d %s", step.name, rec.Code, rec.Body)
					}
				case "DELETE":
					if rec := serve(s, "DELETE", step.path, ""); rec.Code != http.StatusOK {
						t.Fatalf("%s: %d %s", step.name, rec.Code, rec.Body)
					}
					serve(s, "GET", crds, "")
				}
				rec := serve(s, "GET", step.get, "")
				if rec.Code != http.StatusOK {
					t.Fatalf("%s: %d %s", step.name, rec.Code, rec.Body)
				}
				if s.openapi.builds != step.wantBuilds {
					t.Errorf("%s: %d documents built, want %d", step.name, s.openapi.builds, step.wantBuilds)
				}
				if step.v3Cached != "" {
					var gvs []string
					for gv := range s.openapi.v3 {
						gvs = append(gvs, gv)
					}
					sort.Strings(gvs)
					if got := strings.Join(gvs, " "); got != step.v3Cached {
						t.Errorf("%s: v3 documents kept for %q, want %q", step.name, got, step.v3Cached)
					}
				}
				if step.wantContains != "" && !strings.Contains(rec.Body.String(), step.wantContains) {
					t.Errorf("%s: %s lacks %q", step.name, step.get, step.wantContains)
				}
				if step.absent != "" && strings.Contains(rec.Body.String(), step.absent) {
					t.Errorf("%s: %s has %q", step.name, step.get, step.absent)
				}
				if fresh := serve(newTestServer(t, st), "GET", step.get, ""); !bytes.Equal(fresh.Body.Bytes(), rec.Body.Bytes()) || fresh.Header().Get("Etag") != rec.Header().Get("Etag") {
					t.Errorf("%s: the cached answer differs from a fresh server's", step.name)
				}
			}
		})
	}
}

// TestOpenAPIConcurrentBuildOnce checks that concurrent requests for a document wait for one build rather than
// each building it (which multiplied memory by the number of requests).
func TestOpenAPIConcurrentBuildOnce(t *testing.T) {
	s := newTestServer(t, storage.NewMemory())
	for i := 0; i < 4; i++ {
		if rec := serve(s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", testCRD("a.com", fmt.Sprintf("Kind%d", i), "x")); rec.Code != http.StatusCreated {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	serve(s, "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "")
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if rec := serve(s, "GET", "/openapi/v2", ""); rec.Code != http.StatusOK {
				t.Errorf("%d", rec.Code)
			}
		}()
	}
	wg.Wait()
	if s.openapi.builds != 4 {
		t.Errorf("%d documents built, want 4", s.openapi.builds)
	}
}
