package playground

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	yaml3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"crdplay/playground/internal/yamlpos"
)

// A CRD text may be a release bundle: CRDs beside the Namespaces, RBAC, Deployments and admission policies an
// install file or an operator bundle holds. The playground checks the CRDs and the objects they define; every
// other document is listed once as not checked, never a reason to check nothing.

// docMeta reads a document's apiVersion, kind and metadata.name from its parse tree, without converting it.
func docMeta(d *yamlpos.Doc) (apiVersion, kind, name string) {
	if d == nil || d.Root == nil {
		return "", "", ""
	}
	return scalarAt(d.Root, "apiVersion"), scalarAt(d.Root, "kind"), scalarAt(d.Root, "metadata", "name")
}

// scalarAt is the plain scalar at a path of mapping keys under n, or "".
func scalarAt(n *yaml3.Node, path ...string) string {
	for _, key := range path {
		if n == nil || n.Kind != yaml3.MappingNode {
			return ""
		}
		var next *yaml3.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		n = next
		if n != nil && n.Kind == yaml3.AliasNode {
			n = n.Alias
		}
	}
	if n == nil || n.Kind != yaml3.ScalarNode {
		return ""
	}
	return n.Value
}

// otherKind reports whether d is a Kubernetes object of another kind than CustomResourceDefinition: a mapping
// that names its kind, and not the CRD kind of apiextensions.k8s.io. A document without a kind, or that does
// not parse, goes to the API, whose answer says what is wrong with it.
func otherKind(d *yamlpos.Doc) bool {
	if d.Err != nil || d.Root == nil || d.Root.Kind != yaml3.MappingNode {
		return false
	}
	apiVersion, kind, _ := docMeta(d)
	if kind == "" {
		return false
	}
	group, _, _ := strings.Cut(apiVersion, "/")
	return kind != "CustomResourceDefinition" || group != "apiextensions.k8s.io"
}

// notChecked is the note of a document of a CRD text that is not a CRD: a warning for admission
// configuration (admissionKind), whose absence can change the answers, a note for anything else.
func notChecked(src Source, d *yamlpos.Doc) Diagnostic {
	apiVersion, kind, name := docMeta(d)
	what := kind
	if name != "" {
		what += " " + name
	}
	if apiVersion != "" {
		what += " (" + apiVersion + ")"
	}
	if admissionKind(apiVersion, kind) {
		n := notApplied(what, d.Start())
		n.Source, n.Document = src, d.Index
		return n
	}
	return Diagnostic{Source: src, Document: d.Index, Type: "NotChecked", Severity: SeverityInfo, Span: d.Start(), Exact: true,
		Message: fmt.Sprintf("not checked: %s is not a CustomResourceDefinition; the playground checks CRDs and the objects they define", what)}
}

// admissionKind reports whether apiVersion and kind name admission configuration: a policy, a policy's
// binding or a webhook configuration of admissionregistration.k8s.io. A cluster that holds one runs it on
// the writes of CRDs and objects that the playground answers for, and it can refuse or change them; the
// playground does not run admission, so its answers are those of a cluster without it, which the user must
// be told rather than left to read a "safe" as the cluster's.
func admissionKind(apiVersion, kind string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	if group != "admissionregistration.k8s.io" {
		return false
	}
	switch kind {
	case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding",
		"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		return true
	}
	return false
}

// notApplied is the warning for a document of admission configuration among the inputs, at span; what names
// the document. Its severity is what the verdicts (the upgrade check's, crdplay check's) and the page's list of
// documents not checked tell it from the other documents not checked by.
func notApplied(what string, span yamlpos.Span) Diagnostic {
	return Diagnostic{Type: "NotChecked", Severity: SeverityWarning, Span: span, Exact: true,
		Message: fmt.Sprintf("not applied: %s is admission configuration, which a cluster holding it runs on the writes checked here "+
			"and which can refuse or change them; the playground does not run admission policies or webhooks, so its answers are a cluster's without it", what)}
}

