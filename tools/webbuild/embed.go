package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// embedScript bundles embed.js (web/src/embedjs/embed.ts), the script docs pages load to make their CRD examples
// live (docs/embedding.md), at the site's root under a stable name: docs pages name it in a script tag, so it
// cannot carry a content hash. A classic script (IIFE), so that it finds its own URL in document.currentScript.
func (b *builder) embedScript() error {
	res := api.Build(api.BuildOptions{
		AbsWorkingDir:     b.root,
		EntryPoints:       []string{"web/src/embedjs/embed.ts"},
		Bundle:            true,
		Format:            api.FormatIIFE,
		Target:            api.ES2020,
		Platform:          api.PlatformBrowser,
		Outdir:            "out",
		Write:             false,
		MinifyWhitespace:  b.minify,
		MinifyIdentifiers: b.minify,
		MinifySyntax:      b.minify,
		LegalComments:     api.LegalCommentsNone,
		Tsconfig:          filepath.Join(b.root, "web", "tsconfig.json"),
		LogLevel:          api.LogLevelWarning,
	})
	if len(res.Errors) > 0 {
		msgs := api.FormatMessages(res.Errors, api.FormatMessagesOptions{Kind: api.ErrorMessage})
		return fmt.Errorf("esbuild embed.js:\n%s", strings.Join(msgs, ""))
	}
	if len(res.OutputFiles) != 1 {
		return fmt.Errorf("esbuild embed.js wrote %d files, want 1", len(res.OutputFiles))
	}
	b.manifest["embed.js"] = "embed.js"
	if err := b.file("embed.js", res.OutputFiles[0].Contents); err != nil {
		return err
	}
	// The demo page: docs examples made live by the embed.js beside it.
	demo, err := os.ReadFile(filepath.Join(b.root, "web", "static", "embed-demo.html"))
	if err != nil {
		return err
	}
	return b.file("embed-demo.html", demo)
}

// engineFrame is embed/engine.html: the hidden frame that runs the one engine of a docs page's live examples
// (web/src/embedjs/embed-engine.ts), with the assets it loads as URLs relative to it.
func (b *builder) engineFrame() ([]byte, error) {
	assets, err := json.Marshal(map[string]string{
		"worker":   "../" + b.manifest["worker.js"],
		"wasm":     "../" + b.manifest["crdplay.wasm"],
		"wasmExec": "../" + b.manifest["wasm_exec.js"],
	})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = engineFrameHTML.Execute(&buf, map[string]any{"Assets": template.JS(assets), "Script": "../" + b.manifest["embed-engine.js"]})
	return buf.Bytes(), err
}

var engineFrameHTML = template.Must(template.New("engine").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>crdplay engine</title>
<script type="application/json" id="crdplay-assets">{{.Assets}}</script>
<script type="module" src="{{.Script}}"></script>
</head>
<body data-page="engine"></body>
</html>
`))
