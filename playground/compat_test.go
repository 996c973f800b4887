package playground

import (
	"fmt"
	"os"
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
