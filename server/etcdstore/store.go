package etcdstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/namespace"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"crdplay/engine/storage"
)

// Defaults for Config.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultRequestTimeout = 5 * time.Second
)

// listChunk is how many keys one etcd request of a List reads at most, so that a large collection is read in
// several moderate responses (all at the revision of the first) instead of one that a slow link cannot carry.
const listChunk = 1000

// Config says how to reach etcd.
type Config struct {
	// Endpoints are client URLs of the etcd cluster, such as http://127.0.0.1:2379 or https://etcd:2379. All
	// must use the same scheme: the client uses TLS for all of them or for none.
	Endpoints []string
	// DialTimeout bounds each attempt to connect (DefaultDialTimeout if 0). Connecting never blocks New: a
	// store whose etcd is down is created and answers ErrUnavailable until etcd is back.
	DialTimeout time.Duration
	// RequestTimeout bounds each request to etcd (DefaultRequestTimeout if 0), so that an unreachable etcd
	// turns into ErrUnavailable for the caller instead of a request that hangs.
	RequestTimeout time.Duration
	// TLS, if set, is the client's TLS configuration for https endpoints (see LoadTLS).
	TLS *tls.Config
	// Log, if set, receives the details of failed requests (operation, key, endpoints, cause), which the
	// errors returned leave out: they reach the API's clients, who should learn what etcd said but not where
	// etcd is or how the server lays out its keys.
	Log *slog.Logger
	// Prefix is put in front of every key in etcd, so that several stores can share one etcd without seeing
	// each other's keys. "" keeps the engine's keys (/registry/...) as they are, as kube-apiserver does.
	Prefix string
}

// Store is a storage.Interface kept in etcd: each object is the value of its key, and an object's revision is
// the key's ModRevision, so that resourceVersions are etcd revisions exactly as in kube-apiserver.
type Store struct {
	client  *clientv3.Client
	kv      clientv3.KV
	watcher clientv3.Watcher
	timeout time.Duration
	where   string // names the cluster in the log
	log     *slog.Logger

	prefix string // Config.Prefix
	// inProcess is a store that calls an etcd of the process without gRPC (OpenEmbedded); stop stops that etcd.
	inProcess bool
	stop      func()
	// stopCompactor stops the compactor StartCompactor started.
	stopCompactor func()
	// read are the options of the reads of objects: serializable in the process (see storeOn).
	read []clientv3.OpOption

	// down is when a request last went unanswered for the whole timeout (Unix nanoseconds; 0 once one
	// succeeds). See unreachable.
	down atomic.Int64
}

var _ storage.Interface = (*Store)(nil)

// New returns a Store for the etcd at cfg.Endpoints. It does not wait for a connection.
func New(cfg Config) (*Store, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcd: no endpoints")
	}
	scheme := ""
	for i, ep := range cfg.Endpoints {
		s, _, ok := strings.Cut(ep, "://")
		if !ok || (s != "http" && s != "https") {
			return nil, fmt.Errorf("etcd endpoint %q: want http://host:port or https://host:port", ep)
		}
		if i > 0 && s != scheme {
			return nil, fmt.Errorf("etcd endpoints %s mix http and https", strings.Join(cfg.Endpoints, ","))
		}
		scheme = s
	}
	if cfg.TLS != nil && scheme == "http" {
		// The etcd client silently drops TLS for http endpoints; a TLS setting the user gave must not be ignored.
		return nil, fmt.Errorf("etcd endpoints %s are http, but TLS is configured: use https://", strings.Join(cfg.Endpoints, ","))
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		TLS:         cfg.TLS,
		// Dead connections (a host that vanished without closing them) are noticed within 40s, which ends
		// watches that would otherwise wait forever; kube-apiserver uses the same values.
		DialKeepAliveTime:    30 * time.Second,
		DialKeepAliveTimeout: 10 * time.Second,
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			// gRPC's default backoff grows to two minutes between attempts, so a server whose etcd was down for
			// a while would stay unavailable long after etcd is back. Reconnecting every 2s at most costs little.
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
			MinConnectTimeout: cfg.DialTimeout,
		})},
		// The store reports what matters in its errors; the client's own log would repeat every reconnect.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(cfg.Endpoints, ","), err)
	}
	return storeOn(client, cfg, false), nil
}

