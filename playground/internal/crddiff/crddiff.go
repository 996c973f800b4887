// Package crddiff compares an old and a new CustomResourceDefinition and reports the changes that can break
// objects already stored or the clients that read them: the static half of an upgrade check. The rules are
// those of sigs.k8s.io/crdify (docs/validations.md), written here because crdify is not on the module proxy
// and the playground must stay small; the engine then shows which findings actually bite a stored object.
//
// Each finding names the field it is about twice: Field, the path of the schema keyword in the CRD text
// (spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.replicas.maximum), and ObjectPath, the
// field of the objects it constrains (spec.replicas). Versions are compared by name, old v1 with new v1.
//
// Severities follow crdify's defaults, where every validation runs with enforcement Error, except for the two
// widenings no stored object can fail (an enum value added, nullable allowed), which crdify's docs call
// possibly compatible and which are warnings here.
//
// Rules (Finding.Rule):
//
//	scope                 spec.scope changed (the API refuses it once the CRD is established)          error
//	storedVersionRemoval  a version stored objects may be in is gone from spec.versions                 error
//	existingFieldRemoval  a property of a version's schema is gone                                      error
//	enum                  values removed, or an enum added where there was none                         error
//	                      values added                                                                 warning
//	default               a default added, changed or removed                                           error
//	maximum, maxLength, maxItems, maxProperties   added, or lowered (exclusiveMaximum turned on counts)  error
//	minimum, minLength, minItems, minProperties   added, or raised (exclusiveMinimum turned on counts)   error
//	required              a field added to required                                                     error
//	type                  type changed                                                                  error
//	pattern               a pattern added or changed                                                    error
//	nullable              nullable turned off                                                           error
//	                      nullable turned on                                                           warning
//	xValidations          an x-kubernetes-validations rule added or changed                             error
//	preserveUnknownFields x-kubernetes-preserve-unknown-fields turned off                               error
package crddiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"crdplay/playground/internal/yamlpos"
)

// Severity is how serious a finding is.
type Severity string

// The severities a rule can have.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one change of the new CRD that can break stored objects or their clients.
type Finding struct {
	// Rule names the check (see the package documentation), as crdify names its validations.
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// Version is the CRD version the finding is about; empty for the whole CRD (scope).
	Version string `json:"version,omitempty"`
	// Field is the path of the finding in the CRD text: in the new CRD's text, or in the old one's when
	// InOld is set (what was removed is only there). List indexes are those of that text.
	Field string `json:"field"`
	// FieldSegs is Field as path segments, for yamlpos.Doc.LocateSegs: property names may hold dots.
	FieldSegs []yamlpos.Seg `json:"-"`
	// InOld is true when Field is in the old CRD's text: removals.
	InOld bool `json:"inOld,omitempty"`
	// ObjectPath is the field of the objects the finding is about, as upstream's field paths spell it
	// (spec.replicas), with [*] for any list index or map key (spec.ports[*].port); empty for the whole
	// object. Match it against an API error's cause with MatchObjectPath.
	ObjectPath string `json:"objectPath,omitempty"`
	Message    string `json:"message"`
	// CEL is the rule an xValidations finding is about: its failures name it by its message, or by "failed
	// rule: <rule>" without one.
	CEL *CELRule `json:"cel,omitempty"`
}

// CELRule is an x-kubernetes-validations rule as its failures name it.
type CELRule struct {
	Rule    string `json:"rule"`
	Message string `json:"message,omitempty"`
	// MessageExpression is true when the rule's message is computed: any failure at its field may be it.
	MessageExpression bool `json:"messageExpression,omitempty"`
}

// Compare returns the findings of the change from old to new, in a stable order: the CRD-wide rules first,
// then each version of new in its order, depth first through its schema. Nil CRDs compare as empty ones.
func Compare(old, new *apiextensionsv1.CustomResourceDefinition) []Finding {
	if old == nil {
		old = &apiextensionsv1.CustomResourceDefinition{}
	}
	if new == nil {
		new = &apiextensionsv1.CustomResourceDefinition{}
	}
	var out []Finding
	if old.Spec.Scope != "" && new.Spec.Scope != "" && old.Spec.Scope != new.Spec.Scope {
		out = append(out, finding("scope", Error, "", segs(yamlpos.K("spec"), yamlpos.K("scope")), false, "",
			fmt.Sprintf("scope changed from %s to %s: spec.scope is immutable once the CRD is established, so the API refuses the update",
				old.Spec.Scope, new.Spec.Scope)))
	}
	out = append(out, storedVersionRemoval(old, new)...)

	oldIndex := map[string]int{}
	for i, v := range old.Spec.Versions {
		oldIndex[v.Name] = i
	}
	for ni, nv := range new.Spec.Versions {
		oi, ok := oldIndex[nv.Name]
		if !ok {
			continue
		}
		ov := old.Spec.Versions[oi]
		if ov.Schema == nil || ov.Schema.OpenAPIV3Schema == nil || nv.Schema == nil || nv.Schema.OpenAPIV3Schema == nil {
			continue
		}
		w := &walker{version: nv.Name}
		w.node(ov.Schema.OpenAPIV3Schema, nv.Schema.OpenAPIV3Schema,
			schemaRoot(oi), schemaRoot(ni), "", map[*apiextensionsv1.JSONSchemaProps]bool{})
		out = append(out, w.out...)
	}
	return out
}

