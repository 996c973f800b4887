package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCutDecls checks the declaration cutter on small files: what goes, what stays byte for byte, and the
// errors that make a stale cut list stop the tool.
func TestCutDecls(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not found (unused imports are named by go list)")
	}
	const header = "package p\n\n"
	tests := []struct {
		name    string
		src     string
		decls   []string
		want    string // whole output, after gofmt
		wantErr string
	}{
		{
			name: "function with its doc comment and the import only it used",
			src: header + `import (
	"fmt"
	"strings"
)

// Keep stays.
func Keep() string { return strings.ToUpper("x") }

// Drop goes, with this comment.
func Drop() { fmt.Println() }
`,
			decls: []string{"Drop"},
			want: header + `import (
	"strings"
)

// Keep stays.
func Keep() string { return strings.ToUpper("x") }
`,
		},
		{
			name: "methods by Type.Name, pointer and value receivers",
			src: header + `type T struct{}

func (t *T) A() {}

func (T) B() {}

func (t *T) C() {}
`,
			decls: []string{"T.A", "T.B"},
			want: header + `type T struct{}

func (t *T) C() {}
`,
		},
		{
			name: "one spec of a var block; a block whose specs all go disappears",
			src: header + `import "net/http"

var (
	// a is cut.
	a = http.DefaultTransport
	b = 1
)

var (
	c = 2
	d = 3
)

const e = 4

type f int
`,
			decls: []string{"a", "c", "d", "e", "f"},
			want: header + `var (
	b = 1
)
`,
		},
		{
			name: "an import named differently from its path's last element",
			src: header + `import (
	mrand "math/rand"
	"strings"
)

func A() int { return mrand.Int() }

func B() string { return strings.ToLower("X") }
`,
			decls: []string{"B"},
			want: header + `import (
	mrand "math/rand"
)

func A() int { return mrand.Int() }
`,
		},
		{
			name:    "a name upstream no longer declares",
			src:     header + "func A() {}\n",
			decls:   []string{"A", "Gone"},
			wantErr: "no top-level declaration Gone",
		},
		{
			name:    "half of a multi-name spec",
			src:     header + "var a, b = 1, 2\n",
			decls:   []string{"a"},
			wantErr: "declares a, b together",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "f.go")
			if err := os.WriteFile(name, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			err := cutDecls(".", name, tt.decls)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestCutsNameDistinctFiles guards the list itself: a whole-file cut and a declaration cut of the same file
// would contradict each other, and a repeated entry is a merge accident.
func TestCutsNameDistinctFiles(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range cuts {
		key := c.pkg + "/" + c.file
		if seen[key] {
			t.Errorf("%s is cut twice", key)
		}
		seen[key] = true
		if c.why == "" {
			t.Errorf("%s: a cut needs its reason", key)
		}
	}
}
