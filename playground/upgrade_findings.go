package playground

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"crdplay/playground/internal/crddiff"
	"crdplay/playground/internal/yamlpos"
)

// findings compares a pair's two CRDs (crddiff), places each finding in the text it is about, and gives it
// the engine's evidence: the stored objects whose checks it explains.
//
// The CRDs compared are those the API held before and after the update, which are the texts' as decoded
// (defaults applied, versions in the texts' order), without decoding 2.8 MB of YAML again; the texts, when
// the API did not take them.
func (u *upgrader) findings(p *pair) {
	if p.doc == nil || p.old == nil {
		return
	}
	oldDoc := u.oldDoc(p.old)
	oldSrc, oldText := oldSource(len(u.texts), p.old.text)
	oldCRD, newCRD := p.oldLive, p.newLive
	if oldCRD == nil && oldDoc != nil {
		oldCRD = decodeCRD(oldDoc)
	}
	if newCRD == nil {
		newCRD = decodeCRD(p.doc)
	}
	if oldCRD == nil || newCRD == nil {
		return
	}
	for _, f := range crddiff.Compare(oldCRD, newCRD) {
		doc, src, text := p.doc, SourceCRDs, 0
		if f.InOld {
			if oldDoc == nil {
				continue
			}
			doc, src, text = oldDoc, oldSrc, oldText
		}
		var at yamlpos.Result
		if f.FieldSegs != nil {
			at = doc.LocateSegs(f.FieldSegs)
		} else {
			at = doc.Locate(f.Field)
		}
		affected, evidence, refuses := u.evidence(p, f)
		sev := Severity(f.Severity)
		if sev == SeverityError && !refuses && !u.ev.in.Strict {
			// No stored object shows it biting, and the API took the CRD: clients that create new objects may
			// break, but the cluster refuses nothing it holds.
			sev = SeverityWarning
		}
		fix := findingFix(p, f, refuses)
		out := Finding{CRD: p.name, Rule: f.Rule, Severity: sev, Version: f.Version, Field: f.Field, ObjectPath: f.ObjectPath,
			Message: f.Message, Source: src, Document: doc.Index, Span: at.Span, Exact: at.Exact, Affected: affected, Evidence: evidence,
			Refuses: refuses, Fix: fix}
		u.rep.Findings = append(u.rep.Findings, out)
		if p.refusal != nil && refuses {
			fix = "" // the API's refusal, placed in the new CRD, says the next step
		}
		u.ev.diag(Diagnostic{Source: src, Text: text, Document: doc.Index, Field: f.Field, Type: f.Rule, Severity: out.Severity,
			Message: f.Message + ": " + evidence, Span: at.Span, Exact: at.Exact, Fix: fix})
	}
}

// noneAffected is the evidence of a finding that no stored object shows.
const noneAffected = "no stored object is affected"

