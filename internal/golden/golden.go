// Package golden compares a test's output with a file under testdata, and rewrites the file from the output
// when the test runs with -update. Goldens hold what real evaluations produced, reviewed by a person: -update
// writes them, `git diff` is the review.
//
// The -update flag is registered here, once, so that a test package importing golden must not define its own.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"crdplay/internal/oraclecase"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata from this run's output (then review git diff)")

// Updating reports whether the run rewrites goldens (-update).
func Updating() bool { return *update }

// Check fails t when got differs from the contents of file, showing a unified diff; with -update it writes got
// to file (creating its directory) instead.
func Check(t testing.TB, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (write it with -update, then review it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from this run's output (rewrite with -update and review):\n%s", file, oraclecase.UnifiedDiff(file, "got", want, got))
	}
}
