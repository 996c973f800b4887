package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

func TestHashedName(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"main.js", "a", "assets/main.ca978112ca1b.js"},
		{"main.js", "b", "assets/main.3e23e8160039.js"},
		{"crdplay.wasm", "a", "assets/crdplay.ca978112ca1b.wasm"},
	} {
		t.Run(tc.name+"/"+tc.data, func(t *testing.T) {
			if got := hashedName(tc.name, []byte(tc.data)); got != tc.want {
				t.Errorf("hashedName(%q, %q) = %q, want %q", tc.name, tc.data, got, tc.want)
			}
		})
	}
}

// TestCompressAndStale: every compressible file gets .br and .gz that decode to it, test files and
// non-compressible ones get none, and files a build did not write are removed.
func TestCompressAndStale(t *testing.T) {
	dir := t.TempDir()
	b := &builder{dir: dir, cache: filepath.Join(dir, "cache"), quality: 5, written: map[string]bool{}, manifest: map[string]string{}}
	script := []byte(strings.Repeat("console.log('crdplay');\n", 200))
	if err := b.script("main.js", script, []byte(`{"version":3}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.file("test/oraclerunner.wasm", []byte("\x00asm")); err != nil {
		t.Fatal(err)
	}
	if err := b.file("favicon.png", []byte("png")); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "assets", "main.000000000000.js")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.compressAll(); err != nil {
		t.Fatal(err)
	}
	if err := b.removeStale(); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, filepath.FromSlash(b.manifest["main.js"]))
	plain, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(plain, []byte("console.log")) {
		t.Fatalf("script: %q", plain)
	}
	for _, enc := range []string{"br", "gz"} {
		data, err := os.ReadFile(js + "." + enc)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = brotli.NewReader(bytes.NewReader(data))
		if enc == "gz" {
			if r, err = gzip.NewReader(bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, plain) {
			t.Errorf(".%s does not decode to the script (%v)", enc, err)
		}
	}
	if _, err := os.Stat(js + ".map"); err != nil {
		t.Errorf("source map: %v", err)
	}
	for _, gone := range []string{stale, filepath.Join(dir, "test", "oraclerunner.wasm.br"), filepath.Join(dir, "favicon.png.gz")} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s exists", gone)
		}
	}
}

// TestExamples: the gallery asset holds every example with the fields the page needs, ids unique, and the
// scale examples carry the Scale document the page's scale mode sends, the upgrade examples their old CRD apart
// from the new one.
func TestExamples(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := examplesJSON(root)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Examples []example }
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Examples) < 40 {
		t.Fatalf("%d examples", len(got.Examples))
	}
	seen := map[string]bool{}
	modes := map[string]bool{"create": true, "update": true, "status": true, "scale": true, "delete": true, "upgrade": true}
	scales, upgrades := 0, 0
	for _, e := range got.Examples {
		if seen[e.ID] || e.Title == "" || e.CRD == "" || !modes[e.Mode] {
			t.Errorf("example %q: duplicate, or without title, CRD or a known mode (%q)", e.ID, e.Mode)
		}
		seen[e.ID] = true
		if e.Mode == "scale" && strings.Contains(e.Objects, "kind: Scale") {
			scales++
		}
		if e.Mode == "upgrade" {
			upgrades++
			if e.OldCRD == "" || e.OldCRD == e.CRD {
				t.Errorf("upgrade example %q: the old CRD is missing or the same as the new one", e.ID)
			}
		}
	}
	if upgrades < 5 {
		t.Errorf("%d upgrade examples, want at least 5", upgrades)
	}
	if scales == 0 {
		t.Error("no scale example carries a Scale document")
	}
}

func TestScaleDoc(t *testing.T) {
	got, err := scaleDoc("apiVersion: x/v1\nkind: X\nmetadata:\n  name: a\n  namespace: ns\n---\nkind: Y\n", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: autoscaling/v1\nkind: Scale\nmetadata:\n  name: a\n  namespace: ns\nspec:\n  replicas: 3\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestPageAssets: each page names the assets it loads, relative to itself; only the full page names the
// gallery (its Example menu), so that an embed frame, which shows one example, never downloads it.
func TestPageAssets(t *testing.T) {
	b := &builder{root: t.TempDir(), manifest: map[string]string{
		"boot.js": "assets/boot.0.js", "main.js": "assets/main.1.js", "main.css": "assets/main.2.css",
		"worker.js": "assets/worker.3.js", "crdplay.wasm": "assets/crdplay.4.wasm", "wasm_exec.js": "assets/wasm_exec.5.js",
		"examples.json": "assets/examples.6.json",
	}}
	for _, tc := range []struct {
		file     string
		embed    bool
		script   string
		examples string
	}{
		{"index.html", false, "assets/main.1.js", "assets/examples.6.json"},
		{"embed/index.html", true, "../assets/main.1.js", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			html, err := b.render(tc.file, tc.embed)
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(?s)<script id="crdplay-assets" type="application/json">(.*?)</script>`).FindSubmatch(html)
			if m == nil {
				t.Fatalf("no crdplay-assets script in %s", html)
			}
			var assets map[string]string
			if err := json.Unmarshal(m[1], &assets); err != nil {
				t.Fatal(err)
			}
			if assets["script"] != tc.script {
				t.Errorf("script = %q, want %q", assets["script"], tc.script)
			}
			if got, ok := assets["examples"]; got != tc.examples || ok != (tc.examples != "") {
				t.Errorf("examples = %q (present %v), want %q", got, ok, tc.examples)
			}
			if got, want := bytes.Contains(html, []byte("examples.6.json")), tc.examples != ""; got != want {
				t.Errorf("the page's HTML names the gallery: %v, want %v", got, want)
			}
		})
	}
}
