package oraclecase_test

import (
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"crdplay/engine"
	"crdplay/internal/oraclecase"
)

// TestRunCaseFS runs a recorded case read through Options.FS, as the browser's runner (wasm/oraclerunner) reads
// its bundle, and the same case from the OS, each against a fresh engine: both must pass. The file system may
// change where case files come from, never what is compared.
func TestRunCaseFS(t *testing.T) {
	const root = "../../testdata/oracle"
	dirs, err := oraclecase.CaseDirsFS(os.DirFS(root), ".")
	if err != nil || len(dirs) < 2 || !slices.Contains(dirs, "basic-crontab") {
		t.Fatalf("CaseDirsFS = %v, %v; want the case names", dirs, err)
	}

	// The bundle's layout: case files under a prefix, in a map.
	bundle := fstest.MapFS{}
	err = fs.WalkDir(os.DirFS(root), "basic-crontab", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path.Join(root, p))
		bundle[path.Join("cases", p)] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := oraclecase.CaseDirsFS(bundle, "cases"); err != nil || !slices.Equal(got, []string{"cases/basic-crontab"}) {
		t.Fatalf("CaseDirsFS(bundle) = %v, %v", got, err)
	}

	for _, tc := range []struct {
		name, dir string
		fsys      fs.FS
	}{
		{"os", path.Join(root, "basic-crontab"), nil},
		{"bundle", "cases/basic-crontab", bundle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := engine.NewHandler(engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: time.Second, NoSleep: true, FS: tc.fsys}
			res, err := oraclecase.New(oraclecase.HandlerClient(h), "http://engine", opts).RunCase(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Steps < 2 || len(res.Diffs) > 0 {
				t.Errorf("%d steps, diffs:\n%s", res.Steps, strings.Join(res.Diffs, "\n"))
			}
		})
	}
}
