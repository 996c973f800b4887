package playground

import (
	"regexp"
	"strconv"
	"strings"

	"crdplay/playground/internal/yamlpos"
)

// locator finds an upstream field path in a document.
type locator func(path string) yamlpos.Result

func docLocator(d *yamlpos.Doc) locator { return d.Locate }

var (
	// unknownFieldRe finds the fields of a strict decoding error or warning ("unknown field \"spec.a\"",
	// "duplicate field \"spec.b\"").
	unknownFieldRe = regexp.MustCompile(`(unknown|duplicate) field "((?:[^"\\]|\\.)*)"`)
	// yamlLineRe finds the line of a YAML error in a message about the document the API was sent
	// ("yaml: line 5: ...", "line 5: key \"a\" already set in map").
	yamlLineRe = regexp.MustCompile(`\bline (\d+): `)
	// fieldPrefixRe finds the field a warning starts with, in field.Error's "<path>: <detail>" form.
	fieldPrefixRe = regexp.MustCompile(`^([A-Za-z0-9_$.\-/\[\]<>]+): `)
)

// statusDiagnostics places a failed response: one diagnostic per cause of its Status, at the cause's field,
// with the causes that follow from another (foldFollowOns) as its notes; a Status without causes at the
// fields or lines its message names (decodingDiagnostics), else at the document's start.
func statusDiagnostics(src Source, d *yamlpos.Doc, r *response, sev Severity, loc locator) []Diagnostic {
	st, ok := parseStatus(r.body)
	if !ok {
		msg := strings.TrimSpace(string(r.body))
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		return []Diagnostic{{Source: src, Document: d.Index, Type: "HTTP" + strconv.Itoa(r.status), Message: msg, Severity: sev, Span: d.Start(), Exact: true}}
	}
	var out []Diagnostic
	if st.Details != nil && len(st.Details.Causes) > 0 {
		for _, c := range st.Details.Causes {
			p := loc(c.Field)
			out = append(out, Diagnostic{Source: src, Document: d.Index, Field: c.Field, Type: c.Type, Message: c.Message, Severity: sev, Span: p.Span, Exact: p.Exact})
		}
		return foldFollowOns(out)
	}
	for _, p := range decodingDiagnostics(d, st.Message, loc) {
		dg := Diagnostic{Source: src, Document: d.Index, Field: p.field, Type: st.Reason, Message: p.message, Severity: sev, Span: p.at.Span, Exact: p.at.Exact}
		if dg.Message != st.Message {
			dg.Detail = st.Message
		}
		out = append(out, dg)
	}
	if len(out) > 0 {
		return out
	}
	sp, exact := d.Start(), true
	if n, ok := apiLine(d, st.Message); ok {
		sp = d.Text().ContentSpan(n)
	}
	if d.Err != nil {
		sp = d.Err.Span
	}
	return append(out, Diagnostic{Source: src, Document: d.Index, Type: st.Reason, Message: st.Message, Severity: sev, Span: sp, Exact: exact})
}

// apiLine is the line of the text that a message of the API names by its line in the document it was sent
// ("line 5: ..."), when that is a line of the document: the API numbers the lines of the document, the
// editor those of the whole text.
func apiLine(d *yamlpos.Doc, msg string) (int, bool) {
	m := yamlLineRe.FindStringSubmatch(msg)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 || d.StartLine+n-1 > d.EndLine {
		return 0, false
	}
	return d.StartLine + n - 1, true
}

// placedProblem is one problem that a message of the API names, in the words a person reads, where it is.
type placedProblem struct {
	field, message string
	at             yamlpos.Result
}

var (
	// unrecognizedRe is the API's answer to a body it cannot decode at all (apiserver's transformDecodeError):
	// the decoder's error, then the first 30 bytes of the body, in hex unless they start with "{".
	unrecognizedRe = regexp.MustCompile(`(?s)^the object provided is unrecognized \(must be of type [^)]*\): (.*) \((?:<empty>|[0-9a-f]+(?: \.\.\.)?|\{.*)\)$`)
	// cannotHandleRe is its answer to a body of a known kind that does not decode into its type.
	cannotHandleRe = regexp.MustCompile(`(?s)^\S+ in version "[^"]*" cannot be handled as a \S+: (.*)$`)
	// dupKeyRe finds each key given twice in a mapping, in go-yaml v2's unmarshal errors ("line 8: key
	// \"image\" already set in map"; the API's strict decoding and warnings): its line is 1-based.
	dupKeyRe = regexp.MustCompile(`\bline (\d+): key ("(?:[^"\\]|\\.)*") already set in map`)
	// jsonTypeRe is encoding/json's error for a value of the wrong kind for a Go type's field: the JSON kind
	// (with the number, for one that does not fit), the struct, the field's path and the Go type.
	jsonTypeRe = regexp.MustCompile(`^json: cannot unmarshal (\w+)(?: (\S+))? into Go struct field \w+\.(\S+) of type (\S+)$`)
	// notObjectRe is the decoder's error for a document that is not a mapping: it reads apiVersion and kind
	// into a struct first, which the message prints.
	notObjectRe = regexp.MustCompile(`json: cannot unmarshal (\w+) into Go value of type struct \{ APIVersion`)
	// yamlTagRe is go-yaml v2's error for a value whose explicit tag does not fit it ("!!int x").
	yamlTagRe = regexp.MustCompile("^yaml: cannot decode !!\\w+ `(.*)` as a (!!\\w+)$")
)

