// Package explain turns a CRD version's OpenAPI schema into the tree the page shows as `kubectl explain`,
// and uses for hover and completion in the object editor: every field with its type, description, default,
// validations, enum and CEL rules, and where the field's schema is written in the CRD text.
package explain

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"

	"crdplay/playground/internal/yamlpos"
)

// Node is one schema node. Children: Properties for an object's fields, Items for a list's elements,
// AdditionalProperties for a map's values.
type Node struct {
	// Name is the field name; "[*]" for list items and map values; "" for the root.
	Name string `json:"name"`
	// Path is the object path of the field: "spec.containers[*].name", "metadata", "" for the root.
	Path string `json:"path"`
	// Type is the schema's type ("object", "array", "string", "integer", "number", "boolean"), "" when unset.
	Type string `json:"type,omitempty"`
	// Explain is the type as `kubectl explain` prints it: "Object", "[]string", "map[string]Object",
	// "IntOrString", "integer".
	Explain     string `json:"explain"`
	Format      string `json:"format,omitempty"`
	Description string `json:"description,omitempty"`
	// Required is true when the parent object lists this field in required.
	Required bool              `json:"required,omitempty"`
	Nullable bool              `json:"nullable,omitempty"`
	Default  json.RawMessage   `json:"default,omitempty"`
	Enum     []json.RawMessage `json:"enum,omitempty"`
	// Validations holds the schema's value constraints, when it has any.
	Validations           *Validations `json:"validations,omitempty"`
	Rules                 []Rule       `json:"rules,omitempty"`
	IntOrString           bool         `json:"intOrString,omitempty"`
	PreserveUnknownFields bool         `json:"preserveUnknownFields,omitempty"`
	EmbeddedResource      bool         `json:"embeddedResource,omitempty"`
	ListType              string       `json:"listType,omitempty"`
	ListMapKeys           []string     `json:"listMapKeys,omitempty"`
	MapType               string       `json:"mapType,omitempty"`
	// Combinators counts the allOf, anyOf, oneOf and not schemas that also constrain the value; they are
	// shown as counts because they add constraints, not fields.
	Combinators *Combinators `json:"combinators,omitempty"`
	// Span is where this node's schema is in the CRD text: the key that names it (properties' entry,
	// "items", "additionalProperties", "openAPIV3Schema").
	Span *yamlpos.Span `json:"span,omitempty"`
	// Builtin marks apiVersion, kind and metadata (with ObjectMeta's fields) when the CRD's schema does not
	// declare them: every custom resource has them, and kubectl explain shows them with these descriptions.
	Builtin bool `json:"builtin,omitempty"`

	Properties           []*Node `json:"properties,omitempty"`
	Items                *Node   `json:"items,omitempty"`
	AdditionalProperties *Node   `json:"additionalProperties,omitempty"`
}

// Validations are the OpenAPI value constraints of a node.
type Validations struct {
	Minimum          *float64 `json:"minimum,omitempty"`
	ExclusiveMinimum bool     `json:"exclusiveMinimum,omitempty"`
	Maximum          *float64 `json:"maximum,omitempty"`
	ExclusiveMaximum bool     `json:"exclusiveMaximum,omitempty"`
	MultipleOf       *float64 `json:"multipleOf,omitempty"`
	MinLength        *int64   `json:"minLength,omitempty"`
	MaxLength        *int64   `json:"maxLength,omitempty"`
	Pattern          string   `json:"pattern,omitempty"`
	MinItems         *int64   `json:"minItems,omitempty"`
	MaxItems         *int64   `json:"maxItems,omitempty"`
	UniqueItems      bool     `json:"uniqueItems,omitempty"`
	MinProperties    *int64   `json:"minProperties,omitempty"`
	MaxProperties    *int64   `json:"maxProperties,omitempty"`
}

