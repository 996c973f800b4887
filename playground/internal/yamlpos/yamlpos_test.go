package yamlpos

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

const crontabs = `# two objects
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: "* * * * */5"
  replicas: 15
  tags: [a, "b", c]
  testMap:
    foo.34$: x
    foo: y
  list:
  - name: first
    extra: 1
  - name: second
---
# comment only
---

apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: "héllo", labels: {app: web}}
spec:
  image: 'it''s'
  note: |
    line one
    line two
`

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        url: https://127.0.0.1:1/crdconvert
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas:
                type: integer
                maximum: 10
`

func TestSplit(t *testing.T) {
	docs, errs := Split(crontabs)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if len(docs) != 2 {
		t.Fatalf("got %d documents, want 2 (the comment-only one is skipped)", len(docs))
	}
	for i, want := range []struct{ start, end, index int }{{1, 16, 0}, {20, 29, 1}} {
		d := docs[i]
		if d.StartLine != want.start || d.EndLine != want.end || d.Index != want.index {
			t.Errorf("doc %d: lines %d-%d index %d, want %d-%d index %d", i, d.StartLine, d.EndLine, d.Index, want.start, want.end, want.index)
		}
		if d.Err != nil || d.Root == nil {
			t.Errorf("doc %d: err %v", i, d.Err)
		}
	}
	if !strings.HasPrefix(docs[1].Source, "\napiVersion:") {
		t.Errorf("second document's source starts %q", docs[1].Source[:20])
	}
}

func TestLocate(t *testing.T) {
	docs, _ := Split(crontabs)
	crdDocs, _ := Split(crd)
	for _, tc := range []struct {
		name  string
		doc   *Doc
		path  string
		want  Span
		exact bool
	}{
		{"scalar field: key and value", docs[0], "spec.replicas", Span{8, 3, 8, 15}, true},
		{"leading dot, as scale paths print", docs[0], ".spec.replicas", Span{8, 3, 8, 15}, true},
		{"double-quoted value", docs[0], "spec.cronSpec", Span{7, 3, 7, 26}, true},
		{"collection value: the key", docs[0], "spec", Span{6, 1, 6, 5}, true},
		{"flow list item", docs[0], "spec.tags[1]", Span{9, 13, 9, 16}, true},
		{"block list item: its first line", docs[0], "spec.list[1]", Span{16, 5, 16, 17}, true},
		{"field of a list item", docs[0], "spec.list[0].extra", Span{15, 5, 15, 13}, true},
		{"key with a dot wins over a shorter key", docs[0], "spec.testMap.foo.34$", Span{11, 5, 11, 15}, true},
		{"the shorter key when that is what matches", docs[0], "spec.testMap.foo", Span{12, 5, 12, 11}, true},
		{"missing field: nearest ancestor", docs[0], "spec.image", Span{6, 1, 6, 5}, false},
		{"index past the end: the list", docs[0], "spec.list[5].name", Span{13, 3, 13, 7}, false},
		{"whole document", docs[0], "<nil>", Span{2, 1, 2, 34}, true},
		{"empty path", docs[0], "", Span{2, 1, 2, 34}, true},
		{"second document: absolute lines", docs[1], "kind", Span{22, 1, 22, 14}, true},
		{"flow mapping, non-ASCII value", docs[1], "metadata.name", Span{23, 12, 23, 25}, true},
		{"nested flow mapping", docs[1], "metadata.labels.app", Span{23, 36, 23, 44}, true},
		{"single-quoted value with an escaped quote", docs[1], "spec.image", Span{25, 3, 25, 17}, true},
		{"block scalar: key and indicator line", docs[1], "spec.note", Span{26, 3, 26, 10}, true},
		{"bracketed schema keys", crdDocs[0], "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[replicas].maximum", Span{29, 17, 29, 28}, true},
		{"case-insensitive fallback", crdDocs[0], "spec.versions[0].additionalPrinterColumns[0].JSONPath", Span{19, 7, 19, 31}, true},
		{"upstream path not in the v1 text", crdDocs[0], "spec.validation.openAPIV3Schema", Span{5, 1, 5, 5}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.doc.Locate(tc.path)
			if got.Span != tc.want || got.Exact != tc.exact {
				t.Errorf("Locate(%q) = %+v exact=%v, want %+v exact=%v", tc.path, got.Span, got.Exact, tc.want, tc.exact)
			}
		})
	}
}

func TestLocateUTF16(t *testing.T) {
	// "😀" is one rune but two UTF-16 code units: columns after it move by two.
	docs, _ := Split("a: {b: \"😀\", c: 1}\n")
	got := docs[0].Locate("a.c")
	if want := (Span{1, 14, 1, 18}); got.Span != want {
		t.Errorf("got %+v, want %+v", got.Span, want)
	}
}

func TestLocateSegs(t *testing.T) {
	docs, _ := Split(crontabs)
	for _, tc := range []struct {
		segs  []Seg
		want  Span
		exact bool
		found string
	}{
		{[]Seg{K("spec"), K("testMap"), K("foo")}, Span{12, 5, 12, 11}, true, "spec.testMap.foo"},
		{[]Seg{K("spec"), K("list"), I(0), K("name")}, Span{14, 5, 14, 16}, true, "spec.list[0].name"},
		{[]Seg{K("spec"), K("nope"), K("x")}, Span{6, 1, 6, 5}, false, "spec"},
	} {
		got := docs[0].LocateSegs(tc.segs)
		if got.Span != tc.want || got.Exact != tc.exact || got.Found != tc.found {
			t.Errorf("LocateSegs(%v) = %+v, want %+v exact=%v found=%q", tc.segs, got, tc.want, tc.exact, tc.found)
		}
	}
}

func TestAliasesAndMerges(t *testing.T) {
	src := "base: &b\n  image: nginx\n  port: 80\nspec:\n  <<: *b\n  port: 81\n  ref: *b\n"
	docs, _ := Split(src)
	for _, tc := range []struct {
		path string
		want Span
	}{
		{"spec.port", Span{6, 3, 6, 11}},             // own key wins over the merged one
		{"spec.image", Span{2, 3, 2, 15}},            // merged from the anchor: its position there
		{"spec.ref.image", Span{2, 3, 2, 15}},        // through an alias
		{"spec.ref", Span{7, 3, 7, 10}},              // the alias itself
		{"spec.ref.nope", Span{7, 3, 7, 10}},         // not there: the alias
		{"base.port", Span{3, 3, 3, 11}},             // the anchor's own key
		{"spec.ref.image.deeper", Span{2, 3, 2, 15}}, // a scalar has no children
	} {
		if got := docs[0].Locate(tc.path); got.Span != tc.want {
			t.Errorf("Locate(%q) = %+v, want %+v", tc.path, got.Span, tc.want)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src      string
		docs     int
		errLine  int // of the first document's Err, 0 for none
		sepError int // line of a separator error, 0 for none
	}{
		{"invalid YAML: line of the problem", "a: 1\nb: [1, 2\nc: 3\n", 1, 2, 0},
		{"invalid YAML in the second document", "a: 1\n---\nb: 2\n  c: 3\n", 2, 0, 0},
		{"tab indentation", "a:\n\tb: 1\n", 1, 2, 0},
		{"list then mapping: the line that breaks it", "- a\nb: 1\n", 1, 2, 0},
		{"unterminated quote: where it opens", "a: 1\nb: \"x\nc: 3\n", 1, 2, 0},
		{"mapping value in the wrong place", "a: 1\nb: 2\n  c: 3\n", 1, 3, 0},
		{"content after a separator", "a: 1\n--- b: 2\nc: 3\n", 2, 0, 2},
		{"only separators", "---\n---\n", 0, 0, 0},
		{"empty", "", 0, 0, 0},
		{"a scalar document", "just text\n", 1, 0, 0},
		{"alias bomb stays small", "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n", 1, 0, 0},
		{"deep flow nesting is refused by the parser", "a: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n", 1, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, errs := Split(tc.src)
			if len(docs) != tc.docs {
				t.Fatalf("got %d documents, want %d", len(docs), tc.docs)
			}
			if tc.sepError != 0 {
				if len(errs) != 1 || errs[0].Span.Line != tc.sepError || !strings.Contains(errs[0].Message, "invalid Yaml document separator") {
					t.Errorf("separator errors %+v, want one on line %d", errs, tc.sepError)
				}
			} else if len(errs) != 0 {
				t.Errorf("unexpected separator errors %+v", errs)
			}
			if tc.docs == 0 {
				return
			}
			d := docs[0]
			switch {
			case tc.errLine == 0 && d.Err != nil && tc.name != "invalid YAML in the second document":
				t.Errorf("unexpected error %v", d.Err)
			case tc.errLine != 0 && (d.Err == nil || d.Err.Span.Line != tc.errLine):
				t.Errorf("error %+v, want one on line %d", d.Err, tc.errLine)
			}
			for _, d := range docs {
				_ = d.Locate("spec.x[0].y")
				_ = d.Start()
			}
			if tc.name == "invalid YAML in the second document" {
				if docs[0].Err != nil || docs[1].Err == nil || docs[1].Err.Span.Line != 4 {
					t.Errorf("errors %+v %+v, want the second document's on line 4", docs[0].Err, docs[1].Err)
				}
			}
		})
	}
}

// TestLocator checks that the remembering locator answers as LocateSegs does, for every path of the
// documents (found, missing below a found prefix, through aliases and merges) asked in any order.
func TestLocator(t *testing.T) {
	for _, src := range []string{crontabs, "base: &b\n  image: nginx\n  port: 80\nspec:\n  <<: *b\n  port: 81\n  ref: *b\n  l: [{a: 1}, {a: 2, b: [x]}]\n"} {
		docs, _ := Split(src)
		for _, d := range docs {
			var paths [][]Seg
			var walk func(n *yaml.Node, prefix []Seg)
			walk = func(n *yaml.Node, prefix []Seg) {
				paths = append(paths, prefix, append(append([]Seg{}, prefix...), K("missing"), K("deeper")), append(append([]Seg{}, prefix...), I(7)))
				n = resolve(n)
				if n == nil || len(prefix) > 8 {
					return
				}
				switch n.Kind {
				case yaml.MappingNode:
					for _, p := range pairs(n) {
						walk(p[1], append(append([]Seg{}, prefix...), K(p[0].Value)))
					}
				case yaml.SequenceNode:
					for i, c := range n.Content {
						walk(c, append(append([]Seg{}, prefix...), I(i)))
					}
				}
			}
			walk(d.Root, nil)
			// Parents first (as explain asks), then the same paths again in reverse order.
			locate := d.Locator()
			for _, order := range [][][]Seg{paths, reversed(paths)} {
				for _, p := range order {
					if got, want := locate(p), d.LocateSegs(p); got != want {
						t.Errorf("document %d, %s: Locator gives %+v, LocateSegs %+v", d.Index, FormatSegs(p), got, want)
					}
				}
			}
		}
	}
}

func reversed[T any](xs []T) []T {
	out := make([]T, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}

func TestInScalar(t *testing.T) {
	const rules = `# rules as CRDs write them
