package playground

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"crdplay/internal/oraclecase"
)

// FuzzUpgrade feeds arbitrary old-CRD, new-CRD and object texts to ModeUpgrade, seeded with the recorded
// upgrade cases: Evaluate must never fail, panic or hang on them, every diagnostic and finding must lie inside
// the text it is placed in, and every check must carry the API's status.
func FuzzUpgrade(f *testing.F) {
	dirs, err := oraclecase.CaseDirs(upgradeDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, dir := range dirs {
		c := readUpgradeCase(f, dir)
		f.Add(c.old, c.new, c.objects)
	}
	first := readUpgradeCase(f, filepath.Join(upgradeDir, "tightened-maximum"))
	f.Add(first.old, "", first.objects)
	f.Add(first.old, first.new+"---\n"+first.old, "apiVersion: v1\nkind: List\nitems: [{apiVersion: example.com/v1, kind: Widget, metadata: {name: l}, spec: {replicas: 99}}]\n")
	f.Add("kind: [\n", "{}", "- 1\n")
	s := NewSession(Options{})
	f.Fuzz(func(t *testing.T, old, new, objects string) {
		if len(old)+len(new)+len(objects) > 1<<16 {
			return
		}
		res, err := s.Evaluate(context.Background(), Input{Mode: ModeUpgrade, OldCRDs: &old, CRDs: &new, Objects: objects})
		if err != nil {
			t.Fatal(err)
		}
		if res.Upgrade == nil {
			t.Fatal("no upgrade report")
		}
		lines := func(s string) int { return strings.Count(s, "\n") + strings.Count(s, "\r") + 1 }
		n := map[Source]int{SourceOldCRDs: lines(old), SourceCRDs: lines(new), SourceObjects: lines(objects)}
		inside := func(src Source, sp Span) bool {
			return sp.Line >= 1 && sp.Line <= n[src] && sp.Column >= 1 && sp.EndLine >= sp.Line
		}
		for _, d := range res.Diagnostics {
			if !inside(d.Source, d.Span) {
				t.Fatalf("diagnostic outside its text (%d lines): %+v", n[d.Source], d)
			}
		}
		for _, fd := range res.Upgrade.Findings {
			if !inside(fd.Source, fd.Span) {
				t.Fatalf("finding outside its text (%d lines): %+v", n[fd.Source], fd)
			}
		}
		for _, o := range res.Upgrade.Objects {
			for _, c := range o.Checks {
				if c.Status < 100 {
					t.Fatalf("check without a status: %+v", c)
				}
			}
		}
	})
}
