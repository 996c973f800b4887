package playground

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// semverCRD has one rule that needs the CEL semver library, which new CRDs may use from Kubernetes 1.34.
const semverCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "semver(self.version).major() >= 1"
            properties:
              version: {type: string, maxLength: 32}
`

// TestEvaluateReportsCompat checks that each CRD's result carries its Kubernetes version report, with the
// reasons placed at the fields that need a newer server, and that it stays with the installed CRD text when
// only the objects change.
func TestEvaluateReportsCompat(t *testing.T) {
	cert, err := os.ReadFile("../testdata/corpus/cert-manager/Certificate/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, crd string
		minor     int
		feature   string
		field     string // the reason's field
		line      int    // where its span starts
		rule      bool   // the reason is a CEL rule's, also in Rules
	}{
		{name: "semver", crd: semverCRD, minor: 34, feature: "semver",
			field: "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule", line: 20, rule: true},
		{name: "cert-manager selectableFields", crd: string(cert), minor: 31, feature: "selectableFields",
			field: "spec.versions[0].selectableFields", line: 927},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSession(Options{})
			res := evaluate(t, s, Input{CRDs: &tt.crd})
			if want := kubernetesRange("1.37"); res.Kubernetes != want || want.Oldest != 28 || want.Newest != 37 || want.Version != "v1.37.2" {
				t.Errorf("kubernetes range = %+v, want %+v from 1.28", res.Kubernetes, want)
			}
			if len(res.CRDs) != 1 || !res.CRDs[0].Accepted {
				t.Fatalf("the CRD should be accepted: %+v", res.CRDs)
			}
			c := res.CRDs[0].Compat
			if c == nil {
				t.Fatal("no compat report")
			}
			if c.Minor != tt.minor {
				t.Errorf("minor = %d, want %d; reasons %+v", c.Minor, tt.minor, c.Reasons)
			}
			found := false
			for _, r := range c.Reasons {
				if r.Minor != tt.minor || r.Feature != tt.feature {
					continue
				}
				found = true
				if r.Field != tt.field {
					t.Errorf("reason field = %q, want %q", r.Field, tt.field)
				}
				if r.Span == nil || r.Span.Line != tt.line {
					t.Errorf("reason span = %+v, want line %d", r.Span, tt.line)
				}
				if !strings.Contains(r.Message, fmt.Sprintf("1.%d", tt.minor)) {
					t.Errorf("message %q does not name 1.%d", r.Message, tt.minor)
				}
			}
			if !found {
				t.Errorf("no reason with feature %q and minor %d: %+v", tt.feature, tt.minor, c.Reasons)
			}
			if tt.rule {
				costs := res.CRDs[0].Versions[0].CEL.Rules
				if len(c.Rules) != len(costs) || len(costs) == 0 || c.Rules[0].Field != costs[0].Field || c.Rules[0].Minor != tt.minor {
					t.Errorf("rules = %+v, want one per cost rule (%d) joined by field, the first at minor %d", c.Rules, len(costs), tt.minor)
				}
			}
			// Objects alone run against the installed CRD: the report comes with it, not computed again.
			again := evaluate(t, s, Input{Objects: ""})
			if !again.CRDCached || again.CRDs[0].Compat != c {
				t.Errorf("cached=%v: the report should be the installed CRD's own (%p, %p)", again.CRDCached, again.CRDs[0].Compat, c)
			}
		})
	}
}

// sortCRD has a rule using the CEL lists library's sort(), which base.go brings in at compatibility version
// 1.34: a real 1.35 server (compiling new rules for 1.34) accepts it, a real 1.34 (for 1.33) refuses it.
const sortCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sorts.example.com
spec:
  group: example.com
  names: {plural: sorts, singular: sort, kind: Sort}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "[3,1].sort()[0] == 1"
`

// emulatedEnv names the version a re-run of this test binary emulates (TestCompatEmulated).
const emulatedEnv = "CRDPLAY_TEST_EMULATED_VERSION"

