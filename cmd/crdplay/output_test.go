package main

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

// TestGitHubEscaping: workflow commands escape their data (%, CR, LF) and property values (also : and ,), as
// GitHub's toolkit does (escapeData, escapeProperty), so that a message with a line break or a file name with
// a comma stays one annotation at the right place.
func TestGitHubEscaping(t *testing.T) {
	r := &Report{Summary: "breaks 1 stored object", Errors: 1, Warnings: 1, Diagnostics: []Diagnostic{
		{Position: Position{File: "a,b:c.yaml", Line: 3, Column: 5, EndLine: 3, EndColumn: 9}, Severity: "error", Type: "FieldValueInvalid",
			Field: "spec.x", Message: "spec.x: 100% wrong\nsecond line", Fix: "do this"},
		{Position: Position{File: "whole.yaml"}, Severity: "warning", Type: "Warning", Message: "w"},
	}}
	var b bytes.Buffer
	r.writeGitHub(&b)
	want := "::error file=a%2Cb%3Ac.yaml,line=3,col=5,endLine=3,endColumn=9,title=crdplay%3A FieldValueInvalid::spec.x: 100%25 wrong second line%0Afix: do this\n" +
		"::warning file=whole.yaml,title=crdplay%3A Warning::w\n" +
		"crdplay: breaks 1 stored object (1 error, 1 warning)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestJUnit: a suite per file, a case per CRD and object, errors as failures of their object's case (or of
// the CRD document they lie in), documents not checked as skipped; the counts add up and the XML parses.
func TestJUnit(t *testing.T) {
	r := &Report{Summary: "s", CRDs: []CRD{{Position: Position{File: "crd.yaml", Line: 1}, Name: "widgets.example.com"}},
		Objects: []Object{{Position: Position{File: "o.yaml", Line: 1}, Kind: "Widget", Namespace: "default", Name: "a"},
			{Position: Position{File: "o.yaml", Line: 9}, Kind: "Widget", Namespace: "default", Name: "b"}},
		NotChecked: []NotChecked{{Position: Position{File: "o.yaml", Line: 20}, Kind: "Deployment", Name: "d", Reason: "not checked"}},
		Diagnostics: []Diagnostic{
			{Position: Position{File: "crd.yaml", Line: 12, Column: 3}, Severity: "error", Type: "maximum", Message: "lowered <&>"},
			{Position: Position{File: "o.yaml", Line: 3, Column: 3}, Severity: "error", Type: "FieldValueInvalid", Message: "bad",
				Object: &ObjectRef{Kind: "Widget", Namespace: "default", Name: "a"}},
			{Position: Position{File: "o.yaml", Line: 10, Column: 3}, Severity: "warning", Type: "Warning", Message: "careful",
				Object: &ObjectRef{Kind: "Widget", Namespace: "default", Name: "b"}},
			{Position: Position{File: "missing.yaml"}, Severity: "error", Type: "UnreadableFile", Message: "cannot read the file"},
		}}
	var b bytes.Buffer
	if err := r.writeJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got.Tests != 5 || got.Failures != 3 || got.Skipped != 1 || len(got.Suites) != 3 {
		t.Fatalf("tests %d failures %d skipped %d suites %d, want 5, 3, 1, 3:\n%s", got.Tests, got.Failures, got.Skipped, len(got.Suites), b.String())
	}
	names := map[string]junitCase{}
	for _, s := range got.Suites {
		for _, c := range s.Cases {
			names[s.Name+"|"+c.Name] = c
		}
	}
	if c := names["crd.yaml|CustomResourceDefinition widgets.example.com"]; len(c.Failures) != 1 || c.Failures[0].Message != "lowered <&>" {
		t.Errorf("the CRD's case: %+v", c)
	}
	if c := names["o.yaml|Widget default/b"]; len(c.Failures) != 0 || !strings.Contains(c.SystemOut, "careful") {
		t.Errorf("the warned object's case: %+v", c)
	}
	if c := names["o.yaml|Deployment d"]; c.Skipped == nil {
		t.Errorf("the document not checked: %+v", c)
	}
	if c := names["missing.yaml|missing.yaml"]; len(c.Failures) != 1 {
		t.Errorf("the file's own case: %+v", c)
	}
}
