package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// stepRe names an oracle upgrade case's steps: NN-<op>-<object>[-<version>].yaml.
var stepRe = regexp.MustCompile(`^(\d+)-([a-z]+)-(.+)\.yaml$`)

// TestUpgradeOracle runs `crdplay check -o json` on each upgrade case recorded from the oracle
// (../../testdata/upgrade: the old CRD crd.yaml, the new CRD the update-crd step, the objects the create
// steps before it) and holds the report to the real server's answers: the new CRD's update status, and the
// status of every get, no-op update and /status update the report lists.
func TestUpgradeOracle(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "upgrade", "*", "crd.yaml"))
	if len(dirs) == 0 {
		t.Fatal("no oracle upgrade cases")
	}
	for _, crd := range dirs {
		dir := filepath.Dir(crd)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			names, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
			sort.Strings(names)
			args := []string{"check", "--old", crd, "-o", "json"}
			updated := false
			steps := map[string]int{} // step name without its number: recorded status
			for _, n := range names {
				m := stepRe.FindStringSubmatch(filepath.Base(n))
				if m == nil {
					continue
				}
				var rec struct {
					Status int `json:"status"`
				}
				b, err := os.ReadFile(filepath.Join(dir, "expected", strings.TrimSuffix(filepath.Base(n), ".yaml")+".json"))
				if err != nil || json.Unmarshal(b, &rec) != nil {
					t.Fatalf("%s: no recorded answer: %v", n, err)
				}
				switch {
				case m[2] == "update" && m[3] == "crd":
					args = append(args, "--new", n)
					steps["update-crd"] = rec.Status
					updated = true
				case m[2] == "create" && !updated:
					args = append(args, n)
				default:
					steps[m[2]+"-"+m[3]] = rec.Status
				}
			}
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), args, &stdout, &stderr); code == exitInput {
				t.Fatalf("exit %d:\n%s%s", code, stdout.String(), stderr.String())
			}
			var rep Report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || rep.Upgrade == nil {
				t.Fatalf("no upgrade report (%v):\n%s", err, stdout.String())
			}
			if got, want := rep.Upgrade.CRD.Status, steps["update-crd"]; got != want {
				t.Errorf("the new CRD's update: %d, the oracle answered %d", got, want)
			}
			checked := 0
			for _, o := range rep.Objects {
				for _, c := range o.Checks {
					if c.Op == "dryrun" {
						continue // not a step of the recorded cases, which store nothing for it
					}
					step := c.Op + "-" + o.Name + "-" + c.Version
					want, ok := steps[step]
					if !ok {
						t.Errorf("%s %s: check %s has no recorded step", o.Kind, o.Name, step)
						continue
					}
					checked++
					if c.Status != want {
						t.Errorf("%s %s: %s answered %d, the oracle %d (%s)", o.Kind, o.Name, step, c.Status, want, c.Message)
					}
				}
			}
			t.Logf("%d checks held to the oracle", checked)
			if rep.Upgrade.CRD.Accepted && checked == 0 {
				t.Errorf("the new CRD was accepted but no check matched a recorded step")
			}
		})
	}
}
