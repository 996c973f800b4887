package playground

import (
	"encoding/json"

	"crdplay/engine"
	"crdplay/playground/internal/celcost"
	"crdplay/playground/internal/explain"
	"crdplay/playground/internal/k8sversions"
	"crdplay/playground/internal/marks"
	"crdplay/playground/internal/yamlpos"
)

// Mode is the operation an evaluation performs on the objects.
type Mode string

const (
	// ModeCreate POSTs each object (kubectl create).
	ModeCreate Mode = "create"
	// ModeUpdate creates the old objects, then PUTs each new object over the old one with the same kind,
	// namespace and name, with the old one's resourceVersion (kubectl replace): ratcheting and transition
	// rules apply.
	ModeUpdate Mode = "update"
	// ModeStatus PUTs each object to /status, over its old object (or over itself, created first, when there
	// is no old object).
	ModeStatus Mode = "status"
	// ModeScale creates each object, then reads its /scale, or writes Input.Replicas to it (kubectl scale).
	ModeScale Mode = "scale"
	// ModeDelete creates each object, then DELETEs it: with finalizers it stays, marked for deletion.
	ModeDelete Mode = "delete"
	// ModeUpgrade checks a CRD change against stored objects: it creates the CRD from Input.OldCRDs, stores
	// Input.Objects under it, PUTs Input.CRDs over it as an update, then reads, updates and updates the
	// status of every object in every version the new CRD serves (Result.Upgrade).
	ModeUpgrade Mode = "upgrade"
)

// Input is one evaluation's request: the editors' texts and what to do with them.
type Input struct {
	// CRDs is the CRD editor's text: one or more CustomResourceDefinitions, as YAML or JSON documents
	// separated by "---" lines. Nil (absent in JSON) means the same text as the previous evaluation, so that
	// the page need not send a large CRD again on every keystroke in the object editor.
	CRDs *string `json:"crds,omitempty"`
	// Objects is the object editor's text: custom resources, one per document.
	Objects string `json:"objects"`
	// OldObjects is the old-object editor's text, for ModeUpdate and ModeStatus.
	OldObjects string `json:"oldObjects,omitempty"`
	// OldCRDs is the old-CRD editor's text, for ModeUpgrade (CRDs is then the new CRD). Nil means the same
	// text as the previous evaluation, as for CRDs.
	OldCRDs *string `json:"oldCrds,omitempty"`
	// Mode defaults to ModeCreate.
	Mode Mode `json:"mode,omitempty"`
	// FieldValidation is the fieldValidation query parameter of the writes: "Strict", "Warn" or "Ignore".
	// Empty sends none, and the API then behaves as for "Warn". (kubectl sends "Strict" unless told
	// otherwise.)
	FieldValidation string `json:"fieldValidation,omitempty"`
	// Namespace is used for namespaced objects without metadata.namespace. Defaults to "default".
	Namespace string `json:"namespace,omitempty"`
	// Replicas is written to /scale in ModeScale; nil only reads /scale.
	Replicas *int32 `json:"replicas,omitempty"`
	// KnownCRDRevision is the CRDRevision of a previous Result the caller still holds. When it is the
	// current one, the schema trees (VersionInfo.Schema) are left out of this Result: they are the same.
	KnownCRDRevision string `json:"knownCRDRevision,omitempty"`
	// Trace asks for every HTTP exchange of the evaluation in Result.Exchanges.
	Trace bool `json:"trace,omitempty"`
	// SkipTables leaves out Result.Tables and the requests that make them (each CRD's objects listed as a
	// Table): the page shows them in a pane of their own and asks for them only while it is shown, as it
	// asks for Trace only while its HTTP log is.
	SkipTables bool `json:"skipTables,omitempty"`
	// DeferAnalysis leaves the playground's own analysis of newly installed CRDs for a later evaluation:
	// the cost reports (VersionInfo.CEL), version reports (CRDResult.Compat), explain trees
	// (VersionInfo.Schema) and objects' runtime costs (ObjectResult.CEL), which take a while for a big CRD and
	// which no answer of the API depends on. The Result then says AnalysisPending, and the next evaluation
	// without DeferAnalysis does the analysis first and has all of it. It is ignored in ModeUpgrade.
	DeferAnalysis bool `json:"deferAnalysis,omitempty"`
	// History is, for ModeUpgrade, the CRD texts of earlier releases, oldest first: the first is created, and
	// each later one (then OldCRDs) is applied over what the one before left, as a cluster that followed those
	// releases holds them (status.storedVersions accumulate over a CRD's whole history). Diagnostics in them
	// have SourceHistory and the text's index in Diagnostic.Text.
	History []string `json:"history,omitempty"`
	// StoredVersions names, for ModeUpgrade, the status.storedVersions of old CRDs by CRD name, as a cluster
	// holds them. A CRD document of OldCRDs that carries status.storedVersions (as `kubectl get crd -o yaml`
	// exports it) gives its own unless named here. Either is written through the API's /status, after the
	// old CRDs are installed and before any object is stored.
	StoredVersions map[string][]string `json:"storedVersions,omitempty"`
	// Strict keeps ModeUpgrade's static findings errors even when no stored object shows them biting, as
	// crdify's defaults do; otherwise such findings are warnings (clients that create new objects may break,
	// but a cluster refuses nothing stored).
	Strict bool `json:"strict,omitempty"`
	// Migrate runs, in ModeUpgrade, the storage migration that the API's refusal of a new CRD asks for when
	// a version is still in status.storedVersions: every stored object of that CRD read and written back
	// (in the storage version), status.storedVersions set to the storage version alone, then the new CRD
	// sent again. All of it goes through the API (UpgradeReport.Migrations).
	Migrate bool `json:"migrate,omitempty"`
	// ClientJSON sends each object document as kubectl v1.37 does: converted to JSON on the client
	// (sigs.k8s.io/yaml.YAMLToJSON, where a key given twice keeps its last value), instead of the document
	// as written, which the API decodes strictly (a duplicate key is then its 400).
	ClientJSON bool `json:"clientJSON,omitempty"`
}

