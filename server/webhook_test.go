package server

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestHTTPSWebhook(t *testing.T) {
	var gotQuery, gotCT string
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery, gotCT = r.URL.RawQuery, r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "fail") {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		w.Write(append([]byte("echo:"), b...))
	}))
	defer ts.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	u := ts.URL + "/convert"
	cfg := apiextensionsv1.WebhookClientConfig{URL: &u, CABundle: ca}

	out, err := HTTPSWebhook{}.Call(context.Background(), cfg, []byte("hi"))
	if err != nil || string(out) != "echo:hi" {
		t.Fatalf("got %q, %v", out, err)
	}
	if gotQuery != "timeout=30s" || gotCT != "application/json" {
		t.Errorf("query %q, content type %q", gotQuery, gotCT)
	}
	// client-go's wording for a failing webhook, which the engine quotes in its conversion error.
	if _, err := (HTTPSWebhook{}).Call(context.Background(), cfg, []byte("fail")); err == nil || err.Error() != `an error on the server ("boom") has prevented the request from succeeding` {
		t.Errorf("500: %v", err)
	}
	// Without the caBundle the self-signed certificate is not trusted.
	if _, err := (HTTPSWebhook{}).Call(context.Background(), apiextensionsv1.WebhookClientConfig{URL: &u}, nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted: %v", err)
	}
	// A closed loopback port: net/http's error, as the recorded webhook case shows.
	closed := "https://127.0.0.1:1/crdconvert"
	_, err = HTTPSWebhook{}.Call(context.Background(), apiextensionsv1.WebhookClientConfig{URL: &closed}, nil)
	if want := `Post "https://127.0.0.1:1/crdconvert?timeout=30s": dial tcp 127.0.0.1:1: connect: connection refused`; err == nil || err.Error() != want {
		t.Errorf("closed port: %v, want %s", err, want)
	}
}

func TestParseWebhookDestinations(t *testing.T) {
	tests := []struct {
		spec    string
		allowed []string
		refused []string
		err     string
	}{
		{spec: "any", allowed: []string{"127.0.0.1", "10.1.2.3", "169.254.169.254", "::1"}},
		{spec: "loopback", allowed: []string{"127.0.0.1", "127.9.9.9", "::1"}, refused: []string{"10.1.2.3", "169.254.169.254", "::ffff:a01:203"}},
		{spec: "10.0.0.0/8, loopback", allowed: []string{"10.1.2.3", "127.0.0.1"}, refused: []string{"11.0.0.1", "fd00::1"}},
		{spec: "fd00::/8", allowed: []string{"fd00::1"}, refused: []string{"::1", "10.0.0.1"}},
		{spec: "off", refused: []string{"127.0.0.1"}},
		{spec: "", err: "empty"},
		{spec: "intranet", err: `"intranet" is neither a CIDR`},
		{spec: "10.0.0.0/33", err: `"10.0.0.0/33" is neither a CIDR`},
		{spec: "loopback,any", err: `"any" cannot be combined`},
	}
	for _, tt := range tests {
		d, err := ParseWebhookDestinations(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: %v, want %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.spec, err)
		}
		for _, ip := range tt.allowed {
			if d.off || !d.allows(net.ParseIP(ip)) {
				t.Errorf("%q refuses %s", tt.spec, ip)
			}
		}
		for _, ip := range tt.refused {
			if !d.off && d.allows(net.ParseIP(ip)) {
				t.Errorf("%q allows %s", tt.spec, ip)
			}
		}
	}
}

// TestWebhookDestinations: the restriction holds on the address dialled, so a name that resolves to a refused
// address and a redirect to one are refused as the address itself is, with an error that names the flag.
func TestWebhookDestinations(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			// Elsewhere on loopback: only the dial-time check sees where a redirect goes.
			http.Redirect(w, r, "https://127.0.0.2:1/convert", http.StatusTemporaryRedirect)
			return
		}
		w.Write([]byte("converted"))
	}))
	defer ts.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	call := func(spec, url string) ([]byte, error) {
		d, err := ParseWebhookDestinations(spec)
		if err != nil {
			t.Fatal(err)
		}
		return HTTPSWebhook{Destinations: d}.Call(context.Background(), apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: ca}, nil)
	}
	direct := ts.URL + "/convert"
	if out, err := call("loopback", direct); err != nil || string(out) != "converted" {
		t.Fatalf("loopback allowed: %q, %v", out, err)
	}
	tests := []struct{ spec, url, want string }{
		{"10.0.0.0/8", direct, `Post "` + direct + `?timeout=30s": dial tcp 127.0.0.1:` + port + `: address 127.0.0.1 is not an allowed conversion webhook destination (--webhook-destinations=10.0.0.0/8)`},
		{"10.0.0.0/8", "https://localhost:" + port + "/convert", "is not an allowed conversion webhook destination (--webhook-destinations=10.0.0.0/8)"},
		{"127.0.0.1/32", ts.URL + "/redirect", `Post "https://127.0.0.2:1/convert": dial tcp 127.0.0.2:1: address 127.0.0.2 is not an allowed conversion webhook destination (--webhook-destinations=127.0.0.1/32)`},
		{"off", direct, "conversion webhooks are turned off on this server (--webhook-destinations=off): not calling " + direct + "?timeout=30s"},
	}
	for _, tt := range tests {
		_, err := call(tt.spec, tt.url)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s to %s: %v, want %s", tt.spec, tt.url, err, tt.want)
		}
	}
}

// TestWebhookDestinationsThroughAPI: a client who names a refused destination in a CRD's conversion webhook
// gets a conversion error that says why, and the server never connects there.
func TestWebhookDestinationsThroughAPI(t *testing.T) {
	called := false
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true }))
	defer ts.Close()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	d, err := ParseWebhookDestinations("10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(Options{WebhookDestinations: d})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"scope":"Namespaced",
"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"` + ts.URL + `/convert","caBundle":"` + ca + `"}}},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},{"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`
	do := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	if code, body := do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd); code != 201 {
		t.Fatalf("CRD: %d %s", code, body)
	}
	if code, body := do("POST", "/apis/example.com/v1/namespaces/default/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`); code != 201 {
		t.Fatalf("widget: %d %s", code, body)
	}
	code, body := do("GET", "/apis/example.com/v2/namespaces/default/widgets/w", "")
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	want := `dial tcp 127.0.0.1:` + port + `: address 127.0.0.1 is not an allowed conversion webhook destination (--webhook-destinations=10.0.0.0/8)`
	if code != 500 || !strings.Contains(body, want) {
		t.Errorf("GET at v2: %d %s\nwant 500 containing %s", code, body, want)
	}
	if called {
		t.Error("the refused webhook was called")
	}
}
