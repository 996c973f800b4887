package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"crdplay/server"
)

// serveTLS serves NewHandler(opts) over TLS with the certificate files in dir until the test ends.
func serveTLS(t *testing.T, opts server.Options, certFile, keyFile string) string {
	t.Helper()
	h, err := server.NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := h.TLSConfig(ctx, certFile, keyFile)
	if err != nil {
		cancel()
		h.Close()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		h.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- server.ServeTLS(ctx, ln, h, time.Second, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("ServeTLS: %v", err)
		}
		h.Close()
	})
	return "https://" + ln.Addr().String()
}

// tlsClient trusts ca and presents the client certificate, if any; it opens a connection per request, so
// that each one sees the certificate served at that moment.
func tlsClient(t *testing.T, ca []byte, certPEM, keyPEM []byte) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("bad CA")
	}
	cfg := &tls.Config{RootCAs: pool}
	if certPEM != nil {
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true, ForceAttemptHTTP2: true}, Timeout: 30 * time.Second}
}

func send(t *testing.T, c *http.Client, method, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestTLSReload: the server serves the certificate of its files, and a renewed one once the files are
// replaced, without a restart, as kube-apiserver's dynamic serving certificates do.
func TestTLSReload(t *testing.T) {
	needSockets(t)
	pki := newTestPKI(t, "serving CA")
	dir := t.TempDir()
	cert1, key1, serial1 := pki.issue(t, "crdplay", nil, true)
	files := writeFiles(t, dir, "tls.crt", string(cert1), "tls.key", string(key1))
	base := serveTLS(t, server.Options{}, files[0], files[1])
	client := tlsClient(t, pki.pem, nil, nil)

	resp, body := send(t, client, "GET", base+"/readyz", "")
	if resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("/readyz: %d %s", resp.StatusCode, body)
	}
	if got := resp.TLS.PeerCertificates[0].SerialNumber.Int64(); got != serial1 {
		t.Fatalf("serving certificate %d, want %d", got, serial1)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("served over %s; kube-apiserver offers HTTP/2", resp.Proto)
	}

	cert2, key2, serial2 := pki.issue(t, "crdplay", nil, true)
	writeFiles(t, dir, "tls.crt", string(cert2), "tls.key", string(key2))
	// The files are watched; give up (not a timing assertion) long after any watch would have fired.
	var got int64
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, _ := send(t, client, "GET", base+"/readyz", "")
		if got = resp.TLS.PeerCertificates[0].SerialNumber.Int64(); got == serial2 {
			return
		}
	}
	t.Fatalf("still serving certificate %d after the files changed to %d", got, serial2)
}

// TestTLSClientCertificates: with --client-ca-file, a client certificate signed by that CA authenticates its
// CN as the user and its O as groups; one signed by another CA does not; a client without one can still use a
// token. Anonymous requests get upstream's 401. The CA file is read again when it changes.
func TestTLSClientCertificates(t *testing.T) {
	needSockets(t)
	servingCA, clientCA, otherCA := newTestPKI(t, "serving CA"), newTestPKI(t, "client CA"), newTestPKI(t, "other CA")
	dir := t.TempDir()
	cert, key, _ := servingCA.issue(t, "crdplay", nil, true)
	files := writeFiles(t, dir, "tls.crt", string(cert), "tls.key", string(key), "client-ca.crt", string(clientCA.pem),
		"tokens.csv", testTokens, "policy.jsonl", testPolicy)
	opts := server.Options{Auth: server.AuthOptions{ClientCAFile: files[2], TokenAuthFile: files[3],
		AuthorizationMode: server.AuthorizationABAC, AuthorizationPolicyFile: files[4]}}
	base := serveTLS(t, opts, files[0], files[1])

	bobCert, bobKey, _ := clientCA.issue(t, "bob", []string{"dev"}, false)
	mastersCert, mastersKey, _ := clientCA.issue(t, "root", []string{"system:masters"}, false)
	strangerCert, strangerKey, _ := otherCA.issue(t, "alice", []string{"system:masters"}, false)
	tests := []struct {
		name      string
		cert, key []byte
		method    string
		body      string
		code      int
		want      string
	}{
		{"no certificate", nil, nil, "GET", "", 401, unauthorized},
		{"certificate of another CA", strangerCert, strangerKey, "GET", "", 401, unauthorized},
		{"bob reads", bobCert, bobKey, "GET", "", 200, ""},
		{"bob may not write (his CN is the user)", bobCert, bobKey, "POST", testCRD, 403, forbiddenCRDCreate("bob", "abac: No policy matched.")},
		{"system:masters from the certificate's O", mastersCert, mastersKey, "POST", testCRD, 201, ""},
	}
	for _, tt := range tests {
		resp, body := send(t, tlsClient(t, servingCA.pem, tt.cert, tt.key), tt.method, base+crdsPath, tt.body)
		if resp.StatusCode != tt.code {
			t.Errorf("%s: %d, want %d: %s", tt.name, resp.StatusCode, tt.code, body)
			continue
		}
		if tt.want != "" && strings.TrimSpace(body) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, body, tt.want)
		}
	}
	// A renewed client CA is read again: certificates it signs authenticate, those of the old one no longer do.
	newCA := newTestPKI(t, "client CA 2")
	writeFiles(t, dir, "client-ca.crt", string(newCA.pem))
	carolCert, carolKey, _ := newCA.issue(t, "carol", []string{"system:masters"}, false)
	code := 0
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		// Give up (not a timing assertion) long after the file watch would have fired.
		resp, _ := send(t, tlsClient(t, servingCA.pem, carolCert, carolKey), "GET", base+crdsPath, "")
		if code = resp.StatusCode; code == 200 {
			break
		}
	}
	if code != 200 {
		t.Fatalf("a certificate of the renewed client CA: %d", code)
	}
	if resp, body := send(t, tlsClient(t, servingCA.pem, bobCert, bobKey), "GET", base+crdsPath, ""); resp.StatusCode != 401 {
		t.Errorf("a certificate of the replaced client CA: %d %s", resp.StatusCode, body)
	}

	// A token works over the same TLS port without a certificate.
	req, _ := http.NewRequest("GET", base+crdsPath, nil)
	req.Header.Set("Authorization", "Bearer bob-token")
	resp, err := tlsClient(t, servingCA.pem, nil, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("token over TLS: %d", resp.StatusCode)
	}
}