// Result is everything the page shows for one evaluation. Every answer in it (statuses, bodies, causes,
// warnings, tables, objects in other versions) is what the engine's REST API returned; positions, marks,
// costs and schema trees are computed around those answers.
type Result struct {
	// CRDRevision identifies the installed CRD text; it changes whenever the CRD text does.
	CRDRevision string `json:"crdRevision"`
	// CRDCached is true when the CRDs were already installed from the same text, and only the objects ran.
	CRDCached bool `json:"crdCached"`
	// SchemasOmitted is true when Input.KnownCRDRevision was current and VersionInfo.Schema was left out.
	SchemasOmitted bool `json:"schemasOmitted"`
	// AnalysisPending is true when Input.DeferAnalysis left the CRDs' analysis for later: the versions' CEL
	// reports have no rules yet, and Compat, the schema trees and the objects' CEL costs are absent.
	AnalysisPending bool `json:"analysisPending,omitempty"`
	// CRDs has one entry per document of the CRD text.
	CRDs []CRDResult `json:"crds"`
	// OldObjects has one entry per document of the old-object text (ModeUpdate, ModeStatus).
	OldObjects []ObjectResult `json:"oldObjects"`
	// Objects has one entry per document of the object text.
	Objects []ObjectResult `json:"objects"`
	// Tables is `kubectl get` of each CRD that has objects, in its preferred version, across namespaces. Nil
	// (absent in JSON) when Input.SkipTables.
	Tables []Table `json:"tables,omitzero"`
	// Diagnostics are all errors, warnings and notes, placed in the editors' texts.
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Limits are the CEL cost limits the costs are measured against.
	Limits celcost.Limits `json:"celLimits"`
	// Kubernetes is the range of minor versions the CRDs' Compat reports consider.
	Kubernetes KubernetesRange `json:"kubernetes"`
	// Upgrade is ModeUpgrade's report: the new CRD's update, each stored object's checks, the static findings.
	Upgrade *UpgradeReport `json:"upgrade,omitempty"`
	// Exchanges are the evaluation's HTTP requests and responses, when Input.Trace was set.
	Exchanges []Exchange `json:"exchanges,omitempty"`
	// Timings are in milliseconds.
	Timings Timings `json:"timings"`
}

// Source names an editor.
type Source string

// The editors a diagnostic or result can belong to.
const (
	SourceCRDs       Source = "crds"
	SourceObjects    Source = "objects"
	SourceOldObjects Source = "oldObjects"
	SourceOldCRDs    Source = "oldCrds"
	// SourceHistory is one of Input.History's texts (Diagnostic.Text says which).
	SourceHistory Source = "history"
)

