package playground

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// These tests check where diagnostics and marks are placed. The positions are written by hand from the
// texts below; the messages are whatever the API says (only their presence is checked).

// twoCRDs holds a valid CRD and, in its second document, one whose schema has a property without a type.
const twoCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
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
            required: [size]
            properties:
              size: {type: integer, maximum: 10}
              color: {type: string, default: blue}
              tags: {type: array, items: {type: string}}
---
# the second CRD
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
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
              untyped:
                description: no type here
              rule:
                type: integer
                x-kubernetes-validations:
                - rule: self.nope == 1
`

func TestCRDDiagnosticPositions(t *testing.T) {
	crds := twoCRDs
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crds})
	if len(res.CRDs) != 2 || !res.CRDs[0].Accepted || res.CRDs[1].Accepted {
		t.Fatalf("want the first CRD accepted and the second refused: %+v", res.CRDs)
	}
	if res.CRDs[1].StartLine != 25 || res.CRDs[1].EndLine != 51 || res.CRDs[1].Status != 422 {
		t.Errorf("second CRD: lines %d-%d status %d", res.CRDs[1].StartLine, res.CRDs[1].EndLine, res.CRDs[1].Status)
	}
	type pos struct {
		field             string
		line, col, endCol int
		exact             bool
	}
	// Upstream reports these with its internal layout (spec.validation...); the text has spec.versions[0].schema.
	want := map[string]pos{
		"untyped": {"spec.validation.openAPIV3Schema.properties[spec].properties[untyped].type", 45, 15, 22, false},
	}
	found := map[string]bool{}
	for _, d := range res.Diagnostics {
		if d.Source != SourceCRDs {
			continue
		}
		if d.Document != 1 || d.Severity != SeverityError {
			t.Errorf("unexpected diagnostic %+v", d)
			continue
		}
		for name, w := range want {
			if d.Field == w.field {
				found[name] = true
				if d.Line != w.line || d.Column != w.col || d.EndColumn != w.endCol || d.Exact != w.exact {
					t.Errorf("%s: at %d:%d-%d exact=%v, want %d:%d-%d exact=%v (%s)", name, d.Line, d.Column, d.EndColumn, d.Exact, w.line, w.col, w.endCol, w.exact, d.Message)
				}
			}
		}
	}
	for name := range want {
		if !found[name] {
			t.Errorf("no diagnostic for %s in %+v", name, res.Diagnostics)
		}
	}
}

func TestCELCompileErrorPosition(t *testing.T) {
	// Without the untyped property the second CRD is structural, and the rule's compile error is what is left.
	crds := strings.Replace(twoCRDs, "              untyped:\n                description: no type here\n", "", 1)
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crds})
	var got []Diagnostic
	for _, d := range res.Diagnostics {
		if d.Source == SourceCRDs {
			got = append(got, d)
		}
	}
	if len(got) != 1 {
		t.Fatalf("want one diagnostic, got %+v", got)
	}
	d := got[0]
	// "                - rule: self.nope == 1" is line 48 once the two lines are gone; CEL's "<input>:1:5"
	// points at ".nope" in the rule, columns 29 to 34 of the line. The message is upstream's, whole.
	if d.Document != 1 || d.Line != 48 || d.Column != 29 || d.EndColumn != 34 || !d.Exact || !strings.Contains(d.Message, "compilation failed: ERROR: <input>:1:5: type 'int' does not support field selection\n | self.nope == 1\n | ....^") {
		t.Errorf("got %+v", d)
	}
	// The cost report has the rule, at the same place, with the compiler's error.
	rules := res.CRDs[1].Versions[0].CEL.Rules
	if len(rules) != 1 || rules[0].Span == nil || rules[0].Span.Line != 48 || rules[0].Error == "" || rules[0].Self != "spec.rule" {
		t.Errorf("cost report %+v", rules)
	}
}

func TestCELCompileErrorColumn(t *testing.T) {
	crds := strings.Replace(twoCRDs, "              untyped:\n                description: no type here\n", "", 1)
	for _, tc := range []struct {
		name string
		rule string // the text after "- rule:" on line 48
		want Span
	}{
		{"single quoted", ` 'self.nope == 1'`, Span{Line: 48, Column: 30, EndLine: 48, EndColumn: 35}},
		{"literal block: the column under the indentation", " |-\n                    self.nope == 1", Span{Line: 49, Column: 25, EndLine: 49, EndColumn: 30}},
		// Escapes and folding move CEL's columns away from the text's: the whole field is marked.
		{"double quoted with an escape: the whole field", ` "self.nope == \u0031"`, Span{Line: 48, Column: 19, EndLine: 48, EndColumn: 46}},
		{"folded block: the whole field", " >\n                    self.nope == 1", Span{Line: 48, Column: 19, EndLine: 48, EndColumn: 26}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(crds, "- rule: self.nope == 1", "- rule:"+tc.rule, 1)
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &text})
			var got []Diagnostic
			for _, d := range res.Diagnostics {
				if d.Source == SourceCRDs {
					got = append(got, d)
				}
			}
			if len(got) != 1 || got[0].Span != tc.want || !strings.Contains(got[0].Message, "compilation failed: ERROR: <input>:1:5: ") {
				t.Errorf("got %+v, want the span %+v", got, tc.want)
			}
		})
	}
}

const widgets = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: ok
spec:
  size: 3
  extra: 1
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: "too-big"
spec:
  size: 15
  tags: ["a", 2]
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: missing
spec:
  color: red
---
apiVersion: example.com/v1
kind: Sprocket
metadata:
  name: unknown-kind
---
apiVersion: example.com/v1
kind: Widget
metadata: [not, a, map
`

