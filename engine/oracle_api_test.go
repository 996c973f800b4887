package engine_test

import (
	"path/filepath"
	"testing"
	"time"

	"crdplay/engine"
	"crdplay/internal/oraclecase"
)

// TestOracleAPICases replays testdata/oracle-api: cases written for the API breadth that real clients use
// (dryRun on every write, deletecollection with selectors and delete options, list and watch parameters, writes
// that change nothing, strategic merge patches and server-side apply of CRDs, malformed patches), in the
// oracle's case format and recorded from it (`../shared/oracle/bin/oracle case testdata/oracle-api` starts a
// fresh oracle and rewrites their expected/ files). They are kept apart from testdata/oracle, which is a copy
// of the oracle's own cases. server's TestOracleAPICasesOnEtcd replays them on etcd. As in TestOracleCases, an
// entry of the tree that no replay reads fails the test.
func TestOracleAPICases(t *testing.T) {
	root := filepath.Join("..", "testdata", "oracle-api")
	failOrphans(t, root)
	dirs, err := oraclecase.CaseDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases in testdata/oracle-api")
	}
	opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: time.Second, NoSleep: true}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			h, err := engine.NewHandler(engine.Options{Webhook: closedNetwork{}})
			if err != nil {
				t.Fatalf("NewHandler: %v", err)
			}
			res, err := oraclecase.New(oraclecase.HandlerClient(h), "http://engine", opts).RunCase(dir)
			if err != nil {
				t.Fatalf("after %d step(s): %v", res.Steps, err)
			}
			if len(res.Diffs) > 0 {
				t.Errorf("%d of the outputs differ from the real server's:\n%s", len(res.Diffs), joinCapped(res.Diffs, maxCaseOutput))
			}
		})
	}
}