// decodingDiagnostics reads the message of a Status without causes about a document the API could not decode
// and returns the problems it names, each where it is, in the words a person reads: each key given twice at
// its second key, with its line as the editor counts it; each unknown or duplicate field of a strict decoding
// at the field; the API's YAML error at its line as the editor counts it (go-yaml's parser counts from 0);
// a value of the wrong type at the value, said in YAML's terms rather than Go's; a document that is not a
// mapping said so. The hex of the body that the API appends to an error it cannot place is left out. Nil when
// the message is of none of these forms.
func decodingDiagnostics(d *yamlpos.Doc, msg string, loc locator) []placedProblem {
	var out []placedProblem
	for _, m := range dupKeyRe.FindAllStringSubmatch(msg, -1) {
		out = append(out, duplicateKey(d, m))
	}
	// A strict decoding error names its fields in the message: one diagnostic per field, with upstream's
	// words for it.
	for _, m := range unknownFieldRe.FindAllStringSubmatch(msg, -1) {
		field, err := strconv.Unquote(`"` + m[2] + `"`)
		if err != nil {
			field = m[2]
		}
		out = append(out, placedProblem{field: field, message: m[0], at: loc(field)})
	}
	if len(out) > 0 {
		return out
	}
	inner := msg
	if m := unrecognizedRe.FindStringSubmatch(msg); m != nil {
		inner = m[1]
	} else if m := cannotHandleRe.FindStringSubmatch(msg); m != nil {
		inner = m[1]
	}
	inner = strings.TrimPrefix(inner, "error converting YAML to JSON: ")
	start := yamlpos.Result{Span: d.Start(), Exact: true}
	if m := jsonTypeRe.FindStringSubmatch(inner); m != nil {
		kind := m[1]
		at, field, ok := d.DecodedField(strings.Split(m[3], "."), kind)
		if !ok {
			field, at = m[3], loc(m[3])
		}
		got := jsonKindWords[kind]
		if m[2] != "" {
			got = kind + " " + m[2]
		}
		return []placedProblem{{field: field, message: "must be " + goTypeWords(m[4]) + ", not " + got, at: at}}
	}
	if m := notObjectRe.FindStringSubmatch(inner); m != nil {
		return []placedProblem{{message: "a Kubernetes object is a mapping with apiVersion, kind and metadata; this document is " + jsonKindWords[m[1]], at: start}}
	}
	if m := yamlTagRe.FindStringSubmatch(inner); m != nil {
		if at, segs, ok := d.Tagged(m[2], m[1]); ok {
			return []placedProblem{{field: yamlpos.FormatSegs(segs), message: inner, at: at}}
		}
	}
	if n, problem, ok := yamlpos.MessageLine(inner); ok && n >= 1 && d.StartLine+n-1 <= d.EndLine {
		line := d.StartLine + n - 1
		return []placedProblem{{message: "yaml: line " + strconv.Itoa(line) + ": " + problem, at: yamlpos.Result{Span: d.Text().ContentSpan(line), Exact: true}}}
	}
	if inner != msg {
		at := start
		if d.Err != nil {
			at.Span = d.Err.Span
		}
		return []placedProblem{{message: inner, at: at}}
	}
	return nil
}

// duplicateKey places a key given twice (a dupKeyRe match) at its second key, and says its line as the
// editor counts it; at the line when the text has no such key there.
func duplicateKey(d *yamlpos.Doc, m []string) placedProblem {
	n, _ := strconv.Atoi(m[1])
	key, err := strconv.Unquote(m[2])
	if err != nil {
		key = m[2]
	}
	line := d.StartLine + n - 1
	if n < 1 || line > d.EndLine {
		return placedProblem{message: m[0], at: yamlpos.Result{Span: d.Start(), Exact: true}}
	}
	p := placedProblem{message: "line " + strconv.Itoa(line) + ": key " + m[2] + " already set in map", at: yamlpos.Result{Span: d.Text().ContentSpan(line), Exact: true}}
	if at, segs, ok := d.KeyAt(line, key); ok {
		p.at, p.field = at, yamlpos.FormatSegs(segs)
	}
	return p
}

// jsonKindWords name encoding/json's kinds of values as YAML's are called.
var jsonKindWords = map[string]string{
	"string": "a string", "number": "a number", "bool": "a boolean", "array": "a list", "object": "a mapping", "null": "null",
}

