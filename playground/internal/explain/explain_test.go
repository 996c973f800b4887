package explain

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"crdplay/playground/internal/yamlpos"
)

func TestBuild(t *testing.T) {
	const schema = `{
	  "type": "object",
	  "properties": {
	    "spec": {
	      "type": "object", "required": ["size"], "description": "the spec",
	      "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "too big"}],
	      "properties": {
	        "size": {"type": "integer", "minimum": 0, "maximum": 10, "default": 1},
	        "mode": {"type": "string", "enum": ["a", "b"]},
	        "port": {"x-kubernetes-int-or-string": true},
	        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
	        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
	          "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
	      }
	    }
	  }
	}`
	var s apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	var located []string
	root := Build(&s, []yamlpos.Seg{yamlpos.K("openAPIV3Schema")}, func(segs []yamlpos.Seg) *yamlpos.Span {
		located = append(located, yamlpos.FormatSegs(segs))
		return nil
	})
	// apiVersion, kind and metadata, which the schema leaves out, as every object has them.
	var top []string
	for _, p := range root.Properties {
		top = append(top, p.Name)
	}
	if fmtList(top) != "[apiVersion kind metadata spec]" || !root.Properties[0].Builtin || root.Properties[3].Builtin {
		t.Fatalf("root fields %v", top)
	}
	md := root.Properties[2]
	mdFields := map[string]string{}
	for _, p := range md.Properties {
		mdFields[p.Name] = p.Explain
		if p.Description == "" {
			t.Errorf("metadata.%s has no description", p.Name)
		}
	}
	if md.Explain != "ObjectMeta" || mdFields["name"] != "string" || mdFields["labels"] != "map[string]string" ||
		mdFields["finalizers"] != "[]string" || mdFields["generation"] != "integer" || mdFields["ownerReferences"] != "[]OwnerReference" {
		t.Errorf("metadata %s %v", md.Explain, mdFields)
	}
	spec := root.Properties[3]
	if spec.Name != "spec" || spec.Path != "spec" || spec.Description != "the spec" || len(spec.Rules) != 1 || spec.Rules[0].Message != "too big" {
		t.Fatalf("spec node %+v", spec)
	}
	byName := map[string]*Node{}
	for _, p := range spec.Properties {
		byName[p.Name] = p
	}
	// Fields in kubectl explain's order: sorted.
	var names []string
	for _, p := range spec.Properties {
		names = append(names, p.Name)
	}
	if want := "[items labels mode port size]"; fmtList(names) != want {
		t.Errorf("fields %v, want %s", names, want)
	}
	for _, tc := range []struct {
		name, explain, path string
		required            bool
	}{
		{"size", "integer", "spec.size", true},
		{"mode", "string", "spec.mode", false},
		{"port", "IntOrString", "spec.port", false},
		{"labels", "map[string]string", "spec.labels", false},
		{"items", "[]Object", "spec.items", false},
	} {
		n := byName[tc.name]
		if n == nil || n.Explain != tc.explain || n.Path != tc.path || n.Required != tc.required {
			t.Errorf("%s: %+v, want explain %q path %q required %v", tc.name, n, tc.explain, tc.path, tc.required)
		}
	}
	if n := byName["size"]; n.Validations == nil || *n.Validations.Maximum != 10 || string(n.Default) != "1" {
		t.Errorf("size validations %+v default %s", n.Validations, n.Default)
	}
	if n := byName["mode"]; len(n.Enum) != 2 || string(n.Enum[1]) != `"b"` {
		t.Errorf("mode enum %s", n.Enum)
	}
	if n := byName["items"]; n.ListType != "map" || n.Items == nil || n.Items.Path != "spec.items[*]" || n.Items.Properties[0].Path != "spec.items[*].name" {
		t.Errorf("items %+v", n)
	}
	if n := byName["labels"]; n.AdditionalProperties == nil || n.AdditionalProperties.Path != "spec.labels[*]" {
		t.Errorf("labels %+v", n)
	}
	// Each node is located by its key in the CRD text.
	want := map[string]bool{"openAPIV3Schema.properties.spec.properties.items.items.properties.name": true, "openAPIV3Schema.properties.spec.properties.labels.additionalProperties": true}
	for _, l := range located {
		delete(want, l)
	}
	if len(want) != 0 {
		t.Errorf("not located: %v (located %v)", want, located)
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}
