package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The CI formats: GitHub Actions workflow commands, which GitHub turns into annotations on the lines of a
// pull request's diff, and JUnit XML, which most CI systems show as a test report (kubeconform's -output
// junit is the model: a test suite per file, a test case per resource).

// writeGitHub prints one workflow command per diagnostic (::error, ::warning or ::notice, with the file,
// line and column), then the summary as a plain line.
func (r *Report) writeGitHub(w io.Writer) {
	for _, d := range r.Diagnostics {
		cmd := "notice"
		switch d.Severity {
		case "error":
			cmd = "error"
		case "warning":
			cmd = "warning"
		}
		props := []string{"file=" + ghProperty(d.File)}
		if d.Line > 0 {
			props = append(props, "line="+strconv.Itoa(d.Line), "col="+strconv.Itoa(max(d.Column, 1)))
			if d.EndLine > 0 {
				props = append(props, "endLine="+strconv.Itoa(d.EndLine))
				if d.EndColumn > 0 && d.EndLine == d.Line {
					props = append(props, "endColumn="+strconv.Itoa(d.EndColumn))
				}
			}
		}
		title := "crdplay: " + d.Type
		if d.Object != nil && d.Object.Kind != "" {
			title += " (" + d.Object.String() + ")"
		}
		props = append(props, "title="+ghProperty(title))
		msg := d.line()
		if d.Fix != "" {
			msg += "\nfix: " + d.Fix
		}
		fmt.Fprintf(w, "::%s %s::%s\n", cmd, strings.Join(props, ","), ghData(msg))
	}
	fmt.Fprintf(w, "crdplay: %s (%s, %s)\n", r.Summary, plural(r.Errors, "error"), plural(r.Warnings, "warning"))
}

// ghData escapes a workflow command's message (GitHub's toolkit: escapeData).
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty escapes a workflow command's property value (GitHub's toolkit: escapeProperty).
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// junitSuites is JUnit XML's root.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string         `xml:"name,attr"`
	ClassName string         `xml:"classname,attr"`
	Failures  []junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped  `xml:"skipped,omitempty"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// writeJUnit prints the report as JUnit XML: a test suite per file, in the order the files first appear; a
// test case per CRD and per object, failed by the error diagnostics about it, its warnings as output; a
// skipped case per document not checked; the errors about no CRD or object in a case named after the file.
func (r *Report) writeJUnit(w io.Writer) error {
	type key struct{ file, name string }
	suites := map[string]*junitSuite{}
	var order []string
	cases := map[key]int{} // a case's index in its suite
	suite := func(file string) *junitSuite {
		s := suites[file]
		if s == nil {
			s = &junitSuite{Name: file}
			suites[file] = s
			order = append(order, file)
		}
		return s
	}
	add := func(file, name string) {
		k := key{file, name}
		if _, ok := cases[k]; ok {
			return
		}
		s := suite(file)
		cases[k] = len(s.Cases)
		s.Cases = append(s.Cases, junitCase{Name: name, ClassName: file})
	}
	// get is a case, once every case is added.
	get := func(k key) *junitCase {
		i, ok := cases[k]
		if !ok {
			return nil
		}
		return &suites[k.file].Cases[i]
	}
	type at struct {
		file string
		line int
		name string
	}
	var crds []at
	for _, c := range r.CRDs {
		add(c.File, "CustomResourceDefinition "+c.Name)
		crds = append(crds, at{c.File, c.Line, "CustomResourceDefinition " + c.Name})
	}
	if r.Upgrade != nil {
		for _, c := range r.Upgrade.CRDs {
			add(c.File, "CustomResourceDefinition "+c.Name)
			crds = append(crds, at{c.File, c.Line, "CustomResourceDefinition " + c.Name})
		}
	}
	for _, o := range r.Objects {
		if o.Kind != "" {
			add(o.File, (&ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}).String())
		}
	}
	for _, n := range r.NotChecked {
		add(n.File, strings.TrimSpace(n.Kind+" "+n.Name))
	}
	// The case a diagnostic is about: a document not checked's own (admission configuration's is a warning),
	// its object's, else the CRD document it lies in, else its file's.
	caseOf := func(d Diagnostic) key {
		if d.Type == "NotChecked" {
			for _, n := range r.NotChecked {
				if n.File == d.File && n.Line == d.Line {
					return key{n.File, strings.TrimSpace(n.Kind + " " + n.Name)}
				}
			}
		}
		if d.Object != nil && d.Object.Kind != "" {
			return key{d.File, d.Object.String()}
		}
		best := at{}
		for _, c := range crds {
			if c.file == d.File && c.line <= d.Line && c.line >= best.line {
				best = c
			}
		}
		if best.name != "" {
			return key{d.File, best.name}
		}
		return key{d.File, d.File}
	}
	for _, d := range r.Diagnostics {
		if d.Severity == "error" || d.Severity == "warning" {
			k := caseOf(d)
			add(k.file, k.name)
		}
	}
	for _, n := range r.NotChecked {
		get(key{n.File, strings.TrimSpace(n.Kind + " " + n.Name)}).Skipped = &junitSkipped{Message: n.Reason}
	}
	for _, d := range r.Diagnostics {
		c := get(caseOf(d))
		if c == nil {
			continue
		}
		text := d.Position.String() + ": " + d.line()
		if d.Fix != "" {
			text += "\nfix: " + d.Fix
		}
		switch d.Severity {
		case "error":
			c.Failures = append(c.Failures, junitFailure{Message: d.line(), Type: d.Type, Text: text})
		case "warning":
			c.SystemOut += "warning: " + text + "\n"
		}
	}
	root := junitSuites{Name: "crdplay check: " + r.Summary}
	for _, f := range order {
		s := suites[f]
		for _, c := range s.Cases {
			s.Tests++
			switch {
			case len(c.Failures) > 0:
				s.Failures++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Skipped += s.Skipped
		root.Suites = append(root.Suites, *s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
