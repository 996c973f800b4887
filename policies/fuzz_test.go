package policies_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"crdplay/engine"
	"crdplay/policies"
)

// FuzzCreatePolicy posts arbitrary bodies as ValidatingAdmissionPolicies and bindings, in JSON and YAML, then
// writes a custom resource under whatever was accepted: every answer must be below 500 (a Status for bad
// input), never a panic or an internal error, and an accepted policy must not break the writes it governs.
func FuzzCreatePolicy(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"p"},"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":["*"],"apiVersions":["*"],"operations":["CREATE"],"resources":["*"]}]},"validations":[{"expression":"object.spec.replicas <= 5"}]}}`,
		"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: q\nspec:\n  validations:\n  - expression: \"1 +\"\n",
		`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"r"},"spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},"validations":[{"expression":"params.data.x == 'y'"}]}}`,
		`[]`, `{`, `null`, `{"kind":1}`,
	} {
		f.Add([]byte(seed), false, false)
		f.Add([]byte(seed), true, true)
	}
	f.Fuzz(func(t *testing.T, body []byte, asYAML, asBinding bool) {
		store := engine.NewMemoryStorage()
		api, err := policies.NewAPI(store, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer api.Close()
		h, err := engine.NewHandler(engine.Options{Storage: store, Admission: api})
		if err != nil {
			t.Fatal(err)
		}
		api.Attach(h)
		post := func(path, ctype string, body []byte) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
			req.Header.Set("Content-Type", ctype)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},` +
			`"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"crontabs","kind":"CronTab"},` +
			`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
		if rec := post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", []byte(crd)); rec.Code != http.StatusCreated {
			t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
		}
		ctype := "application/json"
		if asYAML {
			ctype = "application/yaml"
		}
		resource := "validatingadmissionpolicies"
		if asBinding {
			resource = "validatingadmissionpolicybindings"
		}
		if rec := post("/apis/admissionregistration.k8s.io/v1/"+resource, ctype, body); rec.Code >= 500 {
			t.Fatalf("%d for %q: %s", rec.Code, body, rec.Body)
		}
		cr := `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"},"spec":{"replicas":3}}`
		if rec := post("/apis/stable.example.com/v1/namespaces/default/crontabs", "application/json", []byte(cr)); rec.Code >= 500 {
			t.Fatalf("writing a custom resource after %q: %d %s", body, rec.Code, rec.Body)
		}
	})
}
