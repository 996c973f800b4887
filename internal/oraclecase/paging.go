package oraclecase

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The paging scenario holds paginated LISTs to the real server's answers, which the case format cannot express:
// each page's request carries the continue token of an earlier answer, and the tokens carry revisions that
// differ between servers. Its answers are recorded from the real server (bin/oracle serve, with
// --etcd-compaction-interval=5s so that its own compactor forgets the first page's revision) into
// testdata/list-paging.json by the server package's TestListPagingAsOracle with -record-paging.

// pagingCRD is a namespaced CronTab that keeps what its spec holds.
const pagingCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"crontabs.paging.example.com"},
"spec":{"group":"paging.example.com","scope":"Namespaced",
"names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","listKind":"CronTabList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
"properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`

const (
	pagingCRDPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	pagingList    = "/apis/paging.example.com/v1/namespaces/default/crontabs"
)

// pagingStep is one request of the scenario: query is added to the list URL, with "{page1}" (and so on)
// replaced by the continue token of that earlier step's answer.
type pagingStep struct {
	name  string
	query string
	// compact writes an object and has the store forget the revisions before it, before the request.
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

// PagingAnswer is what an answer of the paging scenario is compared on: the status, the names listed, and the
// list metadata with the continue token decoded, its revision said relative to the lists' (which differ
// between servers); for a failure, the normalised Status.
type PagingAnswer struct {
	Step      string          `json:"step"`
	Compacted bool            `json:"compacted,omitempty"`
	Status    int             `json:"status"`
	Names     []string        `json:"names,omitempty"`
	Continue  *PagingToken    `json:"continue,omitempty"`
	Remaining *int64          `json:"remainingItemCount,omitempty"`
	ListRV    string          `json:"resourceVersion,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

// PagingToken is a decoded continue token.
type PagingToken struct {
	V     string `json:"v"`
	RV    string `json:"rv"`
	Start string `json:"start"`
}

// PagingOptions say how RunPaging reaches a store's compaction.
type PagingOptions struct {
	// Compact, if set, has the server's storage forget every revision before the current one; without it the
	// compaction step is left out.
	Compact func() error
	// Settle retries the compacted step's request for up to 90 s while it answers 200: the real server's
	// watch cache keeps serving a compacted revision from its snapshot until it learns of the compaction.
	Settle bool
}

// RunPaging creates the CRD and five objects a..e (a, c, e labelled color=red; b, d blue) at base, makes each
// step's request and returns the answers; it deletes the CRD at the end.
func RunPaging(client *http.Client, base string, opts PagingOptions) ([]PagingAnswer, error) {
	req := func(method, path, body string) (int, []byte, error) {
		r, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(r)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp.StatusCode, data, err
	}
	create := func(path, body string) error {
		code, data, err := req("POST", path, body)
		if err == nil && code != http.StatusCreated {
			err = fmt.Errorf("POST %s: %d %s", path, code, data)
		}
		return err
	}
	if err := create(pagingCRDPath, pagingCRD); err != nil {
		return nil, err
	}
	// The real server outlives the run: leave it as it was found.
	defer req("DELETE", pagingCRDPath+"/crontabs.paging.example.com", "")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if code, _, err := req("GET", pagingList, ""); err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the CRD's resource is not served after 30 s")
		}
	}
	for i, name := range []string{"a", "b", "c", "d", "e"} {
		color := "red"
		if i%2 == 1 {
			color = "blue"
		}
		obj := fmt.Sprintf(`{"apiVersion":"paging.example.com/v1","kind":"CronTab","metadata":{"name":%q,"labels":{"color":%q}},"spec":{"n":%d}}`, name, color, i)
		if err := create(pagingList, obj); err != nil {
			return nil, err
		}
	}
	tokens := map[string]string{}
	firstRV := ""
	var out []PagingAnswer
	for _, st := range pagingSteps {
		if st.compact {
			if opts.Compact == nil {
				continue
			}
			// A write after the first page, so that the compaction forgets the first page's revision.
			if err := create(pagingList, `{"apiVersion":"paging.example.com/v1","kind":"CronTab","metadata":{"name":"f"}}`); err != nil {
				return nil, err
			}
			if err := opts.Compact(); err != nil {
				return nil, err
			}
		}
		q := st.query
		for name, tok := range tokens {
			q = strings.ReplaceAll(q, "{"+name+"}", url.QueryEscape(tok))
		}
		code, body, err := req("GET", pagingList+"?"+q, "")
		for deadline := time.Now().Add(90 * time.Second); err == nil && st.compact && opts.Settle && code == http.StatusOK && time.Now().Before(deadline); {
			time.Sleep(time.Second)
			code, body, err = req("GET", pagingList+"?"+q, "")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.name, err)
		}
		a, tok, err := pagingAnswer(st, code, body, &firstRV)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.name, err)
		}
		if tok != "" {
			tokens[st.name] = tok
		}
		out = append(out, a)
	}
	return out, nil
}

// pagingAnswer reduces an answer to what is compared, and returns its continue token.
func pagingAnswer(st pagingStep, code int, body []byte, firstRV *string) (PagingAnswer, string, error) {
	var resp struct {
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
		return PagingAnswer{}, "", fmt.Errorf("%v: %s", err, body)
	}
	if st.name == "page1" {
		*firstRV = resp.Metadata.ResourceVersion
	}
	a := PagingAnswer{Step: st.name, Compacted: st.compact, Status: code, Remaining: resp.Metadata.RemainingItemCount}
	tok := resp.Metadata.Continue
	if tok != "" {
		data, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return a, "", fmt.Errorf("continue token %q: %v", tok, err)
		}
		var c struct {
			V     string `json:"v"`
			RV    int64  `json:"rv"`
			Start string `json:"start"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return a, "", fmt.Errorf("continue token %q: %v", data, err)
		}
		a.Continue = &PagingToken{V: c.V, RV: relativeRV(fmt.Sprint(c.RV), resp.Metadata.ResourceVersion, *firstRV), Start: c.Start}
	}
	if code == http.StatusOK {
		a.Names = []string{}
		for _, it := range resp.Items {
			a.Names = append(a.Names, it.Metadata.Name)
		}
		if a.ListRV = relativeRV(resp.Metadata.ResourceVersion, resp.Metadata.ResourceVersion, *firstRV); a.ListRV == "<this list's>" {
			a.ListRV = "<latest>"
		}
		return a, tok, nil
	}
	var status map[string]any
	if err := json.Unmarshal(body, &status); err != nil {
		return a, "", err
	}
	if md, ok := status["metadata"].(map[string]any); ok {
		delete(md, "continue") // decoded above
	}
	raw, err := json.Marshal(status)
	if err != nil {
		return a, "", err
	}
	a.Error, err = NormalizeJSON(raw)
	return a, tok, err
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

// ComparePaging reports each answer of got that differs from the recorded want, as a unified diff; the
// compacted step is skipped when got has none (a store without compaction).
func ComparePaging(want, got []PagingAnswer) []string {
	var diffs []string
	i := 0
	for _, w := range want {
		if w.Compacted && (i >= len(got) || !got[i].Compacted) {
			continue
		}
		if i >= len(got) {
			diffs = append(diffs, w.Step+": no answer")
			continue
		}
		wj, _ := json.MarshalIndent(w, "", "  ")
		gj, _ := json.MarshalIndent(got[i], "", "  ")
		if !bytes.Equal(wj, gj) {
			diffs = append(diffs, fmt.Sprintf("%s differs from the real server's answer:\n%s", w.Step, UnifiedDiff("oracle", "crdplay", wj, gj)))
		}
		i++
	}
	return diffs
}