// Severity of a diagnostic.
type Severity string

// Severities, as editors show them.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Diagnostic is one problem or note, placed at the field it names.
type Diagnostic struct {
	// Source is the editor, Document the document's index among the text's non-empty documents.
	Source   Source `json:"source"`
	Document int    `json:"document"`
	// Item is 1 + the index of the object in the items of a List document; 0 when the document is the object.
	Item int `json:"item,omitempty"`
	// Field is the field path as the API reported it (spec.replicas,
	// spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule); empty for the
	// whole document.
	Field string `json:"field,omitempty"`
	// Type is the cause's type for an API error (FieldValueInvalid, FieldValueRequired, ...), the Status
	// reason when there is no cause (BadRequest, AlreadyExists, ...), "Warning" for a Warning header,
	// "YAMLSyntax" for text that does not parse, "NoKindMatch" for an object no CRD serves, and so on.
	Type string `json:"type"`
	// Message is upstream's message, in the words a person reads: the API's or go-yaml's own, except where
	// the API's message is about the document it was sent rather than the text (its line numbers, which the
	// editor counts from the text's start and go-yaml's parser from 0; the hex of the body it could not
	// decode) or about Go rather than YAML (a Go type's name for a value of the wrong type). Detail is then
	// the API's message whole.
	Message  string   `json:"message"`
	Severity Severity `json:"severity"`
	// Detail is the API's whole message, when Message says it otherwise (see Message); for a document that is
	// not YAML, the API's answer to it. Empty when Message is the API's.
	Detail string `json:"detail,omitempty"`
	// Notes are the causes of the same answer that follow from this problem and are not mistakes of their
	// own: the CEL rules the API did not check because of it ("some validation rules were not checked"), the
	// same value read again by the scale subresource. They are not diagnostics: one mistake counts once.
	Notes []Note `json:"notes,omitempty"`
	// Span is where Field is in the document: its key and one-line value, or its nearest ancestor in the
	// text when Exact is false (a required field that is missing, a path in upstream's internal CRD layout
	// that the v1 text spells differently).
	yamlpos.Span
	Exact bool `json:"exact"`
	// Text is the index in Input.History of the text a SourceHistory diagnostic is in.
	Text int `json:"text,omitempty"`
	// Fix is the next step that resolves the problem, in upstream's terms, where there is one (ModeUpgrade:
	// the storage migration for a stored version removed, a default for a new required field, ...).
	Fix string `json:"fix,omitempty"`
}

// Note is a cause of the API's answer that follows from a Diagnostic's problem (Diagnostic.Notes): its field,
// type and message as the API gave them.
type Note struct {
	Field   string `json:"field,omitempty"`
	Type    string `json:"type"`
	Message string `json:"message"`
	// Span is where the note applies when that is elsewhere in the document: for the rules the API did not
	// check, the first field that has rules (nil when they are on the root only, or on fields the text lacks).
	Span *Span `json:"span,omitempty"`
}

// CRDResult is the API's answer to one CRD document of the CRD text (documents that are not CRDs have a
// NotChecked diagnostic instead).
type CRDResult struct {
	Document int `json:"document"`
	// StartLine and EndLine delimit the document in the text.
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
	// Name is metadata.name as the text has it.
	Name string `json:"name,omitempty"`
	// Status is the HTTP status of the POST: 201 when the CRD was created.
	Status   int  `json:"status"`
	Accepted bool `json:"accepted"`
	// Error is the API's Status body when the CRD was not created (the exact 422 with its causes).
	Error json.RawMessage `json:"error,omitempty"`
	// Warnings are the Warning headers of the POST, unquoted.
	Warnings []string `json:"warnings"`
	// Established is the Established condition after the controllers ran; Served lists the versions served.
	Established   bool          `json:"established"`
	AcceptedNames *Names        `json:"acceptedNames,omitempty"`
	Conditions    []Condition   `json:"conditions,omitempty"`
	Group         string        `json:"group,omitempty"`
	Scope         string        `json:"scope,omitempty"`
	Served        []string      `json:"served"`
	Storage       string        `json:"storage,omitempty"`
	Preferred     string        `json:"preferred,omitempty"`
	Conversion    string        `json:"conversion,omitempty"`
	Versions      []VersionInfo `json:"versions"`
	// Compat is the oldest Kubernetes minor version that accepts the CRD as written, per rule and for the
	// whole CRD, with the reasons placed in the text; nil when the document is not a CRD.
	Compat *CompatReport `json:"compat,omitempty"`
}

