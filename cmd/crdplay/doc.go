// Command crdplay checks CustomResourceDefinitions and their objects in CI, with the same engine as the
// playground (the upstream apiextensions-apiserver's code, in-process: no cluster, no server, no network).
//
//	crdplay check --old old.yaml --new new.yaml [objects.yaml ...] [-o text|json]
//	crdplay check --new crd.yaml [objects.yaml ...] [-o text|json]      (--crd is the same as --new)
//
// With --old it checks an upgrade: the old CRD is created, the objects are stored under it (written to
// storage directly when the old CRD refuses them, as stored data from an earlier CRD would be), the new CRD
// is sent as an update of the old one, and every object is read, updated unchanged and, with a status
// subresource, updated through /status in every version the new CRD serves. Beside the API's answers come
// the static findings of the change (crdify's rules: a stored version removed, a field removed, a maximum
// lowered, a new required field, ...), each saying whether the engine showed it biting a stored object.
//
// Without --old it checks the objects against the CRD as kubectl create -f would: the CRD's create, then
// each object's. The writes use --field-validation (default Strict, as kubectl's), in --namespace (default
// "default") for namespaced objects that name none. --emulated-version 1.34 (to 1.37) answers as that
// Kubernetes minor does, as kube-apiserver's flag of that name.
//
// Object files are joined in the order given (each its own documents); every position reported is in the
// file it came from. A List document stands for its items.
//
// # Exit status
//
//	0  nothing is an error (warnings and notes may be printed)
//	1  something is an error: the API refused a CRD or an object, a stored object fails a check after the
//	   upgrade, or a static finding of severity error
//	2  the input is wrong: a file cannot be read, is not YAML, --old or --new holds something other than a
//	   CustomResourceDefinition (or, for an upgrade, not exactly one, or not the same one), or an object is
//	   of a kind no CRD given defines; also for a mistake on the command line
//
// # Text output (-o text, the default)
//
// One line per diagnostic, sorted by file (--old, --new, then the object files in order) and position:
//
//	file:line:column: severity: [Kind namespace/name: ][check: ][field: ]message[ [affected: namespace/name, ...]]
//
// severity is error, warning or info. The object is named for diagnostics in object files, and in an
// upgrade the checks that met the problem ("update v1, status v1"); field is the field path the API named
// (or a finding's path in the CRD text); message is the API's own words, or for a finding what changed and
// what the engine showed, with the first objects it showed it biting. A count of errors and warnings goes
// to stderr.
//
// # JSON output (-o json)
//
// One object, version 1 of the shape below. It is stable: fields may be added, none removed or changed in
// meaning without a new version. Lines and columns are 1-based, columns in UTF-16 code units (for ASCII,
// characters); a field marked "omitted when empty" is left out when empty or zero.
//
//	{
//	  "version": 1,
//	  "mode": "upgrade" | "create",
//	  "exitCode": 0 | 1 | 2,
//	  "errors": N, "warnings": N,                // diagnostics counted by severity
//	  "crds": [{                                 // each CRD of --new: its create, or its update in an upgrade
//	    "file", "line", "name", "status" (HTTP), "accepted" (bool), "message" (API's, when refused)
//	  }],
//	  "upgrade": {                               // upgrade mode only
//	    "crd": {"file", "line", "name", "status" (200 accepted; 0 not sent), "accepted", "message", "warnings": []},
//	    "findings": [{
//	      "file", "line", "column", "endLine", "endColumn",   // in --new, or in --old for what was removed
//	      "rule", "severity" ("error" | "warning"), "version" (omitted when empty),
//	      "field" (path in the CRD text), "objectPath" (field of the objects, [*] for any index or key;
//	      omitted when empty), "message",
//	      "affected": ["namespace/name" | "name", ...],       // objects the engine showed it biting
//	      "evidence"                                         // what the engine showed, in words
//	    }]
//	  },
//	  "objects": [{                              // one per object (per List item), in file order
//	    "file", "line", "apiVersion", "kind", "namespace", "name",
//	    "status" (HTTP of the create, under the old CRD in an upgrade; 0 when not sent), "accepted",
//	    "message" (the API's, when refused),
//	    "seeded", "seedReason",                  // upgrade: the old CRD refused it; it was stored directly
//	    "checks": [{"version", "op" ("get" | "update" | "status"), "status", "message", "warnings": []}]
//	  }],
//	  "diagnostics": [{
//	    "file", "line", "column", "endLine", "endColumn",     // line 0 (omitted): the whole file
//	    "severity" ("error" | "warning" | "info"),
//	    "type",      // API cause reason (FieldValueInvalid, ...), Status reason, "Warning", or an input
//	                 // problem: UnreadableFile, YAMLSyntax, NotACRD, NotAnObject, MissingKind, NoKindMatch,
//	                 // CRDMismatch, NoCRD, TooManyCRDs, TooLarge
//	    "field",     // omitted when empty
//	    "message",
//	    "object": {"kind", "namespace", "name"},              // diagnostics in object files
//	    "check": "update v1, status v1",                      // upgrade: the checks that met it; omitted when none
//	    "affected": ["namespace/name", ...],                  // a finding's objects; omitted when none
//	    "input": true                                         // a problem with the input (exit 2); omitted when false
//	  }]
//	}
package main
