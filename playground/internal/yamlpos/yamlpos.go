// Package yamlpos splits a multi-document YAML text the way kubectl does and finds the line and column of a
// field in it, given the field path an API server reports (spec.replicas, metadata.name,
// spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[replicas].maximum, ...).
//
// Positions are 1-based lines and 1-based columns counted in UTF-16 code units, which is what JavaScript
// strings and CodeMirror count; for ASCII text a column is a character. Ends are exclusive.
//
// Nothing here evaluates anything: the package only reads the text. It never expands YAML aliases (a YAML
// bomb stays as small as its text) and follows at most one alias per path element.
package yamlpos

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
	yaml "go.yaml.in/yaml/v3"
)

// Span is a range of a text: from (Line, Column) up to (EndLine, EndColumn), exclusive.
type Span struct {
	Line      int `json:"line"`
	Column    int `json:"column"`
	EndLine   int `json:"endLine"`
	EndColumn int `json:"endColumn"`
}

// Text is a whole editor's content, split into lines once.
type Text struct {
	src    string
	lines  []string // without their line breaks
	breaks []string // the break after each line: "\r\n", "\r", "\n", or "" for the last
}

// NewText indexes src. Lines end at "\r\n", "\r" or "\n", as both YAML and CodeMirror count them.
func NewText(src string) *Text {
	// As many lines as "\n"s plus one, unless "\r" ends some: sized once for a big text.
	n := strings.Count(src, "\n") + 1
	t := &Text{src: src, lines: make([]string, 0, n), breaks: make([]string, 0, n)}
	start := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			t.lines, t.breaks = append(t.lines, src[start:i]), append(t.breaks, "\n")
			start = i + 1
		case '\r':
			br := "\r"
			if i+1 < len(src) && src[i+1] == '\n' {
				br = "\r\n"
			}
			t.lines, t.breaks = append(t.lines, src[start:i]), append(t.breaks, br)
			i += len(br) - 1
			start = i + 1
		}
	}
	t.lines, t.breaks = append(t.lines, src[start:]), append(t.breaks, "")
	return t
}

// Lines returns the number of lines.
func (t *Text) Lines() int { return len(t.lines) }

// line returns line n (1-based), or "" outside the text.
func (t *Text) line(n int) string {
	if n < 1 || n > len(t.lines) {
		return ""
	}
	return t.lines[n-1]
}

// clamp keeps a span inside the text: YAML also breaks lines at NEL, LS and PS, which editors do not, so
// its line numbers can run past the text's.
func (t *Text) clamp(s Span) Span {
	if s.Line > len(t.lines) {
		s = t.lineSpan(len(t.lines))
	}
	if s.Line < 1 {
		s = t.lineSpan(1)
	}
	if s.EndLine < s.Line || s.EndLine > len(t.lines) {
		s.EndLine = s.Line
	}
	if s.Column < 1 {
		s.Column = 1
	}
	if s.EndLine == s.Line && s.EndColumn <= s.Column {
		s.EndColumn = s.Column + 1
	}
	return s
}

// utf16Col turns a 1-based column counted in characters (runes, as the YAML parser counts) into one counted
// in UTF-16 code units.
func (t *Text) utf16Col(line, runeCol int) int {
	s := t.line(line)
	col := 1
	for i := 1; i < runeCol; i++ {
		if s == "" {
			col++ // past the end of the line: count on as ASCII
			continue
		}
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		col += len(utf16.Encode([]rune{r}))
	}
	return col
}

// lineEnd is the UTF-16 column just past the last non-blank character of line n (at least 1).
func (t *Text) lineEnd(n int) int {
	s := strings.TrimRight(t.line(n), " \t")
	return 1 + len(utf16.Encode([]rune(s)))
}

// lineSpan is the whole of line n, never empty (an empty line's span is its first column).
func (t *Text) lineSpan(n int) Span {
	end := t.lineEnd(n)
	if end < 2 {
		end = 2
	}
	return Span{Line: n, Column: 1, EndLine: n, EndColumn: end}
}