// KubernetesRange is the range of Kubernetes 1.x minor versions a compatibility report considers: Newest is
// the minor of the release the engine is, whatever it emulates (the report is about real servers of each
// minor). Version is the release the engine is (/version's gitVersion, "v1.37.2") and Emulated the minor it
// emulates ("1.35"; the newest when not emulating).
type KubernetesRange struct {
	Oldest   int    `json:"oldest"`
	Newest   int    `json:"newest"`
	Version  string `json:"version"`
	Emulated string `json:"emulated"`
}

// kubernetesRange is the range k8sversions reports on, for the emulated minor applied to the process.
func kubernetesRange(emulated string) KubernetesRange {
	return KubernetesRange{Oldest: k8sversions.Oldest, Newest: k8sversions.Newest(), Version: engine.KubernetesVersion, Emulated: emulated}
}

// CompatReport is a CRD's Kubernetes version report, CompatReason one field that older servers refuse or
// ignore, CompatRule the report of one CEL rule, CompatCost a rule's estimated cost in an older minor and
// CompatEmulation what the engine, emulating an older minor, answers otherwise than a real server of it.
type (
	CompatReport    = k8sversions.Report
	CompatReason    = k8sversions.Reason
	CompatRule      = k8sversions.Rule
	CompatCost      = k8sversions.Cost
	CompatEmulation = k8sversions.Emulation
)

// Names are a CRD's status.acceptedNames.
type Names struct {
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular,omitempty"`
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

// Condition is a CRD status condition.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// VersionInfo describes one version of a CRD as its text declares it (also when the API refused the CRD).
type VersionInfo struct {
	Name               string  `json:"name"`
	Served             bool    `json:"served"`
	Storage            bool    `json:"storage"`
	Deprecated         bool    `json:"deprecated,omitempty"`
	DeprecationWarning *string `json:"deprecationWarning,omitempty"`
	// StatusSubresource and ScaleSubresource say which subresources the version has.
	StatusSubresource bool `json:"statusSubresource,omitempty"`
	ScaleSubresource  bool `json:"scaleSubresource,omitempty"`
	// Columns are the version's additionalPrinterColumns.
	Columns []PrinterColumn `json:"columns,omitempty"`
	// CEL is the estimated cost of the version's rules.
	CEL celcost.Version `json:"cel"`
	// Schema is the explain tree of the version's schema (nil without a schema, or when omitted: see
	// Result.SchemasOmitted).
	Schema *SchemaNode `json:"schema,omitempty"`
}

// PrinterColumn is an additionalPrinterColumns entry.
type PrinterColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	JSONPath string `json:"jsonPath"`
	Priority int32  `json:"priority,omitempty"`
}

// SchemaNode is a node of the explain tree.
type SchemaNode = explain.Node

// RuleCost is a CEL rule's estimated cost; VersionCost the report of one version.
type (
	RuleCost    = celcost.Rule
	VersionCost = celcost.Version
	CELLimits   = celcost.Limits
)

// Mark is a field that differs between the input and the stored object.
type Mark = marks.Mark

// Span is a range of an editor's text (1-based lines, 1-based UTF-16 columns, exclusive end).
type Span = yamlpos.Span

