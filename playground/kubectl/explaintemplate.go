package kubectl

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// renderExplain is kubectl explain's "plaintext" template (k8s.io/kubectl/pkg/explain/v2/templates), written
// out in Go: the playground does not ship text/template programs.
func renderExplain(w *bytes.Buffer, doc map[string]interface{}, gvr schema.GroupVersionResource, fieldPath []string, recursive bool, maxDepth int) error {
	prefix := "/api"
	if gvr.Group != "" {
		prefix = "/apis/" + gvr.Group
	}
	search := []string{
		strings.Join([]string{prefix, gvr.Version, gvr.Resource}, "/"),
		strings.Join([]string{prefix, gvr.Version, gvr.Resource, "{name}"}, "/"),
		strings.Join([]string{prefix, gvr.Version, "namespaces", "{namespace}", gvr.Resource}, "/"),
		strings.Join([]string{prefix, gvr.Version, "namespaces", "{namespace}", gvr.Resource, "{name}"}, "/"),
	}
	paths, _ := doc["paths"].(map[string]interface{})
	var gvk interface{}
	for _, p := range search {
		elem, _ := paths[p].(map[string]interface{})
		if len(elem) == 0 {
			continue
		}
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			op, _ := elem[method].(map[string]interface{})
			if len(op) == 0 {
				continue
			}
			// The template assigns on every operation it looks at and stops at the first with a kind.
			gvk = op["x-kubernetes-group-version-kind"]
			if truthy(gvk) {
				break
			}
		}
	}
	if !truthy(gvk) {
		return explainError(fmt.Sprintf("error: GVR (%v) not found in OpenAPI schema", gvr.String()))
	}
	gm, _ := gvk.(map[string]interface{})
	if truthy(gm["group"]) {
		fmt.Fprintf(w, "GROUP:      %v\n", gm["group"])
	}
	fmt.Fprintf(w, "KIND:       %v\n", gm["kind"])
	fmt.Fprintf(w, "VERSION:    %v\n", gm["version"])
	w.WriteString("\n")
	e := &explainer{doc: doc, recursive: recursive, maxDepth: maxDepth}
	out, err := e.schemaFor(gvk, fieldPath)
	if err != nil {
		return err
	}
	if out == "" {
		return explainError(fmt.Sprintf("error: GVK %v not found in OpenAPI schema", fmt.Sprint(gvk)))
	}
	w.WriteString(out)
	w.WriteString("\n")
	return nil
}

type explainer struct {
	doc       map[string]interface{}
	recursive bool
	maxDepth  int
}

// truthy is text/template's truth: not the zero value, not empty.
func truthy(v interface{}) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.String, reflect.Array:
		return rv.Len() > 0
	case reflect.Bool:
		return rv.Bool()
	case reflect.Float64, reflect.Float32:
		return rv.Float() != 0
	case reflect.Int, reflect.Int64, reflect.Int32:
		return rv.Int() != 0
	}
	return true
}

func asMap(v interface{}) map[string]interface{} {
	m, _ := v.(map[string]interface{})
	return m
}

// isBool reports printf "%T" == "bool", the template's test for additionalProperties: true/false.
func isBool(v interface{}) bool {
	_, ok := v.(bool)
	return ok
}

// schemaFor is the "schema" template: the component schema whose x-kubernetes-group-version-kind lists gvk.
func (e *explainer) schemaFor(gvk interface{}, fieldPath []string) (string, error) {
	schemas := asMap(asMap(e.doc["components"])["schemas"])
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		s := asMap(schemas[name])
		list, _ := s["x-kubernetes-group-version-kind"].([]interface{})
		found := false
		for _, item := range list {
			if reflect.DeepEqual(item, gvk) {
				found = true
				break
			}
		}
		if !found {
			continue
		}
		out, err := e.output(s, nil, fieldPath)
		if err != nil {
			return "", err
		}
		if out == "" {
			if len(fieldPath) == 0 {
				return "", fmt.Errorf("template: plaintext: error calling index: index out of range: -1")
			}
			return "", explainError(fmt.Sprintf("error: field \"%v\" does not exist", fieldPath[len(fieldPath)-1]))
		}
		return out, nil
	}
	return "", nil
}

