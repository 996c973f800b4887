package engine_test

import (
	"net/http"
	"strings"
	"testing"

	"crdplay/engine"
)

// TestObjectOverClientSendLimit: a write whose etcd request is over the etcd client's 2 MiB send limit is a 500
// with the gRPC client's refusal, naming the request's size, as the real server answers it. Recorded from the
// oracle with the steps below (an oracle-api case would also hold etcd storage to it, whose transaction is not
// upstream's); testdata/oracle-api/object-size holds both storages to etcd's 1.5 MiB request limit.
func TestObjectOverClientSendLimit(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"blobs.objsize.example.com"},
"spec":{"group":"objsize.example.com","scope":"Namespaced","names":{"plural":"blobs","singular":"blob","kind":"Blob"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
"properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", []byte(crd)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	const blobs = "/apis/objsize.example.com/v1/namespaces/default/blobs"
	huge := `{"apiVersion":"objsize.example.com/v1","kind":"Blob","metadata":{"name":"huge"},"spec":{"a":"` + strings.Repeat("x", 17000) + `"}}`
	if rec := do(h, "POST", blobs, "application/json", []byte(huge)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the object: %d %.300s", rec.Code, rec.Body)
	}
	// 7 copies of /spec into itself make the 17 kB spec 2.18 MB.
	var ops []string
	for _, c := range []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6"} {
		ops = append(ops, `{"op":"copy","from":"/spec","path":"/spec/`+c+`"}`)
	}
	rec := do(h, "PATCH", blobs+"/huge", "application/json-patch+json", []byte("["+strings.Join(ops, ",")+"]"))
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"rpc error: code = ResourceExhausted desc = trying to send message larger than max (2178259 vs. 2097152)","code":500}`
	if rec.Code != http.StatusInternalServerError || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("7 copies of a 17 kB spec: %d %.300s; want 500 %s", rec.Code, rec.Body, want)
	}
	if rec := do(h, "GET", blobs+"/huge", "", nil); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"c0"`) || strings.Contains(rec.Body.String(), `"generation":2`) {
		t.Errorf("after the failed patch: %d %.300s; want the object unchanged", rec.Code, rec.Body)
	}
}
