package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// The JSON output (-o json) is a Report. Its shape is documented in doc.go and kept stable: fields are only
// ever added. It is defined here, not taken from the playground's types, so that those can change.

// ReportVersion is the version of the JSON output's shape.
const ReportVersion = 1

// Report is the result of one check.
type Report struct {
	// Version is ReportVersion.
	Version int `json:"version"`
	// Mode is "upgrade" (with --old) or "create".
	Mode string `json:"mode"`
	// Verdict is the one-line answer: "safe", "warnings" (nothing refused, findings or warnings), "breaks"
	// (an object is refused: in an upgrade, a stored object's read or write, or the object sent again as
	// new), "refused" (the API refuses a CRD) or "input" (the input is wrong); Summary says it in words.
	Verdict string `json:"verdict"`
	Summary string `json:"summary"`
	// ExitCode is the command's exit status: 0 nothing is an error, 1 something is, 2 the input is wrong.
	ExitCode int `json:"exitCode"`
	// Errors and Warnings count Diagnostics by severity.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	// CRDs are the API's answers to each CRD of --new: its create, or in upgrade mode its update over the
	// old one (as Upgrade.CRD).
	CRDs []CRD `json:"crds"`
	// Upgrade is the update of the old CRD to the new one and the static findings (upgrade mode only).
	Upgrade *Upgrade `json:"upgrade,omitempty"`
	// Objects are the objects of the object files, in their order.
	Objects []Object `json:"objects"`
	// Diagnostics are every error, warning and note, as the text output prints them, in file order.
	Diagnostics []Diagnostic `json:"diagnostics"`
	// NotChecked are the documents that are neither CRDs nor objects of a CRD given (a bundle's Namespaces,
	// RBAC, Deployments, admission policies), each once.
	NotChecked []NotChecked `json:"notChecked"`
}

// NotChecked is a document the check leaves out, and why.
type NotChecked struct {
	Position
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Reason     string `json:"reason"`
}

