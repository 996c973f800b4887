// A module of its own so that the brotli encoder, needed only to measure sizes, stays out of crdplay's go.mod.
module crdplay/tools/wasmsize

go 1.26.8

require github.com/andybalholm/brotli v1.2.8
