package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestEmbed: embed.js is written at the site's root under its stable name (docs pages name it), small, with
// its compressed copies; the engine frame names its assets relative to embed/ in a JSON script that parses to
// the manifest's paths; the demo page loads embed.js by a relative URL, so the site works under any prefix.
func TestEmbed(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := &builder{root: root, dir: dir, cache: filepath.Join(dir, "cache"), quality: 5, minify: true,
		written: map[string]bool{}, manifest: map[string]string{
			"worker.js": "assets/worker.0.js", "crdplay.wasm": "assets/crdplay.1.wasm", "wasm_exec.js": "assets/wasm_exec.2.js",
			"embed-engine.js": "assets/embed-engine.3.js",
		}}
	if err := b.embedScript(); err != nil {
		t.Fatal(err)
	}
	if err := b.compressAll(); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(dir, "embed.js"))
	if err != nil {
		t.Fatal(err)
	}
	if b.manifest["embed.js"] != "embed.js" {
		t.Errorf("manifest embed.js = %q", b.manifest["embed.js"])
	}
	// A few kB for every docs page that carries the tag: a budget, so that growth is a decision.
	if len(script) > 8000 {
		t.Errorf("embed.js is %d bytes, over its 8000-byte budget", len(script))
	}
	for _, ext := range []string{".br", ".gz"} {
		if _, err := os.Stat(filepath.Join(dir, "embed.js"+ext)); err != nil {
			t.Errorf("embed.js%s: %v", ext, err)
		}
	}
	demo, err := os.ReadFile(filepath.Join(dir, "embed-demo.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`<script src="embed\.js"`).Match(demo) {
		t.Error("embed-demo.html does not load embed.js by a relative URL")
	}

	html, err := b.engineFrame()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<script type="application/json" id="crdplay-assets">([^<]*)</script>`).FindSubmatch(html)
	if m == nil {
		t.Fatalf("no crdplay-assets in\n%s", html)
	}
	var assets map[string]string
	if err := json.Unmarshal(m[1], &assets); err != nil {
		t.Fatalf("crdplay-assets %s: %v", m[1], err)
	}
	want := map[string]string{"worker": "../assets/worker.0.js", "wasm": "../assets/crdplay.1.wasm", "wasmExec": "../assets/wasm_exec.2.js"}
	for k, v := range want {
		if assets[k] != v {
			t.Errorf("crdplay-assets %s = %q, want %q", k, assets[k], v)
		}
	}
	if !regexp.MustCompile(`<script type="module" src="\.\./assets/embed-engine\.3\.js">`).Match(html) {
		t.Errorf("the engine frame does not load its script:\n%s", html)
	}
}
