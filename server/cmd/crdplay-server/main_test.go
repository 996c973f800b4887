package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"crdplay/internal/oraclecase"
)

// envRunMain makes the test binary run main instead of the tests, so that the tests start the command as a
// process of its own (the emulated version is process-wide) without building it first.
const envRunMain = "CRDPLAY_SERVER_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// process is a running crdplay-server.
type process struct {
	cmd    *exec.Cmd
	url    string
	stderr bytes.Buffer
	done   chan struct{}
}

// startServer runs the command on a free loopback port with args and waits until it answers /version.
func startServer(t *testing.T, args ...string) *process {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &process{url: "http://" + addr, done: make(chan struct{})}
	s.cmd = exec.Command(os.Args[0], append([]string{"--addr", addr, "--site", ""}, args...)...)
	s.cmd.Env = append(os.Environ(), envRunMain+"=1")
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Kill() // by its own PID; a no-op once it has exited
		<-s.done
		if t.Failed() {
			t.Logf("server %s stderr:\n%s", s.url, s.stderr.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err := http.Get(s.url + "/version"); err == nil {
			resp.Body.Close()
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("server exited: %v", s.cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("server not serving after 30s")
		}
	}
}

// TestEmulatedVersion starts the server with --emulated-version 1.35 and replays the cases recorded from the
// oracle emulating 1.35 over HTTP: /version and every answer must be 1.35's.
func TestEmulatedVersion(t *testing.T) {
	const version = "1.35"
	s := startServer(t, "--emulated-version", version)

	resp, err := http.Get(s.url + "/version")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var info map[string]string
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatalf("/version: %v in %s", err, body)
	}
	for k, want := range map[string]string{"gitVersion": "v1.37.2", "emulationMinor": "35", "minCompatibilityMinor": "34"} {
		if info[k] != want {
			t.Errorf("/version %s = %q, want %q (the oracle's at --emulated-version=1.35)", k, info[k], want)
		}
	}

	dirs, err := oraclecase.CaseDirs(filepath.Join("..", "..", "..", "testdata", "versions", version))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no recorded cases")
	}
	// The engine applies CRD changes synchronously: no settling, short waits.
	opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: 5 * time.Second, NoSleep: true}
	runner := oraclecase.New(nil, s.url, opts)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			res, err := runner.RunCase(dir)
			if err != nil {
				t.Fatalf("after %d step(s): %v", res.Steps, err)
			}
			for _, d := range res.Diffs {
				t.Errorf("differs from the oracle's answer at %s:\n%s", version, d)
			}
		})
	}
}

// TestEmulatedVersionRefused checks that a version the engine does not emulate stops the command before it
// serves, with status 2 and a message naming the versions that exist.
func TestEmulatedVersionRefused(t *testing.T) {
	for _, bad := range []string{"1.33", "1.38", "latest"} {
		t.Run(bad, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "--addr", "127.0.0.1:0", "--site", "", "--emulated-version", bad)
			cmd.Env = append(os.Environ(), envRunMain+"=1")
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("exit: %v, want status 2\n%s", err, out)
			}
			want := `crdplay-server: --emulated-version: emulated version "` + bad + `" is not supported: crdplay emulates Kubernetes 1.34 to 1.37`
			if first, _, _ := strings.Cut(string(out), "\n"); first != want {
				t.Errorf("first line %q, want %q", first, want)
			}
		})
	}
}

// TestMaxInFlightRefused checks that negative in-flight limits stop the command before it serves, with status 2
// and kube-apiserver's message.
func TestMaxInFlightRefused(t *testing.T) {
	for _, tc := range []struct{ flag, want string }{
		{"--max-requests-inflight=-1", "crdplay-server: --max-requests-inflight can not be negative value"},
		{"--max-mutating-requests-inflight=-5", "crdplay-server: --max-mutating-requests-inflight can not be negative value"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "--addr", "127.0.0.1:0", "--site", "", tc.flag)
			cmd.Env = append(os.Environ(), envRunMain+"=1")
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("exit: %v, want status 2\n%s", err, out)
			}
			if first, _, _ := strings.Cut(string(out), "\n"); first != tc.want {
				t.Errorf("first line %q, want %q", first, tc.want)
			}
		})
	}
}
