package oraclecase

// Normalisation of volatile response fields so recorded outputs are
// reproducible run to run. Only values that the server generates from the
// clock, etcd revision or a random source are replaced; everything else is
// kept byte-for-byte (numbers keep their exact text). This must match the
// oracle's normalize.go exactly, or every expected file would differ.

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// etcd revisions leak into some storage error messages
var revisionRe = regexp.MustCompile(`revision=\d+`)

const (
	phTimestamp = "<timestamp>"
	phRV        = "<resourceVersion>"
	phUID       = "<uid>"
	phContinue  = "<continue>"
	phAge       = "<age>"
)

// keys whose non-empty string value is always server-generated
var volatileKeys = map[string]string{
	"creationTimestamp":  phTimestamp,
	"deletionTimestamp":  phTimestamp,
	"lastTransitionTime": phTimestamp,
	"lastUpdateTime":     phTimestamp,
	"lastHeartbeatTime":  phTimestamp,
	"resourceVersion":    phRV,
	"uid":                phUID,
	"continue":           phContinue,
}

// decodeJSON decodes the first JSON value in data, keeping numbers as
// json.Number so that they are re-encoded with their original text.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// encodeJSON is the expected files' format: two-space indent, sorted map
// keys, no HTML escaping, trailing newline.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return buf.Bytes()
}

// NormalizeJSON returns a JSON response body normalised and formatted the
// way the expected files record bodies (the oracle's `normalize` command):
// server-generated timestamps, resourceVersions, uids, continue tokens, Table
// ages and etcd revisions become placeholders; managedFields and Status
// causes get a reproducible order; the result is indented with sorted keys.
func NormalizeJSON(data []byte) ([]byte, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	return encodeJSON(normalize(v)), nil
}

func normalize(v any) any {
	v = normalizeValue(v, "")
	if m, ok := v.(map[string]any); ok {
		switch m["kind"] {
		case "Table":
			normalizeTable(m)
		case "Status":
			sortCauses(m)
		}
	}
	return v
}

// sortCauses orders details.causes of a Status by (field, message) and
// rebuilds the "... is invalid: [a, b]" message in the same order. Upstream
// produces these lists in Go map iteration order for some validators (e.g.
// OpenAPI value validation of sibling properties), so the raw order is not
// reproducible. The message is only rewritten when it is exactly the
// aggregate of the causes, so nothing else can be changed by accident.
func sortCauses(m map[string]any) {
	details, _ := m["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	if len(causes) < 2 {
		return
	}
	type c struct {
		field, msg string
		raw        any
	}
	cs := make([]c, 0, len(causes))
	for _, x := range causes {
		xm, ok := x.(map[string]any)
		if !ok {
			return
		}
		f, _ := xm["field"].(string)
		msg, _ := xm["message"].(string)
		cs = append(cs, c{f, msg, x})
	}
	join := func(list []c) string {
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = x.field + ": " + x.msg
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	before := join(cs)
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].field != cs[j].field {
			return cs[i].field < cs[j].field
		}
		return cs[i].msg < cs[j].msg
	})
	for i := range cs {
		causes[i] = cs[i].raw
	}
	if msg, ok := m["message"].(string); ok && strings.HasSuffix(msg, before) {
		m["message"] = strings.TrimSuffix(msg, before) + join(cs)
	}
}

func normalizeValue(v any, parentKey string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if ph, ok := volatileKeys[k]; ok {
				if s, isStr := child.(string); isStr && s != "" {
					t[k] = ph
					continue
				}
			}
			if parentKey == "managedFields" && k == "time" {
				if s, isStr := child.(string); isStr && s != "" {
					t[k] = phTimestamp
					continue
				}
			}
			t[k] = normalizeValue(child, k)
			if k == "managedFields" {
				sortManagedFields(t[k])
			}
		}
		return t
	case []any:
		for i := range t {
			// list elements inherit the key of the list (so managedFields[i].time works)
			t[i] = normalizeValue(t[i], parentKey)
		}
		return t
	case string:
		if strings.Contains(t, "revision=") {
			return revisionRe.ReplaceAllString(t, "revision=<revision>")
		}
		return t
	default:
		return v
	}
}

// Cells of "date" columns (e.g. the default Age column) are rendered by the
// server as a duration relative to now ("3s"), so they are replaced.
func normalizeTable(m map[string]any) {
	cols, _ := m["columnDefinitions"].([]any)
	var dateCols []int
	for i, c := range cols {
		cm, _ := c.(map[string]any)
		if cm == nil {
			continue
		}
		if typ, _ := cm["type"].(string); typ == "date" {
			dateCols = append(dateCols, i)
		} else if f, _ := cm["format"].(string); f == "date" {
			// The oracle asserts name is a string here and would crash on
			// anything else; treating a non-string name as "not Age" gives
			// the same output wherever the oracle gives one.
			if name, _ := cm["name"].(string); strings.EqualFold(name, "age") {
				dateCols = append(dateCols, i)
			}
		}
	}
	rows, _ := m["rows"].([]any)
	for _, r := range rows {
		rm, _ := r.(map[string]any)
		if rm == nil {
			continue
		}
		cells, _ := rm["cells"].([]any)
		for _, i := range dateCols {
			if i < len(cells) {
				if s, ok := cells[i].(string); ok && s != "<unknown>" && s != "" {
					cells[i] = phAge
				}
			}
		}
	}
}

// Upstream orders managedFields by (operation, time in seconds, manager,
// apiVersion, subresource). With the time normalised away, entries written
// in different seconds in one run and the same second in another would swap,
// so they are re-sorted by the remaining keys (stable).
func sortManagedFields(v any) {
	list, ok := v.([]any)
	if !ok {
		return
	}
	key := func(x any) string {
		m, _ := x.(map[string]any)
		get := func(k string) string { s, _ := m[k].(string); return s }
		return get("operation") + "\x00" + get("manager") + "\x00" + get("apiVersion") + "\x00" + get("subresource")
	}
	sort.SliceStable(list, func(i, j int) bool { return key(list[i]) < key(list[j]) })
}
