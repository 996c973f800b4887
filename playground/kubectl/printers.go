package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// newTabWriter is cli-runtime's printers.GetNewTabWriter: minwidth 6, tabwidth 4, padding 3, spaces.
// (kubectl uses liggitt/tabwriter, text/tabwriter plus remembered widths across flushes; kubectl resets them
// between resource types, and within one flush the two are the same.)
func newTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
}

// table is a meta.k8s.io Table as kubectl decodes it.
type table struct {
	Columns []tableColumn `json:"columnDefinitions"`
	Rows    []tableRow    `json:"rows"`
}

type tableColumn struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Format   string `json:"format"`
	Priority int32  `json:"priority"`
}

type tableRow struct {
	Cells  []interface{}   `json:"cells"`
	Object json.RawMessage `json:"object"`
}

// decodeTable reads a response as a Table; ok is false when it is not one (kubectl then falls back to
// printing NAME and AGE from object metadata).
func decodeTable(body []byte) (*table, bool) {
	var probe struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if json.Unmarshal(body, &probe) != nil || probe.Kind != "Table" ||
		(probe.APIVersion != "meta.k8s.io/v1" && probe.APIVersion != "meta.k8s.io/v1beta1") {
		return nil, false
	}
	var t table
	// Cells are decoded as kubectl's unstructured decoder does: integers as int64, other numbers as float64,
	// so that fmt.Sprint prints them the same way.
	var raw struct {
		Columns []tableColumn `json:"columnDefinitions"`
		Rows    []struct {
			Cells  json.RawMessage `json:"cells"`
			Object json.RawMessage `json:"object"`
		} `json:"rows"`
	}
	if json.Unmarshal(body, &raw) != nil {
		return nil, false
	}
	t.Columns = raw.Columns
	for _, r := range raw.Rows {
		var cells []interface{}
		if len(r.Cells) > 0 {
			if err := utiljson.Unmarshal(r.Cells, &cells); err != nil {
				return nil, false
			}
		}
		t.Rows = append(t.Rows, tableRow{Cells: cells, Object: r.Object})
	}
	return &t, true
}

