// Command crdplay checks CustomResourceDefinitions and their objects in CI, with the same engine as the
// playground (the upstream apiextensions-apiserver's code, in-process: no cluster, no server, no network).
//
//	crdplay check --old OLD [--old NEWER ...] --new NEW [OBJECTS ...] [-o text|json|github|junit] [--strict]
//	crdplay check --new CRDS [OBJECTS ...] [-o text|json|github|junit]     (--crd is the same as --new)
//
// # Inputs
//
// Every input (--old, --new, --crd, the object operands) is a file, a directory (its .yaml, .yml and .json
// files, recursively, as kubectl -R reads them) or - for standard input, and may hold many documents: a
// release's install file, an operator bundle, `helm template` output. --new and --crd may be repeated, and
// their files form one release. Documents that are neither CRDs nor objects of a CRD given (Namespaces,
// RBAC, Deployments, admission policies) are listed once as not checked, admission configuration (policies,
// bindings, webhook configurations) as a warning, since a cluster holding it would run it on the writes
// checked and crdplay does not run admission; only an input that is not YAML,
// or a CRD input that holds no CRD at all, is bad input. Objects are read as kubectl v1.37 reads them: each
// document converted to JSON on the client (a key given twice keeps its last value), a List standing for its
// items.
//
// # Upgrades
//
// With --old it checks an upgrade as a cluster would meet it. The old CRDs are installed as the cluster holds
// them: a CRD exported with `kubectl get crd NAME -o yaml` keeps its status.storedVersions (written through
// the API's /status), a CRD from git has its storage version alone, and --stored-versions NAME=v1alpha1,v1
// names them. Each --old is a release, oldest first: the first is created, each later one applied over it,
// so stored versions accumulate as over a CRD's whole history. The objects are then stored (an object the old
// CRD refuses is written to storage directly, as stored data from an earlier CRD would be; one exported with
// its resourceVersion is stored without it), and the new CRDs applied: each paired by name with an old one
// is sent as its update, the others created; old CRDs the new release lacks are reported as removed.
// Every stored object is then read, sent again as new with dryRun=All (the new schema without ratcheting),
// updated unchanged and, with a status subresource, updated through /status, in every version its new CRD
// serves; the same writes are made under the old CRD first (dry run), so that a refusal that existed before
// the upgrade is reported as such. Beside the API's answers come the static findings of each change
// (crdify's rules), each saying whether the engine showed it biting a stored object, and the next step where
// upstream names one (the storage migration for a stored version removed, a default for a new required field).
//
// Without --old it checks the objects against the CRDs as kubectl create -f would: the CRDs' creates, then
// each object's. The writes use --field-validation (default Strict, as kubectl's), in --namespace (default
// "default") for namespaced objects that name none. --emulated-version 1.34 (to 1.37) answers as that
// Kubernetes minor does, as kube-apiserver's flag of that name.
//
// # Exit status and verdict
//
//	0  a cluster would refuse nothing: safe, or safe with warnings (static findings no stored object shows
//	   biting are warnings: clients that create new objects may break; --strict makes them errors)
//	1  a cluster would refuse something: a CRD (create or update), an object's create, or in an upgrade a
//	   stored object's read or write, or the object sent again as new (ratcheting's limit)
//	2  the input is wrong: a file cannot be read or is not YAML, a CRD input holds no CRD, an object is of a
//	   group a CRD given defines but of a kind or version none does; also for a mistake on the command line
//
// The first line of the text output (and "verdict" and "summary" in JSON) says it in one line: safe, safe
// with N warnings, breaks N stored objects, refused by the API.
//
// # Other outputs
//
// -o github prints GitHub Actions workflow commands (::error file=...,line=...::message), so that findings
// land as annotations on the pull request's diff; -o junit prints JUnit XML, one test suite per file and one
// test case per CRD and object, as kubeconform's junit output does.
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
//	  "verdict": "safe" | "warnings" | "breaks" | "refused" | "input", "summary": "breaks 2 stored objects",
//	  "errors": N, "warnings": N,                // diagnostics counted by severity
//	  "crds": [{                                 // each CRD of --new: its create, or its update in an upgrade
//	    "file", "line", "name", "status" (HTTP), "accepted" (bool), "message" (API's, when refused)
//	  }],
//	  "upgrade": {                               // upgrade mode only
//	    "verdict", "summary",                    // the playground's own, before the command's input checks
//	    "crd": {...},                            // the first of crds
//	    "crds": [{"file", "line", "name", "change" ("updated" | "added" | "removed"),
//	      "status" (200 updated, 201 added; 0 not sent), "accepted", "message", "warnings": [],
//	      "storedVersions": [...] (the old CRD's, before the update), "objects": N (stored objects of it)}],
//	    "findings": [{
//	      "file", "line", "column", "endLine", "endColumn",   // in --new, or in --old for what was removed
//	      "rule", "severity" ("error" | "warning"), "version" (omitted when empty),
//	      "field" (path in the CRD text), "objectPath" (field of the objects, [*] for any index or key;
//	      omitted when empty), "message",
//	      "affected": ["namespace/name" | "name", ...],       // objects the engine showed it biting
//	      "evidence",                                        // what the engine showed, in words
//	      "crd", "refuses" (bool: the evidence is a refusal the upgrade causes), "fix" (next step; omitted when none)
//	    }]
//	  },
//	  "objects": [{                              // one per object (per List item), in file order
//	    "file", "line", "apiVersion", "kind", "namespace", "name",
//	    "status" (HTTP of the create, under the old CRD in an upgrade; 0 when not sent), "accepted",
//	    "message" (the API's, when refused),
//	    "seeded", "seedReason",                  // upgrade: the old CRD refused it; it was stored directly
//	    "crd",                                   // upgrade: the CRD that stores it
//	    "checks": [{"version", "op" ("get" | "dryrun" | "update" | "status"), "status", "message", "warnings": []}],
//	    "before": [...]                          // upgrade: the same writes under the old CRD (dry run)
//	  }],
//	  "diagnostics": [{
//	    "file", "line", "column", "endLine", "endColumn",     // line 0 (omitted): the whole file
//	    "severity" ("error" | "warning" | "info"),
//	    "type",      // API cause reason (FieldValueInvalid, ...), Status reason, "Warning", or an input
//	                 // problem: UnreadableFile, EmptyInput, YAMLSyntax, NotAnObject, MissingKind, NoKindMatch,
//	                 // NoCRD, DuplicateCRD, StoredVersions, TooLarge; "NotChecked" for a document left out (info;
//	                 // a warning for admission configuration, not applied)
//	    "field",     // omitted when empty
//	    "message",
//	    "object": {"kind", "namespace", "name"},              // diagnostics in object files
//	    "check": "update v1, status v1",                      // upgrade: the checks that met it; omitted when none
//	    "affected": ["namespace/name", ...],                  // a finding's objects; omitted when none
//	    "input": true,                                        // a problem with the input (exit 2); omitted when false
//	    "fix": "..."                                          // the next step; omitted when none
//	  }],
//	  "notChecked": [{"file", "line", "apiVersion", "kind", "name", "reason"}]   // each document left out, once
//	}
package main
