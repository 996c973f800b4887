// Package celcost reports what the REST API does not show about a CRD's CEL rules: each rule's estimated
// cost against the limits that CRD validation applies, and the runtime cost an object's validation used.
//
// Everything is computed by upstream's own code: the rules are compiled with
// k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel.Compile in the environment CRD creation uses, the
// cardinality comes from the same CELSchemaContext walk that ValidateCustomResourceDefinition does, and the
// runtime cost is the budget the upstream Validator leaves unspent. The package never decides whether a
// CRD or an object is valid: that answer comes from the engine.
package celcost

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"

	yaml "go.yaml.in/yaml/v3"

	"crdplay/playground/internal/yamlpos"
)

// Limits are the CEL cost limits of Kubernetes v1.37, from upstream's constants.
type Limits struct {
	// PerExpression caps one rule's estimated cost times its cardinality at CRD creation
	// (StaticEstimatedCostLimit).
	PerExpression uint64 `json:"perExpression"`
	// PerCRD caps the sum of the estimated costs of one version's rules (StaticEstimatedCRDCostLimit).
	PerCRD uint64 `json:"perCRD"`
	// PerCall caps one evaluation of one rule at runtime (PerCallLimit).
	PerCall uint64 `json:"perCall"`
	// RuntimeBudget is shared by all rules while one object is validated (RuntimeCELCostBudget).
	RuntimeBudget int64 `json:"runtimeBudget"`
}

// DefaultLimits are the limits the engine runs with.
var DefaultLimits = Limits{
	PerExpression: apivalidation.StaticEstimatedCostLimit,
	PerCRD:        apivalidation.StaticEstimatedCRDCostLimit,
	PerCall:       celconfig.PerCallLimit,
	RuntimeBudget: celconfig.RuntimeCELCostBudget,
}

