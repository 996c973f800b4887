package playground

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The targets for re-evaluation after an object edit (compile cached): 20 ms median for the CronTab
// examples, 150 ms for the largest CRD of the corpus. `make bench` reports these benchmarks beside them.

// BenchmarkReevaluate measures an evaluation after an edit of the object text, with the CRD text unchanged
// (installed once, before the timer), as the page does it: the CRD text not sent again (Input.CRDs nil),
// the schema trees known (KnownCRDRevision), and the result encoded as JSON for the bridge.
func BenchmarkReevaluate(b *testing.B) {
	for _, bc := range []struct {
		name, dir string
	}{
		{"crontab", "../testdata/examples/crontab"},
		// The largest CRD of ../shared/corpus (2.8 MB, 10,505 schema nodes, 38 CEL rules).
		{"corpus-largest", "../testdata/corpus/argo-workflows/Workflow"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			crd := readBenchFile(b, filepath.Join(bc.dir, "crd.yaml"))
			object := readBenchFile(b, filepath.Join(bc.dir, "01-create.yaml"))
			s := NewSession(Options{})
			ctx := context.Background()
			first, err := s.Evaluate(ctx, Input{CRDs: &crd, Objects: object})
			if err != nil {
				b.Fatal(err)
			}
			if len(first.Objects) != 1 || !first.Objects[0].Accepted {
				b.Fatalf("the object is not accepted: %+v", first.Objects)
			}
			edits := make([]string, 16)
			for i := range edits {
				// A different label each time: a real edit of the text, accepted like the original.
				edits[i] = strings.Replace(object, "\nmetadata:\n", "\nmetadata:\n  labels: {edit: \"e"+strconv.Itoa(i)+"\"}\n", 1)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := s.Evaluate(ctx, Input{Objects: edits[i%len(edits)], KnownCRDRevision: first.CRDRevision})
				if err != nil {
					b.Fatal(err)
				}
				if !res.CRDCached || !res.Objects[0].Accepted {
					b.Fatalf("cached=%v accepted=%v", res.CRDCached, res.Objects[0].Accepted)
				}
				if _, err := json.Marshal(res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInstall measures an evaluation after an edit of the CRD text: a new engine, the CRD created and
// established, its cost report and explain tree, and the object. Not a target of the issue; reported so
// that CRD edits stay usable.
func BenchmarkInstall(b *testing.B) {
	for _, bc := range []struct{ name, dir string }{
		{"crontab", "../testdata/examples/crontab"},
		{"corpus-largest", "../testdata/corpus/argo-workflows/Workflow"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			crd := readBenchFile(b, filepath.Join(bc.dir, "crd.yaml"))
			object := readBenchFile(b, filepath.Join(bc.dir, "01-create.yaml"))
			s := NewSession(Options{})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				text := crd + "\n# edit " + strconv.Itoa(i) + "\n"
				res, err := s.Evaluate(ctx, Input{CRDs: &text, Objects: object})
				if err != nil {
					b.Fatal(err)
				}
				if res.CRDCached || !res.CRDs[0].Accepted {
					b.Fatalf("cached=%v accepted=%v", res.CRDCached, res.CRDs[0].Accepted)
				}
				if _, err := json.Marshal(res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func readBenchFile(b *testing.B, path string) string {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}
