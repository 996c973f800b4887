package playground

import (
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// These tests hold the diagnostics of text the API cannot decode, and of answers with several causes, to
// what go-yaml and the API say: each problem once, at the line and column of the mistake, in words without
// hex or Go types, with the API's whole message kept in Detail and its follow-on causes in Notes.

// errorsOf returns the diagnostics of an editor with severity error.
func errorsOf(res *Result, src Source) []Diagnostic {
	var out []Diagnostic
	for _, d := range res.Diagnostics {
		if d.Source == src && d.Severity == SeverityError {
			out = append(out, d)
		}
	}
	return out
}

// lineStarting is the 1-based line of the first line of text that starts with prefix.
func lineStarting(t *testing.T, text, prefix string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line %q in\n%s", prefix, text)
	return 0
}

// unrecognized is the API server's answer to a body it cannot decode at all (apiserver's handlers:
// transformDecodeError and summarizeData): the decoder's error, then the body's first 30 bytes in hex.
func unrecognized(kind, decodeErr string, body []byte) string {
	summary := hex.EncodeToString(body)
	if len(body) > 30 {
		summary = hex.EncodeToString(body[:30]) + " ..."
	}
	return "the object provided is unrecognized (must be of type " + kind + "): " + decodeErr + " (" + summary + ")"
}

func TestYAMLErrorAtItsLine(t *testing.T) {
	crontab := readText(t, "basic-crontab", "crd.yaml")
	// singular indented by 3 spaces instead of 4: go-yaml's parser breaks the names mapping there.
	badCRD := strings.Replace(crontab, "\n    singular: crontab\n", "\n   singular: crontab\n", 1)
	if badCRD == crontab {
		t.Fatal("basic-crontab's CRD has no singular line to break")
	}
	badObject := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: a\n  labels:\n    app: x\n   tier: y\nspec:\n  image: i\n"
	taggedObject := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: a\nspec:\n  replicas: !!int three\n"
	for _, tc := range []struct {
		name      string
		crds      string
		objects   string
		src       Source
		line, col int    // where the one error is
		message   string // its message
		field     string
	}{
		{
			// go-yaml v3 names the line where the spec mapping began (6); the API's go-yaml v2 names the
			// line of the token that broke it, counting from 0 ("line 9"): the mistake is on line 10.
			name: "a CRD's key indented by one space less", crds: badCRD, src: SourceCRDs,
			line: lineStarting(t, badCRD, "   singular:"), col: 4,
			message: "yaml: line " + strconv.Itoa(lineStarting(t, badCRD, "   singular:")) + ": did not find expected key",
		},
		{
			name: "an object's key indented by one space less, in the second document", crds: crontab,
			objects: "# first\n---\n" + badObject, src: SourceObjects,
			line: 2 + lineStarting(t, badObject, "   tier:"), col: 4,
			message: "yaml: line " + strconv.Itoa(2+lineStarting(t, badObject, "   tier:")) + ": did not find expected key",
		},
		{
			// Its scanner's errors name the place where what it scans began (the key without a colon).
			name: "a key without a colon", crds: crontab,
			objects: "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: a\nspec\n  image: i\n", src: SourceObjects,
			line: 5, col: 1, message: "yaml: line 5: could not find expected ':'",
		},
		{
			// YAML that go-yaml v3 reads but v2 (kubectl's and the API's decoder) refuses: at the value.
			name: "a value that its tag does not fit", crds: crontab, objects: taggedObject, src: SourceObjects,
			line: 6, col: 3, field: "spec.replicas", message: yamlToJSONError(t, taggedObject),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crds := tc.crds
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &crds, Objects: tc.objects})
			errs := errorsOf(res, tc.src)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %+v", len(errs), errs)
			}
			d := errs[0]
			if d.Line != tc.line || d.Column != tc.col || d.Message != tc.message || d.Field != tc.field {
				t.Errorf("%q (field %q) at %d:%d, want %q (field %q) at %d:%d", d.Message, d.Field, d.Line, d.Column, tc.message, tc.field, tc.line, tc.col)
			}
			if d.Type != "YAMLSyntax" {
				t.Errorf("type %q, want YAMLSyntax", d.Type)
			}
		})
	}

	// The API's own words for the CRD that is not YAML stay with the error, whole: its line counted in the
	// document from 0, and the body's first bytes in hex.
	crds := badCRD
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crds})
	d := errorsOf(res, SourceCRDs)[0]
	want := unrecognized("CustomResourceDefinition", yamlToJSONError(t, badCRD), []byte(badCRD))
	if d.Detail != want {
		t.Errorf("detail %q, want the API's message %q", d.Detail, want)
	}
	var st statusBody
	if res.CRDs[0].Status != 400 || json.Unmarshal(res.CRDs[0].Error, &st) != nil || st.Message != want {
		t.Errorf("the CRD's answer: %d %s, want the API's 400 with %q", res.CRDs[0].Status, res.CRDs[0].Error, want)
	}
}

