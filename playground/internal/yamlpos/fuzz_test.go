package yamlpos

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// FuzzLocate feeds arbitrary text and paths to Split and Locate. Besides never panicking or hanging, every
// span must lie inside the text, and every key of every document must be found again, exactly, by the path
// that names it (for keys without the characters that make a path ambiguous).
func FuzzLocate(f *testing.F) {
	f.Add(crontabs, "spec.list[1].name")
	f.Add(crd, "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[replicas].maximum")
	f.Add("a: &a {b: *a}\n", "a.b.b.b")
	f.Add("- [a, {b: c}]\n---\nx: |\n  y\n", "[0][1].b")
	f.Add("a: 1\n--- x\n\"\\u00e9\": 😀\n", "é")
	f.Add("k: {a: 1, <<: {b: 2}}\n", "k.b")
	f.Fuzz(func(t *testing.T, src, path string) {
		if len(src) > 1<<16 {
			return
		}
		text := NewText(src)
		inside := func(s Span) bool {
			return s.Line >= 1 && s.Line <= text.Lines() && s.EndLine >= s.Line && s.Column >= 1 &&
				(s.EndLine > s.Line || s.EndColumn > s.Column)
		}
		docs, errs := Split(src)
		for _, e := range errs {
			if !inside(e.Span) {
				t.Fatalf("separator error outside the text: %+v", e)
			}
		}
		for _, d := range docs {
			if d.Err != nil && !inside(d.Err.Span) {
				t.Fatalf("parse error outside the text: %+v", d.Err)
			}
			if r := d.Locate(path); !inside(r.Span) {
				t.Fatalf("Locate(%q) = %+v, outside the text", path, r)
			}
			if !inside(d.Start()) {
				t.Fatalf("Start() = %+v, outside the text", d.Start())
			}
			budget := 2000
			walkKeys(d.Root, nil, &budget, func(segs []Seg, key *yaml.Node) {
				r := d.LocateSegs(segs)
				if !r.Exact || !inside(r.Span) {
					t.Fatalf("LocateSegs(%v) = %+v", segs, r)
				}
				p := FormatSegs(segs)
				if strings.ContainsAny(p, "[]") || strings.Count(p, ".") != len(segs)-1 {
					return // a key with "." or brackets: the string form is ambiguous
				}
				if got := d.Locate(p); !got.Exact || got.Span != r.Span {
					t.Fatalf("Locate(%q) = %+v, LocateSegs = %+v", p, got, r)
				}
			})
		}
	})
}

// walkKeys calls fn for every scalar key reachable without aliases or merges, depth first, within budget.
func walkKeys(n *yaml.Node, segs []Seg, budget *int, fn func([]Seg, *yaml.Node)) {
	if n == nil || *budget <= 0 {
		return
	}
	*budget--
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Value == "" || k.Value == "<<" || seen[k.Value] {
				continue // duplicate keys: the first one is what a path finds
			}
			seen[k.Value] = true
			s := append(append([]Seg(nil), segs...), K(k.Value))
			fn(s, k)
			walkKeys(n.Content[i+1], s, budget, fn)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkKeys(c, append(append([]Seg(nil), segs...), I(i)), budget, fn)
		}
	}
}