// Position is a place in an input file: 1-based line and column (columns in UTF-16 code units, as editors
// count them; for ASCII a character), with the end of the span when known. Line is 0 for a problem with
// the whole file (it cannot be read).
type Position struct {
	File      string `json:"file"`
	Line      int    `json:"line,omitempty"`
	Column    int    `json:"column,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	EndColumn int    `json:"endColumn,omitempty"`
}

// String is the position as editors and CI read it: file:line:column, or the file alone.
func (p Position) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, max(p.Column, 1))
}

// Diagnostic is one error, warning or note at its place in the input.
type Diagnostic struct {
	Position
	// Severity is "error", "warning" or "info".
	Severity string `json:"severity"`
	// Type is the kind of problem: an API cause's reason (FieldValueInvalid, FieldValueRequired, ...), a
	// Status reason, "Warning" for a Warning header, a finding's "Finding:<rule>", or one of the input
	// problems: UnreadableFile, YAMLSyntax, NotACRD, NotAnObject, MissingKind, NoKindMatch, CRDMismatch,
	// NoCRD, TooManyCRDs, TooLarge.
	Type string `json:"type"`
	// Field is the field path the API named (spec.replicas), or a finding's path in the CRD text.
	Field string `json:"field,omitempty"`
	// Message is the API's own message for API answers.
	Message string `json:"message"`
	// Object is the object the diagnostic is about, for diagnostics in object files.
	Object *ObjectRef `json:"object,omitempty"`
	// Check names the upgrade checks of the object whose answers said it ("update v1, status v1"); empty
	// for what the object's create under the old CRD said.
	Check string `json:"check,omitempty"`
	// Affected are, for a finding, the objects ("namespace/name" or "name") the engine showed it biting.
	Affected []string `json:"affected,omitempty"`
	// Input is true for a problem with the input itself (exit status 2).
	Input bool `json:"input,omitempty"`
	// Fix is the next step that resolves the problem, where there is one.
	Fix string `json:"fix,omitempty"`
}

// ObjectRef names an object.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String names the object as the text output does: "Kind namespace/name", or "Kind name".
func (o *ObjectRef) String() string {
	if o.Namespace != "" {
		return o.Kind + " " + o.Namespace + "/" + o.Name
	}
	return o.Kind + " " + o.Name
}

// CRD is the API's answer to one CRD.
type CRD struct {
	Position
	Name string `json:"name"`
	// Status is the HTTP status of the request (201 created); Accepted is a 2xx.
	Status   int  `json:"status"`
	Accepted bool `json:"accepted"`
	// Message is the API's Status message when it refused the CRD.
	Message string `json:"message,omitempty"`
}

// Upgrade is the update of the old CRD to the new one.
type Upgrade struct {
	// Verdict and Summary are the playground's one-line answer for the upgrade.
	Verdict string `json:"verdict"`
	Summary string `json:"summary"`
	// CRD is the first of CRDs.
	CRD UpgradeCRD `json:"crd"`
	// CRDs are the new CRDs paired by name with the old ones: updated (PUT over the old one; Status 200
	// when accepted, 0 when it could not be sent, for example because the old CRD was refused), added
	// (POSTed: 201), then the old CRDs the new ones lack (removed: left as they are, nothing sent).
	CRDs []UpgradeCRD `json:"crds"`
	// Migrations are the storage migrations run (the playground's upgrade mode runs them on request).
	Migrations []Migration `json:"migrations,omitempty"`
	// Findings are the static findings of the change, each with the engine's evidence.
	Findings []Finding `json:"findings"`
}

// UpgradeCRD is the API's answer to one new CRD of an upgrade.
type UpgradeCRD struct {
	Position
	Name string `json:"name"`
	// Change is "updated", "added" or "removed".
	Change   string   `json:"change"`
	Status   int      `json:"status"`
	Accepted bool     `json:"accepted"`
	Message  string   `json:"message,omitempty"`
	Warnings []string `json:"warnings"`
	// StoredVersions are the old CRD's status.storedVersions before the update.
	StoredVersions []string `json:"storedVersions,omitempty"`
	// Objects counts the stored objects of the CRD.
	Objects int `json:"objects"`
}

// Migration is a storage migration: the objects rewritten in the storage version, status.storedVersions
// set to it, and the new CRD sent again.
type Migration struct {
	CRD          string   `json:"crd"`
	From         []string `json:"from"`
	To           string   `json:"to"`
	Rewritten    int      `json:"rewritten"`
	Failed       []string `json:"failed"`
	Status       int      `json:"status"`
	RetryStatus  int      `json:"retryStatus"`
	RetryMessage string   `json:"retryMessage,omitempty"`
}

// Finding is a change of the CRD that can break stored objects or their clients.
type Finding struct {
	// Position is the field in the new CRD's file, or in the old one's for what was removed.
	Position
	// CRD names the CRD the finding is about.
	CRD string `json:"crd"`
	// Rule is the check (maximum, required, storedVersionRemoval, ...; crdify's names).
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	// Version is the CRD version; empty for the whole CRD.
	Version string `json:"version,omitempty"`
	// Field is the path in the CRD text, ObjectPath the field of the objects ([*] for any index or key).
	Field      string `json:"field"`
	ObjectPath string `json:"objectPath,omitempty"`
	Message    string `json:"message"`
	// Affected are the objects ("namespace/name", or "name") the engine showed the finding biting;
	// Evidence says what it showed.
	Affected []string `json:"affected"`
	Evidence string   `json:"evidence"`
	// Refuses is true when the evidence is a refusal the upgrade causes; a finding without one is a warning
	// (unless --strict).
	Refuses bool `json:"refuses"`
	// Fix is the next step, where there is one.
	Fix string `json:"fix,omitempty"`
}

// Object is one object of the object files and what happened to it.
type Object struct {
	// Position is the object's document (or List item) start.
	Position
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	// Status is the HTTP status of the create (in upgrade mode, of the create under the old CRD: its
	// refusal when the object was seeded); Accepted is a 2xx.
	Status   int  `json:"status"`
	Accepted bool `json:"accepted"`
	// Message is the API's Status message when it refused the create.
	Message string `json:"message,omitempty"`
	// Seeded is true (upgrade mode) when the old CRD refused the object, so that it was stored directly as
	// if created under an earlier CRD; SeedReason is the refusal.
	Seeded     bool   `json:"seeded,omitempty"`
	SeedReason string `json:"seedReason,omitempty"`
	// CRD names the CRD that stores the object (upgrade mode).
	CRD string `json:"crd,omitempty"`
	// Checks (upgrade mode) are the requests made of the object under the new CRD, per served version.
	Checks []Check `json:"checks,omitempty"`
	// Before (upgrade mode) are the same writes made under the old CRD with dryRun=All: a refusal they
	// share with Checks existed before the upgrade.
	Before []Check `json:"before,omitempty"`
}

// Check is one request made of a stored object after the upgrade.
type Check struct {
	Version string `json:"version"`
	// Op is "get", "update" (a no-op update of what was read), "status" (the same to /status) or "dryrun"
	// (what was read sent as a new object with dryRun=All: the new schema without ratcheting).
	Op     string `json:"op"`
	Status int    `json:"status"`
	// Message is the API's Status message when the request failed.
	Message  string   `json:"message,omitempty"`
	Warnings []string `json:"warnings"`
}

// finish counts the diagnostics, orders them by file (in the order given) and place, and sets the exit
// status.
func (r *Report) finish(fileOrder []string) {
	order := map[string]int{}
	for i, f := range fileOrder {
		if _, ok := order[f]; !ok {
			order[f] = i
		}
	}
	sort.SliceStable(r.Diagnostics, func(i, j int) bool {
		a, b := r.Diagnostics[i], r.Diagnostics[j]
		if a.File != b.File {
			return order[a.File] < order[b.File]
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	r.Errors, r.Warnings, r.ExitCode = 0, 0, exitOK
	input := false
	for _, d := range r.Diagnostics {
		switch d.Severity {
		case "error":
			r.Errors++
		case "warning":
			r.Warnings++
		}
		input = input || d.Input
	}
	switch {
	case input:
		r.ExitCode = exitInput
	case r.Errors > 0:
		r.ExitCode = exitFindings
	}
	if r.CRDs == nil {
		r.CRDs = []CRD{}
	}
	if r.Objects == nil {
		r.Objects = []Object{}
	}
	if r.Diagnostics == nil {
		r.Diagnostics = []Diagnostic{}
	}
	if r.NotChecked == nil {
		r.NotChecked = []NotChecked{}
	}
	r.Verdict, r.Summary = r.verdict()
}

// verdict sums the report up: a cluster refuses a CRD, refuses objects (in an upgrade: stored objects'
// reads, writes, or the objects sent again as new), or nothing.
func (r *Report) verdict() (string, string) {
	if r.ExitCode == exitInput {
		return "input", "the input is wrong: nothing was checked in full"
	}
	refused, sent := 0, 0
	if r.Upgrade != nil {
		for _, c := range r.Upgrade.CRDs {
			if c.Change == "removed" {
				continue
			}
			sent++
			if c.Status != 0 && !c.Accepted {
				refused++
			}
		}
	} else {
		for _, c := range r.CRDs {
			sent++
			if !c.Accepted {
				refused++
			}
		}
	}
	broken := map[string]bool{}
	for _, d := range r.Diagnostics {
		if d.Severity == "error" && d.Object != nil {
			broken[d.Object.String()] = true
		}
	}
	objects := "object"
	if r.Upgrade != nil {
		objects = "stored object"
	}
	notChecked := ""
	if n := len(r.NotChecked); n > 0 {
		notChecked = fmt.Sprintf("; %s not checked", plural(n, "document"))
		// Admission configuration can refuse or change what is answered here: the verdict says it is without it.
		applied := 0
		for _, d := range r.Diagnostics {
			if d.Type == "NotChecked" && d.Severity == "warning" {
				applied++
			}
		}
		if applied > 0 {
			notChecked += fmt.Sprintf(", of which %d admission configuration not applied", applied)
		}
	}
	switch {
	case refused > 0:
		what := fmt.Sprintf("refused by the API: %d of %s", refused, plural(sent, "CRD"))
		if len(broken) > 0 {
			what += fmt.Sprintf(", and it breaks %s", plural(len(broken), objects))
		}
		return "refused", what + notChecked
	case len(broken) > 0:
		if r.Upgrade == nil {
			return "breaks", fmt.Sprintf("the API refuses %s%s", plural(len(broken), objects), notChecked)
		}
		return "breaks", fmt.Sprintf("breaks %s%s", plural(len(broken), objects), notChecked)
	case r.Errors > 0:
		return "breaks", plural(r.Errors, "error") + notChecked
	case r.Warnings > 0:
		return "warnings", "safe with " + plural(r.Warnings, "warning") + notChecked
	}
	return "safe", "safe" + notChecked
}

// writeText prints one line per diagnostic, "file:line:column: severity: message", the form editors and CI
// annotate from, and a count on stderr.
func (r *Report) writeText(stdout, stderr io.Writer) {
	fmt.Fprintf(stdout, "crdplay: %s\n", r.Summary)
	for _, d := range r.Diagnostics {
		fmt.Fprintln(stdout, d.Position.String()+": "+d.Severity+": "+d.line())
		if d.Fix != "" {
			fmt.Fprintf(stdout, "    fix: %s\n", d.Fix)
		}
	}
	fmt.Fprintf(stderr, "crdplay: %s, %s\n", plural(r.Errors, "error"), plural(r.Warnings, "warning"))
}

// line is a diagnostic's text after its position and severity: [Kind namespace/name: ][check: ][field: ]
// message[ [affected: ...]], on one line.
func (d Diagnostic) line() string {
	var b strings.Builder
	if d.Object != nil && d.Object.Kind != "" {
		b.WriteString(d.Object.String())
		b.WriteString(": ")
	}
	if d.Check != "" {
		b.WriteString(d.Check)
		b.WriteString(": ")
	}
	if d.Field != "" && !strings.HasPrefix(d.Message, d.Field) {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	// One line per diagnostic: the lines of a multi-line message (a CEL compile error's snippet) are
	// joined; -o json has them as they are.
	b.WriteString(strings.ReplaceAll(strings.TrimSpace(d.Message), "\n", " "))
	if n := len(d.Affected); n > 0 {
		names := d.Affected[:min(n, maxAffected)]
		b.WriteString(" [affected: " + strings.Join(names, ", "))
		if n > maxAffected {
			fmt.Fprintf(&b, " and %d more", n-maxAffected)
		}
		b.WriteString("]")
	}
	return b.String()
}

// maxAffected is how many of a finding's affected objects a text line names.
const maxAffected = 5

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (r *Report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
