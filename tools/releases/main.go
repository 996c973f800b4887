// Command releases records a real project's CRD release history, replayed against a Kubernetes API URL over
// plain HTTP (the oracle: the real apiextensions-apiserver), as the ground truth cmd/crdplay's
// TestGatewayAPIReleases holds `crdplay check` to.
//
//	go run . record --server http://127.0.0.1:18482 --out ../../testdata/releases/gateway-api
//	go run . summary --dir ../../testdata/releases/gateway-api     (the README's table, as Markdown)
//
// For each channel (standard: config/crd/standard with examples/standard; experimental:
// config/crd/experimental with examples/standard and examples/experimental) it records two kinds of
// scenario, one JSON file each (<channel>/pair-OLD-NEW.json, <channel>/history-FIRST-NEW.json):
//
//   - pair: for each consecutive pair of releases (OLD, NEW), a clean server; OLD's CRDs created; OLD's
//     examples created; NEW's CRDs applied (PUT over those OLD had, POST for the others); every stored object
//     checked in every version its CRD then serves.
//   - history: for each release NEW from the third on, every release before it applied in turn (a cluster
//     that followed the project: status.storedVersions accumulate), then the examples of the release
//     before NEW created, then NEW applied and the objects checked as in a pair.
//
// The checks of a stored object, per served version (spec.versions order): a GET; a dry-run create
// (POST ?dryRun=All of what the GET returned, metadata reduced to generateName "<name>-", namespace,
// labels and annotations: the new schema without ratcheting); a PUT of what the GET returned (a no-op
// update); with a status subresource, a PUT to /status of the PUT's answer when it was 200, else of the
// GET's. Before the CRD update the same dry-run create is made in the object's own version under the old
// CRD, so that a refusal that existed before the upgrade is known. Writes of objects (create, update,
// status) carry fieldValidation=Strict, as kubectl sends them (and crdplay check by default); the dry-run
// create carries none, CRD writes none.
//
// Anything unexpected (a CRD not Established and served within 30 s, a release's CRD refused on an empty
// server, a 5xx, an object stored but not readable) is recorded in the scenario's "unexpected", printed as
// UNEXPECTED, and makes the command exit 1 after every file is written. A release refused while a history
// is built (the storedVersions rule) is the real server's answer to a cluster that followed the releases:
// it is recorded in "history" and printed as a NOTE.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// defaultReleases are Gateway API's releases on the module proxy (go list -m -versions, without
// pre-releases) when testdata/releases/gateway-api was recorded.
const defaultReleases = "v0.6.0,v1.1.0,v1.2.1,v1.3.0,v1.4.1,v1.5.0,v1.5.1,v1.6.0,v1.6.1,v1.6.2,v1.6.3,v1.7.0"

const module = "sigs.k8s.io/gateway-api"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "record":
		os.Exit(record(os.Args[2:]))
	case "summary":
		os.Exit(summary(os.Args[2:]))
	case "bench":
		os.Exit(bench(os.Args[2:]))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: releases record --server URL --out DIR [--releases v1,v2,...] [--channels standard,experimental] [--only SUBSTRING]")
	fmt.Fprintln(os.Stderr, "       releases summary --dir DIR")
	fmt.Fprintln(os.Stderr, "       releases bench --oracle BIN --crdplay BIN [--channel C] [--old V] [--new V] [--reps N]")
	os.Exit(2)
}

func record(args []string) int {
	fs := flag.NewFlagSet("record", flag.ExitOnError)
	server := fs.String("server", "", "the Kubernetes API's URL (plain HTTP, loopback)")
	out := fs.String("out", "", "the output directory (one subdirectory per channel)")
	releases := fs.String("releases", defaultReleases, "the releases, oldest first")
	channels := fs.String("channels", "standard,experimental", "the channels")
	only := fs.String("only", "", "record only the scenarios whose file name contains this")
	verbose := fs.Bool("v", false, "print every request")
	fs.Parse(args)
	if *server == "" || *out == "" {
		usage()
	}
	if !strings.HasPrefix(*server, "http://127.0.0.1:") && !strings.HasPrefix(*server, "http://localhost:") && !strings.HasPrefix(*server, "http://[::1]:") {
		fmt.Fprintf(os.Stderr, "releases: --server %s: only loopback URLs\n", *server)
		return 2
	}
	start := time.Now()
	rels := strings.Split(*releases, ",")
	mods := map[string]*release{}
	for _, v := range rels {
		dir, err := moduleDir(module, v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "releases: %v\n", err)
			return 1
		}
		mods[v] = &release{version: v, dir: dir}
	}
	c := newClient(*server, *verbose)
	rec := &recorder{c: c, settle: time.Second}
	n := 0
	for _, ch := range strings.Split(*channels, ",") {
		var chans []*channelRelease
		for _, v := range rels {
			cr, err := loadChannel(mods[v], ch)
			if err != nil {
				fmt.Fprintf(os.Stderr, "releases: %v\n", err)
				return 1
			}
			chans = append(chans, cr)
		}
		var scens []*Scenario
		for i := 1; i < len(chans); i++ {
			scens = append(scens, &Scenario{Scenario: "pair", Channel: ch, history: chans[i-1 : i], next: chans[i]})
		}
		for i := 2; i < len(chans); i++ {
			scens = append(scens, &Scenario{Scenario: "history", Channel: ch, history: chans[:i], next: chans[i]})
		}
		for _, s := range scens {
			s.fill()
			if *only != "" && !strings.Contains(s.fileName(), *only) {
				continue
			}
			t0 := time.Now()
			fmt.Fprintf(os.Stderr, "%s/%s ...\n", ch, s.fileName())
			if err := rec.run(s); err != nil {
				fmt.Fprintf(os.Stderr, "releases: %s/%s: %v\n", ch, s.fileName(), err)
				return 1
			}
			if err := s.write(*out); err != nil {
				fmt.Fprintf(os.Stderr, "releases: %v\n", err)
				return 1
			}
			n++
			fmt.Fprintf(os.Stderr, "%s/%s: %d objects, %d checks, %.1fs\n", ch, s.fileName(), len(s.Objects), s.checkCount(), time.Since(t0).Seconds())
		}
	}
	if err := rec.clean(); err != nil {
		fmt.Fprintf(os.Stderr, "releases: final clean: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "releases: %d scenarios in %s\n", n, time.Since(start).Round(time.Second))
	if len(rec.unexpected) > 0 {
		fmt.Fprintf(os.Stderr, "releases: %d UNEXPECTED:\n", len(rec.unexpected))
		for _, u := range rec.unexpected {
			fmt.Fprintf(os.Stderr, "  %s\n", u)
		}
		return 1
	}
	return 0
}
