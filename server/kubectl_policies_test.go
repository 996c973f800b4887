package server_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"crdplay/server"
)

// ages are the AGE column's values, which differ between any two runs.
var ages = regexp.MustCompile(`\b[0-9]+(s|m[0-9]*s?)\b`)

var recordKubeOracle = flag.String("record-kube-oracle", "", "TestKubectlPolicies: run the steps against the kube-apiserver "+
	"oracle (../shared/oracle-kube) at this `URL` and rewrite testdata/kubectl-policies/transcript.oracle.txt")

// TestKubectlPolicies drives the server with upstream kubectl through admission policies: a CRD applied with its
// ValidatingAdmissionPolicy and binding (kubectl validates them against the group's OpenAPI), an object over the
// policy's limit refused (apply, server-side dry run, server-side apply), one within it created, the policies
// and bindings listed as tables and the policy's type-checking status. Every command's
// exit status, stdout and stderr must equal what kubectl printed against a real kube-apiserver v1.37.2, recorded
// in testdata/kubectl-policies/transcript.oracle.txt from a fresh ../shared/oracle-kube:
//
//	/work/shared/oracle-kube/bin/oracle-kube serve --port 18790 &
//	go test ./server -run TestKubectlPolicies -record-kube-oracle http://127.0.0.1:18790
func TestKubectlPolicies(t *testing.T) {
	needSockets(t)
	if testing.Short() {
		t.Skip("builds kubectl")
	}
	kubectl := buildKubectl(t)
	dir := filepath.Join("testdata", "kubectl-policies")
	oracleTranscript := filepath.Join(dir, "transcript.oracle.txt")
	steps := []string{
		"apply -f policy-bundle.yaml",
		"wait --for=condition=Established crd/crontabs.stable.example.com",
		"apply -f ct-eight.yaml",
		"apply -f ct-three.yaml",
		"create -f ct-eight.yaml --dry-run=server",
		"apply -f ct-eight.yaml --server-side",
		"get validatingadmissionpolicies",
		"get validatingadmissionpolicybindings -o wide",
		"get validatingadmissionpolicies replicas-limit -o jsonpath={.status}",
	}
	url := *recordKubeOracle
	if url == "" {
		h, err := server.NewHandler(server.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		srv := httptest.NewServer(h)
		defer srv.Close()
		url = srv.URL
	}
	home := t.TempDir()
	var got strings.Builder
	for i, s := range steps {
		if i == 2 && *recordKubeOracle != "" {
			// A real server enforces a policy a moment after accepting it (its plugins recompile on a
			// one-second timer); crdplay's before answering the write.
			time.Sleep(3 * time.Second)
		}
		cmd := exec.Command(kubectl, append([]string{"--server", url, "--cache-dir", filepath.Join(home, "cache")}, strings.Fields(s)...)...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + home, "KUBECONFIG=/nonexistent", "KUBERC=off", "PATH=" + os.Getenv("PATH")}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		exit := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("kubectl %s: %v", s, err)
			}
			exit = ee.ExitCode()
		}
		fmt.Fprintf(&got, "$ kubectl %s\nexit %d\n-- stdout --\n%s-- stderr --\n%s", s, exit, ages.ReplaceAllString(stdout.String(), "<age>"), stderr.String())
	}
	if *recordKubeOracle != "" {
		if err := os.WriteFile(oracleTranscript, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(oracleTranscript)
	if err != nil {
		t.Fatalf("%v (record it: see TestKubectlPolicies)", err)
	}
	if got.String() != string(want) {
		t.Errorf("kubectl's output differs from the real server's (%s):\n-- crdplay --\n%s\n-- kube-apiserver --\n%s", oracleTranscript, got.String(), want)
	}
}