// resolveRef follows a "#/components/schemas/..." reference within the document.
func (e *explainer) resolveRef(ref interface{}) map[string]interface{} {
	s, ok := ref.(string)
	if !ok || !strings.HasPrefix(s, "#") {
		return nil
	}
	cur := e.doc
	for _, k := range strings.Split(strings.TrimPrefix(s, "#"), "/") {
		if k == "" {
			continue
		}
		next, ok := cur[k].(map[string]interface{})
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

func copyHistory(h map[string]bool, ref string) map[string]bool {
	out := make(map[string]bool, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out[ref] = true
	return out
}

// output is the "output" template: follow the field path, then print the description and the field list.
func (e *explainer) output(sch map[string]interface{}, history map[string]bool, fieldPath []string) (string, error) {
	ref, _ := sch["$ref"].(string)
	next := copyHistory(history, ref)
	resolved := e.resolveRef(ref)
	if resolved == nil {
		resolved = sch
	}
	var b strings.Builder
	switch {
	case len(fieldPath) == 0:
		b.WriteString("DESCRIPTION:\n")
		desc := e.description(resolved)
		if desc == "" {
			desc = "<empty>"
		}
		b.WriteString(indent(4, wrapString(desc, 76)))
		b.WriteString("\n")
		if ext := externalDocs(resolved); ext != "" {
			b.WriteString("\n")
			b.WriteString(ext)
		}
		if fl := e.fieldList(resolved, 1, nil); fl != "" {
			b.WriteString("FIELDS:\n")
			b.WriteString(fl)
		}
	case ref != "" && history[ref]:
		// A cycle: nothing.
	case truthy(resolved["properties"]) && truthy(asMap(resolved["properties"])[fieldPath[0]]):
		sub := asMap(asMap(resolved["properties"])[fieldPath[0]])
		if len(fieldPath) == 1 {
			fmt.Fprintf(&b, "FIELD: %s <%s>\n", fieldPath[0], e.typeGuess(sub))
			b.WriteString(extractEnum(sub, true, -1, 0))
			b.WriteString("\n")
			b.WriteString("\n")
		}
		out, err := e.output(sub, map[string]bool{}, fieldPath[1:])
		if err != nil {
			return "", err
		}
		b.WriteString(out)
	case truthy(resolved["items"]):
		out, err := e.output(asMap(resolved["items"]), next, fieldPath)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
	case truthy(resolved["additionalProperties"]) && !isBool(resolved["additionalProperties"]):
		out, err := e.output(asMap(resolved["additionalProperties"]), next, fieldPath)
		if err != nil {
			return "", err
		}
		b.WriteString(out)
	default:
		allOf, _ := resolved["allOf"].([]interface{})
		for _, sub := range allOf {
			out, err := e.output(asMap(sub), next, fieldPath)
			if err != nil {
				return "", err
			}
			if out != "" {
				b.WriteString(out)
				break
			}
		}
	}
	return b.String(), nil
}

// description is the "description" template: the schema's description and those of its allOf, items and
// additionalProperties, each followed by a newline.
func (e *explainer) description(sch map[string]interface{}) string {
	s := e.resolveRef(sch["$ref"])
	if s == nil {
		s = sch
	}
	if !truthy(s) {
		return ""
	}
	var b strings.Builder
	if truthy(s["description"]) {
		fmt.Fprint(&b, s["description"])
		b.WriteString("\n")
	}
	allOf, _ := s["allOf"].([]interface{})
	for _, sub := range allOf {
		b.WriteString(e.description(asMap(sub)))
	}
	if truthy(s["items"]) {
		b.WriteString(e.description(asMap(s["items"])))
	}
	if truthy(s["additionalProperties"]) && !isBool(s["additionalProperties"]) {
		b.WriteString(e.description(asMap(s["additionalProperties"])))
	}
	return b.String()
}

func externalDocs(sch map[string]interface{}) string {
	ed := sch["externalDocs"]
	if !truthy(ed) {
		return ""
	}
	m := asMap(ed)
	var b strings.Builder
	b.WriteString("EXTERNAL DOCS:\n")
	if truthy(m["description"]) {
		b.WriteString(indent(4, wrapString(fmt.Sprint(m["description"]), 76)))
		b.WriteString("\n")
	}
	if truthy(m["url"]) {
		b.WriteString(indent(4, "URL: "+fmt.Sprint(m["url"])))
		b.WriteString("\n")
	}
	return b.String()
}

// fieldList is the "fieldList" template: each property as "name <type>" with its description (or, with
// --recursive, only the names, nested).
func (e *explainer) fieldList(sch map[string]interface{}, level int, history map[string]bool) string {
	ref, _ := sch["$ref"].(string)
	if ref != "" && history[ref] {
		return ""
	}
	next := copyHistory(history, ref)
	resolved := e.resolveRef(ref)
	if resolved == nil {
		resolved = sch
	}
	var b strings.Builder
	props := asMap(resolved["properties"])
	for _, name := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(e.fieldDetail(name, resolved, e.recursive, level))
		if e.recursive && (e.maxDepth == 0 || level < e.maxDepth) {
			b.WriteString(e.fieldList(asMap(props[name]), level+1, next))
		}
	}
	allOf, _ := resolved["allOf"].([]interface{})
	for _, sub := range allOf {
		b.WriteString(e.fieldList(asMap(sub), level, next))
	}
	if truthy(resolved["items"]) {
		b.WriteString(e.fieldList(asMap(resolved["items"]), level, next))
	}
	if truthy(resolved["additionalProperties"]) && !isBool(resolved["additionalProperties"]) {
		b.WriteString(e.fieldList(asMap(resolved["additionalProperties"]), level, next))
	}
	return b.String()
}

func (e *explainer) fieldDetail(name string, parent map[string]interface{}, short bool, level int) string {
	ind := level * 2
	field := asMap(asMap(parent["properties"])[name])
	var b strings.Builder
	b.WriteString(indent(ind, name))
	b.WriteString("\t<")
	b.WriteString(e.typeGuess(field))
	b.WriteString(">")
	if req, ok := parent["required"].([]interface{}); ok {
		for _, r := range req {
			if reflect.DeepEqual(r, name) {
				b.WriteString(" -required-")
				break
			}
		}
	}
	b.WriteString(extractEnum(field, false, 4, ind))
	b.WriteString("\n")
	if !short {
		desc := "<no description>"
		if truthy(field["description"]) {
			desc = fmt.Sprint(field["description"])
		}
		b.WriteString(indent(ind+2, wrapString(desc, 78-ind)))
		b.WriteString("\n")
		if ed := asMap(field["externalDocs"]); truthy(field["externalDocs"]) {
			b.WriteString("\n")
			b.WriteString(indent(ind+2, "EXTERNAL DOCS:"))
			b.WriteString("\n")
			if truthy(ed["description"]) {
				b.WriteString(indent(ind+4, wrapString(fmt.Sprint(ed["description"]), 76-ind)))
				b.WriteString("\n")
			}
			if truthy(ed["url"]) {
				b.WriteString(indent(ind+4, "URL: "+fmt.Sprint(ed["url"])))
				b.WriteString("\n")
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// typeGuess is the "typeGuess" template: []T, map[string]T, a $ref's short name, or the type.
func (e *explainer) typeGuess(sch map[string]interface{}) string {
	if !truthy(sch) {
		return ""
	}
	switch {
	case truthy(sch["items"]):
		return "[]" + e.typeGuess(asMap(sch["items"]))
	case truthy(sch["additionalProperties"]) && !isBool(sch["additionalProperties"]):
		return "map[string]" + e.typeGuess(asMap(sch["additionalProperties"]))
	case truthy(sch["allOf"]) && !truthy(sch["properties"]) && len(sch["allOf"].([]interface{})) == 1:
		return e.typeGuess(asMap(sch["allOf"].([]interface{})[0]))
	case truthy(sch["$ref"]):
		ref := fmt.Sprint(sch["$ref"])
		refSchema := e.resolveRef(ref)
		if !truthy(refSchema) || !truthy(refSchema["type"]) || refSchema["type"] == "object" {
			parts := strings.Split(ref, "/")
			name := parts[len(parts)-1]
			dots := strings.Split(name, ".")
			if last := dots[len(dots)-1]; last != "" {
				return last
			}
			return "Object"
		}
		return fmt.Sprint(refSchema["type"])
	}
	if sch["type"] == "object" {
		return "Object"
	}
	if truthy(sch["type"]) {
		return fmt.Sprint(sch["type"])
	}
	return "Object"
}

// extractEnum is the "extractEnum" template.
func extractEnum(sch map[string]interface{}, long bool, limit, indentAmount int) string {
	enum, _ := sch["enum"].([]interface{})
	if len(enum) == 0 {
		return ""
	}
	var b strings.Builder
	if !long {
		b.WriteString("\n")
		b.WriteString(strings.Repeat(" ", indentAmount))
		b.WriteString("enum: ")
	} else {
		b.WriteString("ENUM:")
	}
	for i, el := range enum {
		if limit > -1 && i >= limit {
			b.WriteString(", ....")
			break
		}
		if i > 0 && !long {
			b.WriteString(", ")
		} else if long {
			b.WriteString("\n    ")
		}
		if s, ok := el.(string); ok && s == "" {
			b.WriteString(`""`)
		} else if el == nil {
			b.WriteString("<no value>")
		} else {
			fmt.Fprint(&b, el)
		}
	}
	return b.String()
}

// indent is the template's indent: the amount of spaces before the text and after every newline in it.
func indent(amount int, s string) string {
	pad := strings.Repeat(" ", amount)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// wrapString is github.com/mitchellh/go-wordwrap's WrapString (v1.0.1), the explain template's wrap: breaks
// at white space only, so long words stay whole.
func wrapString(s string, limit int) string {
	if limit <= 0 {
		return s
	}
	lim := uint(limit)
	buf := &bytes.Buffer{}
	var current uint
	var wordBuf, spaceBuf bytes.Buffer
	var wordBufLen, spaceBufLen uint
	// flushWord ends the pending word: its spaces and itself go on the current line.
	flushWord := func() {
		current += spaceBufLen + wordBufLen
		_, _ = spaceBuf.WriteTo(buf)
		spaceBufLen = 0
		_, _ = wordBuf.WriteTo(buf)
		wordBufLen = 0
	}
	for _, char := range s {
		switch {
		case char == '\n':
			if wordBuf.Len() == 0 {
				if current+spaceBufLen > lim {
					current = 0
				} else {
					current += spaceBufLen
					_, _ = spaceBuf.WriteTo(buf)
				}
				spaceBuf.Reset()
				spaceBufLen = 0
			} else {
				flushWord()
			}
			buf.WriteRune(char)
			current = 0
		case unicode.IsSpace(char) && char != 0xA0:
			if spaceBuf.Len() == 0 || wordBuf.Len() > 0 {
				flushWord()
			}
			spaceBuf.WriteRune(char)
			spaceBufLen++
		default:
			wordBuf.WriteRune(char)
			wordBufLen++
			if current+wordBufLen+spaceBufLen > lim && wordBufLen < lim {
				buf.WriteRune('\n')
				current = 0
				spaceBuf.Reset()
				spaceBufLen = 0
			}
		}
	}
	if wordBuf.Len() == 0 {
		if current+spaceBufLen <= lim {
			_, _ = spaceBuf.WriteTo(buf)
		}
	} else {
		flushWord()
	}
	return buf.String()
}
