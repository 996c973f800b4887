package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"crdplay/server"
)

// TestEtcdCompaction: with --etcd-compaction-interval, replicas on one etcd compact its history as
// kube-apiserver's compactor does, taking turns through the version of etcd's compact_rev_key. Afterwards a
// list at a compacted resourceVersion is 410 Expired, the oracle's answer (recorded with
// --etcd-compaction-interval=2s, 85 s after the writes: the same status and body; sooner its watch cache still
// answered 200), and a watch from it ends with upstream's etcd3 store's Expired ERROR event (the oracle's watch
// cache, which crdplay has not, still replayed those events). Without an interval nothing is compacted.
func TestEtcdCompaction(t *testing.T) {
	needSockets(t)
	const interval = 200 * time.Millisecond
	for _, tc := range []struct {
		name      string
		interval  time.Duration
		compacted bool
	}{
		{"two replicas compacting", interval, true},
		{"0 never compacts", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ep := startEtcd(t)
			var urls []string
			for i := 0; i < 2; i++ {
				u, _ := serveHandler(t, server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{ep}, CompactionInterval: tc.interval}})
				urls = append(urls, u)
			}
			mustDo(t, "POST", urls[0]+crdsPath, widgetCRD, 201)
			waitFor(t, urls[0]+widgetsPath, 200)
			waitFor(t, urls[1]+widgetsPath, 200)
			rv1 := decode(t, mustDo(t, "POST", urls[0]+widgetsPath, widget("w"), 201)).Metadata.ResourceVersion
			for size := 1; size <= 3; size++ {
				mustDo(t, "PUT", urls[1]+widgetsPath+"/w", fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","resourceVersion":%q},"spec":{"size":%d}}`,
					decode(t, mustDo(t, "GET", urls[1]+widgetsPath+"/w", "", 200)).Metadata.ResourceVersion, size), 200)
			}
			exact := widgetsPath + "?resourceVersionMatch=Exact&resourceVersion=" + rv1

			client, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			if !tc.compacted {
				// Ten intervals of a compacting server, and the old revision is still there.
				time.Sleep(10 * interval)
				mustDo(t, "GET", urls[0]+exact, "", 200)
				if res, err := client.Get(context.Background(), "compact_rev_key"); err != nil || len(res.Kvs) != 0 {
					t.Errorf("compact_rev_key: %v %v; want none", res, err)
				}
				return
			}
			code, body := 0, []byte(nil)
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(interval / 2) {
				if code, body = do(t, "GET", urls[0]+exact, ""); code != 200 {
					break
				}
			}
			want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The resourceVersion for the provided list is too old.","reason":"Expired","code":410}`
			if code != 410 || strings.TrimSpace(string(body)) != want {
				t.Fatalf("list at a compacted resourceVersion: %d %s; want 410 %s", code, body, want)
			}
			for _, u := range urls {
				code, body := do(t, "GET", u+widgetsPath+"?watch=1&resourceVersion="+rv1, "")
				prefix := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: ` + rv1 + ` (`
				if code != 200 || !strings.HasPrefix(string(body), prefix) || !strings.Contains(string(body), `"reason":"Expired","code":410}}`) {
					t.Errorf("watch from a compacted resourceVersion: %d %s; want 200 and %s...", code, body, prefix)
				}
			}
			// Etcd itself refuses the old revision, and the replicas' compare-and-swap key records the compactions.
			if _, err := client.Get(context.Background(), "/registry", clientv3.WithRev(mustInt(t, rv1))); err == nil || !strings.Contains(err.Error(), "required revision has been compacted") {
				t.Errorf("etcd read at revision %s: %v; want required revision has been compacted", rv1, err)
			}
			if res, err := client.Get(context.Background(), "compact_rev_key"); err != nil || len(res.Kvs) != 1 || res.Kvs[0].Version < 2 {
				t.Errorf("compact_rev_key: %v %v; want a key written at least twice", res, err)
			}
		})
	}
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}
