package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGatewayAPIReleases holds `crdplay check -o json` to Gateway API's release history as the real API
// server met it: ../../testdata/releases/gateway-api, recorded from the oracle (apiextensions-apiserver
// v0.37.2) by tools/releases (see testdata/releases/README.md). Each recorded scenario is run as
//
//	crdplay check --old <release>/config/crd/<channel> [--old ...] --new <release>/config/crd/<channel> <example files> -o json
//
// with the releases' module directories from `go mod download -json sigs.k8s.io/gateway-api@vX` (the module
// proxy), and the report is compared with the recording: every CRD update or create's status, every
// object's create status, every check's status (get, dryrun, update, status per served version), the
// dry-run create under the old CRD, and the exit code: 1 exactly when the real server refused something
// the upgrade caused (a CRD update or create; a get, update or status check; a dry-run create the old
// CRD's dry-run did not also refuse), else 0 (warnings allowed), and the verdict that goes with it. Each
// scenario's differences are reported together; none stops the others. Not differences: checks of an object
// whose create the real server refused (nothing was stored to check), and no checks at all of an object
// whose CRD update the real server refused (it kept the old CRD; crdplay checks nothing it could not upgrade).
//
// The pair scenarios (one release to the next, about 1 min on 2 cores) always run; the history scenarios
// (every release before applied in turn, 2 min more) only without -short.
func TestGatewayAPIReleases(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "releases", "gateway-api", "*", "*.json"))
	if len(files) == 0 {
		t.Fatal("no recorded scenarios in testdata/releases/gateway-api")
	}
	mods := newGatewayModules(t)
	type outcome struct {
		name      string
		diffs     int
		checks    int
		unmatched int
		refused   int
		took      time.Duration
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
	)
	for _, f := range files {
		var s releaseScenario
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := s.Channel + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			if s.Scenario == "history" && testing.Short() {
				t.Skip("history scenarios run without -short")
			}
			start := time.Now()
			diffs, checks, unmatched, refused := runReleaseScenario(t, mods, &s)
			mu.Lock()
			outcomes = append(outcomes, outcome{name, len(diffs), checks, unmatched, refused, time.Since(start)})
			mu.Unlock()
			if len(diffs) > 0 {
				t.Errorf("%d differences from the real server (%s):\n  %s", len(diffs), filepath.ToSlash(f), strings.Join(diffs, "\n  "))
			}
		})
	}
	total := 0
	for _, o := range outcomes {
		total += o.diffs
		t.Logf("%-40s %4d differences, %5d checks compared; objects not compared: %d checked by crdplay but refused at create by the real server, %d of a refused CRD unchecked by crdplay; %s",
			o.name, o.diffs, o.checks, o.unmatched, o.refused, o.took.Round(time.Millisecond))
	}
	if total > 0 {
		t.Logf("%d differences in all", total)
	}
}

// releaseScenario is a recorded scenario, as tools/releases writes it.
type releaseScenario struct {
	Scenario string   `json:"scenario"`
	Channel  string   `json:"channel"`
	Old      []string `json:"old"`
	New      string   `json:"new"`
	History  []struct {
		Release string       `json:"release"`
		CRDs    []releaseCRD `json:"crds"`
	} `json:"history"`
	StoredVersionsBefore map[string][]string `json:"storedVersionsBefore"`
	CRDs                 []releaseCRD        `json:"crds"`
	Removed              []string            `json:"removed"`
	Examples             []string            `json:"examples"`
	Objects              []struct {
		File       string         `json:"file"`
		Doc        int            `json:"doc"`
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Namespace  string         `json:"namespace"`
		Name       string         `json:"name"`
		Create     releaseAnswer  `json:"create"`
		OldDryRun  *releaseAnswer `json:"oldDryRun"`
		Checks     []struct {
			Version string `json:"version"`
			Op      string `json:"op"`
			releaseAnswer
		} `json:"checks"`
	} `json:"objects"`
	NotChecked []struct {
		File       string `json:"file"`
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
	} `json:"notChecked"`
	Unexpected []string `json:"unexpected"`
}

type releaseCRD struct {
	File string `json:"file"`
	Name string `json:"name"`
	Op   string `json:"op"`
	releaseAnswer
}

type releaseAnswer struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
	Causes  []struct {
		Field   string `json:"field"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"causes"`
	Warnings []string `json:"warnings"`
}

func (a releaseAnswer) ok() bool { return a.Status >= 200 && a.Status < 300 }