// ContentSpan is line n from its first character that is not a space (the indentation) to its last that is
// not blank: where a problem of the line as a whole goes. A blank line's span is its first column.
func (t *Text) ContentSpan(n int) Span {
	sp := t.lineSpan(n)
	l := t.line(n)
	if i := len(l) - len(strings.TrimLeft(l, " ")); i < len(strings.TrimRight(l, " \t")) {
		sp.Column = 1 + i // spaces are one UTF-16 unit each
	}
	return t.clamp(sp)
}

// Error is a problem with the text itself (invalid YAML, a bad document separator), at a position.
type Error struct {
	Span    Span   `json:"span"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return "line " + strconv.Itoa(e.Span.Line) + ": " + e.Message }

// Doc is one YAML document of a Text.
type Doc struct {
	// Index counts the non-empty documents of the text from 0.
	Index int
	// StartLine and EndLine are the document's first and last lines in the text (1-based, inclusive).
	StartLine, EndLine int
	// Source is the document's text: lines StartLine to EndLine, each with its line break.
	Source string
	// Root is the document's content (a mapping for a Kubernetes object); nil when the document did not
	// parse (see Err).
	Root *yaml.Node
	// Err is why the document did not parse, at its line in the text.
	Err *Error
	// JSON is, for an item of a List taken as a document of its own (Sub), the item as JSON: what kubectl
	// sends for it, since Source is the whole List's. Nil for a document of the text.
	JSON []byte

	text *Text
}

// Text returns the text the document belongs to.
func (d *Doc) Text() *Text { return d.text }

// separator matches apimachinery's YAMLReader: a line that starts with "---".
const separator = "---"

// Split returns the non-empty documents of src, split at "---" lines as kubectl (apimachinery's YAMLReader)
// splits them, each parsed for positions, and the problems of the separators themselves. A document that is
// only whitespace and comments is skipped, as kubectl skips it.
func Split(src string) ([]*Doc, []*Error) {
	t := NewText(src)
	var docs []*Doc
	var errs []*Error
	// start is the document's first line, from and off the byte offsets in src of its start and of line i.
	start, from, off := 1, 0, 0
	flush := func(end, to int) {
		if end < start {
			return
		}
		// The lines with their breaks are consecutive in src: the document's source is a part of it.
		d := &Doc{Index: len(docs), StartLine: start, EndLine: end, Source: src[from:to], text: t}
		if d.parse() {
			docs = append(docs, d)
		}
	}
	for i, l := range t.lines {
		n := i + 1
		lineOff := off
		off += len(l) + len(t.breaks[i])
		if !strings.HasPrefix(l, separator) {
			continue
		}
		if rest := strings.TrimSpace(l[len(separator):]); rest != "" && rest[0] != '#' {
			// kubectl refuses the whole input here; the documents around it can still be shown.
			errs = append(errs, &Error{
				Span:    t.lineSpan(n),
				Message: "invalid Yaml document separator: " + rest,
			})
		}
		flush(n-1, lineOff)
		start, from = n+1, off
	}
	flush(len(t.lines), len(src))
	return docs, errs
}

// yamlLineRe finds the line in go-yaml's error messages ("yaml: line 5: did not find expected key").
var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): `)

// parserErrors are the messages of go-yaml's parser (parserc.go), as opposed to its scanner's.
var parserErrors = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"found undefined tag handle":             true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
}

// blockErrors are the parser's errors about a block collection that a line broke (an entry indented less or
// more than its siblings, a key among list items): the mistake is that line, which go-yaml v3 does not name
// (it names the line where the collection began, its context), but go-yaml v2 does (its problem).
var blockErrors = map[string]bool{
	"did not find expected key":           true,
	"did not find expected '-' indicator": true,
}

// MessageLine reads the line of a go-yaml v2 error message about a document, as the API's YAML decoder and
// sigs.k8s.io/yaml print it ("yaml: line 9: did not find expected key"): v2 prints the line of the problem,
// 1-based for its scanner's errors but 0-based for its parser's. It returns the line (1-based, in the
// document) and the problem; ok is false for a message without a line (go-yaml leaves it out on the first
// line, and for errors of decoding rather than syntax).
func MessageLine(msg string) (line int, problem string, ok bool) {
	m := yamlLineRe.FindStringSubmatch(msg)
	if m == nil {
		return 0, "", false
	}
	l, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, "", false
	}
	problem = msg[len(m[0]):]
	if parserErrors[problem] {
		l++
	}
	return l, problem, true
}

