package server_test

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"crdplay/internal/oraclecase"
	"crdplay/server"
)

var (
	recordPagingFrom = flag.String("record-paging", "", "record testdata/list-paging.json from the real server at this URL (bin/oracle serve -- --etcd-compaction-interval=5s) instead of checking ours")
	recordPagingEtcd = flag.String("record-paging-etcd", "", "with -record-paging: the real server's etcd client URL, compacted by the compaction step")
)

// TestListPagingAsOracle holds paginated LISTs to the real server's answers in testdata/list-paging.json (see
// oraclecase.RunPaging): five objects read two at a time (each page's continue token, decoded, and
// remainingItemCount), selectors with a limit, malformed continue tokens, and on etcd a continue token whose
// revision is compacted (410 Expired with a token to go on inconsistently).
func TestListPagingAsOracle(t *testing.T) {
	needSockets(t)
	golden := filepath.Join("..", "testdata", "list-paging.json")
	if *recordPagingFrom != "" {
		got, err := oraclecase.RunPaging(http.DefaultClient, *recordPagingFrom, oraclecase.PagingOptions{
			Compact: func() error { return compactEtcd(*recordPagingEtcd) },
			Settle:  true,
		})
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var want []oraclecase.PagingAnswer
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	ep := startEtcd(t)
	for _, tc := range []struct {
		name string
		opts server.Options
		etcd string
	}{
		{name: "memory"},
		{name: "etcd", opts: server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Endpoints: []string{ep}}}, etcd: ep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := server.NewHandler(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer func() {
				srv.Close()
				h.Close()
			}()
			var opts oraclecase.PagingOptions
			if tc.etcd != "" {
				opts.Compact = func() error { return compactEtcd(tc.etcd) }
			}
			got, err := oraclecase.RunPaging(srv.Client(), srv.URL, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range oraclecase.ComparePaging(want, got) {
				t.Error(d)
			}
		})
	}
}

// compactEtcd compacts the etcd at endpoint at its current revision.
func compactEtcd(endpoint string) error {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, "compact_rev_key")
	if err != nil {
		return err
	}
	_, err = c.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical())
	return err
}
