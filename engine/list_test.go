package engine_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"crdplay/engine"
)

// TestListPagination pages through a collection with limit and continue, as kubectl and informers do.
func TestListPagination(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	const objects = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	for i := 0; i < 5; i++ {
		body := fmt.Sprintf(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c%d"}}`, i)
		if rec := do(h, "POST", objects, "application/json", []byte(body)); rec.Code != http.StatusCreated {
			t.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
	var names []string
	var remaining []int64
	cont := ""
	for page := 0; page < 5; page++ {
		path := objects + "?limit=2"
		if cont != "" {
			path += "&continue=" + url.QueryEscape(cont)
		}
		rec := do(h, "GET", path, "", nil)
		var list struct {
			Metadata struct {
				Continue           string `json:"continue"`
				RemainingItemCount *int64 `json:"remainingItemCount"`
			} `json:"metadata"`
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != 200 {
			t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
		}
		for _, it := range list.Items {
			names = append(names, it.Metadata.Name)
		}
		if list.Metadata.RemainingItemCount != nil {
			remaining = append(remaining, *list.Metadata.RemainingItemCount)
		}
		if cont = list.Metadata.Continue; cont == "" {
			break
		}
	}
	if fmt.Sprint(names) != "[c0 c1 c2 c3 c4]" || fmt.Sprint(remaining) != "[3 1]" {
		t.Errorf("names %v, remaining counts %v", names, remaining)
	}
	if rec := do(h, "GET", objects+"?limit=2&continue=bogus", "", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("bad token: %d %s", rec.Code, rec.Body)
	}
}