// parse fills Root or Err and reports whether the document has any content.
func (d *Doc) parse() bool {
	var n yaml.Node
	err := yaml.Unmarshal([]byte(d.Source), &n)
	if err != nil {
		msg := err.Error()
		line := d.StartLine
		if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
			if l, convErr := strconv.Atoi(m[1]); convErr == nil {
				// go-yaml prints a scanner error's line 1-based but a parser error's line 0-based (the mark
				// of the collection that was left open, else of the token that broke it).
				problem := msg[len(m[0]):]
				if parserErrors[problem] {
					l++
				}
				if blockErrors[problem] {
					if pl, ok := problemLine(d.Source, problem); ok {
						l = pl
					}
				}
				line = d.StartLine + l - 1
			}
		}
		if line > d.EndLine {
			line = d.EndLine
		}
		if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
			// The message's line as the editor numbers it, not as the document's own (and off by one) count.
			msg = "yaml: line " + strconv.Itoa(line) + ": " + msg[len(m[0]):]
		}
		if open, ok := flowErrors[problemOf(msg)]; ok {
			// go-yaml v3 names the line of the flow collection left open, unless it opened on the document's
			// first line (which it takes for no line): its opening bracket is the place.
			for _, l := range []int{line, d.StartLine} {
				if col, ok := lastUnclosed(d.text.line(l), open); ok {
					sp := d.text.ContentSpan(l)
					sp.Column = col
					d.Err = &Error{Span: sp, Message: "yaml: line " + strconv.Itoa(l) + ": " + problemOf(msg)}
					return true
				}
			}
		}
		d.Err = &Error{Span: d.text.ContentSpan(line), Message: msg}
		return true
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
		return false // only comments and whitespace
	}
	d.Root = n.Content[0]
	return true
}

// flowErrors are the parser's errors about a flow collection left open, with its opening bracket.
var flowErrors = map[string]byte{
	"did not find expected ',' or ']'": '[',
	"did not find expected ',' or '}'": '{',
}

// problemOf is the problem of a go-yaml error message, without "yaml: " and its line.
func problemOf(msg string) string {
	if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
		return msg[len(m[0]):]
	}
	return strings.TrimPrefix(msg, "yaml: ")
}

