package playground

import (
	"encoding/json"

	"crdplay/playground/internal/yamlpos"
)

// UpgradeReport is ModeUpgrade's answer: what the API did with the new CRD sent as an update of the old one,
// what each object stored under the old CRD meets afterwards, and the static findings of the change with the
// engine's evidence for each.
type UpgradeReport struct {
	// CRD is the API's answer to the PUT of the new CRD over the old one.
	CRD UpgradeCRD `json:"crd"`
	// Objects has one entry per stored object, in the order of the object text.
	Objects []UpgradeObject `json:"objects"`
	// Findings are the static findings of the change (crddiff), each with what the engine showed of it.
	Findings []Finding `json:"findings"`
}

// UpgradeCRD is the API's answer to the new CRD, PUT as an update of the stored old one.
type UpgradeCRD struct {
	// Name is the CRD's metadata.name.
	Name string `json:"name"`
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
}

// UpgradeCheck is one request made of a stored object after the upgrade, and the API's answer.
type UpgradeCheck struct {
	// Version is the served version the request was made in.
	Version string `json:"version"`
	// Op is "get" (what a client now reads), "update" (a no-op PUT of what was read: does ratcheting let it
	// through) or "status" (the same PUT to /status, when the version has a status subresource).
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
}
