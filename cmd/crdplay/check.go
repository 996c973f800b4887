package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"crdplay/engine"
	"crdplay/playground"
	"crdplay/policies"
)

// checkOptions are the flags of `crdplay check`.
type checkOptions struct {
	old, new, crd, storedVersions                []string
	output, namespace, fieldValidation, emulated string
	strict                                       bool
}

// check is `crdplay check`.
func check(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("crdplay check", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var o checkOptions
	fs.StringArrayVar(&o.old, "old", nil, "the CRDs the cluster holds (a file, a directory or - for standard input): check the upgrade from them to --new, with the objects stored under them; repeat it for a release history, oldest first")
	fs.StringArrayVar(&o.new, "new", nil, "the CRDs to check (the new CRDs with --old): a file, a directory or -; may be repeated")
	fs.StringArrayVar(&o.crd, "crd", nil, "the same as --new")
	fs.StringArrayVar(&o.storedVersions, "stored-versions", nil, "an old CRD's status.storedVersions, as NAME=v1alpha1,v1 (default: the exported CRD's status, else its storage version); may be repeated")
	fs.BoolVar(&o.strict, "strict", false, "static findings are errors even when no stored object shows them biting (crdify's defaults)")
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text (file:line:column: severity: message), json, github (workflow commands: annotations on the diff) or junit")
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "the namespace of namespaced objects that name none")
	fs.StringVar(&o.fieldValidation, "field-validation", "Strict", "the writes' fieldValidation: Strict (kubectl's default), Warn or Ignore")
	fs.StringVar(&o.emulated, "emulated-version", "", "answer as Kubernetes 1.34 to 1.37 does, as kube-apiserver's --emulated-version (default: the newest)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: crdplay check [--old OLD ...] --new NEW [OBJECTS ...] [-o text|json|github|junit]\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitInput
	}
	usageErr := func(msg string) int {
		fmt.Fprintf(stderr, "crdplay check: %s\n", msg)
		fs.Usage()
		return exitInput
	}
	// Messages name the flag the user typed.
	newFlag := "--new"
	if len(o.new) == 0 && len(o.crd) > 0 {
		newFlag = "--crd"
	}
	newNames := append(append([]string(nil), o.new...), o.crd...)
	if len(newNames) == 0 {
		return usageErr("--new (or --crd) is required")
	}
	switch o.output {
	case "text", "json", "github", "junit":
	default:
		return usageErr(fmt.Sprintf("-o %q: want text, json, github or junit", o.output))
	}
	switch o.fieldValidation {
	case "Strict", "Warn", "Ignore":
	default:
		return usageErr(fmt.Sprintf("--field-validation %q: want Strict, Warn or Ignore", o.fieldValidation))
	}
	stored := map[string][]string{}
	for _, sv := range o.storedVersions {
		name, list, ok := strings.Cut(sv, "=")
		if !ok || name == "" || list == "" {
			return usageErr(fmt.Sprintf("--stored-versions %q: want NAME=VERSION[,VERSION...]", sv))
		}
		stored[name] = strings.Split(list, ",")
	}

	c := &checker{upgrade: len(o.old) > 0, newFlag: newFlag, rep: &Report{Version: ReportVersion, Mode: "create"}, stdin: stdin}
	if c.upgrade {
		c.rep.Mode = "upgrade"
	}
	rep := c.rep
	write := func() int {
		rep.finish(c.fileOrder())
		switch o.output {
		case "json":
			if err := rep.writeJSON(stdout); err != nil {
				fmt.Fprintf(stderr, "crdplay: %v\n", err)
				return exitInput
			}
		case "github":
			rep.writeGitHub(stdout)
		case "junit":
			if err := rep.writeJUnit(stdout); err != nil {
				fmt.Fprintf(stderr, "crdplay: %v\n", err)
				return exitInput
			}
		default:
			rep.writeText(stdout, stderr)
		}
		return rep.ExitCode
	}

	if !c.read(o.old, newNames, fs.Args()) {
		return write()
	}
	in := playground.Input{CRDs: &c.new.text, Objects: c.objects.text, Mode: playground.ModeCreate,
		FieldValidation: o.fieldValidation, Namespace: o.namespace, ClientJSON: true}
	if c.upgrade {
		last := c.olds[len(c.olds)-1]
		in.Mode, in.OldCRDs, in.Strict = playground.ModeUpgrade, &last.text, o.strict
		for _, h := range c.olds[:len(c.olds)-1] {
			in.History = append(in.History, h.text)
		}
		if len(stored) > 0 {
			in.StoredVersions = stored
		}
	}
	res, err := playground.NewSession(playground.Options{UserAgent: "crdplay", EmulatedVersion: o.emulated, Admission: newPolicyAPI}).Evaluate(ctx, in)
	if err != nil {
		fmt.Fprintf(stderr, "crdplay: %v\n", err)
		return exitInput
	}
	c.report(res)
	return write()
}

