package server

import (
	"errors"
	"io"
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

// TestRequestDeadlineAnswer: a request still unanswered at its deadline is answered 504 with upstream's Status
// (recorded from the oracle for ?timeout=1ns), and the handler's later writes go nowhere; one answered in time
// keeps its answer; one whose answer has begun has its connection aborted.
func TestRequestDeadlineAnswer(t *testing.T) {
	lateWrite := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		time.Sleep(10 * time.Millisecond) // after serveWithin has answered
		w.Header().Set("X-Late", "1")
		_, err := w.Write([]byte("late"))
		lateWrite <- err
	})
	mux.HandleFunc("/fast", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Fast", "1")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte("fast"))
	})
	mux.HandleFunc("/begun", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	srv := httptest.NewServer(withRequestDeadline(mux, time.Minute))
	defer srv.Close()

	get := func(path string) (*http.Response, string, error) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp, string(body), err
	}

	resp, body, err := get("/slow?timeout=200ms")
	const want = `{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}` + "\n"
	if err != nil || resp.StatusCode != 504 || body != want || resp.Header.Get("Cache-Control") != "no-cache, private" || resp.Header.Get("X-Late") != "" {
		t.Errorf("slow: %v %v %q, want 504 %q", err, resp, body, want)
	}
	if err := <-lateWrite; !errors.Is(err, http.ErrHandlerTimeout) {
		t.Errorf("the handler's write after the deadline: %v, want http.ErrHandlerTimeout", err)
	}

	resp, body, err = get("/fast?timeout=10s")
	if err != nil || resp.StatusCode != 201 || body != "fast" || resp.Header.Get("X-Fast") != "1" {
		t.Errorf("fast: %v %v %q", err, resp, body)
	}

	_, body, err = get("/begun?timeout=200ms")
	if err == nil {
		t.Errorf("begun: read %q to its end, want the connection aborted", body)
	}
}