// storeOn returns a Store on client, which calls an etcd of the process when inProcess.
func storeOn(client *clientv3.Client, cfg Config, inProcess bool) *Store {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	s := &Store{
		client:  client,
		kv:      client.KV,
		watcher: client.Watcher,
		timeout: cfg.RequestTimeout,
		where:   strings.Join(cfg.Endpoints, ","),
		log:     cfg.Log,
		prefix:  cfg.Prefix,

		inProcess: inProcess,
	}
	if inProcess {
		// The etcd of the process is a single member (embeddedConfig), which answers a write once it has applied
		// it: its local state, which a serializable read reads, already has every acknowledged write, so such a
		// read sees what a linearizable one would, without the round of raft (ReadIndex) that costs each read.
		// The health check stays linearizable: it asks whether etcd can serve a quorum read.
		s.read = []clientv3.OpOption{clientv3.WithSerializable()}
	}
	if cfg.Prefix != "" {
		s.kv = namespace.NewKV(client.KV, cfg.Prefix)
		w := client.Watcher
		if inProcess {
			// In the process, every watch of a key gets etcd's own event, where gRPC would give each a copy;
			// the namespace watcher cuts the prefix off the event's key in place, so it needs a copy of its own.
			w = copyingWatcher{w}
		}
		s.watcher = namespace.NewWatcher(w, cfg.Prefix)
	}
	return s
}

// Close ends the connection to etcd, and stops an etcd the store runs in the process (OpenEmbedded). Watches
// end (their channels close) and later calls fail.
func (s *Store) Close() error {
	if s.stopCompactor != nil {
		s.stopCompactor()
	}
	werr := s.watcher.Close()
	err := errors.Join(s.client.Close(), werr)
	if s.stop != nil {
		s.stop()
	}
	return err
}

// LoadTLS returns the TLS configuration of an etcd client from PEM files, as etcdctl's --cacert, --cert and
// --key: caFile (optional; the system's roots otherwise) verifies the server, and certFile with keyFile (both
// or neither) is the client's certificate.
func LoadTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("a client certificate needs both its certificate and its key file")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate found", caFile)
		}
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// healthTimeout bounds a health check, as kube-apiserver's --etcd-healthcheck-timeout does by default: a
// probe must answer before the prober gives up on it.
const healthTimeout = 2 * time.Second

// Check reports whether etcd answers a read now, for the server's /healthz, /livez and /readyz: nil, or an
// error whose text, like those of the requests, names neither the endpoints nor a key. It reads one key's
// count, which costs etcd nearly nothing.
func (s *Store) Check(ctx context.Context) error {
	c, cancel := context.WithTimeout(ctx, min(healthTimeout, s.timeout))
	defer cancel()
	if _, err := s.kv.Get(c, "/health", clientv3.WithCountOnly()); err != nil {
		return s.fail(c, "health check", "/health", err)
	}
	s.answered()
	return nil
}

// ---------------------------------------------------------------- storage.Interface

// Get implements storage.Interface.
func (s *Store) Get(ctx context.Context, key string) (storage.Object, error) {
	if err := s.unreachable(ctx, "get"); err != nil {
		return storage.Object{}, err
	}
	c, cancel := s.call(ctx)
	defer cancel()
	resp, err := s.kv.Get(c, key, s.read...)
	if err != nil {
		return storage.Object{}, s.fail(ctx, "get", key, err)
	}
	s.answered()
	if len(resp.Kvs) == 0 {
		return storage.Object{}, fmt.Errorf("%s: %w", key, storage.ErrNotFound)
	}
	kv := resp.Kvs[0]
	return storage.Object{Key: key, Value: kv.Value, Revision: kv.ModRevision}, nil
}