// yamlToJSONError is the error of the API's YAML decoder (sigs.k8s.io/yaml.YAMLToJSON) for text.
func yamlToJSONError(t *testing.T, text string) string {
	t.Helper()
	_, err := yaml.YAMLToJSON([]byte(text))
	if err == nil {
		t.Fatalf("go-yaml v2 reads\n%s", text)
	}
	return err.Error()
}

func TestDuplicateKeyAtItsKey(t *testing.T) {
	// The oracle's request with a key given twice, as the second document of the CRD text (the first is the
	// case's own CRD), completed into a CRD the API creates.
	first := readText(t, "../oracle-api/crd-server-side-apply", "crd.yaml")
	body := stepBody(t, "../oracle-api/crd-server-side-apply", "13-request-duplicate-key.yaml")
	rec := readRecording(t, "../oracle-api/crd-server-side-apply", "13-request-duplicate-key")
	warnings := warningTexts(t, rec.Warnings)
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "line 7: ") {
		t.Fatalf("the recording's warnings: %q", warnings)
	}
	second := body + "spec:\n  group: ssa.example.com\n  scope: Namespaced\n  names: {plural: gizmos, singular: gizmo, kind: Gizmo}\n" +
		"  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object}\n"
	crds := first + "---\n" + second
	start := strings.Count(first, "\n") + 2 // the second document's first line
	res := evaluate(t, NewSession(Options{}), Input{CRDs: &crds})
	if len(res.CRDs) != 2 || !res.CRDs[1].Accepted || strings.Join(res.CRDs[1].Warnings, "\n") != warnings[0] {
		t.Fatalf("the second CRD: %+v, want it accepted with the oracle's warning %q", res.CRDs[1], warnings[0])
	}
	line := start + 7 - 1
	var got []Diagnostic
	for _, d := range res.Diagnostics {
		if d.Type == "Warning" {
			got = append(got, d)
		}
	}
	want := Diagnostic{Source: SourceCRDs, Document: 1, Field: "metadata.labels.owner", Type: "Warning", Severity: SeverityWarning,
		Message: "line " + strconv.Itoa(line) + `: key "owner" already set in map`, Detail: warnings[0],
		Span: Span{Line: line, Column: 5, EndLine: line, EndColumn: 18}, Exact: true}
	if len(got) != 1 || !sameDiagnostic(got[0], want) {
		t.Errorf("warnings %+v, want %+v", got, want)
	}

	// With fieldValidation=Strict the API refuses the object, one key per line of its message: each is an
	// error at its second key.
	crontab := readText(t, "basic-crontab", "crd.yaml")
	object := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: a\nspec:\n  image: i\n  image: j\n  replicas: 1\n  replicas: 2\n"
	res = evaluate(t, NewSession(Options{}), Input{CRDs: &crontab, Objects: "# first\n---\n" + object, FieldValidation: "Strict"})
	errs := errorsOf(res, SourceObjects)
	if res.Objects[0].Status != 400 || len(errs) != 2 {
		t.Fatalf("status %d, errors %+v: want the API's 400 as two errors", res.Objects[0].Status, errs)
	}
	for i, w := range []struct {
		field string
		line  int
		key   string
	}{{"spec.image", 9, "image"}, {"spec.replicas", 11, "replicas"}} {
		d := errs[i]
		msg := "line " + strconv.Itoa(w.line) + ": key \"" + w.key + "\" already set in map"
		if d.Field != w.field || d.Line != w.line || d.Column != 3 || d.Message != msg || !strings.Contains(d.Detail, "strict decoding error: yaml: unmarshal errors:\n  line 7: ") {
			t.Errorf("error %d: %+v, want %s at %d:3 saying %q with the API's message", i, d, w.field, w.line, msg)
		}
	}
}