x-kubernetes-validations:
- rule: self.nonExistingField > 0
- rule: 'self == true'
- rule: "self.a + \"b\""
- rule: "has(self.a)"
- rule: |
    self.a > 0 &&
      self.bogus
- rule: >
    self.a >
    self.b
- rule: '"😀" == self.x'
- rule:
    self.a
    && self.b
`
	docs, _ := Split(rules)
	d := docs[0]
	for _, tc := range []struct {
		name      string
		path      string
		line, col int
		want      Span
		ok        bool
	}{
		{"plain: the identifier after the dot", "x-kubernetes-validations[0].rule", 1, 5, Span{3, 13, 3, 30}, true},
		{"single quoted: one operator character", "x-kubernetes-validations[1].rule", 1, 6, Span{4, 15, 4, 16}, true},
		{"double quoted with escapes: not verbatim", "x-kubernetes-validations[2].rule", 1, 5, Span{}, false},
		{"double quoted without escapes", "x-kubernetes-validations[3].rule", 1, 5, Span{6, 14, 6, 18}, true},
		{"literal block: second line under its indentation", "x-kubernetes-validations[4].rule", 2, 3, Span{9, 7, 9, 11}, true},
		{"folded block: not verbatim", "x-kubernetes-validations[5].rule", 1, 1, Span{}, false},
		{"UTF-16 columns after an emoji", "x-kubernetes-validations[6].rule", 1, 8, Span{13, 18, 13, 22}, true},
		{"plain over two lines: not verbatim", "x-kubernetes-validations[7].rule", 1, 1, Span{}, false},
		{"past the value's lines", "x-kubernetes-validations[0].rule", 2, 1, Span{}, false},
		{"past the line's end plus one", "x-kubernetes-validations[0].rule", 1, 40, Span{}, false},
		{"a mapping, not a scalar", "x-kubernetes-validations[0]", 1, 1, Span{}, false},
		{"not in the text", "x-kubernetes-validations[9].rule", 1, 1, Span{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := d.InScalar(tc.path, tc.line, tc.col)
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("InScalar(%q, %d, %d) = %+v, %v; want %+v, %v", tc.path, tc.line, tc.col, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestSplitSources: each document's Source is its lines StartLine to EndLine with their breaks, whatever the
// breaks (\n, \r\n, \r), for separators at the start, the end, doubled and with comments.
func TestSplitSources(t *testing.T) {
	for _, src := range []string{
		"a: 1\n---\nb: 2\n",
		"---\na: 1\r\n---  # c\r\nb: 2\r\n---\n",
		"a: 1\r---\rb: 2",
		"a: 1\n---\n---\n\nb: 2\n\n",
		"# only\n---\nc: [1,\n  2]\n---\nd: {",
		"x: 1",
	} {
		t.Run(strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(src), func(t *testing.T) {
			docs, _ := Split(src)
			text := NewText(src)
			if len(docs) == 0 {
				t.Fatal("no documents")
			}
			for _, d := range docs {
				var want strings.Builder
				for i := d.StartLine; i <= d.EndLine; i++ {
					want.WriteString(text.lines[i-1] + text.breaks[i-1])
				}
				if d.Source != want.String() {
					t.Errorf("document %d (lines %d-%d): source %q, want %q", d.Index, d.StartLine, d.EndLine, d.Source, want.String())
				}
			}
		})
	}
}

// TestErrorPlace holds a document's YAML error to the place of the mistake: the line go-yaml v2 (the API's
// parser) reports for a block collection broken by a line (go-yaml v3 names the line where the collection
// began), the line v3 reports otherwise (where a quoted scalar or a key without its colon began), from the
// line's first character that is not indentation, or from the bracket a flow collection left open opened.
func TestErrorPlace(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line, col int
		message   string
	}{
		{"a nested key indented one space less", "a:\n  b: 1\n  c:\n    d: 2\n   e: 3\n  f: 4\n", 5, 4, "yaml: line 5: did not find expected key"},
		{"a list item indented one space less", "a:\n  - 1\n - 2\n", 3, 2, "yaml: line 3: did not find expected key"},
		{"a list item among keys", "a: 1\n- b\n", 2, 1, "yaml: line 2: did not find expected key"},
		{"a key among list items", "- a\nb: 1\n", 2, 1, "yaml: line 2: did not find expected '-' indicator"},
		{"a flow sequence left open", "a: 1\nb: [1, 2\nc: 3\n", 2, 4, "yaml: line 2: did not find expected ',' or ']'"},
		{"a flow mapping left open after a closed one", "a: [{x: 1}, {y: 2\n", 1, 13, "yaml: line 1: did not find expected ',' or '}'"},
		{"a key indented one space more", "a: 1\nb: 2\n  c: 3\n", 3, 3, "yaml: line 3: mapping values are not allowed in this context"},
		{"a key without its colon", "a: b\nc\nd: e\n", 2, 1, "yaml: line 2: could not find expected ':'"},
		{"a tab in the indentation", "a:\n\tb: 1\n", 2, 1, "yaml: line 2: found character that cannot start any token"},
		{"in the second document", "a: 1\n---\nb:\n  c: 1\n  d:\n    e: 2\n   f: 3\n", 7, 4, "yaml: line 7: did not find expected key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, _ := Split(tc.src)
			var err *Error
			for _, d := range docs {
				if d.Err != nil {
					err = d.Err
				}
			}
			if err == nil {
				t.Fatalf("no error in %q", tc.src)
			}
			if err.Span.Line != tc.line || err.Span.Column != tc.col || err.Message != tc.message {
				t.Errorf("%q at %d:%d, want %q at %d:%d", err.Message, err.Span.Line, err.Span.Column, tc.message, tc.line, tc.col)
			}
		})
	}
}
