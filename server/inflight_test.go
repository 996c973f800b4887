package server

import (
	"encoding/base64"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tooManyRequests is the real server's answer to a request over --max-requests-inflight or
// --max-mutating-requests-inflight, recorded from the oracle run with both at 1 while a request held each
// place: plain text, not a Status, whatever the Accept header, and the same on /version, /openapi/v2 and
// /metrics.
var tooManyRequests = struct {
	header map[string]string
	body   string
}{
	header: map[string]string{
		"Retry-After":            "1",
		"Content-Type":           "text/plain; charset=utf-8",
		"X-Content-Type-Options": "nosniff",
		"Cache-Control":          "no-cache, private",
	},
	body: "Too many requests, please try again later.\n",
}

// TestMaxInFlight holds one read or one write in flight (a conversion webhook that does not answer until the
// test lets it) and checks which other requests are turned away, as kube-apiserver's filter turns them away:
// with a limit of 1, another request of the same kind (a short link's POST too) is 429 with the recorded
// answer, one of the other kind is served; watches are never counted, nor is system:masters turned away; a
// limit of 0 lifts it; the place is free again once the held request is over. Neither the page's files nor
// the health endpoints are counted: the health endpoints as kube-apiserver's default priority and fairness
// configuration exempts them (the oracle, which runs without it, answers them 429 too).
func TestMaxInFlight(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	webhook := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		http.Error(w, "released", http.StatusServiceUnavailable)
	}))
	defer webhook.Close()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: webhook.Certificate().Raw}))
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"scope":"Namespaced",
"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"` + webhook.URL + `/convert","caBundle":"` + ca + `"}}},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},{"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	const widgets = "/apis/example.com/v1/namespaces/default/widgets"
	const v2widgets = "/apis/example.com/v2/namespaces/default/widgets"
	widget := func(v, name string) string {
		return `{"apiVersion":"example.com/` + v + `","kind":"Widget","metadata":{"name":"` + name + `"}}`
	}
	// The held requests: each calls the webhook, converting between the storage version and v2.
	holdRead := testRequest{"GET", v2widgets + "/w", ""}
	holdWrite := testRequest{"POST", v2widgets, widget("v2", "held")}

	type probe struct {
		testRequest
		want  int    // 429 means the recorded answer
		token string // the bearer token it is sent with, if any
	}
	site := t.TempDir()
	if err := os.WriteFile(filepath.Join(site, "index.html"), []byte("<!doctype html><title>crdplay</title>"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(tokens, []byte("admin-token,admin,1,\"system:masters\"\nbob-token,bob,2,\"\"\ncarol-token,carol,3,\"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// carol may do everything, bob only read.
	policy := filepath.Join(t.TempDir(), "policy.jsonl")
	if err := os.WriteFile(policy, []byte(`{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "carol", "namespace": "*", "resource": "*", "apiGroup": "*"}}
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "bob", "namespace": "*", "resource": "*", "apiGroup": "*", "readonly": true}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name               string
		readOnly, mutating int
		auth               AuthOptions
		token              string // what the test's own requests are sent with
		hold               testRequest
		probes             []probe
	}{
		{"a read held", 1, 1, AuthOptions{}, "", holdRead, []probe{
			{testRequest{"GET", widgets + "/w", ""}, 429, ""},
			{testRequest{"GET", widgets, ""}, 429, ""},
			{testRequest{"GET", "/version", ""}, 429, ""},
			{testRequest{"GET", "/openapi/v2", ""}, 429, ""},
			{testRequest{"GET", "/metrics", ""}, 429, ""},
			{testRequest{"GET", widgets + "?watch=true&timeoutSeconds=1", ""}, 200, ""},
			{testRequest{"GET", "/healthz", ""}, 200, ""},
			{testRequest{"GET", "/readyz", ""}, 200, ""},
			{testRequest{"GET", "/livez", ""}, 200, ""},
			{testRequest{"GET", "/", ""}, 200, ""},
			{testRequest{"POST", widgets, widget("v1", "x")}, 201, ""},
		}},
		{"a write held", 1, 1, AuthOptions{}, "", holdWrite, []probe{
			{testRequest{"POST", widgets, widget("v1", "y")}, 429, ""},
			{testRequest{"PUT", widgets + "/w", widget("v1", "w")}, 429, ""},
			{testRequest{"DELETE", widgets + "/w", ""}, 429, ""},
			{testRequest{"POST", LinksPath, `{"crd":"x"}`}, 429, ""},
			{testRequest{"GET", widgets + "/w", ""}, 200, ""},
		}},
		// As upstream's filter: system:masters is never turned away.
		{"system:masters", 1, 1, AuthOptions{TokenAuthFile: tokens}, "admin-token", holdRead, []probe{
			{testRequest{"GET", widgets + "/w", ""}, 429, "bob-token"},
			{testRequest{"GET", widgets + "/w", ""}, 200, "admin-token"},
		}},
		// As DefaultBuildHandlerChain orders its filters: authentication, the limit, then authorization. A
		// request that would be forbidden is turned away by the limit first; one that fails authentication
		// never reaches it.
		{"authorization inside the limit", 1, 1, AuthOptions{TokenAuthFile: tokens, AuthorizationMode: AuthorizationABAC, AuthorizationPolicyFile: policy}, "carol-token", holdWrite, []probe{
			{testRequest{"POST", widgets, widget("v1", "y")}, 429, "bob-token"},
			{testRequest{"POST", widgets, widget("v1", "y")}, 401, "no-such-token"},
			{testRequest{"GET", widgets + "/w", ""}, 200, "bob-token"},
		}},
		{"no read limit", 0, 1, AuthOptions{}, "", holdRead, []probe{
			{testRequest{"GET", widgets + "/w", ""}, 200, ""},
			{testRequest{"GET", "/version", ""}, 200, ""},
		}},
		{"no limits", 0, 0, AuthOptions{}, "", holdWrite, []probe{
			{testRequest{"POST", widgets, widget("v1", "z")}, 201, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHandler(Options{MaxRequestsInFlight: tc.readOnly, MaxMutatingRequestsInFlight: tc.mutating, Auth: tc.auth, Site: site})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			srv := httptest.NewServer(h)
			defer srv.Close()
			for _, r := range []testRequest{
				{"POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd},
				{"POST", widgets, widget("v1", "w")},
			} {
				if code, _, body := r.do(t, srv.URL, tc.token); code != 201 {
					t.Fatalf("%s %s: %d %s", r.method, r.path, code, body)
				}
			}
			held := make(chan int)
			go func() {
				code, _, _ := tc.hold.send(srv.URL, tc.token)
				held <- code
			}()
			<-entered // the held request is in the webhook, and in flight
			for _, p := range tc.probes {
				code, header, body := p.do(t, srv.URL, p.token)
				if code != p.want {
					t.Errorf("%s %s: %d, want %d\n%s", p.method, p.path, code, p.want, body)
					continue
				}
				if code != 429 {
					continue
				}
				for k, v := range tooManyRequests.header {
					if got := header.Get(k); got != v {
						t.Errorf("%s %s: %s %q, want %q", p.method, p.path, k, got, v)
					}
				}
				if body != tooManyRequests.body {
					t.Errorf("%s %s: body %q, want %q", p.method, p.path, body, tooManyRequests.body)
				}
			}
			release <- struct{}{}
			<-held
			// Its place is free again.
			again := testRequest{"GET", widgets + "/w", ""}
			if tc.hold.method != "GET" {
				again = testRequest{"POST", widgets, widget("v1", "after")}
			}
			if code, _, body := again.do(t, srv.URL, tc.token); code >= 400 {
				t.Errorf("after the held request: %s %s: %d %s", again.method, again.path, code, body)
			}
		})
	}
}

// TestMaxInFlightNegative: negative limits are refused with kube-apiserver's messages.
func TestMaxInFlightNegative(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{MaxRequestsInFlight: -1}, "--max-requests-inflight can not be negative value"},
		{Options{MaxMutatingRequestsInFlight: -1}, "--max-mutating-requests-inflight can not be negative value"},
	} {
		if _, err := NewHandler(tc.opts); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// testRequest is one HTTP request of a test.
type testRequest struct{ method, path, body string }

func (r testRequest) send(base, token string) (int, http.Header, string) {
	req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		return 0, nil, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

func (r testRequest) do(t *testing.T, base, token string) (int, http.Header, string) {
	t.Helper()
	code, header, body := r.send(base, token)
	if code == 0 {
		t.Fatalf("%s %s: %s", r.method, r.path, body)
	}
	return code, header, body
}

// BenchmarkMaxInFlight measures what the in-flight limit adds to a request: a GET of the CRD list and a create
// of a custom resource, without limits and with kube-apiserver's defaults.
func BenchmarkMaxInFlight(b *testing.B) {
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"scope":"Namespaced",
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	for _, bc := range []struct {
		name               string
		readOnly, mutating int
	}{
		{"off", 0, 0},
		{"defaults", DefaultMaxRequestsInFlight, DefaultMaxMutatingRequestsInFlight},
	} {
		h, err := NewHandler(Options{MaxRequestsInFlight: bc.readOnly, MaxMutatingRequestsInFlight: bc.mutating})
		if err != nil {
			b.Fatal(err)
		}
		serve := func(method, path, body string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w
		}
		if w := serve("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd); w.Code != 201 {
			b.Fatalf("CRD: %d %s", w.Code, w.Body)
		}
		b.Run(bc.name+"/get", func(b *testing.B) {
			for b.Loop() {
				if w := serve("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", ""); w.Code != 200 {
					b.Fatalf("%d: %s", w.Code, w.Body)
				}
			}
		})
		i := 0 // across the runs of the sub-benchmark, which share the handler
		b.Run(bc.name+"/create", func(b *testing.B) {
			for b.Loop() {
				i++
				body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w` + strconv.Itoa(i) + `"}}`
				if w := serve("POST", "/apis/example.com/v1/namespaces/default/widgets", body); w.Code != 201 {
					b.Fatalf("%d: %s", w.Code, w.Body)
				}
			}
		})
		h.Close()
	}
}
