package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// summary prints the recorded scenarios as a Markdown table (testdata/releases/README.md's), then every
// refusal the real server gave, by kind.
func summary(args []string) int {
	fs := flag.NewFlagSet("summary", flag.ExitOnError)
	dir := fs.String("dir", "", "the recorded directory (one subdirectory per channel)")
	fs.Parse(args)
	if *dir == "" {
		usage()
	}
	files, _ := filepath.Glob(filepath.Join(*dir, "*", "*.json"))
	if len(files) == 0 {
		fmt.Fprintf(os.Stderr, "releases: no scenarios in %s\n", *dir)
		return 1
	}
	// standard before experimental, pairs before histories, then by release.
	rank := func(f string) string {
		ch := filepath.Base(filepath.Dir(f))
		k := "1"
		if ch == "standard" {
			k = "0"
		}
		b := filepath.Base(f)
		if strings.HasPrefix(b, "pair") {
			k += "0"
		} else {
			k += "1"
		}
		return k + semverKey(strings.TrimSuffix(b[strings.LastIndex(b, "-v")+1:], ".json"))
	}
	sort.Slice(files, func(i, j int) bool { return rank(files[i]) < rank(files[j]) })

	var (
		nObj, nChk, nScen                                                     int
		crdRef, histRef, createRef, dupRef, checkRef, dryNew, dryOld, unexpct []string
	)
	fmt.Println("| scenario | CRDs sent | CRD refused | refused while building the old cluster | objects (created) | create refused: 409 / other | checks | get/update/status refused | dry run refused (old dry run accepted) | exit code |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		var s Scenario
		if err := json.Unmarshal(data, &s); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			return 1
		}
		nScen++
		name := s.Channel + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
		refused, hist := 0, 0
		for _, c := range s.CRDs {
			if !c.ok() {
				refused++
				crdRef = append(crdRef, fmt.Sprintf("%s: %s %s: %d %s", name, c.Op, c.Name, c.Status, c.Message))
			}
		}
		for _, h := range s.History {
			for _, c := range h.CRDs {
				if !c.ok() {
					hist++
					histRef = append(histRef, fmt.Sprintf("%s: %s %s %s: %d %s", name, h.Release, c.Op, c.Name, c.Status, c.Message))
				}
			}
		}
		created, dup, other, checks, bad, dry, dryBoth := 0, 0, 0, 0, 0, 0, 0
		for _, o := range s.Objects {
			id := fmt.Sprintf("%s %s/%s (%s)", o.Kind, o.Namespace, o.Name, o.File)
			switch {
			case o.Create.ok():
				created++
			case o.Create.Status == 409:
				dup++
				dupRef = append(dupRef, fmt.Sprintf("%s: %s: %s", name, id, o.Create.Message))
			default:
				other++
				createRef = append(createRef, fmt.Sprintf("%s: %s: %d %s", name, id, o.Create.Status, o.Create.Message))
			}
			if o.OldDryRun != nil && !o.OldDryRun.ok() {
				dryOld = append(dryOld, fmt.Sprintf("%s: %s: %d %s", name, id, o.OldDryRun.Status, o.OldDryRun.Message))
			}
			for _, c := range o.Checks {
				checks++
				if c.ok() {
					continue
				}
				msg := fmt.Sprintf("%s: %s: %s %s: %d %s", name, id, c.Op, c.Version, c.Status, c.Message)
				switch {
				case c.Op != "dryrun":
					bad++
					checkRef = append(checkRef, msg)
				case o.OldDryRun == nil || o.OldDryRun.ok():
					dry++
					dryNew = append(dryNew, msg)
				default:
					dryBoth++
				}
			}
		}
		for _, u := range s.Unexpected {
			unexpct = append(unexpct, name+": "+u)
		}
		exit := 0
		if refused+bad+dry > 0 {
			exit = 1
		}
		nObj += len(s.Objects)
		nChk += checks
		fmt.Printf("| %s | %d | %d | %d | %d (%d) | %d / %d | %d | %d | %d (%d) | %d |\n", name, len(s.CRDs), refused, hist,
			len(s.Objects), created, dup, other, checks, bad, dry+dryBoth, dry, exit)
	}
	fmt.Printf("\n%d scenarios, %d objects, %d checks.\n", nScen, nObj, nChk)
	section := func(title string, list []string) {
		fmt.Printf("\n%s: %d\n", title, len(list))
		for _, l := range list {
			fmt.Printf("  %s\n", l)
		}
	}
	section("CRD updates and creates refused", crdRef)
	section("CRDs refused while building the old cluster (histories)", histRef)
	section("object creates refused (not 409)", createRef)
	section("object creates refused with 409 (a name taken by an earlier example)", dupRef)
	section("get, update and status checks refused", checkRef)
	section("dry-run creates refused that the old CRD's dry run accepted", dryNew)
	section("dry-run creates refused under the old CRD", dryOld)
	section("unexpected", unexpct)
	return 0
}

// semverKey orders vX.Y.Z as text.
func semverKey(v string) string {
	var a, b, c int
	fmt.Sscanf(v, "v%d.%d.%d", &a, &b, &c)
	return fmt.Sprintf("%04d.%04d.%04d", a, b, c)
}