// evidence says which stored objects of the pair's CRD the engine showed a finding biting, and how, and
// whether that is a refusal the upgrade causes.
func (u *upgrader) evidence(p *pair, f crddiff.Finding) ([]string, string, bool) {
	affected := []string{}
	rep := u.crdReport(p)
	switch {
	case rep.Status == 0:
		return affected, "not shown: the new CRD could not be sent as an update of the old one (see the diagnostics)", false
	case p.refusal != nil:
		if cause := refusalCause(p.refusal, f); cause != "" {
			return affected, "the API refuses the new CRD: " + cause, true
		}
		return affected, "not shown: the API refuses the new CRD, so no stored object meets it", false
	case p.newC == nil:
		return affected, "not shown: the new CRD is not established, so it serves no stored object (see its conditions)", false
	}
	n := len(p.stored)
	type bite struct {
		objects map[string]bool
		first   string
	}
	bites := map[string]*bite{}
	var order []string
	add := func(kind, who, what string) {
		b := bites[kind]
		if b == nil {
			b = &bite{objects: map[string]bool{}, first: what}
			bites[kind] = b
			order = append(order, kind)
		}
		b.objects[who] = true
	}
	for _, o := range p.stored {
		who := o.res.Name
		if o.ns != "" {
			who = o.ns + "/" + o.res.Name
		}
		hit := false
		for _, c := range u.entry(o).Checks {
			if c.Error == nil || c.Op == "get" || c.Op == "dryrun" || (f.Version != "" && c.Version != f.Version) {
				continue
			}
			if cause := matchingCause(f, c.Error, u.pre[o][preOp(c.Op)]); cause != "" {
				add(c.Op, who, cause)
				hit = true
			}
		}
		if !hit {
			for _, v := range sortedKeys(u.fresh[o]) {
				r := u.fresh[o][v]
				if r.status < 300 || (f.Version != "" && v != f.Version) {
					continue
				}
				if cause := matchingCause(f, r.body, u.pre[o]["dryrun"]); cause != "" {
					add("latent", who, cause)
					hit = true
					break
				}
			}
		}
		if (dropsField(f.Rule) || f.Rule == "default") && f.ObjectPath != "" {
			before := u.before[o]
			// before is the object read in its own version: another version's read has the same fields
			// only when the CRD converts by apiVersion alone.
			sameFields := func(v string) bool { return v == o.ver || p.newC.conversionNone }
			for _, c := range u.entry(o).Checks {
				if c.Op != "get" || c.Object == nil || (f.Version != "" && c.Version != f.Version) || !sameFields(c.Version) {
					continue
				}
				switch {
				case f.Rule == "default" && differs(before, c.Object, f.ObjectPath):
					// Defaults apply when stored objects are read, and are stored by the next write.
					add("default", who, f.ObjectPath)
					hit = true
				case f.Rule == "default":
					continue
				case changed(before, c.Object, f.ObjectPath):
					add("read", who, f.ObjectPath)
					hit = true
				case changed(before, u.written[o][c.Version], f.ObjectPath):
					add("write", who, f.ObjectPath)
					hit = true
				default:
					continue
				}
				break
			}
		}
		if hit {
			affected = append(affected, who)
		}
	}
	if len(order) == 0 {
		return affected, noneAffected, false
	}
	var parts []string
	refuses := false
	for _, kind := range order {
		b := bites[kind]
		who, one := ofObjects(len(b.objects), n)
		verb := func(singular, plural string) string {
			if one {
				return singular
			}
			return plural
		}
		switch kind {
		case "update":
			refuses = true
			parts = append(parts, fmt.Sprintf("%s now %s %s next update: %s", who, verb("fails", "fail"), verb("its", "their"), b.first))
		case "status":
			refuses = true
			parts = append(parts, fmt.Sprintf("%s now %s %s next status update: %s", who, verb("fails", "fail"), verb("its", "their"), b.first))
		case "latent":
			refuses = true
			parts = append(parts, fmt.Sprintf("%s would be refused if created now (%s): ratcheting lets %s unchanged updates through, but not the next change there", who, b.first, verb("its", "their")))
		case "default":
			parts = append(parts, fmt.Sprintf("%s now %s %s with the new default, which %s next update stores", who, verb("reads", "read"), b.first, verb("its", "their")))
		case "read":
			parts = append(parts, fmt.Sprintf("%s no longer %s %s back as stored", who, verb("reads", "read"), b.first))
		case "write":
			parts = append(parts, fmt.Sprintf("%s %s what %s stored at %s on %s next update", who, verb("loses", "lose"), verb("it", "they"), b.first, verb("its", "their")))
		}
	}
	return affected, strings.Join(parts, "; "), refuses
}

