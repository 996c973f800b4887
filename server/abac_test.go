package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// abacExamples are the policies of kube-apiserver's ABAC documentation
// (https://kubernetes.io/docs/reference/access-authn-authz/abac/#examples), one a line, with an unversioned
// (v0) policy and comments as the format allows.
const abacExamples = `# Alice can do anything to all resources:
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*"}}
# The kubelet can read any pods:
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "kubelet", "namespace": "*", "resource": "pods", "readonly": true}}
# The kubelet can read and write events:
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "kubelet", "namespace": "*", "resource": "events"}}
# Bob can just read pods in namespace "projectCaribou":
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "bob", "namespace": "projectCaribou", "resource": "pods", "readonly": true}}
# Anyone can make read-only requests to all non-resource paths:
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "readonly": true, "nonResourcePath": "*"}}
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:unauthenticated", "readonly": true, "nonResourcePath": "*"}}

# An unversioned policy: carol may read everything, resources and paths.
{"user": "carol", "readonly": true}
# A v1beta1 user "*" is every authenticated user: here, of the widgets of example.com.
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "*", "namespace": "*", "resource": "widgets", "apiGroup": "example.com"}}
`

// TestABAC checks the documented examples' meaning: who may do what under them.
func TestABAC(t *testing.T) {
	p := filepath.Join(t.TempDir(), "policy.jsonl")
	if err := os.WriteFile(p, []byte(abacExamples), 0o600); err != nil {
		t.Fatal(err)
	}
	pl, err := newABACFromFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl) != 8 {
		t.Fatalf("%d policies, want 8", len(pl))
	}
	authed := func(name string, groups ...string) user.Info {
		return &user.DefaultInfo{Name: name, Groups: append(groups, user.AllAuthenticated)}
	}
	anonymous := &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	res := func(u user.Info, verb, group, resource, ns string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, APIGroup: group, Resource: resource, Namespace: ns, ResourceRequest: true}
	}
	path := func(u user.Info, verb, p string) authorizer.AttributesRecord {
		return authorizer.AttributesRecord{User: u, Verb: verb, Path: p}
	}
	tests := []struct {
		name  string
		attrs authorizer.AttributesRecord
		allow bool
	}{
		{"alice deletes anything", res(authed("alice"), "delete", "apps", "deployments", "kube-system"), true},
		{"alice creates cluster-scoped", res(authed("alice"), "create", "apiextensions.k8s.io", "customresourcedefinitions", ""), true},
		{"kubelet reads pods", res(authed("kubelet"), "list", "", "pods", "default"), true},
		{"kubelet may not write pods", res(authed("kubelet"), "update", "", "pods", "default"), false},
		{"kubelet writes events", res(authed("kubelet"), "create", "", "events", "default"), true},
		{"kubelet's events are the core group's only", res(authed("kubelet"), "create", "events.k8s.io", "events", "default"), false},
		{"bob reads pods in projectCaribou", res(authed("bob"), "get", "", "pods", "projectCaribou"), true},
		{"bob may not read pods elsewhere", res(authed("bob"), "get", "", "pods", "default"), false},
		{"bob may not write pods in projectCaribou", res(authed("bob"), "create", "", "pods", "projectCaribou"), false},
		{"anyone authenticated reads /version", path(authed("bob"), "get", "/version"), true},
		{"anonymous reads /healthz", path(anonymous, "get", "/healthz"), true},
		{"no one posts to a path", path(authed("bob"), "post", "/crdplay/v1/links"), false},
		{"anonymous reads no resource", res(anonymous, "get", "", "pods", "projectCaribou"), false},
		{"v0: carol reads any resource", res(authed("carol"), "watch", "example.com", "widgets", "default"), true},
		{"v0: carol reads any path", path(authed("carol"), "get", "/apis"), true},
		{"v0: carol writes nothing", res(authed("carol"), "create", "", "pods", "default"), false},
		{"v1beta1 *: any authenticated user writes widgets", res(authed("dave"), "create", "example.com", "widgets", "ns"), true},
		{"v1beta1 *: not anonymous", res(anonymous, "create", "example.com", "widgets", "ns"), false},
		{"v1beta1 *: not other groups", res(authed("dave"), "create", "other.com", "widgets", "ns"), false},
		{"no user: nothing", authorizer.AttributesRecord{Verb: "get", Path: "/version"}, false},
	}
	for _, tt := range tests {
		decision, reason, err := pl.Authorize(context.Background(), tt.attrs)
		if err != nil {
			t.Fatal(err)
		}
		if got := decision == authorizer.DecisionAllow; got != tt.allow {
			t.Errorf("%s: allowed %v, want %v", tt.name, got, tt.allow)
		}
		if !tt.allow && reason != abacNoMatch {
			t.Errorf("%s: reason %q", tt.name, reason)
		}
	}
}

func TestABACFileErrors(t *testing.T) {
	tests := []struct{ file, want string }{
		{`{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Rule", "spec": {}}`, `line 1: {"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Rule", "spec": {}}: no kind "Rule" is registered`},
		{"\n# ok\n{\"user\": \"a\"\n", "line 3: "},
		{`{"apiVersion": "abac.authorization.kubernetes.io/v2", "kind": "Policy"}`, `unknown apiVersion "abac.authorization.kubernetes.io/v2"`},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "policy.jsonl")
		if err := os.WriteFile(p, []byte(tt.file), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := newABACFromFile(p)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "error reading policy file "+p) {
			t.Errorf("%q: %v, want %q", tt.file, err, tt.want)
		}
	}
}