// releaseReport is the part of the JSON report (-o json, doc.go) the test reads.
type releaseReport struct {
	ExitCode int    `json:"exitCode"`
	Verdict  string `json:"verdict"`
	Summary  string `json:"summary"`
	Upgrade  *struct {
		CRDs []struct {
			File           string   `json:"file"`
			Line           int      `json:"line"`
			Name           string   `json:"name"`
			Change         string   `json:"change"`
			StoredVersions []string `json:"storedVersions"`
			Status         int      `json:"status"`
			Accepted       bool     `json:"accepted"`
			Message        string   `json:"message"`
			Warnings       []string `json:"warnings"`
		} `json:"crds"`
	} `json:"upgrade"`
	Objects []struct {
		File       string        `json:"file"`
		Line       int           `json:"line"`
		APIVersion string        `json:"apiVersion"`
		Kind       string        `json:"kind"`
		Namespace  string        `json:"namespace"`
		Name       string        `json:"name"`
		Status     int           `json:"status"`
		Accepted   bool          `json:"accepted"`
		Message    string        `json:"message"`
		CRD        string        `json:"crd"`
		Checks     []reportCheck `json:"checks"`
		Before     []reportCheck `json:"before"`
	} `json:"objects"`
	Diagnostics []struct {
		Severity string `json:"severity"`
		Type     string `json:"type"`
		File     string `json:"file"`
		Line     int    `json:"line"`
		Message  string `json:"message"`
		Input    bool   `json:"input"`
	} `json:"diagnostics"`
}

