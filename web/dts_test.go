package web_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"crdplay/playground"
)

// tsNames maps each Go struct type that crdplay.evaluate's and crdplay.cel's inputs and results hold (by its package name and type
// name, as reflect prints it) to its interface in static/crdplay.d.ts. A struct type the walk meets that is not
// here fails the test: it needs an interface of its own, so that the page never types it inline.
var tsNames = map[string]string{
	"playground.Input":           "CrdplayEvaluateInput",
	"playground.CELInput":        "CrdplayCELInput",
	"playground.CELResult":       "CrdplayCELResult",
	"celcost.ScratchResult":      "CrdplayScratchResult",
	"celcost.ScratchIssue":       "CrdplayScratchIssue",
	"celcost.ScratchValue":       "CrdplayScratchValue",
	"playground.Migration":       "CrdplayMigration",
	"playground.Result":          "CrdplayEvaluateResult",
	"playground.CRDResult":       "CrdplayCRDResult",
	"playground.Names":           "CrdplayNames",
	"playground.Condition":       "CrdplayCondition",
	"playground.VersionInfo":     "CrdplayVersionInfo",
	"playground.PrinterColumn":   "CrdplayPrinterColumn",
	"playground.Diagnostic":      "CrdplayDiagnostic",
	"playground.Note":            "CrdplayNote",
	"playground.ObjectResult":    "CrdplayObjectResult",
	"playground.VersionView":     "CrdplayVersionView",
	"playground.RuntimeCost":     "CrdplayRuntimeCost",
	"playground.Table":           "CrdplayTable",
	"playground.TableColumn":     "CrdplayTableColumn",
	"playground.TableRow":        "CrdplayTableRow",
	"playground.Exchange":        "CrdplayExchange",
	"playground.Timings":         "CrdplayTimings",
	"playground.KubernetesRange": "CrdplayKubernetesRange",
	"playground.UpgradeReport":   "CrdplayUpgradeReport",
	"playground.UpgradeCRD":      "CrdplayUpgradeCRD",
	"playground.UpgradeObject":   "CrdplayUpgradeObject",
	"playground.UpgradeCheck":    "CrdplayUpgradeCheck",
	"playground.Finding":         "CrdplayFinding",
	"k8sversions.Report":         "CrdplayCompatReport",
	"k8sversions.Reason":         "CrdplayCompatReason",
	"k8sversions.Rule":           "CrdplayCompatRule",
	"k8sversions.Cost":           "CrdplayCompatCost",
	"k8sversions.Emulation":      "CrdplayCompatEmulation",
	"celcost.Limits":             "CrdplayCELLimits",
	"celcost.Version":            "CrdplayVersionCost",
	"celcost.Rule":               "CrdplayRuleCost",
	"yamlpos.Span":               "CrdplaySpan",
	"marks.Mark":                 "CrdplayMark",
	"explain.Node":               "CrdplaySchemaNode",
	"explain.Validations":        "CrdplaySchemaValidations",
	"explain.Rule":               "CrdplaySchemaRule",
	"explain.Combinators":        "CrdplaySchemaCombinators",
}

