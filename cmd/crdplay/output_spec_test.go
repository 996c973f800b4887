package main

import (
	"bytes"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
)

// specReport has two files, one a CRD file whose name has a comma and a colon; errors with and without a
// position, about an object, about a CRD's document and about a whole file; a span over several lines; a
// message with a line break, quotes, < and %; a warning and a note.
func specReport() *Report {
	crds := "crds/a,b:c.yaml"
	return &Report{Summary: "breaks 1 object", Errors: 3, Warnings: 1,
		CRDs: []CRD{{Position: Position{File: crds, Line: 1}, Name: "widgets.example.com", Status: 201, Accepted: true},
			{Position: Position{File: crds, Line: 30}, Name: "gadgets.example.com", Status: 422}},
		Objects: []Object{{Position: Position{File: "objects.yaml", Line: 1}, APIVersion: "example.com/v1", Kind: "Widget", Namespace: "default", Name: "a", Status: 422}},
		Diagnostics: []Diagnostic{
			{Position: Position{File: crds, Line: 35, Column: 7}, Severity: "error", Type: "FieldValueRequired", Field: "spec.versions",
				Message: "spec.versions: Required value"},
			{Position: Position{File: crds, Line: 12, Column: 3, EndLine: 14, EndColumn: 2}, Severity: "warning", Type: "Finding:required",
				Message: "x is now required"},
			{Position: Position{File: "objects.yaml", Line: 4, Column: 3, EndLine: 4, EndColumn: 9}, Severity: "error", Type: "FieldValueInvalid",
				Field: "spec.size", Message: "spec.size: Invalid value: 80: \"a\" < b\nsecond line", Fix: "lower it",
				Object: &ObjectRef{Kind: "Widget", Namespace: "default", Name: "a"}},
			{Position: Position{File: "objects.yaml"}, Severity: "error", Type: "YAMLSyntax", Message: "yaml: line 9: bad"},
			{Position: Position{File: "objects.yaml", Line: 2}, Severity: "info", Type: "NotChecked", Message: "note, 100%"},
		}}
}

// TestGitHubCommands: the workflow commands GitHub's documentation describes ("Workflow commands for GitHub
// Actions": ::error file=,line=,col=,endLine=,endColumn=,title=::message; ::warning; ::notice), escaped as
// @actions/core escapes them (data: % CR LF; properties also : and ,); endColumn only on a one-line span, as
// the Checks API takes columns only when the start and end lines are the same; no line or column for a
// problem with the whole file.
func TestGitHubCommands(t *testing.T) {
	var b bytes.Buffer
	specReport().writeGitHub(&b)
	want := []string{
		"::error file=crds/a%2Cb%3Ac.yaml,line=35,col=7,title=crdplay%3A FieldValueRequired::spec.versions: Required value",
		"::warning file=crds/a%2Cb%3Ac.yaml,line=12,col=3,endLine=14,title=crdplay%3A Finding%3Arequired::x is now required",
		"::error file=objects.yaml,line=4,col=3,endLine=4,endColumn=9,title=crdplay%3A FieldValueInvalid (Widget default/a)::" +
			"Widget default/a: spec.size: Invalid value: 80: \"a\" < b second line%0Afix: lower it",
		"::error file=objects.yaml,title=crdplay%3A YAMLSyntax::yaml: line 9: bad",
		"::notice file=objects.yaml,line=2,col=1,title=crdplay%3A NotChecked::note, 100%25",
		"crdplay: breaks 1 object (3 errors, 1 warning)",
	}
	got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), b.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\ngot  %s\nwant %s", i+1, got[i], want[i])
		}
	}
}

// TestJUnitTree: the JUnit XML, parsed back, is the tree kubeconform's -output junit would give the same
// results: a test suite per file in the order the files first appear, a test case per CRD and object
// (classname the file), a failure per error (message the text line, type the diagnostic's type, the text
// with position and fix), an error of a CRD file without an object in the case of the CRD document it lies
// in, an error of a whole file in a case named after the file, warnings as the case's output, notes left
// out; and the counts add up.
func TestJUnitTree(t *testing.T) {
	var b bytes.Buffer
	if err := specReport().writeJUnit(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), xml.Header) {
		t.Errorf("no XML declaration:\n%s", b.String())
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	crds := "crds/a,b:c.yaml"
	want := junitSuites{XMLName: xml.Name{Local: "testsuites"}, Name: "crdplay check: breaks 1 object", Tests: 4, Failures: 3,
		Suites: []junitSuite{
			{Name: crds, Tests: 2, Failures: 1, Cases: []junitCase{
				{Name: "CustomResourceDefinition widgets.example.com", ClassName: crds,
					SystemOut: "warning: crds/a,b:c.yaml:12:3: x is now required\n"},
				{Name: "CustomResourceDefinition gadgets.example.com", ClassName: crds,
					Failures: []junitFailure{{Message: "spec.versions: Required value", Type: "FieldValueRequired",
						Text: "crds/a,b:c.yaml:35:7: spec.versions: Required value"}}},
			}},
			{Name: "objects.yaml", Tests: 2, Failures: 2, Cases: []junitCase{
				{Name: "Widget default/a", ClassName: "objects.yaml",
					Failures: []junitFailure{{Message: "Widget default/a: spec.size: Invalid value: 80: \"a\" < b second line", Type: "FieldValueInvalid",
						Text: "objects.yaml:4:3: Widget default/a: spec.size: Invalid value: 80: \"a\" < b second line\nfix: lower it"}}},
				{Name: "objects.yaml", ClassName: "objects.yaml",
					Failures: []junitFailure{{Message: "yaml: line 9: bad", Type: "YAMLSyntax", Text: "objects.yaml: yaml: line 9: bad"}}},
			}},
		}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v\nXML:\n%s", got, want, b.String())
	}
}