type reportCheck struct {
	Version string `json:"version"`
	Op      string `json:"op"`
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// runReleaseScenario runs crdplay check on one scenario and returns its differences from the recording,
// the number of checks compared, and the number of objects crdplay checked that the recording has no
// checks of (the real server refused their create, so nothing was stored to check).
func runReleaseScenario(t *testing.T, mods *gatewayModules, s *releaseScenario) (diffs []string, compared, unmatched, skippedRefused int) {
	diff := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	for _, u := range s.Unexpected {
		diff("the recording says something unexpected happened: %s", u)
	}
	crdDir := func(version string) string {
		return filepath.Join(mods.dir(t, version), "config", "crd", s.Channel)
	}
	args := []string{"check"}
	for _, v := range s.Old {
		args = append(args, "--old", crdDir(v))
	}
	args = append(args, "--new", crdDir(s.New))
	exDir := mods.dir(t, s.Old[len(s.Old)-1])
	for _, f := range s.Examples {
		args = append(args, filepath.Join(exDir, filepath.FromSlash(f)))
	}
	args = append(args, "-o", "json")

	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	var rep releaseReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		diff("exit %d and no JSON report (%v); stderr:\n%s", code, err, stderr.String())
		return diffs, 0, 0, 0
	}
	if code != rep.ExitCode {
		diff("the command exited %d, its report's exitCode is %d", code, rep.ExitCode)
	}
	if code == exitInput {
		var msgs []string
		for _, d := range rep.Diagnostics {
			if d.Input {
				msgs = append(msgs, fmt.Sprintf("%s:%d: %s: %s", d.File, d.Line, d.Type, d.Message))
			}
		}
		diff("exit 2 (the input is wrong): %s%s", strings.Join(msgs, "; "), stderr.String())
	}
	if rep.Upgrade == nil {
		diff("no upgrade in the report (mode upgrade expected)")
		return diffs, 0, 0, 0
	}

	// What the real server refused that the upgrade caused: the exit code and verdict expected.
	var crdRefused, objectRefused []string

	// The new CRDs: updated over the live one of their name, or added.
	change := map[string]string{"update": "updated", "create": "added"}
	refusedCRD := map[string]bool{}
	for _, c := range s.CRDs {
		refusedCRD[c.Name] = !c.ok()
	}
	seenCRD := map[string]bool{}
	for _, want := range s.CRDs {
		seenCRD[want.Name] = true
		if !want.ok() {
			crdRefused = append(crdRefused, fmt.Sprintf("%s %s: %d %s", want.Op, want.Name, want.Status, want.Message))
		}
		found := false
		for _, got := range rep.Upgrade.CRDs {
			if got.Name != want.Name || got.Change == "removed" {
				continue
			}
			found = true
			if got.Change != change[want.Op] {
				diff("CRD %s: change %q, the real server's request was an %s (%q)", want.Name, got.Change, want.Op, change[want.Op])
			}
			if got.Status != want.Status {
				diff("CRD %s %s: status %d (%s), the real server answered %d (%s)", want.Op, want.Name, got.Status, got.Message, want.Status, want.Message)
			}
			if got.Accepted != want.ok() {
				diff("CRD %s %s: accepted %v, the real server answered %d", want.Op, want.Name, got.Accepted, want.Status)
			}
			// The cluster the update met: the stored versions a history accumulated.
			if sv, ok := s.StoredVersionsBefore[want.Name]; ok && want.Op == "update" && strings.Join(got.StoredVersions, ",") != strings.Join(sv, ",") {
				diff("CRD %s: stored versions before the update %v, the real server's were %v", want.Name, got.StoredVersions, sv)
			}
		}
		if !found {
			diff("CRD %s: not in upgrade.crds (the real server's %s answered %d)", want.Name, want.Op, want.Status)
		}
	}
	removed := map[string]bool{}
	for _, n := range s.Removed {
		removed[n] = true
	}
	for _, got := range rep.Upgrade.CRDs {
		switch {
		case got.Change == "removed" && !removed[got.Name]:
			diff("CRD %s (%s:%d): reported removed, but the new release has it or the cluster never had it", got.Name, got.File, got.Line)
		case got.Change == "removed":
			delete(removed, got.Name)
		case !seenCRD[got.Name]:
			diff("CRD %q (%s:%d): reported %s (%d %s), but the new release has no CRD of that name", got.Name, got.File, got.Line, got.Change, got.Status, got.Message)
		}
	}
	for n := range removed {
		diff("CRD %s: the new release lacks it, but upgrade.crds does not report it removed", n)
	}

	// The objects, matched in order by kind, namespace and name (the report names the namespace as given,
	// or not at all; the recording names "default" for a namespaced object that names none).
	used := make([]bool, len(rep.Objects))
	for _, want := range s.Objects {
		id := fmt.Sprintf("%s %s/%s (%s doc %d)", want.Kind, want.Namespace, want.Name, want.File, want.Doc)
		gi := -1
		for pass := 0; pass < 2 && gi < 0; pass++ {
			for i, got := range rep.Objects {
				if used[i] || got.Kind != want.Kind || got.Name != want.Name || got.APIVersion != want.APIVersion {
					continue
				}
				// First the namespace as recorded; then an object the report names no namespace for (one it
				// did not send, as when no CRD serves its version).
				if got.Namespace == want.Namespace || (got.Namespace == "" && (want.Namespace == "default" || pass == 1)) {
					gi = i
					break
				}
			}
		}
		if gi < 0 {
			diff("%s: not in the report's objects (the real server's create answered %d)", id, want.Create.Status)
			continue
		}
		used[gi] = true
		got := &rep.Objects[gi]
		// kubectl never sends an object whose version no CRD serves (its REST mapping fails: "no matches for
		// kind"), which crdplay reports as not sent; the recorder POSTed it by URL and got the server's 404
		// for the same fact.
		unserved := got.Status == 0 && want.Create.Status == 404
		if got.Status != want.Create.Status && !unserved {
			diff("%s: create under the old CRD %d (%s), the real server answered %d (%s)", id, got.Status, got.Message, want.Create.Status, want.Create.Message)
		}
		if !want.Create.ok() {
			// Nothing was stored on the real server: crdplay's checks of the object it stored directly (as
			// an earlier CRD's data) have no recording to be held to.
			if len(got.Checks) > 0 {
				unmatched++
			}
			continue
		}
		if want.OldDryRun != nil {
			var before *reportCheck
			for i := range got.Before {
				if got.Before[i].Op == "dryrun" {
					before = &got.Before[i]
					break
				}
			}
			switch {
			case before == nil:
				diff("%s: no dry-run create under the old CRD in before (the real server answered %d)", id, want.OldDryRun.Status)
			case before.Status != want.OldDryRun.Status:
				diff("%s: dry-run create under the old CRD %d (%s), the real server answered %d (%s)", id, before.Status, before.Message, want.OldDryRun.Status, want.OldDryRun.Message)
			}
		}
		if len(got.Checks) == 0 && len(want.Checks) > 0 && refusedCRD[got.CRD] {
			// The real server refused the object's CRD update and kept the old CRD, whose objects it still
			// served (the recording's checks); crdplay checks nothing of a CRD it could not upgrade. Not
			// a difference: the CRD's refusal is the finding.
			skippedRefused++
			continue
		}
		gotChecks := map[string]reportCheck{}
		var gotOrder []string
		for _, c := range got.Checks {
			k := c.Op + " " + c.Version
			if _, dup := gotChecks[k]; dup {
				diff("%s: check %s reported twice", id, k)
			}
			gotChecks[k] = c
			gotOrder = append(gotOrder, k)
		}
		wantKeys := map[string]bool{}
		for _, w := range want.Checks {
			k := w.Op + " " + w.Version
			wantKeys[k] = true
			if !w.ok() {
				switch {
				case w.Op != "dryrun":
					objectRefused = append(objectRefused, fmt.Sprintf("%s: %s: %d %s", id, k, w.Status, w.Message))
				case want.OldDryRun == nil || want.OldDryRun.ok():
					objectRefused = append(objectRefused, fmt.Sprintf("%s: %s (the old CRD's dry run accepted it): %d %s", id, k, w.Status, w.Message))
				}
			}
			c, ok := gotChecks[k]
			if !ok {
				diff("%s: no check %s (the real server answered %d %s)", id, k, w.Status, w.Message)
				continue
			}
			compared++
			if c.Status != w.Status {
				diff("%s: %s answered %d (%s), the real server %d (%s)", id, k, c.Status, c.Message, w.Status, w.Message)
			}
		}
		for _, k := range gotOrder {
			if !wantKeys[k] {
				diff("%s: check %s (%d) was not made on the real server", id, k, gotChecks[k].Status)
			}
		}
	}
	notChecked := func(kind, name, file string) bool {
		for _, nc := range s.NotChecked {
			if nc.Kind == kind && nc.Name == name && strings.HasSuffix(filepath.ToSlash(file), "/"+nc.File) {
				return true
			}
		}
		return false
	}
	for i, got := range rep.Objects {
		if !used[i] && got.Status == 0 && notChecked(got.Kind, got.Name, got.File) {
			continue // a document the recording did not send either (a Namespace): nothing to compare
		}
		if !used[i] {
			diff("object %s %s/%s (%s:%d) in the report has no recording (the recording's example documents of a kind no old CRD defines are not sent)", got.Kind, got.Namespace, got.Name, got.File, got.Line)
		}
	}

	wantExit := exitOK
	if len(crdRefused)+len(objectRefused) > 0 {
		wantExit = exitFindings
	}
	if rep.ExitCode != wantExit {
		why := "the real server refused nothing the upgrade caused"
		if wantExit == exitFindings {
			why = "the real server refused: " + strings.Join(append(crdRefused, objectRefused...), "; ")
		}
		diff("exit code %d (verdict %q: %s), want %d: %s", rep.ExitCode, rep.Verdict, rep.Summary, wantExit, why)
	}
	wantVerdicts := []string{"safe", "warnings"}
	switch {
	case len(crdRefused) > 0:
		wantVerdicts = []string{"refused"}
	case len(objectRefused) > 0:
		wantVerdicts = []string{"breaks"}
	}
	okVerdict := false
	for _, v := range wantVerdicts {
		okVerdict = okVerdict || rep.Verdict == v
	}
	if !okVerdict {
		diff("verdict %q (%s), want %s", rep.Verdict, rep.Summary, strings.Join(wantVerdicts, " or "))
	}
	return diffs, compared, unmatched, skippedRefused
}