// schemaRoot is the path of version i's schema in a CRD's text.
func schemaRoot(i int) []yamlpos.Seg {
	return segs(yamlpos.K("spec"), yamlpos.K("versions"), yamlpos.I(i), yamlpos.K("schema"), yamlpos.K("openAPIV3Schema"))
}

func segs(s ...yamlpos.Seg) []yamlpos.Seg { return s }

func finding(rule string, sev Severity, version string, at []yamlpos.Seg, inOld bool, objectPath, msg string) Finding {
	return Finding{Rule: rule, Severity: sev, Version: version, Field: yamlpos.FormatSegs(at), FieldSegs: at,
		InOld: inOld, ObjectPath: objectPath, Message: msg}
}

// storedVersionRemoval reports the versions objects may be stored in that the new CRD no longer has: those
// in the old CRD's status.storedVersions, and its storage version, which a CRD created from the old text has
// there as soon as it is established. The API refuses such an update until a storage migration has
// rewritten the objects and status.storedVersions no longer lists the version.
func storedVersionRemoval(old, new *apiextensionsv1.CustomResourceDefinition) []Finding {
	kept := map[string]bool{}
	for _, v := range new.Spec.Versions {
		kept[v.Name] = true
	}
	var out []Finding
	seen := map[string]bool{}
	report := func(name string, at []yamlpos.Seg, why string) {
		if name == "" || kept[name] || seen[name] {
			return
		}
		seen[name] = true
		out = append(out, finding("storedVersionRemoval", Error, name, at, true, "",
			fmt.Sprintf("version %s is removed from spec.versions while %s: the API refuses the update until a storage migration removes %s from status.storedVersions",
				name, why, name)))
	}
	for i, v := range old.Spec.Versions {
		if v.Storage {
			report(v.Name, segs(yamlpos.K("spec"), yamlpos.K("versions"), yamlpos.I(i), yamlpos.K("name")), "it is the storage version")
		}
	}
	for i, name := range old.Status.StoredVersions {
		at := segs(yamlpos.K("status"), yamlpos.K("storedVersions"), yamlpos.I(i))
		for j, v := range old.Spec.Versions {
			if v.Name == name {
				at = segs(yamlpos.K("spec"), yamlpos.K("versions"), yamlpos.I(j), yamlpos.K("name"))
			}
		}
		report(name, at, "status.storedVersions lists it")
	}
	return out
}

// walker compares the schemas of one version.
type walker struct {
	version string
	out     []Finding
}

func (w *walker) add(rule string, sev Severity, at []yamlpos.Seg, inOld bool, objectPath, msg string) {
	w.out = append(w.out, finding(rule, sev, w.version, at, inOld, objectPath, msg))
}

// child extends an object path by a property name.
func child(obj, name string) string {
	if obj == "" {
		return name
	}
	return obj + "." + name
}

// what names an object path in messages.
func what(obj string) string {
	if obj == "" {
		return "the object"
	}
	return obj
}

