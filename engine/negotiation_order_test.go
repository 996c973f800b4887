package engine_test

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestErrorNegotiation: errors are answered in the media type the Accept header asks for, and as indented JSON
// when none can be negotiated (responsewriters.ErrorNegotiated and WriteRawJSON); the route is chosen before
// the answer's media type is negotiated, so an unknown subresource is a 404 and a PATCH's Content-Type is
// checked (415) before its Accept header (406), as the PATCH handler orders them. Recorded from the oracle
// with a user agent that does not ask for pretty output.
func TestErrorNegotiation(t *testing.T) {
	const notFound = `{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "crontabs.stable.example.com \"x\" not found",
  "reason": "NotFound",
  "details": {
    "name": "x",
    "group": "stable.example.com",
    "kind": "crontabs"
  },
  "code": 404
}`
	for _, tc := range []struct {
		name, method, path, contentType, accept string
		code                                    int
		wantType, want                          string
	}{
		{"patch: Content-Type before Accept", "PATCH", crontabs + "/x", "text/plain", "application/bogus", 415, "application/json", `{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
  "reason": "UnsupportedMediaType",
  "code": 415
}`},
		{"patch: the 415 in YAML", "PATCH", crontabs + "/x", "text/plain", "application/yaml", 415, "application/yaml", `apiVersion: v1
code: 415
kind: Status
message: 'the body of the request was in an unknown format - accepted media types
  include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml'
metadata: {}
reason: UnsupportedMediaType
status: Failure
`},
		{"unknown subresource before Accept", "PATCH", crontabs + "/x/status", "text/plain", "application/bogus", 404, "application/json", notFound},
		{"get: the 404 in YAML", "GET", crontabs + "/x", "", "application/yaml", 404, "application/yaml", `apiVersion: v1
code: 404
details:
  group: stable.example.com
  kind: crontabs
  name: x
kind: Status
message: crontabs.stable.example.com "x" not found
metadata: {}
reason: NotFound
status: Failure
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newCronTabEngine(t, nil)
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}"))
			req.Header.Set("User-Agent", "go-test")
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("Accept", tc.accept)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.code || rec.Header().Get("Content-Type") != tc.wantType || rec.Body.String() != tc.want {
				t.Errorf("%d %s\n%s\nwant %d %s\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body, tc.code, tc.wantType, tc.want)
			}
		})
	}
}