// List implements storage.Interface. It reads in chunks at the revision of the first one, so that a list is
// one consistent snapshot however many requests it takes.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	start := prefix
	if opts.StartKey != "" && opts.StartKey+"\x00" > start {
		start = opts.StartKey + "\x00" // the first key after StartKey
	}
	if start == "" {
		start = "\x00" // etcd has no empty key; "" would be refused as one
	}
	if err := s.unreachable(ctx, "list"); err != nil {
		return storage.ListResult{}, err
	}
	var res storage.ListResult
	for {
		// Each chunk is a request of its own: none is sent once the caller has given up (its deadline passed,
		// its client went away), whatever the transport does with a context that is already done.
		if err := ctx.Err(); err != nil {
			return storage.ListResult{}, fmt.Errorf("etcd list: %w", err)
		}
		n := int64(listChunk)
		if opts.Limit > 0 && opts.Limit-int64(len(res.Items)) < n {
			n = opts.Limit - int64(len(res.Items))
		}
		ropts := append([]clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(n)}, s.read...)
		if res.Revision == 0 && opts.Revision > 0 {
			res.Revision = opts.Revision
		}
		if res.Revision != 0 {
			ropts = append(ropts, clientv3.WithRev(res.Revision))
		}
		c, cancel := s.call(ctx)
		resp, err := s.kv.Get(c, start, ropts...)
		cancel()
		if err != nil {
			if errors.Is(err, rpctypes.ErrCompacted) {
				s.answered()
				return storage.ListResult{}, s.compacted(ctx, prefix, res.Revision)
			}
			return storage.ListResult{}, s.fail(ctx, "list", prefix, err)
		}
		s.answered()
		if res.Revision == 0 {
			res.Revision = resp.Header.Revision
		}
		if res.Count == 0 {
			// The first read's count is every key from the start: the later ones count only what follows.
			res.Count = resp.Count
		}
		for _, kv := range resp.Kvs {
			res.Items = append(res.Items, storage.Object{Key: string(kv.Key), Value: kv.Value, Revision: kv.ModRevision})
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return res, nil
		}
		if opts.Limit > 0 && int64(len(res.Items)) >= opts.Limit {
			res.More = true
			return res, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Create implements storage.Interface.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if err := s.unreachable(ctx, "create"); err != nil {
		return 0, err
	}
	if err := s.checkSendSize(key, value, 0, false); err != nil {
		return 0, s.fail(ctx, "create", key, err)
	}
	c, cancel := s.call(ctx)
	defer cancel()
	// Mod revision 0 is a missing key: kube-apiserver's transaction (OptimisticPut with expected revision 0),
	// so that etcd's limits and the client's refusal count the same bytes as for the real server.
	resp, err := s.kv.Txn(c).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return 0, s.fail(ctx, "create", key, err)
	}
	s.answered()
	if !resp.Succeeded {
		return 0, fmt.Errorf("%s: %w", key, storage.ErrExists)
	}
	return resp.Header.Revision, nil
}

// Update implements storage.Interface.
func (s *Store) Update(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	if err := s.unreachable(ctx, "update"); err != nil {
		return 0, err
	}
	c, cancel := s.call(ctx)
	defer cancel()
	if expected <= 0 {
		// A missing key has ModRevision 0, so the transaction below would let an update with 0 create the
		// key; no stored key has a mod revision below 1, so such an update only needs the key's state.
		resp, err := s.kv.Get(c, key, append([]clientv3.OpOption{clientv3.WithKeysOnly()}, s.read...)...)
		if err != nil {
			return 0, s.fail(ctx, "update", key, err)
		}
		s.answered()
		if len(resp.Kvs) == 0 {
			return 0, fmt.Errorf("%s: %w", key, storage.ErrNotFound)
		}
		return 0, fmt.Errorf("%s: at revision %d, not %d: %w", key, resp.Kvs[0].ModRevision, expected, storage.ErrConflict)
	}
	if err := s.checkSendSize(key, value, expected, true); err != nil {
		return 0, s.fail(ctx, "update", key, err)
	}
	// The transaction is kube-apiserver's (OptimisticPut of go.etcd.io/etcd/client/v3/kubernetes, with the
	// Else that GuaranteedUpdate asks for), so that its encoded size, which etcd's limits and the client's
	// refusal ("trying to send message larger than max (N vs. 2097152)") name, is the same as the real server's.
	resp, err := s.kv.Txn(c).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", expected)).
		Then(clientv3.OpPut(key, string(value))).
		Else(clientv3.OpGet(key)).
		Commit()
	if err != nil {
		return 0, s.fail(ctx, "update", key, err)
	}
	s.answered()
	if !resp.Succeeded {
		return 0, mismatch(key, expected, resp)
	}
	return resp.Header.Revision, nil
}

