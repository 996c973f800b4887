package celcost

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	yaml3 "go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const schema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min > max"}],
      "properties": {
        "min": {"type": "integer"},
        "max": {"type": "integer"},
        "bounded": {"type": "array", "maxItems": 5,
          "items": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self.size() > 0"}]}},
        "unbounded": {"type": "array",
          "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('a')"}]}},
        "counter": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf"}]}
      }
    }
  }
}`

func crd(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	return crdOf(t, schema)
}

func TestReport(t *testing.T) {
	rep := Report(crd(t))
	if len(rep) != 1 || rep[0].Skipped != "" {
		t.Fatalf("report %+v", rep)
	}
	rules := map[string]Rule{}
	var total uint64
	for _, r := range rep[0].Rules {
		rules[r.Self] = r
		total += r.Cost + r.MessageExpressionCost
		if r.Error != "" || r.MaxCost == 0 || r.Cost != r.MaxCost*r.Cardinality {
			t.Errorf("rule %q: %+v", r.Rule, r)
		}
	}
	if len(rules) != 4 {
		t.Fatalf("rules %+v", rules)
	}
	// Cardinality: the root and spec run once; items run maxItems times when bounded.
	for self, want := range map[string]struct {
		card       uint64
		bounded    bool
		transition bool
		field      string
	}{
		"spec":              {1, true, false, "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"},
		"spec.bounded[*]":   {5, true, false, "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[bounded].items.x-kubernetes-validations[0].rule"},
		"spec.unbounded[*]": {0, false, false, ""},
		"spec.counter":      {1, true, true, ""},
	} {
		r := rules[self]
		if (want.card != 0 && r.Cardinality != want.card) || r.CardinalityBounded != want.bounded || r.Transition != want.transition || (want.field != "" && r.Field != want.field) {
			t.Errorf("%s: %+v, want cardinality %d bounded %v transition %v field %q", self, r, want.card, want.bounded, want.transition, want.field)
		}
	}
	// Unbounded: the compiler's estimate from the request size limit, in the millions.
	if r := rules["spec.unbounded[*]"]; r.Cardinality < 100000 {
		t.Errorf("unbounded cardinality %d", r.Cardinality)
	}
	if rep[0].Total != total || rep[0].ExceedsLimit {
		t.Errorf("total %d (sum %d) exceeds=%v", rep[0].Total, total, rep[0].ExceedsLimit)
	}
}

func TestRuntimeCost(t *testing.T) {
	rt := NewRuntime(crd(t).Spec.Versions[0].Schema.OpenAPIV3Schema)
	if rt == nil {
		t.Fatal("no runtime for a schema with rules")
	}
	obj := func(n int, items ...interface{}) map[string]interface{} {
		return map[string]interface{}{"apiVersion": "x/v1", "kind": "X", "metadata": map[string]interface{}{"name": "a"},
			"spec": map[string]interface{}{"min": int64(1), "max": int64(2), "counter": int64(n), "bounded": items}}
	}
	ctx := context.Background()
	one := rt.Cost(ctx, obj(1, "a"), nil)
	three := rt.Cost(ctx, obj(1, "a", "b", "c"), nil)
	if one <= 0 || three <= one {
		t.Errorf("costs %d (one item) and %d (three): each item's rule must add", one, three)
	}
	// The transition rule runs only with an old object.
	if upd := rt.Cost(ctx, obj(2, "a"), obj(1, "a")); upd <= one {
		t.Errorf("update cost %d, create %d: the oldSelf rule must add", upd, one)
	}
	if NewRuntime(&apiextensionsv1.JSONSchemaProps{Type: "object"}) != nil {
		t.Error("a runtime for a schema without rules")
	}
}

// TestRuleSelves checks RuleSelvesYAML against the report it stands in for: the same rules' paths, in the
// same order, for the schema above and every corpus CRD that has rules.
func TestRuleSelves(t *testing.T) {
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{"inline": crd(t)}
	// Rules under additionalProperties and items, and at the root.
	var nested apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(`{"type": "object", "x-kubernetes-validations": [{"rule": "true"}, {"rule": "1 > 0"}],
	  "properties": {
	    "m": {"type": "object", "additionalProperties": {"type": "object", "x-kubernetes-validations": [{"rule": "size(self) > 0"}],
	      "properties": {"l": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]}}}}},
	    "b": {"type": "object", "properties": {"x": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]}}}
	  }}`), &nested); err != nil {
		t.Fatal(err)
	}
	crds["nested"] = &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &nested}}},
	}}
	texts := map[string][]byte{}
	files, err := filepath.Glob("../../../testdata/corpus/*/*/crd.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(b, c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		crds[f] = c
		texts[f] = b
	}
	withRules := 0
	for name, c := range crds {
		t.Run(name, func(t *testing.T) {
			rep := Report(c)
			for i, v := range c.Spec.Versions {
				var want []string
				for _, r := range rep[i].Rules {
					want = append(want, r.Self)
				}
				if rep[i].Skipped != "" {
					t.Fatalf("version %s: skipped: %s", v.Name, rep[i].Skipped)
				}
				if len(want) > 0 {
					withRules++
				}
				// The corpus CRD's own text, or the schema written as YAML.
				if v.Schema != nil && v.Schema.OpenAPIV3Schema != nil {
					b, err := yaml.Marshal(v.Schema.OpenAPIV3Schema)
					if err != nil {
						t.Fatal(err)
					}
					if text, ok := texts[name]; ok {
						b = schemaText(t, text, i)
					}
					var n yaml3.Node
					if err := yaml3.Unmarshal(b, &n); err != nil {
						t.Fatal(err)
					}
					if got := RuleSelvesYAML(n.Content[0]); !reflect.DeepEqual(got, want) {
						t.Errorf("version %s: RuleSelvesYAML %q, report %q", v.Name, got, want)
					}
				}
			}
		})
	}
	if withRules < 3 {
		t.Errorf("only %d versions with rules: the test checks little", withRules)
	}
}

// schemaText is the YAML of spec.versions[i].schema.openAPIV3Schema in a CRD's text, as it is written there.
func schemaText(t *testing.T, text []byte, i int) []byte {
	t.Helper()
	var doc yaml3.Node
	if err := yaml3.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	n := doc.Content[0]
	for _, k := range []any{"spec", "versions", i, "schema", "openAPIV3Schema"} {
		switch k := k.(type) {
		case string:
			var next *yaml3.Node
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == k {
					next = n.Content[j+1]
				}
			}
			if next == nil {
				t.Fatalf("no %s in the text", k)
			}
			n = next
		case int:
			n = n.Content[k]
		}
	}
	out, err := yaml3.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
