package crds

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/registry/rest"
)

// corpusCRDs returns the real-world CRDs of the shared corpus (20 projects' CRDs), if present.
func corpusCRDs(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"../../../testdata/corpus", "/work/shared/corpus"} {
		files, _ = filepath.Glob(filepath.Join(dir, "*", "*", "crd.yaml"))
		if len(files) > 0 {
			return files
		}
	}
	t.Skip("no CRD corpus found")
	return nil
}

// TestCorpus creates every corpus CRD: all are valid upstream, and all settle Established.
func TestCorpus(t *testing.T) {
	for _, f := range corpusCRDs(t) {
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			y, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			crd, _, err := Decode(y, "application/yaml", "")
			if err != nil {
				t.Fatal(err)
			}
			rest.FillObjectMetaSystemFields(crd)
			if _, err := BeforeCreate(context.Background(), crd); err != nil {
				t.Fatal(err)
			}
			status, _ := ComputeStatus(crd, nil, metav1.NewTime(time.Now()))
			crd.Status = status
			if !IsEstablished(crd) || !namesAccepted(crd) {
				t.Errorf("status %+v", crd.Status)
			}
		})
	}
}

func namesAccepted(crd *apiextensionsv1.CustomResourceDefinition) bool {
	return findCondition(crd, apiextensionsv1.NamesAccepted).Status == apiextensionsv1.ConditionTrue
}

// BenchmarkComputeStatus measures the controllers on the largest corpus CRD, which Reconcile runs for
// every CRD after every write.
func BenchmarkComputeStatus(b *testing.B) {
	var biggest []byte
	for _, f := range corpusCRDs(b) {
		if y, err := os.ReadFile(f); err == nil && len(y) > len(biggest) {
			biggest = y
		}
	}
	crd, _, err := Decode(biggest, "application/yaml", "")
	if err != nil {
		b.Fatal(err)
	}
	rest.FillObjectMetaSystemFields(crd)
	PrepareForCreate(crd)
	now := metav1.NewTime(time.Now())
	status, _ := ComputeStatus(crd, nil, now)
	crd.Status = status
	all := []*apiextensionsv1.CustomResourceDefinition{crd}
	b.ResetTimer()
	for b.Loop() {
		ComputeStatus(crd, all, now)
	}
}

// TestCreatedVerdictNonStructural holds BeforeCreate's verdict for the non-structural schema controller (no
// condition: create validation requires structural schemas) to the controller's own computation, for every CRD
// of the corpus and the examples that a create accepts; two of the non-structural examples must be refused.
func TestCreatedVerdictNonStructural(t *testing.T) {
	files := corpusCRDs(t)
	examples, _ := filepath.Glob("../../../testdata/examples/*/crd.yaml")
	accepted, refused := 0, 0
	for _, f := range append(files, examples...) {
		y, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd, _, err := Decode(y, "application/yaml", "")
		if err != nil {
			continue
		}
		rest.FillObjectMetaSystemFields(crd)
		if _, err := BeforeCreate(context.Background(), crd); err != nil {
			if strings.Contains(f, "nonstructural") {
				refused++
			}
			continue
		}
		accepted++
		if got, want := cachedNonStructuralCondition(crd), nonStructuralCondition(crd); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: remembered %+v, computed %+v", f, got, want)
		}
	}
	if accepted < 40 || refused < 2 { // nonstructural-example-2 is accepted: its allOf sits below the root
		t.Errorf("%d CRDs accepted, %d non-structural ones refused", accepted, refused)
	}
}