// joined is the files given for one role (a release's CRDs, the objects) put one after the other, each its
// own documents, as the playground takes one text: positions in it are turned back into file positions.
type joined struct {
	files []*file
	text  string
	parts []part
	crds  []crdDoc
	// unparsed counts the documents that are not YAML, which may be what defines a kind.
	unparsed int
}

func join(files []*file) *joined {
	text, parts := joinObjects(files)
	return &joined{files: files, text: text, parts: parts}
}

// locate is a span of the joined text in its file.
func (j *joined) locate(line, col, endLine, endCol int) Position {
	p := Position{Line: line, Column: col, EndLine: endLine, EndColumn: endCol}
	var endFile string
	p.File, p.Line = locate(j.parts, line)
	if endFile, p.EndLine = locate(j.parts, endLine); endFile != p.File || endLine == 0 {
		p.EndLine, p.EndColumn = 0, 0
	}
	return p
}

// checker holds one check's inputs and report.
type checker struct {
	upgrade bool
	newFlag string
	stdin   io.Reader
	// olds are the --old releases, oldest first; new the --new CRDs; objects the object files.
	olds    []*joined
	new     *joined
	objects *joined
	// order is every file in the order given, for sorting diagnostics.
	order []string
	rep   *Report
}

func (c *checker) problem(d Diagnostic) { c.rep.Diagnostics = append(c.rep.Diagnostics, d) }

func (c *checker) fileOrder() []string { return c.order }

// read reads the inputs (files, directories, standard input) and checks what the evaluation cannot: that
// the CRD inputs hold CRDs. It reports whether the check can go on.
func (c *checker) read(oldNames, newNames, objectNames []string) bool {
	ok := true
	var stdinUsed bool
	expand := func(names []string, flag string) []*file {
		files, probs := expandOperands(names, c.stdinFor(&stdinUsed, names), flag)
		files = c.skipKustomizations(files, names)
		for _, f := range files {
			c.order = append(c.order, f.name)
		}
		if len(probs) > 0 {
			c.rep.Diagnostics = append(c.rep.Diagnostics, probs...)
			ok = false
		}
		return files
	}
	for _, name := range oldNames {
		c.olds = append(c.olds, join(expand([]string{name}, "--old")))
	}
	c.new = join(expand(newNames, c.newFlag))
	c.objects = join(expand(objectNames, ""))
	if !ok {
		return false
	}
	need := func(j *joined, flag string) {
		for _, f := range j.files {
			crds, unparsed := readCRDs(f)
			j.crds = append(j.crds, crds...)
			j.unparsed += unparsed
		}
		if len(j.crds) == 0 && j.unparsed == 0 {
			names := make([]string, len(j.files))
			for i, f := range j.files {
				names[i] = f.name
			}
			pos := Position{}
			if len(names) > 0 {
				pos.File = names[0]
			}
			c.problem(Diagnostic{Position: pos, Severity: "error", Type: "NoCRD", Input: true,
				Message: fmt.Sprintf("%s (%s) holds no CustomResourceDefinition", flag, strings.Join(names, ", "))})
			ok = false
		}
	}
	for _, j := range c.olds {
		need(j, "--old")
	}
	need(c.new, c.newFlag)
	return ok
}

