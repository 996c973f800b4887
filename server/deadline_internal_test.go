package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRequestDeadline: the deadline each request's context gets, as kube-apiserver's WithRequestDeadline
// sets it: the maximum by default, a shorter ?timeout= as asked, none of its own for a watch.
func TestRequestDeadline(t *testing.T) {
	const max = time.Minute
	for _, tc := range []struct {
		name, target string
		want         time.Duration // 0: no deadline
	}{
		{"default", "/apis/example.com/v1/widgets", max},
		{"shorter", "/apis/example.com/v1/widgets?timeout=5s", 5 * time.Second},
		{"zero is the default", "/apis/example.com/v1/widgets?timeout=0", max},
		{"longer is capped", "/apis/example.com/v1/widgets?timeout=10m", max},
		{"negative is the default", "/apis/example.com/v1/widgets?timeout=-1s", max},
		{"non-resource", "/version?timeout=2s", 2 * time.Second},
		{"watch", "/apis/example.com/v1/widgets?watch=true&timeout=5s", 0},
		{"watch path", "/apis/example.com/v1/watch/widgets", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got time.Duration
			h := withRequestDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if d, ok := r.Context().Deadline(); ok {
					got = time.Until(d)
				}
			}), max)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", tc.target, nil))
			if rec.Code != 200 {
				t.Fatalf("%d %s", rec.Code, rec.Body)
			}
			if tc.want == 0 {
				if got != 0 {
					t.Errorf("deadline in %v, want none", got)
				}
				return
			}
			if got > tc.want || got < tc.want-5*time.Second {
				t.Errorf("deadline in %v, want %v", got, tc.want)
			}
		})
	}
}
