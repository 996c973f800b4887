package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"crdplay/internal/golden"
)

// cases run the command in-process with the testdata files; testdata/golden/<name>.txt holds the command
// line, the exit status and the output.
var cases = []struct {
	name string
	args string
	// stdin is a file given as standard input ("-" among the args reads it).
	stdin string
}{
	// create: kubectl create -f's job with the engine's answers.
	{name: "create", args: "check --crd testdata/crontab.yaml testdata/crontabs.yaml testdata/more-crontabs.yaml"},
	{name: "create-json", args: "check --new testdata/crontab.yaml testdata/crontabs.yaml testdata/more-crontabs.yaml -o json"},
	{name: "create-clean", args: "check --new testdata/crontab.yaml testdata/ok.yaml"},
	{name: "create-crd-only", args: "check --new testdata/crontab.yaml"},
	{name: "create-refused-crd", args: "check --new testdata/refused-crd.yaml testdata/crontabs.yaml"},
	{name: "create-warn", args: "check --new testdata/crontab.yaml --field-validation Warn testdata/more-crontabs.yaml"},
	// upgrade: the old CRD, the objects stored under it, the new CRD as its update. The oracle's upgrade
	// cases (testdata/upgrade: old CRD crd.yaml, new CRD the update-crd step, objects the create steps) are
	// the inputs where the real server's answers are recorded.
	{name: "upgrade", args: "check --old testdata/upgrade/old.yaml --new testdata/upgrade/new.yaml testdata/upgrade/backups.yaml"},
	{name: "upgrade-json", args: "check --old testdata/upgrade/old.yaml --new testdata/upgrade/new.yaml testdata/upgrade/backups.yaml -o json"},
	{name: "upgrade-tightened-maximum", args: "check --old " + oracle("tightened-maximum", "crd.yaml") + " --new " + oracle("tightened-maximum", "03-update-crd.yaml") +
		" " + oracle("tightened-maximum", "01-create-a.yaml") + " " + oracle("tightened-maximum", "02-create-b.yaml")},
	{name: "upgrade-version-removed-while-stored", args: "check --old " + oracle("version-removed-while-stored", "crd.yaml") +
		" --new " + oracle("version-removed-while-stored", "02-update-crd.yaml") + " " + oracle("version-removed-while-stored", "01-create-a.yaml")},
	{name: "upgrade-new-cel-rule", args: "check --old " + oracle("new-cel-rule", "crd.yaml") + " --new " + oracle("new-cel-rule", "02-update-crd.yaml") +
		" " + oracle("new-cel-rule", "01-create-a.yaml") + " -o json"},
	{name: "upgrade-scope-change-refused", args: "check --old " + oracle("scope-change-refused", "crd.yaml") +
		" --new " + oracle("scope-change-refused", "02-update-crd.yaml") + " " + oracle("scope-change-refused", "01-create-a.yaml")},
	{name: "upgrade-cert-manager", args: "check --old ../../testdata/corpus/cert-manager/Certificate-upgrade/crd.yaml" +
		" --new ../../testdata/corpus/cert-manager/Certificate-upgrade/03-update-crd.yaml" +
		" ../../testdata/corpus/cert-manager/Certificate-upgrade/01-create.yaml ../../testdata/corpus/cert-manager/Certificate-upgrade/02-create-legacy.yaml"},
	{name: "upgrade-no-objects", args: "check --old " + oracle("new-required-field", "crd.yaml") + " --new " + oracle("new-required-field", "02-update-crd.yaml")},
	// What users bring from clusters and releases: a bundle (CRDs beside a Namespace and an admission
	// policy, an exported CRD with its status.storedVersions, objects exported as a List with
	// resourceVersions, a Deployment), as directories; CRDs paired by name, one added.
	{name: "bundle-upgrade", args: "check --old testdata/bundle/old --new testdata/bundle/new testdata/bundle/objects"},
	{name: "bundle-upgrade-json", args: "check --old testdata/bundle/old --new testdata/bundle/new testdata/bundle/objects -o json"},
	{name: "bundle-upgrade-strict", args: "check --old testdata/bundle/old --new testdata/bundle/new testdata/bundle/objects --strict"},
	// A CRD released with its admission policy and binding: both applied after the CRD, before the objects;
	// an object over the policy's limit denied with the policy's and the binding's names; a policy among the
	// objects that does not compile, refused at its expression's position.
	{name: "policies-create", args: "check --new testdata/policies/bundle.yaml testdata/policies/objects.yaml"},
	{name: "policies-create-json", args: "check --new testdata/policies/bundle.yaml testdata/policies/objects.yaml -o json"},
	// Gateway API's safe-upgrades policy, installed with v1.7.0, refuses the downgrade of its CRD to v1.5.1.
	{name: "policies-gateway-downgrade", args: "check --old testdata/policies/gateway-v1.7.0 --new testdata/policies/gateway-v1.5.1"},
	// The cluster's CRDs exported as one List (kubectl get crds -o yaml), each item with its stored versions.
	{name: "bundle-upgrade-from-list", args: "check --old testdata/cluster/crds.yaml --new testdata/bundle/new testdata/bundle/objects"},
	{name: "bundle-create", args: "check --crd testdata/bundle/old testdata/bundle/objects"},
	// A release history applied in turn: v1alpha1 was the storage version once, so dropping it is refused.
	{name: "history", args: "check --old testdata/history/r1.yaml --old testdata/history/r2.yaml --new testdata/history/r3.yaml testdata/history/widgets.yaml"},
	// The same CRD from git, without the history: only the storage version is stored, and the update passes.
	{name: "history-from-git", args: "check --old testdata/history/r2.yaml --new testdata/history/r3.yaml testdata/history/widgets.yaml"},
	// ... unless the stored versions are named.
	{name: "stored-versions-flag", args: "check --old testdata/history/r2.yaml --stored-versions widgets.example.com=v1alpha1,v1 --new testdata/history/r3.yaml testdata/history/widgets.yaml"},
	{name: "stored-versions-impossible", args: "check --old testdata/history/r2.yaml --stored-versions widgets.example.com=v9 --new testdata/history/r3.yaml"},
	{name: "stored-versions-malformed", args: "check --old testdata/history/r2.yaml --stored-versions v1 --new testdata/history/r3.yaml"},
	// Objects on standard input, as `helm template . | crdplay check --crd crds/ -` gives them.
	{name: "stdin-objects", args: "check --crd testdata/bundle/new -", stdin: "testdata/bundle/objects/stored.yaml"},
	// YAML as kubectl reads it: converted to JSON on the client, where a key given twice keeps its last value.
	{name: "duplicate-key", args: "check --crd testdata/crontab.yaml testdata/dup-key.yaml -o json"},
	// The CI formats.
	{name: "bundle-upgrade-github", args: "check --old testdata/bundle/old --new testdata/bundle/new testdata/bundle/objects -o github"},
	{name: "bundle-upgrade-junit", args: "check --old testdata/bundle/old --new testdata/bundle/new testdata/bundle/objects -o junit"},
	// Bad input: exit 2, at file:line.
	{name: "stdin-twice", args: "check --crd - -", stdin: "testdata/crontab.yaml"},
	{name: "stdin-empty", args: "check --crd testdata/crontab.yaml -", stdin: "testdata/empty.yaml"},
	{name: "not-a-crd", args: "check --new testdata/not-a-crd.yaml testdata/crontabs.yaml"},
	{name: "old-not-a-crd", args: "check --old testdata/not-a-crd.yaml --new testdata/crontab.yaml"},
	{name: "broken-objects", args: "check --crd testdata/crontab.yaml testdata/broken-objects.yaml"},
	{name: "broken-crd", args: "check --new testdata/broken-crd.yaml testdata/crontabs.yaml"},
	{name: "unknown-kind", args: "check --new testdata/crontab.yaml testdata/crontabs.yaml testdata/widgets.yaml"},
	{name: "upgrade-broken-old", args: "check --old testdata/broken-crd.yaml --new testdata/crontab.yaml testdata/crontabs.yaml"},
	{name: "upgrade-two-crds", args: "check --old testdata/crontab.yaml --new testdata/two-crds.yaml"},
	{name: "different-names", args: "check --old testdata/crontab.yaml --new testdata/other-name.yaml testdata/crontabs.yaml"},
	{name: "missing-files", args: "check --old testdata/crontab.yaml --new testdata/missing.yaml testdata/nothere.yaml"},
	{name: "no-new", args: "check testdata/crontabs.yaml"},
	// Only a refused version here: the emulated version is process-wide, and the other cases run the newest.
	{name: "bad-emulated-version", args: "check --new testdata/crontab.yaml --emulated-version 1.33"},
	{name: "bad-output", args: "check --new testdata/crontab.yaml -o yaml"},
	{name: "unknown-command", args: "lint"},
}

