//go:build !js

// Not under js/wasm: this test compares with upstream's builder, which links kube-apiserver's endpoints and
// client-go's REST client, and tools/wasmws cuts code they need from the browser's workspace. go test ./...
// runs it natively; the browser's engine is checked by the wasm tests and the Chromium oracle replay.

package openapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	utilopenapi "k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Upstream's builder is imported here only: tests may reach what the engine must not.

// optionSets are the variants compared: the apply models' zero options, what kube-apiserver publishes at
// /openapi/v3 and /openapi/v2, and the stripping options.
var optionSets = []Options{
	{},
	{IncludeSelectableFields: true},
	{V2: true, IncludeSelectableFields: true},
	{StripValueValidation: true, StripNullable: true, AllowNonStructural: true},
	{V2: true, StripValueValidation: true, StripNullable: true},
}

func upstreamOptions(o Options) builder.Options {
	return builder.Options{
		V2:                      o.V2,
		StripValueValidation:    o.StripValueValidation,
		StripNullable:           o.StripNullable,
		AllowNonStructural:      o.AllowNonStructural,
		IncludeSelectableFields: o.IncludeSelectableFields,
	}
}

// TestBuildMatchesBuilder compares our documents with upstream builder's for every accepted oracle CRD and every
// corpus CRD, each version and each option set: the component schemas as Go values (what the type converter
// reads) and the whole document as JSON (what clients read).
func TestBuildMatchesBuilder(t *testing.T) {
	crds := allCRDs(t)
	identical := 0
	for _, c := range crds {
		ok := t.Run(c.name, func(t *testing.T) {
			for _, v := range c.crd.Spec.Versions {
				for _, o := range optionSets {
					label := fmt.Sprintf("version %s, options %+v", v.Name, o)
					ours, err := BuildV3WithOptions(c.crd, v.Name, o)
					theirs, theirErr := builder.BuildOpenAPIV3(c.crd, v.Name, upstreamOptions(o))
					if !sameError(err, theirErr) {
						t.Errorf("%s: v3 error %v, upstream %v", label, err, theirErr)
						continue
					}
					if err == nil {
						compareSchemas(t, label+" v3", ours.Components.Schemas, theirs.Components.Schemas)
						compareJSON(t, label+" v3 document", ours, theirs)
					}

					oursV2, err := BuildV2(c.crd, v.Name, o)
					theirsV2, theirErr := builder.BuildOpenAPIV2(c.crd, v.Name, upstreamOptions(o))
					if !sameError(err, theirErr) {
						t.Errorf("%s: v2 error %v, upstream %v", label, err, theirErr)
						continue
					}
					if err == nil {
						compareSchemas(t, label+" v2", schemaPointers(oursV2.Definitions), schemaPointers(theirsV2.Definitions))
						compareJSON(t, label+" v2 document", oursV2, theirsV2)
					}
				}
			}
		})
		if ok {
			identical++
		}
	}
	t.Logf("%d of %d CRDs identical to upstream builder (all versions, %d option sets, v3 and v2)", identical, len(crds), len(optionSets))
}

// TestModelsMatchUpstreamMerge runs kube-apiserver's buildOpenAPIModelsForApply with upstream's builder and merge,
// including the static spec kube-apiserver passes (the CRD API's definitions), and compares with Models.
func TestModelsMatchUpstreamMerge(t *testing.T) {
	static := staticSpecForTest(t)
	for _, c := range allCRDs(t) {
		t.Run(c.name, func(t *testing.T) {
			ours, err := Models(c.crd)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := upstreamModels(static, c.crd)
			if err != nil {
				t.Fatal(err)
			}
			compareSchemas(t, "models", ours, theirs)
			if _, err := TypeConverter(c.crd); err != nil {
				t.Errorf("TypeConverter: %v", err)
			}
		})
	}
}

