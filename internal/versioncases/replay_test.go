package versioncases

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"crdplay/engine"
	"crdplay/internal/oraclecase"
	"crdplay/playground"
)

// envVersion names the emulated version a test process replays. Upstream keeps the emulated version in
// process-wide state, so each version is replayed in a process of its own: without the variable, TestReplay
// runs this test binary again once per version with the variable set. Under js/wasm there is no os/exec, and
// the test replays only the version the variable names (the Makefile's test-wasm runs the package once per
// version), or the default.
const envVersion = "CRDPLAY_EMULATED_VERSION"

// processVersion is the version this process emulates: the variable's, or the engine's default.
func processVersion() string {
	if v := os.Getenv(envVersion); v != "" {
		return v
	}
	return defaultVersion
}

// canReexec reports whether the test binary can run itself again.
func canReexec() bool { return runtime.GOOS != "js" && runtime.GOOS != "wasip1" }

// emulatedVersions are the recorded versions the engine emulates, oldest first: the v0.37.2 oracle's
// --emulated-version recordings.
func emulatedVersions(t *testing.T) []string {
	var out []string
	for _, v := range engine.EmulatedVersions() {
		if slices.Contains(versions, v) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		t.Fatalf("none of the recorded versions %v is one the engine emulates (%v)", versions, engine.EmulatedVersions())
	}
	return out
}

// knownGaps are, per version and case, the outputs where the engine is known to answer otherwise than the
// real server, each with what differs. The replay fails if these outputs match (the gap is closed: drop the
// entry) as well as if any other output differs.
var knownGaps = map[string]map[string]map[string]string{}

// TestReplay replays every emulated version's recordings against the engine emulating that version, each
// version in a process of its own (with TestProcessVersion): every normalised response must be byte-identical to the real server's,
// except for the outputs listed in knownGaps, which must differ.
func TestReplay(t *testing.T) {
	if os.Getenv(envVersion) != "" || !canReexec() {
		replay(t, processVersion())
		return
	}
	for _, v := range emulatedVersions(t) {
		t.Run(v, func(t *testing.T) {
			if out, err := reexec(t.Context(), "TestReplay|TestProcessVersion", v); err != nil {
				t.Errorf("replaying %s in its own process: %v\n%s", v, err, out)
			}
		})
	}
}

// reexec runs the tests of this binary that tests (a regular expression) matches whole, in a new process
// emulating version.
func reexec(ctx context.Context, tests, version string) ([]byte, error) {
	args := []string{"-test.run=^(" + tests + ")$", "-test.count=1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), envVersion+"="+version)
	return cmd.CombinedOutput()
}

// replay runs one version's cases against engines emulating it.
func replay(t *testing.T, version string) {
	dirs, err := oraclecase.CaseDirs(filepath.Join(root, version))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatalf("%s: no cases", filepath.Join(root, version))
	}
	gaps := knownGaps[version]
	for c := range gaps {
		if !slices.Contains(dirs, filepath.Join(root, version, c)) {
			t.Errorf("knownGaps names case %s, which %s does not have", c, filepath.Join(root, version))
		}
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			diffs := replayCase(t, version, dir)
			caseGaps := gaps[filepath.Base(dir)]
			differing := map[string]bool{}
			for _, d := range diffs {
				// Each diff starts with the name of its output file and a colon.
				file, _, _ := strings.Cut(d, ":")
				differing[file] = true
				if gap, ok := caseGaps[file]; ok {
					t.Logf("known gap in %s: %s", file, gap)
					continue
				}
				t.Errorf("differs from the real server's answer at %s:\n%s", version, d)
			}
			for file, gap := range caseGaps {
				if !differing[file] {
					t.Errorf("%s now matches the real server's answer; drop it from knownGaps (%s)", file, gap)
				}
			}
		})
	}
}

// replayCase runs one case directory against a new engine emulating version and returns the differences.
func replayCase(t *testing.T, version, dir string) []string {
	t.Helper()
	h, err := engine.NewHandler(engine.Options{EmulatedVersion: version})
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	// The engine changes CRDs synchronously: nothing to settle, and a CRD not ready within a second never is.
	opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: time.Second, NoSleep: true}
	res, err := oraclecase.New(oraclecase.HandlerClient(h), "http://engine", opts).RunCase(dir)
	if err != nil {
		t.Fatalf("after %d step(s): %v", res.Steps, err)
	}
	return res.Diffs
}

// versionRecordings is where /version bodies recorded from the oracle at each emulated version are.
var versionRecordings = filepath.Join("..", "..", "engine", "testdata", "emulation")

// versionInfo reads /version from h as a map, without the fields that describe the build (Go version,
// compiler, platform).
func versionInfo(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("/version: %v in %s", err, body)
	}
	for _, k := range []string{"goVersion", "compiler", "platform"} {
		delete(m, k)
	}
	return m
}

// getVersion answers GET /version from h.
func getVersion(t *testing.T, h http.Handler) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/version", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /version: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// leakCase is a recorded case whose answers differ between the versions TestVersionsKeptApart runs.
const leakCase = "delete-ignore-read-error"