// TestKubectlTLS: upstream kubectl, given a kubeconfig with the server's CA and a token or a client
// certificate, works against the TLS server; with a token the server does not know, it reports what it
// reports for kube-apiserver's 401.
func TestKubectlTLS(t *testing.T) {
	needSockets(t)
	if testing.Short() {
		t.Skip("builds kubectl")
	}
	kubectl := buildKubectl(t)
	servingCA, clientCA := newTestPKI(t, "serving CA"), newTestPKI(t, "client CA")
	dir := t.TempDir()
	cert, key, _ := servingCA.issue(t, "crdplay", nil, true)
	files := writeFiles(t, dir, "tls.crt", string(cert), "tls.key", string(key), "client-ca.crt", string(clientCA.pem),
		"tokens.csv", testTokens)
	opts := server.Options{Auth: server.AuthOptions{ClientCAFile: files[2], TokenAuthFile: files[3]}}
	base := serveTLS(t, opts, files[0], files[1])

	userCert, userKey, _ := clientCA.issue(t, "carol", []string{"dev"}, false)
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: crdplay
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: token
  user:
    token: alice-token
- name: cert
  user:
    client-certificate-data: %s
    client-key-data: %s
- name: nobody
  user:
    token: no-such-token
contexts:
- {name: token, context: {cluster: crdplay, user: token}}
- {name: cert, context: {cluster: crdplay, user: cert}}
- {name: nobody, context: {cluster: crdplay, user: nobody}}
current-context: token
`, base, b64(servingCA.pem), b64(userCert), b64(userKey))
	kcFile := writeFiles(t, dir, "kubeconfig", kubeconfig)[0]

	home := t.TempDir()
	run := func(args ...string) (string, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kcFile, "--cache-dir", filepath.Join(home, "cache")}, args...)...)
		cmd.Dir = filepath.Join("testdata", "kubectl")
		cmd.Env = []string{"HOME=" + home, "KUBERC=off", "PATH=" + os.Getenv("PATH")}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exitErr *exec.ExitError
		switch {
		case err == nil:
			return stdout.String(), stderr.String(), 0
		case errors.As(err, &exitErr) && ctx.Err() == nil:
			return stdout.String(), stderr.String(), exitErr.ExitCode()
		}
		t.Fatalf("kubectl %v: %v\n%s", args, err, &stderr)
		return "", "", 0
	}
	tests := []struct {
		args           []string
		stdout, stderr string
		exit           int
	}{
		{[]string{"--context", "token", "get", "crd"}, "", "No resources found\n", 0},
		{[]string{"--context", "cert", "create", "-f", "crontab-crd.yaml"}, "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n", "", 0},
		{[]string{"--context", "token", "get", "crd", "-o", "name"}, "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com\n", "", 0},
		{[]string{"--context", "nobody", "get", "crd"}, "", "error: You must be logged in to the server (Unauthorized)\n", 1},
	}
	for _, tt := range tests {
		stdout, stderr, exit := run(tt.args...)
		if stdout != tt.stdout || stderr != tt.stderr || exit != tt.exit {
			t.Errorf("kubectl %s: exit %d\nstdout: %q\nstderr: %q\nwant exit %d\nstdout: %q\nstderr: %q",
				strings.Join(tt.args, " "), exit, stdout, stderr, tt.exit, tt.stdout, tt.stderr)
		}
	}
}
