package celcost

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func scratchSchema(t *testing.T, text string) *Schema {
	t.Helper()
	var s apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatal(err)
	}
	return prepare(&apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &s})
}

func obj(t *testing.T, text string) map[string]interface{} {
	t.Helper()
	if text == "" {
		return nil
	}
	var m map[string]interface{}
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestScratchAsTheRule holds the scratchpad to upstream's own handling of the same text as the only rule of the
// same node: its estimate and cardinality are the cost report's (cel.Compile in CRD validation's walk), and the
// runtime cost it adds up is what upstream's Validator spends validating the object with that rule.
func TestScratchAsTheRule(t *testing.T) {
	for _, tc := range []struct {
		name, self, rule, obj, old string
		// values are the expression's values at the nodes, as JSON
		values []string
	}{
		{name: "root", self: "", rule: "self.spec.min <= self.spec.max", obj: `{"spec":{"min":1,"max":3}}`, values: []string{"true"}},
		{name: "root false", self: "", rule: "self.spec.min <= self.spec.max", obj: `{"spec":{"min":4,"max":3}}`, values: []string{"false"}},
		{name: "metadata", self: "", rule: "self.metadata.name.startsWith('my') && self.kind == 'K'", obj: `{"kind":"K","metadata":{"name":"my-x"},"spec":{}}`, values: []string{"true"}},
		{name: "property", self: "spec", rule: "self.min <= self.max", obj: `{"spec":{"min":1,"max":3}}`, values: []string{"true"}},
		{name: "bounded items", self: "spec.bounded[*]", rule: "self.size() > 1", obj: `{"spec":{"bounded":["a","bb","ccc"]}}`, values: []string{"false", "true", "true"}},
		{name: "unbounded items", self: "spec.unbounded[*]", rule: "self.startsWith('a')", obj: `{"spec":{"unbounded":["ab","b"]}}`, values: []string{"true", "false"}},
		{name: "map values", self: "spec.labels[*]", rule: "self != 'x'", obj: `{"spec":{"labels":{"b":"x","a":"y"}}}`, values: []string{"true", "false"}},
		{name: "transition", self: "spec.counter", rule: "self >= oldSelf", obj: `{"spec":{"counter":2}}`, old: `{"spec":{"counter":3}}`, values: []string{"false"}},
		{name: "defaulted", self: "spec", rule: "self.mode == 'auto'", obj: `{"spec":{}}`, values: []string{"true"}},
		{name: "absent", self: "spec.bounded[*]", rule: "self.size() > 1", obj: `{"spec":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := schemaWithRule(tc.self, tc.rule)
			ps := scratchSchema(t, text)
			o, old := obj(t, tc.obj), obj(t, tc.old)
			got, err := Scratch(context.Background(), ps, ScratchInput{Self: tc.self, Expression: tc.rule, Object: o, Old: old})
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != "bool" || got.AsRule != "" || len(got.Errors) > 0 {
				t.Fatalf("compiled as %+v", got)
			}
			rep := Report(crdOf(t, text))
			if len(rep) != 1 || len(rep[0].Rules) != 1 {
				t.Fatalf("report: %+v", rep)
			}
			r := rep[0].Rules[0]
			if got.MaxCost != r.MaxCost || got.Cardinality != r.Cardinality || got.CardinalityBounded != r.CardinalityBounded || got.Cost != r.Cost || got.ExceedsLimit != r.ExceedsLimit || got.UsesOldSelf != r.Transition {
				t.Errorf("estimate %d x %d = %d (bounded %v, over %v, oldSelf %v); the CRD's rule: %d x %d = %d (bounded %v, over %v, oldSelf %v)",
					got.MaxCost, got.Cardinality, got.Cost, got.CardinalityBounded, got.ExceedsLimit, got.UsesOldSelf,
					r.MaxCost, r.Cardinality, r.Cost, r.CardinalityBounded, r.ExceedsLimit, r.Transition)
			}
			// The validator prunes and defaults its own copy: give it fresh ones.
			want := scratchSchema(t, text)
			if cost := NewRuntimeFrom(want).Cost(context.Background(), obj(t, tc.obj), obj(t, tc.old)); got.RuntimeCost != cost {
				t.Errorf("runtime cost %d; upstream's validator spends %d", got.RuntimeCost, cost)
			}
			var values []string
			for _, v := range got.Values {
				if v.Error != "" || v.Skipped != "" {
					t.Errorf("%s: %+v", v.Path, v)
				}
				b, _ := json.Marshal(v.Value)
				values = append(values, string(b))
			}
			if strings.Join(values, " ") != strings.Join(tc.values, " ") {
				t.Errorf("values %v, want %v", values, tc.values)
			}
		})
	}
}

// schemaWithRule is the test schema with rule as the only rule, at the node of self.
func schemaWithRule(self, rule string) string {
	node := map[string]string{
		"":                  "root",
		"spec":              "spec",
		"spec.bounded[*]":   "bounded",
		"spec.unbounded[*]": "unbounded",
		"spec.labels[*]":    "labels",
		"spec.counter":      "counter",
	}[self]
	v := func(name string) string {
		if name != node {
			return ""
		}
		return `"x-kubernetes-validations": [{"rule": ` + strconv.Quote(rule) + `}],`
	}
	return `{"type": "object", ` + v("root") + `
  "properties": {
    "spec": {"type": "object", ` + v("spec") + `
      "properties": {
        "min": {"type": "integer"},
        "max": {"type": "integer"},
        "mode": {"type": "string", "default": "auto"},
        "bounded": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 10, ` + v("bounded") + `"x-kubernetes-int-or-string": false}},
        "unbounded": {"type": "array", "items": {"type": "string", ` + v("unbounded") + `"x-kubernetes-int-or-string": false}},
        "labels": {"type": "object", "additionalProperties": {"type": "string", ` + v("labels") + `"x-kubernetes-int-or-string": false}},
        "counter": {"type": "integer", ` + v("counter") + `"x-kubernetes-int-or-string": false}
      }
    }
  }
}`
}

func crdOf(t *testing.T, text string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var s apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
		Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &s}}},
	}}
}

// TestScratchExpressions: what a rule cannot be (any type, compile errors), said where and as upstream says it.
func TestScratchExpressions(t *testing.T) {
	ps := scratchSchema(t, schemaWithRule("", "true"))
	o := `{"spec":{"min":1,"max":3,"bounded":["a","bb"],"labels":{"k":"v"}}}`
	for _, tc := range []struct {
		name, self, expr, old string
		optional              bool
		typ, value, skipped   string
		errAt                 string // line:column of the first compile error
		asRule                string // a substring of AsRule
	}{
		{name: "int", expr: "self.spec.max - self.spec.min", typ: "int", value: "2", asRule: "must evaluate to a bool"},
		{name: "list", expr: "self.spec.bounded.map(x, x + '!')", typ: "list(string)", value: `["a!","bb!"]`, asRule: "must evaluate to a bool"},
		{name: "object", self: "spec", expr: "self", typ: "object", value: `{"bounded":["a","bb"],"labels":{"k":"v"},"max":3,"min":1,"mode":"auto"}`, asRule: "must evaluate to a bool"},
		{name: "map", expr: "self.spec.labels", typ: "map(string, string)", value: `{"k":"v"}`, asRule: "must evaluate to a bool"},
		{name: "quantity", expr: "quantity('1Gi').add(quantity('1Gi'))", typ: "kubernetes.Quantity", value: `"2Gi"`, asRule: "must evaluate to a bool"},
		{name: "undefined field", expr: "self.spec.nope == 1", errAt: "1:10", asRule: "undefined field 'nope'"},
		{name: "syntax", expr: "self.spec.min <=", errAt: "1:17", asRule: "Syntax error"},
		{name: "second line", expr: "self.spec.min <= 1 &&\n  self.nope", errAt: "2:7", asRule: "undefined field 'nope'"},
		{name: "no old value", self: "spec", expr: "self.max >= oldSelf.max", typ: "bool", skipped: "does not evaluate"},
		{name: "old value", self: "spec", expr: "self.max >= oldSelf.max", old: `{"spec":{"max":4}}`, typ: "bool", value: "false"},
		{name: "optional old value", self: "spec", optional: true, expr: "oldSelf.hasValue()", typ: "bool", value: "false"},
		{name: "runtime error", expr: "self.spec.bounded[5] == 'a'", typ: "bool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Scratch(context.Background(), ps, ScratchInput{Self: tc.self, Expression: tc.expr, OptionalOldSelf: tc.optional, Object: obj(t, o), Old: obj(t, tc.old)})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got.AsRule, tc.asRule) || (tc.asRule == "") != (got.AsRule == "") {
				t.Errorf("as a rule: %q, want %q", got.AsRule, tc.asRule)
			}
			if tc.errAt != "" {
				if len(got.Errors) == 0 {
					t.Fatalf("no errors: %+v", got)
				}
				at := strconv.Itoa(got.Errors[0].Line) + ":" + strconv.Itoa(got.Errors[0].Column)
				if at != tc.errAt {
					t.Errorf("error at %s, want %s: %+v", at, tc.errAt, got.Errors)
				}
				// Upstream's own message places it at the same line and column.
				if m := regexp.MustCompile(`<input>:(\d+:\d+)`).FindStringSubmatch(got.AsRule); m == nil || m[1] != at {
					t.Errorf("upstream's message %q places it elsewhere than %s", got.AsRule, at)
				}
				return
			}
			if got.Type != tc.typ {
				t.Errorf("type %q, want %q", got.Type, tc.typ)
			}
			if len(got.Values) != 1 {
				t.Fatalf("values %+v", got.Values)
			}
			v := got.Values[0]
			if tc.name == "runtime error" {
				if v.Error == "" {
					t.Errorf("no error: %+v", v)
				}
				return
			}
			if !strings.Contains(v.Skipped, tc.skipped) || (tc.skipped == "") != (v.Skipped == "") {
				t.Errorf("skipped %q, want %q", v.Skipped, tc.skipped)
			}
			if tc.value != "" {
				b, _ := json.Marshal(v.Value)
				if string(b) != tc.value {
					t.Errorf("value %s, want %s", b, tc.value)
				}
			}
		})
	}
}

func TestScratchBadSelf(t *testing.T) {
	ps := scratchSchema(t, schemaWithRule("", "true"))
	for self, want := range map[string]string{
		"spec.nope":       `no property "spec.nope"`,
		"spec.min[*]":     "neither a list nor a map",
		"spec.bounded[0]": "want property names and [*]",
	} {
		_, err := Scratch(context.Background(), ps, ScratchInput{Self: self, Expression: "true"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("self %q: %v, want %q", self, err, want)
		}
	}
}