// node compares one schema node present in both versions. onPath guards against a schema that refers to
// itself (impossible from YAML, possible from a Go caller).
func (w *walker) node(o, n *apiextensionsv1.JSONSchemaProps, op, np []yamlpos.Seg, obj string, onPath map[*apiextensionsv1.JSONSchemaProps]bool) {
	if onPath[o] || onPath[n] {
		return
	}
	onPath[o], onPath[n] = true, true
	defer delete(onPath, o)
	defer delete(onPath, n)

	at := func(key string) []yamlpos.Seg { return yamlpos.Append(np, yamlpos.K(key)) }
	atOld := func(key string) []yamlpos.Seg { return yamlpos.Append(op, yamlpos.K(key)) }

	if o.Type != n.Type {
		where := at("type")
		if n.Type == "" {
			where = np
		}
		w.add("type", Error, where, false, obj, fmt.Sprintf("type of %s changed from %s to %s", what(obj), typeName(o), typeName(n)))
		// The rest of the node means something else now: comparing its keywords would only add noise.
		return
	}

	w.enum(o, n, at("enum"), obj)
	w.defaults(o, n, at("default"), atOld("default"), obj)
	w.maxFloat("maximum", o.Maximum, n.Maximum, o.ExclusiveMaximum, n.ExclusiveMaximum, at("maximum"), at("exclusiveMaximum"), obj)
	w.minFloat("minimum", o.Minimum, n.Minimum, o.ExclusiveMinimum, n.ExclusiveMinimum, at("minimum"), at("exclusiveMinimum"), obj)
	w.maxInt("maxLength", o.MaxLength, n.MaxLength, at("maxLength"), obj)
	w.maxInt("maxItems", o.MaxItems, n.MaxItems, at("maxItems"), obj)
	w.maxInt("maxProperties", o.MaxProperties, n.MaxProperties, at("maxProperties"), obj)
	w.minInt("minLength", o.MinLength, n.MinLength, at("minLength"), obj)
	w.minInt("minItems", o.MinItems, n.MinItems, at("minItems"), obj)
	w.minInt("minProperties", o.MinProperties, n.MinProperties, at("minProperties"), obj)

	switch {
	case o.Pattern == n.Pattern, n.Pattern == "":
	case o.Pattern == "":
		w.add("pattern", Error, at("pattern"), false, obj, fmt.Sprintf("pattern %q added to %s", n.Pattern, what(obj)))
	default:
		w.add("pattern", Error, at("pattern"), false, obj, fmt.Sprintf("pattern of %s changed from %q to %q", what(obj), o.Pattern, n.Pattern))
	}

	switch {
	case o.Nullable && !n.Nullable:
		w.add("nullable", Error, atOld("nullable"), true, obj, fmt.Sprintf("nullable turned off for %s: null is no longer a valid value", what(obj)))
	case !o.Nullable && n.Nullable:
		w.add("nullable", Warning, at("nullable"), false, obj, fmt.Sprintf("nullable turned on for %s: clients may now read null", what(obj)))
	}

	if isTrue(o.XPreserveUnknownFields) && !isTrue(n.XPreserveUnknownFields) {
		w.add("preserveUnknownFields", Error, atOld("x-kubernetes-preserve-unknown-fields"), true, obj,
			fmt.Sprintf("x-kubernetes-preserve-unknown-fields turned off for %s: fields its schema does not declare are pruned", what(obj)))
	}

	oldRequired := map[string]bool{}
	for _, r := range o.Required {
		oldRequired[r] = true
	}
	for i, r := range n.Required {
		if !oldRequired[r] {
			w.add("required", Error, yamlpos.Append(np, yamlpos.K("required"), yamlpos.I(i)), false, child(obj, r),
				fmt.Sprintf("%s is now required", child(obj, r)))
		}
	}

	w.xValidations(o, n, np, obj)

	// Children: properties by name, then items and additionalProperties.
	for _, name := range sortedKeys(o.Properties) {
		ochild := o.Properties[name]
		nchild, ok := n.Properties[name]
		if !ok {
			w.add("existingFieldRemoval", Error, yamlpos.Append(op, yamlpos.K("properties"), yamlpos.K(name)), true, child(obj, name),
				fmt.Sprintf("field %s removed from the schema", child(obj, name)))
			continue
		}
		w.node(&ochild, &nchild, yamlpos.Append(op, yamlpos.K("properties"), yamlpos.K(name)),
			yamlpos.Append(np, yamlpos.K("properties"), yamlpos.K(name)), child(obj, name), onPath)
	}
	if o.Items != nil && o.Items.Schema != nil && n.Items != nil && n.Items.Schema != nil {
		w.node(o.Items.Schema, n.Items.Schema, yamlpos.Append(op, yamlpos.K("items")), yamlpos.Append(np, yamlpos.K("items")), obj+"[*]", onPath)
	}
	if o.AdditionalProperties != nil && o.AdditionalProperties.Schema != nil && n.AdditionalProperties != nil && n.AdditionalProperties.Schema != nil {
		w.node(o.AdditionalProperties.Schema, n.AdditionalProperties.Schema, yamlpos.Append(op, yamlpos.K("additionalProperties")),
			yamlpos.Append(np, yamlpos.K("additionalProperties")), obj+"[*]", onPath)
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

func typeName(p *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case p.Type != "":
		return p.Type
	case p.XIntOrString:
		return "int-or-string"
	}
	return "(none)"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// canonical is a JSON value in one spelling (sorted keys, no spaces), so that 1 and 1.0 or a reordered
// object compare equal. Values that do not parse keep their bytes.
func canonical(raw []byte) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(normalize(v))
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// normalize spells numbers by value: json.Number keeps "1.0" and "1" apart, which are the same value.
func normalize(v any) any {
	switch v := v.(type) {
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
		return v
	case map[string]any:
		for k, x := range v {
			v[k] = normalize(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = normalize(x)
		}
		return v
	}
	return v
}

func (w *walker) enum(o, n *apiextensionsv1.JSONSchemaProps, at []yamlpos.Seg, obj string) {
	if len(n.Enum) == 0 {
		return // an enum removed only widens
	}
	newVals := map[string]bool{}
	for _, v := range n.Enum {
		newVals[canonical(v.Raw)] = true
	}
	if len(o.Enum) == 0 {
		w.add("enum", Error, at, false, obj, fmt.Sprintf("enum %s added to %s, which had none", list(sortedKeys(newVals)), what(obj)))
		return
	}
	oldVals := map[string]bool{}
	for _, v := range o.Enum {
		oldVals[canonical(v.Raw)] = true
	}
	var removed, added []string
	for v := range oldVals {
		if !newVals[v] {
			removed = append(removed, v)
		}
	}
	for v := range newVals {
		if !oldVals[v] {
			added = append(added, v)
		}
	}
	slices.Sort(removed)
	slices.Sort(added)
	if len(removed) > 0 {
		w.add("enum", Error, at, false, obj, fmt.Sprintf("enum values %s removed from %s", list(removed), what(obj)))
	}
	if len(added) > 0 {
		w.add("enum", Warning, at, false, obj, fmt.Sprintf("enum values %s added to %s: clients may read values they do not know", list(added), what(obj)))
	}
}

func list(vals []string) string { return "[" + strings.Join(vals, ", ") + "]" }

func (w *walker) defaults(o, n *apiextensionsv1.JSONSchemaProps, at, atOld []yamlpos.Seg, obj string) {
	switch {
	case o.Default == nil && n.Default == nil:
	case o.Default == nil:
		w.add("default", Error, at, false, obj, fmt.Sprintf("default %s added to %s, which had none", canonical(n.Default.Raw), what(obj)))
	case n.Default == nil:
		w.add("default", Error, atOld, true, obj, fmt.Sprintf("default %s of %s removed", canonical(o.Default.Raw), what(obj)))
	case canonical(o.Default.Raw) != canonical(n.Default.Raw):
		w.add("default", Error, at, false, obj, fmt.Sprintf("default of %s changed from %s to %s", what(obj), canonical(o.Default.Raw), canonical(n.Default.Raw)))
	}
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// maxFloat reports a maximum added or lowered; the same maximum made exclusive is lower too.
func (w *walker) maxFloat(rule string, o, n *float64, oex, nex bool, at, atEx []yamlpos.Seg, obj string) {
	switch {
	case n == nil:
	case o == nil:
		w.add(rule, Error, at, false, obj, fmt.Sprintf("%s %s added to %s, which had none", rule, num(*n), what(obj)))
	case *n < *o:
		w.add(rule, Error, at, false, obj, fmt.Sprintf("%s of %s lowered from %s to %s", rule, what(obj), num(*o), num(*n)))
	case *n == *o && nex && !oex:
		w.add(rule, Error, atEx, false, obj, fmt.Sprintf("%s %s of %s made exclusive", rule, num(*n), what(obj)))
	}
}

// minFloat reports a minimum added or raised; the same minimum made exclusive is higher too.
func (w *walker) minFloat(rule string, o, n *float64, oex, nex bool, at, atEx []yamlpos.Seg, obj string) {
	switch {
	case n == nil:
	case o == nil:
		w.add(rule, Error, at, false, obj, fmt.Sprintf("%s %s added to %s, which had none", rule, num(*n), what(obj)))
	case *n > *o:
		w.add(rule, Error, at, false, obj, fmt.Sprintf("%s of %s raised from %s to %s", rule, what(obj), num(*o), num(*n)))
	case *n == *o && nex && !oex:
		w.add(rule, Error, atEx, false, obj, fmt.Sprintf("%s %s of %s made exclusive", rule, num(*n), what(obj)))
	}
}

func (w *walker) maxInt(rule string, o, n *int64, at []yamlpos.Seg, obj string) {
	switch {
	case n == nil:
	case o == nil:
		w.add(rule, Error, at, false, obj, fmt.Sprintf("%s %d added to %s, which had none", rule, *n, what(obj)))
	case *n < *o:
		w.add(rule, Error, at, false, obj, fmt.Sprintf("%s of %s lowered from %d to %d", rule, what(obj), *o, *n))
	}
}

func (w *walker) minInt(rule string, o, n *int64, at []yamlpos.Seg, obj string) {
	switch {
	case n == nil:
	case o == nil:
		w.add(rule, Error, at, false, obj, fmt.Sprintf("%s %d added to %s, which had none", rule, *n, what(obj)))
	case *n > *o:
		w.add(rule, Error, at, false, obj, fmt.Sprintf("%s of %s raised from %d to %d", rule, what(obj), *o, *n))
	}
}

// ruleKey identifies a validation rule by what it checks: its expression and whether it runs without an
// old value. Messages, reasons and field paths change what an error says, not what passes.
func ruleKey(r apiextensionsv1.ValidationRule) string {
	return r.Rule + "\x00" + strconv.FormatBool(isTrue(r.OptionalOldSelf))
}

// xValidations reports rules new has and old has not. A new rule at an index where old had a rule new no
// longer has is reported as that rule changed.
func (w *walker) xValidations(o, n *apiextensionsv1.JSONSchemaProps, np []yamlpos.Seg, obj string) {
	oldKeys := map[string]bool{}
	for _, r := range o.XValidations {
		oldKeys[ruleKey(r)] = true
	}
	newKeys := map[string]bool{}
	for _, r := range n.XValidations {
		newKeys[ruleKey(r)] = true
	}
	for i, r := range n.XValidations {
		if oldKeys[ruleKey(r)] {
			continue
		}
		at := yamlpos.Append(np, yamlpos.K("x-kubernetes-validations"), yamlpos.I(i), yamlpos.K("rule"))
		target := obj
		if fp := strings.TrimPrefix(r.FieldPath, "."); fp != "" && !strings.HasPrefix(r.FieldPath, "[") {
			target = child(obj, fp)
		}
		kind := "rule"
		if strings.Contains(r.Rule, "oldSelf") {
			kind = "transition rule (checked on updates, against the stored value)"
		}
		if i < len(o.XValidations) && !newKeys[ruleKey(o.XValidations[i])] {
			w.add("xValidations", Error, at, false, target, fmt.Sprintf("x-kubernetes-validations %s of %s changed from %q to %q",
				kind, what(obj), o.XValidations[i].Rule, r.Rule))
		} else {
			w.add("xValidations", Error, at, false, target, fmt.Sprintf("x-kubernetes-validations %s %q added to %s", kind, r.Rule, what(obj)))
		}
		w.out[len(w.out)-1].CEL = &CELRule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression != ""}
	}
}

// MatchObjectPath reports whether field, a field path as an API error's cause names it (spec.ports[2].port,
// spec.labels[app], spec.labels.app.kubernetes.io/name), is objectPath or lies under it, reading each [*] of
// objectPath as any list index or map key. An empty objectPath matches every field.
func MatchObjectPath(objectPath, field string) bool {
	if objectPath == "" {
		return true
	}
	return matchFrom(objectPath, field)
}

// matchFrom matches pattern against the start of field, up to a separator of field or its end. A map key
// that schema validation spells after a dot may itself hold dots, so each way of ending it is tried.
func matchFrom(pattern, field string) bool {
	i := strings.Index(pattern, "[*]")
	if i < 0 {
		rest, ok := strings.CutPrefix(field, pattern)
		return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
	}
	if !strings.HasPrefix(field, pattern[:i]) {
		return false
	}
	field, pattern = field[i:], pattern[i+3:]
	switch {
	case strings.HasPrefix(field, "["):
		end := strings.IndexByte(field, ']')
		if end < 0 {
			return false
		}
		return pattern == "" || matchFrom(pattern, field[end+1:])
	case strings.HasPrefix(field, ".") && len(field) > 1:
		if pattern == "" {
			return true
		}
		for j := 2; j <= len(field); j++ {
			if (j == len(field) || field[j] == '.' || field[j] == '[') && matchFrom(pattern, field[j:]) {
				return true
			}
		}
	}
	return false
}