// TestProcessVersion checks, in a process emulating one version, that the process is that version and only
// that one: /version reports what the oracle's /version reported at that version, the case that differs
// between versions gets that version's recorded answer, and an engine asking for another version is refused.
// TestVersionsKeptApart runs it in two processes at once.
func TestProcessVersion(t *testing.T) {
	version := processVersion()
	h, err := engine.NewHandler(engine.Options{EmulatedVersion: version})
	if err != nil {
		t.Fatalf("NewHandler(%s): %v", version, err)
	}
	want, err := os.ReadFile(filepath.Join(versionRecordings, "version-"+version+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := versionInfo(t, getVersion(t, h)), versionInfo(t, want); !equalJSON(got, want) {
		t.Errorf("/version at %s = %v, the oracle's = %v", version, got, want)
	}
	if diffs := replayCase(t, version, filepath.Join(root, version, leakCase)); len(diffs) > 0 {
		t.Errorf("%s at %s differs from that version's recording:\n%s", leakCase, version, strings.Join(diffs, "\n"))
	}
	for _, other := range engine.EmulatedVersions() {
		if other == version {
			continue
		}
		_, err := engine.NewHandler(engine.Options{EmulatedVersion: other})
		if err == nil || !strings.Contains(err.Error(), "one process serves one emulated version") {
			t.Errorf("NewHandler(%s) in a process emulating %s: err = %v, want the one-version-per-process refusal", other, version, err)
		}
	}
	if _, err := engine.NewHandler(engine.Options{EmulatedVersion: version}); err != nil {
		t.Errorf("a second NewHandler for the process's own version %s: %v", version, err)
	}
	if again := versionInfo(t, getVersion(t, h)); !equalJSON(again, versionInfo(t, want)) {
		t.Errorf("/version at %s after the refused versions = %v", version, again)
	}

	// The playground reports the version it emulates; its compatibility report is about real servers of each
	// minor up to the engine's own release, whatever it emulates (playground.KubernetesRange).
	crd, err := os.ReadFile(filepath.Join(root, version, "plain", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(crd)
	res, err := playground.NewSession(playground.Options{EmulatedVersion: version}).Evaluate(t.Context(), playground.Input{CRDs: &text})
	if err != nil {
		t.Fatalf("Evaluate at %s: %v", version, err)
	}
	versions := engine.EmulatedVersions()
	newest, _ := strconv.Atoi(strings.TrimPrefix(versions[len(versions)-1], "1."))
	if wantRange := (playground.KubernetesRange{Oldest: 28, Newest: newest, Version: "v1.37.2", Emulated: version}); res.Kubernetes != wantRange {
		t.Errorf("Result.kubernetes at %s = %+v, want %+v", version, res.Kubernetes, wantRange)
	}
	if len(res.CRDs) != 1 || !res.CRDs[0].Accepted {
		t.Errorf("the plain CRD at %s: %+v", version, res.CRDs)
	}
	for _, other := range engine.EmulatedVersions() {
		if other == version {
			continue
		}
		if _, err := playground.NewSession(playground.Options{EmulatedVersion: other}).Evaluate(t.Context(), playground.Input{CRDs: &text}); err == nil {
			t.Errorf("a session asking for %s in a process emulating %s evaluated", other, version)
		}
	}
}

func equalJSON(a, b map[string]any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestVersionsKeptApart runs TestProcessVersion in two processes at once, one emulating 1.35 and one 1.37, on
// a case whose recorded answers differ between them: each must give its own version's /version and answers.
func TestVersionsKeptApart(t *testing.T) {
	if os.Getenv(envVersion) != "" || !canReexec() {
		t.Skip("runs processes of its own; needs os/exec")
	}
	a, b := "1.35", "1.37"
	for _, name := range []string{"00-crd.json", "03-delete-with-grace-period.json", "04-delete-alone.json"} {
		ra, errA := os.ReadFile(filepath.Join(root, a, leakCase, "expected", name))
		rb, errB := os.ReadFile(filepath.Join(root, b, leakCase, "expected", name))
		if errA != nil || errB != nil {
			t.Fatalf("reading the recordings: %v, %v", errA, errB)
		}
		if name != "00-crd.json" && bytes.Equal(ra, rb) {
			t.Fatalf("%s/%s is recorded the same at %s and %s: the case cannot tell a leak", leakCase, name, a, b)
		}
	}
	type result struct {
		out []byte
		err error
	}
	done := map[string]chan result{}
	for _, v := range []string{a, b} {
		ch := make(chan result, 1)
		done[v] = ch
		go func() {
			out, err := reexec(t.Context(), "TestProcessVersion", v)
			ch <- result{out, err}
		}()
	}
	for _, v := range []string{a, b} {
		if r := <-done[v]; r.err != nil {
			t.Errorf("the process emulating %s: %v\n%s", v, r.err, r.out)
		}
	}
}

// TestSetupErrors checks that a version outside the range is refused with a message naming the range, in any
// process.
func TestSetupErrors(t *testing.T) {
	vs := engine.EmulatedVersions()
	if len(vs) != 4 || vs[0] != "1.34" || vs[3] != "1.37" {
		t.Errorf("EmulatedVersions() = %v, want the four minors 1.34 to 1.37 a v1.37 kube-apiserver emulates", vs)
	}
	for _, bad := range []string{"1.33", "1.38", "1.35.0", "v1.35", "kube=1.35", "135", " 1.35"} {
		t.Run(bad, func(t *testing.T) {
			_, err := engine.NewHandler(engine.Options{EmulatedVersion: bad})
			want := `emulated version "` + bad + `" is not supported: crdplay emulates Kubernetes 1.34 to 1.37`
			if err == nil || err.Error() != want {
				t.Errorf("NewHandler(%q): err = %v, want %s", bad, err, want)
			}
		})
	}
}
