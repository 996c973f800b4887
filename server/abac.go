package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// kube-apiserver's ABAC authorizer (k8s.io/kubernetes/pkg/auth/authorizer/abac) lives in a module that cannot
// be imported, so its documented file format and matching are followed here rule for rule: one policy a line,
// versioned (abac.authorization.kubernetes.io/v1beta1 Policy) or unversioned (v0, converted as upstream
// converts it); blank lines and lines starting with # skipped; the first policy that matches allows.

// abacVersion is the apiVersion of a versioned ABAC policy.
const abacVersion = "abac.authorization.kubernetes.io/v1beta1"

// abacNoMatch is upstream's reason when no policy allows a request.
const abacNoMatch = "No policy matched."

// abacSpec is a policy's spec, after conversion: what matching reads.
type abacSpec struct {
	User            string `json:"user,omitempty"`
	Group           string `json:"group,omitempty"`
	Readonly        bool   `json:"readonly,omitempty"`
	APIGroup        string `json:"apiGroup,omitempty"`
	Resource        string `json:"resource,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	NonResourcePath string `json:"nonResourcePath,omitempty"`
}

// abacLine is one line of a policy file as written: a v1beta1 Policy, or a v0 policy's fields at the top.
type abacLine struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Spec       abacSpec `json:"spec"`
	// v0's fields.
	User      string `json:"user"`
	Group     string `json:"group"`
	Readonly  bool   `json:"readonly"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace"`
}

// abacPolicies is an ABAC policy file's policies, in order.
type abacPolicies []abacSpec

// newABACFromFile reads an ABAC policy file, reporting a line it cannot read as upstream does.
func newABACFromFile(path string) (abacPolicies, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pl abacPolicies
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for i := 1; scanner.Scan(); i++ {
		b := scanner.Bytes()
		trimmed := strings.TrimSpace(string(b))
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		p, err := parseABACLine(b)
		if err != nil {
			return nil, fmt.Errorf("error reading policy file %s, line %d: %s: %v", path, i, b, err)
		}
		pl = append(pl, p)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("error reading policy file %s: %v", path, err)
	}
	return pl, nil
}

// parseABACLine decodes and converts one policy as upstream's scheme does.
func parseABACLine(b []byte) (abacSpec, error) {
	var l abacLine
	if err := json.Unmarshal(b, &l); err != nil {
		return abacSpec{}, err
	}
	switch {
	case l.APIVersion == "" && l.Kind == "":
		// v0: the unversioned format.
		p := abacSpec{User: l.User, Group: l.Group, Namespace: l.Namespace, Resource: l.Resource, Readonly: l.Readonly}
		if l.User == "" && l.Group == "" {
			p.Group = user.AllAuthenticated
		}
		if l.User == "*" || l.Group == "*" {
			p.Group = user.AllAuthenticated
			p.User = ""
		}
		if l.Namespace == "" {
			p.Namespace = "*"
		}
		if l.Resource == "" {
			p.Resource = "*"
		}
		p.APIGroup = "*"
		if l.Namespace == "" && l.Resource == "" {
			p.NonResourcePath = "*"
		}
		return p, nil
	case l.APIVersion == abacVersion && l.Kind == "Policy":
		p := l.Spec
		// In v1beta1, a user or group of * is every authenticated subject.
		if p.User == "*" || p.Group == "*" {
			p.Group = user.AllAuthenticated
			p.User = ""
		}
		return p, nil
	case l.APIVersion == abacVersion:
		return abacSpec{}, fmt.Errorf("no kind %q is registered for version %q", l.Kind, abacVersion)
	default:
		return abacSpec{}, fmt.Errorf("unknown apiVersion %q (want %q)", l.APIVersion, abacVersion)
	}
}

// Authorize allows a request that a policy matches.
func (pl abacPolicies) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	for _, p := range pl {
		if p.matches(a) {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, abacNoMatch, nil
}

func (pl abacPolicies) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(pl.Authorize(ctx, a))
}

func (abacPolicies) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

func (p abacSpec) matches(a authorizer.Attributes) bool {
	if !p.subjectMatches(a.GetUser()) {
		return false
	}
	// Every policy allows reads; a read-only one allows nothing else.
	if !a.IsReadOnly() && p.Readonly {
		return false
	}
	// A request is either a resource or a non-resource request: at most one of these can match.
	return p.resourceMatches(a) || p.nonResourceMatches(a)
}

// subjectMatches: a user, if set, must be the request's (or "*"); a group, if set, must be one of its groups
// (or "*"); a policy that sets neither matches nobody.
func (p abacSpec) subjectMatches(u user.Info) bool {
	if u == nil {
		return false
	}
	matched := false
	if p.User != "" {
		if p.User == "*" {
			matched = true
		} else {
			if p.User != u.GetName() {
				return false
			}
			matched = true
		}
	}
	if p.Group != "" {
		if p.Group == "*" {
			matched = true
		} else {
			matched = false
			for _, g := range u.GetGroups() {
				if g == p.Group {
					matched = true
				}
			}
			if !matched {
				return false
			}
		}
	}
	return matched
}

func (p abacSpec) resourceMatches(a authorizer.Attributes) bool {
	return a.IsResourceRequest() &&
		(p.Namespace == "*" || p.Namespace == a.GetNamespace()) &&
		(p.Resource == "*" || p.Resource == a.GetResource()) &&
		(p.APIGroup == "*" || p.APIGroup == a.GetAPIGroup())
}

// nonResourceMatches: "*" matches every path, a path ending in * its subpaths, any other path itself.
func (p abacSpec) nonResourceMatches(a authorizer.Attributes) bool {
	if a.IsResourceRequest() {
		return false
	}
	path := a.GetPath()
	return p.NonResourcePath == "*" || p.NonResourcePath == path ||
		(strings.HasSuffix(p.NonResourcePath, "*") && strings.HasPrefix(path, strings.TrimRight(p.NonResourcePath, "*")))
}
