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

// statusDiagnostics places a failed response: one diagnostic per cause of its Status, at the cause's field;
// a Status without causes at the fields or line its message names, else at the document's start.
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
		return out
	}
	// A strict decoding error names its fields in the message: one diagnostic per field, with upstream's
	// words for it.
	for _, m := range unknownFieldRe.FindAllStringSubmatch(st.Message, -1) {
		field, err := strconv.Unquote(`"` + m[2] + `"`)
		if err != nil {
			field = m[2]
		}
		p := loc(field)
		out = append(out, Diagnostic{Source: src, Document: d.Index, Field: field, Type: st.Reason, Message: m[0], Severity: sev, Span: p.Span, Exact: p.Exact})
	}
	if len(out) > 0 {
		return out
	}
	sp, exact := d.Start(), true
	if m := yamlLineRe.FindStringSubmatch(st.Message); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n >= 1 && d.StartLine+n-1 <= d.EndLine {
			// The API numbers the lines of the document it was sent; the editor numbers the whole text.
			line := d.StartLine + n - 1
			sp = yamlpos.Span{Line: line, Column: 1, EndLine: line, EndColumn: 2}
			if l := lineLength(d, line); l > 0 {
				sp.EndColumn = l + 1
			}
		}
	}
	if d.Err != nil {
		sp = d.Err.Span
	}
	return append(out, Diagnostic{Source: src, Document: d.Index, Type: st.Reason, Message: st.Message, Severity: sev, Span: sp, Exact: exact})
}

// lineLength is the length in UTF-16 units of a line of the document's text.
func lineLength(d *yamlpos.Doc, line int) int {
	lines := strings.Split(d.Source, "\n")
	i := line - d.StartLine
	if i < 0 || i >= len(lines) {
		return 0
	}
	n := 0
	for _, r := range strings.TrimRight(lines[i], " \t\r") {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// warningDiagnostics places Warning headers: at the field they start with or name, at apiVersion for a
// version's deprecation, else at the document's start.
func warningDiagnostics(src Source, d *yamlpos.Doc, warnings []string, loc locator, deprecated func(string) bool) []Diagnostic {
	var out []Diagnostic
	for _, w := range warnings {
		var field string
		var p yamlpos.Result
		switch m, pm := unknownFieldRe.FindStringSubmatch(w), fieldPrefixRe.FindStringSubmatch(w); {
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
