package examples_test

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"crdplay/engine"
	"crdplay/internal/examples"
	"crdplay/internal/oraclecase"
)

// TestAll loads the gallery from the repository: every case directory under testdata/examples and
// testdata/corpus has a valid example.yaml that agrees with its steps (Load checks that), every category has
// examples, and nothing in either tree is left out of the gallery and its replay (a directory without
// crd.yaml, a file that is no step, an expected file no step writes).
func TestAll(t *testing.T) {
	exs, err := examples.All()
	if err != nil {
		t.Fatal(err)
	}
	root, err := examples.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, tree := range []string{"testdata/examples/*", "testdata/corpus/*/*"} {
		// Besides the case files: the gallery's meta file, and a corpus CRD's provenance note.
		orphans, err := oraclecase.OrphansFS(os.DirFS(root), tree, examples.MetaFile, "SOURCE")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range orphans {
			t.Error(o)
		}
	}
	perCategory := map[string]int{}
	names := map[string]bool{}
	for _, ex := range exs {
		perCategory[ex.Category]++
		if names[ex.Name] {
			t.Errorf("%s: two examples with this name", ex.Name)
		}
		names[ex.Name] = true
		if ex.Mode != examples.ModeCreate && ex.Objects == "" {
			t.Errorf("%s: mode %s with no objects", ex.Name, ex.Mode)
		}
		if strings.HasPrefix(ex.Name, "corpus/") {
			if _, err := os.Stat(path.Join(ex.Dir, "SOURCE")); err != nil {
				t.Errorf("%s: a corpus CRD keeps its provenance note: %v", ex.Name, err)
			}
		}
		if _, err := os.Stat(path.Join(ex.Dir, "expected", "00-crd.json")); err != nil {
			t.Errorf("%s: not recorded by the oracle (no expected/00-crd.json): record it with the oracle's case command", ex.Name)
		}
	}
	for _, c := range examples.Categories {
		if perCategory[c] == 0 {
			t.Errorf("category %q has no examples", c)
		}
	}
	var counts []string
	for _, c := range examples.Categories {
		counts = append(counts, fmt.Sprintf("%s %d", c, perCategory[c]))
	}
	t.Logf("%d examples: %s", len(exs), strings.Join(counts, ", "))
}

