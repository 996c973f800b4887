package engine_test

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCRDRouteErrors: the CRD endpoints are go-restful routes, whose router refuses a PATCH's Content-Type
// (415) and then an Accept header naming nothing the route produces (406), in go-restful's words and before
// the handler negotiates; an error whose Accept cannot be satisfied is indented JSON. Recorded from the oracle
// with a user agent that does not ask for pretty output.
func TestCRDRouteErrors(t *testing.T) {
	const (
		crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
		crd  = crds + "/crontabs.stable.example.com"
	)
	notAcceptable := func(available string) string {
		return `{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "406: Not Acceptable\n\nAvailable representations: ` + available + `",
  "reason": "NotAcceptable",
  "details": {},
  "code": 406
}`
	}
	const types = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
	const unsupported = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}` + "\n"
	for _, tc := range []struct {
		name, method, path, contentType, accept, body string
		code                                          int
		want                                          string
	}{
		{"patch: Content-Type before Accept", "PATCH", crd, "text/plain", "application/bogus", "{}", 415, `{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "415: Unsupported Media Type",
  "reason": "UnsupportedMediaType",
  "details": {},
  "code": 415
}`},
		{"patch: Content-Type", "PATCH", crd, "text/plain", "", "{}", 415, unsupported},
		{"patch of status: no body", "PATCH", crd + "/status", "text/plain", "", "", 415, unsupported},
		{"patch: Accept", "PATCH", crd, "application/merge-patch+json", "application/bogus", "{}", 406, notAcceptable(types)},
		{"list", "GET", crds, "", "application/bogus", "", 406, notAcceptable(types + ", application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch")},
		// The error itself can be negotiated: compact JSON.
		{"get: application/* is no wildcard", "GET", crd, "", "application/*", "", 406, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"406: Not Acceptable\n\nAvailable representations: ` + types + `","reason":"NotAcceptable","details":{},"code":406}` + "\n"},
		{"create", "POST", crds, "application/json", "application/bogus", "{}", 406, notAcceptable(types)},
		{"delete", "DELETE", crd, "application/json", "application/bogus", "{}", 406, notAcceptable(types)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newCronTabEngine(t, nil)
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("User-Agent", "go-test")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.code || rec.Body.String() != tc.want {
				t.Errorf("%d\n%s\nwant %d\n%s", rec.Code, rec.Body, tc.code, tc.want)
			}
		})
	}
}