// goTypeWords names the values a Go type takes, in YAML's terms.
func goTypeWords(t string) string {
	t = strings.TrimLeft(t, "*")
	switch {
	case t == "bool":
		return "a boolean (true or false)"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "[]uint8":
		return "a string (base64)"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.Contains(t, "."):
		return "a mapping"
	}
	return "a " + t
}

// The causes of one answer that follow from another and are not mistakes of their own.
const (
	// rulesNotChecked is in the message of the cause, without a field, that stands for every CEL rule the API
	// skipped because the object had errors that make rules meaningless (crstrategy's blockingError).
	rulesNotChecked = "some validation rules were not checked"
	// typeInvalid is the type of a cause whose value is of the wrong type: other causes at its field (the
	// scale subresource reading the same value, "accessor error: three is of the type string") follow from it.
	typeInvalid = "FieldValueTypeInvalid"
)

// blockingTypes are the types of the causes that make the API skip the CEL rules (blockingError).
var blockingTypes = map[string]bool{
	"FieldValueNotSupported": true, "FieldValueRequired": true, "FieldValueTooLong": true, "FieldValueTooMany": true, typeInvalid: true,
}

// foldFollowOns attaches to a diagnostic of one answer the causes that follow from it, as its notes, so that
// one mistake counts once: the rules not checked go to the first cause in the text of a type that blocks
// them (else to the first other cause), and the other causes at the field of a value of the wrong type go to
// that one. A cause that follows from none stays a diagnostic.
func foldFollowOns(diags []Diagnostic) []Diagnostic {
	if len(diags) < 2 {
		return diags
	}
	into := make([]int, len(diags)) // the index of the diagnostic each one is a note of, or -1
	typed := map[string]int{}
	blocking, other := -1, -1
	for i, d := range diags {
		into[i] = -1
		if strings.Contains(d.Message, rulesNotChecked) {
			continue
		}
		if other < 0 || before(d, diags[other]) {
			other = i
		}
		if blockingTypes[d.Type] && (blocking < 0 || before(d, diags[blocking])) {
			blocking = i
		}
		if _, ok := typed[normField(d.Field)]; !ok && d.Type == typeInvalid {
			typed[normField(d.Field)] = i
		}
	}
	if blocking < 0 {
		blocking = other
	}
	for i, d := range diags {
		if strings.Contains(d.Message, rulesNotChecked) {
			into[i] = blocking
		} else if t, ok := typed[normField(d.Field)]; ok && t != i {
			into[i] = t
		}
	}
	out := make([]Diagnostic, 0, len(diags))
	at := make([]int, len(diags)) // each kept diagnostic's index in out
	for i, d := range diags {
		if into[i] < 0 {
			at[i] = len(out)
			out = append(out, d)
		}
	}
	for i, d := range diags {
		if j := into[i]; j >= 0 {
			n := &out[at[j]]
			n.Notes = append(n.Notes, Note{Field: d.Field, Type: d.Type, Message: d.Message})
		}
	}
	return out
}

// before reports whether a is placed before b in the text.
func before(a, b Diagnostic) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
}

// normField is a field path without the leading "." some of upstream's paths have (".spec.replicas").
func normField(f string) string { return strings.TrimPrefix(f, ".") }

// warningDiagnostics places Warning headers: at the field they start with or name, a key given twice at its
// second key (with its line as the editor counts it), at apiVersion for a version's deprecation, else at the
// document's start.
func warningDiagnostics(src Source, d *yamlpos.Doc, warnings []string, loc locator, deprecated func(string) bool) []Diagnostic {
	var out []Diagnostic
	for _, w := range warnings {
		var field string
		var p yamlpos.Result
		switch m, pm := unknownFieldRe.FindStringSubmatch(w), fieldPrefixRe.FindStringSubmatch(w); {
		case dupKeyRe.FindString(w) == w:
			p := duplicateKey(d, dupKeyRe.FindStringSubmatch(w))
			dg := Diagnostic{Source: src, Document: d.Index, Field: p.field, Type: "Warning", Message: p.message, Severity: SeverityWarning, Span: p.at.Span, Exact: p.at.Exact}
			if dg.Message != w {
				dg.Detail = w
			}
			out = append(out, dg)
			continue
		case m != nil && m[0] == w:
			field = m[2]
			if f, err := strconv.Unquote(`"` + m[2] + `"`); err == nil {
				field = f
			}
			p = loc(field)
		case pm != nil:
			field = pm[1]
			p = loc(field)
		case deprecated != nil && deprecated(w):
			p = loc("apiVersion")
		default:
			p = yamlpos.Result{Span: d.Start(), Exact: true}
		}
		out = append(out, Diagnostic{Source: src, Document: d.Index, Field: field, Type: "Warning", Message: w, Severity: SeverityWarning, Span: p.Span, Exact: p.Exact})
	}
	return out
}
