// Package kubectl is the playground's command line: it runs a kubectl command line such as
// `kubectl get ct -o wide` against an http.Handler (the engine, engine.NewHandler) and returns what real
// kubectl v1.37 prints for it, together with every HTTP exchange it made.
//
// It is an emulation written from kubectl's behaviour, not kubectl itself: k8s.io/kubectl,
// k8s.io/cli-runtime and client-go are far too big for the browser's wasm and need a network transport.
// What it keeps from kubectl is what a user sees and what the server sees:
//
//   - the same requests: discovery (/api, /apis, and per group/version when the server answers the
//     legacy way), /openapi/v3 where kubectl reads it (field validation support, explain), then the
//     resource requests with kubectl's query parameters, headers and bodies (the three-way merge patch
//     of client-side apply, the last-applied-configuration annotation, fieldManager names);
//   - the same output, byte for byte: Table printing with kubectl's tab writer settings, YAML and JSON
//     printers, name printing with the operation ("created", "configured", "unchanged"), the generic
//     describer, explain's plaintext template, and kubectl's error texts (client errors, "Error from
//     server (NotFound): ..." and the invalid-object layout).
//
// It is laid out as kubectl is. command.go is the part of cobra kubectl relies on (flags anywhere, required
// flags, suggestions for unknown commands); kubectl.go builds the command tree. Each command is in
// cmd_<name>.go, in kubectl's Complete, Validate and Run steps; label and annotate share metadatamap.go.
// Every command that acts on objects resolves them with one resource builder (builder.go: -f files,
// TYPE NAME..., TYPE/NAME..., -l, --field-selector, --all, -A, as cli-runtime's resource.Builder), and the
// flags several commands share are defined once, in flags.go. discovery.go and openapi.go are what kubectl
// reads from the server to map types; client.go sends the requests to the handler and records them.
//
// Expected outputs in testdata/scripts/ were recorded from real kubectl v1.37.2 against the oracle (a real
// apiextensions-apiserver, ../shared/oracle): TestScripts replays each script against engine.NewHandler and
// compares what this package printed, its exit status and every request it made (method, path, query and
// body) with the recording; script_test.go says how to record them again.
//
// What it does not do: commands that need a node, a pod or a terminal (exec, logs, edit...), watching (-w),
// -o jsonpath|go-template|custom-columns|kyaml, --sort-by, kubectl's long help texts; those give an error
// that says so. It does not wait as long as kubectl would: kubectl wait looks for half a second (the engine
// changes nothing by itself), and a delete held by finalizers is watched for two seconds.
//
// The package is pure Go (no syscall/js, no listener): the wasm bridge calls Run with the engine's handler.
package kubectl
