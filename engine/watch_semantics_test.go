package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"crdplay/engine"
	"crdplay/engine/storage"
)

// The expected lines below are what the oracle (kube-apiserver's watch cache) streams in the same situations;
// only resourceVersions differ between two servers, and are compared as <rv>.

const crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs"

// newCronTabEngine returns an engine on store serving the CronTab CRD.
func newCronTabEngine(t *testing.T, store storage.Interface) http.Handler {
	t.Helper()
	h, err := engine.NewHandler(engine.Options{Storage: store})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	return h
}

func cronTab(name, labels string) []byte {
	return []byte(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"` + name + `","labels":{` + labels + `}},"spec":{"cronSpec":"* * * * *"}}`)
}

// normaliseRV replaces resourceVersions, in objects and in "current: N" of messages.
func normaliseRV(s string) string {
	s = regexp.MustCompile(`"resourceVersion":"\d+"`).ReplaceAllString(s, `"resourceVersion":"<rv>"`)
	return regexp.MustCompile(`current: \d+`).ReplaceAllString(s, "current: <rv>")
}

// failingWatch is a store whose Watch fails with err.
type failingWatch struct {
	storage.Interface
	err error
}

func (f failingWatch) Watch(context.Context, string, int64) (<-chan storage.Event, error) {
	return nil, f.err
}

// TestWatchErrors: a revision the store has forgotten ends the stream at once with the watch cache's 410 ERROR
// event; a store that cannot be reached is a 503 before any streaming, another failure a 500.
func TestWatchErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		err      error
		wantCode int
		want     string
	}{
		{"compacted", &storage.CompactedError{Revision: 1, Compacted: 37}, 200,
			`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (37)","reason":"Expired","code":410}}` + "\n"},
		{"unavailable", fmt.Errorf("%w: etcd at 127.0.0.1:2379 did not answer", storage.ErrUnavailable), 503,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"storage unavailable: etcd at 127.0.0.1:2379 did not answer","reason":"ServiceUnavailable","code":503}` + "\n"},
		{"other", errors.New("disk on fire"), 500,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: disk on fire","reason":"InternalError","details":{"causes":[{"message":"disk on fire"}]},"code":500}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newCronTabEngine(t, failingWatch{Interface: storage.NewMemory(), err: tc.err})
			rec := do(h, "GET", crontabs+"?watch=1&resourceVersion=1", "", nil)
			if rec.Code != tc.wantCode || rec.Body.String() != tc.want {
				t.Errorf("got %d %s\nwant %d %s", rec.Code, rec.Body, tc.wantCode, tc.want)
			}
		})
	}
}

// TestWatchTooLargeResourceVersion: a watch list from a revision the store has not reached waits 3 seconds, as
// the watch cache waits to catch up, then ends with a 504 ERROR event; a list answers 504 directly.
func TestWatchTooLargeResourceVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 3 seconds twice")
	}
	h := newCronTabEngine(t, storage.NewMemory())
	const status = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 100000, current: <rv>","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}` + "\n"
	start := time.Now()
	rec := do(h, "GET", crontabs+"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=100000", "", nil)
	if got, want := normaliseRV(rec.Body.String()), `{"type":"ERROR","object":`+strings.TrimSuffix(status, "\n")+"}\n"; rec.Code != 200 || got != want {
		t.Errorf("watch: %d %s\nwant 200 %s", rec.Code, got, want)
	}
	if d := time.Since(start); d < 3*time.Second || d > 10*time.Second {
		t.Errorf("watch answered after %v, want after the 3s the cache waits", d)
	}
	rec = do(h, "GET", crontabs+"?resourceVersion=100000", "", nil)
	if got := normaliseRV(rec.Body.String()); rec.Code != 504 || got != status {
		t.Errorf("list: %d %s\nwant 504 %s", rec.Code, got, status)
	}
}

// TestListResourceVersionMatch: Exact reads the state at that revision, NotOlderThan the latest; a limit with a
// resourceVersion makes it exact; resourceVersion 0 ignores limit; pages of a list stay at its revision.
func TestListResourceVersionMatch(t *testing.T) {
	h := newCronTabEngine(t, storage.NewMemory())
	rv := func(rec *httptest.ResponseRecorder) string {
		var l struct {
			Metadata struct{ ResourceVersion, Continue string }
			Items    []struct{ Metadata struct{ Name string } }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
			t.Fatalf("%v: %s", err, rec.Body)
		}
		return l.Metadata.ResourceVersion
	}
	names := func(rec *httptest.ResponseRecorder) string {
		var l struct {
			Metadata struct{ Continue string }
			Items    []struct{ Metadata struct{ Name string } }
		}
		json.Unmarshal(rec.Body.Bytes(), &l)
		var out []string
		for _, it := range l.Items {
			out = append(out, it.Metadata.Name)
		}
		if l.Metadata.Continue != "" {
			out = append(out, "+continue")
		}
		return strings.Join(out, ",")
	}
	do(h, "POST", crontabs, "application/json", cronTab("a", ""))
	afterA := rv(do(h, "GET", crontabs, "", nil))
	do(h, "POST", crontabs, "application/json", cronTab("b", ""))
	page1 := do(h, "GET", crontabs+"?limit=1", "", nil)
	do(h, "POST", crontabs, "application/json", cronTab("c", ""))
	var cont struct{ Metadata struct{ Continue string } }
	json.Unmarshal(page1.Body.Bytes(), &cont)

	for _, tc := range []struct{ query, want string }{
		{"resourceVersion=" + afterA + "&resourceVersionMatch=Exact", "a"},
		{"resourceVersion=" + afterA + "&limit=5", "a"},
		{"resourceVersion=" + afterA + "&resourceVersionMatch=NotOlderThan", "a,b,c"},
		{"resourceVersion=" + afterA, "a,b,c"},
		{"resourceVersion=0&limit=1", "a,b,c"},
		{"limit=1", "a,+continue"},
		{"limit=5&continue=" + cont.Metadata.Continue, "b"}, // the state of the first page: c came later
	} {
		rec := do(h, "GET", crontabs+"?"+tc.query, "", nil)
		if got := names(rec); rec.Code != 200 || got != tc.want {
			t.Errorf("?%s: %d %s, want %s\n%s", tc.query, rec.Code, got, tc.want, rec.Body)
		}
	}
}

