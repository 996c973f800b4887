package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"crdplay/server"
)

// The tokens of the authentication tests, in kube-apiserver's --token-auth-file format.
const testTokens = `admin-token,admin,1,"system:masters"
alice-token,alice,2,"dev,ops"
bob-token,bob,3
`

// testPolicy is an ABAC policy file: alice may do everything, bob only read, anyone authenticated may read
// /metrics; admin is named nowhere (system:masters needs no policy).
const testPolicy = `# kube-apiserver's ABAC format: one policy a line
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*"}}
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "bob", "namespace": "*", "resource": "*", "apiGroup": "*", "readonly": true}}

{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "readonly": true, "nonResourcePath": "/metrics"}}
`

const (
	testCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

	// unauthorized is kube-apiserver's answer to a request no authenticator accepts when anonymous requests
	// are off (k8s.io/apiserver's filters.Unauthorized).
	unauthorized = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
)

// forbidden is kube-apiserver's 403 Status (responsewriters.Forbidden) for a create of a CRD by user, refused
// with reason (prefixed with the authorizer's name by the union of authorizers).
func forbiddenCRDCreate(user, reason string) string {
	return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"customresourcedefinitions.apiextensions.k8s.io is forbidden: User \"` + user +
		`\" cannot create resource \"customresourcedefinitions\" in API group \"apiextensions.k8s.io\" at the cluster scope: ` + reason +
		`","reason":"Forbidden","details":{"group":"apiextensions.k8s.io","kind":"customresourcedefinitions"},"code":403}`
}

