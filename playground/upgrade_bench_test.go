package playground

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkUpgrade measures ModeUpgrade end to end (a new engine, the old CRD installed, the objects stored,
// the new CRD PUT over it, every object checked in every served version, the findings): for 1,000 objects
// under a small CRD whose maximum is lowered (a tenth of them refused by the old CRD and seeded), and for the
// largest CRD of the corpus (argo-workflows' Workflow, 2.8 MB) with a realistic edit: a maximum added to
// spec.parallelism.
func BenchmarkUpgrade(b *testing.B) {
	tm := readUpgradeCase(b, filepath.Join(upgradeDir, "tightened-maximum"))
	var objs strings.Builder
	for i := range 1000 {
		replicas := i % 10
		if i%10 == 0 {
			replicas = 12 // over the old maximum: seeded
		}
		fmt.Fprintf(&objs, "---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w%d\nspec:\n  replicas: %d\n", i, replicas)
	}
	wfDir := "../testdata/corpus/argo-workflows/Workflow"
	wfOld := readBenchFile(b, filepath.Join(wfDir, "crd.yaml"))
	const at = "              parallelism:\n                description: Parallelism limits the max total parallel pods that can\n                  execute at the same time in a workflow\n                format: int64\n"
	if !strings.Contains(wfOld, at) {
		b.Fatal("the Workflow CRD no longer has spec.parallelism where the edit goes")
	}
	wfNew := strings.Replace(wfOld, at, at+"                maximum: 100\n", 1)
	for _, bc := range []struct {
		name, old, new, objects string
		stored                  int
	}{
		{"1000-objects", tm.old, tm.new, objs.String(), 1000},
		{"corpus-largest", wfOld, wfNew, readBenchFile(b, filepath.Join(wfDir, "01-create.yaml")), 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := NewSession(Options{})
			ctx := context.Background()
			var ph phases
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := s.Evaluate(ctx, Input{Mode: ModeUpgrade, OldCRDs: &bc.old, CRDs: &bc.new, Objects: bc.objects})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Upgrade.CRD.Accepted || len(res.Upgrade.Objects) != bc.stored || len(res.Upgrade.Findings) == 0 {
					b.Fatalf("accepted=%v stored=%d findings=%d", res.Upgrade.CRD.Accepted, len(res.Upgrade.Objects), len(res.Upgrade.Findings))
				}
				t := res.Timings
				ph.add("evaluate", t.Total)
				ph.add("old-crd", t.CRDs)
				ph.add("engine", t.ObjectEngine)
			}
			ph.report(b)
		})
	}
}
