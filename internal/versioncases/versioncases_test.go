package versioncases

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"crdplay/internal/oraclecase"
)

// root is the tree of recordings: root/<version>/<case>/ is an oracle case directory.
var root = filepath.Join("..", "..", "testdata", "versions")

// versions are the Kubernetes minors recorded, oldest first. defaultVersion is the one the engine answers as.
var versions = []string{"1.30", "1.32", "1.34", "1.35", "1.36", "1.37"}

const defaultVersion = "1.37"

// stepRe matches the files the oracle runs as steps (crd.yaml is step 00).
var stepRe = regexp.MustCompile(`^(\d+)-([a-z]+)(?:-.*)?\.ya?ml$`)

// TestTreeComplete checks that testdata/versions holds exactly the recorded versions, that each records every
// case with inputs identical to the default version's, that each step of each case has its recorded output,
// and that nothing in the tree goes unread (oraclecase.Orphans).
func TestTreeComplete(t *testing.T) {
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, e := range entries {
		switch {
		case e.IsDir():
			found = append(found, e.Name())
		case !strings.HasSuffix(e.Name(), ".md"):
			t.Errorf("%s: a file beside the version directories; only Markdown documents the tree", filepath.Join(root, e.Name()))
		}
	}
	if !slices.Equal(found, versions) {
		t.Fatalf("%s holds versions %v, want %v", root, found, versions)
	}

	orphans, err := oraclecase.Orphans(filepath.Join(root, "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orphans {
		t.Error(o)
	}

	cases, err := caseNames(defaultVersion)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", filepath.Join(root, defaultVersion))
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			got, err := caseNames(v)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, cases) {
				t.Errorf("cases %v, want those of %s: %v", got, defaultVersion, cases)
			}
			for _, c := range cases {
				if !slices.Contains(got, c) {
					continue
				}
				for _, p := range caseProblems(filepath.Join(root, v, c), filepath.Join(root, defaultVersion, c)) {
					t.Error(p)
				}
			}
		})
	}
}

// caseNames returns the case directories of one version, sorted.
func caseNames(version string) ([]string, error) {
	dirs, err := oraclecase.CaseDirs(filepath.Join(root, version))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = filepath.Base(d)
	}
	return names, nil
}

// caseProblems compares one recorded case with the same case of the default version: the input files must be
// byte-identical, and every step (crd.yaml as 00-crd) must have its output in expected/.
func caseProblems(dir, ref string) []string {
	var problems []string
	inputs := func(d string) (map[string][]byte, error) {
		entries, err := os.ReadDir(d)
		if err != nil {
			return nil, err
		}
		files := map[string][]byte{}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(d, e.Name()))
			if err != nil {
				return nil, err
			}
			files[e.Name()] = b
		}
		return files, nil
	}
	got, err := inputs(dir)
	if err != nil {
		return []string{err.Error()}
	}
	want, err := inputs(ref)
	if err != nil {
		return []string{err.Error()}
	}
	for name, b := range want {
		if g, ok := got[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s: missing (%s has it): every version replays the same inputs", filepath.Join(dir, name), ref))
		} else if !bytes.Equal(g, b) {
			problems = append(problems, fmt.Sprintf("%s: differs from %s: every version replays the same inputs", filepath.Join(dir, name), filepath.Join(ref, name)))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s: not in %s: every version replays the same inputs", filepath.Join(dir, name), ref))
		}
	}
	stems := []string{"00-crd"}
	for name := range got {
		if stepRe.MatchString(name) {
			stems = append(stems, strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml"))
		}
	}
	for _, s := range stems {
		if _, err := os.Stat(filepath.Join(dir, "expected", s+".json")); err != nil {
			problems = append(problems, fmt.Sprintf("%s: step %s has no recorded output", dir, s))
		}
	}
	return problems
}
