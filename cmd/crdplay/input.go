package main

import (
	"os"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// file is one input file, read whole.
type file struct {
	name, text string
	// unparsed counts the documents readCRDs found not to be YAML: the evaluation places their errors.
	unparsed int
}

// readFile reads one named file whole.
func readFile(name string) (*file, *Diagnostic) {
	b, err := os.ReadFile(name)
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(*os.PathError); ok {
			msg = pe.Err.Error()
		}
		return nil, &Diagnostic{Position: Position{File: name}, Severity: "error", Type: "UnreadableFile", Input: true,
			Message: "cannot read the file: " + msg}
	}
	return &file{name: name, text: string(b)}, nil
}

// part is where one object file lies in the object text the evaluation gets.
type part struct {
	file  string
	start int // the file's first line in the joined text
}

// joinObjects puts the object files one after the other, each its own documents ("---" between them), and
// returns the text with where each file starts in it.
func joinObjects(files []*file) (string, []part) {
	var b strings.Builder
	var parts []part
	line := 1
	for _, f := range files {
		if b.Len() > 0 {
			b.WriteString("---\n")
			line++
		}
		text := f.text
		if text != "" && !strings.HasSuffix(text, "\n") && !strings.HasSuffix(text, "\r") {
			text += "\n"
		}
		parts = append(parts, part{file: f.name, start: line})
		b.WriteString(text)
		line += lineBreaks(text)
	}
	return b.String(), parts
}

// lineBreaks counts line breaks as the playground numbers lines: "\r\n", "\r" and "\n" each end one.
func lineBreaks(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			n++
		case '\r':
			n++
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		}
	}
	return n
}

// locate turns a line of the joined object text into its file and line there.
func locate(parts []part, line int) (string, int) {
	for i := len(parts) - 1; i >= 0; i-- {
		if line >= parts[i].start {
			return parts[i].file, line - parts[i].start + 1
		}
	}
	if len(parts) > 0 {
		return parts[0].file, line
	}
	return "", line
}

// doc is one YAML document of a CRD file.
type doc struct {
	file       *file
	start, end int    // its lines in the file
	src        string // its text
}

// splitDocs splits a text at "---" lines as kubectl does (apimachinery's YAMLReader), which is also how the
// playground numbers the documents. Documents of only blanks and comments are dropped.
func splitDocs(f *file) []doc {
	lines := splitLines(f.text)
	var out []doc
	start := 1
	flush := func(end int) {
		if end < start {
			return
		}
		src := strings.Join(lines[start-1:end], "")
		if hasContent(src) {
			out = append(out, doc{file: f, start: start, end: end, src: src})
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "---") {
			if rest := strings.TrimSpace(l[3:]); rest == "" || rest[0] == '#' {
				flush(i)
				start = i + 2
			}
		}
	}
	flush(len(lines))
	return out
}

// splitLines splits s after each line break, counted as the playground counts them ("\r\n", "\r", "\n").
func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			fallthrough
		case '\n':
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func hasContent(src string) bool {
	for _, l := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return true
		}
	}
	return false
}

// firstLine is the document's first line of content: where problems of the whole document go.
func (d doc) firstLine() int {
	for i, l := range strings.Split(d.src, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "%") {
			return d.start + i
		}
	}
	return d.start
}

// at is the position of the key at path in the document (metadata, name), or of the document's first line
// when the text does not have it.
func (d doc) at(path ...string) Position {
	p := Position{File: d.file.name, Line: d.firstLine(), Column: 1}
	var root yaml.Node
	if yaml.Unmarshal([]byte(d.src), &root) != nil || len(root.Content) == 0 {
		return p
	}
	n := root.Content[0]
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return p
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				p = Position{File: d.file.name, Line: d.start + n.Content[i].Line - 1, Column: n.Content[i].Column}
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return p
		}
		n = next
	}
	return p
}

// itemLine is the line of items[i] of a List document, or of the document's first line when the text does
// not have it.
func (d doc) itemLine(i int) int {
	var root yaml.Node
	if yaml.Unmarshal([]byte(d.src), &root) == nil && len(root.Content) > 0 && root.Content[0].Kind == yaml.MappingNode {
		m := root.Content[0]
		for k := 0; k+1 < len(m.Content); k += 2 {
			if items := m.Content[k+1]; m.Content[k].Value == "items" && items.Kind == yaml.SequenceNode && i < len(items.Content) {
				return d.start + items.Content[i].Line - 1
			}
		}
	}
	return d.firstLine()
}

// crdDoc is a document of a CRD file that is a CRD: what the checks here need of it, read leniently (a field
// of the wrong type is the API's to report).
type crdDoc struct {
	doc
	name, group, kind, listKind string
	versions                    []string
}

// readCRDs finds the CRDs of a CRD input file, and counts the documents that are not YAML, which the
// evaluation places. Other documents (a bundle's Namespaces, RBAC, admission policies) are the
// evaluation's to list as not checked.
func readCRDs(f *file) ([]crdDoc, int) {
	var crds []crdDoc
	unparsed := 0
	for _, d := range splitDocs(f) {
		var m map[string]any
		if yamlUnmarshal(d.src, &m) != nil {
			unparsed++
			continue
		}
		objs := []map[string]any{m}
		if str(m, "apiVersion") == "v1" && str(m, "kind") == "List" {
			// kubectl get crds -o yaml: the items are the CRDs.
			objs = nil
			items, _ := m["items"].([]any)
			for _, it := range items {
				if im, ok := it.(map[string]any); ok {
					objs = append(objs, im)
				}
			}
		}
		for _, m := range objs {
			apiVersion, kind := str(m, "apiVersion"), str(m, "kind")
			if kind != "CustomResourceDefinition" || !strings.HasPrefix(apiVersion, "apiextensions.k8s.io/") {
				continue
			}
			spec, _ := m["spec"].(map[string]any)
			names, _ := spec["names"].(map[string]any)
			c := crdDoc{doc: d, name: str(m, "metadata", "name"), group: str(spec, "group"), kind: str(names, "kind"), listKind: str(names, "listKind")}
			vs, _ := spec["versions"].([]any)
			for _, v := range vs {
				if v, ok := v.(map[string]any); ok {
					c.versions = append(c.versions, str(v, "name"))
				}
			}
			crds = append(crds, c)
		}
	}
	return crds, unparsed
}

// yamlUnmarshal reads a document as the API's decoder does (YAML to JSON first).
func yamlUnmarshal(src string, v any) error { return sigsyaml.Unmarshal([]byte(src), v) }

// str is the string at path in m, or "".
func str(m map[string]any, path ...string) string {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

// definesGroup reports whether one of crds is of apiVersion's group.
func definesGroup(crds []crdDoc, apiVersion string) bool {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group = ""
	}
	for _, c := range crds {
		if c.group == group {
			return true
		}
	}
	return false
}

// defines reports whether one of crds defines kind in group/version (or its List kind).
func defines(crds []crdDoc, apiVersion, kind string) bool {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	for _, c := range crds {
		if c.group != group || (c.kind != kind && c.listKind != kind && c.kind+"List" != kind) {
			continue
		}
		for _, v := range c.versions {
			if v == version {
				return true
			}
		}
	}
	return false
}
