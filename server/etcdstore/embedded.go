package etcdstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
)

// embeddedReadyTimeout bounds the wait for an embedded etcd to serve. Replaying a large write-ahead log after a
// crash is the slow case.
const embeddedReadyTimeout = 60 * time.Second

// StartEmbedded starts a single-member etcd inside the process, keeping its data in dataDir (created if
// needed; reopening a directory resumes its data) and serving plain-HTTP clients on a free port of 127.0.0.1.
// It returns the client URL for Config.Endpoints and a function that stops etcd.
//
// The embedded etcd has neither TLS nor authentication, so it listens on loopback only.
func StartEmbedded(dataDir string) (endpoint string, stop func(), err error) {
	return StartEmbeddedOn(dataDir, "127.0.0.1:0")
}

// StartEmbeddedUnsafeNoFsync is StartEmbedded with etcd's --unsafe-no-fsync: etcd acknowledges writes before
// they reach the disk, so a crash of the process or the machine loses writes that clients were told succeeded,
// and can leave the data directory unreadable. It exists for benchmarks beside servers that run their etcd so
// (the oracle does), never for data that matters.
func StartEmbeddedUnsafeNoFsync(dataDir string) (endpoint string, stop func(), err error) {
	cfg, _, stop, err := startOnFreePorts(dataDir, "127.0.0.1:0", true)
	if err != nil {
		return "", nil, err
	}
	return cfg.AdvertiseClientUrls[0].String(), stop, nil
}

// StartEmbeddedOn is StartEmbedded serving clients on addr, a loopback host:port; port 0 picks a free one.
func StartEmbeddedOn(dataDir, addr string) (endpoint string, stop func(), err error) {
	cfg, _, stop, err := startOnFreePorts(dataDir, addr, false)
	if err != nil {
		return "", nil, err
	}
	return cfg.AdvertiseClientUrls[0].String(), stop, nil
}

// startOnFreePorts starts an embedded etcd configured by embeddedConfig. The ports it picks were free a moment
// before etcd listens on them; when another process takes one in between (parallel test binaries do), etcd
// fails with EADDRINUSE before it has written anything, and it is started again on newly picked ports.
func startOnFreePorts(dataDir, addr string, noFsync bool) (*embed.Config, *embed.Etcd, func(), error) {
	for attempt := 1; ; attempt++ {
		cfg, err := embeddedConfig(dataDir, addr)
		if err != nil {
			return nil, nil, nil, err
		}
		cfg.UnsafeNoFsync = noFsync
		e, stop, err := startEtcd(cfg)
		if err != nil && attempt < 5 && portTaken(err) {
			continue
		}
		return cfg, e, stop, err
	}
}

// embeddedConfig is the configuration of an embedded etcd; tests change it (TLS) before startEmbedded.
func embeddedConfig(dataDir, addr string) (*embed.Config, error) {
	if dataDir == "" {
		return nil, errors.New("embedded etcd: no data directory")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("embedded etcd: %s is not a loopback IP address (it has no TLS or authentication)", host)
	}
	if port == "0" {
		if port, err = freePort(host); err != nil {
			return nil, err
		}
	}
	// A single member has no peers, but etcd insists on a peer listener; it is on loopback too.
	peerPort, err := freePort(host)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", err)
	}
	cu := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)}
	pu := url.URL{Scheme: "http", Host: net.JoinHostPort(host, peerPort)}

	cfg := embed.NewConfig()
	cfg.Name = "crdplay"
	cfg.Dir = dataDir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Only the engine's gRPC client talks to it.
	cfg.EnableGRPCGateway = false
	// etcd compacts nothing itself: as kube-apiserver's, the server's compactor does (Store.StartCompactor).
	// etcd logs every start, election and compaction at info level; the server's own log is enough unless
	// something goes wrong. Shutdown logs spurious errors ("server closed") at error level, hence fatal.
	cfg.LogLevel = "fatal"
	return cfg, nil
}

// OpenEmbedded starts an etcd inside the process as StartEmbedded does (without fsync when noFsync, as
// StartEmbeddedUnsafeNoFsync) and returns a Store that calls it in-process, through etcd's own adapter of its
// gRPC services (v3client), instead of over a loopback socket: the same server code answers, with the
// encoding, framing and system calls of a network round trip left out. The etcd still serves its client URL
// (returned), for other servers and etcdctl. cfg.Endpoints and cfg.TLS must be empty. Closing the Store stops
// the etcd.
func OpenEmbedded(dataDir string, noFsync bool, cfg Config) (*Store, string, error) {
	if len(cfg.Endpoints) > 0 || cfg.TLS != nil {
		return nil, "", errors.New("embedded etcd: a store in the process has no endpoints or TLS")
	}
	ecfg, e, stop, err := startOnFreePorts(dataDir, "127.0.0.1:0", noFsync)
	if err != nil {
		return nil, "", err
	}
	ep := ecfg.AdvertiseClientUrls[0].String()
	cfg.Endpoints = []string{ep}
	st := storeOn(v3client.New(e.Server), cfg, true)
	st.stop = stop
	return st, ep, nil
}

func startEmbedded(cfg *embed.Config) (string, func(), error) {
	_, stop, err := startEtcd(cfg)
	if err != nil {
		return "", nil, err
	}
	return cfg.AdvertiseClientUrls[0].String(), stop, nil
}

// startEtcd starts etcd and waits until it serves.
func startEtcd(cfg *embed.Config) (*embed.Etcd, func(), error) {
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("embedded etcd in %s: %w", cfg.Dir, err)
	}
	var once sync.Once
	stop := func() { once.Do(e.Close) }
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		stop()
		return nil, nil, fmt.Errorf("embedded etcd in %s: %w", cfg.Dir, err)
	case <-time.After(embeddedReadyTimeout):
		stop()
		return nil, nil, fmt.Errorf("embedded etcd in %s: not ready after %v", cfg.Dir, embeddedReadyTimeout)
	}
	return e, stop, nil
}

// portTaken tells whether etcd failed to start because a port it was to listen on is in use.
func portTaken(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

// freePort returns a port that was free on host a moment ago. etcd opens its listeners itself, so the port
// cannot be held until then; another process taking it in between makes StartEtcd fail (startOnFreePorts then
// picks again).
func freePort(host string) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", fmt.Errorf("embedded etcd: %w", err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
