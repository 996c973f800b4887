//go:build !js

// Not under js/wasm: this test compares with upstream's namer over client-go's scheme of every built-in API
// group, which needs core/v1's scheme registration, and tools/wasmws cuts that from the browser's workspace.
// go test ./... runs it natively; the browser's engine is checked by the wasm tests and the oracle replay.

package openapi

import (
	"reflect"
	"testing"

	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// TestNamerMatchesClientGoScheme holds the written-out registrations to the scheme upstream's builder names
// definitions with, for every definition this package can emit. A client-go upgrade that adds a group version
// fails here.
func TestNamerMatchesClientGoScheme(t *testing.T) {
	upstream := apiopenapi.NewDefinitionNamer(scheme.Scheme)
	defs := generatedopenapi.GetOpenAPIDefinitions(func(string) spec.Ref { return spec.Ref{} })
	named := 0
	for name := range defs {
		gotName, got := definitionName(name)
		wantName, want := upstream.GetDefinitionName(name)
		if gotName != wantName || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %s %v, upstream %s %v", name, gotName, got, wantName, want)
		}
		if want != nil {
			named++
		}
	}
	if named == 0 {
		t.Fatal("no definition carries kinds: the comparison proves nothing")
	}
}