// ofObjects names k of n stored objects as a sentence's subject, and says whether it is singular.
func ofObjects(k, n int) (string, bool) {
	if n == 1 {
		return "the stored object", true
	}
	return fmt.Sprintf("%d of %d objects", k, n), k == 1
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// dropsField reports whether a rule's harm is data a read no longer returns, rather than a refused write.
func dropsField(rule string) bool {
	return rule == "existingFieldRemoval" || rule == "preserveUnknownFields"
}

// matchingCause is the first cause of a failed check's Status that lies at the finding's object field and is
// the kind of failure the finding's rule makes (a new required field's "Required value", a rule's own message),
// as "field: message", or "". Causes in pre, which the same write met under the old CRD, are not the
// upgrade's doing and match nothing.
func matchingCause(f crddiff.Finding, body json.RawMessage, pre map[string]bool) string {
	st, ok := parseStatus(body)
	if !ok || st.Details == nil {
		return ""
	}
	for _, c := range st.Details.Causes {
		if pre[c.Field+"\x00"+c.Message] {
			continue
		}
		field := c.Field
		if field == "<nil>" {
			field = ""
		}
		switch {
		case f.ObjectPath == "" && f.Rule == "xValidations":
			// A rule on the root: its failures name no field.
			if field != "" {
				continue
			}
		case f.ObjectPath == "" || !crddiff.MatchObjectPath(f.ObjectPath, field):
			continue
		}
		if !causeFits(f, c.Type, c.Message) {
			continue
		}
		if field == "" {
			return c.Message
		}
		return field + ": " + c.Message
	}
	return ""
}

// ruleWords are words of the messages kube-openapi's validation gives for each rule's failures
// (k8s.io/kube-openapi/pkg/validation/errors), and of the field.ErrorList types apiextensions turns them into.
var ruleWords = map[string][]string{
	"maximum":       {"less than"},
	"minimum":       {"greater than"},
	"maxLength":     {"at most", "longer than", "Too long"},
	"minLength":     {"at least", "shorter than"},
	"maxItems":      {"at most", "Too many"},
	"minItems":      {"at least"},
	"maxProperties": {"at most", "Too many"},
	"minProperties": {"at least"},
	"pattern":       {"should match"},
}

// causeFits reports whether an API cause (its type and message) is the kind of failure a finding's rule makes.
func causeFits(f crddiff.Finding, typ, msg string) bool {
	switch f.Rule {
	case "required":
		return typ == "FieldValueRequired"
	case "type", "nullable":
		return typ == "FieldValueTypeInvalid"
	case "enum":
		return typ == "FieldValueNotSupported"
	case "xValidations":
		r := f.CEL
		if r == nil || r.MessageExpression {
			return typ != "FieldValueRequired" && typ != "FieldValueTypeInvalid" && typ != "FieldValueNotSupported"
		}
		if r.Message != "" {
			return strings.Contains(msg, r.Message)
		}
		return strings.Contains(msg, "failed rule: "+r.Rule)
	}
	if words, ok := ruleWords[f.Rule]; ok {
		for _, w := range words {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	return true
}

// refusalCause is the cause of the new CRD's refusal that the finding names, as "field: message", or "".
func refusalCause(st *statusBody, f crddiff.Finding) string {
	if st.Details == nil || len(st.Details.Causes) == 0 {
		if f.Rule == "scope" || f.Rule == "storedVersionRemoval" {
			return st.Message
		}
		return ""
	}
	for _, c := range st.Details.Causes {
		match := c.Field == f.Field
		switch f.Rule {
		case "scope":
			match = match || c.Field == "spec.scope"
		case "storedVersionRemoval":
			match = match || storedVersionCause(c.Field)
		}
		if match {
			return c.Field + ": " + c.Message
		}
	}
	return ""
}

// differs reports whether the values at an object path differ between the stored object as the old CRD
// served it and a read after the upgrade, where either may lack them.
func differs(before map[string]interface{}, after json.RawMessage, path string) bool {
	differ, _ := compareAt(before, after, path)
	return differ
}

// changed reports whether the value at an object path (with [*] for any list index or map key) differs
// between the stored object as the old CRD served it and a read after the upgrade, where the stored object
// has it (nothing stored there is nothing to lose).
func changed(before map[string]interface{}, after json.RawMessage, path string) bool {
	differ, stored := compareAt(before, after, path)
	return stored && differ
}

// compareAt reads after and compares the values at path in before and after (a value missing on one side
// differs); stored tells whether before has any. A read that cannot be decoded compares as no difference.
func compareAt(before map[string]interface{}, after json.RawMessage, path string) (differ, stored bool) {
	var a map[string]interface{}
	dec := json.NewDecoder(bytes.NewReader(after))
	dec.UseNumber()
	if before == nil || dec.Decode(&a) != nil {
		return false, false
	}
	vb, stored := valuesAt(before, path)
	va, _ := valuesAt(a, path)
	return !reflect.DeepEqual(vb, va), stored
}

// valuesAt collects the values at an object path, [*] standing for every list item or map value; ok is false
// when the path leads nowhere.
func valuesAt(v interface{}, path string) ([]interface{}, bool) {
	cur := []interface{}{v}
	for _, seg := range splitObjectPath(path) {
		var next []interface{}
		for _, c := range cur {
			switch t := c.(type) {
			case map[string]interface{}:
				if seg == "[*]" {
					// In key order: the values of two reads are compared as lists.
					keys := make([]string, 0, len(t))
					for k := range t {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						next = append(next, t[k])
					}
				} else if x, ok := t[seg]; ok {
					next = append(next, x)
				}
			case []interface{}:
				if seg == "[*]" {
					next = append(next, t...)
				}
			}
		}
		if len(next) == 0 {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// splitObjectPath splits spec.ports[*].port into spec, ports, [*], port.
func splitObjectPath(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for part != "" {
			i := strings.Index(part, "[*]")
			switch {
			case i < 0:
				out = append(out, part)
				part = ""
			case i == 0:
				out = append(out, "[*]")
				part = part[3:]
			default:
				out = append(out, part[:i])
				part = part[i:]
			}
		}
	}
	return out
}
