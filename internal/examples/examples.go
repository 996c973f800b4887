package examples

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Mode is the playground's operation mode for an example.
type Mode string

// The operation modes. Each fixes which steps the objects belong to:
const (
	// ModeCreate: the objects are created (create steps).
	ModeCreate Mode = "create"
	// ModeUpdate: OldObject is created, then the objects replace it (update steps, PUT).
	ModeUpdate Mode = "update"
	// ModeStatus: OldObject is created, then the objects are written to /status (status steps).
	ModeStatus Mode = "status"
	// ModeScale: the objects are created, then /scale is set to ScaleReplicas (a scale step).
	ModeScale Mode = "scale"
	// ModeDelete: the objects are created, then deleted (a delete step), typically to show finalizers.
	ModeDelete Mode = "delete"
	// ModeUpgrade: crd.yaml is the old CRD, the objects are created under it, then NewCRD (an update step of
	// the CustomResourceDefinition) replaces it; the steps after it read and write the stored objects.
	ModeUpgrade Mode = "upgrade"
)

// opFor is the step op of the files in objects, per mode.
var opFor = map[Mode]string{
	ModeCreate: "create", ModeUpdate: "update", ModeStatus: "status", ModeScale: "create", ModeDelete: "create",
	ModeUpgrade: "create",
}

// Categories are the gallery's sections, in display order. An example's category must be one of them.
var Categories = []string{
	"Basics",
	"Structural schemas",
	"Pruning and unknown fields",
	"OpenAPI validation",
	"CEL validation rules",
	"Transition rules",
	"Defaulting and nullable",
	"Printer columns and field selectors",
	"Subresources",
	"Finalizers",
	"Versions",
	"CRD upgrades",
	"Real-world CRDs",
}

// Tabs are the result tabs an example may open first.
var Tabs = []string{"stored", "errors", "table", "versions", "crd"}

// Example is one gallery entry.
type Example struct {
	// Name is the case directory relative to testdata, e.g. "examples/defaulting" or
	// "corpus/argo-cd/Application"; it is unique and stable, fit for a permalink.
	Name string
	// Dir is the case directory in the file system given to Load (for oraclecase with Options.FS), or
	// an operating-system path when the examples came from All.
	Dir string

	Title       string
	Category    string
	Description string
	// SourceURL and SourceSection say where the YAML comes from: a section of the Kubernetes documentation
	// or a file of an upstream repository at a fixed commit.
	SourceURL     string
	SourceSection string
	Mode          Mode
	// Tab is the result tab to open first, one of Tabs, or "" for the playground's default.
	Tab string

	// CRD is crd.yaml as written, comments included: the old CRD in ModeUpgrade.
	CRD string
	// NewCRD is the CRD that replaces CRD in ModeUpgrade (the step file NewCRDFile); "" otherwise.
	NewCRD string
	// Objects is the objects editor's text: the object files joined as one multi-document YAML.
	Objects string
	// OldObject is the stored object before the change, for ModeUpdate and ModeStatus; "" otherwise.
	OldObject string
	// ScaleReplicas is the spec.replicas of the Scale sent in ModeScale; 0 otherwise.
	ScaleReplicas int64
}

// meta is example.yaml.
type meta struct {
	Title       string `json:"title"`
	Category    string `json:"category"`
	Description string `json:"description"`
	Source      struct {
		URL     string `json:"url"`
		Section string `json:"section"`
	} `json:"source"`
	Mode      Mode     `json:"mode"`
	OldObject string   `json:"oldObject,omitempty"`
	NewCRD    string   `json:"newCrd,omitempty"`
	Objects   []string `json:"objects"`
	Tab       string   `json:"tab,omitempty"`
}

// The trees Load reads, relative to the root of the file system: docs examples one level down, corpus CRDs
// two levels down (project/kind).
const (
	examplesDir = "testdata/examples"
	corpusDir   = "testdata/corpus"
)

// MetaFile is the name of the meta file in each example directory.
const MetaFile = "example.yaml"

// The oracle runner's step file names and ops (internal/oraclecase); a file that does not match is not a step.
var stepRe = regexp.MustCompile(`^(\d+)-([a-z]+)(?:[-.].*)?\.ya?ml$`)

var knownOps = []string{"create", "update", "status", "apply", "patch", "get", "list", "table", "delete", "scale", "request", "sleep"}