// gatewayModules finds Gateway API's releases on the module proxy, once per version.
type gatewayModules struct {
	mu   sync.Mutex
	dirs map[string]string
	tmp  string
}

func newGatewayModules(t *testing.T) *gatewayModules {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to download the releases with")
	}
	return &gatewayModules{dirs: map[string]string{}, tmp: t.TempDir()}
}

// dir is the module directory of sigs.k8s.io/gateway-api at version, from `go mod download -json`. A
// version whose go.mod requires a newer Go than the go command's (v1.7.0 requires go 1.27) is downloaded
// and verified, but reported with an error and no Dir: its verified zip's config/ and examples/ are then
// extracted into a temporary directory.
func (m *gatewayModules) dir(t *testing.T, version string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d, ok := m.dirs[version]; ok {
		return d
	}
	const module = "sigs.k8s.io/gateway-api"
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = m.tmp
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Zip, Sum, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		t.Fatalf("go mod download %s@%s: %v: %s%s", module, version, runErr, stdout.String(), stderr.String())
	}
	dir := info.Dir
	if dir == "" {
		if info.Zip == "" || info.Sum == "" {
			t.Fatalf("go mod download %s@%s: %s", module, version, info.Error)
		}
		t.Logf("go mod download %s@%s: %s; using its verified zip", module, version, info.Error)
		dir = filepath.Join(m.tmp, version)
		if err := extractModule(info.Zip, module+"@"+version+"/", dir); err != nil {
			t.Fatalf("%s@%s: %v", module, version, err)
		}
	}
	m.dirs[version] = dir
	return dir
}

func extractModule(zipFile, prefix, dest string) error {
	zr, err := zip.OpenReader(zipFile)
	if err != nil {
		return err
	}
	defer zr.Close()
	names := make([]string, 0, len(zr.File))
	for _, f := range zr.File {
		rel, ok := strings.CutPrefix(f.Name, prefix)
		if !ok || !(strings.HasPrefix(rel, "config/") || strings.HasPrefix(rel, "examples/")) || strings.HasSuffix(rel, "/") {
			continue
		}
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("%s: bad path %q", zipFile, f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		p := filepath.Join(dest, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		names = append(names, rel)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Errorf("%s: no config/ or examples/", zipFile)
	}
	return nil
}
