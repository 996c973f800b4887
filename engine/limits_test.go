package engine_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"crdplay/engine"
)

// TestBadInputLimits checks that oversized and absurdly nested bodies get a clear 4xx Status naming the limit,
// and that the engine keeps serving afterwards.
func TestBadInputLimits(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{MaxRequestBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	crd := crontabCRD(t)
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crd); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	const objects = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	deep := func(open, close string, n int) []byte {
		return []byte(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"},"spec":` + strings.Repeat(open, n) + strings.Repeat(close, n) + `}`)
	}
	for _, tc := range []struct {
		name, ctype string
		body        []byte
		code        int
		contains    string
	}{
		{"too large", "application/json", bytes.Repeat([]byte(" "), 2<<20), http.StatusRequestEntityTooLarge, "limit is 1048576"},
		{"json nested arrays", "application/json", deep("[", "]", 20000), http.StatusBadRequest, "max depth"},
		{"json nested objects", "application/json", deep(`{"a":`, "}", 20000), http.StatusBadRequest, "max depth"},
		{"yaml nested flow", "application/yaml", deep("[", "]", 20000), http.StatusBadRequest, "depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(h, "POST", objects, tc.ctype, tc.body)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.contains) {
				t.Errorf("got %d %.300s; want %d containing %q", rec.Code, rec.Body, tc.code, tc.contains)
			}
			if testing.Verbose() {
				t.Logf("%d %.200s", rec.Code, rec.Body)
			}
		})
	}
	if rec := do(h, "GET", objects, "", nil); rec.Code != http.StatusOK {
		t.Errorf("after bad input, list: %d %s", rec.Code, rec.Body)
	}
}
