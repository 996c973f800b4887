package engine_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"crdplay/engine"
	"crdplay/tools/loadbench/httpload"
)

const (
	crdsPath     = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	cronTabsPath = "/apis/stable.example.com/v1/namespaces/default/crontabs"
)

// BenchmarkCRCreate measures one custom resource create (POST of a new CronTab, the documentation's CRD) on the
// in-memory storage: the engine's share of what tools/loadbench's write phase measures over HTTP and etcd.
func BenchmarkCRCreate(b *testing.B) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	do := func(method, path, body string, want int) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body.String())
		}
	}
	do(http.MethodPost, crdsPath, httpload.CRD, http.StatusCreated)
	do(http.MethodGet, cronTabsPath, "", http.StatusOK)
	b.ReportAllocs()
	i := 0
	start := processCPU()
	for b.Loop() {
		i++
		do(http.MethodPost, cronTabsPath, `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"ct-`+strconv.Itoa(i)+
			`"},"spec":{"cronSpec":"* * * * */5","image":"my-awesome-cron-image"}}`, http.StatusCreated)
	}
	// CPU time (GC included) rather than wall time: on a shared machine it varies less with the load.
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}
