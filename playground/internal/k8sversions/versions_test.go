package k8sversions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"crdplay/playground/internal/celcost"
	"crdplay/playground/internal/yamlpos"
)

// realServers are the minors of testdata/versions recorded from a server of that version's own code
// (tools/oracle-old/record.sh): 1.30 and 1.32 from their upstream releases, Newest from the oracle. The other
// minors there come from the 1.37 oracle with --emulated-version, whose CEL environment for new rules is not
// a real server's of that minor (recorded: 1.34 emulated accepts ext lists v3's distinct and sortBy, which
// base.go introduces at compatibility version 1.34, while a real 1.34 compiles new rules at 1.33), so they
// are not replayed here.
func realServers() map[int]bool { return map[int]bool{30: true, 32: true, Newest(): true} }

// TestRecordedServers replays the CRDs recorded from real servers of older minors: the server refused the CRD
// (422) exactly when the report says a rule needs a newer minor, at the field the server named.
func TestRecordedServers(t *testing.T) {
	dirs, _ := filepath.Glob("../../../testdata/versions/1.*")
	if len(dirs) == 0 {
		t.Skip("no testdata/versions")
	}
	real := realServers()
	for _, dir := range dirs {
		minor, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "1."))
		if err != nil || !real[minor] {
			continue
		}
		cases, _ := filepath.Glob(filepath.Join(dir, "*", "expected", "00-crd.json"))
		for _, exp := range cases {
			caseDir := filepath.Dir(filepath.Dir(exp))
			t.Run(filepath.Base(dir)+"/"+filepath.Base(caseDir), func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join(caseDir, "crd.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				crd := &apiextensionsv1.CustomResourceDefinition{}
				if err := yaml.Unmarshal(data, crd); err != nil {
					t.Fatal(err)
				}
				apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd)
				var recorded struct {
					Status int             `json:"status"`
					Raw    json.RawMessage `json:"body"`
					Body   struct {
						Details struct {
							Causes []struct {
								Field   string `json:"field"`
								Message string `json:"message"`
							} `json:"causes"`
						} `json:"details"`
					} `json:"-"`
				}
				raw, err := os.ReadFile(exp)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, &recorded); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(recorded.Raw, &recorded.Body); err != nil {
					t.Fatal(err)
				}
				rep := Analyze(crd, celcost.Report(crd))
				var refusals []Reason
				for _, r := range rep.Reasons {
					if r.Effect == Refused && r.Minor > minor {
						refusals = append(refusals, r)
					}
				}
				refused := rep.Minor == 0 || len(refusals) > 0
				if refused != (recorded.Status == 422) {
					t.Fatalf("1.%d answered %d; the report says refused=%v (Minor 1.%d, reasons %+v)", minor, recorded.Status, refused, rep.Minor, rep.Reasons)
				}
				// A field the strategy drops is in the created CRD exactly from its minor on.
				if recorded.Status == 201 {
					var body interface{}
					if err := json.Unmarshal(recorded.Raw, &body); err != nil {
						t.Fatal(err)
					}
					for _, r := range rep.Reasons {
						if r.Effect != Ignored || strings.HasPrefix(r.Feature, "format ") {
							continue
						}
						if kept := lookup(body, r.Segs); kept != (minor >= r.Minor) {
							t.Errorf("1.%d kept %s: %v; the report says it needs 1.%d", minor, r.Field, kept, r.Minor)
						}
					}
				}
				for _, r := range refusals {
					found := false
					for _, c := range recorded.Body.Details.Causes {
						// The server names single-schema CRDs in its internal layout (spec.validation).
						if schemaSuffix(c.Field) == schemaSuffix(r.Field) {
							found = true
							if r.Minor == minor+1 && !strings.Contains(c.Message, r.Detail) {
								t.Errorf("%s: the server said %q; the report's error is %q", r.Field, c.Message, r.Detail)
							}
						}
					}
					if !found {
						t.Errorf("no cause of the 422 names %s: %+v", r.Field, recorded.Body.Details.Causes)
					}
				}
			})
		}
	}
}

// lookup says whether the JSON document has a value at segs.
func lookup(doc interface{}, segs []yamlpos.Seg) bool {
	for _, s := range segs {
		switch v := doc.(type) {
		case map[string]interface{}:
			next, ok := v[s.Key]
			if s.Key == "" || !ok {
				return false
			}
			doc = next
		case []interface{}:
			if s.Key != "" || s.Index >= len(v) {
				return false
			}
			doc = v[s.Index]
		default:
			return false
		}
	}
	return doc != nil
}

func schemaSuffix(field string) string {
	if i := strings.Index(field, "openAPIV3Schema"); i >= 0 {
		return field[i:]
	}
	return field
}