// lastUnclosed is the 1-based column (UTF-16) of the last opening bracket open on line that the line does not
// close, outside quoted scalars and comments; ok is false when there is none.
func lastUnclosed(line string, open byte) (int, bool) {
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	var stack []int // byte offsets of the brackets still open
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case (c == '"' || c == '\'') && (i == 0 || strings.IndexByte(" \t[{,:", line[i-1]) >= 0):
			// A quoted scalar: to its closing quote ('' is an escaped ' in single quotes, \" in double).
			for i++; i < len(line); i++ {
				if c == '"' && line[i] == '\\' {
					i++
				} else if line[i] == c {
					if c == '\'' && i+1 < len(line) && line[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			i = len(line)
		case c == open:
			stack = append(stack, i)
		case c == closer && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) == 0 {
		return 0, false
	}
	at := stack[len(stack)-1]
	return 1 + len(utf16.Encode([]rune(line[:at]))), true
}

// problemLine is the line (1-based, in src) of the token that broke a block collection, as go-yaml v2 (the
// parser the API decodes YAML with) reports the problem; ok is false when v2 reports another.
func problemLine(src, problem string) (int, bool) {
	var v struct{}
	err := yamlv2.Unmarshal([]byte(src), &v)
	if err == nil {
		return 0, false
	}
	if err.Error() == "yaml: "+problem {
		return 1, true // go-yaml names no line for the first
	}
	l, p, ok := MessageLine(err.Error())
	return l, ok && p == problem
}

// Start is the span of the document's first line of content, where problems of the whole document go.
func (d *Doc) Start() Span {
	line := d.StartLine
	if d.Root != nil {
		line = d.abs(d.Root.Line)
	} else if d.Err != nil {
		return d.Err.Span
	} else {
		for line < d.EndLine && strings.TrimSpace(d.text.line(line)) == "" {
			line++
		}
	}
	end := d.text.lineEnd(line)
	col := 1
	if d.Root != nil {
		col = d.text.utf16Col(line, d.Root.Column)
	}
	if end <= col {
		end = col + 1
	}
	return d.text.clamp(Span{Line: line, Column: col, EndLine: line, EndColumn: end})
}

// abs turns a line of the document into a line of the text.
func (d *Doc) abs(line int) int { return d.StartLine + line - 1 }

// Result is where a path was found.
type Result struct {
	Span Span
	// Exact is false when the path (or its tail) is not in the text and Span is its nearest ancestor that is.
	Exact bool
	// Found is the part of the path that was found, in the path's own spelling.
	Found string
}

// Locate finds the field that path names. Paths are field.Path strings as upstream prints them: ".name" for
// fields, "[3]" for list items, "[key]" for map keys, with or without a leading "." ("<nil>" and "" name the
// whole document). Keys that themselves contain "." or "[" are matched against the keys in the text, longest
// first, so that "spec.testMap.foo.34$" finds the key "foo.34$". When no key matches exactly, one that differs
// only in case does (upstream's internal "JSONPath" for the YAML's "jsonPath").
func (d *Doc) Locate(path string) Result {
	path = strings.TrimPrefix(path, ".")
	if path == "<nil>" || d.Root == nil {
		return Result{Span: d.Start(), Exact: path == "" || path == "<nil>"}
	}
	w, rest := d.walk(path)
	return Result{Span: w.span(), Exact: rest == "", Found: strings.TrimSuffix(path[:len(path)-len(rest)], ".")}
}

// walk descends along path as far as the text has it, and returns where it stopped and the rest of the path.
func (d *Doc) walk(path string) (walker, string) {
	w := walker{doc: d, node: d.Root}
	rest := path
	for rest != "" {
		next, ok := w.step(rest)
		if !ok {
			break
		}
		rest = next
	}
	return w, rest
}

// InScalar places a position inside the string value of the field at path: line and col are 1-based and
// count the value's lines and characters (runes), as CEL reports a position in an expression
// ("<input>:1:5"). The span covers the character there, or the identifier that starts there (".name" with
// its dot). ok is false when path is not a scalar in the text, or the text does not write the value verbatim
// at a position one can compute: escapes in a quoted scalar, a folded (">") block, a plain or quoted scalar
// over several lines. The caller then keeps the field's own span. A literal ("|") block maps line by line,
// under its indentation.
func (d *Doc) InScalar(path string, line, col int) (Span, bool) {
	path = strings.TrimPrefix(path, ".")
	if d.Root == nil || path == "" || line < 1 || col < 1 {
		return Span{}, false
	}
	w, rest := d.walk(path)
	n := resolve(w.node)
	if rest != "" || n == nil || n.Kind != yaml.ScalarNode {
		return Span{}, false
	}
	valueLines := strings.Split(n.Value, "\n")
	if line > len(valueLines) {
		return Span{}, false
	}
	want := []rune(valueLines[line-1])
	if col > len(want)+1 {
		return Span{}, false
	}
	t := d.text
	var textLine, start int // the value line's line in the text and its first rune there
	switch {
	case n.Style&yaml.LiteralStyle != 0:
		// The content starts on the line after the "|" header, each line under the block's indentation.
		textLine = d.abs(n.Line) + line
		src := []rune(t.line(textLine))
		start = len(src) - len(want)
		if start < 0 || string(src[start:]) != string(want) || strings.Trim(string(src[:start]), " ") != "" {
			return Span{}, false
		}
	case n.Style&yaml.FoldedStyle != 0 || len(valueLines) > 1:
		return Span{}, false
	default:
		// Plain or quoted on one line: verbatim when the text between the quotes is the value.
		textLine = d.abs(n.Line)
		src := []rune(t.line(textLine))
		start = n.Column - 1
		if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
			start++
		}
		if start < 0 || start+len(want) > len(src) || string(src[start:start+len(want)]) != string(want) {
			return Span{}, false
		}
	}
	from := col - 1 // rune index in the value's line
	to := from + 1
	if from < len(want) && want[from] == '.' {
		to = from + 1 + identLen(want[from+1:])
	} else if n := identLen(want[min(from, len(want)):]); n > 0 {
		to = from + n
	}
	return t.clamp(Span{Line: textLine, Column: t.utf16Col(textLine, start+from+1), EndLine: textLine, EndColumn: t.utf16Col(textLine, start+to+1)}), true
}

// identLen is the length of the identifier (letters, digits, underscores) that r starts with.
func identLen(r []rune) int {
	n := 0
	for n < len(r) && (r[n] == '_' || unicode.IsLetter(r[n]) || unicode.IsDigit(r[n])) {
		n++
	}
	return n
}

// Seg is one element of a path built by a program rather than parsed: a key (Key) or a list index (Index >= 0
// with Key unset).
type Seg struct {
	Key   string
	Index int
}

// K and I build path segments.
func K(key string) Seg { return Seg{Key: key, Index: -1} }

// I is a list-index segment.
func I(i int) Seg { return Seg{Index: i} }

// Append returns a new path: segs, then more. segs is never written to, so paths that share a prefix can
// each be extended.
func Append(segs []Seg, more ...Seg) []Seg {
	out := make([]Seg, 0, len(segs)+len(more))
	return append(append(out, segs...), more...)
}

// LocateSegs finds the node at segs. Unlike Locate it is never ambiguous: each key is compared whole.
func (d *Doc) LocateSegs(segs []Seg) Result {
	if d.Root == nil {
		return Result{Span: d.Start(), Exact: len(segs) == 0}
	}
	w := walker{doc: d, node: d.Root}
	for i, s := range segs {
		if !w.segment(s) {
			return Result{Span: w.span(), Exact: false, Found: FormatSegs(segs[:i])}
		}
	}
	return Result{Span: w.span(), Exact: true, Found: FormatSegs(segs)}
}

// Locator returns a LocateSegs that remembers the nodes it reached: for a caller that locates many paths
// sharing their prefixes (every node of a CRD's schema, parents before children), each path then costs one
// step from its parent instead of a walk from the root, which for a large CRD (10,000 schema nodes, mappings
// of hundreds of keys) was most of the time spent placing them.
func (d *Doc) Locator() func(segs []Seg) Result {
	if d.Root == nil {
		return d.LocateSegs
	}
	reached := map[string]walker{"": {doc: d, node: d.Root}}
	return func(segs []Seg) Result {
		// keys[i] names segs[:i]; a Builder's earlier String results stay valid as it grows.
		keys := make([]string, len(segs)+1)
		var b strings.Builder
		for i, s := range segs {
			if s.Index >= 0 && s.Key == "" {
				b.WriteByte(1)
				b.WriteString(strconv.Itoa(s.Index))
			} else {
				b.WriteByte(0)
				b.WriteString(s.Key)
			}
			keys[i+1] = b.String()
		}
		i := len(segs)
		for ; i > 0; i-- {
			if _, ok := reached[keys[i]]; ok {
				break
			}
		}
		w := reached[keys[i]]
		for ; i < len(segs); i++ {
			if !w.segment(segs[i]) {
				return Result{Span: w.span(), Exact: false, Found: FormatSegs(segs[:i])}
			}
			reached[keys[i+1]] = w
		}
		return Result{Span: w.span(), Exact: true, Found: FormatSegs(segs)}
	}
}

// Sub returns the node at segs as a document of its own, for the items of a List: Start, Locate and
// LocateSegs then answer within that node, in the lines of the whole text. Index, StartLine, EndLine and
// Source stay the whole document's. Nil when the document has no node at segs.
func (d *Doc) Sub(segs []Seg) *Doc {
	if d.Root == nil {
		return nil
	}
	w := walker{doc: d, node: d.Root}
	for _, s := range segs {
		if !w.segment(s) {
			return nil
		}
	}
	sub := *d
	sub.Root = resolve(w.node)
	return &sub
}

// FormatSegs prints segments as an object field path: keys joined by ".", indexes as "[i]".
func FormatSegs(segs []Seg) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Index >= 0 && s.Key == "" {
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Key)
	}
	return b.String()
}

