package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"crdplay/server"
)

// linkStorages are the storages short links are tested on: each returns options for a fresh store, and a
// restart that reopens the same store (nil when a restart loses everything, as memory's does).
var linkStorages = []struct {
	name string
	opts func(t *testing.T) server.Options
}{
	{"memory", func(t *testing.T) server.Options { return server.Options{} }},
	{"etcd", func(t *testing.T) server.Options {
		needSockets(t)
		return server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Embedded: true, DataDir: t.TempDir()}}
	}},
}

// serveHandler serves NewHandler(opts) and returns its URL and a stop function (also run at cleanup).
func serveHandler(t *testing.T, opts server.Options) (string, func()) {
	t.Helper()
	h, err := server.NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			srv.Close()
			h.Close()
		}
	}
	t.Cleanup(stop)
	return srv.URL, stop
}

const linkState = `{"crd":"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n","objects":"a: 1\n","mode":"create","tab":"result"}`

// linkID posts a state and returns the id of the answer, checking its status.
func linkID(t *testing.T, base, state string, want int) string {
	t.Helper()
	var res struct{ ID string }
	if err := json.Unmarshal(mustDo(t, "POST", base+server.LinksPath, state, want), &res); err != nil || len(res.ID) != 16 {
		t.Fatalf("POST %s: id %q (%v)", state[:min(len(state), 60)], res.ID, err)
	}
	return res.ID
}

// TestLinks: the short links' contract on every storage: the same state gets the same id, reads give it back,
// bad input and unknown ids get a status and a message that say why, and the bounds hold.
func TestLinks(t *testing.T) {
	for _, st := range linkStorages {
		t.Run(st.name, func(t *testing.T) {
			opts := st.opts(t)
			opts.Links = server.LinkOptions{MaxCount: 3, MaxStored: 4 << 10, MaxBody: 64 << 10}
			base, _ := serveHandler(t, opts)

			id := linkID(t, base, linkState, http.StatusCreated)
			if again := linkID(t, base, linkState, http.StatusOK); again != id {
				t.Errorf("the same state got id %s, then %s", id, again)
			}
			// Spelled otherwise (key order, spaces, escapes), it is the same state.
			respelled := `{ "tab":"result", "mode":"create", "objects":"a: 1\u000a",` + linkState[1:strings.Index(linkState, `,"objects"`)] + `}`
			if other := linkID(t, base, respelled, http.StatusOK); other != id {
				t.Errorf("the respelled state got id %s, the original %s", other, id)
			}
			var got, want map[string]string
			json.Unmarshal(mustDo(t, "GET", base+server.LinksPath+"/"+id, "", http.StatusOK), &got)
			json.Unmarshal([]byte(linkState), &want)
			if len(got) != len(want) || got["crd"] != want["crd"] || got["objects"] != want["objects"] {
				t.Errorf("GET %s = %v, want %v", id, got, want)
			}

			for _, tc := range []struct {
				name, method, path, body string
				status                   int
				message                  string
			}{
				{"not JSON", "POST", server.LinksPath, `{"crd": `, 400, "the state is not JSON"},
				{"not an object", "POST", server.LinksPath, `["crd"]`, 400, "must be a JSON object of strings"},
				{"null", "POST", server.LinksPath, `null`, 400, "not null"},
				{"a field not a string", "POST", server.LinksPath, `{"crd": {"kind": "x"}}`, 400, `field \"crd\" must be a string`},
				{"body too big", "POST", server.LinksPath, `{"crd":"` + strings.Repeat("x", 65<<10) + `"}`, 413, "larger than 64 kB"},
				{"too big compressed", "POST", server.LinksPath, `{"crd":"` + pseudoRandom(20<<10) + `"}`, 413, "keeps links of at most 4 kB"},
				{"unknown id", "GET", server.LinksPath + "/AAAAAAAAAAAAAAAA", "", 404, `no short link \"AAAAAAAAAAAAAAAA\" on this server`},
				{"malformed id", "GET", server.LinksPath + "/../../apis", "", 404, "16 characters"},
				{"GET of the collection", "GET", server.LinksPath, "", 405, "takes POST"},
				{"PUT of a link", "PUT", server.LinksPath + "/" + id, linkState, 405, "cannot be changed"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					code, body := do(t, tc.method, base+tc.path, tc.body)
					if code != tc.status || !strings.Contains(string(body), tc.message) {
						t.Errorf("%s %s: %d %s\nwant %d with %q", tc.method, tc.path, code, body, tc.status, tc.message)
					}
				})
			}

			// The count bound: two more states fit, the fourth is refused; a state already kept still is.
			linkID(t, base, `{"crd":"two"}`, http.StatusCreated)
			linkID(t, base, `{"crd":"three"}`, http.StatusCreated)
			if code, body := do(t, "POST", base+server.LinksPath, `{"crd":"four"}`); code != http.StatusInsufficientStorage || !strings.Contains(string(body), "keeps no more short links") {
				t.Errorf("a fourth link: %d %s, want 507", code, body)
			}
			linkID(t, base, linkState, http.StatusOK)

			// The page learns of short links from a header outside the API; API answers are left alone.
			for path, want := range map[string]string{"/": server.LinksPath, "/index.html": server.LinksPath, "/apis": ""} {
				resp, err := http.Head(base + path)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if got := resp.Header.Get(server.LinksHeader); got != want {
					t.Errorf("HEAD %s: %s %q, want %q", path, server.LinksHeader, got, want)
				}
			}
			// Links are not Kubernetes objects: the engine's lists do not see them.
			mustDo(t, "POST", base+crdsPath, widgetCRD, 201)
			if b := mustDo(t, "GET", base+crdsPath, "", 200); strings.Contains(string(b), "crdplay") {
				t.Errorf("the CRD list shows a link: %s", b)
			}
		})
	}
}

// TestLinksSurviveRestart: on etcd, links and their count are kept across a restart of the server.
func TestLinksSurviveRestart(t *testing.T) {
	needSockets(t)
	opts := server.Options{Storage: server.StorageEtcd, Etcd: server.EtcdOptions{Embedded: true, DataDir: t.TempDir()},
		Links: server.LinkOptions{MaxCount: 1}}
	base, stop := serveHandler(t, opts)
	id := linkID(t, base, linkState, http.StatusCreated)
	stop()

	base, _ = serveHandler(t, opts)
	var got map[string]string
	json.Unmarshal(mustDo(t, "GET", base+server.LinksPath+"/"+id, "", http.StatusOK), &got)
	if got["objects"] != "a: 1\n" {
		t.Errorf("after a restart, link %s reads %v", id, got)
	}
	mustDo(t, "POST", base+server.LinksPath, `{"crd":"another"}`, http.StatusInsufficientStorage)
}

// TestLinksOff: with short links off, their path is the API's (a 404) and no page is told of them.
func TestLinksOff(t *testing.T) {
	base, _ := serveHandler(t, server.Options{Links: server.LinkOptions{Off: true}})
	code, _ := do(t, "POST", base+server.LinksPath, linkState)
	if code != http.StatusNotFound {
		t.Errorf("POST %s with links off: %d, want 404", server.LinksPath, code)
	}
	resp, err := http.Head(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if h := resp.Header.Get(server.LinksHeader); h != "" {
		t.Errorf("links off, yet %s: %q", server.LinksHeader, h)
	}
}

// pseudoRandom is n characters that deflate cannot shrink much.
func pseudoRandom(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = alphabet[x%uint32(len(alphabet))]
	}
	return string(b)
}
