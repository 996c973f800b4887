package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExpandOperands: operands are expanded as the real kubectl v1.37.2 expands -f -R (each expectation
// below was checked with kubectl label --local -f DIR -R, which reads through the same builder):
// directories give their .json, .yaml and .yml files (the extension's case as it is), hidden ones too,
// recursively, in filepath.Walk's order; a link to a file is read, a link to a directory is not followed; a
// path that does not exist is a glob pattern; an empty directory, empty standard input, standard input given
// twice and a missing path are input errors naming the input.
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
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	write("crds/b.yaml", "b: 1\n")
	write("crds/a.yml", "a: 1\n")
	write("crds/nested/c.json", "{}\n")
	write("crds/README.md", "# not an input\n")
	write("crds/kustomization.txt", "x\n")
	write("crds/upper.YAML", "kubectl leaves it out\n")
	write("crds/mixed.Yml", "kubectl leaves it out\n")
	write("crds/.hidden.yaml", "h: 1\n")
	write("crds/.git/config.yaml", "g: 1\n")
	write("order/crds/x.yaml", "1\n")
	write("order/crds-v2/x.yaml", "2\n")
	write("order/crds.yaml", "3\n")
	write("links/target/t.yaml", "t: 1\n")
	write("links/in/own.yaml", "o: 1\n")
	link("../target/t.yaml", "links/in/file.yaml")
	link("../target", "links/in/dir")
	write("badlink/own.yaml", "o: 1\n")
	link("../links/target", "badlink/dir.yaml")
	link("links/target", "linkroot")
	write("one.yaml", "one: 1\n")
	write("notes.txt", "given explicitly: read\n")
	write("bom.yaml", "\ufeffbom: 1\n")
	write("glob/p1.yaml", "p: 1\n")
	write("glob/p2.yaml", "p: 2\n")
	write("glob/p.json", "{}\n")
	if err := os.MkdirAll(filepath.Join(dir, "empty", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("empty/sub/only.txt", "x\n")
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
		name    string
		args    []string
		stdin   string
		noStdin bool
		files   []string
		errors  []string // messages, in order
	}{
		{name: "a directory, recursively, hidden entries too, extensions as they are", args: []string{"crds"},
			files: []string{"crds/.git/config.yaml", "crds/.hidden.yaml", "crds/a.yml", "crds/b.yaml", "crds/nested/c.json"}},
		{name: "filepath.Walk's order", args: []string{"order"},
			files: []string{"order/crds/x.yaml", "order/crds-v2/x.yaml", "order/crds.yaml"}},
		{name: "a link to a file is read, a link to a directory is not followed", args: []string{"links/in"},
			files: []string{"links/in/file.yaml", "links/in/own.yaml"}},
		{name: "a link to a directory named as an input cannot be read", args: []string{"badlink"},
			files: []string{"badlink/own.yaml"}, errors: []string{"cannot read the file: is a directory"}},
		{name: "a link to a directory as the operand", args: []string{"linkroot"},
			errors: []string{"cannot read the file: is a directory"}},
		{name: "a file given explicitly, whatever its name", args: []string{"notes.txt"}, files: []string{"notes.txt"}},
		{name: "a file and standard input", args: []string{"one.yaml", "-"}, stdin: "x: 1\n", files: []string{"one.yaml", "-"}},
		{name: "a glob pattern", args: []string{"glob/p*.yaml"}, files: []string{"glob/p1.yaml", "glob/p2.yaml"}},
		{name: "a pattern that matches nothing", args: []string{"glob/q*.yaml"}, errors: []string{"cannot read the file: no such file or directory"}},
		{name: "a pattern that is not valid", args: []string{"glob/[.yaml"}, errors: []string{"not a file, and not a valid pattern: syntax error in pattern"}},
		{name: "an empty directory", args: []string{"empty"}, errors: []string{"no .yaml, .yml or .json file in the directory (--new)"}},
		{name: "empty standard input", args: []string{"-"}, stdin: "# only a comment\n\n", errors: []string{"standard input is empty (--new)"}},
		{name: "standard input twice", args: []string{"-", "-"}, stdin: "x: 1\n", files: []string{"-"}, errors: []string{"standard input is given twice"}},
		{name: "standard input taken by an earlier flag", args: []string{"-"}, noStdin: true, errors: []string{"standard input is given twice"}},
		{name: "a missing path", args: []string{"nothere.yaml"}, errors: []string{"cannot read the file: no such file or directory"}},
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
			// check.go gives nil to the expansion after the one that took standard input.
			var stdin io.Reader = strings.NewReader(tt.stdin)
			if tt.noStdin {
				stdin = nil
			}
			files, probs := expandOperands(args, stdin, "--new")
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

// TestExpandOperandsText: files and standard input are read as kubectl's FileVisitor reads them: a UTF-8
// byte order mark dropped, UTF-16 with one decoded, bytes that are not UTF-8 replaced; lines stay where
// they are.
func TestExpandOperandsText(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		bytes string
		want  string
	}{
		{"UTF-8", "a: 1\nb: é\n", "a: 1\nb: é\n"},
		{"a UTF-8 byte order mark", "\xef\xbb\xbfa: 1\n", "a: 1\n"},
		{"UTF-16LE", "\xff\xfea\x00:\x00 \x001\x00\n\x00b\x00:\x00 \x002\x00\n\x00", "a: 1\nb: 2\n"},
		{"UTF-16BE", "\xfe\xff\x00a\x00:\x00 \x001\x00\r\x00\n", "a: 1\r\n"},
		{"not UTF-8", "a: \xff\n", "a: \ufffd\n"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.Repeat("f", i+1)+".yaml")
			if err := os.WriteFile(p, []byte(tt.bytes), 0o644); err != nil {
				t.Fatal(err)
			}
			files, probs := expandOperands([]string{p, "-"}, strings.NewReader(tt.bytes), "")
			if len(probs) != 0 || len(files) != 2 {
				t.Fatalf("files %v, problems %v", files, probs)
			}
			for _, f := range files {
				if f.text != tt.want {
					t.Errorf("%s: %q, want %q", f.name, f.text, tt.want)
				}
			}
		})
	}
}