// skipKustomizations leaves out the kustomization files a directory holds beside its manifests (a CRD
// directory often has one listing its CRDs): kustomize's own file, never a resource, which the API would
// refuse as an object without kind. A file named on the command line is kept.
func (c *checker) skipKustomizations(files []*file, given []string) []*file {
	named := map[string]bool{}
	for _, n := range given {
		named[n] = true
	}
	out := files[:0]
	for _, f := range files {
		switch filepath.Base(f.name) {
		case "kustomization.yaml", "kustomization.yml", "Kustomization":
			if !named[f.name] {
				c.rep.NotChecked = append(c.rep.NotChecked, NotChecked{Position: Position{File: f.name}, Kind: "Kustomization",
					Reason: "not checked: kustomize's file, not a resource"})
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// stdinFor gives standard input to the first expansion that names "-"; later ones get none, and
// expandOperands says it was given twice.
func (c *checker) stdinFor(used *bool, names []string) io.Reader {
	for _, n := range names {
		if n == "-" {
			if *used {
				return nil
			}
			*used = true
			return c.stdin
		}
	}
	return c.stdin
}

// inputTypes are the playground's diagnostic types for input that cannot be sent at all.
var inputTypes = map[string]bool{"YAMLSyntax": true, "NotAnObject": true, "MissingKind": true, "TooLarge": true,
	"NoCRD": true, "StoredVersions": true, "DuplicateCRD": true}

// textOf is the joined text a playground diagnostic's source and text index name.
func (c *checker) textOf(src playground.Source, text int) *joined {
	switch src {
	case playground.SourceOldCRDs:
		if len(c.olds) > 0 {
			return c.olds[len(c.olds)-1]
		}
	case playground.SourceHistory:
		if text >= 0 && text < len(c.olds) {
			return c.olds[text]
		}
	case playground.SourceObjects, playground.SourceOldObjects:
		return c.objects
	}
	return c.new
}

// position places a span of an editor's text in its file.
func (c *checker) position(src playground.Source, text int, s playground.Span) Position {
	return c.textOf(src, text).locate(s.Line, s.Column, s.EndLine, s.EndColumn)
}

// report turns the evaluation into the report: every answer placed in its file.
func (c *checker) report(res *playground.Result) {
	type key struct{ doc, item int }
	objects := map[key]*playground.ObjectResult{}
	for i := range res.Objects {
		if o := &res.Objects[i]; o.Source == playground.SourceObjects {
			objects[key{o.Document, o.Item}] = o
		}
	}
	upgraded := map[key]*playground.UpgradeObject{}
	if res.Upgrade != nil {
		for i := range res.Upgrade.Objects {
			o := &res.Upgrade.Objects[i]
			upgraded[key{o.Document, o.Item}] = o
		}
	}

	// A finding's diagnostic is at its place in the CRD text, with its rule as the type.
	type at struct {
		src         playground.Source
		rule, field string
		line, col   int
	}
	affected := map[at][]string{}
	if res.Upgrade != nil {
		for _, f := range res.Upgrade.Findings {
			affected[at{f.Source, f.Rule, f.Field, f.Line, f.Column}] = f.Affected
		}
	}
	seen := map[string]bool{}
	for _, d := range res.Diagnostics {
		out := Diagnostic{Affected: affected[at{d.Source, d.Type, d.Field, d.Line, d.Column}], Position: c.position(d.Source, d.Text, d.Span),
			Severity: string(d.Severity), Type: d.Type, Field: d.Field, Message: d.Message, Fix: d.Fix, Input: inputTypes[d.Type]}
		if d.Source == playground.SourceObjects {
			k := key{d.Document, d.Item}
			o := objects[k]
			switch u := upgraded[k]; {
			case u != nil && u.Kind != "":
				out.Object = &ObjectRef{Kind: u.Kind, Namespace: u.Namespace, Name: u.Name}
				out.Check = checksSaying(u.Checks, d)
			case o != nil && o.Kind != "":
				out.Object = &ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
			}
			if d.Type == "NoKindMatch" && o != nil {
				c.noKindMatch(&out, o)
			}
		}
		if out.Type == "NotChecked" {
			c.notChecked(out, d, objects[key{d.Document, d.Item}])
		}
		// The same problem met twice at one place (a warning every request of a check carries) is said once.
		k := out.Position.String() + "\x00" + out.Severity + "\x00" + out.Field + "\x00" + out.Message + "\x00" + objectKey(out.Object)
		if seen[k] {
			continue
		}
		seen[k] = true
		c.rep.Diagnostics = append(c.rep.Diagnostics, out)
	}

	for _, r := range res.CRDs {
		c.rep.CRDs = append(c.rep.CRDs, CRD{Position: c.new.locate(r.StartLine, 0, 0, 0), Name: r.Name, Status: r.Status,
			Accepted: r.Accepted, Message: statusMessage(r.Error)})
	}
	docs := map[int]doc{} // the object text's documents by their first line
	for _, d := range splitDocs(&file{text: c.objects.text}) {
		docs[d.start] = d
	}
	for i := range res.Objects {
		o := &res.Objects[i]
		if o.Source != playground.SourceObjects {
			continue
		}
		line := o.StartLine
		if d, ok := docs[o.StartLine]; ok {
			line = d.firstLine()
			if o.Item > 0 {
				line = d.itemLine(o.Item - 1)
			}
		}
		file, line := locate(c.objects.parts, line)
		obj := Object{Position: Position{File: file, Line: line}, APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace,
			Name: o.Name, Status: o.Status, Accepted: o.Accepted}
		if !o.Accepted {
			obj.Message = statusMessage(o.Response)
		}
		if u := upgraded[key{o.Document, o.Item}]; u != nil {
			obj.CRD = u.CRD
			obj.Seeded, obj.SeedReason = u.Seeded, u.SeedReason
			for _, ch := range u.Checks {
				obj.Checks = append(obj.Checks, Check{Version: ch.Version, Op: ch.Op, Status: ch.Status,
					Message: checkMessage(ch), Warnings: nonNil(ch.Warnings)})
			}
			for _, ch := range u.Before {
				obj.Before = append(obj.Before, Check{Version: ch.Version, Op: ch.Op, Status: ch.Status,
					Message: checkMessage(ch), Warnings: nonNil(ch.Warnings)})
			}
		}
		c.rep.Objects = append(c.rep.Objects, obj)
	}

	if u := res.Upgrade; u != nil {
		up := &Upgrade{Findings: []Finding{}, CRDs: []UpgradeCRD{}, Verdict: u.Verdict, Summary: u.Summary}
		for _, r := range u.CRDs {
			uc := UpgradeCRD{Position: c.textOf(r.Source, 0).locate(r.Line, 1, 0, 0), Name: r.Name, Change: r.Change, Status: r.Status,
				Accepted: r.Accepted, Message: statusMessage(r.Error), Warnings: nonNil(r.Warnings), StoredVersions: r.StoredVersions, Objects: r.Objects}
			up.CRDs = append(up.CRDs, uc)
		}
		if len(up.CRDs) > 0 {
			up.CRD = up.CRDs[0]
		}
		for _, m := range u.Migrations {
			up.Migrations = append(up.Migrations, Migration{CRD: m.CRD, From: m.From, To: m.To, Rewritten: m.Rewritten, Failed: m.Failed,
				Status: m.Status, RetryStatus: m.Retry.Status, RetryMessage: statusMessage(m.Retry.Error)})
		}
		for _, f := range u.Findings {
			up.Findings = append(up.Findings, Finding{Position: c.position(f.Source, 0, f.Span), CRD: f.CRD, Rule: f.Rule, Severity: string(f.Severity),
				Version: f.Version, Field: f.Field, ObjectPath: f.ObjectPath, Message: f.Message, Affected: nonNil(f.Affected), Evidence: f.Evidence,
				Refuses: f.Refuses, Fix: f.Fix})
		}
		c.rep.Upgrade = up
	}
}

func objectKey(o *ObjectRef) string {
	if o == nil {
		return ""
	}
	return o.String()
}

// notChecked lists a document that is neither a CRD nor an object of one, once.
func (c *checker) notChecked(d Diagnostic, pd playground.Diagnostic, o *playground.ObjectResult) {
	nc := NotChecked{Position: Position{File: d.File, Line: d.Line}, Reason: d.Message}
	if o != nil {
		nc.APIVersion, nc.Kind, nc.Name = o.APIVersion, o.Kind, o.Name
	}
	if pd.Source != playground.SourceObjects {
		// A document of a CRD input: its kind and name are in the message; read them from the file.
		if doc, ok := c.docAt(d.File, d.Line); ok {
			var m map[string]any
			if yamlUnmarshal(doc.src, &m) == nil {
				nc.APIVersion, nc.Kind, nc.Name = str(m, "apiVersion"), str(m, "kind"), str(m, "metadata", "name")
			}
		}
	}
	c.rep.NotChecked = append(c.rep.NotChecked, nc)
}

// docAt is the document of a file that holds a line.
func (c *checker) docAt(name string, line int) (doc, bool) {
	all := append(append([]*joined{c.new, c.objects}, c.olds...), nil)
	for _, j := range all {
		if j == nil {
			continue
		}
		for _, f := range j.files {
			if f.name != name {
				continue
			}
			for _, d := range splitDocs(f) {
				if line >= d.start && line <= d.end {
					return d, true
				}
			}
		}
	}
	return doc{}, false
}

// noKindMatch tells an object of a kind no CRD given defines (a document beside the custom resources, or a
// custom resource whose CRD is not given: not checked) from one whose CRD is given but was refused or does
// not serve that version, which is an error.
func (c *checker) noKindMatch(d *Diagnostic, o *playground.ObjectResult) {
	d.Field = "" // the position is the kind's
	if o.Kind == "CustomResourceDefinition" {
		d.Input = true
		d.Message = fmt.Sprintf("a CustomResourceDefinition among the objects: give CRDs with %s (and --old)", c.newFlag)
		return
	}
	var all []crdDoc
	flags := c.newFlag
	if c.upgrade {
		flags = "--old or " + c.newFlag
	}
	for _, j := range append([]*joined{c.new}, c.olds...) {
		all = append(all, j.crds...)
	}
	unparsed := c.new.unparsed
	for _, j := range c.olds {
		unparsed += j.unparsed
	}
	switch {
	case defines(all, o.APIVersion, o.Kind) || unparsed > 0:
		if c.upgrade {
			// The objects are stored under the old CRDs.
			d.Message = fmt.Sprintf("no CRD serves kind %s in %s: the API did not accept the old CRD of --old", o.Kind, o.APIVersion)
			return
		}
		d.Message = fmt.Sprintf("no CRD serves kind %s in %s: the API did not accept its CRD in %s", o.Kind, o.APIVersion, flags)
	case definesGroup(all, o.APIVersion):
		d.Input = true
		d.Message = fmt.Sprintf("no CRD in %s defines kind %s in %s", flags, o.Kind, o.APIVersion)
	default:
		d.Type, d.Severity = "NotChecked", "info"
		d.Message = fmt.Sprintf("not checked: no CRD in %s defines %s (%s)", flags, o.Kind, o.APIVersion)
	}
}

// checksSaying names the checks of a stored object whose answer says what d says ("update v1, status
// v1"): the playground places each problem once however many checks met it.
func checksSaying(checks []playground.UpgradeCheck, d playground.Diagnostic) string {
	var names []string
	for _, c := range checks {
		hit := false
		for _, w := range c.Warnings {
			hit = hit || w == d.Message || strings.Contains(w, d.Message)
		}
		if len(c.Error) > 0 {
			var st metav1.Status
			if json.Unmarshal(c.Error, &st) == nil {
				hit = hit || (st.Message != "" && strings.Contains(d.Message, st.Message))
				if st.Details != nil {
					for _, cause := range st.Details.Causes {
						hit = hit || (cause.Field == d.Field && strings.HasPrefix(d.Message, cause.Message))
					}
				}
			}
		}
		if hit {
			names = append(names, c.Op+" "+c.Version)
		}
	}
	return strings.Join(names, ", ")
}

// checkMessage is a check's Status message. A dry-run create's names the name the API generated for it,
// which changes from run to run: its causes ("field: message"), which do not, are said instead.
func checkMessage(ch playground.UpgradeCheck) string {
	if ch.Op != "dryrun" || len(ch.Error) == 0 {
		return statusMessage(ch.Error)
	}
	var st metav1.Status
	if json.Unmarshal(ch.Error, &st) != nil || st.Details == nil || len(st.Details.Causes) == 0 {
		return statusMessage(ch.Error)
	}
	var parts []string
	for _, c := range st.Details.Causes {
		if c.Field == "" || c.Field == "<nil>" {
			parts = append(parts, c.Message)
		} else {
			parts = append(parts, c.Field+": "+c.Message)
		}
	}
	return strings.Join(parts, "; ")
}

// statusMessage is the message of an API Status body; "" for none.
func statusMessage(body json.RawMessage) string {
	if len(body) == 0 {
		return ""
	}
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return st.Message
	}
	var s string
	if json.Unmarshal(body, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(body))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newPolicyAPI is the admission chain of each engine the check makes: the admission policies and bindings of
// the inputs are applied (after the CRDs, before the objects) and run on the writes, as kube-apiserver runs them.
func newPolicyAPI(store engine.Storage) (playground.AdmissionServer, error) {
	return policies.NewAPI(store, nil)
}
