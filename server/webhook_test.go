package server

import (
	"context"
	"encoding/pem"
	"io"
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
