package oraclecase

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestOrphans feeds OrphansFS a small tree with one stray entry at a time: each must be named, and the
// complete tree must have none.
func TestOrphans(t *testing.T) {
	complete := fstest.MapFS{
		"cases/README.md":                         {},
		"cases/a/crd.yaml":                        {},
		"cases/a/desc.txt":                        {},
		"cases/a/example.yaml":                    {}, // allowed by extra
		"cases/a/01-create.yaml":                  {},
		"cases/a/02-list-all.yaml":                {},
		"cases/a/expected/00-crd.json":            {},
		"cases/a/expected/01-create.json":         {},
		"cases/a/expected/02-list-all.json":       {},
		"cases/a/expected/02-list-all.table.json": {},
		"cases/b/crd.yaml":                        {}, // not recorded yet: RunCase reports its outputs
	}
	for _, tc := range []struct {
		name, add string
		want      string // "" for no orphan
	}{
		{"complete", "", ""},
		{"case without crd.yaml", "cases/c/expected/00-crd.json", "cases/c: no crd.yaml"},
		{"file among the cases", "cases/notes.txt", "cases/notes.txt: a file where the cases are"},
		{"step name the runner skips", "cases/a/21b-request-watch.yaml", "cases/a/21b-request-watch.yaml: not a step file"},
		{"stray file in a case", "cases/a/crd-old.yaml", "cases/a/crd-old.yaml: not a step file"},
		{"directory in a case", "cases/a/fixtures/x.yaml", "cases/a/fixtures: a directory in a case"},
		{"expected without its step", "cases/a/expected/03-get.json", "cases/a/expected/03-get.json: no step of the case writes it"},
		{"table of a step that is no list", "cases/a/expected/01-create.table.json", "cases/a/expected/01-create.table.json: no step"},
		{"not JSON in expected", "cases/a/expected/01-create.yaml", "cases/a/expected/01-create.yaml: no step"},
		{"directory in expected", "cases/a/expected/old/01-create.json", "cases/a/expected/old: no step"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range complete {
				fsys[k] = v
			}
			if tc.add != "" {
				fsys[tc.add] = &fstest.MapFile{}
			}
			got, err := OrphansFS(fsys, "cases/*", "example.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("orphans %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
				t.Errorf("orphans %q, want one starting %q", got, tc.want)
			}
		})
	}
	t.Run("extra is per call", func(t *testing.T) {
		got, err := OrphansFS(complete, "cases/*")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"cases/a/example.yaml: not a step file"}; len(got) != 1 || !strings.HasPrefix(got[0], want[0]) {
			t.Errorf("orphans %q, want %q", got, want)
		}
	})
	t.Run("no cases", func(t *testing.T) {
		if _, err := OrphansFS(fstest.MapFS{}, "cases/*"); err == nil {
			t.Error("want an error for a pattern that matches nothing")
		}
	})
}
