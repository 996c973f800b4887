package engine_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"crdplay/engine"
)

// TestOpenAPIPublished checks that an established CRD is published for clients (kubectl explain reads
// /openapi/v3): the index names its group/version with a content hash, and the document defines the kind.
func TestOpenAPIPublished(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	rec := do(h, "GET", "/openapi/v3", "", nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &index); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	entry, ok := index.Paths["apis/stable.example.com/v1"]
	if !ok || !strings.HasPrefix(entry.ServerRelativeURL, "/openapi/v3/apis/stable.example.com/v1?hash=") {
		t.Fatalf("index %s", rec.Body)
	}
	rec = do(h, "GET", entry.ServerRelativeURL, "", nil)
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Components.Schemas["com.example.stable.v1.CronTab"]; !ok {
		t.Errorf("no CronTab schema among %d", len(doc.Components.Schemas))
	}
	if rec := do(h, "GET", "/openapi/v2", "", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"com.example.stable.v1.CronTab"`) {
		t.Errorf("v2: %d %.200s", rec.Code, rec.Body)
	}
}

// TestAggregatedDiscovery checks that /apis answers aggregated discovery (v2) when asked, listing the CRD's group
// with its resources, and legacy APIGroupList otherwise.
func TestAggregatedDiscovery(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	req := httptest.NewRequest("GET", "/apis", nil)
	req.Header.Set("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" {
		t.Fatalf("content type %q", ct)
	}
	var list struct {
		Items []struct {
			Metadata struct{ Name string } `json:"metadata"`
			Versions []struct {
				Version   string `json:"version"`
				Resources []struct {
					Resource string `json:"resource"`
				} `json:"resources"`
			} `json:"versions"`
		} `json:"items"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range list.Items {
		if g.Metadata.Name == "stable.example.com" && len(g.Versions) == 1 && g.Versions[0].Resources[0].Resource == "crontabs" {
			found = true
		}
	}
	if !found {
		t.Errorf("stable.example.com/v1 crontabs missing: %s", rec.Body)
	}
	if rec := do(h, "GET", "/apis", "", nil); !strings.Contains(rec.Body.String(), `"kind":"APIGroupList"`) {
		t.Errorf("legacy /apis: %s", rec.Body)
	}
}