// TestCompatEmulated checks that the version report is the same whatever minor the engine emulates (it is
// about real servers of each minor), and that where the engine's own answer differs from a real server's of
// the minor it emulates, the report says so: a 1.37 emulating 1.34 compiles new rules for compatibility
// version 1.34 (its floor), a real 1.34 for 1.33. Each version runs in a process of its own (emulation is
// process-wide).
func TestCompatEmulated(t *testing.T) {
	version := os.Getenv(emulatedEnv)
	if version == "" {
		if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
			t.Skip("no os/exec: run with " + emulatedEnv + " set")
		}
		for _, v := range []string{"1.34", "1.35", "1.36"} {
			t.Run(v, func(t *testing.T) {
				cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestCompatEmulated$", "-test.count=1", "-test.v")
				cmd.Env = append(os.Environ(), emulatedEnv+"="+v)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("emulating %s: %v\n%s", v, err, out)
				}
			})
		}
	}
	extLists, err := os.ReadFile("../testdata/versions/1.37/cel-ext-lists-v3/crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, crd string
		features  []string // the reasons' features, all of minor 1.35
		// recorded is the oracle's answer to the CRD at the emulated versions (testdata/versions), when recorded.
		recorded string
	}{
		{name: "sort", crd: sortCRD, features: []string{"sort"}},
		{name: "ext lists v3", crd: string(extLists), features: []string{"distinct", "sortBy"}, recorded: "cel-ext-lists-v3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := evaluate(t, NewSession(Options{EmulatedVersion: version}), Input{CRDs: &tt.crd})
			emulated := res.Kubernetes.Emulated
			if res.Kubernetes.Newest != 37 {
				t.Errorf("newest = %d emulating %s, want 37: the report considers the same minors whatever the engine emulates", res.Kubernetes.Newest, emulated)
			}
			c := res.CRDs[0].Compat
			var features []string
			for _, r := range c.Reasons {
				if r.Minor != 35 {
					t.Errorf("reason %+v: want minor 35", r)
				}
				features = append(features, r.Feature)
			}
			if c.Minor != 35 || strings.Join(features, ",") != strings.Join(tt.features, ",") {
				t.Errorf("emulating %s: minor %d, features %v; want 35 and %v whatever the engine emulates", emulated, c.Minor, features, tt.features)
			}
			if tt.recorded != "" {
				raw, err := os.ReadFile("../testdata/versions/" + emulated + "/" + tt.recorded + "/expected/00-crd.json")
				if err != nil {
					t.Fatal(err)
				}
				var rec struct{ Status int }
				if err := json.Unmarshal(raw, &rec); err != nil {
					t.Fatal(err)
				}
				if got := res.CRDs[0].Status; got != rec.Status {
					t.Errorf("emulating %s the engine answered %d, the oracle emulating it %d", emulated, got, rec.Status)
				}
			}
			if emulated != "1.34" {
				if c.Emulation != nil {
					t.Errorf("emulating %s: %+v; the engine compiles as a real server of that minor", emulated, c.Emulation)
				}
				return
			}
			if !res.CRDs[0].Accepted {
				t.Fatalf("the engine emulating 1.34 should accept the CRD (its rules compile for 1.34): %+v", res.CRDs[0])
			}
			e := c.Emulation
			if e == nil {
				t.Fatal("emulating 1.34: no word that a real 1.34 refuses what the engine accepts")
			}
			if e.Minor != 34 || e.Compatibility != 34 || len(e.Fields) != len(tt.features) {
				t.Errorf("emulation = %+v, want minor 34, compatibility 34 and the %d rules", e, len(tt.features))
			}
			want := fmt.Sprintf("Kubernetes 1.37 emulating 1.34 accepts %s, unlike a real 1.34 server: emulating, kube-apiserver compiles new CEL rules and checks formats for compatibility version 1.34, the lowest a 1.37 binary allows, where a real 1.34 uses 1.33.", strings.Join(tt.features, ", "))
			if e.Message != want {
				t.Errorf("message:\n%s\nwant:\n%s", e.Message, want)
			}
		})
	}
}
