// Package versioncases holds the tests of testdata/versions: oracle cases recorded from the real
// apiextensions-apiserver of several Kubernetes minors (1.30 and 1.32 from their own builds, 1.34 to 1.37
// from the v0.37.2 server's --emulated-version), one tree per version with the same inputs in each.
//
// The tests check that the tree is complete (every case recorded at every version, from identical inputs)
// and replay the 1.37 recordings against the engine, whose default is 1.37. The recordings are written only
// by tools/oracle-old/record.sh against real servers; nothing here writes them.
package versioncases