// Delete implements storage.Interface.
func (s *Store) Delete(ctx context.Context, key string, expected int64) (storage.Object, error) {
	if err := s.unreachable(ctx, "delete"); err != nil {
		return storage.Object{}, err
	}
	c, cancel := s.call(ctx)
	defer cancel()
	cmps := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(key), ">", 0)}
	if expected != 0 {
		cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(key), "=", expected))
	}
	resp, err := s.kv.Txn(c).
		If(cmps...).
		Then(clientv3.OpDelete(key, clientv3.WithPrevKV())).
		Else(clientv3.OpGet(key, clientv3.WithKeysOnly())).
		Commit()
	if err != nil {
		return storage.Object{}, s.fail(ctx, "delete", key, err)
	}
	s.answered()
	if !resp.Succeeded {
		return storage.Object{}, mismatch(key, expected, resp)
	}
	prev := resp.Responses[0].GetResponseDeleteRange().GetPrevKvs()
	if len(prev) == 0 {
		return storage.Object{}, fmt.Errorf("%s: %w", key, storage.ErrNotFound) // cannot happen: the compare saw it
	}
	return storage.Object{Key: key, Value: prev[0].Value, Revision: prev[0].ModRevision}, nil
}

// maxCallSendMsgSize is the etcd client's limit on a gRPC message it sends (defaultMaxCallSendMsgSize in
// go.etcd.io/etcd/client/v3 options.go, which kube-apiserver keeps).
const maxCallSendMsgSize = 2 * 1024 * 1024

// checkSendSize refuses, in a store that calls etcd in the process (no gRPC client to refuse it), a write
// transaction that the gRPC client would refuse to send for its size, with the client's status: the same
// transaction as Create's (expected 0) or Update's (else get) is measured as gRPC measures it, encoded.
func (s *Store) checkSendSize(key string, value []byte, expected int64, update bool) error {
	// Cheap bound first: a transaction is its value plus a few hundred bytes of key and framing.
	if !s.inProcess || len(value) < maxCallSendMsgSize-64*1024 {
		return nil
	}
	k := []byte(s.prefix + key)
	txn := &pb.TxnRequest{
		Compare: []*pb.Compare{{Target: pb.Compare_MOD, Key: k, TargetUnion: &pb.Compare_ModRevision{ModRevision: expected}}},
		Success: []*pb.RequestOp{{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: k, Value: value}}}},
	}
	if update {
		txn.Failure = []*pb.RequestOp{{Request: &pb.RequestOp_RequestRange{RequestRange: &pb.RangeRequest{Key: k}}}}
	}
	if n := proto.Size(txn); n > maxCallSendMsgSize {
		return status.Errorf(codes.ResourceExhausted, "trying to send message larger than max (%d vs. %d)", n, maxCallSendMsgSize)
	}
	return nil
}

// mismatch explains a transaction whose compare failed, from the key's state its Else branch read.
func mismatch(key string, expected int64, resp *clientv3.TxnResponse) error {
	kvs := resp.Responses[0].GetResponseRange().GetKvs()
	if len(kvs) == 0 {
		return fmt.Errorf("%s: %w", key, storage.ErrNotFound)
	}
	return fmt.Errorf("%s: at revision %d, not %d: %w", key, kvs[0].ModRevision, expected, storage.ErrConflict)
}