// TestAuthorization: authentication by bearer token and the three authorization modes, with the Status bodies
// kube-apiserver's filters write; the health endpoints and short links stay public.
func TestAuthorization(t *testing.T) {
	yes, no := true, false
	dir := t.TempDir()
	files := writeFiles(t, dir, "tokens.csv", testTokens, "policy.jsonl", testPolicy)
	tokens, policy := files[0], files[1]

	type request struct {
		method, path, token, body string
		code                      int
		want                      string // the whole body, when set
	}
	tests := []struct {
		name     string
		auth     server.AuthOptions
		requests []request
	}{{
		name: "no authenticator: everyone may do everything, as before",
		requests: []request{
			{method: "POST", path: crdsPath, body: testCRD, code: 201},
			{method: "GET", path: "/metrics", code: 200},
		},
	}, {
		name: "tokens: anonymous refused with 401",
		auth: server.AuthOptions{TokenAuthFile: tokens},
		requests: []request{
			{method: "GET", path: crdsPath, code: 401, want: unauthorized},
			{method: "GET", path: crdsPath, token: "no-such-token", code: 401, want: unauthorized},
			{method: "GET", path: "/version", code: 401, want: unauthorized},
			{method: "GET", path: "/metrics", code: 401, want: unauthorized},
			{method: "GET", path: crdsPath, token: "bob-token", code: 200},
			{method: "POST", path: crdsPath, token: "alice-token", body: testCRD, code: 201},
			{method: "GET", path: "/metrics", token: "bob-token", code: 200},
			// Probes carry no credentials; the page's visitors create short links anonymously.
			{method: "GET", path: "/readyz", code: 200},
			{method: "GET", path: "/livez", code: 200},
			{method: "POST", path: server.LinksPath, body: `{"crd":"x"}`, code: 201},
		},
	}, {
		name: "tokens and anonymous: AuthenticatedWrite lets anonymous read only",
		auth: server.AuthOptions{TokenAuthFile: tokens, Anonymous: &yes},
		requests: []request{
			{method: "GET", path: crdsPath, code: 200},
			{method: "GET", path: "/metrics", code: 200},
			{method: "POST", path: crdsPath, body: testCRD, code: 403,
				want: forbiddenCRDCreate("system:anonymous", "authenticatedwrite: anonymous requests may only read (get, list, watch); authenticate to write")},
			{method: "DELETE", path: crdsPath, code: 403},
			{method: "POST", path: crdsPath, token: "bob-token", body: testCRD, code: 201},
		},
	}, {
		name: "ABAC",
		auth: server.AuthOptions{TokenAuthFile: tokens, AuthorizationMode: server.AuthorizationABAC, AuthorizationPolicyFile: policy},
		requests: []request{
			{method: "GET", path: crdsPath, code: 401, want: unauthorized},
			{method: "GET", path: crdsPath, token: "bob-token", code: 200},
			{method: "POST", path: crdsPath, token: "bob-token", body: testCRD, code: 403, want: forbiddenCRDCreate("bob", "abac: No policy matched.")},
			{method: "GET", path: "/metrics", token: "bob-token", code: 200},
			{method: "GET", path: "/version", token: "bob-token", code: 403,
				want: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"bob\" cannot get path \"/version\": abac: No policy matched.","reason":"Forbidden","details":{},"code":403}`},
			{method: "POST", path: crdsPath, token: "alice-token", body: testCRD, code: 201},
			// system:masters is allowed everything whatever the policy says, as in kube-apiserver.
			{method: "DELETE", path: crdsPath + "/widgets.example.com", token: "admin-token", code: 200},
		},
	}, {
		name: "anonymous off without tokens: nothing authenticates, so links may be put behind it",
		auth: server.AuthOptions{TokenAuthFile: tokens, Anonymous: &no, AuthenticateLinks: true},
		requests: []request{
			{method: "POST", path: server.LinksPath, body: `{"crd":"x"}`, code: 401, want: unauthorized},
			{method: "POST", path: server.LinksPath, token: "bob-token", body: `{"crd":"x"}`, code: 201},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, _ := serveHandler(t, server.Options{Auth: tt.auth})
			for _, r := range tt.requests {
				req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
				if err != nil {
					t.Fatal(err)
				}
				if r.token != "" {
					req.Header.Set("Authorization", "Bearer "+r.token)
				}
				if r.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != r.code {
					t.Errorf("%s %s (token %q): %d, want %d: %s", r.method, r.path, r.token, resp.StatusCode, r.code, body)
					continue
				}
				if r.want != "" && strings.TrimSpace(string(body)) != r.want {
					t.Errorf("%s %s (token %q):\n got %s\nwant %s", r.method, r.path, r.token, body, r.want)
				}
			}
		})
	}
}

// TestAuthOptionsRefused: settings that cannot work are errors that name the flag, never a server that
// refuses or allows everything by surprise.
func TestAuthOptionsRefused(t *testing.T) {
	no := false
	dir := t.TempDir()
	files := writeFiles(t, dir, "tokens.csv", testTokens, "bad-policy.jsonl", "{\"apiVersion\": \"abac.authorization.kubernetes.io/v1beta1\", \"kind\": \"Policy\", \"spec\": {\"user\": \"alice\"}}\nnot json\n",
		"bad-tokens.csv", "only-a-token\n")
	tests := []struct {
		auth server.AuthOptions
		want string
	}{
		{server.AuthOptions{AuthorizationMode: "RBAC"}, `unknown authorization mode "RBAC"`},
		{server.AuthOptions{AuthorizationMode: server.AuthorizationABAC}, "needs --authorization-policy-file"},
		{server.AuthOptions{AuthorizationPolicyFile: files[1]}, "--authorization-policy-file is only for --authorization-mode=ABAC"},
		{server.AuthOptions{AuthorizationMode: server.AuthorizationABAC, AuthorizationPolicyFile: files[1]}, "error reading policy file " + files[1] + ", line 2: not json"},
		{server.AuthOptions{AuthorizationMode: server.AuthorizationABAC, AuthorizationPolicyFile: filepath.Join(dir, "missing")}, "no such file"},
		{server.AuthOptions{TokenAuthFile: files[2]}, "--token-auth-file"},
		{server.AuthOptions{TokenAuthFile: filepath.Join(dir, "missing")}, "--token-auth-file"},
		{server.AuthOptions{ClientCAFile: filepath.Join(dir, "missing")}, "--client-ca-file"},
		{server.AuthOptions{Anonymous: &no}, "every request would be refused"},
	}
	for _, tt := range tests {
		h, err := server.NewHandler(server.Options{Auth: tt.auth})
		if err == nil {
			h.Close()
			t.Errorf("%+v: no error, want %q", tt.auth, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.auth, err, tt.want)
		}
	}
}

// BenchmarkAuthentication measures what authentication and authorization add to a request: a GET of a CRD list
// without them, and with a token checked and AuthenticatedWrite deciding.
func BenchmarkAuthentication(b *testing.B) {
	dir := b.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(testTokens), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		auth server.AuthOptions
	}{
		{"off", server.AuthOptions{}},
		{"token", server.AuthOptions{TokenAuthFile: tokens}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h, err := server.NewHandler(server.Options{Auth: bc.auth})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			req := httptest.NewRequest("GET", crdsPath, nil)
			for b.Loop() {
				req.Header.Set("Authorization", "Bearer alice-token")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// TestAuthenticationLeavesSitePublic: the page's files are served without a token while the API beside them
// needs one; the page's engine runs in the browser and never calls the server's API.
func TestAuthenticationLeavesSitePublic(t *testing.T) {
	dir := t.TempDir()
	tokens := writeFiles(t, dir, "tokens.csv", testTokens)[0]
	site := t.TempDir()
	writeFiles(t, site, "index.html", "<!doctype html><title>crdplay</title>", "app.js", "console.log(1)")
	base, _ := serveHandler(t, server.Options{Site: site, Auth: server.AuthOptions{TokenAuthFile: tokens}})
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/", 200},
		{"/app.js", 200},
		{"/readyz", 200},
		{"/apis", 401},
		{"/version", 401},
		{"/openapi/v2", 401},
	} {
		resp, err := http.Get(base + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("GET %s: %d, want %d", tc.path, resp.StatusCode, tc.code)
		}
	}
}
