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

	"sigs.k8s.io/yaml"

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
	// history are the releases applied before old (crd.yaml, then each NN-update-history step but the
	// last); old is the cluster's CRDs (the last release, with the bundle's other CRDs: NN-create-crd steps
	// before the update); stored are the status.storedVersions an NN-status-storedversions step wrote.
	history           []string
	old, new, objects string
	stored            map[string][]string
	crd               recording
	// crds are the recorded answers to each new CRD (the update-crd step, then NN-update-crd-<plural> and
	// NN-create-crd-<plural> steps after it), in the new text's order.
	crds []recording
	// checks are the recorded checks, in ModeUpgrade's order.
	checks []recordedCheck
	// migrated are the storage migration's /status PUT and the new CRD sent again (NN-status-storedversions-
	// migrated, NN-update-crd-again), when the case records one; after are the reads after it.
	migrated, again *recording
	after           []recordedCheck
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
	releases := []string{read("crd.yaml")}
	c := upgradeCase{}
	var objs, news []string
	crdDone, checksDone := false, false
	for _, n := range names {
		stem := strings.TrimSuffix(n, ".yaml")
		step := stem[strings.Index(stem, "-")+1:] // without NN-
		switch {
		case !crdDone && strings.HasPrefix(step, "update-history-"):
			releases = append(releases, read(n))
		case !crdDone && strings.HasPrefix(step, "status-storedversions"):
			var crd struct {
				Metadata struct{ Name string } `json:"metadata"`
				Status   struct {
					StoredVersions []string `json:"storedVersions"`
				} `json:"status"`
			}
			if err := yaml.Unmarshal([]byte(read(n)), &crd); err != nil {
				t.Fatal(err)
			}
			if c.stored == nil {
				c.stored = map[string][]string{}
			}
			c.stored[crd.Metadata.Name] = append([]string{}, crd.Status.StoredVersions...)
		case !crdDone && strings.HasPrefix(step, "create-crd-"):
			releases[len(releases)-1] += "---\n" + read(n)
		case !crdDone && strings.HasPrefix(step, "create-"):
			objs = append(objs, read(n))
		case !crdDone && step == "update-crd":
			news, c.crd, crdDone = append(news, read(n)), rec(stem), true
			c.crds = append(c.crds, c.crd)
		case crdDone && step == "update-crd-again":
			r := rec(stem)
			c.again, checksDone = &r, true
		case crdDone && step == "status-storedversions-migrated":
			r := rec(stem)
			c.migrated, checksDone = &r, true
		case crdDone && !checksDone && (strings.HasPrefix(step, "update-crd-") || strings.HasPrefix(step, "create-crd-")):
			news = append(news, read(n))
			c.crds = append(c.crds, rec(stem))
		case crdDone && strings.HasSuffix(step, "-migrate"):
			checksDone = true
		case crdDone:
			m := checkStepRe.FindStringSubmatch(n)
			switch {
			case m != nil && c.again != nil:
				c.after = append(c.after, recordedCheck{stem: stem, op: m[2], name: m[3], version: m[4], rec: rec(stem)})
			case m != nil && !checksDone && c.crd.Status == 200:
				c.checks = append(c.checks, recordedCheck{stem: stem, op: m[2], name: m[3], version: m[4], rec: rec(stem)})
			default:
				// The checks are over: the rest shows what the next real change meets.
				checksDone = true
			}
		}
	}
	if !crdDone {
		t.Fatalf("%s has no update-crd step", dir)
	}
	c.history, c.old = releases[:len(releases)-1], releases[len(releases)-1]
	c.objects = strings.Join(objs, "---\n")
	c.new = strings.Join(news, "---\n")
	return c
}

// input is the case as ModeUpgrade's input.
func (c upgradeCase) input() Input {
	return Input{Mode: ModeUpgrade, History: c.history, OldCRDs: &c.old, CRDs: &c.new, Objects: c.objects, StoredVersions: c.stored}
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
			res, err := s.Evaluate(context.Background(), c.input())
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
			if len(up.CRDs) < len(c.crds) {
				t.Fatalf("%d new CRDs answered, the case recorded %d", len(up.CRDs), len(c.crds))
			}
			for i, want := range c.crds {
				if got := up.CRDs[i]; got.Status != want.Status {
					t.Errorf("new CRD %s (%s): status %d, the real server answered %d (%s)", got.Name, got.Change, got.Status, want.Status, want.Body)
				}
			}
			if c.migrated != nil {
				t.Run("migration", func(t *testing.T) { checkMigration(t, c) })
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

// checkMigration runs the case again with Input.Migrate and holds the storage migration to the real
// server's answers: the /status PUT of the stored versions, the new CRD sent again, and the reads after it.
func checkMigration(t *testing.T, c upgradeCase) {
	in := c.input()
	in.Migrate = true
	res, err := NewSession(Options{UserAgent: oracleAgent}).Evaluate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	up := res.Upgrade
	if len(up.Migrations) != 1 {
		t.Fatalf("migrations %+v, want one", up.Migrations)
	}
	m := up.Migrations[0]
	if len(m.Failed) > 0 || m.Status != c.migrated.Status {
		t.Errorf("stored versions' PUT: %d (failed: %q), the real server answered %d", m.Status, m.Failed, c.migrated.Status)
	}
	if c.again != nil && m.Retry.Status != c.again.Status {
		t.Errorf("the new CRD again: %d, the real server answered %d (%s)", m.Retry.Status, c.again.Status, m.Retry.Error)
	}
	for _, want := range c.after {
		found := false
		for _, o := range up.Objects {
			for _, ch := range o.Checks {
				if o.Name == want.name && ch.Op == want.op && ch.Version == want.version {
					found = true
					if ch.Status != want.rec.Status {
						t.Errorf("%s after the migration: %d, the real server answered %d", want.stem, ch.Status, want.rec.Status)
					}
					if ch.Op == "get" && ch.Status == 200 {
						if gs, ws := specOf(t, ch.Object), specOf(t, want.rec.Body); gs != ws {
							t.Errorf("%s: read spec %s, the real server's %s", want.stem, gs, ws)
						}
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: no such check after the migration", want.stem)
		}
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
