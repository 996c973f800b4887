package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/evanw/esbuild/pkg/api"

	"crdplay/web"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("webbuild: ")
	out := flag.String("o", "build/web", "output `directory` (relative to the module root)")
	release := flag.Bool("release", false, "compress for release: brotli quality 11 (slow on the wasm)")
	quality := flag.Int("brotli", 5, "brotli `quality` (0-11) when not -release")
	test := flag.Bool("test", false, "also build the browser tests' assets under test/")
	minify := flag.Bool("minify", true, "minify the script bundle")
	flag.Parse()
	if flag.NArg() != 0 {
		log.Fatal("no arguments expected")
	}
	if *release {
		*quality = 11
	}
	root, err := moduleRoot()
	if err != nil {
		log.Fatal(err)
	}
	dir := *out
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	start := time.Now()
	b := &builder{root: root, dir: dir, quality: *quality, test: *test, minify: *minify,
		cache: filepath.Join(root, "build", "cache", "compress")}
	if err := b.build(); err != nil {
		log.Fatal(err)
	}
	log.Printf("built %s in %.1fs (brotli quality %d)", dir, time.Since(start).Seconds(), *quality)
}

// builder holds one build's settings and what it has written so far.
type builder struct {
	root, dir, cache string
	quality          int
	test, minify     bool

	// manifest maps logical names ("main.js", "crdplay.wasm") to paths relative to dir.
	manifest map[string]string
	// written are the paths (relative to dir, slashes) this build wrote; anything else under assets/ is
	// removed at the end, so the directory does not collect every hash ever built.
	written map[string]bool
}

func (b *builder) build() error {
	b.manifest = map[string]string{}
	b.written = map[string]bool{}
	if err := os.MkdirAll(filepath.Join(b.dir, "assets"), 0o755); err != nil {
		return err
	}

	// The wasm build is the slow part (a minute cold): start it first and bundle the script meanwhile.
	type wasmResult struct {
		data map[string][]byte
		err  error
	}
	wasmDone := make(chan wasmResult, 1)
	go func() {
		data, err := b.buildWasm()
		wasmDone <- wasmResult{data, err}
	}()

	bundle, err := b.bundle()
	if err != nil {
		<-wasmDone
		return err
	}
	if err := b.asset("main.css", bundle["main.css"]); err != nil {
		return err
	}
	for _, name := range []string{"boot.js", "main.js", "embed-engine.js"} {
		if err := b.script(name, bundle[name], bundle[name+".map"]); err != nil {
			return err
		}
	}
	worker, err := os.ReadFile(filepath.Join(b.root, "web", "static", "worker.js"))
	if err != nil {
		return err
	}
	if err := b.asset("worker.js", worker); err != nil {
		return err
	}
	goroot, err := goOutput("env", "GOROOT")
	if err != nil {
		return err
	}
	wasmExec, err := os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return err
	}
	if err := b.asset("wasm_exec.js", wasmExec); err != nil {
		return err
	}
	examples, err := examplesJSON(b.root)
	if err != nil {
		return err
	}
	if err := b.asset("examples.json", examples); err != nil {
		return err
	}
	dts, err := os.ReadFile(filepath.Join(b.root, "web", "static", "crdplay.d.ts"))
	if err != nil {
		return err
	}
	if err := b.file("crdplay.d.ts", dts); err != nil {
		return err
	}

	w := <-wasmDone
	if w.err != nil {
		return w.err
	}
	if err := b.asset("crdplay.wasm", w.data["crdplay.wasm"]); err != nil {
		return err
	}
	if b.test {
		// Unhashed: only the tests load them, by these names.
		if err := b.file("test/oraclerunner.wasm", w.data["test/oraclerunner.wasm"]); err != nil {
			return err
		}
		cases, err := caseBundle(filepath.Join(b.root, "testdata", "oracle"))
		if err != nil {
			return err
		}
		if err := b.file("test/oracle-cases.json", cases); err != nil {
			return err
		}
		if err := b.versionCases(); err != nil {
			return err
		}
	}

	for _, page := range []struct {
		file  string
		embed bool
	}{{"index.html", false}, {"embed/index.html", true}} {
		html, err := b.render(page.file, page.embed)
		if err != nil {
			return err
		}
		if err := b.file(page.file, html); err != nil {
			return err
		}
	}
	help, err := b.renderHelp()
	if err != nil {
		return err
	}
	if err := b.file("help.html", help); err != nil {
		return err
	}
	engine, err := b.engineFrame()
	if err != nil {
		return err
	}
	if err := b.file("embed/engine.html", engine); err != nil {
		return err
	}
	if err := b.embedScript(); err != nil {
		return err
	}
	manifest, err := json.MarshalIndent(b.manifest, "", "  ")
	if err != nil {
		return err
	}
	if err := b.file("manifest.json", append(manifest, '\n')); err != nil {
		return err
	}
	if err := b.compressAll(); err != nil {
		return err
	}
	return b.removeStale()
}

