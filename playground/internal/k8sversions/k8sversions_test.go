package k8sversions

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"crdplay/playground/internal/celcost"
	"crdplay/playground/internal/yamlpos"
)

// specSchema is the spec of the test CRDs: every rule is placed on it, so "self" is the spec.
const specSchema = `{
  "type": "object",
  "properties": {
    "i": {"type": "integer"},
    "s": {"type": "string", "maxLength": 64},
    "x": {"type": "string", "maxLength": 64},
    "l": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
    "m": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "integer"}}
  }
}`

// testCRD is a CRD of one version whose spec has the given rule (a JSON x-kubernetes-validations entry).
func testCRD(t *testing.T, rule string, mutate func(*apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	spec := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal([]byte(specSchema), spec); err != nil {
		t.Fatal(err)
	}
	if rule != "" {
		var r apiextensionsv1.ValidationRule
		if err := json.Unmarshal([]byte(rule), &r); err != nil {
			t.Fatal(err)
		}
		spec.XValidations = apiextensionsv1.ValidationRules{r}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Kind: "Thing"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": *spec},
				}},
			}},
		},
	}
	if mutate != nil {
		mutate(crd)
	}
	return crd
}

const ruleField = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"

// TestAnalyze pins, for a rule using each library and option of upstream's base.go, the oldest minor that
// accepts it in a new CRD. base.go gives each option the compatibility version E that introduces it; a server
// of minor N compiles new rules at compatibility version N-1, so the oldest server is E+1.
func TestAnalyze(t *testing.T) {
	if Newest() != 37 {
		t.Fatalf("Newest() = %d; these expectations are read from base.go of Kubernetes 1.37", Newest())
	}
	tests := []struct {
		name    string
		rule    string
		mutate  func(*apiextensionsv1.CustomResourceDefinition)
		minor   int // the rule's and the CRD's oldest minor
		field   string
		feature string
		library string
		effect  Effect
	}{
		// Options of compatibility version 1.0 (the standard library, regex, URLs, lists v0): every minor.
		{name: "standard", rule: `{"rule": "self.i > 0 && self.s.matches('^a') && size(self.l) < 3"}`, minor: 28},
		// cel.CrossTypeNumericComparisons(true), introduced at 1.28: servers from 1.29.
		{name: "cross-type comparison", rule: `{"rule": "self.i < 2.5"}`, minor: 29,
			field: ruleField, feature: "_<_ applied to (int, double)", effect: Refused},
		// library.Quantity, 1.28: servers from 1.29.
		{name: "quantity", rule: `{"rule": "quantity(self.s).isInteger()"}`, minor: 29,
			field: ruleField, feature: "quantity", library: "kubernetes.quantity", effect: Refused},
		// cel.OptionalTypes() (its syntax), 1.28: servers from 1.29.
		{name: "optional syntax", rule: `{"rule": "self.?x.orValue('') == ''"}`, minor: 29,
			field: ruleField, feature: "syntax '.?'", effect: Refused},
		// ext.Sets(), 1.29: servers from 1.30.
		{name: "sets", rule: `{"rule": "sets.contains(self.l, [1])"}`, minor: 30,
			field: ruleField, feature: "sets", library: "cel.lib.ext.sets", effect: Refused},
		// ext.Strings(ext.StringsVersion(2)) replaces version 0 at 1.29: servers from 1.30. The library
		// existed before, so no library is named.
		{name: "string format", rule: `{"rule": "'%s'.format([self.s]) != ''"}`, minor: 30,
			field: ruleField, feature: "format", effect: Refused},
		// library.IP and library.CIDR, 1.30: servers from 1.31.
		{name: "ip", rule: `{"rule": "ip(self.s).family() == 4"}`, minor: 31,
			field: ruleField, feature: "ip", library: "kubernetes.net.ip", effect: Refused},
		{name: "cidr", rule: `{"rule": "cidr(self.s).prefixLength() > 8"}`, minor: 31,
			field: ruleField, feature: "cidr", library: "kubernetes.net.cidr", effect: Refused},
		// library.Format, 1.31: servers from 1.32.
		{name: "format library", rule: `{"rule": "!format.dns1123Label().validate(self.s).hasValue()"}`, minor: 32,
			field: ruleField, feature: "format", library: "kubernetes.format", effect: Refused},
		// ext.TwoVarComprehensions(), 1.32: servers from 1.33.
		{name: "two-variable comprehension", rule: `{"rule": "self.m.all(k, v, v > 0 && k != '')"}`, minor: 33,
			field: ruleField, feature: "all", library: "cel.lib.ext.comprev2", effect: Refused},
		// library.SemverLib, 1.33: servers from 1.34.
		{name: "semver", rule: `{"rule": "semver(self.s).major() >= 1"}`, minor: 34,
			field: ruleField, feature: "semver", library: "kubernetes.Semver", effect: Refused},
		// ext.Lists(ext.ListsVersion(3)), 1.34: servers from 1.35.
		{name: "ext lists", rule: `{"rule": "lists.range(3).size() == 3"}`, minor: 35,
			field: ruleField, feature: "lists", library: "cel.lib.ext.lists", effect: Refused},
		{name: "ext lists sort", rule: `{"rule": "self.l.sort() == self.l"}`, minor: 35,
			field: ruleField, feature: "sort", effect: Refused},
		// library.Lists(library.ListsVersion(1)), 1.37: 1.37 itself compiles new rules at 1.36, so the first
		// server to accept it is 1.38. The kubernetes.lists library existed before (version 0).
		{name: "lists includes", rule: `{"rule": "self.l.includes(1)"}`, minor: 38,
			field: ruleField, feature: "includes", effect: Refused},
		// A messageExpression is compiled in the same environment as its rule.
		{name: "messageExpression", rule: `{"rule": "self.i > 0", "messageExpression": "string(semver('1.2.3').major())"}`, minor: 34,
			field:   "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].messageExpression",
			feature: "semver", library: "kubernetes.Semver", effect: Refused},
		// A rule no minor accepts: the engine reports it.
		{name: "refused everywhere", rule: `{"rule": "self.nope == 1"}`, minor: 0},
		// optionalOldSelf is dropped by the CRD strategy while CRDValidationRatcheting is off: its versioned
		// specs turn it on by default in 1.30. Without it, oldSelf is not an optional and hasValue does not
		// compile: older servers refuse the rule.
		{name: "optionalOldSelf refused", rule: `{"rule": "!oldSelf.hasValue() || self.i >= oldSelf.value().i", "optionalOldSelf": true}`, minor: 30,
			field: ruleField, feature: "optionalOldSelf", library: "CRDValidationRatcheting", effect: Refused},
		// A rule that compiles either way: older servers accept it but drop optionalOldSelf.
		{name: "optionalOldSelf ignored", rule: `{"rule": "self.i >= 0 && oldSelf == oldSelf", "optionalOldSelf": true}`, minor: 30,
			field:   "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].optionalOldSelf",
			feature: "optionalOldSelf", library: "CRDValidationRatcheting", effect: Ignored},
		// reason and fieldPath are accepted by every minor from 1.28.
		{name: "reason and fieldPath", rule: `{"rule": "self.i > 0", "reason": "FieldValueForbidden", "fieldPath": ".i"}`, minor: 28},
		// selectableFields are dropped while CustomResourceFieldSelectors is off: on by default in 1.31.
		{name: "selectableFields", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.s"}}
		}, minor: 31, field: "spec.versions[0].selectableFields", feature: "selectableFields", library: "CustomResourceFieldSelectors", effect: Ignored},
		// The k8s-short-name format is validated from compatibility version 1.34 (formats.go): servers from
		// 1.35.
		{name: "format k8s-short-name", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			p := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			s := p.Properties["s"]
			s.Format = "k8s-short-name"
			p.Properties["s"] = s
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = p
		}, minor: 35, field: "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[s].format",
			feature: "format k8s-short-name", effect: Ignored},
		// A format every minor knows.
		{name: "format date", mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
			p := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			s := p.Properties["s"]
			s.Format = "date"
			p.Properties["s"] = s
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = p
		}, minor: 28},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := testCRD(t, tt.rule, tt.mutate)
			rep := Analyze(crd, celcost.Report(crd))
			// The shortcut (compile in Oldest's and Newest's environments only) must agree with every minor's.
			exhaustive = true
			full := Analyze(crd, celcost.Report(crd))
			exhaustive = false
			if full.Minor != rep.Minor || len(full.Reasons) != len(rep.Reasons) {
				t.Errorf("every minor compiled: Minor %d with %d reasons; the shortcut: %d with %d", full.Minor, len(full.Reasons), rep.Minor, len(rep.Reasons))
			}
			if rep.Minor != tt.minor {
				t.Errorf("Minor = %d, want %d; reasons: %+v", rep.Minor, tt.minor, rep.Reasons)
			}
			if tt.rule != "" {
				if len(rep.Rules) != 1 {
					t.Fatalf("%d rules, want 1", len(rep.Rules))
				}
				if rep.Rules[0].Minor != tt.minor {
					t.Errorf("rule Minor = %d, want %d", rep.Rules[0].Minor, tt.minor)
				}
			}
			if tt.field == "" {
				if len(rep.Reasons) != 0 {
					t.Errorf("reasons = %+v, want none", rep.Reasons)
				}
				return
			}
			if len(rep.Reasons) != 1 {
				t.Fatalf("reasons = %+v, want one", rep.Reasons)
			}
			r := rep.Reasons[0]
			if r.Field != tt.field || r.Feature != tt.feature || r.Library != tt.library || r.Effect != tt.effect || r.Minor != tt.minor {
				t.Errorf("reason = {%s %q %q %s %d}, want {%s %q %q %s %d}", r.Field, r.Feature, r.Library, r.Effect, r.Minor,
					tt.field, tt.feature, tt.library, tt.effect, tt.minor)
			}
			if len(r.Segs) == 0 || r.Message == "" {
				t.Errorf("reason without segments or message: %+v", r)
			}
			t.Logf("%s: %s [%s]", r.Field, r.Message, r.Detail)
		})
	}
}

