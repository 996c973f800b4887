package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/aggregator"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// The documents a standalone apiextensions-apiserver v0.37.2 publishes for its own API (the
// customresourcedefinitions endpoints, group discovery and /version), as its handler serves them before any CRD
// exists. tools/openapigen builds upstream's server and writes what it answers; they depend on nothing but the
// Kubernetes version, so the engine serves them as they are.
//
//go:generate go run -C ../../../tools/openapigen . -o ../../engine/internal/openapi/static
//go:embed static/*.json
var static embed.FS

// staticV3 maps the paths of the /openapi/v3 index to the documents.
var staticV3 = map[string]string{
	"apis/apiextensions.k8s.io":    "v3-apis-apiextensions.k8s.io.json",
	"apis/apiextensions.k8s.io/v1": "v3-apis-apiextensions.k8s.io-v1.json",
	"version":                      "v3-version.json",
}

// StaticV3Paths are the /openapi/v3 index paths of the static documents.
func StaticV3Paths() []string {
	out := make([]string, 0, len(staticV3))
	for p := range staticV3 {
		out = append(out, p)
	}
	return out
}

// StaticV3 returns the static OpenAPI v3 document at an index path such as "apis/apiextensions.k8s.io/v1".
func StaticV3(indexPath string) ([]byte, bool) {
	name, ok := staticV3[indexPath]
	if !ok {
		return nil, false
	}
	data, err := static.ReadFile(path.Join("static", name))
	return data, err == nil
}

// staticV2 is the static part of /openapi/v2, parsed once. Callers must not modify it.
var staticV2 = sync.OnceValues(func() (*spec.Swagger, error) {
	data, err := static.ReadFile("static/v2.json")
	if err != nil {
		return nil, err
	}
	sw := &spec.Swagger{}
	if err := json.Unmarshal(data, sw); err != nil {
		return nil, fmt.Errorf("static OpenAPI v2: %w", err)
	}
	// The operations' group-version-kind extension is a struct upstream (group, version, kind in that order);
	// decoded, it became a map, which would print its keys sorted.
	for _, item := range sw.Paths.Paths {
		for _, op := range []*spec.Operation{item.Get, item.Put, item.Post, item.Delete, item.Options, item.Head, item.Patch} {
			if op == nil {
				continue
			}
			if m, ok := op.Extensions[extGVK].(map[string]interface{}); ok {
				gvk := metav1.GroupVersionKind{}
				gvk.Group, _ = m["group"].(string)
				gvk.Version, _ = m["version"].(string)
				gvk.Kind, _ = m["kind"].(string)
				op.Extensions[extGVK] = gvk
			}
		}
	}
	return sw, nil
})

// CRDV2 is one CRD's part of /openapi/v2 as kube-apiserver's CRD OpenAPI controller keeps it: the documents of
// its served versions (BuildV2 with V2 and IncludeSelectableFields) with defaults pruned, merged. The versions'
// documents are modified.
func CRDV2(versions []*spec.Swagger) (*spec.Swagger, error) {
	merged := &spec.Swagger{}
	for _, v := range versions {
		v.Definitions = pruneDefaults(v.Definitions)
		var err error
		if merged, err = mergeSpecs(merged, v); err != nil {
			return nil, err
		}
	}
	return merged, nil
}

// PublishedV2 is /openapi/v2 as kube-apiserver's CRD OpenAPI controller publishes it: the static document with
// each CRD's CRDV2 document merged in. The CRDs' documents are not modified.
func PublishedV2(perCRD []*spec.Swagger) (*spec.Swagger, error) {
	st, err := staticV2()
	if err != nil {
		return nil, err
	}
	return mergeSpecs(st, perCRD...)
}

// mergeSpecs is the CRD OpenAPI builder's MergeSpecs: the CRD documents are merged with each other without
// conflict checks (the naming controller prevents them), then into a copy of the static document, which wins
// conflicts, renaming clashing definitions and parameters.
func mergeSpecs(staticSpec *spec.Swagger, crdSpecs ...*spec.Swagger) (*spec.Swagger, error) {
	out := *staticSpec
	if staticSpec.Definitions != nil {
		out.Definitions = make(spec.Definitions, len(staticSpec.Definitions))
		for k, s := range staticSpec.Definitions {
			out.Definitions[k] = s
		}
	}
	if staticSpec.Parameters != nil {
		out.Parameters = make(map[string]spec.Parameter, len(staticSpec.Parameters))
		for k, p := range staticSpec.Parameters {
			out.Parameters[k] = p
		}
	}
	if staticSpec.Paths != nil {
		out.Paths = &spec.Paths{Paths: make(map[string]spec.PathItem, len(staticSpec.Paths.Paths))}
		for k, p := range staticSpec.Paths.Paths {
			out.Paths.Paths[k] = p
		}
	}
	crdSpec := &spec.Swagger{}
	for _, s := range crdSpecs {
		copySpec(crdSpec, s)
	}
	if err := aggregator.MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters(&out, crdSpec); err != nil {
		return nil, err
	}
	return &out, nil
}

// copySpec copies the paths, parameters and definitions of source into dest.
func copySpec(dest, source *spec.Swagger) {
	if source == nil || source.Paths == nil {
		return
	}
	if dest.Paths == nil {
		dest.Paths = &spec.Paths{}
	}
	for k, v := range source.Definitions {
		if dest.Definitions == nil {
			dest.Definitions = make(spec.Definitions, len(source.Definitions))
		}
		dest.Definitions[k] = v
	}
	for k, v := range source.Parameters {
		if dest.Parameters == nil {
			dest.Parameters = make(map[string]spec.Parameter, len(source.Parameters))
		}
		dest.Parameters[k] = v
	}
	for k, v := range source.Paths.Paths {
		if dest.Paths.Paths == nil {
			dest.Paths.Paths = make(map[string]spec.PathItem, len(source.Paths.Paths))
		}
		dest.Paths.Paths[k] = v
	}
}

// pruneDefaults removes every default from the definitions, as kube-openapi's handler.PruneDefaults does for
// the v2 document (that package also links the protobuf OpenAPI models, which the engine does not need).
func pruneDefaults(defs spec.Definitions) spec.Definitions {
	w := &schemamutation.Walker{
		SchemaCallback: func(s *spec.Schema) *spec.Schema {
			if s.Default == nil {
				return s
			}
			c := *s
			c.Default = nil
			return &c
		},
		RefCallback: schemamutation.RefCallbackNoop,
	}
	out := make(spec.Definitions, len(defs))
	for k, v := range defs {
		out[k] = *w.WalkSchema(&v)
	}
	return out
}
