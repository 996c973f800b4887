package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// bench times one upgrade of a release bundle both ways, for make bench's report: `crdplay check` of the old
// release's CRDs, the new release's CRDs and the old release's examples (as cmd/crdplay's
// TestGatewayAPIReleases runs it), as a process started cold each time; and the same steps on the real API
// server (the recorder's pair scenario: the old CRDs created and Established, the examples created, each
// stored object sent again as new, the new CRDs applied and Established, every stored object read, sent
// again as new, updated and its status updated in every served version). The server starts each repetition
// with no CRD (the deletion is not timed), so each repetition meets the server as a fresh install does. The
// recording's one-second pause after CRD updates is left out: a user's steps have none.
func bench(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	oracleBin := fs.String("oracle", "", "the oracle `binary` (../shared/oracle/bin/oracle), started on a free loopback port")
	server := fs.String("server", "", "instead of -oracle, the `URL` of a running real API server (plain HTTP, loopback)")
	crdplay := fs.String("crdplay", "", "the crdplay `binary` (go build ./cmd/crdplay)")
	channel := fs.String("channel", "experimental", "the channel")
	oldV := fs.String("old", "v1.6.3", "the release upgraded from")
	newV := fs.String("new", "v1.7.0", "the release upgraded to")
	reps := fs.Int("reps", 3, "repetitions of each side")
	fs.Parse(args)
	if (*oracleBin == "") == (*server == "") || *crdplay == "" || *reps < 1 {
		usage()
	}
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "releases bench: %v\n", err)
		return 1
	}
	var chans []*channelRelease
	for _, v := range []string{*oldV, *newV} {
		dir, err := moduleDir(module, v)
		if err != nil {
			return fail(err)
		}
		cr, err := loadChannel(&release{version: v, dir: dir}, *channel)
		if err != nil {
			return fail(err)
		}
		chans = append(chans, cr)
	}
	old, next := chans[0], chans[1]

	url := *server
	if *oracleBin != "" {
		stop, u, err := startOracle(*oracleBin)
		if err != nil {
			return fail(err)
		}
		defer stop()
		url = u
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") && !strings.HasPrefix(url, "http://localhost:") && !strings.HasPrefix(url, "http://[::1]:") {
		return fail(fmt.Errorf("%s: only loopback URLs", url))
	}

	// crdplay check, as the test runs it (the examples as files of the old release).
	cargs := []string{"check", "--old", filepath.Join(old.rel.dir, "config", "crd", *channel),
		"--new", filepath.Join(next.rel.dir, "config", "crd", *channel)}
	for _, f := range old.examples {
		cargs = append(cargs, filepath.Join(old.rel.dir, filepath.FromSlash(f)))
	}
	cargs = append(cargs, "-o", "json")
	var ours, theirs []time.Duration
	exit := -1
	for i := 0; i < *reps; i++ {
		cmd := exec.Command(*crdplay, cargs...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		t0 := time.Now()
		err := cmd.Run()
		d := time.Since(t0)
		exit = cmd.ProcessState.ExitCode()
		if exit != 0 && exit != 1 { // 1 is a verdict (something refused); anything else is a failure
			return fail(fmt.Errorf("crdplay %s: exit %d: %v", strings.Join(cargs, " "), exit, err))
		}
		ours = append(ours, d)
	}

	rec := &recorder{c: newClient(url, false)}
	var s *Scenario
	for i := 0; i < *reps; i++ {
		if err := rec.clean(); err != nil {
			return fail(err)
		}
		s = &Scenario{Scenario: "pair", Channel: *channel, history: []*channelRelease{old}, next: next}
		s.fill()
		t0 := time.Now()
		if err := rec.run(s); err != nil {
			return fail(err)
		}
		theirs = append(theirs, time.Since(t0))
	}
	if err := rec.clean(); err != nil {
		return fail(err)
	}
	if len(rec.unexpected) > 0 {
		return fail(fmt.Errorf("the real server answered unexpectedly: %s", strings.Join(rec.unexpected, "; ")))
	}

	stored := 0
	for _, o := range s.Objects {
		if o.Create.ok() {
			stored++
		}
	}
	mo, mt := median(ours), median(theirs)
	fmt.Printf("| work | crdplay check (a process, cold) | the real server (oracle), same steps | ratio |\n|---|---|---|---|\n")
	fmt.Printf("| Gateway API %s %s → %s: %d → %d CRDs, %d example files (%d documents, %d objects stored, %d checks after the update); crdplay's exit %d | %s (%s) | %s (%s) | %.2fx |\n",
		*channel, *oldV, *newV, len(old.crds), len(next.crds), len(old.examples), len(old.docs), stored, s.checkCount(), exit,
		secs(mo), span(ours), secs(mt), span(theirs), mo.Seconds()/mt.Seconds())
	fmt.Printf("\nMedians of %d repetitions (min-max in brackets). The real server's time counts its waits until each CRD is Established and served (as `kubectl wait` would), not the recording's pause after updates.\n", *reps)
	return 0
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func span(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("%.2f-%.2f", s[0].Seconds(), s[len(s)-1].Seconds())
}

// startOracle starts `oracle serve` on a free loopback port and returns a function that stops it (by its
// process) once it says it is ready.
func startOracle(bin string) (stop func(), url string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "serve", "--port", fmt.Sprint(port))
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	stop = func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		pw.Close()
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		said := false
		for sc.Scan() {
			if !said && strings.Contains(sc.Text(), "apiextensions-apiserver ready") {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			stop()
			return nil, "", fmt.Errorf("%s exited before it was ready", bin)
		}
	case <-time.After(2 * time.Minute):
		stop()
		return nil, "", fmt.Errorf("%s not ready after 2 minutes", bin)
	}
	return stop, fmt.Sprintf("http://127.0.0.1:%d", port), nil
}
