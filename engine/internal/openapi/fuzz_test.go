//go:build !js

// Not under js/wasm: this test compares with upstream's builder, which links kube-apiserver's endpoints and
// client-go's REST client, and tools/wasmws cuts code they need from the browser's workspace. go test ./...
// runs it natively; the browser's engine is checked by the wasm tests and the Chromium oracle replay.

package openapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
)

// safeName and safeKind bound the names handed to upstream's builder in the fuzz target: its go-restful
// WebService exits the process on a path it cannot compile, which would end the fuzzer rather than report.
var (
	safeName = regexp.MustCompile(`^[a-z0-9.-]*$`)
	safeKind = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*$`)
)

// FuzzBuildV3 feeds arbitrary CRD YAML to every entry point, which must not panic, and, where upstream's builder
// can run on the input, compares the v3 document with it.
func FuzzBuildV3(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/crds/*.yaml")
	if dir, err := filepath.Abs("../../../testdata/oracle"); err == nil {
		more, _ := filepath.Glob(filepath.Join(dir, "*", "crd.yaml"))
		seeds = append(seeds, more...)
	}
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		crd, err := decodeCRD(data)
		if err != nil || len(crd.Spec.Versions) > 4 {
			return
		}
		for _, v := range crd.Spec.Versions {
			ours, err := BuildV3(crd, v.Name)
			if _, err := BuildV2(crd, v.Name, Options{V2: true, IncludeSelectableFields: true}); err != nil {
				t.Logf("BuildV2 %s: %v", v.Name, err)
			}
			if !upstreamCanRun(crd, v.Name) {
				continue
			}
			theirs, theirErr := upstreamV3(crd, v.Name)
			switch {
			case err != nil && theirErr != nil:
			case err != nil || theirErr != nil:
				t.Fatalf("version %q: error %v, upstream %v", v.Name, err, theirErr)
			default:
				if d := jsonDiff(ours, theirs); d != "" {
					t.Fatalf("version %q differs from upstream:\n%s", v.Name, d)
				}
			}
		}
		if _, err := BuildV3(crd, "no-such-version"); err == nil && !hasVersion(crd, "no-such-version") {
			t.Fatal("BuildV3 accepted a version the CRD does not have")
		}
		if _, err := Models(crd); err != nil {
			t.Logf("Models: %v", err)
		}
		if _, err := TypeConverter(crd); err != nil {
			t.Logf("TypeConverter: %v", err)
		}
	})
}

func upstreamCanRun(crd *apiextensionsv1.CustomResourceDefinition, version string) bool {
	n := crd.Spec.Names
	return safeName.MatchString(crd.Spec.Group) && safeName.MatchString(version) && safeName.MatchString(n.Plural) &&
		safeKind.MatchString(n.Kind) && safeKind.MatchString(n.ListKind)
}

// upstreamV3 runs upstream's builder, turning its panics into errors so both sides can be compared.
func upstreamV3(crd *apiextensionsv1.CustomResourceDefinition, version string) (doc interface{}, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("upstream panic: %v", r)
		}
	}()
	d, err := builder.BuildOpenAPIV3(crd, version, builder.Options{})
	if err != nil {
		return nil, err
	}
	// Marshal here, inside the recover: a document that cannot be rendered counts as a failure.
	if _, err := json.Marshal(d); err != nil {
		return nil, err
	}
	return d, nil
}

func hasVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == name {
			return true
		}
	}
	return false
}
