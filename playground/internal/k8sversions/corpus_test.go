package k8sversions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"crdplay/playground/internal/celcost"
)

// TestCorpus reports every rule of the real-world CRDs with its oldest minor. The real server (1.37)
// accepts each of them, so every rule and CRD must have a minor from Oldest to Newest.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/corpus/*/*/crd.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus CRDs: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "../../../testdata/corpus/"), "/crd.yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(data, crd); err != nil {
				t.Fatal(err)
			}
			apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
			start := time.Now()
			costs := celcost.Report(crd)
			costTime := time.Since(start)
			start = time.Now()
			rep := Analyze(crd, costs)
			elapsed := time.Since(start)
			t.Logf("%s: Kubernetes 1.%d, %d rules (%v; celcost.Report %v)", name, rep.Minor, len(rep.Rules), elapsed.Round(time.Millisecond), costTime.Round(time.Millisecond))
			if rep.Minor < Oldest || rep.Minor > Newest() {
				t.Errorf("Minor = %d, want a minor from %d to %d", rep.Minor, Oldest, Newest())
			}
			rules := map[string]string{}
			for _, v := range costs {
				for _, r := range v.Rules {
					rules[r.Field] = r.Rule
				}
			}
			for _, r := range rep.Rules {
				t.Logf("  1.%d  %s  %q", r.Minor, r.Field, rules[r.Field])
				for _, c := range r.Costs {
					t.Logf("        cost in 1.%d: %d", c.Minor, c.Cost)
				}
				if r.Minor < Oldest || r.Minor > Newest() {
					t.Errorf("rule %s: Minor = %d", r.Field, r.Minor)
				}
			}
			for _, r := range rep.Reasons {
				t.Logf("  reason: %s: %s", r.Field, r.Message)
			}
			// The shortcut against every minor's environment, where that is quick.
			if len(rep.Rules) > 0 && len(rep.Rules) <= 40 && costTime < 200*time.Millisecond {
				exhaustive = true
				full := Analyze(crd, costs)
				exhaustive = false
				for i := range full.Rules {
					if full.Rules[i].Minor != rep.Rules[i].Minor {
						t.Errorf("rule %s: every minor compiled: 1.%d; the shortcut: 1.%d", full.Rules[i].Field, full.Rules[i].Minor, rep.Rules[i].Minor)
					}
				}
			}
		})
	}
}