// bundle runs esbuild on web/src/boot.ts and web/src/main.ts and returns the outputs by logical name
// (boot.js, main.js, main.css, and the .js.map of each script).
func (b *builder) bundle() (map[string][]byte, error) {
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:     b.root,
		EntryPoints:       []string{"web/src/boot.ts", "web/src/main.ts", "web/src/embedjs/embed-engine.ts"},
		Bundle:            true,
		Format:            api.FormatESModule,
		Target:            api.ES2022,
		Platform:          api.PlatformBrowser,
		Outdir:            "out",
		Write:             false,
		Sourcemap:         api.SourceMapExternal,
		MinifyWhitespace:  b.minify,
		MinifyIdentifiers: b.minify,
		MinifySyntax:      b.minify,
		LegalComments:     api.LegalCommentsEndOfFile,
		Tsconfig:          filepath.Join(b.root, "web", "tsconfig.json"),
		LogLevel:          api.LogLevelWarning,
	})
	if len(res.Errors) > 0 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return nil, fmt.Errorf("esbuild:\n%s", strings.Join(msgs, ""))
	}
	outs := map[string][]byte{}
	for _, f := range res.OutputFiles {
		outs[filepath.Base(f.Path)] = f.Contents
	}
	if outs["boot.js"] == nil || outs["main.js"] == nil || outs["main.css"] == nil || outs["embed-engine.js"] == nil {
		return nil, fmt.Errorf("esbuild wrote %v; want boot.js, main.js, main.css and embed-engine.js", keys(outs))
	}
	return outs, nil
}

// asset writes data under assets/ with a content hash in its name and records it in the manifest.
func (b *builder) asset(name string, data []byte) error {
	hashed := hashedName(name, data)
	b.manifest[name] = hashed
	return b.file(hashed, data)
}

// script is asset for the bundle with its source map: the map is named after the hashed script
// (main.HASH.js.map), and the script's sourceMappingURL is rewritten to match.
func (b *builder) script(name string, data, sourceMap []byte) error {
	hashed := hashedName(name, data)
	if sourceMap != nil {
		data = bytes.Replace(data, []byte("//# sourceMappingURL="+name+".map"),
			[]byte("//# sourceMappingURL="+path.Base(hashed)+".map"), 1)
		if err := b.file(hashed+".map", sourceMap); err != nil {
			return err
		}
	}
	b.manifest[name] = hashed
	return b.file(hashed, data)
}

// hashedName is assets/NAME.HASH.EXT.
func hashedName(name string, data []byte) string {
	ext := path.Ext(name)
	return fmt.Sprintf("assets/%s.%s%s", strings.TrimSuffix(name, ext), digest(data), ext)
}

// file writes data at rel (slashes) under dir, leaving an identical file untouched.
func (b *builder) file(rel string, data []byte) error {
	b.written[rel] = true
	return writeIfChanged(filepath.Join(b.dir, filepath.FromSlash(rel)), data)
}

// render renders the playground page for file (index.html or embed/index.html) with asset URLs relative to it.
func (b *builder) render(file string, embed bool) ([]byte, error) {
	up := strings.Repeat("../", strings.Count(file, "/"))
	p := web.Page{Embed: embed, Version: buildVersion(b.root), Assets: web.Assets{
		Boot:     up + b.manifest["boot.js"],
		Script:   up + b.manifest["main.js"],
		Style:    up + b.manifest["main.css"],
		Worker:   up + b.manifest["worker.js"],
		Wasm:     up + b.manifest["crdplay.wasm"],
		WasmExec: up + b.manifest["wasm_exec.js"],
		Home:     up,
	}}
	if !embed {
		p.Assets.Examples = up + b.manifest["examples.json"]
	}
	if p.Assets.Home == "" {
		p.Assets.Home = "./"
	}
	var buf bytes.Buffer
	if err := web.Playground(p).Render(context.Background(), &buf); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", file, err)
	}
	return buf.Bytes(), nil
}

// renderHelp renders the help page (help.html, beside index.html).
func (b *builder) renderHelp() ([]byte, error) {
	var buf bytes.Buffer
	p := web.Page{Version: buildVersion(b.root), Assets: web.Assets{Style: b.manifest["main.css"], Home: "./"}}
	if err := web.Help(p).Render(context.Background(), &buf); err != nil {
		return nil, fmt.Errorf("rendering help.html: %w", err)
	}
	return buf.Bytes(), nil
}

