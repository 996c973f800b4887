// Package server hosts the engine as a native HTTP server: it picks the storage, wraps engine.NewHandler with
// what only a process serving real sockets needs (an optional access log), and serves until its context ends,
// shutting down gracefully. The engine itself stays free of listeners and storage choices so that the same code
// runs in a browser tab (see docs/architecture.md); cmd/crdplay-server is the command.
package server