// walker descends a document's node tree.
type walker struct {
	doc  *Doc
	node *yaml.Node // the current value
	key  *yaml.Node // the key the current value was reached by; nil for the root and list items
}

// resolve follows an alias to its anchor (one hop: an anchor is never itself an alias).
func resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// pairs returns a mapping's key/value pairs, including those merged in by "<<" (one level, as most YAML
// written for Kubernetes uses it), own keys first.
func pairs(m *yaml.Node) [][2]*yaml.Node {
	m = resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var own, merged [][2]*yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag == "!!merge" {
			src := resolve(v)
			var sources []*yaml.Node
			if src != nil && src.Kind == yaml.SequenceNode {
				sources = src.Content
			} else {
				sources = []*yaml.Node{src}
			}
			for _, s := range sources {
				s = resolve(s)
				if s == nil || s.Kind != yaml.MappingNode {
					continue
				}
				for j := 0; j+1 < len(s.Content); j += 2 {
					merged = append(merged, [2]*yaml.Node{s.Content[j], s.Content[j+1]})
				}
			}
			continue
		}
		own = append(own, [2]*yaml.Node{k, v})
	}
	return append(own, merged...)
}

// step consumes the first element of rest and returns what is left.
func (w *walker) step(rest string) (string, bool) {
	rest = strings.TrimPrefix(rest, ".")
	n := resolve(w.node)
	if n == nil {
		return rest, false
	}
	if strings.HasPrefix(rest, "[") {
		if n.Kind == yaml.SequenceNode {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return rest, false
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 || i >= len(n.Content) {
				return rest, false
			}
			w.node, w.key = n.Content[i], nil
			return rest[end+1:], true
		}
		// "[key]": the longest key k with rest starting "[k]".
		return w.matchKey(n, rest, func(k string) (string, bool) {
			if strings.HasPrefix(rest, "["+k+"]") {
				return rest[len(k)+2:], true
			}
			return "", false
		})
	}
	// A field name: the longest key k with rest == k or rest starting "k." or "k[".
	return w.matchKey(n, rest, func(k string) (string, bool) {
		if !strings.HasPrefix(rest, k) {
			return "", false
		}
		after := rest[len(k):]
		if after == "" || after[0] == '.' || after[0] == '[' {
			return after, true
		}
		return "", false
	})
}