func TestObjectDiagnosticPositions(t *testing.T) {
	crds := twoCRDs
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crds, Objects: widgets})
	if len(res.Objects) != 5 {
		t.Fatalf("%d object results, want 5", len(res.Objects))
	}
	if o := res.Objects[0]; o.Status != 201 || res.Objects[1].Status != 422 || res.Objects[2].Status != 422 || res.Objects[3].Status != 0 || res.Objects[4].Status != 0 {
		t.Errorf("statuses %d %d %d %d %d", o.Status, res.Objects[1].Status, res.Objects[2].Status, res.Objects[3].Status, res.Objects[4].Status)
	}
	type want struct {
		doc               int
		field, typ        string
		line, col, endCol int
		exact             bool
		sev               Severity
	}
	wants := []want{
		{0, "spec.extra", "Warning", 7, 3, 11, true, SeverityWarning},                 // unknown field, pruned
		{1, "spec.size", "FieldValueInvalid", 14, 3, 11, true, SeverityError},         // maximum
		{1, "spec.tags[1]", "FieldValueTypeInvalid", 15, 15, 16, true, SeverityError}, // a flow list item
		{2, "spec.size", "FieldValueRequired", 21, 1, 5, false, SeverityError},        // missing: its parent
		{3, "kind", "NoKindMatch", 25, 1, 15, true, SeverityError},                    // no CRD serves it
		{4, "", "YAMLSyntax", 31, 11, 23, true, SeverityError},                        // where the flow opens: its bracket
	}
	var got []Diagnostic
	for _, d := range res.Diagnostics {
		if d.Source == SourceObjects {
			got = append(got, d)
		}
	}
	if len(got) != len(wants) {
		t.Errorf("%d diagnostics, want %d: %+v", len(got), len(wants), got)
	}
	for _, w := range wants {
		ok := false
		for _, d := range got {
			if d.Document == w.doc && d.Field == w.field && d.Type == w.typ {
				ok = true
				if d.Line != w.line || d.Column != w.col || d.EndColumn != w.endCol || d.Exact != w.exact || d.Severity != w.sev {
					t.Errorf("%s in document %d: %d:%d-%d exact=%v %s, want %d:%d-%d exact=%v %s (%s)", w.field, w.doc,
						d.Line, d.Column, d.EndColumn, d.Exact, d.Severity, w.line, w.col, w.endCol, w.exact, w.sev, d.Message)
				}
			}
		}
		if !ok {
			t.Errorf("no %s diagnostic for %q in document %d: %+v", w.typ, w.field, w.doc, got)
		}
	}

	// The first object: spec.extra pruned (in the input), spec.color defaulted (in the stored YAML).
	o := res.Objects[0]
	marks := map[string]Mark{}
	for _, m := range o.Marks {
		marks[m.Path] = m
	}
	if m := marks["spec.extra"]; m.Kind != "pruned" || m.Input == nil || m.Input.Line != 7 || m.Stored != nil {
		t.Errorf("spec.extra mark %+v", m)
	}
	m := marks["spec.color"]
	if m.Kind != "defaulted" || m.Input != nil || m.Stored == nil || string(m.Value) != `"blue"` {
		t.Fatalf("spec.color mark %+v", m)
	}
	if line := lineOf(o.StoredYAML, m.Stored.Line); line != "  color: blue" || m.Stored.Column != 3 || m.Stored.EndColumn != 14 {
		t.Errorf("spec.color is marked at %+v, the line there is %q:\n%s", *m.Stored, line, o.StoredYAML)
	}
}

