// Command webbuild builds crdplay's playground into one directory of static files, the whole site:
//
//	go run ./tools/webbuild                  # build/web, brotli quality 5 (quick; what make run uses)
//	go run ./tools/webbuild -release         # brotli quality 11 (about two minutes more; what make bench measures)
//	go run ./tools/webbuild -test            # also the browser tests' assets under test/
//
// What it writes (URLs are relative, so the directory works from any static host, under any prefix):
//
//	index.html              the playground (web/page.templ rendered with the asset names below)
//	embed/index.html        the same page with minimal chrome, for iframes on docs sites
//	assets/boot.HASH.js     web/src/boot.ts with web/static/client.js: starts the engine's worker first
//	assets/main.HASH.js     web/src/main.ts bundled by esbuild's Go API (the UI, CodeMirror)
//	assets/main.HASH.css    its styles
//	assets/worker.HASH.js   web/static/worker.js, which runs the engine in a Web Worker
//	assets/crdplay.HASH.wasm  the bridge (wasm/), GOOS=js GOARCH=wasm -trimpath -ldflags='-s -w' in the
//	                        trimmed workspace of tools/wasmws
//	assets/wasm_exec.HASH.js  from the GOROOT that built the wasm (the two must match)
//	assets/examples.HASH.json  the examples gallery
//	crdplay.d.ts            the page's JavaScript API, for readers
//	manifest.json           logical name -> path of each asset (tests and tools read it)
//	X.br, X.gz              precompressed copies of every text asset and the wasm, for hosts that can
//	                        serve them (server/ does: it picks one by Accept-Encoding)
//
// HASH is a digest of the file's content, so that hosts can cache assets forever ("immutable") and only the
// two HTML files and manifest.json need revalidation. Compressed files are cached by content and quality
// under build/cache/compress, so an unchanged wasm is not compressed again.
package main