// matchKey picks, among the mapping's keys, the longest that match, first exactly, then ignoring case.
func (w *walker) matchKey(n *yaml.Node, rest string, match func(k string) (string, bool)) (string, bool) {
	ps := pairs(n)
	for _, fold := range []bool{false, true} {
		best, bestLen := -1, -1
		var bestRest string
		for i, p := range ps {
			k := p[0]
			if k.Kind != yaml.ScalarNode {
				continue
			}
			key := k.Value
			if fold {
				// Compare against the path's own spelling of the same length.
				if len(rest) < len(key) {
					continue
				}
				cand := rest[:len(key)]
				if strings.HasPrefix(rest, "[") && len(rest) >= len(key)+2 {
					cand = rest[1 : len(key)+1]
				}
				if !strings.EqualFold(cand, key) {
					continue
				}
				key = cand
			}
			if after, ok := match(key); ok && len(key) > bestLen {
				best, bestLen, bestRest = i, len(key), after
			}
		}
		if best >= 0 {
			w.key, w.node = ps[best][0], ps[best][1]
			return bestRest, true
		}
	}
	return rest, false
}

// segment descends by one programmatic segment.
func (w *walker) segment(s Seg) bool {
	n := resolve(w.node)
	if n == nil {
		return false
	}
	if s.Key == "" && s.Index >= 0 {
		if n.Kind != yaml.SequenceNode || s.Index >= len(n.Content) {
			return false
		}
		w.node, w.key = n.Content[s.Index], nil
		return true
	}
	for _, p := range pairs(n) {
		if p[0].Kind == yaml.ScalarNode && p[0].Value == s.Key {
			w.key, w.node = p[0], p[1]
			return true
		}
	}
	return false
}

