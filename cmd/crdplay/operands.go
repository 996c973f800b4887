package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// inputExtensions are the files a directory contributes, kubectl's (k8s.io/cli-runtime pkg/resource:
// FileExtensions, ".json", ".yaml" and ".yml"), compared without case.
var inputExtensions = []string{".json", ".yaml", ".yml"}

// expandOperands turns inputs as kubectl -f -R, kubeconform and kubectl-validate take them into files: a
// file is read whole, a directory gives its .json, .yaml and .yml files, recursively, in lexical order of
// their paths (filepath.WalkDir, as cli-runtime's ExpandPathsToFileVisitors walks), and "-" is standard
// input, read once, named "-" in positions. flag names the input's flag in messages ("" for objects).
func expandOperands(names []string, stdin io.Reader, flag string) ([]*file, []Diagnostic) {
	var out []*file
	var probs []Diagnostic
	fail := func(name, typ, msg string) {
		probs = append(probs, Diagnostic{Position: Position{File: name}, Severity: "error", Type: typ, Input: true, Message: msg})
	}
	stdinRead := false
	for _, name := range names {
		if name == "-" {
			if stdinRead || stdin == nil {
				fail("-", "UnreadableFile", "standard input is given twice")
				continue
			}
			stdinRead = true
			b, err := io.ReadAll(stdin)
			if err != nil {
				fail("-", "UnreadableFile", "cannot read standard input: "+err.Error())
				continue
			}
			if !hasContent(string(b)) {
				fail("-", "EmptyInput", "standard input is empty"+forFlag(flag))
				continue
			}
			out = append(out, &file{name: "-", text: string(b)})
			continue
		}
		st, err := os.Stat(name)
		if err != nil || !st.IsDir() {
			f, d := readFile(name)
			if d != nil {
				probs = append(probs, *d)
				continue
			}
			out = append(out, f)
			continue
		}
		var paths []string
		werr := filepath.WalkDir(name, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			ext := strings.ToLower(filepath.Ext(p))
			for _, e := range inputExtensions {
				if ext == e {
					paths = append(paths, p)
					break
				}
			}
			return nil
		})
		if werr != nil {
			fail(name, "UnreadableFile", "cannot read the directory: "+werr.Error())
			continue
		}
		if len(paths) == 0 {
			fail(name, "EmptyInput", "no .yaml, .yml or .json file in the directory"+forFlag(flag))
			continue
		}
		sort.Strings(paths)
		for _, p := range paths {
			f, d := readFile(p)
			if d != nil {
				probs = append(probs, *d)
				continue
			}
			out = append(out, f)
		}
	}
	return out, probs
}

// forFlag names the flag an input was given with, for messages.
func forFlag(flag string) string {
	if flag == "" {
		return ""
	}
	return fmt.Sprintf(" (%s)", flag)
}