// TestWatchLive: a watch with a label selector sees an object start matching as ADDED and stop matching as
// DELETED (its previous content at the new revision); with bookmarks allowed, a BOOKMARK carries the store's
// revision two seconds before the timeout when it moved on without an event for this watch.
func TestWatchLive(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("the watch stream is read over a loopback socket, which js/wasm under node does not have")
	}
	h := newCronTabEngine(t, storage.NewMemory())
	srv := httptest.NewServer(h)
	defer srv.Close()
	do(h, "POST", crontabs, "application/json", cronTab("a", ""))
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	json.Unmarshal(do(h, "GET", crontabs, "", nil).Body.Bytes(), &list)

	resp, err := http.Get(srv.URL + crontabs + "?watch=1&labelSelector=app%3Dx&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=" + list.Metadata.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	patch := func(body string) {
		t.Helper()
		if rec := do(h, "PATCH", crontabs+"/a", "application/merge-patch+json", []byte(body)); rec.Code != 200 {
			t.Fatalf("patch %s: %d %s", body, rec.Code, rec.Body)
		}
	}
	patch(`{"metadata":{"labels":{"app":"x"}}}`)
	patch(`{"spec":{"image":"y"}}`)
	patch(`{"metadata":{"labels":{"app":null}}}`)
	// A write elsewhere moves the store's revision without an event for this watch.
	if rec := do(h, "POST", "/apis/stable.example.com/v1/namespaces/other/crontabs", "application/json", cronTab("b", "")); rec.Code != 201 {
		t.Fatalf("create elsewhere: %d %s", rec.Code, rec.Body)
	}
	var otherRV struct {
		Metadata struct{ ResourceVersion string }
	}
	json.Unmarshal(do(h, "GET", "/apis/stable.example.com/v1/namespaces/other/crontabs/b", "", nil).Body.Bytes(), &otherRV)

	var got []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var ev struct {
			Type   string
			Object struct {
				Metadata struct {
					ResourceVersion string
					Labels          map[string]string
				}
				Spec struct{ Image string }
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		got = append(got, fmt.Sprintf("%s app=%s image=%s", ev.Type, ev.Object.Metadata.Labels["app"], ev.Object.Spec.Image))
		if ev.Type == "BOOKMARK" && ev.Object.Metadata.ResourceVersion != otherRV.Metadata.ResourceVersion {
			t.Errorf("bookmark at %s, want the store's revision %s", ev.Object.Metadata.ResourceVersion, otherRV.Metadata.ResourceVersion)
		}
	}
	want := []string{"ADDED app=x image=", "MODIFIED app=x image=y", "DELETED app=x image=y", "BOOKMARK app= image="}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPrettyPrint: JSON is indented for pretty=true and for browsers and command-line tools, which get it unless
// they say pretty=false; indented JSON has no final newline, compact JSON has one; /version is always indented.
func TestPrettyPrint(t *testing.T) {
	h := newCronTabEngine(t, storage.NewMemory())
	const compact = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"crontabs.stable.example.com \"nope\" not found","reason":"NotFound","details":{"name":"nope","group":"stable.example.com","kind":"crontabs"},"code":404}` + "\n"
	const pretty = `{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "crontabs.stable.example.com \"nope\" not found",
  "reason": "NotFound",
  "details": {
    "name": "nope",
    "group": "stable.example.com",
    "kind": "crontabs"
  },
  "code": 404
}`
	for _, tc := range []struct{ query, userAgent, want string }{
		{"", "Go-http-client/1.1", compact},
		{"?pretty=true", "Go-http-client/1.1", pretty},
		{"?pretty=1", "", pretty},
		{"", "curl/8.5.0", pretty},
		{"", "Wget/1.21", pretty},
		{"", "Mozilla/5.0 (X11; Linux x86_64)", pretty},
		{"?pretty=false", "curl/8.5.0", compact},
		{"?pretty=nonsense", "curl/8.5.0", compact},
	} {
		req := httptest.NewRequest("GET", crontabs+"/nope"+tc.query, nil)
		req.Header.Set("User-Agent", tc.userAgent)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got := rec.Body.String(); got != tc.want {
			t.Errorf("%q with %q:\n%s\nwant\n%s", tc.query, tc.userAgent, got, tc.want)
		}
	}
	req := httptest.NewRequest("GET", "/version", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if !strings.HasPrefix(rec.Body.String(), "{\n  \"major\": \"1\",\n  \"minor\": \"37\",\n  \"emulationMajor\": \"1\",") {
		t.Errorf("/version: %s", rec.Body)
	}
}