// All loads the examples from the repository this process runs in (see Root), in gallery order.
func All() ([]Example, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	exs, err := Load(os.DirFS(root))
	if err != nil {
		return nil, err
	}
	for i := range exs {
		exs[i].Dir = filepath.Join(root, filepath.FromSlash(exs[i].Dir))
	}
	return exs, nil
}

// Root finds the repository root: the nearest directory at or above the working directory that holds
// testdata/examples. Tests run in their package directory and build programs in the repository, so both
// find it.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(examplesDir))); err == nil && st.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no %s in the working directory or above it", examplesDir)
		}
		dir = parent
	}
}

// Load reads every example under testdata/examples and testdata/corpus of fsys, which is rooted at the
// repository root, checks each meta file against its case, and returns the examples sorted by category (in
// the order of Categories), then by name. The error lists every problem found, each naming its file.
func Load(fsys fs.FS) ([]Example, error) {
	var dirs []string
	for _, pattern := range []string{examplesDir + "/*/crd.yaml", corpusDir + "/*/*/crd.yaml"} {
		m, err := fs.Glob(fsys, pattern)
		if err != nil {
			return nil, err
		}
		for _, f := range m {
			dirs = append(dirs, path.Dir(f))
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no examples: no %s/*/crd.yaml or %s/*/*/crd.yaml", examplesDir, corpusDir)
	}
	var exs []Example
	var errs []error
	for _, dir := range dirs {
		ex, err := loadOne(fsys, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		exs = append(exs, ex)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.SliceStable(exs, func(i, j int) bool {
		ci, cj := slices.Index(Categories, exs[i].Category), slices.Index(Categories, exs[j].Category)
		if ci != cj {
			return ci < cj
		}
		return exs[i].Name < exs[j].Name
	})
	return exs, nil
}

// step is one step file of a case.
type step struct {
	file, op string
}

func loadOne(fsys fs.FS, dir string) (Example, error) {
	metaPath := path.Join(dir, MetaFile)
	data, err := fs.ReadFile(fsys, metaPath)
	if err != nil {
		return Example{}, fmt.Errorf("%s: every example case needs one: %w", metaPath, err)
	}
	var m meta
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return Example{}, fmt.Errorf("%s: %w", metaPath, err)
	}
	steps, err := listSteps(fsys, dir)
	if err != nil {
		return Example{}, err
	}
	crd, err := fs.ReadFile(fsys, path.Join(dir, "crd.yaml"))
	if err != nil {
		return Example{}, err
	}
	ex := Example{
		Name:          strings.TrimPrefix(dir, "testdata/"),
		Dir:           dir,
		Title:         strings.TrimSpace(m.Title),
		Category:      m.Category,
		Description:   strings.TrimSpace(m.Description),
		SourceURL:     m.Source.URL,
		SourceSection: m.Source.Section,
		Mode:          m.Mode,
		Tab:           m.Tab,
		CRD:           string(crd),
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", metaPath, fmt.Sprintf(format, args...)))
	}
	if ex.Title == "" {
		bad("title is empty")
	}
	if ex.Description == "" {
		bad("description is empty")
	}
	if !slices.Contains(Categories, ex.Category) {
		bad("category %q is not one of %q", ex.Category, Categories)
	}
	if !strings.HasPrefix(ex.SourceURL, "https://") {
		bad("source.url %q is not an https URL", ex.SourceURL)
	}
	if strings.TrimSpace(ex.SourceSection) == "" {
		bad("source.section is empty")
	}
	if ex.Tab != "" && !slices.Contains(Tabs, ex.Tab) {
		bad("tab %q is not one of %q", ex.Tab, Tabs)
	}
	wantOp, ok := opFor[ex.Mode]
	if !ok {
		bad("mode %q is not one of create, update, status, scale, delete, upgrade", ex.Mode)
	}

	// index of each step file, to check the order of the files the meta names
	at := map[string]int{}
	for i, s := range steps {
		at[s.file] = i
	}
	readObject := func(field, name, op string) (string, int) {
		i, found := at[name]
		switch {
		case !found:
			bad("%s: %q is not a step file of the case", field, name)
			return "", -1
		case op != "" && steps[i].op != op:
			bad("%s: %q is a %s step; mode %s needs a %s step", field, name, steps[i].op, ex.Mode, op)
		}
		text, err := fs.ReadFile(fsys, path.Join(dir, name))
		if err != nil {
			errs = append(errs, err)
			return "", i
		}
		var obj map[string]any
		if err := yaml.Unmarshal(text, &obj); err != nil {
			bad("%s: %s: %v", field, name, err)
		} else if _, ok := obj["x-oracle"]; ok {
			bad("%s: %s carries an x-oracle block, so the editor would not show what was sent", field, name)
		}
		return string(text), i
	}

	first := len(steps)
	var docs []string
	for _, name := range m.Objects {
		text, i := readObject("objects", name, wantOp)
		if i >= 0 && i < first {
			first = i
		}
		docs = append(docs, text)
	}
	ex.Objects = joinDocuments(docs)

	needOld := ex.Mode == ModeUpdate || ex.Mode == ModeStatus
	switch {
	case needOld && m.OldObject == "":
		bad("mode %s needs oldObject", ex.Mode)
	case !needOld && m.OldObject != "":
		bad("oldObject is only for modes update and status, not %s", ex.Mode)
	case needOld:
		if len(m.Objects) == 0 {
			bad("mode %s needs objects (the new state)", ex.Mode)
		}
		text, i := readObject("oldObject", m.OldObject, "create")
		if i >= 0 && i > first {
			bad("oldObject %q comes after the objects it is the old state of", m.OldObject)
		}
		ex.OldObject = text
	}
	switch {
	case ex.Mode == ModeUpgrade && m.NewCRD == "":
		bad("mode upgrade needs newCrd (the update step that replaces crd.yaml)")
	case ex.Mode != ModeUpgrade && m.NewCRD != "":
		bad("newCrd is only for mode upgrade, not %s", ex.Mode)
	case ex.Mode == ModeUpgrade:
		text, i := readObject("newCrd", m.NewCRD, "update")
		if i >= 0 && i < first {
			bad("newCrd %q comes before the objects stored under the old CRD", m.NewCRD)
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(text), &head); err == nil && head.Kind != "CustomResourceDefinition" {
			bad("newCrd: %s is a %q, not a CustomResourceDefinition", m.NewCRD, head.Kind)
		}
		ex.NewCRD = text
	}
	if ex.Mode == ModeScale || ex.Mode == ModeDelete {
		if len(m.Objects) == 0 {
			bad("mode %s needs objects", ex.Mode)
		}
		op := string(ex.Mode)
		found := false
		for _, s := range steps[min(first, len(steps)):] {
			if s.op != op {
				continue
			}
			if ex.Mode == ModeScale {
				r, ok, err := scaleReplicas(fsys, path.Join(dir, s.file))
				if err != nil {
					errs = append(errs, err)
				}
				if !ok {
					continue // a GET of /scale
				}
				ex.ScaleReplicas = r
			}
			found = true
			break
		}
		if !found {
			bad("mode %s needs a %s step after the objects%s", ex.Mode, op, map[bool]string{true: " that sets spec.replicas"}[ex.Mode == ModeScale])
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Example{}, err
	}
	return ex, nil
}

// listSteps returns the step files of a case in the runner's order, rejecting unknown ops as the runner does.
func listSteps(fsys fs.FS, dir string) ([]step, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var steps []step
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		m := stepRe.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if !slices.Contains(knownOps, m[2]) {
			return nil, fmt.Errorf("%s: unknown op %q", path.Join(dir, e.Name()), m[2])
		}
		steps = append(steps, step{file: e.Name(), op: m[2]})
	}
	// the runner orders by the name without extension; for NN-prefixed names that is the name order
	sort.Slice(steps, func(i, j int) bool { return stem(steps[i].file) < stem(steps[j].file) })
	return steps, nil
}

func stem(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, ".yaml"), ".yml")
}

// scaleReplicas reads spec.replicas of a scale step; ok is false for a scale step without spec (a GET).
func scaleReplicas(fsys fs.FS, file string) (replicas int64, ok bool, err error) {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return 0, false, err
	}
	var obj struct {
		Spec *struct {
			Replicas *int64 `json:"replicas"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &obj); err != nil {
		return 0, false, fmt.Errorf("%s: %w", file, err)
	}
	if obj.Spec == nil {
		return 0, false, nil
	}
	if obj.Spec.Replicas == nil {
		return 0, false, fmt.Errorf("%s: a scale step with spec needs spec.replicas", file)
	}
	return *obj.Spec.Replicas, true, nil
}

// joinDocuments joins YAML files into one multi-document text, each starting on its own line after "---"
// (a file's own leading "---" is not repeated).
func joinDocuments(docs []string) string {
	var b bytes.Buffer
	for i, d := range docs {
		d = strings.TrimPrefix(d, "---\n")
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(d)
		if !strings.HasSuffix(d, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