// TestDeclarationsMatchGo checks crdplay.d.ts against the Go types of crdplay.evaluate (playground.Input and
// playground.Result, and every struct they hold): the page renders the Go result as the declarations
// describe it, and tsc trusts them, so a JSON field that one side has and the other lacks, or that Go omits
// when empty but the declarations promise, fails here rather than as an undefined in the page.
func TestDeclarationsMatchGo(t *testing.T) {
	src, err := os.ReadFile("static/crdplay.d.ts")
	if err != nil {
		t.Fatal(err)
	}
	ifaces, err := parseInterfaces(string(src))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	queue := []reflect.Type{reflect.TypeFor[playground.Input](), reflect.TypeFor[playground.Result](),
		reflect.TypeFor[playground.CELInput](), reflect.TypeFor[playground.CELResult]()}
	for len(queue) > 0 {
		goType := queue[0]
		queue = queue[1:]
		if seen[goType.String()] {
			continue
		}
		seen[goType.String()] = true
		name, ok := tsNames[goType.String()]
		if !ok {
			t.Errorf("%s (%s) has no interface in crdplay.d.ts: add one, and its name to tsNames", goType, goType.PkgPath())
			continue
		}
		t.Run(name, func(t *testing.T) {
			members, err := ifaces.members(name)
			if err != nil {
				t.Fatal(err)
			}
			fields := jsonFields(goType)
			for _, f := range fields {
				m, ok := members[f.name]
				switch {
				case !ok:
					t.Errorf("%s lacks %q (%s.%s)", name, f.name, goType, f.goName)
				case m.optional != f.omitEmpty:
					t.Errorf("%s.%s: optional is %v in crdplay.d.ts, but Go's omitempty is %v (%s.%s)", name, f.name, m.optional, f.omitEmpty, goType, f.goName)
				}
				if s := structOf(f.typ); s != nil {
					queue = append(queue, s)
					if want, known := tsNames[s.String()]; known && ok && !regexp.MustCompile(`\b`+want+`\b`).MatchString(m.typ) {
						t.Errorf("%s.%s is %q in crdplay.d.ts; want the interface %s (%s)", name, f.name, m.typ, want, s)
					}
				}
			}
			for m := range members {
				if !slices.ContainsFunc(fields, func(f field) bool { return f.name == m }) {
					t.Errorf("%s has %q, which %s does not have", name, m, goType)
				}
			}
		})
	}
	for goName, name := range tsNames {
		if !seen[goName] {
			t.Errorf("tsNames maps %s to %s, but neither Input nor Result holds it", goName, name)
		}
	}
}

// field is one JSON field of a Go struct.
type field struct {
	name, goName string
	typ          reflect.Type
	omitEmpty    bool
}

// jsonFields lists the fields encoding/json writes for a struct, with the fields of an embedded struct in
// its place.
func jsonFields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := slices.ContainsFunc(strings.Split(opts, ","), func(o string) bool { return o == "omitempty" || o == "omitzero" })
		out = append(out, field{name: name, goName: f.Name, typ: f.Type, omitEmpty: omit})
	}
	return out
}

// structOf is the struct a field's type holds (through pointers, slices, arrays and maps), or nil when it
// holds none or encodes itself (json.RawMessage and other json.Marshalers).
func structOf(t reflect.Type) reflect.Type {
	marshaler := reflect.TypeFor[json.Marshaler]()
	for {
		if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
			return nil
		}
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			return t
		default:
			return nil
		}
	}
}

// member is a property of a TypeScript interface.
type member struct {
	optional bool
	// typ is the property's type as written (comments removed).
	typ string
}

// interfaces are the interfaces of a declaration file: their properties and what they extend.
type interfaces map[string]struct {
	extends []string
	members map[string]member
}

// members are an interface's properties with those of the interfaces it extends.
func (in interfaces) members(name string) (map[string]member, error) {
	i, ok := in[name]
	if !ok {
		return nil, fmt.Errorf("crdplay.d.ts has no interface %s", name)
	}
	out := map[string]member{}
	for _, e := range i.extends {
		inherited, err := in.members(e)
		if err != nil {
			return nil, fmt.Errorf("%s extends %s: %w", name, e, err)
		}
		for k, m := range inherited {
			out[k] = m
		}
	}
	for k, m := range i.members {
		out[k] = m
	}
	return out, nil
}

var (
	interfaceHead = regexp.MustCompile(`(?:export\s+)?interface\s+(\w+)(?:\s+extends\s+([^{]+?))?\s*\{`)
	propertyHead  = regexp.MustCompile(`^(?:readonly\s+)?([A-Za-z_$][\w$]*|'[^']*'|"[^"]*")(\?)?\s*([:(<])`)
)

