package policies_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"crdplay/engine"
	"crdplay/policies"
)

// TestReplicasShareConfiguration runs two engines with an API each on one storage, as two crdplay-servers on one
// etcd: a policy written through one is enforced by the other, which learns of it from the storage's watch
// (as kube-apiserver's replicas learn from their informers, a moment later), and its removal too.
func TestReplicasShareConfiguration(t *testing.T) {
	store := engine.NewMemoryStorage()
	replica := func() http.Handler {
		api, err := policies.NewAPI(store, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(api.Close)
		h, err := engine.NewHandler(engine.Options{Storage: store, Admission: api})
		if err != nil {
			t.Fatal(err)
		}
		api.Attach(h)
		return h
	}
	a, b := replica(), replica()
	do := func(h http.Handler, method, path string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/yaml")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	file := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "admission", "vap-deny", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	if rec := do(a, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", file("crd.yaml")); rec.Code != http.StatusCreated {
		t.Fatalf("CRD: %d %s", rec.Code, rec.Body)
	}
	// A's next request runs its CRD controllers (names accepted, Established), which B then reads.
	do(a, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nil)
	const crs = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	n := 0
	create := func(h http.Handler) int {
		n++
		body := fmt.Sprintf("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: ct-%d\nspec:\n  replicas: 8\n", n)
		return do(h, http.MethodPost, crs, []byte(body)).Code
	}
	if code := create(b); code != http.StatusCreated {
		t.Fatalf("before any policy: %d, want 201", code)
	}
	for _, f := range []string{"01-create-policy.yaml", "02-create-binding.yaml"} {
		res := "validatingadmissionpolicies"
		if f == "02-create-binding.yaml" {
			res = "validatingadmissionpolicybindings"
		}
		if rec := do(a, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/"+res, file(f)); rec.Code != http.StatusCreated {
			t.Fatalf("%s: %d %s", f, rec.Code, rec.Body)
		}
	}
	if code := create(a); code != http.StatusUnprocessableEntity {
		t.Fatalf("through the replica that took the policy: %d, want 422 at once", code)
	}
	eventually := func(want int, what string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			code := create(b)
			if code == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the other replica still answers %d, want %d", what, code, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	eventually(http.StatusUnprocessableEntity, "after the policy and binding")
	if rec := do(a, http.MethodDelete, "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/replicas-limit-binding", nil); rec.Code != http.StatusOK {
		t.Fatalf("deleting the binding: %d %s", rec.Code, rec.Body)
	}
	eventually(http.StatusCreated, "after the binding's deletion")
}
