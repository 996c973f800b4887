package k8sversions

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"

	"crdplay/playground/internal/celcost"
	"crdplay/playground/internal/yamlpos"
)

// nodes finds the schema nodes of one version that hold rules, by the YAML segments celcost gives each
// rule, with the CEL context CRD validation compiles them in (ValidateCustomResourceDefinitionOpenAPISchema
// passes it down through properties, additionalProperties and items).
type nodes struct {
	root  *node
	cache map[string]*node
}

// node is one schema node with its CEL context.
type node struct {
	schema *apiextensions.JSONSchemaProps
	ctx    *apivalidation.CELSchemaContext
}

func newNodes(internal *apiextensions.JSONSchemaProps) *nodes {
	return &nodes{root: &node{schema: internal, ctx: apivalidation.RootCELContext(internal)}, cache: map[string]*node{}}
}

// find follows segs (relative to the schema root, ending in x-kubernetes-validations and the rule's index)
// to the rule's node; it returns the node and the rule's index there.
func (ns *nodes) find(segs []yamlpos.Seg) (*node, int, error) {
	if len(segs) < 2 || segs[len(segs)-2].Key != "x-kubernetes-validations" || segs[len(segs)-1].Index < 0 {
		return nil, 0, fmt.Errorf("not a rule path: %s", yamlpos.FormatSegs(segs))
	}
	j := segs[len(segs)-1].Index
	path := segs[:len(segs)-2]
	var key strings.Builder
	n := ns.root
	for i := 0; i < len(path); i++ {
		s := path[i]
		var next *node
		switch {
		case s.Key == "properties" && i+1 < len(path):
			i++
			name := path[i].Key
			key.WriteString("\x00p" + name)
			if c, ok := ns.cache[key.String()]; ok {
				n = c
				continue
			}
			p, ok := n.schema.Properties[name]
			if !ok {
				return nil, 0, fmt.Errorf("no property %q", name)
			}
			next = &node{schema: &p, ctx: n.ctx.ChildPropertyContext(&p, name)}
		case s.Key == "items":
			key.WriteString("\x00i")
			if c, ok := ns.cache[key.String()]; ok {
				n = c
				continue
			}
			if n.schema.Items == nil || n.schema.Items.Schema == nil {
				return nil, 0, fmt.Errorf("no items schema")
			}
			next = &node{schema: n.schema.Items.Schema, ctx: n.ctx.ChildItemsContext(n.schema.Items.Schema)}
		case s.Key == "additionalProperties":
			key.WriteString("\x00a")
			if c, ok := ns.cache[key.String()]; ok {
				n = c
				continue
			}
			if n.schema.AdditionalProperties == nil || n.schema.AdditionalProperties.Schema == nil {
				return nil, 0, fmt.Errorf("no additionalProperties schema")
			}
			ap := n.schema.AdditionalProperties.Schema
			next = &node{schema: ap, ctx: n.ctx.ChildAdditionalPropertiesContext(ap)}
		default:
			return nil, 0, fmt.Errorf("unexpected segment %q in a rule path", s.Key+strconv.Itoa(s.Index))
		}
		ns.cache[key.String()] = next
		n = next
	}
	return n, j, nil
}

// compile compiles rule j of the node in the new-expressions environment of compatibility version env, as
// CRD validation does. keepOptional says whether the server keeps the rule's optionalOldSelf.
func (n *node) compile(j, env int, keepOptional bool) outcome {
	info, err := n.ctx.TypeInfo()
	if err != nil || info == nil {
		return outcome{err: fmt.Sprintf("no type information for x-kubernetes-validations: %v", err)}
	}
	if j >= len(info.Schema.XValidations) {
		return outcome{err: "no such rule"}
	}
	return n.compileRules(info, info.Schema.XValidations[j:j+1], env, keepOptional)[0]
}

// compileAll compiles every rule of the node at once, as compile does each.
func (n *node) compileAll(env int, keepOptional bool) []outcome {
	info, err := n.ctx.TypeInfo()
	if err != nil || info == nil {
		return nil
	}
	return n.compileRules(info, info.Schema.XValidations, env, keepOptional)
}

// compileRules compiles rules as CRD validation compiles the node's (celcost.CompileAt, then each cost
// against the per-expression limit), in the environment of compatibility version env.
func (n *node) compileRules(info *apivalidation.CELTypeInfo, rules apiextensionsv1.ValidationRules, env int, keepOptional bool) []outcome {
	out := make([]outcome, len(rules))
	rs := make(apiextensionsv1.ValidationRules, len(rules))
	copy(rs, rules)
	if !keepOptional {
		for i := range rs {
			rs[i].OptionalOldSelf = nil
		}
	}
	// A shallow copy of the node whose rules are these.
	s := *info.Schema
	s.XValidations = rs
	results, err := celcost.CompileAt(n.ctx, &s, info.DeclType, envSet(env))
	for i := range out {
		if err != nil {
			out[i] = outcome{err: err.Error()}
			continue
		}
		if i >= len(results) {
			out[i] = outcome{ok: true}
			continue
		}
		out[i] = compiledOutcome(results[i])
	}
	return out
}

func compiledOutcome(cr celcost.Compiled) outcome {
	switch {
	case cr.Error != nil:
		return outcome{err: cr.Error.Detail}
	case cr.MessageExpressionError != nil:
		return outcome{err: cr.MessageExpressionError.Detail, msg: true}
	}
	if cr.Cost > celcost.DefaultLimits.PerExpression {
		return overLimit(cr.Cost)
	}
	return outcome{ok: true, cost: cr.Cost}
}

// overLimit is the outcome of a rule whose estimated cost exceeds the per-expression limit.
func overLimit(cost uint64) outcome {
	return outcome{err: fmt.Sprintf("%s: estimated cost %d exceeds the limit %d", costPrefix, cost, celcost.DefaultLimits.PerExpression), cost: cost}
}
