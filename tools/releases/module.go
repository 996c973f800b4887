package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// moduleDir is the directory of a module version, from `go mod download -json`. A version whose go.mod
// requires a newer Go than the one running (gateway-api v1.7.0 requires go 1.27) is downloaded and
// verified, but the go command reports an error and no Dir: its verified zip is then extracted into a
// directory of the system's temporary directory (config/ and examples/ only).
func moduleDir(path, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = os.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var info struct{ Dir, Zip, Sum, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v: %s%s", path, version, runErr, stdout.String(), stderr.String())
	}
	if info.Dir != "" {
		return info.Dir, nil
	}
	if info.Zip == "" || info.Sum == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", path, version, info.Error)
	}
	dest := filepath.Join(os.TempDir(), "crdplay-releases", strings.ReplaceAll(path, "/", "_")+"@"+version)
	if _, err := os.Stat(filepath.Join(dest, ".complete")); err == nil {
		return dest, nil
	}
	fmt.Fprintf(os.Stderr, "releases: %s@%s: %s; using its verified zip (%s)\n", path, version, info.Error, info.Sum)
	if err := extract(info.Zip, path+"@"+version+"/", dest); err != nil {
		return "", err
	}
	return dest, os.WriteFile(filepath.Join(dest, ".complete"), nil, 0o644)
}

// extract writes the files of a module zip under config/ and examples/ into dest.
func extract(zipFile, prefix, dest string) error {
	zr, err := zip.OpenReader(zipFile)
	if err != nil {
		return err
	}
	defer zr.Close()
	os.RemoveAll(dest)
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
	}
	return nil
}

type release struct {
	version, dir string
}

// channelRelease is one release of one channel: its CRDs and its example documents.
type channelRelease struct {
	rel      *release
	channel  string
	crds     []*doc // the CRD documents of config/crd/<channel>, in file and document order
	examples []string
	docs     []*doc // the documents of the examples, in file and document order
}

// doc is one document of a file: its file relative to the module, its 0-based index among the file's
// non-empty documents, and its JSON.
type doc struct {
	file string
	idx  int
	obj  map[string]any
	raw  []byte
}

func (d *doc) str(path ...string) string { return str(d.obj, path...) }

func loadChannel(r *release, channel string) (*channelRelease, error) {
	cr := &channelRelease{rel: r, channel: channel}
	crdFiles, err := yamlFiles(r.dir, "config/crd/"+channel)
	if err != nil {
		return nil, err
	}
	if len(crdFiles) == 0 {
		return nil, fmt.Errorf("%s: no config/crd/%s", r.version, channel)
	}
	for _, f := range crdFiles {
		docs, err := readDocs(r.dir, f)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if d.str("kind") == "CustomResourceDefinition" && strings.HasPrefix(d.str("apiVersion"), "apiextensions.k8s.io/") {
				cr.crds = append(cr.crds, d)
			}
		}
	}
	exDirs := []string{"examples/standard"}
	if channel == "experimental" {
		exDirs = append(exDirs, "examples/experimental")
	}
	for _, dir := range exDirs {
		files, err := yamlFiles(r.dir, dir)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no %s", r.version, dir)
		}
		for _, f := range files {
			docs, err := readDocs(r.dir, f)
			if err != nil {
				return nil, err
			}
			cr.examples = append(cr.examples, f)
			cr.docs = append(cr.docs, docs...)
		}
	}
	return cr, nil
}

// yamlFiles are the .yaml, .yml and .json files under dir (relative to the module, slash-separated), in
// lexical order of their paths (as filepath.WalkDir visits them).
func yamlFiles(root, dir string) ([]string, error) {
	var out []string
	base := filepath.Join(root, filepath.FromSlash(dir))
	if _, err := os.Stat(base); os.IsNotExist(err) {
		return nil, nil
	}
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// readDocs splits a file into its YAML documents as kubectl's reader does (a line "---", trailing spaces
// allowed, separates them) and converts each to JSON; empty documents are left out.
func readDocs(root, file string) ([]*doc, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	var docs []*doc
	for _, part := range splitYAML(data) {
		js, err := yaml.YAMLToJSON(part)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		v, err := decodeJSON(js)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		if v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: a document is not a mapping", file)
		}
		docs = append(docs, &doc{file: file, idx: len(docs), obj: m, raw: js})
	}
	return docs, nil
}

func splitYAML(data []byte) [][]byte {
	var parts [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if after, ok := strings.CutPrefix(line, "---"); ok && strings.TrimRight(after, " \t\r") == "" {
			parts = append(parts, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	return append(parts, cur.Bytes())
}

func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[p]
	}
	s, _ := cur.(string)
	return s
}
