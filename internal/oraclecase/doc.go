// Package oraclecase replays the team oracle's recorded cases
// (../shared/oracle, copied to testdata/oracle) against any HTTP endpoint and
// compares the normalised responses byte for byte with the ground truth that
// the real apiextensions-apiserver produced.
//
// It is a port of the oracle's case runner and normaliser and must stay in
// step with them: a behavioural difference here shows up as a false diff (or
// a hidden one) in the engine's tests. It only checks; expected files are only
// ever written by the oracle against the real server.
//
// The package uses no sockets or subprocesses of its own, so that the cases
// also run under GOOS=js GOARCH=wasm against an in-process handler (see
// HandlerClient).
package oraclecase
