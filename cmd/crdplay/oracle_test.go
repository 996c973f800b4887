package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
			// The releases before the upgrade (crd.yaml, each update-history step), the last one with the
			// CRDs created beside it; the new release (update-crd, then the update-crd-<plural> and
			// create-crd-<plural> steps); the objects; the stored versions a /status step wrote.
			releases := [][]string{{crd}}
			var newRelease, objects, stored []string
			var newStatus []int // the recorded answer to each CRD of newRelease
			updated, migrating := false, false
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
				step := m[2] + "-" + m[3]
				switch {
				case !updated && m[2] == "update" && strings.HasPrefix(m[3], "history-"):
					releases = append(releases, []string{n})
				case !updated && m[2] == "status" && strings.HasPrefix(m[3], "storedversions"):
					var c struct {
						Metadata struct{ Name string } `json:"metadata"`
						Status   struct {
							StoredVersions []string `json:"storedVersions"`
						} `json:"status"`
					}
					if err := yamlUnmarshal(string(mustRead(t, n)), &c); err != nil {
						t.Fatal(err)
					}
					stored = nil // the last write is the cluster's; an empty list the flag cannot say (the server stores the storage version)
					if len(c.Status.StoredVersions) > 0 {
						stored = []string{c.Metadata.Name + "=" + strings.Join(c.Status.StoredVersions, ",")}
					}
				case !updated && m[2] == "create" && strings.HasPrefix(m[3], "crd-"):
					releases[len(releases)-1] = append(releases[len(releases)-1], n)
				case !updated && m[2] == "create":
					objects = append(objects, n)
				case step == "update-crd":
					newRelease = append(newRelease, n)
					newStatus = append(newStatus, rec.Status)
					steps["update-crd"] = rec.Status
					updated = true
				case step == "update-crd-again" || strings.HasSuffix(step, "-migrate") || step == "status-storedversions-migrated":
					migrating = true // the storage migration: the page's, not the command's
				case !migrating && (m[2] == "update" || m[2] == "create") && strings.HasPrefix(m[3], "crd-"):
					newRelease = append(newRelease, n)
					newStatus = append(newStatus, rec.Status)
				case !migrating:
					steps[step] = rec.Status
				}
			}
			// A release of several files is one text, as a directory gives it.
			bundle := func(name string, files []string) string {
				if len(files) == 1 {
					return files[0]
				}
				var texts []string
				for _, f := range files {
					texts = append(texts, string(mustRead(t, f)))
				}
				p := filepath.Join(t.TempDir(), name)
				if err := os.WriteFile(p, []byte(strings.Join(texts, "---\n")), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			args := []string{"check", "-o", "json"}
			for i, r := range releases {
				args = append(args, "--old", bundle(fmt.Sprintf("old-%d.yaml", i), r))
			}
			for _, sv := range stored {
				args = append(args, "--stored-versions", sv)
			}
			args = append(append(args, "--new", bundle("new.yaml", newRelease)), objects...)
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
			for i, want := range newStatus {
				if i >= len(rep.Upgrade.CRDs) || rep.Upgrade.CRDs[i].Status != want {
					t.Errorf("new CRD %d of %s: the oracle answered %d; the report has %+v", i, newRelease[i], want, rep.Upgrade.CRDs)
				}
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

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
