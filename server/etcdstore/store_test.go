package etcdstore

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"crdplay/engine/storage"
	"crdplay/engine/storage/storagetest"
)

// endpoint is the embedded etcd that every test of the package shares (TestMain starts it): starting one takes
// about a second, and the tests keep apart through key prefixes.
var endpoint string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "etcdstore-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ep, stop, err := StartEmbedded(dir)
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	endpoint = ep
	code := m.Run()
	stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

var prefixes atomic.Int64

// newStore returns a store of its own on the shared etcd: its keys live under a prefix no other test uses.
func newStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	if cfg.Endpoints == nil {
		cfg.Endpoints = []string{endpoint}
	}
	if cfg.Prefix == "" {
		cfg.Prefix = fmt.Sprintf("/test%d", prefixes.Add(1))
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface { return newStore(t, Config{}) })
}

// TestKeysAndRevisions: objects are where kube-apiserver keeps them, readable with etcdctl, and an object's
// revision is its key's ModRevision.
func TestKeysAndRevisions(t *testing.T) {
	ctx := context.Background()
	key := fmt.Sprintf("/registry/example.com/widgets/ns/w%d", time.Now().UnixNano())
	s, err := New(Config{Endpoints: []string{endpoint}}) // no prefix, as the server uses it
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rev, err := s.Create(ctx, key, []byte(`{"kind":"Widget"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != `{"kind":"Widget"}` || resp.Kvs[0].ModRevision != rev {
		t.Errorf("etcd holds %v at %s, want the value at ModRevision %d", resp.Kvs, key, rev)
	}
}

// TestPrefix: stores with different prefixes share an etcd without seeing each other's keys or events.
func TestPrefix(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := newStore(t, Config{}), newStore(t, Config{})
	ch, err := b.Watch(ctx, "/registry/", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create(ctx, "/registry/x", []byte("a's")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "/registry/x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("b sees a's key: %v", err)
	}
	rev, err := b.Create(ctx, "/registry/x", []byte("b's"))
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-ch; ev.Object.Revision != rev || string(ev.Object.Value) != "b's" || ev.Object.Key != "/registry/x" {
		t.Errorf("b's watch: first event %+v, want b's own create", ev)
	}
}

// TestCompaction: a watch from a revision etcd has compacted fails with ErrCompacted (the engine's 410 Gone),
// while one from the compaction revision on still replays.
func TestCompaction(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newStore(t, Config{})
	first, err := s.Create(ctx, "/registry/a", []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	rev := first
	for i := 1; i <= 3; i++ {
		if rev, err = s.Update(ctx, "/registry/a", []byte(fmt.Sprint(i)), rev); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.client.Compact(ctx, rev-1); err != nil {
		t.Fatal(err)
	}
	_, err = s.Watch(ctx, "/registry/", first)
	var ce *storage.CompactedError
	if !errors.As(err, &ce) || ce.Revision != first || ce.Compacted != rev-1 {
		t.Errorf("Watch from compacted revision %d: %v, want a CompactedError at %d", first, err, rev-1)
	}
	if _, err := s.List(ctx, "/registry/", storage.ListOptions{Revision: first}); !errors.As(err, &ce) || ce.Compacted != rev-1 {
		t.Errorf("List at compacted revision %d: %v, want a CompactedError at %d", first, err, rev-1)
	}
	if res, err := s.List(ctx, "/registry/", storage.ListOptions{Revision: rev - 1}); err != nil || len(res.Items) != 1 || string(res.Items[0].Value) != "2" {
		t.Errorf("List at the compaction revision: %+v, %v", res, err)
	}
	ch, err := s.Watch(ctx, "/registry/", rev-1)
	if err != nil {
		t.Fatalf("Watch from the compaction revision: %v", err)
	}
	if ev := <-ch; ev.Object.Revision != rev || string(ev.Prev) != "2" {
		t.Errorf("replay after compaction: %+v, want revision %d with Prev 2", ev, rev)
	}
}

// TestListChunks: a list longer than one etcd request reads at one revision and pages as a short one does.
func TestListChunks(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Config{})
	const n = listChunk*2 + 10
	ops := make([]clientv3.Op, 0, 100)
	for i := 0; i < n; i++ {
		ops = append(ops, clientv3.OpPut(fmt.Sprintf("/registry/k%05d", i), "v"))
		if len(ops) == cap(ops) || i == n-1 {
			if _, err := s.kv.Txn(ctx).Then(ops...).Commit(); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	res, err := s.List(ctx, "/registry/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != n || res.More || res.Items[n-1].Key != fmt.Sprintf("/registry/k%05d", n-1) {
		t.Errorf("List: %d items, More %v; want %d", len(res.Items), res.More, n)
	}
	page, err := s.List(ctx, "/registry/", storage.ListOptions{Limit: listChunk + 5, StartKey: "/registry/k00002"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != listChunk+5 || !page.More || page.Items[0].Key != "/registry/k00003" {
		t.Errorf("page: %d items from %s, More %v", len(page.Items), page.Items[0].Key, page.More)
	}
}

// cancellingKV cancels its caller's context once a read has been answered, as a deadline passing while the
// first chunk of a list is read.
type cancellingKV struct {
	clientv3.KV
	cancel context.CancelFunc
	gets   int
}

func (kv *cancellingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	kv.gets++
	resp, err := kv.KV.Get(ctx, key, opts...)
	kv.cancel()
	return resp, err
}

// TestListStopsWhenCancelled: a list whose caller gives up while it is read (its deadline passes, its client
// goes away) requests no further chunk and fails with the context's error, over gRPC and in the process.
func TestListStopsWhenCancelled(t *testing.T) {
	root, _, err := OpenEmbedded(t.TempDir(), false, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		name  string
		store func() *Store
	}{
		{"grpc", func() *Store { return newStore(t, Config{}) }},
		{"in-process", func() *Store {
			return storeOn(root.client, Config{Prefix: fmt.Sprintf("/inprocess%d", prefixes.Add(1))}, true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.store()
			const n = listChunk*3 + 10
			ops := make([]clientv3.Op, 0, 100)
			for i := 0; i < n; i++ {
				ops = append(ops, clientv3.OpPut(fmt.Sprintf("/registry/k%05d", i), "v"))
				if len(ops) == cap(ops) || i == n-1 {
					if _, err := s.kv.Txn(context.Background()).Then(ops...).Commit(); err != nil {
						t.Fatal(err)
					}
					ops = ops[:0]
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			kv := &cancellingKV{KV: s.kv, cancel: cancel}
			s.kv = kv
			_, err := s.List(ctx, "/registry/", storage.ListOptions{})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("List: %v, want the context's error", err)
			}
			if kv.gets != 1 {
				t.Errorf("%d chunks requested, want 1 (the one during which the caller gave up)", kv.gets)
			}
		})
	}
}

// TestUnavailable: with nothing listening at the endpoint, every method fails with ErrUnavailable after the
// request timeout, and at once after that; the message says which etcd did not answer.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ep := "http://" + closedPort(t)
	// The bounds below leave seconds of slack for a loaded machine (go test runs packages side by side) yet
	// still tell the request timeout from the dial timeout, and waiting from failing at once.
	const timeout = 2 * time.Second
	var log syncBuffer
	s := newStore(t, Config{Endpoints: []string{ep}, RequestTimeout: timeout, DialTimeout: 30 * time.Second,
		Log: slog.New(slog.NewTextHandler(&log, nil))})
	calls := map[string]func() error{
		"Get":    func() error { _, err := s.Get(ctx, "/registry/a"); return err },
		"List":   func() error { _, err := s.List(ctx, "/registry/", storage.ListOptions{}); return err },
		"Create": func() error { _, err := s.Create(ctx, "/registry/a", nil); return err },
		"Update": func() error { _, err := s.Update(ctx, "/registry/a", nil, 1); return err },
		"Delete": func() error { _, err := s.Delete(ctx, "/registry/a", 0); return err },
		"Watch":  func() error { _, err := s.Watch(ctx, "/registry/", 0); return err },
	}
	check := func(t *testing.T, call func() error, max time.Duration) {
		start := time.Now()
		err := call()
		if d := time.Since(start); d > max {
			t.Errorf("took %v, want at most %v", d, max)
		}
		// The text reaches API clients: it says etcd is unreachable, not where etcd is or which key was asked.
		if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), "etcd") ||
			strings.Contains(err.Error(), strings.TrimPrefix(ep, "http://")) || strings.Contains(err.Error(), "/registry") {
			t.Errorf("%q, want ErrUnavailable saying etcd is unreachable, without %s or the key", err, ep)
		}
	}
	t.Run("first", func(t *testing.T) {
		for name, call := range calls {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				check(t, call, timeout+8*time.Second)
			})
		}
	})
	t.Run("then", func(t *testing.T) {
		for name, call := range calls {
			t.Run(name, func(t *testing.T) { check(t, call, timeout/2) })
		}
	})
	// At least the first request to wait in vain is logged (the others may have failed at once after it).
	if !strings.Contains(log.String(), ep) || !strings.Contains(log.String(), "key=/registry/") {
		t.Errorf("the log does not name the endpoint and the key:\n%s", log.String())
	}
	// A caller that gives up is not told that etcd is down.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Get(cctx, "/registry/a"); errors.Is(err, storage.ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestReconnect: a store created while etcd is down works once etcd is up, without being recreated.
func TestReconnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr := closedPort(t)
	s := newStore(t, Config{Endpoints: []string{"http://" + addr}, RequestTimeout: 500 * time.Millisecond})
	if _, err := s.Get(ctx, "/registry/a"); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("before etcd: %v", err)
	}
	// Long enough for the client's reconnect backoff to reach its cap.
	time.Sleep(3 * time.Second)
	_, stop, err := StartEmbeddedOn(t.TempDir(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	start := time.Now()
	for {
		_, err := s.Create(ctx, "/registry/a", []byte("v"))
		if err == nil {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("still failing %v after etcd started: %v", time.Since(start), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("first success %v after etcd was ready", time.Since(start).Round(time.Millisecond))
}

func TestNewRejects(t *testing.T) {
	tlsCfg, err := LoadTLS("", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no endpoints"},
		{Config{Endpoints: []string{"127.0.0.1:2379"}}, "want http://host:port or https://host:port"},
		{Config{Endpoints: []string{"unix:///tmp/etcd"}}, "want http://host:port"},
		{Config{Endpoints: []string{"http://a:2379", "https://b:2379"}}, "mix http and https"},
		{Config{Endpoints: []string{"http://a:2379"}, TLS: tlsCfg}, "are http, but TLS is configured"},
	} {
		s, err := New(tc.cfg)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
}

func TestStartEmbeddedRejects(t *testing.T) {
	for _, tc := range []struct{ dir, addr, want string }{
		{"", "127.0.0.1:0", "no data directory"},
		{t.TempDir(), "0.0.0.0:0", "not a loopback IP address"},
		{t.TempDir(), "localhost:0", "not a loopback IP address"},
		{t.TempDir(), "127.0.0.1", "missing port"},
	} {
		_, stop, err := StartEmbeddedOn(tc.dir, tc.addr)
		if err == nil {
			stop()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("StartEmbeddedOn(%q, %q): %v, want an error containing %q", tc.dir, tc.addr, err, tc.want)
		}
	}
}

// TestTLS: a store reaches an etcd that requires client certificates with LoadTLS's configuration, and one
// without the client certificate is refused with ErrUnavailable.
func TestTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	ca, caKey := writeCert(t, dir, "ca", nil, nil)
	writeCert(t, dir, "server", ca, caKey)
	writeCert(t, dir, "client", ca, caKey)
	f := func(name string) string { return filepath.Join(dir, name) }

	cfg, err := embeddedConfig(filepath.Join(dir, "etcd"), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg.ListenClientUrls {
		cfg.ListenClientUrls[i].Scheme = "https"
		cfg.AdvertiseClientUrls[i].Scheme = "https"
	}
	cfg.ClientTLSInfo.CertFile, cfg.ClientTLSInfo.KeyFile = f("server.crt"), f("server.key")
	cfg.ClientTLSInfo.TrustedCAFile, cfg.ClientTLSInfo.ClientCertAuth = f("ca.crt"), true
	ep, stop, err := startEmbedded(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	tlsCfg, err := LoadTLS(f("ca.crt"), f("client.crt"), f("client.key"))
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(t, Config{Endpoints: []string{ep}, TLS: tlsCfg})
	if _, err := s.Create(ctx, "/registry/a", []byte("over TLS")); err != nil {
		t.Fatalf("Create over TLS: %v", err)
	}
	if o, err := s.Get(ctx, "/registry/a"); err != nil || string(o.Value) != "over TLS" {
		t.Errorf("Get over TLS: %q, %v", o.Value, err)
	}

	noCert, err := LoadTLS(f("ca.crt"), "", "")
	if err != nil {
		t.Fatal(err)
	}
	anon := newStore(t, Config{Endpoints: []string{ep}, TLS: noCert, RequestTimeout: time.Second})
	if _, err := anon.Get(ctx, "/registry/a"); !errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("Get without a client certificate: %v, want ErrUnavailable", err)
	}

	for _, tc := range []struct{ ca, cert, key, want string }{
		{f("missing.crt"), "", "", "no such file"},
		{f("server.key"), "", "", "no PEM certificate"},
		{"", f("client.crt"), "", "needs both"},
		{"", f("client.crt"), f("server.key"), "private key does not match"},
	} {
		if _, err := LoadTLS(tc.ca, tc.cert, tc.key); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadTLS(%q, %q, %q): %v, want %q", tc.ca, tc.cert, tc.key, err, tc.want)
		}
	}
}

// ---------------------------------------------------------------- helpers

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// writeCert writes name.crt and name.key in dir: a CA if parent is nil, else a certificate for 127.0.0.1
// signed by it, usable by servers and clients.
func writeCert(t *testing.T, dir, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign
		parent, parentKey = tmpl, key
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(file, typ string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, file), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(name+".crt", "CERTIFICATE", der)
	write(name+".key", "EC PRIVATE KEY", keyDER)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// TestServerErrorText: an error etcd reports reaches the caller in the words kube-apiserver answers with (an
// object over etcd's request limit: "etcdserver: request is too large"; over the etcd client's send limit, the
// whole gRPC status, which names the size of the transaction), without the endpoint or the key, which only the
// log gets. The memory store words the refusals as the real server does (recorded from the oracle in
// testdata/oracle-api/object-size), so the transactions here must count the same bytes as kube-apiserver's.
func TestServerErrorText(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	// The prefix is part of every key etcd is sent, so the memory store is given the prefixed keys.
	prefix := fmt.Sprintf("/errors%d", prefixes.Add(1))
	s := newStore(t, Config{Prefix: prefix, Log: slog.New(slog.NewTextHandler(&log, nil))})
	checkErrorText(t, s, prefix)
	if !strings.Contains(log.String(), endpoint) || !strings.Contains(log.String(), "/registry/big") {
		t.Errorf("the log does not name the endpoint and the key:\n%s", log.String())
	}
}

// checkErrorText checks that writes too large for etcd or its client fail on s (whose keys have prefix) with
// the memory store's errors for the same writes, which are the real server's.
func checkErrorText(t *testing.T, s *Store, prefix string) {
	ctx := context.Background()
	// Above etcd's default request limit (1.5 MiB), below the client's send limit (2 MiB).
	big := make([]byte, 1600*1024)
	// Above the client's send limit.
	huge := make([]byte, 2100*1024)
	mem := storage.NewMemory()
	// create and update return the store's error and the memory store's for the same write of value at key.
	create := func(key string, value []byte) func() (error, error) {
		return func() (error, error) {
			_, err := s.Create(ctx, key, value)
			_, want := mem.Create(ctx, prefix+key, value)
			return err, want
		}
	}
	update := func(key string, value []byte) func() (error, error) {
		return func() (error, error) {
			rev, err := s.Create(ctx, key, []byte("v"))
			if err != nil {
				return fmt.Errorf("setup: %w", err), nil
			}
			_, err = s.Update(ctx, key, value, rev)
			_, want := mem.Update(ctx, prefix+key, value, rev)
			return err, want
		}
	}
	for _, tc := range []struct {
		name string
		call func() (error, error)
	}{
		{"Create", create("/registry/big", big)},
		{"Update", update("/registry/small", big)},
		{"Create over the send limit", create("/registry/huge", huge)},
		{"Update over the send limit", update("/registry/small2", huge)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, want := tc.call()
			if want == nil || !strings.HasPrefix(want.Error(), "etcdserver: ") && !strings.HasPrefix(want.Error(), "rpc error: code = ResourceExhausted desc = ") {
				t.Fatalf("the memory store answers %v, want a refusal for the size", want)
			}
			if err == nil || err.Error() != want.Error() {
				t.Errorf("%v, want exactly %q", err, want)
			}
			if errors.Is(err, storage.ErrUnavailable) {
				t.Errorf("%v is not unavailability: no retry will fix it", err)
			}
		})
	}
}

// TestInProcess: a store that calls an etcd of the process without gRPC (OpenEmbedded, as crdplay-server
// --etcd-embedded runs) keeps the contract, refuses writes for their size in the words of the gRPC client it
// does without, and shares its objects with a store that reaches the same etcd over its URL.
func TestInProcess(t *testing.T) {
	t.Parallel()
	root, ep, err := OpenEmbedded(t.TempDir(), false, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	// Stores with prefixes of their own on the same client; closing one would close the client.
	in := func() (*Store, string) {
		prefix := fmt.Sprintf("/inprocess%d", prefixes.Add(1))
		return storeOn(root.client, Config{Endpoints: []string{ep}, Prefix: prefix}, true), prefix
	}
	t.Run("contract", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Interface { s, _ := in(); return s })
	})
	t.Run("size", func(t *testing.T) {
		s, prefix := in()
		checkErrorText(t, s, prefix)
	})
	ctx := context.Background()
	rev, err := root.Create(ctx, "/registry/shared", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	remote := newStore(t, Config{Endpoints: []string{ep}, Prefix: "/"})
	if o, err := remote.Get(ctx, "registry/shared"); err != nil || string(o.Value) != "v" || o.Revision != rev {
		t.Errorf("over the etcd's URL: %q at %d, %v; want v at %d", o.Value, o.Revision, err, rev)
	}
	if _, _, err := OpenEmbedded(t.TempDir(), false, Config{Endpoints: []string{ep}}); err == nil {
		t.Error("OpenEmbedded with endpoints: no error")
	}
}

// syncBuffer is a bytes.Buffer that parallel requests may log to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestEmbeddedUnsafeNoFsync: only the benchmark's start skips fsync, and its etcd serves as the other: a key
// written before a clean stop is there when the directory is opened again, with fsync.
func TestEmbeddedUnsafeNoFsync(t *testing.T) {
	t.Parallel()
	if cfg, err := embeddedConfig(t.TempDir(), "127.0.0.1:0"); err != nil || cfg.UnsafeNoFsync {
		t.Fatalf("embeddedConfig: UnsafeNoFsync %v (%v), want false: the default must fsync", cfg != nil && cfg.UnsafeNoFsync, err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	ep, stop, err := StartEmbeddedUnsafeNoFsync(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(t, Config{Endpoints: []string{ep}, Prefix: "/nofsync"})
	if _, err := s.Create(ctx, "/registry/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	stop()
	ep, stop, err = StartEmbedded(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s = newStore(t, Config{Endpoints: []string{ep}, Prefix: "/nofsync"})
	if o, err := s.Get(ctx, "/registry/a"); err != nil || string(o.Value) != "v" {
		t.Fatalf("after a restart: %q, %v; want v", o.Value, err)
	}
}

// TestPortTaken checks that etcd's failure on a port another process holds is recognised, so that
// startOnFreePorts picks new ports instead of failing when a parallel test binary takes one first.
func TestPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cfg, err := embeddedConfig(t.TempDir(), l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = startEtcd(cfg)
	if err == nil {
		t.Fatal("etcd started on a port in use")
	}
	if !portTaken(err) {
		t.Errorf("not recognised as a port in use: %v", err)
	}
	if portTaken(errors.New("embedded etcd: no data directory")) {
		t.Error("another error recognised as a port in use")
	}
}