// Rule is one x-kubernetes-validations entry and its estimated cost.
type Rule struct {
	// Field names the rule as CRD validation errors do, in the v1 layout of the text:
	// spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule.
	Field string `json:"field"`
	// Self is the object path the rule is evaluated at ("self"): "" for the root, "spec", "spec.tags[*]".
	Self              string `json:"self"`
	Rule              string `json:"rule"`
	Message           string `json:"message,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
	Reason            string `json:"reason,omitempty"`
	FieldPath         string `json:"fieldPath,omitempty"`
	// Transition is true for rules that use oldSelf: they run only on updates, unless OptionalOldSelf.
	Transition      bool `json:"transition"`
	OptionalOldSelf bool `json:"optionalOldSelf,omitempty"`
	// MaxCost is CEL's estimate of one evaluation's worst-case cost.
	MaxCost uint64 `json:"maxCost"`
	// Cardinality is how many times the rule can run for one object: the product of maxItems/maxProperties
	// above it, or, when one of those is missing, the worst case CEL estimates from the request size limit.
	Cardinality uint64 `json:"cardinality"`
	// CardinalityBounded is true when Cardinality comes from maxItems/maxProperties rather than the estimate.
	CardinalityBounded bool `json:"cardinalityBounded"`
	// Cost is MaxCost times Cardinality: what CRD validation compares with Limits.PerExpression.
	Cost uint64 `json:"cost"`
	// MessageExpressionCost is the messageExpression's estimated cost (it counts towards the version's total).
	MessageExpressionCost uint64 `json:"messageExpressionCost,omitempty"`
	// ExceedsLimit is Cost > Limits.PerExpression: CRD validation rejects the rule.
	ExceedsLimit bool `json:"exceedsLimit"`
	// Error is the compiler's message when the rule (or its messageExpression) does not compile.
	Error string `json:"error,omitempty"`
	// Span is where the rule is in the CRD text (filled in by the caller).
	Span *yamlpos.Span `json:"span,omitempty"`

	// Segs is the rule entry's path in the CRD document, for positions.
	Segs []yamlpos.Seg `json:"-"`
}

// Version is the cost report of one version's schema.
type Version struct {
	Version string `json:"version"`
	Rules   []Rule `json:"rules"`
	// Total is the sum of the rules' and messageExpressions' costs, as CRD validation adds them up.
	Total uint64 `json:"total"`
	// ExceedsLimit is Total > Limits.PerCRD.
	ExceedsLimit bool `json:"exceedsLimit"`
	// Skipped says why there is no report when the schema cannot be analysed (not structural, say); the
	// engine's answer for the CRD says what is wrong with it.
	Skipped string `json:"skipped,omitempty"`
}

// Schema is one version's schema as the cost report, the version analysis and the runtime validator all
// start from it: converted to the internal version and, when it has rules, made structural, once.
type Schema struct {
	// Internal is the schema in the internal version; nil when there is none or it does not convert.
	Internal   *apiextensions.JSONSchemaProps
	convertErr error
	hasRules   bool
	// structural is NewStructural's result (nil with structErr), and invalid ValidateStructural's errors.
	structural *structuralschema.Structural
	structErr  error
	invalid    string
	runtime    *Runtime
	built      bool
	// scratch is the served schema of a version without rules, built for Scratch on first use.
	scratch    *structuralschema.Structural
	scratchErr error
	// scratchNode is the node Scratch last compiled at.
	scratchNode *scratchNode
}

// Prepare converts every version's schema of crd once, for Report, k8sversions.Analyze and NewRuntime.
func Prepare(crd *apiextensionsv1.CustomResourceDefinition) []*Schema {
	out := make([]*Schema, len(crd.Spec.Versions))
	for i := range crd.Spec.Versions {
		out[i] = prepare(crd.Spec.Versions[i].Schema)
	}
	return out
}

func prepare(v *apiextensionsv1.CustomResourceValidation) *Schema {
	ps := &Schema{}
	if v == nil || v.OpenAPIV3Schema == nil {
		return ps
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.OpenAPIV3Schema, internal, nil); err != nil {
		ps.convertErr = err
		return ps
	}
	ps.Internal = internal
	if ps.hasRules = hasRules(internal, 0); !ps.hasRules {
		return ps
	}
	ps.structural, ps.structErr = structuralschema.NewStructural(internal)
	if ps.structErr == nil {
		if errs := structuralschema.ValidateStructural(nil, ps.structural); len(errs) > 0 {
			ps.invalid = errs.ToAggregate().Error()
		}
	}
	return ps
}

// Report estimates the costs of every version's rules of crd as CRD creation does. Versions without rules
// get an empty report.
func Report(crd *apiextensionsv1.CustomResourceDefinition) []Version {
	return ReportPrepared(crd, Prepare(crd))
}

// ReportPrepared is Report with the schemas Prepare(crd) returned.
func ReportPrepared(crd *apiextensionsv1.CustomResourceDefinition, schemas []*Schema) []Version {
	var out []Version
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		rep := Version{Version: v.Name, Rules: []Rule{}}
		ps := schemas[i]
		switch {
		case v.Schema == nil || v.Schema.OpenAPIV3Schema == nil:
		case ps.convertErr != nil:
			rep.Skipped = ps.convertErr.Error()
		case !ps.hasRules:
		// As CRD validation: costs are only estimated for a structural schema.
		case ps.structErr != nil:
			rep.Skipped = "the schema is not structural: " + ps.structErr.Error()
		case ps.invalid != "":
			rep.Skipped = "the schema is not structural: " + ps.invalid
		default:
			internal := ps.Internal
			w := walker{
				envSet: environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()),
				rep:    &rep,
			}
			root := field.NewPath("spec").Child("versions").Index(i).Child("schema").Child("openAPIV3Schema")
			segs := []yamlpos.Seg{yamlpos.K("spec"), yamlpos.K("versions"), yamlpos.I(i), yamlpos.K("schema"), yamlpos.K("openAPIV3Schema")}
			w.visit(internal, apivalidation.RootCELContext(internal), root, segs, "", 0)
			rep.ExceedsLimit = rep.Total > DefaultLimits.PerCRD
		}
		out = append(out, rep)
	}
	return out
}

// maxDepth bounds the schema walks; the YAML parser already refuses deeper documents.
const maxDepth = 10000

func hasRules(s *apiextensions.JSONSchemaProps, depth int) bool {
	if s == nil || depth > maxDepth {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	if s.Items != nil && hasRules(s.Items.Schema, depth+1) {
		return true
	}
	if s.AdditionalProperties != nil && hasRules(s.AdditionalProperties.Schema, depth+1) {
		return true
	}
	for k := range s.Properties {
		p := s.Properties[k]
		if hasRules(&p, depth+1) {
			return true
		}
	}
	return false
}

type walker struct {
	envSet *environment.EnvSet
	rep    *Version
}

// visit follows ValidateCustomResourceDefinitionOpenAPISchema's recursion: properties, additionalProperties
// and items carry the CEL context (and so the cardinality); allOf/anyOf/oneOf/not do not.
func (w *walker) visit(s *apiextensions.JSONSchemaProps, ctx *apivalidation.CELSchemaContext, fld *field.Path, segs []yamlpos.Seg, self string, depth int) {
	if s == nil || ctx == nil || depth > maxDepth {
		return
	}
	if len(s.XValidations) > 0 {
		w.compile(s, ctx, fld, segs, self)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		w.visit(s.AdditionalProperties.Schema, ctx.ChildAdditionalPropertiesContext(s.AdditionalProperties.Schema),
			fld.Child("additionalProperties"), yamlpos.Append(segs, yamlpos.K("additionalProperties")), join(self, "[*]"), depth+1)
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := s.Properties[k]
		w.visit(&p, ctx.ChildPropertyContext(&p, k), fld.Child("properties").Key(k),
			yamlpos.Append(segs, yamlpos.K("properties"), yamlpos.K(k)), join(self, "."+k), depth+1)
	}
	if s.Items != nil && s.Items.Schema != nil {
		w.visit(s.Items.Schema, ctx.ChildItemsContext(s.Items.Schema), fld.Child("items"),
			yamlpos.Append(segs, yamlpos.K("items")), join(self, "[*]"), depth+1)
	}
}

func (w *walker) compile(s *apiextensions.JSONSchemaProps, ctx *apivalidation.CELSchemaContext, fld *field.Path, segs []yamlpos.Seg, self string) {
	rules := make([]Rule, len(s.XValidations))
	for i, r := range s.XValidations {
		rules[i] = Rule{
			Field:             fld.Child("x-kubernetes-validations").Index(i).Child("rule").String(),
			Self:              self,
			Rule:              r.Rule,
			Message:           r.Message,
			MessageExpression: r.MessageExpression,
			FieldPath:         r.FieldPath,
			OptionalOldSelf:   r.OptionalOldSelf != nil && *r.OptionalOldSelf,
			Segs:              yamlpos.Append(segs, yamlpos.K("x-kubernetes-validations"), yamlpos.I(i)),
		}
		if r.Reason != nil {
			rules[i].Reason = string(*r.Reason)
		}
	}
	defer func() { w.rep.Rules = append(w.rep.Rules, rules...) }()
	info, err := ctx.TypeInfo()
	if err != nil || info == nil {
		for i := range rules {
			rules[i].Error = fmt.Sprintf("no type information for x-kubernetes-validations: %v", err)
		}
		return
	}
	results, err := CompileAt(ctx, info.Schema, info.DeclType, w.envSet)
	if err != nil {
		for i := range rules {
			rules[i].Error = err.Error()
		}
		return
	}
	for i := range rules {
		if i >= len(results) {
			break
		}
		cr := results[i]
		r := &rules[i]
		r.Transition = cr.UsesOldSelf
		r.MaxCost = cr.MaxCost
		r.Cardinality, r.CardinalityBounded, r.Cost = cr.Cardinality, cr.CardinalityBounded, cr.Cost
		r.ExceedsLimit = r.Cost > DefaultLimits.PerExpression
		w.rep.Total = saturatingAdd(w.rep.Total, r.Cost)
		switch {
		case cr.Error != nil:
			r.Error = cr.Error.Detail
		case cr.MessageExpressionError != nil:
			r.Error = "messageExpression: " + cr.MessageExpressionError.Detail
		}
		if cr.MessageExpression != nil {
			r.MessageExpressionCost = cr.MessageExpressionMaxCost
			w.rep.Total = saturatingAdd(w.rep.Total, cr.MessageExpressionMaxCost)
		}
	}
}

// Compiled is one rule as CRD validation compiles it: upstream's result, with its cost as getExpressionCost
// in upstream's CRD validation computes it.
type Compiled struct {
	cel.CompilationResult
	// Cardinality is the context's when every list and map above the node is bounded (CardinalityBounded),
	// else the compiler's estimate.
	Cardinality        uint64
	CardinalityBounded bool
	// Cost is MaxCost times Cardinality: what CRD validation compares with Limits.PerExpression.
	Cost uint64
}

// CompileAt compiles the rules of schema, the node of ctx whose CEL type is declType, as CRD validation
// compiles new rules: cel.Compile with the per-call limit, in envSet's new-expressions environment.
func CompileAt(ctx *apivalidation.CELSchemaContext, schema *structuralschema.Structural, declType *apiservercel.DeclType, envSet *environment.EnvSet) ([]Compiled, error) {
	return compileAt(ctx, schema, declType, envSet, cel.NewExpressionsEnvLoader())
}

func compileAt(ctx *apivalidation.CELSchemaContext, schema *structuralschema.Structural, declType *apiservercel.DeclType, envSet *environment.EnvSet, loader cel.EnvLoader) ([]Compiled, error) {
	results, err := cel.Compile(schema, declType, celconfig.PerCallLimit, envSet, loader)
	if err != nil {
		return nil, err
	}
	out := make([]Compiled, len(results))
	for i, cr := range results {
		c := Compiled{CompilationResult: cr, Cardinality: cr.MaxCardinality}
		if ctx.MaxCardinality != nil {
			c.Cardinality, c.CardinalityBounded = *ctx.MaxCardinality, true
		}
		c.Cost = saturatingMul(cr.MaxCost, c.Cardinality)
		out[i] = c
	}
	return out, nil
}

// RuleSelvesYAML returns the object path of each x-kubernetes-validations rule of a schema ("" for the root,
// "spec.tags[*]" for list items), one per rule, in the order ReportPrepared lists the rules (Rule.Self),
// without converting or compiling anything, as a CRD's YAML text writes the schema: n is the openAPIV3Schema mapping
// of a document in which every key reads as the string it spells and there are no duplicate keys, anchors or
// aliases (so that the API reads the same schema from it). It reads the text's parse tree, which a big CRD
// already has, instead of decoding the API's schema.
func RuleSelvesYAML(n *yaml.Node) []string {
	var out []string
	ruleSelvesYAML(n, "", 0, &out)
	return out
}

func ruleSelvesYAML(n *yaml.Node, self string, depth int, out *[]string) {
	if n == nil || n.Kind != yaml.MappingNode || depth > maxDepth {
		return
	}
	var rules, props, items, additional *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "x-kubernetes-validations":
			rules = n.Content[i+1]
		case "properties":
			props = n.Content[i+1]
		case "items":
			items = n.Content[i+1]
		case "additionalProperties":
			additional = n.Content[i+1]
		}
	}
	if rules != nil && rules.Kind == yaml.SequenceNode {
		for range rules.Content {
			*out = append(*out, self)
		}
	}
	ruleSelvesYAML(additional, join(self, "[*]"), depth+1, out)
	if props != nil && props.Kind == yaml.MappingNode {
		// The keys in order, as visit sorts them (the pairs' first indexes), of the properties with rules.
		at := make([]int, 0, len(props.Content)/2)
		for i := 0; i+1 < len(props.Content); i += 2 {
			if hasRulesYAML(props.Content[i+1], depth+1) {
				at = append(at, i)
			}
		}
		sort.Slice(at, func(a, b int) bool { return props.Content[at[a]].Value < props.Content[at[b]].Value })
		for _, i := range at {
			ruleSelvesYAML(props.Content[i+1], join(self, "."+props.Content[i].Value), depth+1, out)
		}
	}
	ruleSelvesYAML(items, join(self, "[*]"), depth+1, out)
}

// hasRulesYAML reports whether any x-kubernetes-validations key is under n, so that the walk skips the (many)
// parts of a big schema without rules, and the paths it would build there.
func hasRulesYAML(n *yaml.Node, depth int) bool {
	if depth > maxDepth {
		return false
	}
	for i, c := range n.Content {
		if c.Kind == yaml.ScalarNode && c.Value == "x-kubernetes-validations" && n.Kind == yaml.MappingNode && i%2 == 0 {
			return true
		}
		if (c.Kind == yaml.MappingNode || c.Kind == yaml.SequenceNode) && hasRulesYAML(c, depth+1) {
			return true
		}
	}
	return false
}

func join(self, next string) string {
	if self == "" && next != "" && next[0] == '.' {
		return next[1:]
	}
	return self + next
}

func saturatingMul(a, b uint64) uint64 {
	if a == 0 || b == 0 {
		return 0
	}
	if math.MaxUint64/a < b {
		return math.MaxUint64
	}
	return a * b
}

func saturatingAdd(a, b uint64) uint64 {
	if math.MaxUint64-a < b {
		return math.MaxUint64
	}
	return a + b
}

// unstructuredJSON copies a decoded JSON object into the types unstructured objects hold (int64 and float64
// rather than json.Number), which is what the validator and CEL expect.
func unstructuredJSON(m map[string]interface{}) map[string]interface{} {
	if m == nil {
		return nil
	}
	j, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	var out map[string]interface{}
	if err := utiljson.Unmarshal(j, &out); err != nil {
		return nil
	}
	return out
}

// Runtime measures the CEL cost of validating objects of one version, with upstream's Validator compiled
// once for the version's schema.
type Runtime struct {
	structural *structuralschema.Structural
	validator  *cel.Validator
}

// NewRuntime prepares the version's validator; it returns nil when the version has no rules (or a schema the
// engine could not serve either).
func NewRuntime(schema *apiextensionsv1.JSONSchemaProps) *Runtime {
	if schema == nil {
		return nil
	}
	return NewRuntimeFrom(prepare(&apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema}))
}

// NewRuntimeFrom is NewRuntime with the version's schema as Prepare returned it. It takes the schema over
// (the validator's defaults are pruned in place, Internal's with them): call it after ReportPrepared and
// k8sversions' analysis of the same schemas. Later calls return the same Runtime.
func NewRuntimeFrom(ps *Schema) *Runtime {
	if ps == nil || ps.built {
		if ps == nil {
			return nil
		}
		return ps.runtime
	}
	ps.built = true
	if !ps.hasRules || ps.structErr != nil {
		return nil
	}
	// As the engine serves it: defaults pruned of unknown fields.
	s := ps.structural
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil
	}
	v := cel.NewValidator(s, true, celconfig.PerCallLimit)
	if v == nil {
		return nil
	}
	ps.runtime = &Runtime{structural: s, validator: v}
	return ps.runtime
}

// Cost validates obj (and, for an update, old) as the engine's CEL step does and returns the part of the
// runtime budget that the rules used. obj is the request's object: it is pruned and defaulted here, as the
// request pipeline does before validation. Validation errors are dropped: the engine reports them.
func (r *Runtime) Cost(ctx context.Context, obj, old map[string]interface{}) int64 {
	if r == nil || obj == nil {
		return 0
	}
	o := unstructuredJSON(obj)
	if o == nil {
		return 0
	}
	pruning.Prune(o, r.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(o, r.structural)
	structuraldefaulting.Default(o, r.structural)
	var opts []cel.Option
	var oldObj interface{}
	if old := unstructuredJSON(old); old != nil {
		oldObj = old
		opts = append(opts, cel.WithRatcheting(common.NewCorrelatedObject(o, old, &model.Structural{Structural: r.structural})))
	}
	_, remaining := r.validator.Validate(ctx, nil, r.structural, o, oldObj, DefaultLimits.RuntimeBudget, opts...)
	if remaining < 0 {
		return DefaultLimits.RuntimeBudget
	}
	return DefaultLimits.RuntimeBudget - remaining
}
