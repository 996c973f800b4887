// Package depguard holds the dependency guard of what the browser ships: its test runs `go list -deps` with
// GOOS=js GOARCH=wasm for the engine (crdplay/engine/...), the playground (crdplay/playground/...) and the
// bridge (crdplay/wasm), and fails with the reason and the import chain for every banned package one of them
// reaches.
//
// It is a package of its own because it checks several top-level trees, each with its own rules: the engine
// and the playground are portable Go that must not touch syscall/js or their host, while the bridge may
// import syscall/js and both of them but, like them, no network client, server code or build tool. A guard
// inside one of those trees would have to reach into its siblings.
//
// The package has no code besides its test.
package depguard
