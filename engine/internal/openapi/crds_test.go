package openapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The fidelity tests run over every CRD the oracle created successfully and over the real-world corpus. The
// oracle cases are in the repository (testdata/oracle); the corpus is large and lives beside it in the team's
// shared directory, so tests that need it skip when it is absent (CRDPLAY_CORPUS points elsewhere).

func oracleCasesDir(t testing.TB) string {
	for _, dir := range []string{"../../../testdata/oracle", "/work/shared/oracle/cases"} {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
	}
	t.Skip("no oracle cases (testdata/oracle)")
	return ""
}

func corpusDir() string {
	if dir := os.Getenv("CRDPLAY_CORPUS"); dir != "" {
		return dir
	}
	return "/work/shared/corpus"
}

type crdCase struct {
	name string
	crd  *apiextensionsv1.CustomResourceDefinition
}

// decodeCRD reads a CRD as the API server would store it: defaulted, with the accepted names the naming
// controller would copy from spec.names.
func decodeCRD(data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return nil, err
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
	crd.Status.AcceptedNames = crd.Spec.Names
	return crd, nil
}

// acceptedByOracle reports whether the oracle's recorded response to a step is 201 Created.
func acceptedByOracle(t testing.TB, expected string) bool {
	data, err := os.ReadFile(expected)
	if err != nil {
		return false
	}
	var rec struct {
		Status int `json:"status"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", expected, err)
	}
	return rec.Status == 201
}

// oracleCRDs are the CRDs of the oracle cases that the real server accepted: each case's crd.yaml and its
// *create-crd* steps.
func oracleCRDs(t testing.TB) []crdCase {
	dir := oracleCasesDir(t)
	cases, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []crdCase
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		caseDir := filepath.Join(dir, c.Name())
		steps := map[string]string{"crd.yaml": "00-crd.json"}
		files, _ := filepath.Glob(filepath.Join(caseDir, "*create-crd*.yaml"))
		for _, f := range files {
			base := filepath.Base(f)
			steps[base] = strings.TrimSuffix(base, ".yaml") + ".json"
		}
		for file, expected := range steps {
			if !acceptedByOracle(t, filepath.Join(caseDir, "expected", expected)) {
				continue
			}
			data, err := os.ReadFile(filepath.Join(caseDir, file))
			if err != nil {
				t.Fatal(err)
			}
			crd, err := decodeCRD(data)
			if err != nil {
				t.Fatalf("%s/%s: %v", c.Name(), file, err)
			}
			out = append(out, crdCase{name: "oracle/" + c.Name() + "/" + strings.TrimSuffix(file, ".yaml"), crd: crd})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// corpusCRDs are the real-world CRDs (project/Kind/crd.yaml), or none if the corpus is absent.
func corpusCRDs(t testing.TB) []crdCase {
	files, _ := filepath.Glob(filepath.Join(corpusDir(), "*", "*", "crd.yaml"))
	var out []crdCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd, err := decodeCRD(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel(corpusDir(), filepath.Dir(f))
		out = append(out, crdCase{name: "corpus/" + filepath.ToSlash(rel), crd: crd})
	}
	return out
}

// localCRDs are testdata/crds/*.yaml, aimed at builder branches the other CRDs do not reach.
func localCRDs(t testing.TB) []crdCase {
	files, _ := filepath.Glob("testdata/crds/*.yaml")
	var out []crdCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd, err := decodeCRD(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, crdCase{name: "local/" + strings.TrimSuffix(filepath.Base(f), ".yaml"), crd: crd})
	}
	return out
}

func allCRDs(t testing.TB) []crdCase {
	out := append(localCRDs(t), oracleCRDs(t)...)
	corpus := corpusCRDs(t)
	if len(corpus) == 0 {
		t.Logf("corpus not found at %s: comparing oracle CRDs only", corpusDir())
	}
	return append(out, corpus...)
}