// stepBody is the bodyText of a request step of an oracle case.
func stepBody(t *testing.T, caseName, file string) string {
	t.Helper()
	var step struct {
		BodyText string `json:"bodyText"`
	}
	if err := yaml.Unmarshal([]byte(readText(t, caseName, file)), &step); err != nil || step.BodyText == "" {
		t.Fatalf("%s/%s: %v", caseName, file, err)
	}
	return step.BodyText
}

func sameDiagnostic(a, b Diagnostic) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestDecodingErrorAtItsValue(t *testing.T) {
	crontab := readText(t, "basic-crontab", "crd.yaml")
	served := strings.Replace(crontab, "served: true", `served: "yes"`, 1)
	for _, tc := range []struct {
		name, crds     string
		line, col      int
		field, message string
		detailPrefix   string
	}{
		{
			name: "a string for a boolean", crds: served, line: lineStarting(t, served, `      served: "yes"`), col: 7,
			field: "spec.versions[0].served", message: "must be a boolean (true or false), not a string",
			detailPrefix: `CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool`,
		},
		{
			name: "a list for the document", crds: "- a\n- b\n", line: 1, col: 1,
			message:      "a Kubernetes object is a mapping with apiVersion, kind and metadata; this document is a list",
			detailPrefix: "the object provided is unrecognized (must be of type CustomResourceDefinition): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crds := tc.crds
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &crds})
			errs := errorsOf(res, SourceCRDs)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %+v", len(errs), errs)
			}
			d := errs[0]
			if d.Line != tc.line || d.Column != tc.col || d.Field != tc.field || d.Message != tc.message || !strings.HasPrefix(d.Detail, tc.detailPrefix) {
				t.Errorf("%q (field %q, detail %q) at %d:%d, want %q (field %q) at %d:%d", d.Message, d.Field, d.Detail, d.Line, d.Column, tc.message, tc.field, tc.line, tc.col)
			}
		})
	}
}

// blockingTypesUpstream are the cause types after which the API skips the CEL rules and says so instead
// (apiextensions-apiserver's customresource strategy).
var blockingTypesUpstream = []string{"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany", "FieldValueTypeInvalid"}

