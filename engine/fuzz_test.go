package engine_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"crdplay/engine"
)

// crontabCRD is the CRD the object fuzzer creates objects of.
func crontabCRD(t testing.TB) []byte {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", "defaulting", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func do(h http.Handler, method, path, ctype string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// FuzzCreateObject posts arbitrary bodies as custom resources, in JSON and YAML: the engine must answer every
// one with a status below 500 (a Status for bad input), never a panic or an internal error.
func FuzzCreateObject(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"a"},"spec":{"cronSpec":"* * * * *"}}`,
		"apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: b\nspec:\n  replicas: 3\n",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c","labels":{"a":1}}}`,
		`[]`, `{`, `null`, `{"kind":1}`,
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	crd := crontabCRD(f)
	f.Fuzz(func(t *testing.T, body []byte, asYAML bool) {
		h, err := engine.NewHandler(engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crd); rec.Code != http.StatusCreated {
			t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
		}
		ctype := "application/json"
		if asYAML {
			ctype = "application/yaml"
		}
		rec := do(h, "POST", "/apis/stable.example.com/v1/namespaces/default/crontabs", ctype, body)
		if rec.Code >= 500 {
			t.Fatalf("%d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}

// FuzzCreateCRD posts arbitrary CRD bodies: never a panic or a 5xx.
func FuzzCreateCRD(f *testing.F) {
	f.Add(crontabCRD(f), true)
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"x.y"}}`), false)
	f.Add([]byte(`{"spec":{"versions":[{"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-validations":[{"rule":"self.a"}]}}}]}}`), false)
	f.Fuzz(func(t *testing.T, body []byte, asYAML bool) {
		h, err := engine.NewHandler(engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctype := "application/json"
		if asYAML {
			ctype = "application/yaml"
		}
		rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", ctype, body)
		if rec.Code >= 500 {
			t.Fatalf("%d for %q: %s", rec.Code, body, rec.Body)
		}
	})
}
