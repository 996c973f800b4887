package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"crdplay/engine/storage"
	"crdplay/server"
	"crdplay/server/etcdstore"
)

// widgetCRD is the CRD the etcd tests serve: namespaced widgets.example.com whose spec.size defaults to 3, so
// that a read shows the object went through the engine and not only through etcd.
const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"scope":"Namespaced",
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
"properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","default":3}}}}}}}]}}`

const (
	crdsPath    = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"
)

func widget(name string) string {
	return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{}}`
}

// TestReplicas: two servers on one etcd are replicas. A CRD created through one is served by the other at
// once, as are objects, their resourceVersions and their watch events.
func TestReplicas(t *testing.T) {
	needSockets(t)
	ep := startEtcd(t)
	a, b := etcdServer(t, ep), etcdServer(t, ep)

	mustDo(t, "POST", a+crdsPath, widgetCRD, 201)
	start := time.Now()
	for code := 0; code != 200; {
		// B learns of the CRD from its etcd watch, in milliseconds; the bound leaves room for a loaded machine
		// (go test runs packages side by side) and still fails a replica that only catches up by resyncing.
		if time.Since(start) > 5*time.Second {
			t.Fatalf("B still answers %d for widgets 5s after A created the CRD", code)
		}
		code, _ = do(t, "GET", b+widgetsPath, "")
	}
	t.Logf("B served the CRD %v after A created it", time.Since(start).Round(time.Millisecond))

	created := decode(t, mustDo(t, "POST", a+widgetsPath, widget("w1"), 201))
	got := decode(t, mustDo(t, "GET", b+widgetsPath+"/w1", "", 200))
	if got.Metadata.ResourceVersion != created.Metadata.ResourceVersion || got.Spec.Size != 3 {
		t.Errorf("B reads %+v, A created %+v", got, created)
	}
	// An update through B with what A returned succeeds; A's copy is then stale, for A as well.
	updated := decode(t, mustDo(t, "PUT", b+widgetsPath+"/w1",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","resourceVersion":"`+created.Metadata.ResourceVersion+`"},"spec":{"size":5}}`, 200))
	mustDo(t, "PUT", a+widgetsPath+"/w1",
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","resourceVersion":"`+created.Metadata.ResourceVersion+`"},"spec":{"size":6}}`, 409)
	if got := decode(t, mustDo(t, "GET", a+widgetsPath+"/w1", "", 200)); got.Spec.Size != 5 || got.Metadata.ResourceVersion != updated.Metadata.ResourceVersion {
		t.Errorf("A reads %+v after B's update to %+v", got, updated)
	}

	// A watch on B sees a write made through A.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b+widgetsPath+"?watch=1&resourceVersion="+updated.Metadata.ResourceVersion, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	mustDo(t, "POST", a+widgetsPath, widget("w2"), 201)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"type":"ADDED"`) || !strings.Contains(line, `"name":"w2"`) {
		t.Errorf("B's watch: %q, %v; want w2 ADDED", line, err)
	}

	// Deleting the CRD through B stops A from serving it.
	mustDo(t, "DELETE", b+crdsPath+"/widgets.example.com", "", 200)
	start = time.Now()
	for code := 200; code != 404; {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("A still answers %d for widgets after B deleted the CRD", code)
		}
		code, _ = do(t, "GET", a+widgetsPath, "")
	}
}

// TestKillDurability: a server on the embedded etcd killed with SIGKILL in the middle of a stream of creates
// keeps, once restarted on the same data directory, every object it acknowledged, each readable and whole.
func TestKillDurability(t *testing.T) {
	needSockets(t)
	bin := buildServer(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	args := []string{"--storage=etcd", "--etcd-embedded", "--data-dir", dataDir}

	first := startProcess(t, bin, args...)
	mustDo(t, "POST", first.url+crdsPath, widgetCRD, 201)
	waitFor(t, first.url+widgetsPath, 200)

	// Several writers, so that the kill finds requests in flight at different stages.
	const writers = 4
	var mu sync.Mutex
	var acked []string
	enough := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("w%d-%d", w, i)
				resp, err := client.Post(first.url+widgetsPath, "application/json", strings.NewReader(widget(name)))
				if err != nil {
					return // the server is gone
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 201 {
					t.Errorf("create %s: %d", name, resp.StatusCode)
					return
				}
				mu.Lock()
				acked = append(acked, name)
				if len(acked) == 200 {
					close(enough)
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Fatal("fewer than 200 creates acknowledged in 60s")
	}
	first.kill(t)
	wg.Wait()
	t.Logf("%d creates acknowledged before SIGKILL", len(acked))

	second := startProcess(t, bin, args...)
	defer second.stop(t)
	_, body := do(t, "GET", second.url+widgetsPath, "")
	var list struct {
		Items []widgetObject `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("list after restart: %v\n%s", err, body)
	}
	listed := map[string]bool{}
	for _, w := range list.Items {
		listed[w.Metadata.Name] = true
	}
	for _, name := range acked {
		if !listed[name] {
			t.Errorf("acknowledged %s is missing after the restart", name)
			continue
		}
		if w := decode(t, mustDo(t, "GET", second.url+widgetsPath+"/"+name, "", 200)); w.Metadata.Name != name || w.Spec.Size != 3 {
			t.Errorf("%s after the restart: %+v", name, w)
		}
	}
	t.Logf("%d listed after the restart", len(list.Items))
	// Besides the acknowledged ones, at most the creates in flight at the kill may have been committed.
	if extra := len(list.Items) - len(acked); extra < 0 || extra > writers {
		t.Errorf("%d objects listed after the restart, %d acknowledged", len(list.Items), len(acked))
	}
}

// TestEtcdUnreachable: a server whose etcd is not there answers within seconds with 503 and a Status saying
// so, serves what needs no storage, and works as soon as an etcd appears at the endpoint.
func TestEtcdUnreachable(t *testing.T) {
	needSockets(t)
	addr := closedPort(t)
	url := etcdServer(t, "http://"+addr)

	mustDo(t, "GET", url+"/version", "", 200)
	var wg sync.WaitGroup
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/apis", ""},
		{"GET", "/apis/example.com/v1", ""},
		{"GET", "/openapi/v3", ""},
		{"GET", crdsPath, ""},
		{"GET", crdsPath + "?watch=1", ""},
		{"GET", crdsPath + "/widgets.example.com", ""},
		{"POST", crdsPath, widgetCRD},
		{"DELETE", crdsPath + "/widgets.example.com", ""},
		{"GET", widgetsPath, ""},
		{"POST", widgetsPath, widget("w1")},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			code, body := do(t, r.method, url+r.path, r.body)
			var status struct{ Kind, Message, Reason string }
			json.Unmarshal(body, &status)
			// Clients learn that etcd is unreachable, not where it is or which key was asked.
			if code != 503 || status.Kind != "Status" || status.Reason != "ServiceUnavailable" || !strings.Contains(status.Message, "etcd") ||
				strings.Contains(status.Message, addr) || strings.Contains(status.Message, "/registry") {
				t.Errorf("%s %s: %d %s, want a 503 Status saying etcd is unreachable, without %s or a key", r.method, r.path, code, body, addr)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("%s %s took %v", r.method, r.path, d)
			}
		}()
	}
	wg.Wait()

	_, stop, err := etcdstore.StartEmbeddedOn(t.TempDir(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	start := time.Now()
	waitFor(t, url+crdsPath, 200)
	t.Logf("serving %v after etcd was ready", time.Since(start).Round(time.Millisecond))
	mustDo(t, "POST", url+crdsPath, widgetCRD, 201)
	waitFor(t, url+widgetsPath, 200)
	mustDo(t, "POST", url+widgetsPath, widget("w1"), 201)
}

func TestNewHandlerEtcdOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts server.Options
		want string
	}{
		{"etcd settings with memory", server.Options{Etcd: server.EtcdOptions{Embedded: true}}, `etcd settings need storage "etcd"`},
		{"compaction with memory", server.Options{Etcd: server.EtcdOptions{CompactionInterval: time.Minute}}, `etcd settings need storage "etcd"`},
		{"nothing", server.Options{Storage: server.StorageEtcd}, "no etcd endpoints, and no embedded etcd"},
		{"both", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Embedded: true, DataDir: "d", Endpoints: []string{"http://127.0.0.1:1"}}}, "not both"},
		{"embedded without data dir", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Embedded: true}}, "needs a data directory"},
		{"data dir without embedded", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{DataDir: "d", Endpoints: []string{"http://127.0.0.1:1"}}}, "a data directory is for the embedded etcd"},
		{"no fsync without embedded", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{UnsafeNoFsync: true, Endpoints: []string{"http://127.0.0.1:1"}}}, "setting of the embedded etcd"},
		{"TLS for embedded", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Embedded: true, DataDir: "d", CAFile: "ca"}}, "TLS files are for etcd endpoints"},
		{"TLS over http", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{"http://127.0.0.1:1"}, CAFile: writeFile(t, "ca.pem", testCA(t))}}, "are http, but TLS is configured"},
		{"missing CA file", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{"https://127.0.0.1:1"}, CAFile: "/no/such/ca.pem"}}, "no such file"},
		{"key without certificate", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{"https://127.0.0.1:1"}, KeyFile: "k"}}, "needs both"},
		{"endpoint without scheme", server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{"127.0.0.1:2379"}}}, "want http://host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := server.NewHandler(tc.opts)
			if err == nil {
				h.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewHandler: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// An etcd that is down is no reason to refuse to start: it may come up later.
	h, err := server.NewHandler(server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{"http://" + closedPort(t)}}})
	if err != nil {
		t.Fatalf("NewHandler with an unreachable etcd: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
	h.Close() // a second Close is harmless
}

// TestCommandUsage: the command refuses bad combinations of storage flags with a message and exit status 2,
// before it starts anything.
func TestCommandUsage(t *testing.T) {
	needSockets(t)
	bin := buildServer(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--etcd-embedded"}, `etcd settings need storage "etcd"`},
		{[]string{"--storage=etcd"}, "no etcd endpoints"},
		{[]string{"--etcd-compaction-interval=1m"}, `etcd settings need storage "etcd"`},
		{[]string{"--storage=etcd", "--etcd-compaction-interval=-1s"}, "--etcd-compaction-interval: -1s is negative"},
		{[]string{"--storage=etcd", "--etcd-embedded"}, "needs a data directory"},
		{[]string{"--storage=etcd", "--etcd-endpoints=http://127.0.0.1:1", "--etcd-embedded", "--data-dir=d"}, "not both"},
		{[]string{"--storage=etcd", "--etcd-endpoints=https://127.0.0.1:1", "--etcd-certfile=c"}, "needs both"},
		{[]string{"--storage=etcd", "--etcd-endpoints=http://127.0.0.1:1", "--etcd-unsafe-no-fsync"}, "setting of the embedded etcd"},
		{[]string{"--storage=mysql"}, `unsupported storage "mysql"`},
		{[]string{"--client-ca-file=ca.crt"}, "--client-ca-file needs TLS serving (--tls-cert-file)"},
		{[]string{"--tls-cert-file=tls.crt"}, "--tls-cert-file and --tls-private-key-file go together"},
		{[]string{"--tls-cert-file=/nonexistent/tls.crt", "--tls-private-key-file=/nonexistent/tls.key"}, "--tls-cert-file: serving certificate:"},
		{[]string{"--token-auth-file=/nonexistent/tokens.csv"}, "--token-auth-file: open /nonexistent/tokens.csv"},
		{[]string{"--authorization-mode=RBAC"}, `unknown authorization mode "RBAC"`},
		{[]string{"--authorization-mode=ABAC"}, "--authorization-mode=ABAC needs --authorization-policy-file"},
		{[]string{"--anonymous-auth=false"}, "every request would be refused"},
		{[]string{"--webhook-destinations=intranet"}, `--webhook-destinations: "intranet" is neither a CIDR`},
	} {
		cmd := exec.Command(bin, append([]string{"--addr=127.0.0.1:0"}, tc.args...)...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("crdplay-server %v: exit %d (%v), output:\n%s\nwant exit 2 and %q", tc.args, code, err, out, tc.want)
		}
	}
}

// ---------------------------------------------------------------- helpers

type widgetObject struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		Size int `json:"size"`
	} `json:"spec"`
}

func decode(t *testing.T, body []byte) widgetObject {
	t.Helper()
	var w widgetObject
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return w
}

// needSockets skips tests that listen on loopback or run processes where a test cannot (js/wasm).
func needSockets(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skipf("no sockets or processes under %s", runtime.GOOS)
	}
}

// startEtcd starts an embedded etcd for the test and returns its client URL.
func startEtcd(t *testing.T) string {
	t.Helper()
	ep, stop, err := etcdstore.StartEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return ep
}

// wipeEtcd deletes every key in the etcd at endpoint.
func wipeEtcd(t *testing.T, endpoint string) {
	t.Helper()
	ctx := context.Background()
	s, err := etcdstore.New(etcdstore.Config{Endpoints: []string{endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.List(ctx, "", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Items {
		if _, err := s.Delete(ctx, o.Key, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// etcdServer serves a handler on the etcd at endpoint and returns its URL.
func etcdServer(t *testing.T, endpoint string) string {
	t.Helper()
	h, err := server.NewHandler(server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{endpoint}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		h.Close()
	})
	return srv.URL
}

func do(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp.StatusCode, b
}

func mustDo(t *testing.T, method, url, body string, want int) []byte {
	t.Helper()
	code, b := do(t, method, url, body)
	if code != want {
		t.Fatalf("%s %s: %d, want %d\n%s", method, url, code, want, b)
	}
	return b
}

// waitFor polls url until it answers want, for up to 30s.
func waitFor(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: no %d within 30s (last: %v)", url, want, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testCA returns a self-signed CA certificate in PEM.
func testCA(t *testing.T) string {
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
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// serverBuild is the crdplay-server binary the tests build once per test binary.
var serverBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// buildServer builds cmd/crdplay-server, once, and returns the binary.
func buildServer(t *testing.T) string {
	t.Helper()
	serverBuild.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		if serverBuild.dir, serverBuild.err = os.MkdirTemp("", "crdplay-server-test-"); serverBuild.err != nil {
			return
		}
		serverBuild.path = filepath.Join(serverBuild.dir, "crdplay-server")
		out, err := exec.Command(goTool, "build", "-o", serverBuild.path, "crdplay/server/cmd/crdplay-server").CombinedOutput()
		if err != nil {
			serverBuild.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if serverBuild.err != nil {
		t.Fatal(serverBuild.err)
	}
	return serverBuild.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if serverBuild.dir != "" {
		os.RemoveAll(serverBuild.dir)
	}
	os.Exit(code)
}

// process is a running crdplay-server.
type process struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	done   chan struct{}
}

// startProcess runs the server binary on a free loopback port and waits until it serves.
func startProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	addr := closedPort(t)
	p := &process{url: "http://" + addr, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"--addr", addr}, args...)...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill() // by its own PID; a no-op if it has exited
		<-p.done
		if t.Failed() {
			t.Logf("server %s stderr:\n%s", p.url, p.stderr)
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(p.url + "/version")
		if err == nil {
			resp.Body.Close()
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("server exited: %v\n%s", p.cmd.ProcessState, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not serving after 60s\n%s", p.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL: no shutdown code runs, in the server or in its embedded etcd.
func (p *process) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// stop sends SIGTERM and expects a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("server did not stop within 30s of SIGTERM")
	}
	if !p.cmd.ProcessState.Success() {
		t.Errorf("server exited with %v after SIGTERM\n%s", p.cmd.ProcessState, p.stderr)
	}
}
