package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// Operands are read as kubectl v1.37 reads -f with -R (k8s.io/cli-runtime v0.37.2, pkg/resource):
// Builder.FilenameParam takes "-" as standard input and globs a path that does not exist
// (expandIfFilePattern); Builder.Path and ExpandPathsToFileVisitors walk each path with filepath.Walk, and
// FileVisitor.Visit reads each file (kubectlText). What that means, checked against the real kubectl:
//   - a path given explicitly is read whatever its name; in a directory, only names ending in exactly
//     .json, .yaml or .yml (FileExtensions, compared as they are: a.YAML is left out, as kubectl leaves it);
//   - hidden files and directories are read like any other (kubectl has no rule for them);
//   - the order is filepath.Walk's: each directory's entries by name, a directory's files before its next
//     sibling ("crds/x.yaml" before "crds-v2/x.yaml" before "crds.yaml"), not the sorted full paths;
//   - symbolic links are not followed to directories: a link to a file is read, a link to a directory is
//     left out unless its name ends in an extension, and then it cannot be read ("is a directory"), and a
//     link to a directory given as the operand cannot be read either (filepath.Walk uses Lstat).
// Unlike kubectl, directories are always recursive (crdplay has no -R), and http(s) URLs are not fetched.

// inputExtensions are cli-runtime's FileExtensions.
var inputExtensions = []string{".json", ".yaml", ".yml"}

// expandOperands turns operands into input files as kubectl -f -R, kubeconform and kubectl-validate take
// them: a file is read whole, a directory gives its .json, .yaml and .yml files, recursively, in
// filepath.Walk's order, a path that does not exist is tried as a glob pattern, and "-" is standard input,
// read once and named "-" in positions. Each file's text is what kubectl reads (kubectlText). flag names
// the input's flag in messages ("" for objects).
func expandOperands(names []string, stdin io.Reader, flag string) ([]*file, []Diagnostic) {
	var out []*file
	var probs []Diagnostic
	fail := func(name, typ, msg string) {
		probs = append(probs, Diagnostic{Position: Position{File: name}, Severity: "error", Type: typ, Input: true, Message: msg})
	}
	read := func(p string) {
		f, d := readFile(p)
		if d != nil {
			probs = append(probs, *d)
			return
		}
		f.text = kubectlText([]byte(f.text))
		out = append(out, f)
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
			text := kubectlText(b)
			if !hasContent(text) {
				fail("-", "EmptyInput", "standard input is empty"+forFlag(flag))
				continue
			}
			out = append(out, &file{name: "-", text: text})
			continue
		}
		paths, err := expandPattern(name)
		if err != nil {
			fail(name, "UnreadableFile", err.Error())
			continue
		}
		for _, p := range paths {
			files, dir, err := walkOperand(p)
			switch {
			case err != nil:
				fail(p, "UnreadableFile", "cannot read the directory: "+err.Error())
			case dir && len(files) == 0:
				fail(p, "EmptyInput", "no .yaml, .yml or .json file in the directory"+forFlag(flag))
			default:
				for _, f := range files {
					read(f)
				}
			}
		}
	}
	return out, probs
}

// expandPattern is cli-runtime's expandIfFilePattern: a path that does not exist is a glob pattern, and
// stands for its matches (in filepath.Glob's order). A path that neither exists nor matches stays as it is,
// for readFile to say that it cannot be read.
func expandPattern(name string) ([]string, error) {
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		return []string{name}, nil
	}
	matches, err := filepath.Glob(name)
	if err != nil {
		return nil, fmt.Errorf("not a file, and not a valid pattern: %v", err)
	}
	if len(matches) == 0 {
		return []string{name}, nil
	}
	return matches, nil
}

// walkOperand is ExpandPathsToFileVisitors with recursion: the files of path, in filepath.Walk's order, and
// whether path is a directory. A path that is not a directory (or cannot be found) is its own file, read
// whatever its name.
func walkOperand(path string) (files []string, dir bool, err error) {
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		return []string{path}, false, nil
	}
	err = filepath.Walk(path, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return nil
		}
		// cli-runtime's ignoreFile: the extension as it is, without folding case.
		if p != path && !slices.Contains(inputExtensions, filepath.Ext(p)) {
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		// kubectl reads nothing of a directory it cannot walk whole.
		return nil, true, err
	}
	return files, true, nil
}

// forFlag names the flag an input was given with, for messages.
func forFlag(flag string) string {
	if flag == "" {
		return ""
	}
	return fmt.Sprintf(" (%s)", flag)
}
