package celcost

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"
)

// ScratchInput is one expression to try as an x-kubernetes-validations rule of a version's schema.
type ScratchInput struct {
	// Self is the object path of the schema node the rule would sit on, as Rule.Self writes it: "" for the
	// root, "spec.tags[*]" for the items of a list (or the values of a map).
	Self string
	// Expression is the rule's text.
	Expression string
	// OptionalOldSelf is the rule's optionalOldSelf: oldSelf is then an optional, none on a create.
	OptionalOldSelf bool
	// Object is the request's object as JSON decodes it (pruned and defaulted here, as the request pipeline
	// does before validation); nil compiles the expression only. Old is the stored object of an update.
	Object, Old map[string]interface{}
}

// ScratchResult is what the API server would make of the expression as a rule, and its value on the object.
type ScratchResult struct {
	// Type is the expression's CEL type, as the checker infers it ("object" for a schema's object type).
	Type string `json:"type,omitempty"`
	// Errors are the compiler's, each at its line and column in the expression (1-based).
	Errors []ScratchIssue `json:"errors,omitempty"`
	// AsRule is upstream's refusal of the expression as a rule when it compiles as an expression but not as a
	// rule (a rule must evaluate to a bool), in the words of the API's 422.
	AsRule string `json:"asRule,omitempty"`
	// UsesOldSelf is true for a transition rule: without an old value (a create) the API does not evaluate it
	// unless OptionalOldSelf.
	UsesOldSelf bool `json:"usesOldSelf"`
	// MaxCost is the estimated cost of one evaluation, Cardinality how many times it can run per object
	// (CardinalityBounded when every list and map above it has maxItems/maxProperties), and Cost their
	// product: what CRD validation holds to Limits.PerExpression (ExceedsLimit).
	MaxCost            uint64 `json:"maxCost"`
	Cardinality        uint64 `json:"cardinality"`
	CardinalityBounded bool   `json:"cardinalityBounded"`
	Cost               uint64 `json:"cost"`
	ExceedsLimit       bool   `json:"exceedsLimit"`
	// Values has one entry per node of the object that Self names (none when the object lacks it).
	Values []ScratchValue `json:"values"`
	// RuntimeCost is the sum of the evaluations' actual costs, what the object's validation would spend of
	// Limits.RuntimeBudget.
	RuntimeCost int64 `json:"runtimeCost"`
}

