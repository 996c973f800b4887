// Package playground is what the browser playground shows on every edit, computed in Go: the editors' texts
// (CRDs, objects, old objects) go in, and out come the API's answers placed in those texts.
//
// Its front door is a Session:
//
//	s := playground.NewSession(playground.Options{})
//	res, err := s.Evaluate(ctx, playground.Input{CRDs: &crdText, Objects: objectText})
//
// Every verdict comes from the engine (crdplay/engine), driven through its REST API in-process, exactly as a
// client would drive a real API server: the CRDs are POSTed (the engine runs the naming and establishing
// controllers before it answers) and read back; the objects are POSTed, PUT, scaled or deleted according
// to the Mode; each object is read in every served version and listed as a Table. So the statuses, Status
// bodies and causes, warnings, stored objects, tables and conversions in a Result are the API's answers,
// never re-derived. What the REST API does not expose is composed from the upstream packages the API server
// uses: the CEL rules' estimated costs (cel.Compile with CRD validation's cardinality walk, against the
// limits in k8s.io/apiserver/pkg/apis/cel and the CRD validation package) and the runtime cost an object's
// validation used (the budget the upstream Validator leaves).
//
// Around those answers the package places everything in the texts (internal/yamlpos maps upstream field
// paths to YAML lines and columns, multi-document), marks the fields that were pruned, defaulted or set by
// the server (internal/marks), estimates CEL costs (internal/celcost) and builds the explain tree of each
// version's schema (internal/explain) for the explain pane, hover and completion.
//
// Speed: a Session keeps its CRDs installed, in an engine of its own over in-memory storage, for as long as
// the CRD text stays the same; the engine keeps their compiled schemas and CEL programs (cached per CRD uid
// and resourceVersion), so an edit of the objects only runs the objects. Writes of an evaluation are rolled
// back at its end (the storage journals them), so that each evaluation starts from the CRDs alone. A change
// of the CRD text starts a new engine. The benchmarks in bench_test.go measure both paths. What the
// playground derives from a new CRD text beyond the API's answers (the cost reports, version analysis,
// explain trees and runtime cost models, which take a while for a big CRD) can wait: with
// Input.DeferAnalysis the objects' results come first (Result.AnalysisPending), and the next evaluation
// without it does the analysis. The page asks for that second evaluation as soon as it has shown the first.
// A CRD document goes to the API as JSON, converted by the function the API's YAML decoder starts with, when
// the API would read its YAML the same way: the decoder's second, strict parse only finds duplicate keys.
//
// A CRD text may be a release bundle: the CRDs are installed, a List of CRDs (kubectl get crds -o yaml) stands
// for its items, and every other document (a Namespace, RBAC, an admission policy) is noted once as not
// checked (bundle.go). ModeUpgrade builds the cluster an upgrade meets (upgrade_eval.go): Input.History's
// releases applied in turn, then OldCRDs, each CRD read as a cluster holds it (an exported CRD's
// status.storedVersions written through /status; Input.StoredVersions); the objects stored; the new CRDs
// paired by name with the old ones and applied; every stored object read, sent again as new (dry run),
// updated and status-updated in each served version, beside the same writes made under the old CRD first so
// that a refusal the upgrade did not cause is said to be older. The static findings (internal/crddiff) get
// the engine's evidence (upgrade_findings.go), and the verdict and next steps come last (upgrade_verdict.go):
// only what a cluster refuses is an error; Input.Migrate runs the storage migration a refusal asks for.
//
// Bad input never fails an evaluation: text that is not YAML, documents that are not objects, unknown kinds,
// YAML bombs and absurd nesting all become diagnostics with a line. A mistake is one diagnostic, at the line
// and column of the mistake, in the words a person reads (diagnostics.go): a YAML error where go-yaml's
// parser finds the line that broke the text, a value of the wrong type at the value in YAML's terms, a key
// given twice at its second key, with the editor's line numbers; the API's own message, when said otherwise
// (the lines of the document it was sent, the hex of a body it could not decode, Go's type names), stays
// whole in Diagnostic.Detail, and the causes of an answer that follow from another (the CEL rules not checked
// because of it) are that one's Notes, not diagnostics of their own. Evaluate returns an error only for a
// caller's mistake (an unknown Mode) or a fault of the playground itself.
//
// The same Session answers the page's CEL scratchpad: Session.CEL compiles an expression as a rule at a node
// of an installed CRD version's schema (upstream's cel.Compile in CRD validation's walk, so the environment,
// compatibility version, cost limits and cardinality are the CRD's own rules') and evaluates it on an object
// as upstream's validator binds self and oldSelf (internal/celcost's Scratch).
//
// The wasm bridge (wasm/main_js.go) exposes Evaluate as crdplay.evaluate(inputJSON) -> Promise<resultJSON>
// and CEL as crdplay.cel; the JSON shapes are typed for the page in web/static/crdplay.d.ts.
package playground
