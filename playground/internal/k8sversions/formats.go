package k8sversions

import (
	"fmt"
	"sort"

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
// minor up to Newest knows gets no reason: the engine warns about it.
func formatReasons(s *apiextensions.JSONSchemaProps, fld *field.Path, segs []yamlpos.Seg) []Reason {
	var out []Reason
	var visit func(s *apiextensions.JSONSchemaProps, fld *field.Path, segs []yamlpos.Seg, depth int)
	visit = func(s *apiextensions.JSONSchemaProps, fld *field.Path, segs []yamlpos.Seg, depth int) {
		if s == nil || depth > maxDepth {
			return
		}
		if s.Format != "" {
			if m := formatMinor(s.Format, s.Type); m > Oldest {
				out = append(out, Reason{
					Field: fld.Child("format").String(), Feature: "format " + s.Format, Minor: m, Effect: Ignored,
					Message: fmt.Sprintf("needs Kubernetes 1.%d or later: format %s; older servers do not validate it", m, s.Format),
					Segs:    with(segs, yamlpos.K("format")),
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
			visit(&p, fld.Child("properties").Key(k), with(segs, yamlpos.K("properties"), yamlpos.K(k)), depth+1)
		}
		if s.AdditionalProperties != nil {
			visit(s.AdditionalProperties.Schema, fld.Child("additionalProperties"), with(segs, yamlpos.K("additionalProperties")), depth+1)
		}
		if s.Items != nil {
			visit(s.Items.Schema, fld.Child("items"), with(segs, yamlpos.K("items")), depth+1)
			for i := range s.Items.JSONSchemas {
				visit(&s.Items.JSONSchemas[i], fld.Child("items").Index(i), with(segs, yamlpos.K("items"), yamlpos.I(i)), depth+1)
			}
		}
		for name, list := range map[string][]apiextensions.JSONSchemaProps{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf} {
			for i := range list {
				visit(&list[i], fld.Child(name).Index(i), with(segs, yamlpos.K(name), yamlpos.I(i)), depth+1)
			}
		}
		visit(s.Not, fld.Child("not"), with(segs, yamlpos.K("not")), depth+1)
	}
	visit(s, fld, segs, 0)
	sort.SliceStable(out, func(a, b int) bool { return out[a].Field < out[b].Field })
	return out
}

// formatMinor is the oldest minor from which every server up to Newest validates format on a value of
// type typ; 0 when Newest does not.
func formatMinor(format, typ string) int {
	known := func(minor int) bool {
		s := &spec.Schema{SchemaProps: spec.SchemaProps{Format: format, Type: []string{typ}}}
		return len(apiservervalidation.GetUnrecognizedFormats(s, version.MajorMinor(1, uint(minor-1)))) == 0
	}
	m := 0
	for n := Newest(); n >= Oldest && known(n); n-- {
		m = n
	}
	return m
}
