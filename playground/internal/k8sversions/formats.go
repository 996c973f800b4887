package k8sversions

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"crdplay/playground/internal/yamlpos"
)

// maxDepth bounds the schema walk; the YAML parser already refuses deeper documents.
const maxDepth = 10000

// formatReasons lists the string formats of a schema that servers older than some minor do not validate:
// the schema validator of a server strips the formats its compatibility version does not know
// (StripUnsupportedFormatsPostProcessorForVersion, whose list GetUnrecognizedFormats reads). A format no
// minor up to Newest knows gets no reason: the engine warns about it. segs is the schema root's path.
func formatReasons(s *apiextensions.JSONSchemaProps, segs []yamlpos.Seg) []Reason {
	var out []Reason
	// One path, grown and cut as the walk goes, copied only for a reason: large CRDs have 10,000 nodes.
	path := yamlpos.Append(segs)
	var visit func(s *apiextensions.JSONSchemaProps, depth int)
	child := func(s *apiextensions.JSONSchemaProps, depth int, more ...yamlpos.Seg) {
		n := len(path)
		path = append(path, more...)
		visit(s, depth+1)
		path = path[:n]
	}
	visit = func(s *apiextensions.JSONSchemaProps, depth int) {
		if s == nil || depth > maxDepth {
			return
		}
		if s.Format != "" {
			if m := formatMinor(s.Format, s.Type); m > Oldest {
				at := yamlpos.Append(path, yamlpos.K("format"))
				out = append(out, Reason{
					Field: fieldPath(at), Feature: "format " + s.Format, Minor: m, Effect: Ignored,
					Message: fmt.Sprintf("needs Kubernetes 1.%d or later: format %s; older servers do not validate it", m, s.Format),
					Segs:    at,
				})
			}
		}
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			p := s.Properties[k]
			child(&p, depth, yamlpos.K("properties"), yamlpos.K(k))
		}
		if s.AdditionalProperties != nil {
			child(s.AdditionalProperties.Schema, depth, yamlpos.K("additionalProperties"))
		}
		if s.Items != nil {
			child(s.Items.Schema, depth, yamlpos.K("items"))
			for i := range s.Items.JSONSchemas {
				child(&s.Items.JSONSchemas[i], depth, yamlpos.K("items"), yamlpos.I(i))
			}
		}
		for i := range s.AllOf {
			child(&s.AllOf[i], depth, yamlpos.K("allOf"), yamlpos.I(i))
		}
		for i := range s.AnyOf {
			child(&s.AnyOf[i], depth, yamlpos.K("anyOf"), yamlpos.I(i))
		}
		for i := range s.OneOf {
			child(&s.OneOf[i], depth, yamlpos.K("oneOf"), yamlpos.I(i))
		}
		child(s.Not, depth, yamlpos.K("not"))
	}
	visit(s, 0)
	return out
}

// fieldPath names segs as field.Path does: map keys under properties in brackets
// (spec.versions[0].schema.openAPIV3Schema.properties[spec].format).
func fieldPath(segs []yamlpos.Seg) string {
	p := field.NewPath(segs[0].Key)
	for i := 1; i < len(segs); i++ {
		switch s := segs[i]; {
		case s.Key == "" && s.Index >= 0:
			p = p.Index(s.Index)
		case s.Key == "properties" && i+1 < len(segs):
			i++
			p = p.Child("properties").Key(segs[i].Key)
		default:
			p = p.Child(s.Key)
		}
	}
	return p.String()
}

// formatMinors caches formatMinor by format and type.
var formatMinors sync.Map

// formatMinor is the oldest minor from which every server up to Newest validates format on a value of
// type typ; 0 when Newest does not.
func formatMinor(format, typ string) int {
	key := typ + "/" + format
	if m, ok := formatMinors.Load(key); ok {
		return m.(int)
	}
	known := func(minor int) bool {
		s := &spec.Schema{SchemaProps: spec.SchemaProps{Format: format, Type: []string{typ}}}
		return len(apiservervalidation.GetUnrecognizedFormats(s, version.MajorMinor(1, uint(minor-1)))) == 0
	}
	m := 0
	for n := Newest(); n >= Oldest && known(n); n-- {
		m = n
	}
	formatMinors.Store(key, m)
	return m
}
