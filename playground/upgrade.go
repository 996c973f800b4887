package playground

import (
	"encoding/json"

	"crdplay/playground/internal/yamlpos"
)

// UpgradeReport is ModeUpgrade's answer: what the API did with the new CRD sent as an update of the old one,
// what each object stored under the old CRD meets afterwards, and the static findings of the change with the
// engine's evidence for each.
type UpgradeReport struct {
	// Verdict is the one-line answer: "safe" (nothing refused, no finding), "warnings" (nothing refused,
	// findings no stored object shows), "breaks" (a stored object's read or write, or the object sent again
	// as new, is refused because of the upgrade) or "refused" (the API refuses a new CRD).
	Verdict string `json:"verdict"`
	// Summary says the verdict in a sentence: "safe", "safe with 3 warnings", "breaks 2 stored objects",
	// "refused by the API: 1 of 8 CRDs".
	Summary string `json:"summary"`
	// CRD is the API's answer to the PUT of the new CRD over the old one: the first of CRDs.
	CRD UpgradeCRD `json:"crd"`
	// CRDs are the API's answers for every CRD of the two texts, paired by name: in the new text's order the
	// CRDs updated (PUT over the old one) and added (POSTed), then those the new text no longer has
	// (removed: not deleted, as kubectl apply would not delete them).
	CRDs []UpgradeCRD `json:"crds"`
	// Migrations are the storage migrations Input.Migrate ran, one per CRD whose update the API refused for
	// a stored version.
	Migrations []Migration `json:"migrations,omitempty"`
	// Objects has one entry per stored object, in the order of the object text.
	Objects []UpgradeObject `json:"objects"`
	// Findings are the static findings of the change (crddiff), each with what the engine showed of it.
	Findings []Finding `json:"findings"`
}

// UpgradeCRD is the API's answer to the new CRD, PUT as an update of the stored old one.
type UpgradeCRD struct {
	// Name is the CRD's metadata.name.
	Name string `json:"name"`
	// Change is "updated" (PUT over the old CRD), "added" (POSTed: the old text did not have it) or "removed"
	// (only the old text has it: left as it is, nothing sent).
	Change string `json:"change"`
	// Source and Document place the CRD: in the new text, or in the old one for a removed CRD.
	Source   Source `json:"source"`
	Document int    `json:"document"`
	// Line is the document's first line.
	Line int `json:"line"`
	// StoredVersions are the old CRD's status.storedVersions before the update, as the API held them.
	StoredVersions []string `json:"storedVersions,omitempty"`
	// Objects counts the stored objects of the CRD.
	Objects int `json:"objects"`
	// Status is the HTTP status of the PUT (200 when the update was accepted); 0 when it could not be sent
	// (the old CRD was refused, or the texts do not hold one CRD each).
	Status   int  `json:"status"`
	Accepted bool `json:"accepted"`
	// Error is the API's Status body when the update was refused (a stored version removed from
	// spec.versions, a scope change, ...).
	Error json.RawMessage `json:"error,omitempty"`
	// Warnings are the PUT's Warning headers, unquoted.
	Warnings []string `json:"warnings"`
}

// UpgradeObject is what one stored object meets after the upgrade.
type UpgradeObject struct {
	// CRD names the CRD that stores the object.
	CRD string `json:"crd"`
	// Document and Item place the object in the object text, as ObjectResult's do.
	Document  int    `json:"document"`
	Item      int    `json:"item,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Seeded is true when the old CRD refused the object, so that it was written to storage directly, as if
	// created under an earlier CRD still; SeedReason is the refusal's message.
	Seeded     bool   `json:"seeded"`
	SeedReason string `json:"seedReason,omitempty"`
	// Checks are the requests made of the object after the upgrade, per version the new CRD serves.
	Checks []UpgradeCheck `json:"checks"`
	// Before are the same writes made under the old CRD before the upgrade, with dryRun=All (nothing is
	// stored): a refusal they share with Checks existed before the upgrade and is not caused by it.
	Before []UpgradeCheck `json:"before"`
}

// Migration is a storage migration run through the API (Input.Migrate): what the "Versions in
// CustomResourceDefinitions" page says to do before a version can leave status.storedVersions.
type Migration struct {
	// CRD names the CRD; From are the stored versions before, To the storage version.
	CRD  string   `json:"crd"`
	From []string `json:"from"`
	To   string   `json:"to"`
	// Rewritten counts the stored objects read and written back in the storage version; Failed lists those
	// whose write the API refused ("namespace/name: message").
	Rewritten int      `json:"rewritten"`
	Failed    []string `json:"failed"`
	// Status is the answer to the PUT of status.storedVersions; Retry the answer to the new CRD sent again.
	Status int        `json:"status"`
	Retry  UpgradeCRD `json:"retry"`
}

// UpgradeCheck is one request made of a stored object after the upgrade, and the API's answer.
type UpgradeCheck struct {
	// Version is the served version the request was made in.
	Version string `json:"version"`
	// Op is "get" (what a client now reads), "update" (a no-op PUT of what was read: does ratcheting let it
	// through), "status" (the same PUT to /status, when the version has a status subresource) or "dryrun"
	// (what was read sent as a new object, with dryRun=All: the new schema without ratcheting).
	Op string `json:"op"`
	// Status is the HTTP status of the request.
	Status int `json:"status"`
	// Error is the API's Status body when the request failed.
	Error json.RawMessage `json:"error,omitempty"`
	// Warnings are the response's Warning headers, unquoted.
	Warnings []string `json:"warnings"`
	// Object is the object as the GET returned it (get checks only).
	Object json.RawMessage `json:"object,omitempty"`
}

// Finding is one static finding of the CRD change, placed in the CRD text, with the engine's evidence of
// whether it bites a stored object.
type Finding struct {
	// CRD names the CRD the finding is about.
	CRD string `json:"crd"`
	// Rule names the check (crddiff's rule name, e.g. "maximum", "required", "storedVersionRemoval").
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Version is the CRD version the finding is in; empty for CRD-wide findings (scope).
	Version string `json:"version,omitempty"`
	// Field is the path in the CRD text, as yamlpos places it (e.g.
	// spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.replicas.maximum).
	Field string `json:"field"`
	// ObjectPath is the field in the objects the finding is about (spec.replicas); empty when it is not about
	// one field.
	ObjectPath string `json:"objectPath,omitempty"`
	// Message says what changed and why it matters.
	Message string `json:"message"`
	// Source is the editor the finding is placed in: SourceCRDs (the new CRD) or SourceOldCRDs (removals).
	Source   Source `json:"source"`
	Document int    `json:"document"`
	// Span is where Field is in the text, or its nearest ancestor when Exact is false.
	yamlpos.Span
	Exact bool `json:"exact"`
	// Affected are the stored objects ("namespace/name", or "name" for cluster-scoped ones) the engine
	// showed the finding biting.
	Affected []string `json:"affected"`
	// Evidence says what the engine showed: "2 of 3 objects now fail their next update: spec.replicas:
	// Invalid value ..." or "no stored object is affected".
	Evidence string `json:"evidence"`
	// Refuses is true when the evidence is a refusal the upgrade causes (the CRD update, a stored object's
	// write, or a stored object sent again as new). Severity is then crddiff's; otherwise an error finding
	// is a warning unless Input.Strict.
	Refuses bool `json:"refuses"`
	// Fix is the next step, where there is one.
	Fix string `json:"fix,omitempty"`
}
