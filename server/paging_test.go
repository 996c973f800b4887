package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"crdplay/internal/oraclecase"
	"crdplay/server"
)

var (
	recordPagingFrom = flag.String("record-paging", "", "record testdata/list-paging.json from the real server at this URL (bin/oracle serve) instead of checking ours")
	recordPagingEtcd = flag.String("record-paging-etcd", "", "with -record-paging: the real server's etcd client URL, which the compaction step compacts")
)

// pagingCRD is a namespaced CronTab with a schema that keeps spec.
const pagingCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"crontabs.paging.example.com"},
"spec":{"group":"paging.example.com","scope":"Namespaced",
"names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","listKind":"CronTabList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
"properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`

const pagingList = "/apis/paging.example.com/v1/namespaces/default/crontabs"

// pagingStep is one request of the paging scenario: query is added to the list URL, with "{page1}" (and so on)
// replaced by the continue token of that earlier step's answer.
type pagingStep struct {
	name  string
	query string
	// compact compacts etcd at its current revision before the request.
	compact bool
}

var pagingSteps = []pagingStep{
	{name: "page1", query: "limit=2"},
	{name: "page2", query: "limit=2&continue={page1}"},
	{name: "page3", query: "limit=2&continue={page2}"},
	{name: "limit-4", query: "limit=4"},
	{name: "limit-5", query: "limit=5"},
	{name: "limit-6", query: "limit=6"},
	{name: "label-page1", query: "limit=2&labelSelector=color%3Dred"},
	{name: "label-page2", query: "limit=2&labelSelector=color%3Dred&continue={label-page1}"},
	{name: "label-blue-page1", query: "limit=1&labelSelector=color%3Dblue"},
	{name: "label-blue-page2", query: "limit=1&labelSelector=color%3Dblue&continue={label-blue-page1}"},
	{name: "label-none", query: "limit=1&labelSelector=color%3Dgreen"},
	{name: "field-page1", query: "limit=2&fieldSelector=metadata.name%21%3Da"},
	{name: "field-page2", query: "limit=2&fieldSelector=metadata.name%21%3Da&continue={field-page1}"},
	{name: "continue-with-rv", query: "limit=2&resourceVersion=1&continue={page1}"},
	{name: "continue-rv0", query: "limit=2&resourceVersion=0&continue={page1}"},
	{name: "continue-not-base64", query: "limit=2&continue=%25%25"},
	{name: "continue-not-json", query: "limit=2&continue=" + b64(`not json`)},
	{name: "continue-zero-rv", query: "limit=2&continue=" + b64(`{"v":"meta.k8s.io/v1","rv":0,"start":"default/b"}`)},
	{name: "continue-no-start", query: "limit=2&continue=" + b64(`{"v":"meta.k8s.io/v1","rv":1}`)},
	{name: "continue-up", query: "limit=2&continue=" + b64(`{"v":"meta.k8s.io/v1","rv":1,"start":"../x"}`)},
	{name: "continue-bad-version", query: "limit=2&continue=" + b64(`{"v":"v2","rv":1,"start":"default/b"}`)},
	{name: "continue-latest", query: "limit=2&continue=" + b64(`{"v":"meta.k8s.io/v1","rv":-1,"start":"default/b\u0000"}`)},
	{name: "continue-compacted", query: "limit=2&continue={page1}", compact: true},
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestListPagingAsOracle holds paginated LISTs to the real server's answers in testdata/list-paging.json: five
// objects read two at a time (each page's continue token, decoded, and remainingItemCount), selectors with a
// limit, malformed continue tokens, and a continue token whose revision etcd has compacted. It runs on memory
// and on etcd; the compaction step only on etcd.
func TestListPagingAsOracle(t *testing.T) {
	needSockets(t)
	golden := filepath.Join("testdata", "list-paging.json")
	if *recordPagingFrom != "" {
		got := runPaging(t, *recordPagingFrom, http.DefaultClient, *recordPagingEtcd)
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
	var want []pagingAnswer
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
			got := runPaging(t, srv.URL, srv.Client(), tc.etcd)
			i := 0
			for _, w := range want {
				if w.Compacted && tc.etcd == "" {
					continue
				}
				if i >= len(got) {
					t.Errorf("%s: no answer", w.Step)
					continue
				}
				wj, _ := json.MarshalIndent(w, "", "  ")
				gj, _ := json.MarshalIndent(got[i], "", "  ")
				if !bytes.Equal(wj, gj) {
					t.Errorf("%s differs from the real server's answer:\n%s", w.Step, oraclecase.UnifiedDiff("oracle", "crdplay", wj, gj))
				}
				i++
			}
		})
	}
}