// upstreamModels is buildOpenAPIModelsForApply (customresource_handler.go), unexported upstream.
func upstreamModels(static map[string]*spec.Schema, crd *apiextensionsv1.CustomResourceDefinition) (map[string]*spec.Schema, error) {
	specs := []*spec3.OpenAPI{{
		Version:    "3.0.0",
		Info:       &spec.Info{InfoProps: spec.InfoProps{Title: "Kubernetes CRD Swagger", Version: "v0.1.0"}},
		Components: &spec3.Components{Schemas: static},
	}}
	for _, v := range crd.Spec.Versions {
		s, err := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
		if err != nil {
			return nil, err
		}
		specs = append(specs, s)
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		return nil, err
	}
	return merged.Components.Schemas, nil
}

// staticSpecForTest is the apiextensions server's StaticOpenAPISpec: the CustomResourceDefinition resource and
// its dependencies, built from the OpenAPI v3 config as GenericAPIServer.getOpenAPIModels does. The namer is
// kube-apiserver's minus the built-in API schemes, which name none of these definitions.
func staticSpecForTest(t *testing.T) map[string]*spec.Schema {
	namer := apiopenapi.NewDefinitionNamer(scheme.Scheme)
	getDefs := utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	cfg := &common.OpenAPIV3Config{
		Info:              &spec.Info{InfoProps: spec.InfoProps{Title: "Generic API Server"}},
		GetDefinitionName: namer.GetDefinitionName,
		GetDefinitions:    getDefs,
	}
	static, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, apiextensionsv1.CustomResourceDefinition{}.OpenAPIModelName())
	if err != nil {
		t.Fatal(err)
	}
	if len(static) == 0 {
		t.Fatal("empty static spec")
	}
	return static
}

func schemaPointers(defs spec.Definitions) map[string]*spec.Schema {
	out := make(map[string]*spec.Schema, len(defs))
	for k, v := range defs {
		out[k] = &v
	}
	return out
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

// compareSchemas reports missing, extra and different schemas by name, with a JSON diff for each difference.
func compareSchemas(t *testing.T, label string, ours, theirs map[string]*spec.Schema) {
	t.Helper()
	var names []string
	for k := range theirs {
		names = append(names, k)
	}
	for k := range ours {
		if _, ok := theirs[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		o, ook := ours[name]
		u, uok := theirs[name]
		switch {
		case !ook:
			t.Errorf("%s: missing schema %s", label, name)
		case !uok:
			t.Errorf("%s: extra schema %s", label, name)
		case !reflect.DeepEqual(o, u):
			t.Errorf("%s: schema %s differs:\n%s", label, name, jsonDiff(o, u))
		}
	}
}

func compareJSON(t *testing.T, label string, ours, theirs interface{}) {
	t.Helper()
	if d := jsonDiff(ours, theirs); d != "" {
		t.Errorf("%s differs:\n%s", label, d)
	}
}

// jsonDiff shows the differing middle of two indented JSON renderings (after their common head and tail), or
// "" if they are equal. If they are equal as JSON but not as Go values, it says so.
func jsonDiff(ours, theirs interface{}) string {
	a, errA := json.MarshalIndent(ours, "", "  ")
	b, errB := json.MarshalIndent(theirs, "", "  ")
	if errA != nil || errB != nil {
		return fmt.Sprintf("marshal: ours %v, upstream %v", errA, errB)
	}
	if string(a) == string(b) {
		if reflect.DeepEqual(ours, theirs) {
			return ""
		}
		return fmt.Sprintf("same JSON, different Go values:\nours     %#v\nupstream %#v", ours, theirs)
	}
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	head := 0
	for head < len(al) && head < len(bl) && al[head] == bl[head] {
		head++
	}
	tail := 0
	for tail < len(al)-head && tail < len(bl)-head && al[len(al)-1-tail] == bl[len(bl)-1-tail] {
		tail++
	}
	clip := func(lines []string) string {
		from := max(head-3, 0)
		to := len(lines) - tail
		if to-from > 40 {
			return strings.Join(lines[from:from+40], "\n") + "\n  ..."
		}
		return strings.Join(lines[from:to], "\n")
	}
	return fmt.Sprintf("--- ours (from line %d)\n%s\n+++ upstream\n%s", max(head-3, 0)+1, clip(al), clip(bl))
}
