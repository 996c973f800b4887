package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExpandOperands: directories give their .json, .yaml and .yml files (any case), recursively, in path
// order; other files are left out; an empty directory, empty standard input, standard input given twice and
// a missing path are input errors naming the input.
func TestExpandOperands(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("crds/b.yaml", "b: 1\n")
	write("crds/a.YML", "a: 1\n")
	write("crds/nested/c.json", "{}\n")
	write("crds/README.md", "# not an input\n")
	write("crds/kustomization.txt", "x\n")
	write("one.yaml", "one: 1\n")
	if err := os.MkdirAll(filepath.Join(dir, "empty", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel := func(files []*file) []string {
		var out []string
		for _, f := range files {
			r, err := filepath.Rel(dir, f.name)
			if err != nil || f.name == "-" {
				r = f.name
			}
			out = append(out, filepath.ToSlash(r))
		}
		return out
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		files  []string
		errors []string // messages, in order
	}{
		{"a directory, recursively", []string{"crds"}, "", []string{"crds/a.YML", "crds/b.yaml", "crds/nested/c.json"}, nil},
		{"a file and standard input", []string{"one.yaml", "-"}, "x: 1\n", []string{"one.yaml", "-"}, nil},
		{"an empty directory", []string{"empty"}, "", nil, []string{"no .yaml, .yml or .json file in the directory (--new)"}},
		{"empty standard input", []string{"-"}, "# only a comment\n\n", nil, []string{"standard input is empty (--new)"}},
		{"standard input twice", []string{"-", "-"}, "x: 1\n", []string{"-"}, []string{"standard input is given twice"}},
		{"a missing path", []string{"nothere.yaml"}, "", nil, []string{"cannot read the file: no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			for _, a := range tt.args {
				if a != "-" {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			files, probs := expandOperands(args, strings.NewReader(tt.stdin), "--new")
			if got := rel(files); !slices.Equal(got, tt.files) {
				t.Errorf("files %q, want %q", got, tt.files)
			}
			var msgs []string
			for _, p := range probs {
				msgs = append(msgs, p.Message)
				if !p.Input || p.Severity != "error" || p.File == "" {
					t.Errorf("problem %+v: want an input error naming its input", p)
				}
			}
			if !slices.Equal(msgs, tt.errors) {
				t.Errorf("problems %q, want %q", msgs, tt.errors)
			}
		})
	}
}
