package playground

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCELMatchesOracle holds the scratchpad to the real server: each of cel-basic's rules, tried in the
// scratchpad on each create the oracle recorded, is false exactly when the oracle's 422 quotes that rule's
// message.
func TestCELMatchesOracle(t *testing.T) {
	crd := readText(t, "cel-basic", "crd.yaml")
	rules := []struct{ rule, message string }{
		{"self.minReplicas <= self.replicas", "replicas should be greater than or equal to minReplicas."},
		{"self.replicas <= self.maxReplicas", "replicas should be smaller than or equal to maxReplicas."},
	}
	for _, r := range rules {
		if !strings.Contains(crd, r.rule) || !strings.Contains(crd, r.message) {
			t.Fatalf("cel-basic's CRD no longer has %q with %q", r.rule, r.message)
		}
	}
	s := NewSession(Options{})
	evaluate(t, s, Input{CRDs: &crd, Objects: ""})
	for _, step := range []string{"01-create-invalid", "02-create-both-fail", "04-create-valid"} {
		object, _ := stepText(t, "cel-basic", step+".yaml")
		raw, err := os.ReadFile(filepath.Join(oracleDir, "cel-basic", "expected", step+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			t.Fatal(err)
		}
		for _, r := range rules {
			res, err := s.CEL(context.Background(), CELInput{Expression: r.rule, Self: "spec", Object: object})
			if err != nil {
				t.Fatal(err)
			}
			if res.Error != "" || res.Scratch == nil || len(res.Scratch.Values) != 1 {
				t.Fatalf("%s: %+v", step, res)
			}
			refused := strings.Contains(string(rec.Body), r.message)
			if got := res.Scratch.Values[0].Value; got != !refused {
				t.Errorf("%s: %s is %v in the scratchpad; the oracle's answer quotes its message: %v", step, r.rule, got, refused)
			}
		}
	}
}

func TestCELInput(t *testing.T) {
	crd := readText(t, "cel-basic", "crd.yaml")
	s := NewSession(Options{})
	res, err := s.CEL(context.Background(), CELInput{Expression: "true"})
	if err != nil || !strings.Contains(res.Error, "no CRD is installed") {
		t.Fatalf("before any evaluation: %+v %v", res, err)
	}
	evaluate(t, s, Input{CRDs: &crd, Objects: ""})
	for _, tc := range []struct {
		name string
		in   CELInput
		want func(*CELResult) bool
	}{
		{"defaults", CELInput{Expression: "self.metadata.name", Object: "metadata: {name: x}"}, func(r *CELResult) bool {
			return r.CRD == "crontabs.stable.example.com" && r.Version == "v1" && r.Scratch.Values[0].Value == "x" &&
				len(r.Selves) == 2 && r.Selves[0] == "" && r.Selves[1] == "spec" && r.Compatibility != ""
		}},
		{"unknown CRD", CELInput{Expression: "true", CRD: "nope.example.com"}, func(r *CELResult) bool {
			return strings.Contains(r.Error, `"nope.example.com" is not established`)
		}},
		{"unknown version", CELInput{Expression: "true", Version: "v9"}, func(r *CELResult) bool {
			return strings.Contains(r.Error, "v9 has no schema")
		}},
		{"unknown self", CELInput{Expression: "true", Self: "spec.nope"}, func(r *CELResult) bool {
			return strings.Contains(r.Error, `no property "spec.nope"`)
		}},
		{"bad object", CELInput{Expression: "1 + 1", Object: "a: [b"}, func(r *CELResult) bool {
			return strings.HasPrefix(r.ObjectError, "object: ") && r.Scratch != nil && r.Scratch.Type == "int" && len(r.Scratch.Values) == 0
		}},
		{"not an object", CELInput{Expression: "true", Object: "- a"}, func(r *CELResult) bool {
			return strings.Contains(r.ObjectError, "not an object")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.CEL(context.Background(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(res) {
				b, _ := json.Marshal(res)
				t.Errorf("%s", b)
			}
		})
	}
}
