package main

import (
	"os"
	"path/filepath"
)

// versionCases packs each version of testdata/versions (oracle cases recorded at that Kubernetes minor) as
// test/version-cases/<version>.json, in caseBundle's format, for web/test/versioncases.spec.mjs: it replays
// each through wasm/oraclerunner against a page whose engine emulates that version.
func (b *builder) versionCases() error {
	root := filepath.Join(b.root, "testdata", "versions")
	entries, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		cases, err := caseBundle(filepath.Join(root, e.Name()))
		if err != nil {
			return err
		}
		if err := b.file("test/version-cases/"+e.Name()+".json", cases); err != nil {
			return err
		}
	}
	return nil
}
