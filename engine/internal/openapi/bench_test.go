package openapi

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkTypeConverter measures the per-CRD cost the engine pays when a CRD is created or changed, on the
// largest corpus CRD (argo-workflows Workflow, 10,505 schema nodes) when the corpus is present.
func BenchmarkTypeConverter(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(corpusDir(), "argo-workflows", "Workflow", "crd.yaml"))
	if err != nil {
		b.Skip("corpus not found")
	}
	crd, err := decodeCRD(data)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := TypeConverter(crd); err != nil {
			b.Fatal(err)
		}
	}
}