// TestLoadRejects feeds Load broken meta files: each must be refused with a message naming the file and
// the problem.
func TestLoadRejects(t *testing.T) {
	const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: crontabs.stable.example.com\n"
	const obj = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: x\n"
	good := "title: T\ncategory: Basics\ndescription: D\nsource:\n  url: https://kubernetes.io/docs/x\n  section: S\nmode: create\nobjects: [01-create.yaml]\n"
	for _, tc := range []struct {
		name  string
		meta  string
		files map[string]string // extra step files besides 01-create.yaml
		want  string
	}{
		{"unknown field", good + "colour: blue\n", nil, `unknown field "colour"`},
		{"no title", strings.Replace(good, "title: T", "title: ''", 1), nil, "title is empty"},
		{"unknown category", strings.Replace(good, "Basics", "Misc", 1), nil, `category "Misc" is not one of`},
		{"http source", strings.Replace(good, "https://", "http://", 1), nil, "is not an https URL"},
		{"unknown mode", strings.Replace(good, "mode: create", "mode: patch", 1), nil, `mode "patch" is not one of`},
		{"unknown tab", good + "tab: graph\n", nil, `tab "graph" is not one of`},
		{"missing object file", strings.Replace(good, "01-create.yaml", "02-create.yaml", 1), nil, `"02-create.yaml" is not a step file`},
		{"object of the wrong op", strings.Replace(good, "mode: create", "mode: update\noldObject: 01-create.yaml", 1) + "", nil, `"01-create.yaml" is a create step; mode update needs a update step`},
		{"update without oldObject", strings.Replace(strings.Replace(good, "mode: create", "mode: update", 1), "01-create.yaml", "02-update.yaml", 1),
			map[string]string{"02-update.yaml": obj}, "mode update needs oldObject"},
		{"oldObject after the objects", strings.Replace(strings.Replace(good, "mode: create", "mode: update\noldObject: 03-create.yaml", 1), "01-create.yaml", "02-update.yaml", 1),
			map[string]string{"02-update.yaml": obj, "03-create.yaml": obj}, "comes after the objects"},
		{"oldObject in create mode", good + "oldObject: 01-create.yaml\n", nil, "oldObject is only for modes update and status"},
		{"x-oracle in an object", good, map[string]string{"01-create.yaml": obj + "x-oracle:\n  query: dryRun=All\n"}, "carries an x-oracle block"},
		{"scale without a scale step", strings.Replace(good, "mode: create", "mode: scale", 1), nil, "mode scale needs a scale step"},
		{"scale step that only reads", strings.Replace(good, "mode: create", "mode: scale", 1), map[string]string{"02-scale.yaml": obj}, "that sets spec.replicas"},
		{"delete without a delete step", strings.Replace(good, "mode: create", "mode: delete", 1), nil, "mode delete needs a delete step"},
		{"unknown op", good, map[string]string{"02-frobnicate.yaml": obj}, `unknown op "frobnicate"`},
		{"upgrade without newCrd", strings.Replace(good, "mode: create", "mode: upgrade", 1), nil, "mode upgrade needs newCrd"},
		{"newCrd in create mode", good + "newCrd: 02-update-crd.yaml\n", map[string]string{"02-update-crd.yaml": crd}, "newCrd is only for mode upgrade, not create"},
		{"newCrd not a CRD", strings.Replace(good, "mode: create", "mode: upgrade\nnewCrd: 02-update.yaml", 1),
			map[string]string{"02-update.yaml": obj}, `newCrd: 02-update.yaml is a "CronTab", not a CustomResourceDefinition`},
		{"newCrd of the wrong op", strings.Replace(good, "mode: create", "mode: upgrade\nnewCrd: 02-create-crd.yaml", 1),
			map[string]string{"02-create-crd.yaml": crd}, `"02-create-crd.yaml" is a create step; mode upgrade needs a update step`},
		{"newCrd before the objects", strings.Replace(good, "mode: create", "mode: upgrade\nnewCrd: 00-update-crd.yaml", 1),
			map[string]string{"00-update-crd.yaml": crd}, "comes before the objects stored under the old CRD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := "testdata/examples/broken"
			fsys := fstest.MapFS{
				dir + "/crd.yaml":       {Data: []byte(crd)},
				dir + "/example.yaml":   {Data: []byte(tc.meta)},
				dir + "/01-create.yaml": {Data: []byte(obj)},
			}
			for name, data := range tc.files {
				fsys[dir+"/"+name] = &fstest.MapFile{Data: []byte(data)}
			}
			_, err := examples.Load(fsys)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v; want an error containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the example's directory", err)
			}
		})
	}
	t.Run("no meta file", func(t *testing.T) {
		_, err := examples.Load(fstest.MapFS{"testdata/corpus/p/k/crd.yaml": {Data: []byte(crd)}})
		if err == nil || !strings.Contains(err.Error(), "testdata/corpus/p/k/example.yaml") {
			t.Fatalf("Load = %v; want the missing example.yaml named", err)
		}
	})
}

