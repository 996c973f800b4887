package oraclecase

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Orphans returns one line per entry of a tree of cases that no replay reads, so that a test replaying the
// tree fails instead of silently testing less. pattern matches the tree's case directories (a glob, such as
// testdata/oracle/*); every match must be a directory with a crd.yaml, and Markdown files there document the
// tree. In a case directory, a file must be crd.yaml, desc.txt, a step (NN-op[-label].yaml, the only names
// the runner reads as steps) or one of extra; the only subdirectory is expected, which holds .json files, each
// the output of crd.yaml (00-crd), of a step, or of a list step's table (.table.json).
//
// Which outputs a case really produces is known only by running it: RunCase reports an expected file that
// its steps did not write, and an output without an expected file, in Result.Diffs.
func Orphans(pattern string, extra ...string) ([]string, error) {
	return OrphansFS(osFS{}, pattern, extra...)
}

// OrphansFS is Orphans for a tree in fsys.
func OrphansFS(fsys fs.FS, pattern string, extra ...string) ([]string, error) {
	matches, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("%s: no case directories", pattern)
	}
	var orphans []string
	for _, m := range matches {
		st, err := fs.Stat(fsys, m)
		if err != nil {
			return nil, err
		}
		switch {
		case !st.IsDir() && strings.HasSuffix(m, ".md"):
		case !st.IsDir():
			orphans = append(orphans, fmt.Sprintf("%s: a file where the cases are: no replay reads it (a case is a directory with a crd.yaml)", m))
		default:
			o, err := caseOrphans(fsys, m, extra)
			if err != nil {
				return nil, err
			}
			orphans = append(orphans, o...)
		}
	}
	return orphans, nil
}

// caseOrphans is OrphansFS for one case directory.
func caseOrphans(fsys fs.FS, dir string, extra []string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var orphans []string
	stems := map[string]string{"00-crd": "create"} // step stem -> op
	hasCRD, hasExpected := false, false
	for _, e := range entries {
		name := e.Name()
		switch m := stepRe.FindStringSubmatch(name); {
		case e.IsDir() && name == "expected":
			hasExpected = true
		case e.IsDir():
			orphans = append(orphans, fmt.Sprintf("%s: a directory in a case: no replay reads it (only expected/ belongs there)", filepath.Join(dir, name)))
		case name == "crd.yaml":
			hasCRD = true
		case name == "desc.txt" || slices.Contains(extra, name):
		case m != nil:
			stems[strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")] = m[2]
		default:
			orphans = append(orphans, fmt.Sprintf("%s: not a step file (NN-op[-label].yaml), so no replay runs it", filepath.Join(dir, name)))
		}
	}
	if !hasCRD {
		// Without crd.yaml the directory is not a case at all: its other files say nothing more.
		return []string{fmt.Sprintf("%s: no crd.yaml, so no replay runs this case", dir)}, nil
	}
	if !hasExpected {
		return orphans, nil // RunCase reports every output as new
	}
	exp := filepath.Join(dir, "expected")
	outputs, err := fs.ReadDir(fsys, exp)
	if err != nil {
		return nil, err
	}
	for _, e := range outputs {
		name := e.Name()
		stem, isJSON := strings.CutSuffix(name, ".json")
		if table, ok := strings.CutSuffix(stem, ".table"); ok && stems[table] == "list" {
			continue
		}
		if e.IsDir() || !isJSON || stems[stem] == "" {
			orphans = append(orphans, fmt.Sprintf("%s: no step of the case writes it (want crd.yaml's 00-crd.json, NN-step.json or NN-list-step.table.json)", filepath.Join(exp, name)))
		}
	}
	return orphans, nil
}
