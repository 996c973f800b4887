package crddiff

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"crdplay/internal/golden"
	"crdplay/playground/internal/yamlpos"
)

// crd builds a one-version CRD (v1, storage) whose spec property has the given schema, indented as the
// properties of spec.
func crd(t testing.TB, scope, spec string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	text := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: ` + scope + `
  names: {plural: widgets, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
` + indent(spec, "            ")
	var c apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(text), &c); err != nil {
		t.Fatalf("test CRD: %v\n%s", err, text)
	}
	return &c
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}

const root = "spec.versions[0].schema.openAPIV3Schema.properties.spec"

// brief is what a test checks of a finding.
type brief struct {
	Rule, Severity, Field, ObjectPath string
	InOld                             bool
}

func briefs(fs []Finding) []brief {
	out := []brief{}
	for _, f := range fs {
		out = append(out, brief{f.Rule, string(f.Severity), f.Field, f.ObjectPath, f.InOld})
	}
	return out
}

func TestCompareRules(t *testing.T) {
	const replicas = "type: object\nproperties:\n  replicas:\n    type: integer\n"
	tests := []struct {
		name     string
		old, new string
		want     []brief
	}{
		{"unchanged", replicas, replicas, nil},
		{"field removed", replicas, "type: object\n", []brief{
			{"existingFieldRemoval", "error", root + ".properties.replicas", "spec.replicas", true}}},
		{"field added", "type: object\n", replicas, nil},
		{"type changed", replicas, "type: object\nproperties:\n  replicas:\n    type: string\n    maxLength: 3\n", []brief{
			{"type", "error", root + ".properties.replicas.type", "spec.replicas", false}}},
		{"int-or-string narrowed", "x-kubernetes-int-or-string: true\n", "type: integer\n", []brief{
			{"type", "error", root + ".type", "spec", false}}},
		{"enum added", "type: string\n", "type: string\nenum: [a, b]\n", []brief{
			{"enum", "error", root + ".enum", "spec", false}}},
		{"enum value removed", "type: string\nenum: [a, b]\n", "type: string\nenum: [a]\n", []brief{
			{"enum", "error", root + ".enum", "spec", false}}},
		{"enum value added", "type: string\nenum: [a]\n", "type: string\nenum: [a, b]\n", []brief{
			{"enum", "warning", root + ".enum", "spec", false}}},
		{"enum reordered", "type: string\nenum: [a, b]\n", "type: string\nenum: [b, a]\n", nil},
		{"enum removed", "type: string\nenum: [a]\n", "type: string\n", nil},
		{"enum numbers by value", "type: number\nenum: [1, 2.5]\n", "type: number\nenum: [1.0, 2.5]\n", nil},
		{"default added", "type: integer\n", "type: integer\ndefault: 1\n", []brief{
			{"default", "error", root + ".default", "spec", false}}},
		{"default changed", "type: integer\ndefault: 1\n", "type: integer\ndefault: 2\n", []brief{
			{"default", "error", root + ".default", "spec", false}}},
		{"default same value", "type: object\ndefault: {a: 1, b: 2}\n", "type: object\ndefault: {b: 2, a: 1}\n", nil},
		{"default removed", "type: integer\ndefault: 1\n", "type: integer\n", []brief{
			{"default", "error", root + ".default", "spec", true}}},
		{"maximum added", "type: integer\n", "type: integer\nmaximum: 5\n", []brief{
			{"maximum", "error", root + ".maximum", "spec", false}}},
		{"maximum lowered", "type: integer\nmaximum: 10\n", "type: integer\nmaximum: 5\n", []brief{
			{"maximum", "error", root + ".maximum", "spec", false}}},
		{"maximum raised", "type: integer\nmaximum: 5\n", "type: integer\nmaximum: 10\n", nil},
		{"maximum removed", "type: integer\nmaximum: 5\n", "type: integer\n", nil},
		{"maximum made exclusive", "type: integer\nmaximum: 5\n", "type: integer\nmaximum: 5\nexclusiveMaximum: true\n", []brief{
			{"maximum", "error", root + ".exclusiveMaximum", "spec", false}}},
		{"maxLength added", "type: string\n", "type: string\nmaxLength: 3\n", []brief{
			{"maxLength", "error", root + ".maxLength", "spec", false}}},
		{"maxItems lowered", "type: array\nitems: {type: string}\nmaxItems: 3\n", "type: array\nitems: {type: string}\nmaxItems: 2\n", []brief{
			{"maxItems", "error", root + ".maxItems", "spec", false}}},
		{"maxProperties added", "type: object\n", "type: object\nmaxProperties: 2\n", []brief{
			{"maxProperties", "error", root + ".maxProperties", "spec", false}}},
		{"minimum added", "type: integer\n", "type: integer\nminimum: 1\n", []brief{
			{"minimum", "error", root + ".minimum", "spec", false}}},
		{"minimum raised", "type: integer\nminimum: 1\n", "type: integer\nminimum: 2\n", []brief{
			{"minimum", "error", root + ".minimum", "spec", false}}},
		{"minimum lowered", "type: integer\nminimum: 2\n", "type: integer\nminimum: 1\n", nil},
		{"minimum made exclusive", "type: integer\nminimum: 1\n", "type: integer\nminimum: 1\nexclusiveMinimum: true\n", []brief{
			{"minimum", "error", root + ".exclusiveMinimum", "spec", false}}},
		{"minLength raised", "type: string\nminLength: 1\n", "type: string\nminLength: 2\n", []brief{
			{"minLength", "error", root + ".minLength", "spec", false}}},
		{"minItems added", "type: array\nitems: {type: string}\n", "type: array\nitems: {type: string}\nminItems: 1\n", []brief{
			{"minItems", "error", root + ".minItems", "spec", false}}},
		{"minProperties raised", "type: object\nminProperties: 1\n", "type: object\nminProperties: 2\n", []brief{
			{"minProperties", "error", root + ".minProperties", "spec", false}}},
		{"required added", replicas, replicas + "required: [replicas]\n", []brief{
			{"required", "error", root + ".required[0]", "spec.replicas", false}}},
		{"required kept", replicas + "required: [replicas]\n", replicas + "required: [replicas]\n", nil},
		{"required under a new field", "type: object\n", "type: object\nproperties:\n  x:\n    type: object\n    required: [y]\n    properties:\n      y: {type: string}\n", nil},
		{"pattern added", "type: string\n", "type: string\npattern: '^a'\n", []brief{
			{"pattern", "error", root + ".pattern", "spec", false}}},
		{"pattern changed", "type: string\npattern: '^a'\n", "type: string\npattern: '^b'\n", []brief{
			{"pattern", "error", root + ".pattern", "spec", false}}},
		{"pattern removed", "type: string\npattern: '^a'\n", "type: string\n", nil},
		{"nullable turned off", "type: string\nnullable: true\n", "type: string\n", []brief{
			{"nullable", "error", root + ".nullable", "spec", true}}},
		{"nullable turned on", "type: string\n", "type: string\nnullable: true\n", []brief{
			{"nullable", "warning", root + ".nullable", "spec", false}}},
		{"rule added", replicas, replicas + "x-kubernetes-validations:\n- rule: self.replicas < 10\n", []brief{
			{"xValidations", "error", root + ".x-kubernetes-validations[0].rule", "spec", false}}},
		{"rule with fieldPath added", replicas, replicas + "x-kubernetes-validations:\n- rule: self.replicas < 10\n  fieldPath: .replicas\n", []brief{
			{"xValidations", "error", root + ".x-kubernetes-validations[0].rule", "spec.replicas", false}}},
		{"rule changed", replicas + "x-kubernetes-validations:\n- rule: self.replicas < 10\n", replicas + "x-kubernetes-validations:\n- rule: self.replicas < 5\n", []brief{
			{"xValidations", "error", root + ".x-kubernetes-validations[0].rule", "spec", false}}},
		{"rule message changed", replicas + "x-kubernetes-validations:\n- rule: self.replicas < 10\n  message: a\n", replicas + "x-kubernetes-validations:\n- rule: self.replicas < 10\n  message: b\n", nil},
		{"rule removed", replicas + "x-kubernetes-validations:\n- rule: self.replicas < 10\n", replicas, nil},
		{"transition rule added", replicas, replicas + "x-kubernetes-validations:\n- rule: self.replicas >= oldSelf.replicas\n", []brief{
			{"xValidations", "error", root + ".x-kubernetes-validations[0].rule", "spec", false}}},
		{"preserve unknown fields turned off", "type: object\nx-kubernetes-preserve-unknown-fields: true\n", "type: object\n", []brief{
			{"preserveUnknownFields", "error", root + ".x-kubernetes-preserve-unknown-fields", "spec", true}}},
		{"list items", "type: array\nitems:\n  type: object\n  properties:\n    port: {type: integer}\n",
			"type: array\nitems:\n  type: object\n  properties:\n    port: {type: integer, maximum: 100}\n", []brief{
				{"maximum", "error", root + ".items.properties.port.maximum", "spec[*].port", false}}},
		{"map values", "type: object\nadditionalProperties:\n  type: string\n",
			"type: object\nadditionalProperties:\n  type: string\n  maxLength: 3\n", []brief{
				{"maxLength", "error", root + ".additionalProperties.maxLength", "spec[*]", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := briefs(Compare(crd(t, "Namespaced", tt.old), crd(t, "Namespaced", tt.new)))
			want := tt.want
			if want == nil {
				want = []brief{}
			}
			if g, w := jsonOf(got), jsonOf(want); g != w {
				t.Errorf("findings:\n got %s\nwant %s", g, w)
			}
		})
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestCompareCRD(t *testing.T) {
	spec := "type: object\n"
	t.Run("scope", func(t *testing.T) {
		got := briefs(Compare(crd(t, "Namespaced", spec), crd(t, "Cluster", spec)))
		want := []brief{{"scope", "error", "spec.scope", "", false}}
		if jsonOf(got) != jsonOf(want) {
			t.Errorf("got %s, want %s", jsonOf(got), jsonOf(want))
		}
	})
	t.Run("stored version removed", func(t *testing.T) {
		old := crd(t, "Namespaced", spec)
		old.Spec.Versions[0].Storage = false
		old.Spec.Versions = append(old.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v2", Served: true, Storage: true})
		old.Status.StoredVersions = []string{"v1", "v2"}
		new := old.DeepCopy()
		new.Spec.Versions = new.Spec.Versions[1:]
		got := Compare(old, new)
		want := []brief{{"storedVersionRemoval", "error", "spec.versions[0].name", "", true}}
		if jsonOf(briefs(got)) != jsonOf(want) {
			t.Fatalf("got %s, want %s", jsonOf(briefs(got)), jsonOf(want))
		}
		if got[0].Version != "v1" {
			t.Errorf("version %q, want v1", got[0].Version)
		}
	})
	t.Run("storage version removed without status", func(t *testing.T) {
		old := crd(t, "Namespaced", spec)
		new := old.DeepCopy()
		new.Spec.Versions[0].Name = "v2"
		got := briefs(Compare(old, new))
		want := []brief{{"storedVersionRemoval", "error", "spec.versions[0].name", "", true}}
		if jsonOf(got) != jsonOf(want) {
			t.Errorf("got %s, want %s", jsonOf(got), jsonOf(want))
		}
	})
	t.Run("stored version only in status", func(t *testing.T) {
		old := crd(t, "Namespaced", spec)
		old.Status.StoredVersions = []string{"v1beta1", "v1"}
		got := briefs(Compare(old, old.DeepCopy()))
		want := []brief{{"storedVersionRemoval", "error", "status.storedVersions[0]", "", true}}
		if jsonOf(got) != jsonOf(want) {
			t.Errorf("got %s, want %s", jsonOf(got), jsonOf(want))
		}
	})
	t.Run("versions by name", func(t *testing.T) {
		// new lists v2 before v1: v1's finding is at new's index 1.
		old := crd(t, "Namespaced", "type: integer\n")
		new := crd(t, "Namespaced", "type: integer\nmaximum: 3\n")
		v2 := new.Spec.Versions[0].DeepCopy()
		v2.Name, v2.Storage = "v2", false
		new.Spec.Versions = append([]apiextensionsv1.CustomResourceDefinitionVersion{*v2}, new.Spec.Versions...)
		got := briefs(Compare(old, new))
		want := []brief{{"maximum", "error", "spec.versions[1].schema.openAPIV3Schema.properties.spec.maximum", "spec", false}}
		if jsonOf(got) != jsonOf(want) {
			t.Errorf("got %s, want %s", jsonOf(got), jsonOf(want))
		}
	})
	t.Run("nil", func(t *testing.T) {
		if got := Compare(nil, nil); len(got) != 0 {
			t.Errorf("Compare(nil, nil) = %v", got)
		}
	})
}

func TestFieldSegsLocate(t *testing.T) {
	// A property whose name has a dot: Field is ambiguous, FieldSegs is not, and both find it.
	oldText := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.b}\nspec:\n  versions:\n  - name: v1\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          a.b: {type: integer}\n"
	newText := strings.Replace(oldText, "{type: integer}", "{type: integer, maximum: 3}", 1)
	var o, n apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal([]byte(oldText), &o); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(newText), &n); err != nil {
		t.Fatal(err)
	}
	got := Compare(&o, &n)
	if len(got) != 1 {
		t.Fatalf("got %d findings, want 1", len(got))
	}
	docs, _ := yamlpos.Split(newText)
	for _, r := range []yamlpos.Result{docs[0].LocateSegs(got[0].FieldSegs), docs[0].Locate(got[0].Field)} {
		if !r.Exact || r.Span.Line != 11 {
			t.Errorf("located at %+v, want line 11 exactly", r)
		}
	}
}

func TestMatchObjectPath(t *testing.T) {
	tests := []struct {
		pattern, field string
		want           bool
	}{
		{"", "spec.x", true},
		{"spec.replicas", "spec.replicas", true},
		{"spec.replicas", "spec.replicasX", false},
		{"spec", "spec.replicas", true},
		{"spec.ports[*].port", "spec.ports[2].port", true},
		{"spec.ports[*].port", "spec.ports[2].name", false},
		{"spec.labels[*]", "spec.labels[app]", true},
		{"spec.labels[*]", "spec.labels.app", true},
		{"spec.labels[*]", "spec.labels", false},
		{"spec.m[*].x", "spec.m.k.x", true},
		{"spec.m[*].x", "spec.m[k].x", true},
		{"spec.m[*].x", "spec.m[k", false},
		{"spec.m[*].x", "spec.m.a.b.x", true},
		{"spec.m[*].x", "spec.m.a.b.y", false},
		{"spec.labels[*]", "spec.labels.app.kubernetes.io/name", true},
		{"spec.ports[*].port", "spec.ports[0].port", true},
		{"spec.a[*][*]", "spec.a[0][1]", true},
		{"spec.a[*]", "spec.a.", false},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.field, func(t *testing.T) {
			if got := MatchObjectPath(tt.pattern, tt.field); got != tt.want {
				t.Errorf("MatchObjectPath(%q, %q) = %v, want %v", tt.pattern, tt.field, got, tt.want)
			}
		})
	}
}

// TestGolden compares each testdata/*.old.yaml with its .new.yaml and holds the findings, messages
// included, to the .golden.json beside them.
func TestGolden(t *testing.T) {
	olds, err := filepath.Glob("testdata/*.old.yaml")
	if err != nil || len(olds) == 0 {
		t.Fatalf("no testdata/*.old.yaml: %v", err)
	}
	goldens, _ := filepath.Glob("testdata/*.golden.json")
	for _, g := range goldens {
		if _, err := os.Stat(strings.TrimSuffix(g, ".golden.json") + ".old.yaml"); err != nil {
			t.Errorf("%s has no .old.yaml", g)
		}
	}
	for _, oldPath := range olds {
		base := strings.TrimSuffix(oldPath, ".old.yaml")
		t.Run(filepath.Base(base), func(t *testing.T) {
			read := func(p string) *apiextensionsv1.CustomResourceDefinition {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				var c apiextensionsv1.CustomResourceDefinition
				if err := yaml.Unmarshal(b, &c); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				return &c
			}
			got, err := json.MarshalIndent(Compare(read(oldPath), read(base+".new.yaml")), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden.Check(t, base+".golden.json", got)
		})
	}
}

func FuzzCompare(f *testing.F) {
	f.Add("type: object\nproperties:\n  a: {type: integer, maximum: 3}\n", "type: object\nproperties:\n  a: {type: integer, maximum: 2}\n")
	f.Add("type: string\nenum: [a, b]\n", "type: string\nenum: [1, {x: y}]\nnullable: true\n")
	f.Add("type: array\nitems: {type: object, x-kubernetes-validations: [{rule: 'self.x'}]}\n", "type: array\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		var o, n apiextensionsv1.JSONSchemaProps
		if yaml.Unmarshal([]byte(a), &o) != nil || yaml.Unmarshal([]byte(b), &n) != nil {
			return
		}
		oc := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1", Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &o}}}}}
		nc := &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1", Storage: true, Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &n}}}}}
		for _, fd := range Compare(oc, nc) {
			if fd.Rule == "" || fd.Message == "" || (fd.Severity != Error && fd.Severity != Warning) {
				t.Fatalf("incomplete finding %+v", fd)
			}
			if fd.Field != yamlpos.FormatSegs(fd.FieldSegs) || !strings.HasPrefix(fd.Field, "spec.versions[0].schema.openAPIV3Schema") {
				t.Fatalf("finding at %q (segs %v)", fd.Field, fd.FieldSegs)
			}
		}
		// A schema compared with itself has nothing to report.
		if got := Compare(oc, oc); len(got) != 0 {
			t.Fatalf("Compare(x, x) = %+v", got)
		}
	})
}
