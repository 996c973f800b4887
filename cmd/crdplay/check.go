package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"crdplay/playground"
)

// check is `crdplay check`.
func check(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("crdplay check", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var o struct {
		old, new, crd, output, namespace, fieldValidation, emulated string
	}
	fs.StringVar(&o.old, "old", "", "the old CRD's file: check the upgrade from it to --new, with the objects stored under it")
	fs.StringVar(&o.new, "new", "", "the CRD's file (the new CRD with --old)")
	fs.StringVar(&o.crd, "crd", "", "the same as --new")
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text (file:line:column: severity: message) or json")
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "the namespace of namespaced objects that name none")
	fs.StringVar(&o.fieldValidation, "field-validation", "Strict", "the writes' fieldValidation: Strict (kubectl's default), Warn or Ignore")
	fs.StringVar(&o.emulated, "emulated-version", "", "answer as Kubernetes 1.34 to 1.37 does, as kube-apiserver's --emulated-version (default: the newest)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: crdplay check [--old OLD.yaml] --new NEW.yaml [OBJECTS.yaml ...] [-o text|json]\n\n%s", fs.FlagUsages())
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
	newName := o.new
	switch {
	case o.new != "" && o.crd != "" && o.new != o.crd:
		return usageErr("--new and --crd are the same flag: give one")
	case newName == "":
		newName = o.crd
	}
	if newName == "" {
		return usageErr("--new (or --crd) is required")
	}
	if o.output != "text" && o.output != "json" {
		return usageErr(fmt.Sprintf("-o %q: want text or json", o.output))
	}
	switch o.fieldValidation {
	case "Strict", "Warn", "Ignore":
	default:
		return usageErr(fmt.Sprintf("--field-validation %q: want Strict, Warn or Ignore", o.fieldValidation))
	}

	c := &checker{upgrade: o.old != "", rep: &Report{Version: ReportVersion, Mode: "create"}}
	if c.upgrade {
		c.rep.Mode = "upgrade"
	}
	rep := c.rep
	write := func() int {
		var order []string
		if c.upgrade {
			order = append(order, o.old)
		}
		order = append(append(order, newName), fs.Args()...)
		rep.finish(order)
		if o.output == "json" {
			if err := rep.writeJSON(stdout); err != nil {
				fmt.Fprintf(stderr, "crdplay: %v\n", err)
				return exitInput
			}
		} else {
			rep.writeText(stdout, stderr)
		}
		return rep.ExitCode
	}

	if !c.read(o.old, newName, fs.Args()) {
		return write()
	}
	objects, parts := joinObjects(c.objects)
	c.parts, c.joined = parts, objects
	in := playground.Input{CRDs: &c.new.text, Objects: objects, Mode: playground.ModeCreate,
		FieldValidation: o.fieldValidation, Namespace: o.namespace}
	if c.upgrade {
		in.Mode, in.OldCRDs = playground.ModeUpgrade, &c.old.text
	}
	res, err := playground.NewSession(playground.Options{UserAgent: "crdplay", EmulatedVersion: o.emulated}).Evaluate(ctx, in)
	if err != nil {
		fmt.Fprintf(stderr, "crdplay: %v\n", err)
		return exitInput
	}
	c.report(res)
	return write()
}

// checker holds one check's inputs and report.
type checker struct {
	upgrade          bool
	old, new         *file
	objects          []*file
	parts            []part
	joined           string // the object text the evaluation got
	oldCRDs, newCRDs []crdDoc
	// unparsed is true when a CRD file has a document that is not YAML, which may be what defines a kind.
	unparsed bool
	rep      *Report
}

func (c *checker) problem(d Diagnostic) { c.rep.Diagnostics = append(c.rep.Diagnostics, d) }