// rowMeta is the metadata of a row's object (kubectl asks for includeObject=Metadata by default).
type rowMeta struct {
	Metadata struct {
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
}

// printOptions are cli-runtime's printers.PrintOptions that kubectl get uses.
type printOptions struct {
	noHeaders     bool
	wide          bool
	withNamespace bool
	withKind      bool
	kind          schema.GroupKind
	showLabels    bool
	columnLabels  []string
}

// tablePrinter is cli-runtime's HumanReadablePrinter for server-side tables: it prints the header once per
// set of columns and keeps writing rows to the same tab writer.
type tablePrinter struct {
	opts           printOptions
	lastColumns    []tableColumn
	printedHeaders bool
}

func columnsEqual(a, b []tableColumn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (p *tablePrinter) printTable(t *table, w io.Writer) {
	local := p.opts
	if p.printedHeaders && (len(t.Columns) == 0 || columnsEqual(t.Columns, p.lastColumns)) {
		local.noHeaders = true
	}
	if len(t.Columns) == 0 {
		t.Columns = p.lastColumns
	} else if !columnsEqual(t.Columns, p.lastColumns) {
		p.lastColumns = t.Columns
		p.printedHeaders = false
	}
	if len(t.Rows) > 0 {
		p.printedHeaders = true
	}
	decorateTable(t, local)
	writeTable(t, w, local)
}

// decorateTable adds the NAMESPACE, label and LABELS columns and the kind prefix of names.
func decorateTable(t *table, o printOptions) {
	width := len(t.Columns) + len(o.columnLabels)
	if o.withNamespace {
		width++
	}
	if o.showLabels {
		width++
	}
	columns := t.Columns
	nameColumn := -1
	if o.withKind && o.kind.Kind != "" {
		for i := range columns {
			if columns[i].Format == "name" && columns[i].Type == "string" {
				nameColumn = i
				break
			}
		}
	}
	if width != len(t.Columns) {
		columns = make([]tableColumn, 0, width)
		if o.withNamespace {
			columns = append(columns, tableColumn{Name: "Namespace", Type: "string"})
		}
		columns = append(columns, t.Columns...)
		for _, l := range formatLabelHeaders(o.columnLabels) {
			columns = append(columns, tableColumn{Name: l, Type: "string"})
		}
		if o.showLabels {
			columns = append(columns, tableColumn{Name: "Labels", Type: "string"})
		}
	}
	includeLabels := len(o.columnLabels) > 0 || o.showLabels
	if includeLabels || o.withNamespace || nameColumn != -1 {
		for i := range t.Rows {
			row := &t.Rows[i]
			if nameColumn != -1 && nameColumn < len(row.Cells) {
				row.Cells[nameColumn] = fmt.Sprintf("%s/%v", strings.ToLower(groupKindString(o.kind)), row.Cells[nameColumn])
			}
			var m *rowMeta
			if len(row.Object) > 0 && string(row.Object) != "null" {
				var rm rowMeta
				if json.Unmarshal(row.Object, &rm) == nil {
					m = &rm
				}
			}
			if m == nil {
				if o.withNamespace {
					row.Cells = append([]interface{}{nil}, row.Cells...)
				}
				for j := 0; j < width-len(row.Cells); j++ {
					row.Cells = append(row.Cells, nil)
				}
				continue
			}
			if o.withNamespace {
				row.Cells = append([]interface{}{m.Metadata.Namespace}, row.Cells...)
			}
			if includeLabels {
				for _, key := range o.columnLabels {
					row.Cells = append(row.Cells, m.Metadata.Labels[key])
				}
				if o.showLabels {
					row.Cells = append(row.Cells, labels.FormatLabels(m.Metadata.Labels))
				}
			}
		}
	}
	t.Columns = columns
}

func groupKindString(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

func formatLabelHeaders(columnLabels []string) []string {
	out := make([]string, len(columnLabels))
	for i, l := range columnLabels {
		p := strings.Split(l, "/")
		out[i] = strings.ToUpper(p[len(p)-1])
	}
	return out
}

// writeTable is cli-runtime's printTable: visible columns (priority 0 unless wide), the upper-case header
// padded to the widest cell so that the tab writer's widths are final from the first row, cells truncated at
// line breaks and escaped.
func writeTable(t *table, w io.Writer, o printOptions) {
	n := len(t.Columns)
	visible := func(i int) bool { return o.wide || t.Columns[i].Priority == 0 }
	var maxWidths []int
	if len(t.Rows) > 0 {
		maxWidths = make([]int, n)
		for _, row := range t.Rows {
			for i, cell := range row.Cells {
				if i >= n {
					break
				}
				if !visible(i) || cell == nil {
					continue
				}
				if l := len(cellString(cell)); l > maxWidths[i] {
					maxWidths[i] = l
				}
			}
		}
	}
	lastVisible := -1
	for i := range t.Columns {
		if visible(i) {
			lastVisible = i
		}
	}
	var buf bytes.Buffer
	if !o.noHeaders {
		if len(t.Rows) == 0 {
			return
		}
		first := true
		for i, c := range t.Columns {
			if !visible(i) {
				continue
			}
			if !first {
				buf.WriteByte('\t')
			}
			first = false
			name := strings.ToUpper(c.Name)
			buf.WriteString(name)
			if i != lastVisible && i < len(maxWidths) {
				if pad := maxWidths[i] - len(name); pad > 0 {
					buf.WriteString(strings.Repeat(" ", pad))
				}
			}
		}
		buf.WriteByte('\n')
	}
	padFirstRow := o.noHeaders && len(maxWidths) > 0
	for ri, row := range t.Rows {
		first := true
		for i, cell := range row.Cells {
			if i >= n {
				break
			}
			if !visible(i) {
				continue
			}
			if !first {
				buf.WriteByte('\t')
			}
			first = false
			cellLen := 0
			if cell != nil {
				s := cellString(cell)
				cellLen = len(s)
				writeCell(&buf, s)
			}
			if padFirstRow && ri == 0 && i != lastVisible && i < len(maxWidths) {
				if pad := maxWidths[i] - cellLen; pad > 0 {
					buf.WriteString(strings.Repeat(" ", pad))
				}
			}
		}
		buf.WriteByte('\n')
	}
	_, _ = w.Write(buf.Bytes())
}

func cellString(cell interface{}) string {
	if s, ok := cell.(string); ok {
		return s
	}
	return fmt.Sprint(cell)
}

// writeCell writes a cell value: cut at the first line break with "...", terminal escapes made visible.
func writeCell(buf *bytes.Buffer, s string) {
	if i := strings.IndexAny(s, "\f\n\r"); i >= 0 {
		buf.WriteString(escapeTerminal(s[:i]))
		buf.WriteString("...")
		return
	}
	buf.WriteString(escapeTerminal(s))
}

var terminalEscaper = strings.NewReplacer("\x1b", "^[", "\r", "\\r")

func escapeTerminal(s string) string {
	if !strings.ContainsAny(s, "\f\n\r\x1b") {
		return s
	}
	return terminalEscaper.Replace(s)
}

// printJSON is the JSON printer: four-space indentation, HTML characters escaped as encoding/json does.
func printJSON(w io.Writer, obj map[string]interface{}) error {
	data, err := json.MarshalIndent(obj, "", "    ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	_, err = w.Write(data)
	return err
}

// printYAML is the YAML printer (sigs.k8s.io/yaml over the JSON form).
func printYAML(w io.Writer, obj map[string]interface{}) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// omitManagedFields drops metadata.managedFields, as the JSON and YAML printers do unless
// --show-managed-fields is given.
func omitManagedFields(obj map[string]interface{}) map[string]interface{} {
	u := (&unstructured.Unstructured{Object: obj}).DeepCopy()
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	return u.Object
}

// printList prints objects as the JSON or YAML printer prints a v1 List of them.
func printList(w io.Writer, format string, items []*unstructured.Unstructured, showManagedFields bool) error {
	objs := make([]interface{}, 0, len(items))
	for _, it := range items {
		obj := it.Object
		if !showManagedFields {
			obj = omitManagedFields(obj)
		}
		objs = append(objs, obj)
	}
	list := map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]interface{}{"resourceVersion": ""},
		"items":      objs,
	}
	if strings.ToLower(format) == "json" {
		return printJSON(w, list)
	}
	return printYAML(w, list)
}

// printName is the name printer: kind.group/name and the operation ("created", "configured"...).
func printName(w io.Writer, gk schema.GroupKind, name, operation string, short bool) {
	if name == "" {
		name = "<unknown>"
	}
	if operation != "" {
		operation = " " + operation
	}
	if short {
		operation = ""
	}
	if gk.Group == "" {
		fmt.Fprintf(w, "%s/%s%s\n", strings.ToLower(gk.Kind), name, operation)
		return
	}
	fmt.Fprintf(w, "%s.%s/%s%s\n", strings.ToLower(gk.Kind), gk.Group, name, operation)
}

// objectGroupKind is the group and kind of an object as printers read them from apiVersion and kind.
func objectGroupKind(u *unstructured.Unstructured) schema.GroupKind {
	return u.GroupVersionKind().GroupKind()
}

// outputPrinter prints objects for the commands that take kubectl's standard -o flags
// (json|yaml|name|""), with the name printer's operation.
type outputPrinter struct {
	format            string
	operation         string
	showManagedFields bool
	yamlCount         int
}

// allowedFormats are the -o values of kubectl's standard PrintFlags, sorted as its error message lists them.
var allowedFormats = []string{"go-template", "go-template-file", "json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "kyaml", "name", "template", "templatefile", "yaml"}

// getAllowedFormats are kubectl get's -o values.
var getAllowedFormats = []string{"custom-columns", "custom-columns-file", "go-template", "go-template-file", "json", "jsonpath", "jsonpath-as-json", "jsonpath-file", "kyaml", "name", "template", "templatefile", "wide", "yaml"}

// checkFormat returns kubectl's error for an -o value no printer takes, and the playground's for formats
// kubectl has but the playground does not implement.
func checkFormat(format string, allowed []string) error {
	f := strings.ToLower(format)
	if i := strings.Index(f, "="); i >= 0 {
		f = f[:i]
	}
	switch f {
	case "", "json", "yaml", "name", "wide":
		for _, a := range allowed {
			if a == f || f == "" {
				return nil
			}
		}
	}
	for _, a := range allowed {
		if a == f {
			return &notSupportedError{what: fmt.Sprintf("-o %s", format)}
		}
	}
	sorted := append([]string(nil), allowed...)
	sort.Strings(sorted)
	return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: %s", format, strings.Join(sorted, ","))
}

func (p *outputPrinter) print(w io.Writer, u *unstructured.Unstructured) error {
	switch strings.ToLower(p.format) {
	case "json":
		obj := u.Object
		if !p.showManagedFields {
			obj = omitManagedFields(obj)
		}
		return printJSON(w, obj)
	case "yaml":
		p.yamlCount++
		if p.yamlCount > 1 {
			_, _ = io.WriteString(w, "---\n")
		}
		obj := u.Object
		if !p.showManagedFields {
			obj = omitManagedFields(obj)
		}
		return printYAML(w, obj)
	case "name":
		printName(w, objectGroupKind(u), u.GetName(), p.operation, true)
		return nil
	default:
		printName(w, objectGroupKind(u), u.GetName(), p.operation, false)
		return nil
	}
}

// withDryRun is PrintFlagsWithDryRunStrategy: the operation printed after the name.
func withDryRun(operation string, d dryRun) string {
	switch d {
	case dryRunClient:
		return operation + " (dry run)"
	case dryRunServer:
		return operation + " (server dry run)"
	}
	return operation
}

// noResourcesFound is what get and describe print when they found nothing to print, naming the
// namespace when every type asked for is namespaced.
func (k *kubectl) noResourcesFound(inNamespace bool) {
	if inNamespace {
		fmt.Fprintf(&k.errOut, "No resources found in %s namespace.\n", k.namespace)
		return
	}
	fmt.Fprintln(&k.errOut, "No resources found")
}

// notSupportedError is the playground's own error for kubectl features it does not emulate.
type notSupportedError struct{ what string }

func (e *notSupportedError) Error() string {
	return fmt.Sprintf("%s is not supported by the playground's kubectl", e.what)
}
