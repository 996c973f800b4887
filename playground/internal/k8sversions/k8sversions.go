package k8sversions

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/util/compatibility"
	basecompatibility "k8s.io/component-base/compatibility"

	"crdplay/playground/internal/celcost"
	"crdplay/playground/internal/yamlpos"
)

// Oldest is the oldest minor version of Kubernetes 1.x the report considers.
const Oldest = 28

// Newest is the newest minor version of Kubernetes 1.x the report considers: the minor of the release the
// engine is (the binary version of upstream's kube component), whatever minor it emulates. The report is about
// real servers of each minor, so it is the same whether or not the engine emulates an older one; where the
// engine's own answer differs from a real server's of the minor it emulates, Report.Emulation says so.
func Newest() int {
	b, _, _ := engineMinors()
	return b
}

// engineMinors are the engine's versions as upstream's kube component has them: the binary's minor, the minor
// it emulates, and the minimum compatibility version, for which the engine compiles new CEL rules and
// checks formats (environment.DefaultCompatibilityVersion reads the same). A real server of minor N has
// compatibility version N-1; kube-apiserver --emulated-version=N gets N-1 too, but never less than its
// floor, three minors below the binary (k8s.io/component-base/compatibility's SetEmulationVersion): a 1.37
// emulating 1.34 compiles new rules for 1.34, where a real 1.34 compiles them for 1.33.
func engineMinors() (binary, emulated, compat int) {
	ev := compatibility.DefaultComponentGlobalsRegistry.EffectiveVersionFor(basecompatibility.DefaultKubeComponent)
	return int(ev.BinaryVersion().Minor()), int(ev.EmulationVersion().Minor()), int(ev.MinCompatibilityVersion().Minor())
}

// Effect is what a server older than a reason's minor does with the feature.
type Effect string

// Effects.
const (
	// Refused: the server answers 422 to the CRD.
	Refused Effect = "refused"
	// Ignored: the server accepts the CRD but drops or does not enforce the feature.
	Ignored Effect = "ignored"
)

// Reason is one thing in a CRD that servers older than Minor refuse or ignore.
type Reason struct {
	// Field names the field as CRD validation errors do, in the v1 layout of the text:
	// spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule.
	Field string `json:"field"`
	// Feature is what the field uses: a CEL function, macro, operator or syntax ("semver", "all",
	// "syntax '.?'"), "optionalOldSelf", "selectableFields", "format k8s-short-name", "cost"; empty when the
	// older environment's error names nothing the newer one introduced (Detail then has the error).
	Feature string `json:"feature,omitempty"`
	// Library is the CEL library or the feature gate that brings Feature, when upstream's data tell it apart
	// ("kubernetes.Semver", "CRDValidationRatcheting").
	Library string `json:"library,omitempty"`
	// Minor is the oldest minor version of Kubernetes 1.x from which every server up to Newest (or, above
	// Newest, the first future one) accepts and honours the field in a new CRD.
	Minor  int    `json:"minor"`
	Effect Effect `json:"effect"`
	// Message is one line for the user: "needs Kubernetes 1.33 or later: semver (kubernetes.Semver)".
	Message string `json:"message"`
	// Detail is the compile error of the newest server that refuses the rule.
	Detail string `json:"detail,omitempty"`
	// Span is where the field is in the CRD text (filled in by the caller from Segs).
	Span *yamlpos.Span `json:"span,omitempty"`
	// Segs is the field's path in the CRD document, for positions.
	Segs []yamlpos.Seg `json:"-"`
}

// Cost is a rule's estimated cost (times its cardinality) in the environment of a minor's new CRDs.
type Cost struct {
	Minor int    `json:"minor"`
	Cost  uint64 `json:"cost"`
}

// Rule is the version report of one x-kubernetes-validations entry.
type Rule struct {
	// Field is the rule's field, as celcost.Rule.Field names it.
	Field string `json:"field"`
	// Minor is the oldest minor version of Kubernetes 1.x from which every server up to Newest accepts the
	// rule in a new CRD (Newest+1 when only the next one will); 0 when none does (the engine's answer
	// then says why).
	Minor   int      `json:"minor"`
	Reasons []Reason `json:"reasons,omitempty"`
	// Costs lists the minors whose estimated cost differs from Newest's, oldest first.
	Costs []Cost `json:"costs,omitempty"`
}

// Report is the version report of one CRD.
type Report struct {
	// Minor is the oldest minor version of Kubernetes 1.x that accepts the CRD as written and honours
	// everything it uses: Oldest when nothing needs more, 0 when a rule is refused by every minor.
	Minor int `json:"minor"`
	// Reasons are the fields that need more than Oldest, newest minor first.
	Reasons []Reason `json:"reasons"`
	// Rules has one entry per rule of costs (the celcost report the CRD's analysis made), in its order.
	Rules []Rule `json:"rules"`
	// Emulation is where the engine, emulating an older minor, answers the CRD otherwise than a real server
	// of that minor; nil when it answers as one.
	Emulation *Emulation `json:"emulation,omitempty"`
}

