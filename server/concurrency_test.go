package server_test

import (
	"net/http"
	"testing"

	"crdplay/internal/apirace"
)

// TestConcurrencyOnEtcd runs the concurrent-write suite on etcd: through one server, and through two replicas
// on one etcd, whose writes race each other in etcd's transactions rather than in one process.
func TestConcurrencyOnEtcd(t *testing.T) {
	needSockets(t)
	opts := apirace.Options{Workers: 8, OpsPerWorker: 32, StormWorkers: 16, StormPatches: 20, ExactCodes: true}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	t.Run("one-server", func(t *testing.T) {
		ep := startEtcd(t)
		apirace.Run(t, []apirace.Target{{Client: client, URL: etcdServer(t, ep)}}, opts)
	})
	t.Run("two-replicas", func(t *testing.T) {
		ep := startEtcd(t)
		a, b := etcdServer(t, ep), etcdServer(t, ep)
		apirace.Run(t, []apirace.Target{{Client: client, URL: a}, {Client: client, URL: b}}, opts)
	})
}