// builtinGroup reports whether an API group is one of kube-apiserver's own (the core group "" and the
// built-in groups), whose objects no CRD defines.
func builtinGroup(group string) bool {
	switch group {
	case "", "apps", "batch", "autoscaling", "policy", "extensions",
		"admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "authentication.k8s.io",
		"authorization.k8s.io", "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io",
		"flowcontrol.apiserver.k8s.io", "internal.apiserver.k8s.io", "networking.k8s.io", "node.k8s.io",
		"rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io":
		return true
	}
	// Other *.k8s.io groups (gateway.networking.k8s.io, snapshot.storage.k8s.io) are Kubernetes projects'
	// CRDs: their objects are custom resources.
	return false
}

// serverSet are the metadata fields the API sets, which an object exported from a cluster (`kubectl get -o
// yaml`) carries and a create must not: the API refuses a create with a resourceVersion.
var serverSet = []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// clusterCRD reads a CRD document as a cluster holds it: the JSON to create it with (without the fields the
// API sets, and without status, which a create drops) and the status.storedVersions it carries (nil for
// none or an empty list). body is nil when the document has neither server-set fields nor status: it is then sent as it is.
func clusterCRD(d *yamlpos.Doc) (body []byte, stored []string) {
	if d.Err != nil || d.Root == nil || d.Root.Kind != yaml3.MappingNode {
		return nil, nil
	}
	exported := false
	for i := 0; i+1 < len(d.Root.Content); i += 2 {
		switch k := d.Root.Content[i].Value; k {
		case "status":
			exported = true
		case "metadata":
			for _, f := range serverSet {
				exported = exported || scalarAt(d.Root.Content[i+1], f) != "" || hasKey(d.Root.Content[i+1], f)
			}
		}
	}
	if !exported {
		return nil, nil
	}
	j := d.JSON
	if j == nil {
		var err error
		if j, err = yaml.YAMLToJSON([]byte(d.Source)); err != nil {
			return nil, nil
		}
	}
	var m map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	if dec.Decode(&m) != nil || m == nil {
		return nil, nil
	}
	if st, ok := m["status"].(map[string]interface{}); ok {
		// An empty list is not a cluster's (a served CRD always has its storage version stored): it is the
		// status stanza controller-gen writes into generated CRD files.
		if vs, ok := st["storedVersions"].([]interface{}); ok && len(vs) > 0 {
			stored = []string{}
			for _, v := range vs {
				if s, ok := v.(string); ok {
					stored = append(stored, s)
				}
			}
		}
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]interface{}); ok {
		for _, f := range serverSet {
			delete(md, f)
		}
	}
	b, err := json.Marshal(m)
	if err != nil || len(b) >= maxRequestBytes {
		return nil, stored
	}
	return b, stored
}

// hasKey reports whether the mapping n has key.
func hasKey(n *yaml3.Node, key string) bool {
	if n == nil || n.Kind != yaml3.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// expandLists takes a List document (`kubectl get crds -o yaml` exports one) as its items, each a document
// of its own placed at the item (yamlpos.Doc.Sub) and sent as the item's JSON, as kubectl create -f and
// apply -f flatten a List. Other documents are kept as they are.
func expandLists(docs []*yamlpos.Doc) []*yamlpos.Doc {
	var out []*yamlpos.Doc
	for _, d := range docs {
		apiVersion, kind, _ := docMeta(d)
		if d.Err != nil || kind != "List" || apiVersion != "v1" || !hasKey(d.Root, "items") {
			out = append(out, d)
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(d.Source))
		var m struct {
			Items []json.RawMessage `json:"items"`
		}
		if err != nil || json.Unmarshal(j, &m) != nil {
			out = append(out, d)
			continue
		}
		for i, item := range m.Items {
			sub := d.Sub([]yamlpos.Seg{yamlpos.K("items"), yamlpos.I(i)})
			if sub == nil {
				continue // an item from an alias or merge key: not placeable, and not what kubectl exports
			}
			sub.JSON = item
			out = append(out, sub)
		}
	}
	return out
}

// docLine is the first line of a CRD document: the document's, or the item's for a List's item.
func docLine(d *yamlpos.Doc) int {
	if d.JSON != nil {
		return d.Start().Line
	}
	return d.StartLine
}