// Emulation is what an engine emulating an older minor answers otherwise than a real server of that minor:
// new CEL rules and formats follow the compatibility version, which emulation cannot lower below the
// binary's floor (engineMinors).
type Emulation struct {
	// Minor is the minor the engine emulates, Compatibility the compatibility version it compiles new CEL
	// rules and checks formats for (a real server of Minor has Minor-1).
	Minor         int `json:"minor"`
	Compatibility int `json:"compatibility"`
	// Fields are the fields (as Reason.Field names them) the engine answers otherwise.
	Fields []string `json:"fields"`
	// Message says which and why, in one sentence.
	Message string `json:"message"`
}

// difference is one field the engine answers otherwise than a real server of the minor it emulates.
type difference struct {
	field, feature string
	verb           string // what the engine does with it: "accepts", "refuses", "validates", "ignores"
	rule           int    // for a rule, its index in analyzeRules' rules
}

// Analyze reports the oldest minor version of Kubernetes that accepts crd, whose rules celcost has listed in
// costs (celcost.Report(crd)). Versions celcost skipped (schemas that are not structural) have no rule
// report: the engine's answer says what is wrong with them.
func Analyze(crd *apiextensionsv1.CustomResourceDefinition, costs []celcost.Version) Report {
	return AnalyzePrepared(crd, costs, nil)
}

// AnalyzePrepared is Analyze with the schemas celcost.Prepare(crd) returned (nil: converted here). It only
// reads them.
func AnalyzePrepared(crd *apiextensionsv1.CustomResourceDefinition, costs []celcost.Version, schemas []*celcost.Schema) Report {
	rep := Report{Minor: Oldest, Reasons: []Reason{}, Rules: []Rule{}}
	if crd == nil {
		return rep
	}
	var diffs []difference
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		vPath := field.NewPath("spec").Child("versions").Index(i)
		vSegs := []yamlpos.Seg{yamlpos.K("spec"), yamlpos.K("versions"), yamlpos.I(i)}
		if len(v.SelectableFields) > 0 {
			if g := gateMinor(gateSelectableFields); g > Oldest {
				rep.Reasons = append(rep.Reasons, Reason{
					Field: vPath.Child("selectableFields").String(), Feature: "selectableFields",
					Library: string(gateSelectableFields), Minor: g, Effect: Ignored,
					Message: fmt.Sprintf("needs Kubernetes 1.%d or later: selectableFields (feature gate %s); older servers drop them", g, gateSelectableFields),
					Segs:    yamlpos.Append(vSegs, yamlpos.K("selectableFields")),
				})
			}
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		var internal *apiextensions.JSONSchemaProps
		if schemas != nil {
			if internal = schemas[i].Internal; internal == nil {
				continue
			}
		} else {
			internal = &apiextensions.JSONSchemaProps{}
			if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
				continue
			}
		}
		rootSegs := yamlpos.Append(vSegs, yamlpos.K("schema"), yamlpos.K("openAPIV3Schema"))
		formats := formatReasons(internal, rootSegs)
		rep.Reasons = append(rep.Reasons, formats...)
		diffs = append(diffs, formatDifferences(formats)...)
		if i < len(costs) && costs[i].Skipped == "" {
			rules, d := analyzeRules(internal, len(rootSegs), costs[i].Rules)
			for _, r := range rules {
				rep.Reasons = append(rep.Reasons, r.Reasons...)
			}
			rep.Rules = append(rep.Rules, rules...)
			diffs = append(diffs, d...)
		}
	}
	rep.Emulation = emulation(diffs)
	for _, r := range rep.Rules {
		if r.Minor == 0 {
			rep.Minor = 0
		}
	}
	if rep.Minor != 0 {
		for _, r := range rep.Reasons {
			rep.Minor = max(rep.Minor, r.Minor)
		}
	}
	sort.SliceStable(rep.Reasons, func(a, b int) bool { return rep.Reasons[a].Minor > rep.Reasons[b].Minor })
	return rep
}

// Place fills the Span of every reason, in Reasons and in Rules, with locate (a yamlpos.Doc's Locator).
func (r *Report) Place(locate func([]yamlpos.Seg) yamlpos.Result) {
	place := func(rs []Reason) {
		for i := range rs {
			sp := locate(rs[i].Segs).Span
			rs[i].Span = &sp
		}
	}
	place(r.Reasons)
	for i := range r.Rules {
		place(r.Rules[i].Reasons)
	}
}

// outcome is one rule compiled in the environment of one compatibility version.
type outcome struct {
	ok   bool
	err  string // the compile error, or why the cost is refused
	cost uint64
	msg  bool // the messageExpression failed, not the rule
}