// Rule is an x-kubernetes-validations entry.
type Rule struct {
	Rule              string `json:"rule"`
	Message           string `json:"message,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
	Reason            string `json:"reason,omitempty"`
	FieldPath         string `json:"fieldPath,omitempty"`
	OptionalOldSelf   bool   `json:"optionalOldSelf,omitempty"`
}

// Combinators counts a node's allOf/anyOf/oneOf/not schemas.
type Combinators struct {
	AllOf int  `json:"allOf,omitempty"`
	AnyOf int  `json:"anyOf,omitempty"`
	OneOf int  `json:"oneOf,omitempty"`
	Not   bool `json:"not,omitempty"`
}

// Locator finds the span of a path in the CRD document; nil leaves spans out.
type Locator func(segs []yamlpos.Seg) *yamlpos.Span

// maxNodes bounds a tree: far above the largest real CRD (argo-workflows, about 10,500 schema nodes), far
// below what would make the page's JSON unmanageable.
const maxNodes = 200000

// Build returns the tree of schema, the openAPIV3Schema of a version, whose key in the CRD text is at segs.
func Build(schema *apiextensionsv1.JSONSchemaProps, segs []yamlpos.Seg, locate Locator) *Node {
	if schema == nil {
		return nil
	}
	b := builder{locate: locate}
	root := b.node(schema, "", "", segs, false, 0)
	addTypeAndObjectMeta(root)
	return root
}

// addTypeAndObjectMeta gives the root the fields every object has, where the schema leaves them out.
func addTypeAndObjectMeta(root *Node) {
	has := map[string]bool{}
	for _, p := range root.Properties {
		has[p.Name] = true
	}
	typeDocs := metav1.TypeMeta{}.SwaggerDoc()
	var add []*Node
	for _, name := range []string{"apiVersion", "kind"} {
		if !has[name] {
			add = append(add, &Node{Name: name, Path: name, Type: "string", Explain: "string", Description: typeDocs[name], Builtin: true})
		}
	}
	if !has["metadata"] {
		add = append(add, objectMeta())
	}
	if len(add) == 0 {
		return
	}
	root.Properties = append(root.Properties, add...)
	sort.SliceStable(root.Properties, func(i, j int) bool { return root.Properties[i].Name < root.Properties[j].Name })
}

// objectMeta is the metadata node: ObjectMeta's fields, named and described as the API documents them.
func objectMeta() *Node {
	docs := metav1.ObjectMeta{}.SwaggerDoc()
	n := &Node{Name: "metadata", Path: "metadata", Type: "object", Explain: "ObjectMeta",
		Description: metav1beta1.PartialObjectMetadata{}.SwaggerDoc()["metadata"], Builtin: true}
	t := reflect.TypeOf(metav1.ObjectMeta{})
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		typ, explain := goType(f.Type)
		n.Properties = append(n.Properties, &Node{Name: name, Path: "metadata." + name, Type: typ, Explain: explain, Description: docs[name], Builtin: true})
	}
	sort.Slice(n.Properties, func(i, j int) bool { return n.Properties[i].Name < n.Properties[j].Name })
	return n
}

// goType names an ObjectMeta field's type in OpenAPI and kubectl explain terms.
func goType(t reflect.Type) (typ, explain string) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeOf(metav1.Time{}):
		return "string", "string"
	case t.Kind() == reflect.String:
		return "string", "string"
	case t.Kind() == reflect.Int64 || t.Kind() == reflect.Int32:
		return "integer", "integer"
	case t.Kind() == reflect.Map:
		return "object", "map[string]string"
	case t.Kind() == reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "array", "[]string"
		}
		return "array", "[]" + t.Elem().Name()
	}
	return "object", t.Name()
}

type builder struct {
	locate Locator
	count  int
}

func (b *builder) node(s *apiextensionsv1.JSONSchemaProps, name, path string, segs []yamlpos.Seg, required bool, depth int) *Node {
	b.count++
	n := &Node{
		Name:                  name,
		Path:                  path,
		Type:                  s.Type,
		Format:                s.Format,
		Description:           s.Description,
		Required:              required,
		Nullable:              s.Nullable,
		IntOrString:           s.XIntOrString,
		PreserveUnknownFields: s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields,
		EmbeddedResource:      s.XEmbeddedResource,
		ListMapKeys:           s.XListMapKeys,
	}
	if s.XListType != nil {
		n.ListType = *s.XListType
	}
	if s.XMapType != nil {
		n.MapType = *s.XMapType
	}
	if s.Default != nil {
		n.Default = json.RawMessage(s.Default.Raw)
	}
	for _, e := range s.Enum {
		n.Enum = append(n.Enum, json.RawMessage(e.Raw))
	}
	v := Validations{
		Minimum: s.Minimum, ExclusiveMinimum: s.ExclusiveMinimum, Maximum: s.Maximum, ExclusiveMaximum: s.ExclusiveMaximum,
		MultipleOf: s.MultipleOf, MinLength: s.MinLength, MaxLength: s.MaxLength, Pattern: s.Pattern,
		MinItems: s.MinItems, MaxItems: s.MaxItems, UniqueItems: s.UniqueItems,
		MinProperties: s.MinProperties, MaxProperties: s.MaxProperties,
	}
	if v != (Validations{}) {
		n.Validations = &v
	}
	for _, r := range s.XValidations {
		rule := Rule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression, FieldPath: r.FieldPath,
			OptionalOldSelf: r.OptionalOldSelf != nil && *r.OptionalOldSelf}
		if r.Reason != nil {
			rule.Reason = string(*r.Reason)
		}
		n.Rules = append(n.Rules, rule)
	}
	if c := (Combinators{AllOf: len(s.AllOf), AnyOf: len(s.AnyOf), OneOf: len(s.OneOf), Not: s.Not != nil}); c != (Combinators{}) {
		n.Combinators = &c
	}
	if b.locate != nil {
		n.Span = b.locate(segs)
	}
	if depth < 1000 && b.count < maxNodes {
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names) // as kubectl explain lists fields
		for _, k := range names {
			p := s.Properties[k]
			n.Properties = append(n.Properties, b.node(&p, k, join(path, k), yamlpos.Append(segs, yamlpos.K("properties"), yamlpos.K(k)), req[k], depth+1))
		}
		if s.Items != nil && s.Items.Schema != nil {
			n.Items = b.node(s.Items.Schema, "[*]", path+"[*]", yamlpos.Append(segs, yamlpos.K("items")), false, depth+1)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			n.AdditionalProperties = b.node(s.AdditionalProperties.Schema, "[*]", path+"[*]", yamlpos.Append(segs, yamlpos.K("additionalProperties")), false, depth+1)
		}
	}
	n.Explain = explainType(s)
	return n
}

// explainType prints a schema's type as kubectl explain does (<Object>, <[]string>, <map[string]string>).
func explainType(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s == nil:
		return "Object"
	case s.XIntOrString:
		return "IntOrString"
	case s.Type == "array":
		if s.Items != nil && s.Items.Schema != nil {
			return "[]" + explainType(s.Items.Schema)
		}
		return "[]Object"
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && len(s.Properties) == 0:
		return "map[string]" + explainType(s.AdditionalProperties.Schema)
	case s.Type == "object" || s.Type == "":
		return "Object"
	}
	return s.Type
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