// buildWasm builds the engine's bridge (and with -test the oracle runner) for js/wasm in the trimmed workspace.
func (b *builder) buildWasm() (map[string][]byte, error) {
	ws := filepath.Join(b.root, "build", "wasm")
	if err := goRun(b.root, nil, "run", "./tools/wasmws", "-o", ws); err != nil {
		return nil, err
	}
	env := []string{"GOWORK=" + filepath.Join(ws, "go.work"), "GOOS=js", "GOARCH=wasm"}
	args := []string{"build", "-trimpath", "-ldflags=-s -w"}
	// -buildvcs=auto leaves the commit out of this cross-compiled workspace build, and crdplay.version()
	// reports it; -buildvcs=true fails outside a git checkout, so ask git first.
	if exec.Command("git", "-C", b.root, "rev-parse", "--git-dir").Run() == nil {
		args = append(args, "-buildvcs=true")
	}
	pkgs := map[string]string{"crdplay.wasm": "./wasm"}
	if b.test {
		pkgs["test/oraclerunner.wasm"] = "./wasm/oraclerunner"
	}
	tmp, err := os.MkdirTemp(filepath.Join(b.root, "build"), "webbuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := map[string][]byte{}
	for name, pkg := range pkgs {
		target := filepath.Join(tmp, filepath.Base(name))
		if err := goRun(b.root, env, append(args, "-o", target, pkg)...); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(target)
		if err != nil {
			return nil, err
		}
		out[name] = data
	}
	return out, nil
}

// compressible says which written files get .br and .gz copies: what browsers fetch and compresses well.
func compressible(rel string) bool {
	switch path.Ext(rel) {
	case ".html", ".js", ".css", ".wasm", ".json", ".ts", ".map":
		return !strings.HasPrefix(rel, "test/")
	}
	return false
}

// compressAll writes X.br and X.gz beside every compressible file, several at a time: brotli on the wasm takes
// most of a core for seconds (minutes at quality 11).
func (b *builder) compressAll() error {
	var rels []string
	for rel := range b.written {
		if compressible(rel) {
			rels = append(rels, rel)
		}
	}
	// The wasm first: it is the longest job, so the others fill the remaining cores around it.
	sort.Slice(rels, func(i, j int) bool {
		wi, wj := strings.HasSuffix(rels[i], ".wasm"), strings.HasSuffix(rels[j], ".wasm")
		if wi != wj {
			return wi
		}
		return rels[i] < rels[j]
	})
	type job struct{ rel, enc string }
	jobs := make(chan job)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if err := b.compress(j.rel, j.enc); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, rel := range rels {
		jobs <- job{rel, "br"}
		jobs <- job{rel, "gz"}
	}
	close(jobs)
	wg.Wait()
	return errors.Join(errs...)
}

// compress writes rel.br or rel.gz, from the cache when this content was compressed before at this quality.
func (b *builder) compress(rel, enc string) error {
	data, err := os.ReadFile(filepath.Join(b.dir, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	key := digest(data) + "-" + enc
	if enc == "br" {
		key += fmt.Sprintf("-q%d", b.quality)
	}
	cached := filepath.Join(b.cache, key)
	out, err := os.ReadFile(cached)
	if err != nil {
		var buf bytes.Buffer
		switch enc {
		case "br":
			// The largest window (16 MB), as for any precompressed static file: it helps the wasm most.
			w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: b.quality, LGWin: 24})
			if _, err := w.Write(data); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
		case "gz":
			w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			if _, err := w.Write(data); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
		}
		out = buf.Bytes()
		// Only for big files: the cache is there to skip minutes of brotli, not milliseconds.
		if len(data) > 1<<20 {
			if err := writeIfChanged(cached, out); err != nil {
				return err
			}
		}
	}
	b.mark(rel + "." + enc)
	return writeIfChanged(filepath.Join(b.dir, filepath.FromSlash(rel+"."+enc)), out)
}

var markMu sync.Mutex

func (b *builder) mark(rel string) {
	markMu.Lock()
	b.written[rel] = true
	markMu.Unlock()
}

// removeStale deletes files under dir that this build did not write: old hashes, and test assets of a
// previous -test build (a site built without -test must not carry them).
func (b *builder) removeStale() error {
	return filepath.WalkDir(b.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(b.dir, p)
		if err != nil {
			return err
		}
		if !b.written[filepath.ToSlash(rel)] {
			return os.Remove(p)
		}
		return nil
	})
}

// caseBundle is every file of every case directory under root as one JSON object {"files": {path: text}},
// paths relative to root with slashes: the page has no file system, and wasm/oraclerunner reads the cases from
// this bundle through an fs.FS.
func caseBundle(root string) ([]byte, error) {
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if !strings.Contains(filepath.ToSlash(rel), "/") {
			return nil // root's own files (the README) belong to no case
		}
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"files": files})
}

// buildVersion describes the checkout for the footer: the short commit, with "+" when the tree has changes.
func buildVersion(root string) string {
	out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty=+").Output()
	if err != nil {
		return ""
	}
	return "crdplay " + strings.TrimSpace(string(out))
}

// digest is the content hash in asset names: 12 hex digits of SHA-256.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// writeIfChanged leaves an identical file alone, so that its modification time (and a browser's revalidation
// against it) stays put.
func writeIfChanged(name string, data []byte) error {
	if old, err := os.ReadFile(name); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// moduleRoot is the directory of crdplay's go.mod, so that webbuild works from any directory of the module.
func moduleRoot() (string, error) {
	gomod, err := goOutput("env", "GOMOD")
	if err != nil {
		return "", err
	}
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the crdplay module (go env GOMOD is empty)")
	}
	return filepath.Dir(gomod), nil
}

// goRun runs the go command in dir with extra environment, its output passed through.
func goRun(dir string, env []string, args ...string) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s go %s: %w", strings.Join(env, " "), strings.Join(args, " "), err)
	}
	return nil
}

func goOutput(args ...string) (string, error) {
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
