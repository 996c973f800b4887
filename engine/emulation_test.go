package engine

import (
	"strings"
	"testing"
)

// TestEmulateSetupErrors checks the range and the one-version-per-process rule in this test process, which
// serves the default version (the per-version behaviour is replayed by internal/versioncases, a process per
// version).
func TestEmulateSetupErrors(t *testing.T) {
	vs := EmulatedVersions()
	if strings.Join(vs, " ") != "1.34 1.35 1.36 1.37" {
		t.Fatalf("EmulatedVersions() = %v, want 1.34 to 1.37: a v1.37 kube-apiserver emulates three minors back", vs)
	}
	if _, err := NewHandler(Options{}); err != nil {
		t.Fatalf("NewHandler with the default version: %v", err)
	}
	tests := []struct{ version, want string }{
		{"1.33", `emulated version "1.33" is not supported: crdplay emulates Kubernetes 1.34 to 1.37`},
		{"1.38", `emulated version "1.38" is not supported: crdplay emulates Kubernetes 1.34 to 1.37`},
		{"x", `emulated version "x" is not supported: crdplay emulates Kubernetes 1.34 to 1.37`},
		{"1.35", "emulated version 1.35: this process already emulates Kubernetes 1.37, and one process serves one emulated version (upstream keeps it process-wide)"},
		{"1.37", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			_, err := NewHandler(Options{EmulatedVersion: tt.version})
			if got := errText(err); got != tt.want {
				t.Errorf("NewHandler(%q): err = %q, want %q", tt.version, got, tt.want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