// pagingAnswer is what a step's answer is compared on: the status, the names listed, and the list metadata
// with the continue token decoded (its revision as its relation to the lists' resourceVersions, which differ
// between servers).
type pagingAnswer struct {
	Step      string          `json:"step"`
	Compacted bool            `json:"compacted,omitempty"`
	Status    int             `json:"status"`
	Names     []string        `json:"names,omitempty"`
	Continue  *pagingToken    `json:"continue,omitempty"`
	Remaining *int64          `json:"remainingItemCount,omitempty"`
	ListRV    string          `json:"resourceVersion,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

type pagingToken struct {
	V     string `json:"v"`
	RV    string `json:"rv"`
	Start string `json:"start"`
}

// runPaging creates the CRD and five objects a..e (a, c, e labelled color=red; b, d blue) at base, then makes
// each step's request; with etcdURL empty, the compaction step is left out.
func runPaging(t *testing.T, base string, client *http.Client, etcdURL string) []pagingAnswer {
	t.Helper()
	req := func(method, path, body string) (int, []byte) {
		t.Helper()
		r, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, data
	}
	if code, body := req("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", pagingCRD); code != http.StatusCreated {
		t.Fatalf("creating the CRD: %d %s", code, body)
	}
	defer func() {
		// The real server outlives the test: leave it as it was found.
		r, _ := http.NewRequest("DELETE", base+"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.paging.example.com", nil)
		if resp, err := client.Do(r); err == nil {
			resp.Body.Close()
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _ := req("GET", pagingList, ""); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the CRD's resource is not served")
		}
	}
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		color := "red"
		if i%2 == 1 {
			color = "blue"
		}
		obj := fmt.Sprintf(`{"apiVersion":"paging.example.com/v1","kind":"CronTab","metadata":{"name":%q,"labels":{"color":%q}},"spec":{"n":%d}}`, name, color, i)
		if code, body := req("POST", pagingList, obj); code != http.StatusCreated {
			t.Fatalf("creating %s: %d %s", name, code, body)
		}
	}
	tokens := map[string]string{}
	firstRV := ""
	var out []pagingAnswer
	for _, st := range pagingSteps {
		if st.compact {
			if etcdURL == "" {
				continue
			}
			// A write after the first page, so that the compaction forgets the first page's revision.
			if code, body := req("POST", pagingList, `{"apiVersion":"paging.example.com/v1","kind":"CronTab","metadata":{"name":"f"}}`); code != http.StatusCreated {
				t.Fatalf("creating f: %d %s", code, body)
			}
			compactEtcd(t, etcdURL)
		}
		q := st.query
		for name, tok := range tokens {
			q = strings.ReplaceAll(q, "{"+name+"}", url.QueryEscape(tok))
		}
		code, body := req("GET", pagingList+"?"+q, "")
		// The real server's watch cache keeps serving the compacted revision from its snapshot until it polls
		// etcd's compaction (every 15 s): what is recorded is its answer after that.
		for deadline := time.Now().Add(90 * time.Second); st.compact && code == http.StatusOK && *recordPagingFrom != "" && time.Now().Before(deadline); {
			time.Sleep(time.Second)
			code, body = req("GET", pagingList+"?"+q, "")
		}
		var resp struct {
			Kind     string `json:"kind"`
			Metadata struct {
				ResourceVersion    string `json:"resourceVersion"`
				Continue           string `json:"continue"`
				RemainingItemCount *int64 `json:"remainingItemCount"`
			} `json:"metadata"`
			Items []struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatalf("%s: %v: %s", st.name, err, body)
		}
		if st.name == "page1" {
			firstRV = resp.Metadata.ResourceVersion
		}
		a := pagingAnswer{Step: st.name, Compacted: st.compact, Status: code, Remaining: resp.Metadata.RemainingItemCount}
		if resp.Metadata.Continue != "" {
			tokens[st.name] = resp.Metadata.Continue
			a.Continue = decodeToken(t, resp.Metadata.Continue, resp.Metadata.ResourceVersion, firstRV)
		}
		if code == http.StatusOK {
			a.Names = []string{}
			for _, it := range resp.Items {
				a.Names = append(a.Names, it.Metadata.Name)
			}
			a.ListRV = relativeRV(resp.Metadata.ResourceVersion, resp.Metadata.ResourceVersion, firstRV)
			if a.ListRV == "<this list's>" {
				a.ListRV = "<latest>"
			}
		} else {
			var status map[string]any
			if err := json.Unmarshal(body, &status); err != nil {
				t.Fatal(err)
			}
			if md, ok := status["metadata"].(map[string]any); ok {
				delete(md, "continue") // decoded above
			}
			a.Error, _ = json.Marshal(status)
			if a.Error, _ = oraclecase.NormalizeJSON(a.Error); a.Error == nil {
				t.Fatalf("%s: %s", st.name, body)
			}
		}
		out = append(out, a)
	}
	return out
}

// decodeToken decodes a continue token, its revision said relative to the list's and the first page's.
func decodeToken(t *testing.T, tok, listRV, firstRV string) *pagingToken {
	t.Helper()
	data, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatalf("continue token %q: %v", tok, err)
	}
	var c struct {
		V     string `json:"v"`
		RV    int64  `json:"rv"`
		Start string `json:"start"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("continue token %q: %v", data, err)
	}
	return &pagingToken{V: c.V, RV: relativeRV(fmt.Sprint(c.RV), listRV, firstRV), Start: c.Start}
}

func relativeRV(rv, listRV, firstRV string) string {
	switch {
	case rv == firstRV:
		return "<first page's>"
	case rv == listRV:
		return "<this list's>"
	case strings.HasPrefix(rv, "-") || rv == "0":
		return rv
	}
	return "<other>"
}

// compactEtcd compacts the etcd at endpoint at its current revision, as kube-apiserver's compactor does.
func compactEtcd(t *testing.T, endpoint string) {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, "compact_rev_key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
}