// oracle is a file of an upgrade case recorded from the oracle.
func oracle(name, file string) string { return "../../testdata/upgrade/" + name + "/" + file }

func TestCheck(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			stdin := strings.NewReader("")
			cmdline := tc.args
			if tc.stdin != "" {
				b, err := os.ReadFile(tc.stdin)
				if err != nil {
					t.Fatal(err)
				}
				stdin = strings.NewReader(string(b))
				cmdline += " < " + tc.stdin
			}
			code := runWith(context.Background(), strings.Fields(tc.args), stdin, &stdout, &stderr)
			got := fmt.Sprintf("$ crdplay %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", cmdline, code, stdout.String(), stderr.String())
			golden.Check(t, filepath.Join("testdata", "golden", tc.name+".txt"), []byte(got))
		})
	}
}

// TestGoldenOrphans fails for a golden file no case writes.
func TestGoldenOrphans(t *testing.T) {
	names := map[string]bool{}
	for _, tc := range cases {
		names[tc.name+".txt"] = true
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txt"))
	for _, f := range files {
		if !names[filepath.Base(f)] {
			t.Errorf("%s: no case writes it", f)
		}
	}
}

func TestLocate(t *testing.T) {
	files := []*file{{name: "a", text: "x: 1\ny: 2"}, {name: "b", text: ""}, {name: "c", text: "---\nz: 3\r\nw: 4\r\n"}}
	text, parts := joinObjects(files)
	if want := "x: 1\ny: 2\n---\n---\n---\nz: 3\r\nw: 4\r\n"; text != want {
		t.Fatalf("joined %q, want %q", text, want)
	}
	tests := []struct {
		line     int
		file     string
		fileLine int
	}{{1, "a", 1}, {2, "a", 2}, {5, "c", 1}, {6, "c", 2}, {7, "c", 3}}
	for _, tt := range tests {
		if f, l := locate(parts, tt.line); f != tt.file || l != tt.fileLine {
			t.Errorf("locate(%d) = %s:%d, want %s:%d", tt.line, f, l, tt.file, tt.fileLine)
		}
	}
}

// FuzzInput fuzzes what the command reads before the evaluation: the CRD files' documents and the joined
// object text. Every position it reports is a line of its own file, and the joined text maps back to its
// files line for line.
func FuzzInput(f *testing.F) {
	for _, name := range []string{"crontab.yaml", "not-a-crd.yaml", "broken-crd.yaml", "crontabs.yaml", "widgets.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "a: 1\n---\nb: [")
	}
	f.Add("---\n--- # x\n---x\nkind: CustomResourceDefinition\n", "\r\r\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		fa, fb := &file{name: "a", text: a}, &file{name: "b", text: b}
		lines := lineBreaks(a) + 1
		crds, unparsed := readCRDs(fa)
		if unparsed < 0 || unparsed+len(crds) > lines {
			t.Fatalf("%d CRDs and %d documents not YAML in %d lines", len(crds), unparsed, lines)
		}
		for _, c := range crds {
			if p := c.at("metadata", "name"); p.Line < c.start || p.Line > c.end {
				t.Fatalf("name at line %d, outside its document's lines %d-%d", p.Line, c.start, c.end)
			}
		}
		text, parts := joinObjects([]*file{fa, fb})
		joined := strings.Split(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n")
		own := map[string][]string{
			"a": strings.Split(strings.ReplaceAll(strings.ReplaceAll(a, "\r\n", "\n"), "\r", "\n"), "\n"),
			"b": strings.Split(strings.ReplaceAll(strings.ReplaceAll(b, "\r\n", "\n"), "\r", "\n"), "\n"),
		}
		for i, l := range joined {
			if i == len(joined)-1 && l == "" {
				break // after the last line break
			}
			name, n := locate(parts, i+1)
			if l == "---" && (n > len(own[name]) || own[name][n-1] != l) {
				continue // the separator between files
			}
			if n < 1 || n > len(own[name]) || own[name][n-1] != l {
				t.Fatalf("joined line %d %q maps to %s:%d", i+1, l, name, n)
			}
		}
	})
}

// BenchmarkCheck1000 checks 1,000 objects: created against a CRD, and stored under an old CRD then checked
// against a new one (a lowered maximum that 400 of them exceed).
func BenchmarkCheck1000(b *testing.B) {
	dir := b.TempDir()
	var objs strings.Builder
	for i := range 1000 {
		if i > 0 {
			objs.WriteString("---\n")
		}
		fmt.Fprintf(&objs, "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w%d\n  namespace: ns%d\nspec:\n  replicas: %d\n  note: n%d\n", i, i%7, i%10, i)
	}
	objects := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(objects, []byte(objs.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	old, upd := oracle("tightened-maximum", "crd.yaml"), oracle("tightened-maximum", "03-update-crd.yaml")
	for _, bc := range []struct{ name, args string }{
		{"create", "check --new " + old + " " + objects},
		{"upgrade", "check --old " + old + " --new " + upd + " " + objects},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				var stdout, stderr bytes.Buffer
				if code := run(context.Background(), strings.Fields(bc.args), &stdout, &stderr); code == exitInput {
					b.Fatalf("exit %d: %s%s", code, stdout.String(), stderr.String())
				}
			}
		})
	}
}

// FuzzCheck runs the whole check on fuzzed files: whatever they hold, the command exits 0, 1 or 2, its JSON
// output parses, and every diagnostic is placed in one of the given files, within its lines.
func FuzzCheck(f *testing.F) {
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		return string(b)
	}
	f.Add(read("testdata/upgrade/old.yaml"), read("testdata/upgrade/new.yaml"), read("testdata/upgrade/backups.yaml"))
	f.Add("", read("testdata/crontab.yaml"), read("testdata/crontabs.yaml"))
	f.Add(read("testdata/crontab.yaml"), read("testdata/other-name.yaml"), read("testdata/broken-objects.yaml"))
	f.Add(read("testdata/not-a-crd.yaml"), read("testdata/broken-crd.yaml"), read("testdata/widgets.yaml"))
	f.Fuzz(func(t *testing.T, oldText, newText, objText string) {
		dir := t.TempDir()
		files := map[string]string{}
		write := func(name, text string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			files[p] = text
			return p
		}
		args := []string{"check", "--new", write("new.yaml", newText), write("objects.yaml", objText), "-o", "json"}
		if oldText != "" {
			args = append(args, "--old", write("old.yaml", oldText))
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		var rep Report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("exit %d, output is not JSON: %v\n%s%s", code, err, stdout.String(), stderr.String())
		}
		if code != rep.ExitCode || code < 0 || code > 2 {
			t.Fatalf("exit %d, report says %d", code, rep.ExitCode)
		}
		for _, d := range rep.Diagnostics {
			text, ok := files[d.File]
			if !ok || d.Line < 0 || d.Line > lineBreaks(text)+1 {
				t.Fatalf("diagnostic outside the files: %+v", d)
			}
		}
	})
}
