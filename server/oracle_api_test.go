package server_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"crdplay/internal/oraclecase"
	"crdplay/server"
)

// TestOracleAPICasesOnEtcd replays testdata/oracle-api, the cases recorded from the real server that the engine
// test replays on memory storage, on etcd: what storage does (no write for an update that changes nothing,
// revisions, dry runs, paging, watches) must not depend on where objects are kept. An entry of the tree that no
// replay reads fails it, as it fails the engine's test.
func TestOracleAPICasesOnEtcd(t *testing.T) {
	needSockets(t)
	root := filepath.Join("..", "testdata", "oracle-api")
	orphans, err := oraclecase.Orphans(filepath.Join(root, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orphans {
		t.Error(o)
	}
	dirs, err := oraclecase.CaseDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases in testdata/oracle-api")
	}
	ep := startEtcd(t)
	opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: 5 * time.Second, NoSleep: true}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			wipeEtcd(t, ep)
			h, err := server.NewHandler(server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{ep}}})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			res, err := oraclecase.New(oraclecase.HandlerClient(h), "http://engine", opts).RunCase(dir)
			if err != nil {
				t.Fatalf("after %d step(s): %v", res.Steps, err)
			}
			if len(res.Diffs) > 0 {
				t.Errorf("%d of the outputs differ from the real server's:\n%s", len(res.Diffs), strings.Join(res.Diffs, "\n"))
			}
		})
	}
}