// Watch implements storage.Interface.
//
// Before watching, Watch reads the revision to start from, so that an unreachable etcd or a compacted
// revision is an error now, which the engine can answer with, rather than a channel that closes at once.
func (s *Store) Watch(ctx context.Context, prefix string, from int64) (<-chan storage.Event, error) {
	if err := s.unreachable(ctx, "watch"); err != nil {
		return nil, err
	}
	c, cancel := s.call(ctx)
	defer cancel()
	// Reading one key at revision from fails if from is compacted; a revision etcd has not reached yet is
	// fine: its changes are still to come. A count-only read of one key costs etcd nearly nothing.
	probe := append([]clientv3.OpOption{clientv3.WithCountOnly()}, s.read...)
	if from > 0 {
		probe = append(probe, clientv3.WithRev(from))
	}
	key := prefix
	if key == "" {
		key = "\x00"
	}
	resp, err := s.kv.Get(c, key, probe...)
	switch {
	case errors.Is(err, rpctypes.ErrFutureRev):
	case errors.Is(err, rpctypes.ErrCompacted):
		s.answered()
		return nil, s.compacted(ctx, prefix, from)
	case err != nil:
		return nil, s.fail(ctx, "watch", prefix, err)
	case from == 0:
		from = resp.Header.Revision
	}
	s.answered()

	wctx, wcancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	wch := s.watcher.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(from+1), clientv3.WithPrevKV())
	out := make(chan storage.Event, 128)
	go func() {
		defer close(out)
		defer wcancel()
		for resp := range wch {
			// A compacted start, a lost leader or a closed client all end the watch: the contract's closed
			// channel, after which the engine's client lists again.
			if resp.Err() != nil || resp.Canceled {
				return
			}
			for _, ev := range resp.Events {
				select {
				case out <- event(ev):
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// copyingWatcher gives each watch copies of the events etcd sends, as a gRPC client receives them.
type copyingWatcher struct{ clientv3.Watcher }

func (w copyingWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	in := w.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			evs := make([]*clientv3.Event, len(resp.Events))
			for i, ev := range resp.Events {
				c := &clientv3.Event{Type: ev.Type}
				if ev.Kv != nil {
					c.Kv = &mvccpb.KeyValue{Key: ev.Kv.Key, CreateRevision: ev.Kv.CreateRevision, ModRevision: ev.Kv.ModRevision,
						Version: ev.Kv.Version, Value: ev.Kv.Value, Lease: ev.Kv.Lease}
				}
				if ev.PrevKv != nil {
					c.PrevKv = &mvccpb.KeyValue{Key: ev.PrevKv.Key, CreateRevision: ev.PrevKv.CreateRevision, ModRevision: ev.PrevKv.ModRevision,
						Version: ev.PrevKv.Version, Value: ev.PrevKv.Value, Lease: ev.PrevKv.Lease}
				}
				evs[i] = c
			}
			resp.Events = evs
			select {
			case out <- resp:
			case <-ctx.Done():
				// Drain, so that the client's goroutine is not left blocked on a watch nobody reads.
				for range in {
				}
				return
			}
		}
	}()
	return out
}

// compacted describes a revision etcd has compacted away: the compaction revision is learnt from a watch that
// starts there, which etcd answers with it at once.
func (s *Store) compacted(ctx context.Context, key string, rev int64) error {
	c, cancel := s.call(ctx)
	defer cancel()
	if key == "" {
		key = "\x00"
	}
	for resp := range s.watcher.Watch(c, key, clientv3.WithRev(rev+1)) {
		if resp.CompactRevision > 0 {
			return &storage.CompactedError{Revision: rev, Compacted: resp.CompactRevision}
		}
		break
	}
	return fmt.Errorf("revision %d of %s: %w", rev, key, storage.ErrCompacted)
}

// event converts an etcd watch event.
func event(ev *clientv3.Event) storage.Event {
	o := storage.Object{Key: string(ev.Kv.Key), Revision: ev.Kv.ModRevision}
	var prev []byte
	var prevRev int64
	if ev.PrevKv != nil {
		prev, prevRev = ev.PrevKv.Value, ev.PrevKv.ModRevision
	}
	if ev.Type == clientv3.EventTypeDelete {
		return storage.Event{Type: storage.EventDelete, Object: o, Prev: prev, PrevRevision: prevRev}
	}
	o.Value = ev.Kv.Value
	switch {
	case ev.IsCreate():
		prev, prevRev = nil, 0 // a create has no previous document, whatever the key held before its last delete
	case prev == nil:
		// The engine tells MODIFIED from ADDED by a non-nil Prev; etcd omits the previous value when it has
		// been compacted away, or when it was empty.
		prev = []byte{}
	}
	return storage.Event{Type: storage.EventPut, Object: o, Prev: prev, PrevRevision: prevRev}
}

// ---------------------------------------------------------------- errors and timeouts

// call returns the context of one request: ctx bounded by the request timeout.
func (s *Store) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// unreachable fails a request at once when etcd is known to be out of reach: a request already waited the
// whole timeout in vain and the connection is still failing. Without it, every request of an outage would wait
// the timeout, and one the engine answers with several storage calls would take several. A short blip
// (an etcd restart) is still ridden out by the first request, which waits. It logs nothing: the request that
// found etcd gone did.
func (s *Store) unreachable(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("etcd %s: %w", op, err) // as fail would say
	}
	since := s.down.Load()
	// A store in the process has no connection to lose (ActiveConnection is nil).
	if since == 0 || s.inProcess || s.client.ActiveConnection().GetState() != connectivity.TransientFailure {
		return nil
	}
	return fmt.Errorf("%w: etcd is not reachable (no answer since %s)", storage.ErrUnavailable,
		time.Unix(0, since).UTC().Format(time.TimeOnly))
}

// answered notes a request that etcd answered, so that the next ones wait for it again when it is slow.
func (s *Store) answered() {
	if s.down.Load() != 0 {
		s.down.Store(0)
	}
}

// fail converts the error of a request that ctx made: unreachable etcd and timeouts become ErrUnavailable
// (which the engine answers with 503), compaction ErrCompacted. The engine puts the text of what fail returns
// in the Status it answers with, so the text is what etcd's server said (as kube-apiserver's clients read
// "etcdserver: request is too large"), never the endpoints or the key; those go to the log.
func (s *Store) fail(ctx context.Context, op, key string, err error) error {
	switch {
	case ctx.Err() != nil:
		// The caller gave up (its client went away, or its deadline passed); etcd is not to blame.
		return fmt.Errorf("etcd %s: %w", op, ctx.Err())
	case errors.Is(err, rpctypes.ErrCompacted):
		return fmt.Errorf("%s %s: %w", op, key, storage.ErrCompacted)
	case errors.Is(err, rpctypes.ErrFutureRev):
		return fmt.Errorf("%s %s: %w", op, key, storage.ErrFutureRevision)
	}
	if s.log != nil {
		s.log.WarnContext(ctx, "etcd request failed", "op", op, "key", key, "endpoints", s.where, "err", err)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		s.down.CompareAndSwap(0, time.Now().UnixNano())
		return fmt.Errorf("%w: etcd did not answer within %v", storage.ErrUnavailable, s.timeout)
	case unavailable(err):
		return fmt.Errorf("%w: %s", storage.ErrUnavailable, serverMessage(err))
	}
	return &etcdError{msg: serverMessage(err), err: err}
}

// etcdError is a failure etcd reported, worded as etcd's server words it.
type etcdError struct {
	msg string
	err error
}

func (e *etcdError) Error() string { return e.msg }
func (e *etcdError) Unwrap() error { return e.err }

// serverMessage is what etcd said about err: the server's own text for the errors it sends
// ("etcdserver: request is too large"), the gRPC status text for the client's refusals. Neither names an
// endpoint or a key; the gRPC transport's connection errors can ("dial tcp 10.0.0.5:2379: ..."), so those are
// summed up by their code.
func serverMessage(err error) string {
	var ev rpctypes.EtcdError
	if errors.As(err, &ev) {
		return ev.Error()
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unavailable:
			return "etcd is not reachable"
		case codes.DeadlineExceeded, codes.Canceled:
			return "etcd did not answer"
		}
		// Whole, as kube-apiserver passes it on: "rpc error: code = ResourceExhausted desc = ...". Built from
		// the status alone, so that nothing a wrapper added can name an endpoint or a key.
		return st.Err().Error()
	}
	return "etcd request failed"
}

// unavailable reports errors that say etcd cannot serve now but may later: no connection, no leader, overload.
func unavailable(err error) bool {
	for _, e := range []error{
		rpctypes.ErrNoLeader, rpctypes.ErrNotCapable, rpctypes.ErrStopped, rpctypes.ErrTimeout,
		rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost, rpctypes.ErrUnhealthy,
		rpctypes.ErrLeaderChanged, rpctypes.ErrTooManyRequests, rpctypes.ErrTimeoutWaitAppliedIndex,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	// Not codes.ResourceExhausted: it is also the client's refusal to send an object above its message limit,
	// which no retry will fix (kube-apiserver answers that with 500 too).
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return errors.Is(err, context.Canceled) // the client was closed
}