// ScratchIssue is one compiler error.
type ScratchIssue struct {
	Message string `json:"message"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
}

// ScratchValue is the expression's value at one node of the object.
type ScratchValue struct {
	// Path is the node's path in the object ("spec.tags[0]"; "" for the root).
	Path string `json:"path"`
	// Value is the value as JSON writes it; absent with Error or Skipped.
	Value interface{} `json:"value,omitempty"`
	// Error is the evaluation's error (a missing field, the per-call cost limit).
	Error string `json:"error,omitempty"`
	// Skipped says why the API would not evaluate the rule here (oldSelf without an old value).
	Skipped string `json:"skipped,omitempty"`
	// Cost is the evaluation's actual cost.
	Cost int64 `json:"cost"`
}

// step is one segment of a Self path: a property, or "[*]" (a list's items or a map's values).
type step struct {
	name  string
	items bool
}

func parseSelf(self string) ([]step, error) {
	var out []step
	for _, part := range strings.Split(self, ".") {
		if part == "" {
			continue
		}
		name := part
		n := 0
		for strings.HasSuffix(name, "[*]") {
			name = strings.TrimSuffix(name, "[*]")
			n++
		}
		if strings.ContainsAny(name, "[]") {
			return nil, fmt.Errorf("self %q: want property names and [*], as spec.items[*]", self)
		}
		if name != "" {
			out = append(out, step{name: name})
		}
		for range n {
			out = append(out, step{items: true})
		}
	}
	return out, nil
}

// Scratch compiles in.Expression as CRD validation compiles a new rule at the node in.Self of ps (upstream's
// cel.Compile, in the same environment, compatibility version, per-call limit and cardinality as the
// version's own rules), and evaluates it on every node of in.Object that Self names, with self and oldSelf
// bound as upstream's validator binds them. Unlike a rule, any type of value is evaluated (AsRule says what
// the API would refuse).
func Scratch(ctx context.Context, ps *Schema, in ScratchInput) (*ScratchResult, error) {
	if ps == nil || ps.Internal == nil {
		return nil, fmt.Errorf("the version has no schema")
	}
	steps, err := parseSelf(in.Self)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Expression) == "" {
		return &ScratchResult{Values: []ScratchValue{}}, nil
	}
	served, err := ps.servedStructural()
	if err != nil {
		return nil, err
	}
	if _, err := nodeAt(served, steps, in.Self); err != nil {
		return nil, err
	}
	rule := apiextensionsv1.ValidationRule{Rule: in.Expression}
	if in.OptionalOldSelf {
		t := true
		rule.OptionalOldSelf = &t
	}
	node, err := ps.ruleNode(in.Self, steps)
	if err != nil {
		return nil, err
	}
	// The node's structural schema with the expression as its only rule, as cel.Compile reads a node's rules.
	at := *node.info.Schema
	at.XValidations = apiextensionsv1.ValidationRules{rule}
	capture := &envCapture{EnvLoader: cel.NewExpressionsEnvLoader()}
	envSet := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	compiled, err := compileAt(node.ctx, &at, node.info.DeclType, envSet, capture)
	if err != nil {
		return nil, err
	}
	res := &ScratchResult{Values: []ScratchValue{}}
	if len(compiled) == 1 {
		c := compiled[0]
		res.UsesOldSelf, res.MaxCost = c.UsesOldSelf, c.MaxCost
		res.Cardinality, res.CardinalityBounded, res.Cost = c.Cardinality, c.CardinalityBounded, c.Cost
		res.ExceedsLimit = c.Error == nil && res.Cost > DefaultLimits.PerExpression
		if c.Error != nil {
			res.AsRule = c.Error.Detail
		}
	}
	if capture.env == nil {
		return res, nil
	}
	// The expression compiled again in the environment the rule got, whatever its type, for its value.
	ast, iss := capture.env.Compile(in.Expression)
	if iss != nil && iss.Err() != nil {
		for _, e := range iss.Errors() {
			res.Errors = append(res.Errors, ScratchIssue{Message: e.Message, Line: e.Location.Line(), Column: e.Location.Column() + 1})
		}
		return res, nil
	}
	res.Type = typeName(ast.OutputType())
	if res.AsRule == "" && res.Type != "bool" {
		res.AsRule = "cel expression must evaluate to a bool"
	}
	prog, err := capture.env.Program(ast,
		celgo.CostLimit(celconfig.PerCallLimit),
		celgo.CostTracking(&library.CostEstimator{}),
		celgo.InterruptCheckFrequency(celconfig.CheckFrequency),
	)
	if err != nil {
		return nil, err
	}
	if !res.UsesOldSelf {
		res.UsesOldSelf = usesOldSelf(ast)
	}
	if in.Object == nil {
		return res, nil
	}
	obj := servedObject(in.Object, served)
	var old map[string]interface{}
	if in.Old != nil {
		old = servedObject(in.Old, served)
	}
	// As the validator: a resource's root (the object, an embedded resource) has its apiVersion, kind and
	// metadata.name and generateName whatever the schema says.
	atRoot := len(steps) == 0
	var walk func(v, oldV interface{}, s *structuralschema.Structural, steps []step, path string)
	walk = func(v, oldV interface{}, s *structuralschema.Structural, steps []step, path string) {
		if v == nil || s == nil {
			return
		}
		if len(steps) == 0 {
			if atRoot || s.XEmbeddedResource {
				s = model.WithTypeAndObjectMeta(s)
			}
			res.Values = append(res.Values, evalAt(ctx, prog, v, oldV, s, path, res.UsesOldSelf, in.OptionalOldSelf))
			return
		}
		st := steps[0]
		switch {
		case !st.items:
			m, _ := v.(map[string]interface{})
			sub, ok := s.Properties[st.name]
			if m == nil || !ok {
				return
			}
			var o interface{}
			if om, _ := oldV.(map[string]interface{}); om != nil && cel.MapIsCorrelatable(s.XMapType) {
				o = om[st.name]
			}
			walk(m[st.name], o, &sub, steps[1:], joinPath(path, st.name))
		case s.Items != nil:
			l, _ := v.([]interface{})
			ol, _ := oldV.([]interface{})
			// As the validator: only a map-type list's items have an old value.
			olds := common.MakeMapList(&model.Structural{Structural: s}, ol)
			for i, item := range l {
				walk(item, olds.Get(item), s.Items, steps[1:], path+"["+strconv.Itoa(i)+"]")
			}
		case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
			m, _ := v.(map[string]interface{})
			om, _ := oldV.(map[string]interface{})
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				var o interface{}
				if om != nil && cel.MapIsCorrelatable(s.XMapType) {
					o = om[k]
				}
				walk(m[k], o, s.AdditionalProperties.Structural, steps[1:], path+"["+strconv.Quote(k)+"]")
			}
		}
	}
	walk(obj, nilIfAbsent(old), served, steps, "")
	for _, v := range res.Values {
		res.RuntimeCost += v.Cost
	}
	return res, nil
}

// nilIfAbsent keeps a nil map an untyped nil, which the walk reads as "no old object".
func nilIfAbsent(m map[string]interface{}) interface{} {
	if m == nil {
		return nil
	}
	return m
}

func evalAt(ctx context.Context, prog celgo.Program, v, oldV interface{}, s *structuralschema.Structural, path string, usesOldSelf, optionalOldSelf bool) ScratchValue {
	out := ScratchValue{Path: path}
	vars := map[string]interface{}{cel.ScopedVarName: cel.UnstructuredToVal(v, s)}
	switch {
	case optionalOldSelf && oldV == nil:
		vars[cel.OldScopedVarName] = types.OptionalNone
	case optionalOldSelf:
		vars[cel.OldScopedVarName] = types.OptionalOf(cel.UnstructuredToVal(oldV, s))
	case oldV != nil:
		vars[cel.OldScopedVarName] = cel.UnstructuredToVal(oldV, s)
	case usesOldSelf:
		// As the validator: a transition rule runs only where there is an old value to compare with.
		out.Skipped = "no old value here (a create, or nothing to correlate it with): the API does not evaluate a rule that uses oldSelf"
		return out
	}
	act, err := interpreter.NewActivation(vars)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	val, details, err := prog.ContextEval(ctx, act)
	if details != nil && details.ActualCost() != nil {
		out.Cost = int64(*details.ActualCost())
	}
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Value = native(val)
	return out
}

// native is a CEL value as JSON writes it: lists and maps element by element as CEL sees them, Kubernetes'
// library types (quantities, durations, IPs) as their string form.
func native(v ref.Val) interface{} {
	switch x := v.(type) {
	case types.Bool, types.Int, types.Uint, types.Double, types.String, types.Bytes:
		return x.Value()
	case types.Null:
		return nil
	case *types.Optional:
		if x.HasValue() {
			return native(x.GetValue())
		}
		return nil
	case traits.Mapper:
		out := map[string]interface{}{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			k := it.Next()
			key := fmt.Sprint(native(k))
			out[key] = native(x.Get(k))
		}
		return out
	case traits.Lister:
		out := []interface{}{}
		for it := x.Iterator(); it.HasNext() == types.True; {
			out = append(out, native(it.Next()))
		}
		return out
	}
	if s, ok := v.ConvertToType(types.StringType).(types.String); ok {
		return string(s)
	}
	return fmt.Sprint(v.Value())
}

// typeName is a checked type as an author reads it: a schema's object types by what they are, not by the
// generated names the environment gives them.
func typeName(t *celgo.Type) string {
	if t == nil {
		return ""
	}
	params := t.Parameters()
	switch {
	case t.Kind() == types.StructKind && strings.HasPrefix(t.TypeName(), "selfType"):
		return "object"
	case t.Kind() == types.ListKind && len(params) == 1:
		return "list(" + typeName(params[0]) + ")"
	case t.Kind() == types.MapKind && len(params) == 2:
		return "map(" + typeName(params[0]) + ", " + typeName(params[1]) + ")"
	case t.Kind() == types.OpaqueKind && len(params) == 1:
		return t.TypeName() + "(" + typeName(params[0]) + ")"
	}
	return t.String()
}

// usesOldSelf says whether the checked expression refers to oldSelf (as compileRule finds out for a rule).
func usesOldSelf(ast *celgo.Ast) bool {
	checked, err := celgo.AstToCheckedExpr(ast)
	if err != nil {
		return false
	}
	for _, r := range checked.ReferenceMap {
		if r.Name == cel.OldScopedVarName {
			return true
		}
	}
	return false
}

// envCapture is the environment loader CRD validation uses, keeping the environment it gave the rule.
type envCapture struct {
	cel.EnvLoader
	env *celgo.Env
}

func (c *envCapture) RuleEnv(s *environment.EnvSet, expr string) *celgo.Env {
	c.env = c.EnvLoader.RuleEnv(s, expr)
	return c.env
}

// scratchNode is the CEL context and type of the node a scratch rule sits on: its CEL type and cardinality do
// not depend on the rule, so an expression typed character by character converts the schema once, not on
// every keystroke (a 2.8 MB schema's conversion takes about 50 ms natively).
type scratchNode struct {
	self string
	ctx  *apivalidation.CELSchemaContext
	info *apivalidation.CELTypeInfo
}

// ruleNode walks the schema, with a rule at the node of steps, as CRD validation walks it, so that the node's
// CEL type and cardinality are upstream's CELSchemaContext's. The last node walked is kept.
func (ps *Schema) ruleNode(self string, steps []step) (*scratchNode, error) {
	if n := ps.scratchNode; n != nil && n.self == self {
		return n, nil
	}
	root := withRule(ps.Internal, steps, apiextensions.ValidationRule{Rule: "true"})
	cctx := apivalidation.RootCELContext(root)
	s := root
	for _, st := range steps {
		switch {
		case !st.items:
			p := s.Properties[st.name]
			s = &p
			cctx = cctx.ChildPropertyContext(s, st.name)
		case s.Items != nil && s.Items.Schema != nil:
			s = s.Items.Schema
			cctx = cctx.ChildItemsContext(s)
		default:
			s = s.AdditionalProperties.Schema
			cctx = cctx.ChildAdditionalPropertiesContext(s)
		}
	}
	info, err := cctx.TypeInfo()
	if err != nil || info == nil {
		return nil, fmt.Errorf("no CEL type for %s: %v", selfName(self), err)
	}
	ps.scratchNode = &scratchNode{self: self, ctx: cctx, info: info}
	return ps.scratchNode, nil
}

// withRule is s with rule as the only rule of the node at steps; the nodes on the way are copies.
func withRule(s *apiextensions.JSONSchemaProps, steps []step, rule apiextensions.ValidationRule) *apiextensions.JSONSchemaProps {
	c := *s
	if len(steps) == 0 {
		c.XValidations = apiextensions.ValidationRules{rule}
		return &c
	}
	st := steps[0]
	switch {
	case !st.items:
		props := make(map[string]apiextensions.JSONSchemaProps, len(s.Properties))
		for k, v := range s.Properties {
			props[k] = v
		}
		child := props[st.name]
		props[st.name] = *withRule(&child, steps[1:], rule)
		c.Properties = props
	case s.Items != nil && s.Items.Schema != nil:
		items := *s.Items
		items.Schema = withRule(s.Items.Schema, steps[1:], rule)
		c.Items = &items
	default:
		ap := *s.AdditionalProperties
		ap.Schema = withRule(s.AdditionalProperties.Schema, steps[1:], rule)
		c.AdditionalProperties = &ap
	}
	return &c
}

// nodeAt checks that steps lead to a node of the served schema.
func nodeAt(s *structuralschema.Structural, steps []step, self string) (*structuralschema.Structural, error) {
	for i, st := range steps {
		switch {
		case !st.items:
			p, ok := s.Properties[st.name]
			if !ok {
				return nil, fmt.Errorf("%s: the schema has no property %q here", selfName(self), pathOf(steps[:i+1]))
			}
			s = &p
		case s.Items != nil:
			s = s.Items
		case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
			s = s.AdditionalProperties.Structural
		default:
			return nil, fmt.Errorf("%s: %s is neither a list nor a map", selfName(self), pathOf(steps[:i]))
		}
	}
	return s, nil
}

func pathOf(steps []step) string {
	var b strings.Builder
	for _, st := range steps {
		if st.items {
			b.WriteString("[*]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(st.name)
	}
	return b.String()
}

func selfName(self string) string {
	if self == "" {
		return "self (the object)"
	}
	return "self " + self
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// servedStructural is the version's schema as the engine serves it (structural, defaults pruned), for any
// version: the runtime validator's when the version has rules, else built once here.
func (ps *Schema) servedStructural() (*structuralschema.Structural, error) {
	if ps.hasRules {
		switch {
		case ps.structErr != nil:
			return nil, fmt.Errorf("the schema is not structural: %v", ps.structErr)
		case ps.invalid != "":
			return nil, fmt.Errorf("the schema is not structural: %s", ps.invalid)
		}
		if rt := NewRuntimeFrom(ps); rt != nil {
			return rt.structural, nil
		}
		return nil, fmt.Errorf("the schema's defaults cannot be pruned")
	}
	if ps.scratch == nil && ps.scratchErr == nil {
		s, err := structuralschema.NewStructural(ps.Internal)
		if err == nil {
			if errs := structuralschema.ValidateStructural(nil, s); len(errs) > 0 {
				err = fmt.Errorf("the schema is not structural: %v", errs.ToAggregate())
			}
		}
		if err == nil {
			err = structuraldefaulting.PruneDefaults(s)
		}
		ps.scratch, ps.scratchErr = s, err
	}
	return ps.scratch, ps.scratchErr
}

// servedObject is obj as the validator sees it in a request: a copy, pruned and defaulted.
func servedObject(obj map[string]interface{}, s *structuralschema.Structural) map[string]interface{} {
	o := unstructuredJSON(obj)
	if o == nil {
		return nil
	}
	pruning.Prune(o, s, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(o, s)
	structuraldefaulting.Default(o, s)
	return o
}