// read reads the files and checks what the evaluation cannot: that --old and --new hold CRDs, the same one
// for an upgrade. It reports whether the check can go on.
func (c *checker) read(oldName, newName string, objectNames []string) bool {
	ok := true
	readOne := func(name string) *file {
		f, d := readFile(name)
		if d != nil {
			c.problem(*d)
			ok = false
		}
		return f
	}
	if c.upgrade {
		c.old = readOne(oldName)
	}
	c.new = readOne(newName)
	for _, name := range objectNames {
		if f := readOne(name); f != nil {
			c.objects = append(c.objects, f)
		}
	}
	if !ok {
		return false
	}
	var probs []Diagnostic
	c.newCRDs, probs = readCRDs(c.new, "--new")
	c.rep.Diagnostics = append(c.rep.Diagnostics, probs...)
	if c.upgrade {
		var oldProbs []Diagnostic
		c.oldCRDs, oldProbs = readCRDs(c.old, "--old")
		c.rep.Diagnostics = append(c.rep.Diagnostics, oldProbs...)
		probs = append(probs, oldProbs...)
	}
	if len(probs) > 0 {
		return false
	}
	one := func(f *file, crds []crdDoc, flag string) bool {
		switch {
		case len(crds) == 1:
			return true
		case len(crds) == 0 && f.unparsed > 0:
			return true // the evaluation places the parser's errors
		}
		msg := fmt.Sprintf("%s holds no CustomResourceDefinition", flag)
		pos := Position{File: f.name}
		if len(crds) > 1 {
			msg = fmt.Sprintf("%s holds %d CustomResourceDefinitions; an upgrade check takes one old and one new CRD", flag, len(crds))
			pos = crds[1].at("kind")
		}
		c.problem(Diagnostic{Position: pos, Severity: "error", Type: "CRDMismatch", Message: msg, Input: true})
		return false
	}
	if !c.upgrade {
		if len(c.newCRDs) == 0 && c.new.unparsed == 0 {
			c.problem(Diagnostic{Position: Position{File: c.new.name}, Severity: "error", Type: "CRDMismatch", Input: true,
				Message: "--new holds no CustomResourceDefinition"})
			return false
		}
		return true
	}
	oldOK, newOK := one(c.old, c.oldCRDs, "--old"), one(c.new, c.newCRDs, "--new")
	if !oldOK || !newOK || len(c.oldCRDs) != 1 || len(c.newCRDs) != 1 {
		return oldOK && newOK
	}
	if o, n := c.oldCRDs[0], c.newCRDs[0]; o.name != n.name {
		c.problem(Diagnostic{Position: n.at("metadata", "name"), Severity: "error", Type: "CRDMismatch", Input: true,
			Message: fmt.Sprintf("the new CRD is %q but the old one (%s) is %q: an upgrade check compares two versions of one CRD",
				n.name, o.at("metadata", "name"), o.name)})
		return false
	}
	return true
}

