package main

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedDocuments: the documents the engine embeds are what upstream's server answers now (run after
// changing the k8s.io versions here: `go test -C tools/openapigen`; `go generate ./engine/internal/openapi`
// rewrites them).
func TestCommittedDocuments(t *testing.T) {
	h, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range documents {
		req := httptest.NewRequest("GET", d.path, nil)
		req.Header.Set("Accept", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got, _ := io.ReadAll(rec.Result().Body)
		want, err := os.ReadFile(filepath.Join("..", "..", "engine", "internal", "openapi", "static", d.file))
		if err != nil {
			t.Fatal(err)
		}
		if rec.Code != 200 || !bytes.Equal(got, want) {
			t.Errorf("GET %s: %d, %d bytes; the committed %s has %d: run go generate ./engine/internal/openapi", d.path, rec.Code, len(got), d.file, len(want))
		}
	}
}
