// Package k8sversions finds the oldest Kubernetes minor version that accepts a CRD as written, and says why
// no older one does: per CEL rule, the library or option a rule needs, and for the whole CRD the schema
// features that older API servers refuse or drop.
//
// Every version fact comes from upstream's code linked into the engine, never from a table of our own:
//
//   - CEL: an API server of minor N compiles the rules of a new CRD in the environment of its minimum
//     compatibility version, one minor behind it, that k8s.io/apiserver/pkg/cel/environment's base.go
//     builds for any minor (environment.MustBaseEnvSet). A rule is compiled with
//     k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel.Compile in the environment of each minor, with
//     the cost limit CRD validation applies; what a rule needs is named from the older environment's compile
//     error and from what the newer environment declares that the older one lacks (functions, overloads,
//     macros and libraries).
//   - Feature gates: a field the CRD strategy drops while its gate is off (optionalOldSelf, selectableFields)
//     needs the first minor whose default, by the gate's upstream versioned specs, is on.
//   - Formats: a string format that the schema validator ignores before some minor
//     (k8s.io/apiextensions-apiserver/pkg/apiserver/validation.GetUnrecognizedFormats at the server's
//     compatibility version).
//
// The report is about real servers of each minor, from Oldest to the engine's release (Newest), whatever minor
// the engine emulates: kube-apiserver --emulated-version=N compiles new rules for compatibility version N-1
// but never below its floor, three minors under the binary, so a 1.37 emulating 1.34 compiles them for
// 1.34 where a real 1.34 compiles them for 1.33. What the engine then answers otherwise than a real server
// of the minor it emulates (a rule it accepts, a format it validates) is Report.Emulation, in one sentence.
//
// The rules are the ones playground/internal/celcost lists (with their field paths and YAML segments); this
// package never decides whether a CRD is valid for the engine's own version: that answer comes from the
// engine.
package k8sversions
