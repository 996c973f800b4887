// Package versioncases holds the tests of testdata/versions: oracle cases recorded from the real
// apiextensions-apiserver of several Kubernetes minors (1.30 and 1.32 from their own builds, 1.34 to 1.37
// from the v0.37.2 server's --emulated-version), one tree per version with the same inputs in each.
//
// The tests check that the tree is complete (every case recorded at every version, from identical inputs)
// and replay the recordings of every version the engine emulates (1.34 to 1.37) against the engine emulating
// that version. Upstream keeps the emulated version process-wide, so each version replays in a process of its
// own: natively the test binary runs itself again with CRDPLAY_EMULATED_VERSION set; under js/wasm, where it
// cannot, it replays the version the variable names (the Makefile's test-wasm runs it once per version). The
// recordings are written only by tools/oracle-old/record.sh against real servers; nothing here writes them.
package versioncases