func TestFollowOnsAreNotes(t *testing.T) {
	type cause struct {
		Field   string `json:"field"`
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	// The oracle's answers with the rules not checked: each other cause is an error, and that one a note of
	// one of the causes of a type that blocks the rules.
	for _, tc := range []struct{ caseName, crd, step string }{
		{"cel-basic", "crd.yaml", "03-create-missing-required"},
		{"validation-ratcheting", "02-update-crd-tighten.yaml", "09-create-new-invalid"},
		{"cel-cost-too-high", "01-create-crd-bounded.yaml", "04-create-too-long"},
	} {
		t.Run(tc.caseName, func(t *testing.T) {
			crd, _ := stepText(t, tc.caseName, tc.crd)
			object, _ := stepText(t, tc.caseName, tc.step+".yaml")
			rec := readRecording(t, tc.caseName, tc.step)
			var body struct {
				Details struct {
					Causes []cause `json:"causes"`
				} `json:"details"`
			}
			if err := json.Unmarshal(rec.Body, &body); err != nil {
				t.Fatal(err)
			}
			var want []string
			var note *cause
			blocking := map[string]bool{}
			for _, c := range body.Details.Causes {
				if strings.Contains(c.Message, "some validation rules were not checked") {
					note = &c
					continue
				}
				want = append(want, c.Field+": "+c.Message)
				if slices.Contains(blockingTypesUpstream, c.Reason) {
					blocking[c.Field] = true
				}
			}
			if note == nil || len(blocking) == 0 {
				t.Fatalf("the recording has no note of rules not checked, or no cause blocking them: %s", rec.Body)
			}
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: object})
			if normalized(t, res.Objects[0].Response) != normalized(t, rec.Body) {
				t.Fatalf("the object's answer is not the API's Status:\n%s", res.Objects[0].Response)
			}
			var got []string
			notes := 0
			for _, d := range errorsOf(res, SourceObjects) {
				got = append(got, d.Field+": "+d.Message)
				if len(d.Notes) == 0 {
					continue
				}
				notes++
				if n := d.Notes[0]; !blocking[d.Field] || len(d.Notes) != 1 || n.Field != note.Field || n.Type != note.Reason || n.Message != note.Message {
					t.Errorf("%s (%s): notes %s, want the recording's %+v on a cause that blocks the rules", d.Field, d.Type, jsonOf(d.Notes), *note)
				}
			}
			if notes != 1 {
				t.Errorf("%d errors with notes, want 1", notes)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("errors:\n%s\nwant the recording's causes but the note:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}

	// A value of the wrong type at the scale subresource's specReplicasPath: the schema's type error, with
	// the scale subresource's reading of the same value as its note, and with a rule the rules not checked.
	scale := readText(t, "scale-subresource", "crd.yaml")
	withRule := strings.Replace(scale, "            spec:\n              type: object\n", "            spec:\n              type: object\n              x-kubernetes-validations:\n              - rule: self.replicas <= 10\n", 1)
	if withRule == scale {
		t.Fatal("no spec schema in scale-subresource's CRD")
	}
	for _, tc := range []struct {
		name, crd string
		notes     []string // the notes' fields and a part of their messages
	}{
		{"scale-subresource", scale, []string{".spec.replicas: .spec.replicas accessor error: three is of the type string, expected int64"}},
		{"scale-subresource with a rule", withRule, []string{
			".spec.replicas: .spec.replicas accessor error: three is of the type string, expected int64",
			"<nil>: some validation rules were not checked because the object was invalid",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crd := tc.crd
			object := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: a\nspec:\n  image: i\n  replicas: three\n"
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: object})
			errs := errorsOf(res, SourceObjects)
			if len(errs) != 1 {
				t.Fatalf("%d errors, want 1: %+v", len(errs), errs)
			}
			d := errs[0]
			if d.Field != "spec.replicas" || d.Type != "FieldValueTypeInvalid" || d.Line != 7 || d.Column != 3 || len(d.Notes) != len(tc.notes) {
				t.Fatalf("got %+v, want the type error at spec.replicas (7:3) with %d notes", d, len(tc.notes))
			}
			for i, n := range tc.notes {
				field, msg, _ := strings.Cut(n, ": ")
				if d.Notes[i].Field != field || !strings.Contains(d.Notes[i].Message, msg) {
					t.Errorf("note %d: %+v, want %q", i, d.Notes[i], n)
				}
			}
		})
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestStatusModeWarningOnce(t *testing.T) {
	// Without an old object the object is created, then its /status PUT: both answers warn about the same
	// field of the same text.
	crd := readText(t, "status-subresource", "crd.yaml")
	object := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: a\nspec:\n  image: i\n  unknownField: x\n"
	for _, mode := range []Mode{ModeCreate, ModeStatus} {
		t.Run(string(mode), func(t *testing.T) {
			res := evaluate(t, NewSession(Options{}), Input{CRDs: &crd, Objects: object, Mode: mode})
			var got []Diagnostic
			for _, d := range res.Diagnostics {
				if d.Source == SourceObjects {
					got = append(got, d)
				}
			}
			if len(got) != 1 || got[0].Field != "spec.unknownField" || got[0].Line != 7 || res.Objects[0].Operation != string(mode) ||
				strings.Join(res.Objects[0].Warnings, "\n") != `unknown field "spec.unknownField"` {
				t.Errorf("diagnostics %+v, operation %q, warnings %q: want the unknown field's warning once", got, res.Objects[0].Operation, res.Objects[0].Warnings)
			}
		})
	}
}
