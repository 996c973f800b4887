package examples_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"crdplay/internal/examples"
	"crdplay/internal/golden"
	"crdplay/internal/oraclecase"
	"crdplay/playground"
)

// oracleAgent makes the API name the managedFields manager "oracle", as in the recordings.
const oracleAgent = "oracle/v0.37.2"

// recorded is an expected/NN-step.json file of a case.
type recorded struct {
	Step    string `json:"step"`
	Request struct {
		Method string `json:"method"`
		Path   string `json:"path"`
	} `json:"request"`
	Status   int             `json:"status"`
	Warnings []string        `json:"warnings"`
	Body     json.RawMessage `json:"body"`
}

// TestUpgradeExamples runs every upgrade example of the gallery through the page's evaluator
// (playground.ModeUpgrade, as the page sends it: the new CRD in the CRD editor, the old one in the old-CRD
// editor, the stored objects) and holds its answers to the oracle's recording of the same case: the CRD
// update's status and Status, and, for each object, the GET and the first write of each kind after the CRD
// update (the case's no-op update and /status update), status, warnings and body. The report's layout (each
// verdict, each finding with its line and evidence) is kept in testdata/upgrade/NAME.txt, written by
// go test ./internal/examples -run TestUpgradeExamples -update and reviewed like any golden file.
func TestUpgradeExamples(t *testing.T) {
	exs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, ex := range exs {
		if ex.Mode != examples.ModeUpgrade {
			continue
		}
		ran++
		t.Run(ex.Name, func(t *testing.T) {
			s := playground.NewSession(playground.Options{UserAgent: oracleAgent})
			res, err := s.Evaluate(context.Background(), playground.Input{
				Mode: playground.ModeUpgrade, CRDs: &ex.NewCRD, OldCRDs: &ex.CRD, Objects: ex.Objects,
			})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Upgrade
			if rep == nil {
				t.Fatal("no upgrade report")
			}
			steps := readSteps(t, ex.Dir)
			checkAgainstOracle(t, rep, steps)
			checkGolden(t, ex.Name, summary(rep, res.Diagnostics))
		})
	}
	if ran < 5 {
		t.Errorf("%d upgrade examples; the gallery should have at least 5", ran)
	}
}

func readSteps(t *testing.T, dir string) []recorded {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "expected", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []recorded
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r recorded
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, r)
	}
	return out
}

func checkAgainstOracle(t *testing.T, rep *playground.UpgradeReport, steps []recorded) {
	t.Helper()
	crdAt := -1
	for i, s := range steps {
		if i > 0 && s.Request.Method == "PUT" && strings.Contains(s.Request.Path, "/customresourcedefinitions/") {
			crdAt = i
			break
		}
	}
	if crdAt < 0 {
		t.Fatal("the case has no CRD update step")
	}
	want := steps[crdAt]
	if rep.CRD.Status != want.Status {
		t.Errorf("CRD update: status %d, the oracle answered %d (%s)", rep.CRD.Status, want.Status, want.Step)
	}
	if !rep.CRD.Accepted {
		sameBody(t, "CRD update", rep.CRD.Error, want.Body)
	}
	compared := 0
	for _, o := range rep.Objects {
		for _, c := range o.Checks {
			if c.Op == "dryrun" {
				continue // a POST with a generated name: no recorded step is it
			}
			suffix := "/" + o.Name
			method := "PUT"
			switch c.Op {
			case "get":
				method = "GET"
			case "status":
				suffix += "/status"
			}
			var rec *recorded
			for i := crdAt + 1; i < len(steps); i++ {
				p := steps[i].Request.Path
				if steps[i].Request.Method == method && strings.HasSuffix(p, suffix) && strings.Contains(p, "/"+c.Version+"/") &&
					(o.Namespace == "" || strings.Contains(p, "/namespaces/"+o.Namespace+"/")) {
					rec = &steps[i]
					break
				}
			}
			if rec == nil {
				continue // the case does not record this check
			}
			compared++
			what := fmt.Sprintf("%s %s in %s (%s)", c.Op, objectKey(o), c.Version, rec.Step)
			if c.Status != rec.Status {
				t.Errorf("%s: status %d, the oracle answered %d", what, c.Status, rec.Status)
			}
			if w := warningTexts(rec.Warnings); strings.Join(c.Warnings, "\n") != strings.Join(w, "\n") {
				t.Errorf("%s: warnings %q, the oracle sent %q", what, c.Warnings, w)
			}
			switch {
			case c.Error != nil:
				sameBody(t, what, c.Error, rec.Body)
			case c.Object != nil:
				sameBody(t, what, c.Object, rec.Body)
			}
		}
	}
	if compared == 0 && rep.CRD.Accepted {
		t.Error("no check of the report is recorded in the case")
	}
}

// warningTexts are recorded Warning headers (299 - "text") as their texts.
func warningTexts(headers []string) []string {
	out := []string{}
	for _, h := range headers {
		var s string
		if _, err := fmt.Sscanf(strings.TrimPrefix(h, `299 - `), "%q", &s); err == nil {
			out = append(out, s)
		} else {
			out = append(out, h)
		}
	}
	return out
}

func sameBody(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	g, err := oraclecase.NormalizeJSON(got)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	w, err := oraclecase.NormalizeJSON(want)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if string(g) != string(w) {
		t.Errorf("%s: body differs from the oracle's:\n%s", what, oraclecase.UnifiedDiff("oracle", "playground", w, g))
	}
}

func objectKey(o playground.UpgradeObject) string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// summary is the report as a reviewer reads it: the CRD update's verdict, each object's verdicts by
// version, each finding with its place and evidence, and the diagnostics of the editors.
func summary(rep *playground.UpgradeReport, diags []playground.Diagnostic) string {
	var b strings.Builder
	fmt.Fprintf(&b, "crd %s: status %d accepted %v\n", rep.CRD.Name, rep.CRD.Status, rep.CRD.Accepted)
	if len(rep.CRD.Error) > 0 {
		var st struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(rep.CRD.Error, &st)
		fmt.Fprintf(&b, "  error: %s\n", st.Message)
	}
	for _, w := range rep.CRD.Warnings {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	for _, o := range rep.Objects {
		fmt.Fprintf(&b, "object %s %s (document %d) seeded=%v\n", o.Kind, objectKey(o), o.Document, o.Seeded)
		for _, c := range o.Checks {
			fmt.Fprintf(&b, "  %s %s %d", c.Version, c.Op, c.Status)
			for _, w := range c.Warnings {
				fmt.Fprintf(&b, " [warning: %s]", w)
			}
			b.WriteString("\n")
		}
	}
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "finding %s %s %s:%d:%d %s\n  objectPath: %s\n  message: %s\n  affected: %v\n  evidence: %s\n",
			f.Severity, f.Rule, f.Source, f.Line, f.Column, f.Field, f.ObjectPath, f.Message, f.Affected, f.Evidence)
	}
	for _, d := range diags {
		fmt.Fprintf(&b, "diagnostic %s %s:%d:%d %s %s: %s\n", d.Severity, d.Source, d.Line, d.Column, d.Type, d.Field, firstLine(d.Message))
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "upgrade", strings.ReplaceAll(name, "/", "_")+".txt"), []byte(got))
}