// exhaustive makes analyzeRules compile every rule in every minor's environment, for the test that checks
// the shortcut below against it.
var exhaustive = false

// analyzeRules finds the oldest minor of each rule of one version's schema, and the rules the engine answers
// otherwise than a real server of the minor it emulates. skip is the length of the segments up to the schema
// root in the rules' Segs.
//
// Compiling every rule in every minor's environment costs ten times celcost's report, so a rule that both
// Oldest and Newest accept is taken to be accepted by every minor between: between those minors, base.go only
// adds options, except the AST validators of 1.29, which refuse rules that Newest refuses too, and the
// strings library of 1.29, which replaces an older version of itself with a superset.
func analyzeRules(internal *apiextensions.JSONSchemaProps, skip int, rules []celcost.Rule) ([]Rule, []difference) {
	nodes := newNodes(internal)
	out := make([]Rule, len(rules))
	var diffs []difference
	newest, emulated, compat := engineMinors()
	// celcost compiled the rules for the engine's compatibility version: they are the outcomes of a real
	// server one minor above it.
	own := compat + 1
	gate := gateMinor(gateOptionalOldSelf)
	keep := func(optional bool, m int) bool { return optional && gate != 0 && m >= gate }
	// The outcomes of the oldest and the newest minor, compiled once per node (the newest's are celcost's
	// unless the engine emulates an older minor).
	ends := map[int]map[*node][]outcome{Oldest: {}, newest: {}}
	for k := range rules {
		cr := &rules[k]
		out[k] = Rule{Field: cr.Field}
		if len(cr.Segs) < skip {
			continue
		}
		n, j, err := nodes.find(cr.Segs[skip:])
		if err != nil {
			continue
		}
		optional := cr.OptionalOldSelf
		// results[m] is the rule in the new CRDs of a server of minor m: compiled in the environment of m-1,
		// with optionalOldSelf dropped where its gate is off. Newest's is celcost's.
		results := map[int]outcome{own: {
			ok: cr.Error == "" && !cr.ExceedsLimit, err: cr.Error, cost: cr.Cost,
			msg: strings.HasPrefix(cr.Error, "messageExpression: "),
		}}
		if cr.ExceedsLimit && cr.Error == "" {
			results[own] = overLimit(cr.Cost)
		}
		if !exhaustive {
			for m, byNode := range ends {
				if _, ok := results[m]; ok {
					continue
				}
				if _, ok := byNode[n]; !ok {
					byNode[n] = n.compileAll(m-1, keep(true, m))
				}
				if j < len(byNode[n]) {
					results[m] = byNode[n][j]
				}
			}
		}
		at := func(m int) outcome {
			if o, ok := results[m]; ok {
				return o
			}
			o := n.compile(j, m-1, keep(optional, m))
			results[m] = o
			return o
		}
		r := &out[k]
		if emulated != own {
			// The engine answers as a real server of own, not of the minor it emulates.
			if engine, real := results[own].ok, at(emulated).ok; engine != real {
				d := difference{field: cr.Field, verb: "accepts", rule: k}
				if !engine {
					d.verb = "refuses"
				}
				diffs = append(diffs, d)
			}
		}
		first := 0 // the oldest minor from which every server up to newest accepts the rule
		if !exhaustive && at(Oldest).ok && at(newest).ok {
			first = Oldest
		}
		for m := newest; first == 0 && m >= Oldest && at(m).ok; m-- {
			if m == Oldest || !at(m-1).ok {
				first = m
			}
		}
		if first == 0 {
			// Refused by newest: the next minor's compatibility version is newest's own.
			if at(newest + 1).ok {
				r.Minor = newest + 1
				r.Reasons = append(r.Reasons, n.refusal(cr, j, newest+1, at(newest)))
			}
			continue
		}
		r.Minor = first
		if first > Oldest {
			reason := n.refusal(cr, j, first, at(first-1))
			if optional && gate > 0 && first-1 < gate && n.compile(j, first-2, true).ok {
				// The older server refuses the rule because it drops optionalOldSelf, and oldSelf is then
				// not an optional.
				reason.Feature, reason.Library = "optionalOldSelf", string(gateOptionalOldSelf)
				reason.Message = fmt.Sprintf("needs Kubernetes 1.%d or later: optionalOldSelf (feature gate %s); older servers drop it, and the rule does not compile without it", first, gateOptionalOldSelf)
			}
			r.Reasons = append(r.Reasons, reason)
		}
		if optional && gate > r.Minor && gate > Oldest {
			r.Minor = gate
			r.Reasons = append(r.Reasons, Reason{
				Field:   strings.TrimSuffix(cr.Field, ".rule") + ".optionalOldSelf",
				Feature: "optionalOldSelf", Library: string(gateOptionalOldSelf), Minor: gate, Effect: Ignored,
				Message: fmt.Sprintf("needs Kubernetes 1.%d or later: optionalOldSelf (feature gate %s); older servers drop it, and the rule then runs only when there is an old value", gate, gateOptionalOldSelf),
				Segs:    yamlpos.Append(cr.Segs, yamlpos.K("optionalOldSelf")),
			})
		}
		newestCost := at(newest).cost
		for m := Oldest; m < newest; m++ {
			if o, ok := results[m]; ok && o.err == "" && o.cost != newestCost {
				r.Costs = append(r.Costs, Cost{Minor: m, Cost: o.cost})
			}
		}
	}
	// Each difference is named by what the rule's reasons say it needs, once they are all known.
	for i := range diffs {
		diffs[i].feature = ruleFeature(&out[diffs[i].rule], emulated)
	}
	return out, diffs
}