// parseInterfaces reads the interfaces of a declaration file: enough TypeScript for crdplay.d.ts (comments,
// strings, nested object, function and generic types), not a parser for every file.
func parseInterfaces(src string) (interfaces, error) {
	code := stripComments(src)
	out := interfaces{}
	for _, m := range interfaceHead.FindAllStringSubmatchIndex(code, -1) {
		name := code[m[2]:m[3]]
		body, err := braced(code, m[1]-1)
		if err != nil {
			return nil, fmt.Errorf("interface %s: %w", name, err)
		}
		var extends []string
		if m[4] >= 0 {
			for _, e := range strings.Split(code[m[4]:m[5]], ",") {
				extends = append(extends, strings.TrimSpace(e))
			}
		}
		members := map[string]member{}
		for _, part := range splitTop(body) {
			part = strings.TrimSpace(part)
			if part == "" || strings.HasPrefix(part, "[") {
				continue // an index signature names no property
			}
			h := propertyHead.FindStringSubmatch(part)
			if h == nil {
				return nil, fmt.Errorf("interface %s: cannot read member %q", name, part)
			}
			typ := part[len(h[0]):] // after the colon; a method's type is its whole signature
			if h[3] != ":" {
				typ = part[len(h[0])-1:]
			}
			members[strings.Trim(h[1], `'"`)] = member{optional: h[2] == "?", typ: strings.TrimSpace(typ)}
		}
		out[name] = struct {
			extends []string
			members map[string]member
		}{extends, members}
	}
	return out, nil
}

// stripComments removes // and /* */ comments, leaving string literals whole.
func stripComments(src string) string {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\'' || c == '"' || c == '`':
			j := stringEnd(src, i)
			b.WriteString(src[i:min(j+1, len(src))])
			i = j
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += 2 + end + 1
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// stringEnd is the offset of the quote that closes the string literal opening at i (len(s) when none does).
func stringEnd(s string, i int) int {
	j := i + 1
	for j < len(s) && s[j] != s[i] {
		if s[j] == '\\' {
			j++
		}
		j++
	}
	return j
}

// braced is the text between the brace at open and its match.
func braced(code string, open int) (string, error) {
	depth := 0
	for i := open; i < len(code); i++ {
		switch code[i] {
		case '\'', '"', '`':
			i = stringEnd(code, i)
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return code[open+1 : i], nil
			}
		}
	}
	return "", fmt.Errorf("no } for the { at offset %d", open)
}

// splitTop splits an interface body at the semicolons and commas outside nested brackets: one part per
// member.
func splitTop(body string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '\'', '"', '`':
			i = stringEnd(body, i)
		case '{', '(', '[', '<':
			depth++
		case '}', ')', ']':
			depth--
		case '>':
			if i == 0 || body[i-1] != '=' { // not an arrow's =>
				depth--
			}
		case ';', ',':
			if depth == 0 {
				parts = append(parts, body[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, body[start:])
}

// TestParseInterfaces checks the reader of declarations on the forms crdplay.d.ts uses.
func TestParseInterfaces(t *testing.T) {
	src := `
/** A "doc" comment with // inside. */
export interface Base { line: number; column?: number }
export interface Child extends Base {
  // a line comment: with a colon
  name: string;
  'quoted-key'?: Record<string, string | string[]>;
  call(method: string, arg?: unknown): Promise<any>;
  listener: (ev: Map<string, number>) => void;
  nested?: { a: number; b: { c: string } }[];
  readonly ready: Promise<void>;
  url?: 'https://example.com/x' | "a;b";
}
interface Plain {
  x: number
}`
	got, err := parseInterfaces(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		iface string
		// want lists the members, "?" after the optional ones, and a type after "=" where it is checked.
		want []string
	}{
		{"Base", []string{"column?=number", "line=number"}},
		{"Child", []string{"call=(method: string, arg?: unknown): Promise<any>", "column?", "line", "listener=(ev: Map<string, number>) => void",
			"name=string", "nested?={ a: number; b: { c: string } }[]", "quoted-key?=Record<string, string | string[]>", "ready=Promise<void>",
			`url?='https://example.com/x' | "a;b"`}},
		{"Plain", []string{"x=number"}},
	} {
		t.Run(tc.iface, func(t *testing.T) {
			members, err := got.members(tc.iface)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k, m := range members {
				key := k
				if m.optional {
					key += "?"
				}
				if i := slices.IndexFunc(tc.want, func(w string) bool { return strings.HasPrefix(w, key+"=") }); i >= 0 {
					key += "=" + m.typ
				}
				keys = append(keys, key)
			}
			sort.Strings(keys)
			if !slices.Equal(keys, tc.want) {
				t.Errorf("members: %q\nwant %q", keys, tc.want)
			}
		})
	}
}