func TestStrictFieldValidationPositions(t *testing.T) {
	crds := twoCRDs
	objects := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: strict\nspec:\n  size: 1\n  a: 1\n  b: {c: 2}\n"
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crds, Objects: objects, FieldValidation: "Strict"})
	if res.Objects[0].Status != 400 {
		t.Fatalf("status %d: %s", res.Objects[0].Status, res.Objects[0].Response)
	}
	lines := map[string]int{}
	for _, d := range res.Diagnostics {
		if d.Source == SourceObjects {
			lines[d.Field] = d.Line
			if d.Message != fmt.Sprintf("unknown field %q", d.Field) || d.Type != "BadRequest" {
				t.Errorf("diagnostic %+v", d)
			}
		}
	}
	if lines["spec.a"] != 7 || lines["spec.b"] != 8 || len(lines) != 2 {
		t.Errorf("unknown fields at %v, want spec.a on 7 and spec.b on 8", lines)
	}
}

// TestBadInput feeds texts that are not Kubernetes objects: each yields diagnostics with a line, never a
// panic, a hang or an error from Evaluate.
func TestBadInput(t *testing.T) {
	crds := twoCRDs
	deepFlow := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: deep}\nspec: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	var b strings.Builder
	b.WriteString("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: deep}\nspec:\n")
	for i := 0; i < 1000; i++ {
		b.WriteString(strings.Repeat(" ", i+2) + "a:\n")
	}
	deepBlock := b.String()
	huge := strings.Repeat("# padding\n", 400000) + "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: huge}\n"
	bomb := "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: bomb}\nspec:\n  a: &a [x, x, x, x, x, x, x, x, x]\n  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n  h: [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
	for _, tc := range []struct {
		name, text string
		typ        string
		line       int
	}{
		{"not YAML", "apiVersion: v1\nkind: [\n", "YAMLSyntax", 3}, // the parser notices at the end
		{"a list", "- a\n- b\n", "NotAnObject", 1},
		{"a scalar", "hello\n", "NotAnObject", 1},
		{"no kind", "apiVersion: example.com/v1\nmetadata: {name: x}\n", "MissingKind", 1},
		{"no apiVersion", "\n\nkind: Widget\n", "MissingKind", 3},
		{"a CRD among the objects", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n", "NoKindMatch", 2},
		{"bad separator", "--- junk\nkind: Widget\napiVersion: example.com/v1\nmetadata: {name: sep}\n", "YAMLSyntax", 1},
		{"deep flow nesting", deepFlow, "YAMLSyntax", 4},
		{"deep block nesting", deepBlock, "", 0},
		{"alias bomb", bomb, "", 0},
		{"above the API's request limit", huge, "RequestEntityTooLarge", 400001},
		{"tabs", "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n\tname: x\n", "YAMLSyntax", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := NewSession(Options{}).Evaluate(ctx, Input{CRDs: &crds, Objects: tc.text})
			if err != nil {
				t.Fatal(err)
			}
			var ds []Diagnostic
			for _, d := range res.Diagnostics {
				if d.Source == SourceObjects {
					ds = append(ds, d)
				}
			}
			if len(ds) == 0 {
				t.Fatalf("no diagnostic; objects %+v", res.Objects)
			}
			for _, d := range ds {
				if d.Line < 1 || d.Column < 1 {
					t.Errorf("diagnostic without a position: %+v", d)
				}
			}
			if tc.typ != "" && (ds[0].Type != tc.typ || ds[0].Line != tc.line) {
				t.Errorf("first diagnostic %s at line %d (%s), want %s at line %d", ds[0].Type, ds[0].Line, ds[0].Message, tc.typ, tc.line)
			}
			if testing.Verbose() {
				t.Logf("%s line %d: %.200s", ds[0].Type, ds[0].Line, ds[0].Message)
			}
		})
	}
}

func TestRulesNotCheckedPosition(t *testing.T) {
	crd := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
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
            required: [size]
            properties:
              size: {type: integer}
              limits:
                type: object
                x-kubernetes-validations:
                - rule: self.max > 0
                properties:
                  max: {type: integer}
`
	for _, tc := range []struct {
		name    string
		objects string
		want    *Span
	}{
		// spec.size is missing: the API skips the rules and says so without a field, a note of the missing
		// field's error; the rule is spec.limits'.
		{"at the field that has the rule", "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\nspec:\n  limits:\n    max: 3\n", &Span{Line: 6, Column: 3, EndLine: 6, EndColumn: 9}},
		{"without the field in the text: nowhere else", "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\nspec: {}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: tc.objects})
			var got []Note
			for _, d := range res.Diagnostics {
				if strings.Contains(d.Message, "some validation rules were not checked") {
					t.Errorf("a diagnostic of its own: %+v", d)
				}
				for _, n := range d.Notes {
					if d.Field == "spec.size" && strings.Contains(n.Message, "some validation rules were not checked") {
						got = append(got, n)
					}
				}
			}
			if len(got) != 1 || jsonOf(got[0].Span) != jsonOf(tc.want) {
				t.Errorf("got %+v, want one note of spec.size's error at %+v (all: %+v)", got, tc.want, res.Diagnostics)
			}
		})
	}
}
