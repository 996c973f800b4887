package engine_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"crdplay/engine"
)

// BenchmarkCRDCreate measures the largest corpus CRD (argo-workflows' Workflow, 2.8 MB) on a fresh engine:
// its POST to the 201 alone ("post"), and the POST with the next request, which sees the CRD Established
// ("established"): the controllers run after the answer, as kube-apiserver's do, and before any later request.
func BenchmarkCRDCreate(b *testing.B) {
	crd, err := os.ReadFile("../testdata/corpus/argo-workflows/Workflow/crd.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		get  bool
	}{{"post", false}, {"established", true}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			// The process's CPU time in the timed parts: on a shared machine wall time is what the other
			// processes leave. It includes the garbage collector's background work, and for "post" whatever of
			// the controllers runs beside the request.
			var cpu int64
			for b.Loop() {
				b.StopTimer()
				h, err := engine.NewHandler(engine.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				start := processCPU()
				req := httptest.NewRequest(http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bytes.NewReader(crd))
				req.Header.Set("Content-Type", "application/yaml")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusCreated {
					b.Fatalf("POST: %d %s", w.Code, w.Body.String()[:min(w.Body.Len(), 500)])
				}
				if bc.get {
					w = httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/workflows.argoproj.io", nil))
					if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"type":"Established","status":"True"`) {
						b.Fatalf("GET: %d, not Established", w.Code)
					}
				}
				cpu += processCPU() - start
				if !bc.get {
					b.StopTimer()
					// Let the controllers finish outside the timing, as the next request would wait for them.
					h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/healthz", nil))
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
