package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"crdplay/engine"
	"crdplay/internal/oraclecase"
)

// The cases of testdata/upgrade are CRD upgrades recorded from the oracle (a real apiextensions-apiserver
// v0.37.2): crd.yaml is the old CRD, the create steps store the objects, NN-update-crd.yaml PUTs the new CRD
// over it, and the steps after it labelled <object>-<version> are the checks ModeUpgrade makes, in its order
// (get, update, and status where the version has /status, for each object and served version); the steps
// after those show what the next real change meets. `../shared/oracle/bin/oracle case --server URL
// testdata/upgrade` rewrites the expected/ files.
const upgradeDir = "../testdata/upgrade"

// TestUpgradeOracleCases replays the upgrade cases against the engine, as the engine's tests replay theirs:
// every answer must be the real server's. An entry of the tree that no replay reads fails the test.
func TestUpgradeOracleCases(t *testing.T) {
	orphans, err := oraclecase.Orphans(filepath.Join(upgradeDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orphans {
		t.Error(o)
	}
	dirs, err := oraclecase.CaseDirs(upgradeDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no cases in testdata/upgrade")
	}
	// The engine changes CRDs synchronously: nothing to settle.
	opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: time.Second, NoSleep: true}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			h, err := engine.NewHandler(engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := oraclecase.New(oraclecase.HandlerClient(h), "http://engine", opts).RunCase(dir)
			if err != nil {
				t.Fatalf("after %d step(s): %v", res.Steps, err)
			}
			for _, d := range res.Diffs {
				t.Error(d)
			}
		})
	}
}

// upgradeCase is an upgrade case read as ModeUpgrade's input, with the recorded answers to compare with.
type upgradeCase struct {
	old, new, objects string
	crd               recording
	// checks are the recorded checks, in ModeUpgrade's order.
	checks []recordedCheck
}

type recordedCheck struct {
	stem, op, name, version string
	rec                     recording
}

// checkStepRe is a check step's name: NN-<get|update|status>-<object>-<version>.yaml.
var checkStepRe = regexp.MustCompile(`^(\d+)-(get|update|status)-([a-z0-9-]+)-(v[0-9a-z]+)\.yaml$`)

func readUpgradeCase(t testing.TB, dir string) upgradeCase {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rec := func(stem string) recording {
		b, err := os.ReadFile(filepath.Join(dir, "expected", stem+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var r recording
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") && e.Name() != "crd.yaml" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	c := upgradeCase{old: read("crd.yaml")}
	var objs []string
	crdDone := false
	for _, n := range names {
		stem := strings.TrimSuffix(n, ".yaml")
		switch {
		case !crdDone && strings.Contains(n, "-create-"):
			objs = append(objs, read(n))
		case !crdDone && strings.HasSuffix(n, "-update-crd.yaml"):
			c.new, c.crd, crdDone = read(n), rec(stem), true
		case crdDone && c.crd.Status == 200:
			m := checkStepRe.FindStringSubmatch(n)
			if m == nil {
				// The checks are over: the rest shows what the next real change meets.
				goto done
			}
			c.checks = append(c.checks, recordedCheck{stem: stem, op: m[2], name: m[3], version: m[4], rec: rec(stem)})
		}
	}
done:
	if !crdDone {
		t.Fatalf("%s has no update-crd step", dir)
	}
	c.objects = strings.Join(objs, "---\n")
	return c
}

// cause is a Status cause as the comparison sees it.
type cause struct{ Field, Type, Message string }

func causesOf(t *testing.T, body []byte) (string, []cause) {
	t.Helper()
	if len(body) == 0 {
		return "", nil
	}
	st, ok := parseStatus(body)
	if !ok {
		return "", nil
	}
	var out []cause
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			out = append(out, cause{c.Field, c.Type, c.Message})
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return st.Reason, out
}

// TestUpgradeMatchesOracle runs ModeUpgrade on each recorded case's old CRD, new CRD and objects, and holds
// its report to the real server's answers: the new CRD's status and causes, and every check's status,
// warnings and causes (and, for a read, the spec it returned).
func TestUpgradeMatchesOracle(t *testing.T) {
	dirs, err := oraclecase.CaseDirs(upgradeDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c := readUpgradeCase(t, dir)
			s := NewSession(Options{UserAgent: oracleAgent})
			res, err := s.Evaluate(context.Background(), Input{Mode: ModeUpgrade, OldCRDs: &c.old, CRDs: &c.new, Objects: c.objects})
			if err != nil {
				t.Fatal(err)
			}
			up := res.Upgrade
			if up == nil {
				t.Fatal("no upgrade report")
			}
			rules := map[string]bool{}
			for _, f := range up.Findings {
				rules[f.Rule] = true
			}
			for _, d := range res.Diagnostics {
				if d.Severity == SeverityError && !rules[d.Type] && (d.Source == SourceOldCRDs || d.Type == "NotSeeded" || d.Type == "NoKindMatch") {
					t.Errorf("setup diagnostic: %+v", d)
				}
			}
			if up.CRD.Status != c.crd.Status {
				t.Errorf("new CRD: status %d, the real server answered %d (%s)", up.CRD.Status, c.crd.Status, c.crd.Body)
			}
			gotReason, gotCauses := causesOf(t, up.CRD.Error)
			wantReason, wantCauses := causesOf(t, c.crd.Body)
			if gotReason != wantReason || fmt.Sprint(gotCauses) != fmt.Sprint(wantCauses) {
				t.Errorf("new CRD: %s %v\nthe real server: %s %v", gotReason, gotCauses, wantReason, wantCauses)
			}
			var got []UpgradeCheck
			var gotWho []string
			for _, o := range up.Objects {
				for _, ch := range o.Checks {
					if ch.Op == "dryrun" {
						continue // not a step of the recorded cases
					}
					got = append(got, ch)
					gotWho = append(gotWho, o.Name)
				}
			}
			if len(got) != len(c.checks) {
				t.Fatalf("%d checks, the case recorded %d", len(got), len(c.checks))
			}
			for i, want := range c.checks {
				g := got[i]
				t.Run(want.stem, func(t *testing.T) {
					if g.Op != want.op || g.Version != want.version || gotWho[i] != want.name {
						t.Fatalf("check %d is %s of %s in %s; the case has %s of %s in %s", i, g.Op, gotWho[i], g.Version, want.op, want.name, want.version)
					}
					if g.Status != want.rec.Status {
						t.Errorf("status %d, the real server answered %d (%s)", g.Status, want.rec.Status, want.rec.Body)
					}
					if w := warningTexts(t, want.rec.Warnings); fmt.Sprint(g.Warnings) != fmt.Sprint(w) {
						t.Errorf("warnings %q, the real server's %q", g.Warnings, w)
					}
					gr, gc := causesOf(t, g.Error)
					wr, wc := causesOf(t, want.rec.Body)
					if gr != wr || fmt.Sprint(gc) != fmt.Sprint(wc) {
						t.Errorf("%s %v\nthe real server: %s %v", gr, gc, wr, wc)
					}
					if g.Op == "get" && g.Status == 200 {
						if gs, ws := specOf(t, g.Object), specOf(t, want.rec.Body); gs != ws {
							t.Errorf("read spec %s, the real server's %s", gs, ws)
						}
					}
				})
			}
		})
	}
}

// specOf is an object's spec as canonical JSON.
func specOf(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]interface{}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	b, _ := json.Marshal(m["spec"])
	return string(b)
}
