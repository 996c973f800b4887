package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// TestDeployExample runs the command with the arguments of deploy/kubernetes.yaml's container, its Secrets'
// files made up in a temporary directory and its etcd unreachable: the example's set-up must start, serve
// HTTPS, refuse a request without a token with 401, take the token, and keep the probes public.
func TestDeployExample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "kubernetes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var doc struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct{ Args []string }
					}
				}
			}
		}
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if doc.Kind == "Deployment" {
			args = doc.Spec.Template.Spec.Containers[0].Args
		}
	}
	for _, want := range []string{"--tls-cert-file=", "--token-auth-file=", "--webhook-destinations=off"} {
		if !strings.Contains(strings.Join(args, " "), want) {
			t.Errorf("the Deployment's arguments lack %s: %q", want, args)
		}
	}

	// The Secrets' files: a serving certificate, the etcd client's CA and certificate, the tokens.
	dir := t.TempDir()
	caPEM, caCert, caKey := selfSignedCA(t)
	servingCert, servingKey := issueCert(t, caCert, caKey, true)
	etcdCert, etcdKey := issueCert(t, caCert, caKey, false)
	files := map[string]string{
		"/etc/crdplay/tls/tls.crt":     string(servingCert),
		"/etc/crdplay/tls/tls.key":     string(servingKey),
		"/etc/crdplay/auth/tokens.csv": "s3cret,alice,1000,\"editors\"\n",
		"/etc/crdplay/etcd/ca.crt":     string(caPEM),
		"/etc/crdplay/etcd/tls.crt":    string(etcdCert),
		"/etc/crdplay/etcd/tls.key":    string(etcdKey),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := ln.Addr().String()
	ln.Close()
	var run []string
	for _, a := range args {
		name, value, _ := strings.Cut(a, "=")
		if content, ok := files[value]; ok {
			p := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(value, "/"), "/", "_"))
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			a = name + "=" + p
		}
		if name == "--etcd-endpoints" {
			a = name + "=https://" + unreachable
		}
		run = append(run, a)
	}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(os.Args[0], append([]string{"--addr", addr, "--site", ""}, run...)...)
	cmd.Env = append(os.Environ(), envRunMain+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill() // by its own PID
		<-done
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr.String())
		}
	})

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 10 * time.Second}
	get := func(path, token string) (int, error) {
		req, _ := http.NewRequest("GET", "https://"+addr+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Wait for it to serve (the probes' path), giving up after 30 s.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if code, err := get("/livez?exclude=etcd", ""); err == nil {
			if code != 200 {
				t.Fatalf("/livez?exclude=etcd: %d", code)
			}
			break
		}
		select {
		case <-done:
			t.Fatalf("server exited: %v", cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("server not serving HTTPS after 30s")
		}
	}
	if code, err := get("/apis", ""); err != nil || code != 401 {
		t.Errorf("/apis without a token: %d %v, want 401", code, err)
	}
	if code, err := get("/version", "s3cret"); err != nil || code != 200 {
		t.Errorf("/version with the token: %d %v, want 200", code, err)
	}
}

func selfSignedCA(t *testing.T) ([]byte, *x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert, key
}

// issueCert issues a serving certificate for 127.0.0.1 (server) or a client certificate.
func issueCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "crdplay"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
