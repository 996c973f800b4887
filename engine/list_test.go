package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"crdplay/engine"
	"crdplay/engine/storage"
	"crdplay/internal/oraclecase"
)

// TestListPagination pages through a collection with limit and continue, as kubectl and informers do.
func TestListPagination(t *testing.T) {
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	const objects = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	for i := 0; i < 5; i++ {
		body := fmt.Sprintf(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c%d"}}`, i)
		if rec := do(h, "POST", objects, "application/json", []byte(body)); rec.Code != http.StatusCreated {
			t.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
	var names []string
	var remaining []int64
	cont := ""
	for page := 0; page < 5; page++ {
		path := objects + "?limit=2"
		if cont != "" {
			path += "&continue=" + url.QueryEscape(cont)
		}
		rec := do(h, "GET", path, "", nil)
		var list struct {
			Metadata struct {
				Continue           string `json:"continue"`
				RemainingItemCount *int64 `json:"remainingItemCount"`
			} `json:"metadata"`
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != 200 {
			t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
		}
		for _, it := range list.Items {
			names = append(names, it.Metadata.Name)
		}
		if list.Metadata.RemainingItemCount != nil {
			remaining = append(remaining, *list.Metadata.RemainingItemCount)
		}
		if cont = list.Metadata.Continue; cont == "" {
			break
		}
	}
	if fmt.Sprint(names) != "[c0 c1 c2 c3 c4]" || fmt.Sprint(remaining) != "[3 1]" {
		t.Errorf("names %v, remaining counts %v", names, remaining)
	}
	if rec := do(h, "GET", objects+"?limit=2&continue=bogus", "", nil); rec.Code != http.StatusBadRequest {
		t.Errorf("bad token: %d %s", rec.Code, rec.Body)
	}
}

// countingStorage counts the objects List returns under a prefix: what a LIST costs the store.
type countingStorage struct {
	engine.Storage
	under string
	mu    sync.Mutex
	read  int
}

func (s *countingStorage) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	res, err := s.Storage.List(ctx, prefix, opts)
	if strings.HasPrefix(prefix, s.under) {
		s.mu.Lock()
		s.read += len(res.Items)
		s.mu.Unlock()
	}
	return res, err
}

func (s *countingStorage) take() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.read
	s.read = 0
	return n
}

// TestListLimitReadsOnePage: a LIST with a limit reads that many objects from storage, not the collection, as
// an etcd range with a limit does under kube-apiserver, whatever the objects' size; with selectors it reads
// on in doubling chunks (1, 2, 4, ...) until the page is full or the collection ends, as etcd3's store does.
// resourceVersion=0 is served whole (the watch cache ignores the limit there).
func TestListLimitReadsOnePage(t *testing.T) {
	const n = 100
	st := &countingStorage{Storage: engine.NewMemoryStorage(), under: "/registry/apiextensions.kubernetes.io/stable.example.com/crontabs/"}
	h, err := engine.NewHandler(engine.Options{Storage: st})
	if err != nil {
		t.Fatal(err)
	}
	if rec := do(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/yaml", crontabCRD(t)); rec.Code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", rec.Code, rec.Body)
	}
	const objects = "/apis/stable.example.com/v1/namespaces/default/crontabs"
	large := strings.Repeat("x", 64<<10)
	for i := 0; i < n; i++ {
		labels := `{}`
		if i == 10 {
			labels = `{"pick":"yes"}`
		}
		body := fmt.Sprintf(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c%03d","labels":%s},"spec":{"image":%q}}`, i, labels, large)
		if rec := do(h, "POST", objects, "application/json", []byte(body)); rec.Code != http.StatusCreated {
			t.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
	first := do(h, "GET", objects+"?limit=1", "", nil)
	var page struct {
		Metadata struct{ Continue string } `json:"metadata"`
	}
	if err := json.Unmarshal(first.Body.Bytes(), &page); err != nil || page.Metadata.Continue == "" {
		t.Fatalf("first page: %d %s", first.Code, first.Body)
	}
	st.take()
	for _, tc := range []struct {
		name  string
		query string
		items int // in the answer
		read  int // from storage
	}{
		{"one", "limit=1", 1, 1},
		{"next page", "limit=1&continue=" + url.QueryEscape(page.Metadata.Continue), 1, 1},
		{"ten", "limit=10", 10, 10},
		{"more than there are", "limit=500", n, n},
		{"no limit", "", n, n},
		// c010 is in the fourth read (keys 7 to 14): 1+2+4+8 keys.
		{"selector", "limit=1&labelSelector=pick%3Dyes", 1, 15},
		{"selector matching nothing", "limit=1&labelSelector=pick%3Dno", 0, n},
		{"resourceVersion 0", "limit=1&resourceVersion=0", n, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st.take()
			rec := do(h, "GET", objects+"?"+tc.query, "", nil)
			var list struct {
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("%d %.300s: %v", rec.Code, rec.Body, err)
			}
			if got := st.take(); len(list.Items) != tc.items || got != tc.read {
				t.Errorf("%d items, %d read from storage; want %d items, %d read", len(list.Items), got, tc.items, tc.read)
			}
		})
	}
}

// TestListPagingAsOracle holds the engine on memory storage to the real server's paginated LISTs recorded in
// testdata/list-paging.json (see oraclecase.RunPaging; the server package's test of the same name also runs
// them on etcd, with the compacted continue token).
func TestListPagingAsOracle(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "list-paging.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []oraclecase.PagingAnswer
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := oraclecase.RunPaging(oraclecase.HandlerClient(h), "http://engine", oraclecase.PagingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range oraclecase.ComparePaging(want, got) {
		t.Error(d)
	}
}
