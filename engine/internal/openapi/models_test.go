package openapi

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// TestModelsWithGivenSchemas holds the models built from schemas the serving state read (TypeConverterWith) to
// those built from the CRD alone, for the oracle's CRDs and the corpus (the repository's and the shared one).
func TestModelsWithGivenSchemas(t *testing.T) {
	cases := append(oracleCRDs(t), corpusCRDs(t)...)
	files, _ := filepath.Glob("../../../testdata/corpus/*/*/crd.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd, err := decodeCRD(data)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, crdCase{name: f, crd: crd})
	}
	if len(cases) < 40 {
		t.Fatalf("%d CRDs", len(cases))
	}
	for _, c := range cases {
		want, wantErr := buildModels(c.crd, nil)
		given := map[string]Schema{}
		for _, v := range c.crd.Spec.Versions {
			val, err := apihelpers.GetSchemaForVersion(c.crd, v.Name)
			if err != nil || val == nil {
				continue
			}
			internal, err := toInternal(val)
			if err != nil {
				t.Fatal(err)
			}
			s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
			if err != nil {
				continue
			}
			given[v.Name] = Schema{Internal: internal.OpenAPIV3Schema, Structural: s}
		}
		got, gotErr := buildModels(c.crd, given)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotErr, wantErr) {
			t.Errorf("%s: the models from given schemas differ (%v, %v)", c.name, gotErr, wantErr)
		}
	}
}