// TestAnalyzeBadInput: a CRD the engine refuses for other reasons still gets a report, never a panic.
func TestAnalyzeBadInput(t *testing.T) {
	tests := []struct {
		name  string
		crd   func(t *testing.T) *apiextensionsv1.CustomResourceDefinition
		minor int
	}{
		{name: "nil", crd: func(*testing.T) *apiextensionsv1.CustomResourceDefinition { return nil }, minor: Oldest},
		{name: "no versions", crd: func(*testing.T) *apiextensionsv1.CustomResourceDefinition {
			return &apiextensionsv1.CustomResourceDefinition{}
		}, minor: Oldest},
		{name: "no schema", crd: func(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
			c := testCRD(t, "", nil)
			c.Spec.Versions[0].Schema = nil
			return c
		}, minor: Oldest},
		// Not structural (a property without a type): celcost skips the version, the engine says why.
		{name: "not structural", crd: func(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
			c := testCRD(t, `{"rule": "semver(self.s).major() > 0"}`, nil)
			p := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
			p.Properties["bad"] = apiextensionsv1.JSONSchemaProps{}
			c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = p
			return c
		}, minor: Oldest},
		{name: "empty rule", crd: func(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
			return testCRD(t, `{"rule": ""}`, nil)
		}, minor: Oldest},
		{name: "syntax error", crd: func(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
			return testCRD(t, `{"rule": "self.i >"}`, nil)
		}, minor: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := tt.crd(t)
			var costs []celcost.Version
			if crd != nil {
				costs = celcost.Report(crd)
			}
			if rep := Analyze(crd, costs); rep.Minor != tt.minor {
				t.Errorf("Minor = %d, want %d; reasons %+v", rep.Minor, tt.minor, rep.Reasons)
			}
		})
	}
}

// TestPlace: the reasons of a rule are placed at the rule's line, in Reasons and in Rules alike.
func TestPlace(t *testing.T) {
	text := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: things, kind: Thing}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              s: {type: string, maxLength: 10}
            x-kubernetes-validations:
            - message: semver
              rule: "semver(self.s).major() > 0"
`
	docs, errs := yamlpos.Split(text)
	if len(errs) > 0 || len(docs) != 1 {
		t.Fatalf("split: %v", errs)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(text), crd); err != nil {
		t.Fatal(err)
	}
	rep := Analyze(crd, celcost.Report(crd))
	rep.Place(docs[0].Locator())
	if len(rep.Reasons) != 1 || len(rep.Rules) != 1 || len(rep.Rules[0].Reasons) != 1 {
		t.Fatalf("report: %+v", rep)
	}
	for _, r := range []Reason{rep.Reasons[0], rep.Rules[0].Reasons[0]} {
		if r.Span == nil || r.Span.Line != 23 {
			t.Errorf("%s placed at %+v, want line 23 (the rule)", r.Field, r.Span)
		}
	}
}
