package playground

import (
	"context"
	"strings"
	"testing"
)

// FuzzEvaluate feeds arbitrary object and old-object texts to a session with the CronTab CRD installed:
// Evaluate must never fail, panic or hang on them, every diagnostic must lie inside its text, and every
// object document must have a result.
// fuzzCRD is the CRD the fuzz targets evaluate objects and expressions against.
const fuzzCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}, scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations: [{rule: "!has(self.replicas) || self.replicas <= 10"}]
            properties:
              cronSpec: {type: string, pattern: '^\S+( \S+){4}$'}
              replicas: {type: integer, default: 1}
              tags: {type: array, items: {type: string}, x-kubernetes-list-type: set}
          status:
            type: object
            properties:
              replicas: {type: integer}
`

func FuzzEvaluate(f *testing.F) {
	crd := fuzzCRD
	f.Add(crontabObject, "", "create")
	f.Add("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: a, finalizers: [x/y]}\nspec: {replicas: 11, tags: [a, a], x: 1}\n", "", "delete")
	f.Add("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: a}\nspec: {replicas: 2}\nstatus: {replicas: 1}\n", "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: a}\nspec: {replicas: 20}\n", "status")
	f.Add("---\n- a\n---\nkind: CronTab\n---\n{\"apiVersion\": \"stable.example.com/v1\", \"kind\": \"CronTab\", \"metadata\": {\"name\": \"j\"}}\n", "", "update")
	f.Add("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: s}\nspec: {replicas: 3}\n", "", "scale")
	// Lists stand for their items: an item by alias (a duplicate name), items that are not objects, an empty List.
	f.Add("apiVersion: v1\nkind: List\nitems:\n- &a {apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: a}, spec: {replicas: 11}}\n- *a\n- 3\n- {kind: CronTab}\n",
		"apiVersion: v1\nkind: List\nitems: [{apiVersion: stable.example.com/v1, kind: CronTab, metadata: {name: a}}]\n", "update")
	f.Add("apiVersion: stable.example.com/v1\nkind: CronTabList\nitems: []\n---\nkind: List\nitems: {a: 1}\n", "", "create")
	s := NewSession(Options{})
	modes := map[string]Mode{"create": ModeCreate, "update": ModeUpdate, "status": ModeStatus, "scale": ModeScale, "delete": ModeDelete}
	f.Fuzz(func(t *testing.T, objects, old, mode string) {
		if len(objects)+len(old) > 1<<16 {
			return
		}
		m, ok := modes[mode]
		if !ok {
			m = ModeCreate
		}
		replicas := int32(len(objects) % 7)
		res, err := s.Evaluate(context.Background(), Input{CRDs: &crd, Objects: objects, OldObjects: old, Mode: m, Replicas: &replicas})
		if err != nil {
			t.Fatal(err)
		}
		if !res.CRDs[0].Accepted {
			t.Fatalf("the CRD was refused: %s", res.CRDs[0].Error)
		}
		lines := map[Source]int{SourceObjects: strings.Count(objects, "\n") + strings.Count(objects, "\r") + 1, SourceOldObjects: strings.Count(old, "\n") + strings.Count(old, "\r") + 1}
		for _, d := range res.Diagnostics {
			if d.Source == SourceCRDs {
				t.Fatalf("a diagnostic in the CRD: %+v", d)
			}
			if d.Line < 1 || d.Line > lines[d.Source] || d.Column < 1 || d.EndLine < d.Line {
				t.Fatalf("diagnostic outside its text (%d lines): %+v", lines[d.Source], d)
			}
		}
		for _, o := range res.Objects {
			for _, mk := range o.Marks {
				if mk.Input != nil && (mk.Input.Line < 1 || mk.Input.Line > lines[SourceObjects]) {
					t.Fatalf("mark outside the text: %+v", mk)
				}
			}
		}
	})
}

// FuzzCEL tries the scratchpad with any expression, self and object: never an error or a panic, and every
// compile error placed inside the expression.
func FuzzCEL(f *testing.F) {
	f.Add("self.spec.replicas <= 10", "", crontabObject)
	f.Add("self.size() > 0 && oldSelf", "spec.tags[*]", "spec: {tags: [a, b]}")
	f.Add("self.", "spec", "")
	f.Add("quantity('1Gi').isGreaterThan(quantity(self.cronSpec))", "spec", "spec: {cronSpec: x}")
	f.Add("[1,2].map(x, x * 2)", "nope[*]", "- 1")
	f.Add("self.all(x, x.all(y, y.all(z, true)))\n  == \u00e9", "spec.tags[*]", "{spec: {tags: [\"\"]}}")
	s := NewSession(Options{})
	crd := fuzzCRD
	if _, err := s.Evaluate(context.Background(), Input{CRDs: &crd}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr, self, object string) {
		if len(expr)+len(object) > 1<<14 {
			return
		}
		res, err := s.CEL(context.Background(), CELInput{Expression: expr, Self: self, Object: object, OldObject: object})
		if err != nil {
			t.Fatal(err)
		}
		if res.Scratch == nil {
			return
		}
		lines := strings.Split(expr, "\n")
		for _, e := range res.Scratch.Errors {
			if e.Line < 1 || e.Line > len(lines) || e.Column < 1 || e.Column > len([]rune(lines[e.Line-1]))+1 {
				t.Fatalf("error outside the expression (%q): %+v", expr, e)
			}
		}
	})
}