// span is where the walker stands: a key with its value when the value is a one-line scalar, the key alone
// when the value is a collection, a list item's first line.
func (w *walker) span() Span {
	t := w.doc.text
	v := w.node
	if w.key != nil {
		k := w.key
		line := w.doc.abs(k.Line)
		sp := Span{Line: line, Column: t.utf16Col(line, k.Column), EndLine: line}
		sp.EndColumn = w.scalarEnd(k)
		if v != nil && (v.Kind == yaml.ScalarNode || v.Kind == yaml.AliasNode) && v.Line == k.Line {
			sp.EndColumn = w.scalarEnd(v)
		}
		return t.clamp(sp)
	}
	if v == nil {
		return w.doc.Start()
	}
	line := w.doc.abs(v.Line)
	col := t.utf16Col(line, v.Column)
	end := t.lineEnd(line)
	if v.Kind == yaml.ScalarNode || v.Kind == yaml.AliasNode {
		end = w.scalarEnd(v)
	}
	if end <= col {
		end = col + 1
	}
	return t.clamp(Span{Line: line, Column: col, EndLine: line, EndColumn: end})
}

// scalarEnd is the UTF-16 column just past a scalar (or alias) token on its first line.
func (w *walker) scalarEnd(n *yaml.Node) int {
	t := w.doc.text
	line := w.doc.abs(n.Line)
	src := []rune(t.line(line))
	start := n.Column - 1 // rune index
	if start < 0 || start > len(src) {
		return t.lineEnd(line)
	}
	end := len(src)
	switch {
	case n.Kind == yaml.AliasNode:
		end = start + 1 + utf8.RuneCountInString(n.Value)
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := start + 1; i < len(src); i++ {
			if src[i] == '\\' {
				i++
				continue
			}
			if src[i] == '"' {
				end = i + 1
				break
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := start + 1; i < len(src); i++ {
			if src[i] == '\'' {
				if i+1 < len(src) && src[i+1] == '\'' {
					i++
					continue
				}
				end = i + 1
				break
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 || strings.Contains(n.Value, "\n"):
		// A block or multi-line scalar: its first line.
	default:
		// A plain scalar on one line is its value verbatim (a tag or anchor before it moves Column past them).
		end = start + utf8.RuneCountInString(n.Value)
	}
	if end > len(src) {
		end = len(src)
	}
	if end <= start {
		end = start + 1 // an empty token still gets one column, even past the line's end
	}
	if end > len(src) {
		return 1 + len(utf16.Encode(src)) + end - len(src)
	}
	return 1 + len(utf16.Encode(src[:end]))
}

// KeyAt finds the mapping key named key on line (of the text) and returns where it is (the key with a
// one-line value, as Locate places a field) and its path: for a key given twice in a mapping, which go-yaml
// reports by its line ("line 8: key \"image\" already set in map"). ok is false when the line has no such key.
func (d *Doc) KeyAt(line int, key string) (Result, []Seg, bool) {
	var found *walker
	var path []Seg
	d.visit(func(segs []Seg, k, v *yaml.Node) bool {
		if k != nil && k.Kind == yaml.ScalarNode && k.Value == key && d.abs(k.Line) == line {
			found, path = &walker{doc: d, node: v, key: k}, Append(segs)
			return false
		}
		return d.abs(k0Line(k, v)) <= line // nothing below starts after line... keep looking while it can
	})
	if found == nil {
		return Result{}, nil, false
	}
	return Result{Span: found.span(), Exact: true, Found: FormatSegs(path)}, path, true
}

// k0Line is the line a pair or item starts on.
func k0Line(k, v *yaml.Node) int {
	if k != nil {
		return k.Line
	}
	return v.Line
}

// Tagged finds the first scalar written with the tag tag ("!!int") and the value value, as go-yaml v2 reports a
// tagged value it cannot decode ("cannot decode !!str `x` as a !!int"). ok is false when there is none.
func (d *Doc) Tagged(tag, value string) (Result, []Seg, bool) {
	var found *walker
	var path []Seg
	d.visit(func(segs []Seg, k, v *yaml.Node) bool {
		if v.Kind == yaml.ScalarNode && v.Style&yaml.TaggedStyle != 0 && v.Tag == tag && v.Value == value {
			found, path = &walker{doc: d, node: v, key: k}, Append(segs)
			return false
		}
		return true
	})
	if found == nil {
		return Result{}, nil, false
	}
	return Result{Span: found.span(), Exact: true, Found: FormatSegs(path)}, path, true
}

// visit calls f for every key and value of the document in the text's order (k is nil for a list item and the
// root), with the path to the value, until f returns false. It does not follow aliases, nor descend into
// merged mappings: each node of the text is visited once.
func (d *Doc) visit(f func(segs []Seg, k, v *yaml.Node) bool) {
	if d.Root == nil {
		return
	}
	var walk func(segs []Seg, k, v *yaml.Node) bool
	walk = func(segs []Seg, k, v *yaml.Node) bool {
		if !f(segs, k, v) {
			return false
		}
		switch v.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(v.Content); i += 2 {
				key := v.Content[i]
				if !walk(append(segs, K(key.Value)), key, v.Content[i+1]) {
					return false
				}
			}
		case yaml.SequenceNode:
			for i, c := range v.Content {
				if !walk(append(segs, I(i)), nil, c) {
					return false
				}
			}
		}
		return true
	}
	walk(nil, nil, d.Root)
}

// DecodedField finds the value that encoding/json names in a type error about the document's JSON ("cannot
// unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of type bool"):
// fields are the error's path (spec, versions, served), which has the fields of Go structs only, neither list
// indexes nor map keys; kind is the JSON kind the error names ("string", "number", "bool", "array", "object";
// "" for any). It returns the first value in the text's order at such a path whose kind is kind (else the
// first at such a path), with its path in upstream's field.Path spelling (spec.versions[0].served,
// ...properties[spec].type); ok is false when the text has none.
func (d *Doc) DecodedField(fields []string, kind string) (Result, string, bool) {
	if d.Root == nil || len(fields) == 0 {
		return Result{}, "", false
	}
	type hit struct {
		w    walker
		path string
	}
	var first, match *hit
	// walk descends by the fields left: a mapping's key of the next field consumes it; after a field, the
	// value may be a map (map keys are not in the path) or a list (nor are indexes).
	var walk func(w walker, path string, fields []string, afterField bool)
	walk = func(w walker, path string, fields []string, afterField bool) {
		if match != nil {
			return
		}
		n := resolve(w.node)
		if n == nil {
			return
		}
		if len(fields) == 0 {
			h := &hit{w, path}
			if first == nil {
				first = h
			}
			if kind == "" || jsonKind(n) == kind {
				match = h
			}
			return
		}
		switch n.Kind {
		case yaml.SequenceNode:
			if !afterField {
				return
			}
			for i, c := range n.Content {
				walk(walker{doc: d, node: c}, path+"["+strconv.Itoa(i)+"]", fields, false)
			}
		case yaml.MappingNode:
			for _, p := range pairs(n) {
				if p[0].Kind == yaml.ScalarNode && p[0].Value == fields[0] {
					sep := "."
					if path == "" {
						sep = ""
					}
					walk(walker{doc: d, node: p[1], key: p[0]}, path+sep+fields[0], fields[1:], true)
				}
			}
			if afterField {
				for _, p := range pairs(n) {
					if p[0].Kind == yaml.ScalarNode {
						walk(walker{doc: d, node: p[1], key: p[0]}, path+"["+p[0].Value+"]", fields, false)
					}
				}
			}
		}
	}
	walk(walker{doc: d, node: d.Root}, "", fields, false)
	if match == nil {
		match = first
	}
	if match == nil {
		return Result{}, "", false
	}
	return Result{Span: match.w.span(), Exact: true, Found: match.path}, match.path, true
}

// jsonKind is the kind of JSON value a YAML node becomes (sigs.k8s.io/yaml's conversion), as encoding/json
// names it in its errors.
func jsonKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "array"
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		return "number"
	case "!!bool":
		return "bool"
	case "!!null":
		return "null"
	}
	return "string"
}