// inputTypes are the playground's diagnostic types for input that cannot be sent at all.
var inputTypes = map[string]bool{"YAMLSyntax": true, "NotAnObject": true, "MissingKind": true, "TooLarge": true,
	"NoCRD": true, "TooManyCRDs": true}

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

	for _, d := range res.Diagnostics {
		if d.Type == "YAMLSyntax" && (d.Source == playground.SourceCRDs || d.Source == playground.SourceOldCRDs) {
			c.unparsed = true
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
	for _, d := range res.Diagnostics {
		out := Diagnostic{Affected: affected[at{d.Source, d.Type, d.Field, d.Line, d.Column}], Position: c.position(d.Source, d.Span), Severity: string(d.Severity), Type: d.Type, Field: d.Field,
			Message: d.Message, Input: inputTypes[d.Type]}
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
		c.rep.Diagnostics = append(c.rep.Diagnostics, out)
	}

	for _, r := range res.CRDs {
		c.rep.CRDs = append(c.rep.CRDs, CRD{Position: Position{File: c.new.name, Line: r.StartLine}, Name: r.Name, Status: r.Status,
			Accepted: r.Accepted, Message: statusMessage(r.Error)})
	}
	docs := map[int]doc{} // the object text's documents by their first line
	for _, d := range splitDocs(&file{text: c.joined}) {
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
		file, line := locate(c.parts, line)
		obj := Object{Position: Position{File: file, Line: line}, APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace,
			Name: o.Name, Status: o.Status, Accepted: o.Accepted}
		if !o.Accepted {
			obj.Message = statusMessage(o.Response)
		}
		if u := upgraded[key{o.Document, o.Item}]; u != nil {
			obj.Seeded, obj.SeedReason = u.Seeded, u.SeedReason
			for _, ch := range u.Checks {
				obj.Checks = append(obj.Checks, Check{Version: ch.Version, Op: ch.Op, Status: ch.Status,
					Message: statusMessage(ch.Error), Warnings: nonNil(ch.Warnings)})
			}
		}
		c.rep.Objects = append(c.rep.Objects, obj)
	}

	if u := res.Upgrade; u != nil {
		up := &Upgrade{Findings: []Finding{}}
		up.CRD.Position = Position{File: c.new.name, Line: 1}
		if len(c.newCRDs) == 1 {
			up.CRD.Position = Position{File: c.new.name, Line: c.newCRDs[0].firstLine(), Column: 1}
		}
		up.CRD.Name, up.CRD.Status, up.CRD.Accepted = u.CRD.Name, u.CRD.Status, u.CRD.Accepted
		up.CRD.Message, up.CRD.Warnings = statusMessage(u.CRD.Error), nonNil(u.CRD.Warnings)
		for _, f := range u.Findings {
			up.Findings = append(up.Findings, Finding{Position: c.position(f.Source, f.Span), Rule: f.Rule, Severity: string(f.Severity),
				Version: f.Version, Field: f.Field, ObjectPath: f.ObjectPath, Message: f.Message, Affected: nonNil(f.Affected), Evidence: f.Evidence})
		}
		c.rep.Upgrade = up
	}
}

// noKindMatch tells an object of a kind no CRD defines (an input problem) from one whose CRD is defined
// but was refused or did not parse, which the CRD's own diagnostics explain.
func (c *checker) noKindMatch(d *Diagnostic, o *playground.ObjectResult) {
	d.Field = "" // the position is the kind's
	if o.Kind == "CustomResourceDefinition" {
		d.Input = true
		d.Message = "a CustomResourceDefinition among the objects: give CRDs with --new (and --old)"
		return
	}
	files := c.new.name
	if c.upgrade {
		files = c.old.name + " or " + c.new.name
	}
	if defines(c.newCRDs, o.APIVersion, o.Kind) || defines(c.oldCRDs, o.APIVersion, o.Kind) || c.unparsed {
		if c.upgrade {
			// The objects are stored under the old CRD.
			d.Message = fmt.Sprintf("no CRD serves kind %s in %s: the API did not accept the old CRD in %s", o.Kind, o.APIVersion, c.old.name)
			return
		}
		d.Message = fmt.Sprintf("no CRD serves kind %s in %s: the API did not accept its CRD in %s", o.Kind, o.APIVersion, files)
		return
	}
	d.Input = true
	d.Message = fmt.Sprintf("no CRD in %s defines kind %s in %s", files, o.Kind, o.APIVersion)
}

// position places a span of an editor's text in its file.
func (c *checker) position(src playground.Source, s playground.Span) Position {
	p := Position{Line: s.Line, Column: s.Column, EndLine: s.EndLine, EndColumn: s.EndColumn}
	switch src {
	case playground.SourceOldCRDs:
		if c.old != nil {
			p.File = c.old.name
		}
	case playground.SourceObjects, playground.SourceOldObjects:
		var endFile string
		p.File, p.Line = locate(c.parts, s.Line)
		if endFile, p.EndLine = locate(c.parts, s.EndLine); endFile != p.File {
			p.EndLine, p.EndColumn = 0, 0
		}
	default:
		p.File = c.new.name
	}
	return p
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
			var st struct {
				Message string `json:"message"`
				Details *struct {
					Causes []struct {
						Field   string `json:"field"`
						Message string `json:"message"`
					} `json:"causes"`
				} `json:"details"`
			}
			if json.Unmarshal(c.Error, &st) == nil {
				hit = hit || strings.Contains(st.Message, d.Message)
				if st.Details != nil {
					for _, cause := range st.Details.Causes {
						hit = hit || (cause.Field == d.Field && cause.Message == d.Message)
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
