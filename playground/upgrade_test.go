package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// caseFile reads a file of an upgrade case.
func caseFile(t testing.TB, name, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(upgradeDir, name, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// managedFieldsOf is an object's managedFields as JSON, with their times normalised as the oracle's recordings
// have them.
func managedFieldsOf(t *testing.T, body []byte) string {
	t.Helper()
	var m struct {
		Metadata struct {
			ManagedFields []map[string]interface{} `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for _, e := range m.Metadata.ManagedFields {
		if _, ok := e["time"]; ok {
			e["time"] = "<timestamp>"
		}
	}
	b, _ := json.Marshal(m.Metadata.ManagedFields)
	return string(b)
}

// TestSeedManagedFields holds seeded objects to the real server: an object the CRD refuses is seeded, then
// updated, and the update's managedFields must be those the oracle answered for the same update of the same
// object, which it had created under a looser CRD (testdata/upgrade/tightened-maximum: replicas 8 stored under
// maximum 10, the maximum lowered to 5, then spec.note set). Without the create's managedFields in the seed,
// the update would own only the field it changed.
func TestSeedManagedFields(t *testing.T) {
	const name = "tightened-maximum"
	newCRD := caseFile(t, name, "03-update-crd.yaml")
	want := readUpgradeRecording(t, name, "08-update-a-note")
	tests := []struct {
		name string
		in   Input
	}{
		{"update mode", Input{Mode: ModeUpdate, CRDs: &newCRD, OldObjects: caseFile(t, name, "01-create-a.yaml"), Objects: caseFile(t, name, "08-update-a-note.yaml")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSession(Options{UserAgent: oracleAgent})
			res, err := s.Evaluate(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.OldObjects) != 1 || !res.OldObjects[0].Seeded {
				t.Fatalf("the old object was not seeded: %+v", res.OldObjects)
			}
			if len(res.Objects) != 1 || res.Objects[0].Status != want.Status {
				t.Fatalf("update: %+v; the real server answered %d", res.Objects, want.Status)
			}
			if got, w := managedFieldsOf(t, res.Objects[0].Response), managedFieldsOf(t, want.Body); got != w {
				t.Errorf("managedFields after the update:\n%s\nthe real server's:\n%s", got, w)
			}
		})
	}
}

func readUpgradeRecording(t *testing.T, name, stem string) recording {
	t.Helper()
	var r recording
	if err := json.Unmarshal([]byte(caseFile(t, name, filepath.Join("expected", stem+".json"))), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSeedManagedFieldsAsCreated: a seeded object carries the managedFields its create would have given it,
// those the oracle's create answered (testdata/upgrade/tightened-maximum/01-create-a).
func TestSeedManagedFieldsAsCreated(t *testing.T) {
	const name = "tightened-maximum"
	newCRD := caseFile(t, name, "03-update-crd.yaml") // maximum 5: refuses replicas 8, so the object is seeded
	oldCRD := caseFile(t, name, "crd.yaml")
	want := readUpgradeRecording(t, name, "01-create-a")
	s := NewSession(Options{UserAgent: oracleAgent})
	// The upgrade from the new CRD to itself stores the object by seeding it, then reads it.
	res, err := s.Evaluate(context.Background(), Input{Mode: ModeUpgrade, OldCRDs: &newCRD, CRDs: &oldCRD, Objects: caseFile(t, name, "01-create-a.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Upgrade.Objects) != 1 || !res.Upgrade.Objects[0].Seeded {
		t.Fatalf("not seeded: %+v", res.Upgrade.Objects)
	}
	get := res.Upgrade.Objects[0].Checks[0]
	if get.Op != "get" || get.Status != 200 {
		t.Fatalf("first check: %+v", get)
	}
	if got, w := managedFieldsOf(t, get.Object), managedFieldsOf(t, want.Body); got != w {
		t.Errorf("seeded object's managedFields:\n%s\nthe real server's create:\n%s", got, w)
	}
}

// TestUpgradeFindingsEvidence runs ModeUpgrade on the recorded cases and checks which stored objects each
// finding is shown biting, and how: the evidence follows from the checks the oracle cases hold ModeUpgrade to.
func TestUpgradeFindingsEvidence(t *testing.T) {
	type want struct {
		rule     string
		affected []string
		evidence string // a part of the evidence
	}
	tests := []struct {
		name  string
		wants []want
	}{
		{"tightened-maximum", []want{{"maximum", []string{"default/a"}, "1 of 2 objects would be refused if created now (spec.replicas: Invalid value: 8"}}},
		{"new-required-field", []want{{"required", []string{"default/a"}, "spec.size: Required value"}}},
		{"enum-value-removed", []want{{"enum", []string{"default/a"}, `Unsupported value: "blue"`}}},
		{"new-cel-rule", []want{{"xValidations", []string{"default/a"}, "min must not exceed max"}}},
		{"new-transition-rule", []want{{"xValidations", []string{}, noneAffected}}},
		{"field-removed-then-read", []want{{"existingFieldRemoval", []string{"default/a"}, "no longer reads spec.legacy back as stored"}}},
		{"preserve-unknown-fields-off", []want{{"preserveUnknownFields", []string{"default/a"}, "no longer reads spec.config back as stored"}}},
		{"scope-change-refused", []want{{"scope", []string{}, `the API refuses the new CRD: spec.scope: Invalid value: "Cluster": field is immutable`}}},
		{"version-removed-while-stored", []want{{"storedVersionRemoval", []string{}, `the API refuses the new CRD: status.storedVersions[0]`}}},
		{"storage-version-change", nil},
		{"type-changed", []want{{"type", []string{"default/a", "default/b"}, "2 of 2 objects would be refused if created now (spec.size: Invalid value: \"string\": spec.size in body must be of type integer"}}},
		{"default-added", []want{{"default", []string{"default/a"}, "the stored object now reads spec.mode with the new default"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := readUpgradeCase(t, filepath.Join(upgradeDir, tt.name))
			res, err := NewSession(Options{}).Evaluate(context.Background(), Input{Mode: ModeUpgrade, OldCRDs: &c.old, CRDs: &c.new, Objects: c.objects})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Upgrade.Findings
			if len(got) != len(tt.wants) {
				t.Errorf("%d findings, want %d: %+v", len(got), len(tt.wants), got)
			}
			for i, w := range tt.wants {
				if i >= len(got) {
					break
				}
				f := got[i]
				if f.Rule != w.rule || !slices.Equal(f.Affected, w.affected) || !strings.Contains(f.Evidence, w.evidence) {
					t.Errorf("finding %d: %s %q %q; want %s %q containing %q", i, f.Rule, f.Affected, f.Evidence, w.rule, w.affected, w.evidence)
				}
				if f.Line == 0 {
					t.Errorf("finding %d is not placed: %+v", i, f)
				}
				found := false
				for _, d := range res.Diagnostics {
					found = found || (d.Type == f.Rule && d.Source == f.Source && d.Line == f.Line && strings.Contains(d.Message, f.Evidence))
				}
				if !found {
					t.Errorf("finding %d is not among the diagnostics", i)
				}
			}
		})
	}
}

// TestUpgradeBadInput: texts that are not one CRD each, broken YAML, objects no CRD serves, an old CRD the
// API refuses: each is a diagnostic in the editor it is about, never an error or a panic.
func TestUpgradeBadInput(t *testing.T) {
	c := readUpgradeCase(t, filepath.Join(upgradeDir, "tightened-maximum"))
	renamed := strings.Replace(c.new, "name: widgets.example.com", "name: gadgets.example.com", 1)
	tests := []struct {
		name              string
		old, new, objects string
		source            Source
		typ, message      string // a diagnostic of this source and type whose message contains message
		crdStatus         int
		wantObjects       int
	}{
		{"old text empty", "", c.new, c.objects, SourceOldCRDs, "NoCRD", "needs the old CRD", 201, 0},
		{"new text empty", c.old, "", c.objects, SourceCRDs, "NoCRD", "needs the new CRD", 0, 2},
		{"new text broken YAML", c.old, "apiVersion: apiextensions.k8s.io/v1\nkind: [\n", c.objects, SourceCRDs, "YAMLSyntax", "", 400, 2},
		{"two new CRDs of one name", c.old, c.new + "---\n" + c.new, c.objects, SourceCRDs, "DuplicateCRD", "given twice among the new CRDs", 200, 2},
		{"two old CRDs of one name", c.old + "---\n" + c.old, c.new, c.objects, SourceOldCRDs, "AlreadyExists", "already exists", 200, 2},
		// An old CRD the new text does not have is left as it is: its objects are stored (and not checked).
		{"object of the old text's second CRD", c.old + "---\n" + strings.NewReplacer("widgets", "gadgets", "Widget", "Gadget", "widget", "gadget").Replace(c.old), c.new,
			c.objects + "---\napiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n", SourceObjects, "FieldValueInvalid", "less than or equal to 5", 200, 3},
		// Paired by name: a new CRD of another name is added (this one is invalid), the old one is left.
		{"names differ", c.old, renamed, c.objects, SourceCRDs, "FieldValueInvalid", "must be spec.names.plural", 422, 2},
		{"new text not a CRD", c.old, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n", c.objects, SourceCRDs, "NoCRD", "holds no CustomResourceDefinition", 0, 2},
		{"object of a kind no CRD serves", c.old, c.new, "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n", SourceObjects, "NoKindMatch", "no matches for kind", 200, 0},
		{"object not YAML", c.old, c.new, "a: [\n", SourceObjects, "YAMLSyntax", "", 200, 0},
		{"old CRD refused", strings.Replace(c.old, "scope: Namespaced", "scope: Sideways", 1), c.new, c.objects, SourceOldCRDs, "FieldValueNotSupported", "Sideways", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := NewSession(Options{}).Evaluate(context.Background(), Input{Mode: ModeUpgrade, OldCRDs: &tt.old, CRDs: &tt.new, Objects: tt.objects})
			if err != nil {
				t.Fatal(err)
			}
			if res.Upgrade == nil {
				t.Fatal("no upgrade report")
			}
			if res.Upgrade.CRD.Status != tt.crdStatus {
				t.Errorf("new CRD status %d, want %d (%s)", res.Upgrade.CRD.Status, tt.crdStatus, res.Upgrade.CRD.Error)
			}
			if len(res.Upgrade.Objects) != tt.wantObjects {
				t.Errorf("%d stored objects, want %d", len(res.Upgrade.Objects), tt.wantObjects)
			}
			found := false
			for _, d := range res.Diagnostics {
				if d.Source == tt.source && (tt.typ == "" || d.Type == tt.typ) && strings.Contains(d.Message, tt.message) && d.Severity == SeverityError {
					found = true
					if d.Line < 1 {
						t.Errorf("diagnostic not placed: %+v", d)
					}
				}
			}
			if !found {
				t.Errorf("no %s error %q containing %q in %+v", tt.source, tt.typ, tt.message, res.Diagnostics)
			}
			if _, err := json.Marshal(res); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestUpgradeListItems: a List document stands for its items, which the report names by document and item.
func TestUpgradeListItems(t *testing.T) {
	c := readUpgradeCase(t, filepath.Join(upgradeDir, "tightened-maximum"))
	list := "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: example.com/v1, kind: Widget, metadata: {name: x}, spec: {replicas: 8}}\n- {apiVersion: example.com/v1, kind: Widget, metadata: {name: z}, spec: {replicas: 1}}\n"
	res, err := NewSession(Options{}).Evaluate(context.Background(), Input{Mode: ModeUpgrade, OldCRDs: &c.old, CRDs: &c.new, Objects: list})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range res.Upgrade.Objects {
		got = append(got, fmt.Sprintf("%d/%d %s/%s %d checks", o.Document, o.Item, o.Namespace, o.Name, len(o.Checks)))
	}
	want := []string{"0/1 default/x 3 checks", "0/2 default/z 3 checks"} // get, dryrun, update
	if !slices.Equal(got, want) {
		t.Errorf("objects %q, want %q", got, want)
	}
	if f := res.Upgrade.Findings; len(f) != 1 || !slices.Equal(f[0].Affected, []string{"default/x"}) {
		t.Errorf("findings %+v, want the maximum affecting default/x", f)
	}
}

// TestChangedMapValues compares values under [*] of a map: the same map read twice is unchanged whatever
// order Go iterates its keys in, and one changed value is a change.
func TestChangedMapValues(t *testing.T) {
	labels := map[string]interface{}{}
	for i := 0; i < 20; i++ {
		labels[fmt.Sprintf("k%02d", i)] = fmt.Sprintf("v%02d", i)
	}
	before := map[string]interface{}{"spec": map[string]interface{}{"labels": labels}}
	same, err := json.Marshal(before)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if changed(before, same, "spec.labels[*]") || differs(before, same, "spec.labels[*]") {
			t.Fatal("the same map read again counts as changed")
		}
	}
	labels["k07"] = "other"
	edited, err := json.Marshal(before)
	if err != nil {
		t.Fatal(err)
	}
	labels["k07"] = "v07"
	if !changed(before, edited, "spec.labels[*]") {
		t.Error("a changed map value does not count as changed")
	}
}

// bundleTexts are a release's CRDs as a cluster exported them (widgets with status.storedVersions
// [v1alpha1, v1], gadgets, and a Namespace beside them) and the next release's (widgets without v1alpha1,
// gadgets with a lowered maximum, sprockets added), from cmd/crdplay's testdata.
func bundleTexts(t *testing.T) (old, new, objects string) {
	t.Helper()
	read := func(names ...string) string {
		var parts []string
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join("../cmd/crdplay/testdata/bundle", n))
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, string(b))
		}
		return strings.Join(parts, "\n---\n")
	}
	return read("old/widgets.yaml", "old/gadgets.yaml"), read("new/widgets.yaml", "new/gadgets.yaml", "new/sprockets.yaml"), read("objects/stored.yaml", "objects/operator.yaml")
}

// TestUpgradeBundle: CRDs are paired by name; the CRD the new text adds is created, the one it lacks left
// alone; documents that are not CRDs are noted once each, not sent; an exported CRD's stored versions make
// the API refuse the new CRD that drops one, as a real cluster does (testdata/upgrade/version-removed-while-
// stored records the same refusal).
func TestUpgradeBundle(t *testing.T) {
	old, new, objects := bundleTexts(t)
	res, err := NewSession(Options{}).Evaluate(context.Background(), Input{Mode: ModeUpgrade, OldCRDs: &old, CRDs: &new, Objects: objects})
	if err != nil {
		t.Fatal(err)
	}
	up := res.Upgrade
	var got []string
	for _, c := range up.CRDs {
		got = append(got, fmt.Sprintf("%s %s %d %q", c.Name, c.Change, c.Status, c.StoredVersions))
	}
	want := []string{
		`widgets.example.com updated 422 ["v1alpha1" "v1"]`,
		`gadgets.example.com updated 200 ["v1"]`,
		`sprockets.example.com added 201 []`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("CRDs:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if up.Verdict != "refused" || !strings.HasSuffix(up.Summary, "; 1 admission configuration document not applied") {
		t.Errorf("verdict %q (%s), want refused, the old bundle's admission policy not applied", up.Verdict, up.Summary)
	}
	notChecked := 0
	for _, d := range res.Diagnostics {
		if d.Type == "NotChecked" {
			notChecked++
			// Admission configuration is a warning: the cluster would run it on these writes, the playground
			// does not. Anything else not checked changes nothing of the answers: a note.
			want := SeverityInfo
			if strings.Contains(d.Message, "ValidatingAdmissionPolicy") {
				want = SeverityWarning
			}
			if d.Severity != want || d.Line < 1 {
				t.Errorf("not-checked note %+v", d)
			}
		}
	}
	// Namespace (old), ValidatingAdmissionPolicy (old), Namespace (new), Deployment (objects).
	if notChecked != 4 {
		t.Errorf("%d not-checked notes, want 4", notChecked)
	}
	// The gadgets are checked against the new gadgets CRD; the widget, whose CRD update was refused, is not.
	checked := map[string]int{}
	for _, o := range up.Objects {
		checked[o.CRD+"/"+o.Name] = len(o.Checks)
	}
	if checked["gadgets.example.com/big"] == 0 || checked["gadgets.example.com/small"] == 0 || checked["widgets.example.com/w1"] != 0 {
		t.Errorf("checks per object: %v", checked)
	}
}

// TestUpgradeMigrate: Input.Migrate runs the storage migration the refusal asks for, through the API (every
// stored widget rewritten in v1, status.storedVersions set to [v1]), and the new CRD sent again is accepted,
// as the "Versions in CustomResourceDefinitions" page says; the stored objects are then checked.
func TestUpgradeMigrate(t *testing.T) {
	old, new, objects := bundleTexts(t)
	res, err := NewSession(Options{}).Evaluate(context.Background(), Input{Mode: ModeUpgrade, OldCRDs: &old, CRDs: &new, Objects: objects, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	up := res.Upgrade
	if len(up.Migrations) != 1 {
		t.Fatalf("migrations %+v, want one", up.Migrations)
	}
	m := up.Migrations[0]
	if m.CRD != "widgets.example.com" || m.To != "v1" || m.Rewritten != 1 || len(m.Failed) != 0 || m.Status != 200 || m.Retry.Status != 200 {
		t.Errorf("migration %+v", m)
	}
	for _, o := range up.Objects {
		if o.CRD == "widgets.example.com" && len(o.Checks) == 0 {
			t.Errorf("widget %s not checked after the migration", o.Name)
		}
	}
}

// TestUpgradeHistory: a release history applied in turn accumulates stored versions; the same CRD from git,
// alone, has only its storage version, and Input.StoredVersions names them explicitly.
func TestUpgradeHistory(t *testing.T) {
	read := func(n string) string {
		b, err := os.ReadFile(filepath.Join("../cmd/crdplay/testdata/history", n))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	r1, r2, r3, objs := read("r1.yaml"), read("r2.yaml"), read("r3.yaml"), read("widgets.yaml")
	tests := []struct {
		name    string
		in      Input
		status  int
		storedV []string
	}{
		{"history", Input{History: []string{r1}, OldCRDs: &r2, CRDs: &r3, Objects: objs}, 422, []string{"v1alpha1", "v1"}},
		{"from git", Input{OldCRDs: &r2, CRDs: &r3, Objects: objs}, 200, []string{"v1"}},
		{"named", Input{OldCRDs: &r2, CRDs: &r3, Objects: objs, StoredVersions: map[string][]string{"widgets.example.com": {"v1alpha1", "v1"}}}, 422, []string{"v1alpha1", "v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Mode = ModeUpgrade
			res, err := NewSession(Options{}).Evaluate(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Upgrade.CRD
			if c.Status != tt.status || !slices.Equal(c.StoredVersions, tt.storedV) {
				t.Errorf("new CRD %d with stored versions %q before; want %d, %q", c.Status, c.StoredVersions, tt.status, tt.storedV)
			}
		})
	}
}