// TestLoadModes checks what Load makes of each mode on a small tree: the objects text, the old object and
// the scale replicas come from the files the meta names.
func TestLoadModes(t *testing.T) {
	const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
	obj := func(name string) string {
		return "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: " + name + "\n"
	}
	head := "title: T\ncategory: %s\ndescription: D\nsource:\n  url: https://example.com/\n  section: S\n"
	fsys := fstest.MapFS{
		"testdata/examples/a/crd.yaml":     {Data: []byte(crd)},
		"testdata/examples/a/example.yaml": {Data: []byte(fmt.Sprintf(head, "Versions") + "mode: create\nobjects: [01-create.yaml, 02-create.yaml]\n")},
		// a leading document marker is not doubled when files are joined
		"testdata/examples/a/01-create.yaml": {Data: []byte("---\n" + obj("one"))},
		"testdata/examples/a/02-create.yaml": {Data: []byte(obj("two"))},
		"testdata/examples/a/03-list.yaml":   {Data: []byte(obj(""))},

		"testdata/examples/b/crd.yaml":       {Data: []byte(crd)},
		"testdata/examples/b/example.yaml":   {Data: []byte(fmt.Sprintf(head, "Basics") + "mode: update\noldObject: 01-create.yaml\nobjects: [02-update.yaml]\ntab: errors\n")},
		"testdata/examples/b/01-create.yaml": {Data: []byte(obj("old"))},
		"testdata/examples/b/02-update.yaml": {Data: []byte(obj("new"))},

		"testdata/corpus/p/k/crd.yaml":       {Data: []byte(crd)},
		"testdata/corpus/p/k/example.yaml":   {Data: []byte(fmt.Sprintf(head, "Basics") + "mode: scale\nobjects: [01-create.yaml]\n")},
		"testdata/corpus/p/k/01-create.yaml": {Data: []byte(obj("s"))},
		"testdata/corpus/p/k/02-scale.yaml":  {Data: []byte(obj("s"))}, // GET /scale: not the replicas
		"testdata/corpus/p/k/03-scale.yaml":  {Data: []byte(obj("s") + "spec:\n  replicas: 5\n")},
	}
	exs, err := examples.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ex := range exs {
		got = append(got, fmt.Sprintf("%s %s %s tab=%q old=%q replicas=%d\n%s", ex.Name, ex.Category, ex.Mode, ex.Tab, ex.OldObject, ex.ScaleReplicas, ex.Objects))
	}
	want := []string{
		// Basics comes before Versions; within a category, by name
		"corpus/p/k Basics scale tab=\"\" old=\"\" replicas=5\n" + obj("s"),
		"examples/b Basics update tab=\"errors\" old=" + fmt.Sprintf("%q", obj("old")) + " replicas=0\n" + obj("new"),
		"examples/a Versions create tab=\"\" old=\"\" replicas=0\n" + obj("one") + "---\n" + obj("two"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("Load:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if exs[1].Dir != "testdata/examples/b" {
		t.Errorf("Dir = %q, want the directory in the file system", exs[1].Dir)
	}
}

// TestReplay runs every example through the engine with the oracle's recorded responses: the gallery must
// show what a real API server answers. Run one with go test ./internal/examples -run TestReplay/examples/defaulting.
func TestReplay(t *testing.T) {
	root, err := examples.Root()
	if err != nil {
		t.Fatal(err)
	}
	exs, err := examples.Load(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	// The engine applies CRD changes synchronously: nothing to wait for.
	opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: time.Second, NoSleep: true, FS: os.DirFS(root)}
	for _, ex := range exs {
		t.Run(ex.Name, func(t *testing.T) {
			// A fresh engine per example, as in the playground. No webhook caller: the examples never
			// reach a conversion webhook, and the oracle's network is not the playground's.
			h, err := engine.NewHandler(engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := oraclecase.New(oraclecase.HandlerClient(h), "http://engine", opts).RunCase(ex.Dir)
			if err != nil {
				t.Fatalf("after %d step(s): %v", res.Steps, err)
			}
			if len(res.Diffs) > 0 {
				t.Errorf("%d of the responses differ from the real server's:\n%s", len(res.Diffs), capped(res.Diffs, 6000))
			}
		})
	}
}

// capped joins diffs up to about limit bytes and names the files of the rest.
func capped(diffs []string, limit int) string {
	var b strings.Builder
	for i, d := range diffs {
		if b.Len() > 0 && b.Len()+len(d) > limit {
			var rest []string
			for _, d := range diffs[i:] {
				rest = append(rest, strings.SplitN(d, ":", 2)[0])
			}
			fmt.Fprintf(&b, "... and %d more: %s\n", len(rest), strings.Join(rest, ", "))
			break
		}
		b.WriteString(strings.TrimSuffix(d, "\n") + "\n")
	}
	return b.String()
}