// ObjectResult is the API's answer for one object document.
type ObjectResult struct {
	Source   Source `json:"source"`
	Document int    `json:"document"`
	// Item is 1 + the object's index in the items of a List document, which stands for its items as in
	// kubectl create -f; 0 when the document is the object.
	Item int `json:"item,omitempty"`
	// StartLine and EndLine delimit the document in the text.
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
	// APIVersion, Kind, Namespace and Name identify the object (Name as stored, for generateName).
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	// Operation is what was done: "create", "update", "status", "scale", "delete"; "" when nothing could
	// be sent (see the diagnostics).
	Operation string `json:"operation,omitempty"`
	// Method and Path are the main request's.
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	// Status is the main request's HTTP status; Accepted is a 2xx.
	Status   int  `json:"status"`
	Accepted bool `json:"accepted"`
	// Response is the main request's body: the object, a Scale, or a Status (the exact 4xx/5xx).
	Response json.RawMessage `json:"response,omitempty"`
	// Warnings are the main request's Warning headers, unquoted (ratcheted CEL errors are among them).
	Warnings []string `json:"warnings"`
	// Stored is the object as the API holds it after the operation (nil when there is none: rejected or
	// deleted), and StoredYAML the same as `kubectl get -o yaml` prints it (without managedFields).
	Stored     json.RawMessage `json:"stored,omitempty"`
	StoredYAML string          `json:"storedYAML,omitempty"`
	// Marks are the fields pruned, defaulted or set by the server, against this document's text.
	Marks []Mark `json:"marks"`
	// Versions is the object read in every served version of its CRD.
	Versions []VersionView `json:"versions"`
	// CEL is the runtime cost the version's rules used validating this object; nil without rules.
	CEL *RuntimeCost `json:"cel,omitempty"`
	// Seeded is true for an old object the API refused: it was written to storage directly, as if created
	// under an earlier version of the CRD, so that the update shows ratcheting.
	Seeded bool `json:"seeded,omitempty"`
	// Deleted is true when the object is gone after a delete.
	Deleted bool `json:"deleted,omitempty"`
}

// VersionView is an object read in one version.
type VersionView struct {
	Version string `json:"version"`
	Status  int    `json:"status"`
	// Object is the body (a Status for a failed conversion); YAML is the object as `kubectl get -o yaml`.
	Object   json.RawMessage `json:"object,omitempty"`
	YAML     string          `json:"yaml,omitempty"`
	Warnings []string        `json:"warnings"`
	// Error is the Status message when the read failed.
	Error string `json:"error,omitempty"`
}

// RuntimeCost is the CEL budget one object's validation used.
type RuntimeCost struct {
	Used   int64 `json:"used"`
	Budget int64 `json:"budget"`
}

// Table is `kubectl get` output for one CRD.
type Table struct {
	// CRD is the CRD's name, Version the one listed, Path the request.
	CRD     string        `json:"crd"`
	Version string        `json:"version"`
	Path    string        `json:"path"`
	Status  int           `json:"status"`
	Columns []TableColumn `json:"columns"`
	Rows    []TableRow    `json:"rows"`
	// Error is the Status message when the list failed.
	Error string `json:"error,omitempty"`
}

// TableColumn is a column definition; Wide marks priority > 0 columns, shown by -o wide only.
type TableColumn struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	Priority    int32  `json:"priority"`
	Wide        bool   `json:"wide"`
}

// TableRow is one object's row: its cells in column order (strings, numbers, booleans or null).
type TableRow struct {
	Namespace string            `json:"namespace,omitempty"`
	Name      string            `json:"name"`
	Cells     []json.RawMessage `json:"cells"`
}

// Exchange is one HTTP request of an evaluation and the API's response.
type Exchange struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	ContentType string `json:"contentType,omitempty"`
	Accept      string `json:"accept,omitempty"`
	// RequestBody and Body are text (JSON or YAML).
	RequestBody string   `json:"requestBody,omitempty"`
	Status      int      `json:"status"`
	Warnings    []string `json:"warnings"`
	Body        string   `json:"body"`
}

// Timings of an evaluation, in milliseconds.
type Timings struct {
	Total float64 `json:"total"`
	// CRDs is the time spent installing the CRDs (0 when cached), Objects the rest.
	CRDs    float64 `json:"crds"`
	Objects float64 `json:"objects"`
	// The parts, for comparing the phases of wasm and native builds (make bench): CRDEngine is the part of
	// CRDs spent in the engine's handler (the rest is cost estimation and the explain tree); Parse and
	// ObjectEngine are the parts of Objects spent splitting and decoding the object texts and in the
	// engine's handler (the rest is placing the answers in the texts: marks, stored YAML, positions).
	CRDEngine    float64 `json:"crdEngine"`
	Parse        float64 `json:"parse"`
	ObjectEngine float64 `json:"objectEngine"`
	// Analysis is the time an evaluation spent on the analysis an earlier one deferred (Input.DeferAnalysis).
	Analysis float64 `json:"analysis,omitempty"`
}