// ruleFeature names what a rule uses that a real server of minor refuses: the feature of its reason above
// minor, or the rule's field when no reason names one.
func ruleFeature(r *Rule, minor int) string {
	for _, re := range r.Reasons {
		if re.Minor > minor && re.Effect == Refused && re.Feature != "" {
			if re.Feature == "cost" {
				return "the cost of " + r.Field
			}
			return re.Feature
		}
	}
	return r.Field
}

// formatDifferences are the formats the engine validates (or ignores) otherwise than a real server of the
// minor it emulates: it checks formats for its compatibility version (the same as CEL's).
func formatDifferences(formats []Reason) []difference {
	_, emulated, compat := engineMinors()
	var out []difference
	for _, r := range formats {
		engine, real := r.Minor <= compat+1, r.Minor <= emulated
		if engine == real {
			continue
		}
		d := difference{field: r.Field, feature: r.Feature, verb: "validates"}
		if !engine {
			d.verb = "ignores"
		}
		out = append(out, d)
	}
	return out
}

// emulation says, in one sentence, what the engine answers otherwise than a real server of the minor it
// emulates, and why; nil when nothing differs.
func emulation(diffs []difference) *Emulation {
	if len(diffs) == 0 {
		return nil
	}
	binary, emulated, compat := engineMinors()
	e := &Emulation{Minor: emulated, Compatibility: compat}
	var verbs []string
	byVerb := map[string][]string{}
	for _, d := range diffs {
		e.Fields = append(e.Fields, d.field)
		if !slices.Contains(byVerb[d.verb], d.feature) {
			if len(byVerb[d.verb]) == 0 {
				verbs = append(verbs, d.verb)
			}
			byVerb[d.verb] = append(byVerb[d.verb], d.feature)
		}
	}
	var what []string
	for _, v := range verbs {
		what = append(what, v+" "+strings.Join(byVerb[v], ", "))
	}
	floor := ""
	if compat > emulated-1 {
		floor = fmt.Sprintf(", the lowest a 1.%d binary allows", binary)
	}
	e.Message = fmt.Sprintf("Kubernetes 1.%d emulating 1.%d %s, unlike a real 1.%d server: emulating, kube-apiserver compiles new CEL rules and checks formats for compatibility version 1.%d%s, where a real 1.%d uses 1.%d.",
		binary, emulated, strings.Join(what, " and "), emulated, compat, floor, emulated, emulated-1)
	return e
}

// refusal is the reason a rule needs minor: the server of minor-1 refused it with older.
func (n *node) refusal(cr *celcost.Rule, j, minor int, older outcome) Reason {
	r := Reason{Field: cr.Field, Minor: minor, Effect: Refused, Detail: firstLine(older.err), Segs: yamlpos.Append(cr.Segs, yamlpos.K("rule"))}
	if older.msg {
		r.Field = strings.TrimSuffix(cr.Field, ".rule") + ".messageExpression"
		r.Segs = yamlpos.Append(cr.Segs, yamlpos.K("messageExpression"))
	}
	switch {
	case older.err == "" || strings.HasPrefix(older.err, costPrefix):
		r.Feature = "cost"
	default:
		r.Feature, r.Library = name(older.err, minor-1)
	}
	what := r.Feature
	switch {
	case r.Feature == "cost":
		what = fmt.Sprintf("Kubernetes 1.%d estimates its cost above the limit", minor-1)
	case what == "":
		what = fmt.Sprintf("the CEL environment of Kubernetes 1.%d's new CRDs", minor)
	case r.Library != "":
		what += " (" + r.Library + ")"
	}
	r.Message = fmt.Sprintf("needs Kubernetes 1.%d or later: %s", minor, what)
	if minor > Newest() {
		r.Message += fmt.Sprintf("; Kubernetes 1.%d compiles new rules in the environment of 1.%d", minor-1, minor-2)
	}
	return r
}

const costPrefix = "estimated rule cost exceeds budget"

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
