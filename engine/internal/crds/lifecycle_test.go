package crds

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The behaviours below were observed on the oracle server (bin/oracle serve) with the same requests;
// they are not in the recorded cases.

const widgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"x":{"type":"integer","default":1.0}}}}}]}}`

// edit returns the stored CRD as a JSON request body after f changed its decoded form.
func (s *apiServer) edit(name string, f func(m map[string]any)) []byte {
	raw, err := json.Marshal(s.crds[s.find(name)])
	if err != nil {
		s.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		s.t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// updateStatus is a client's PUT to /status.
func (s *apiServer) updateStatus(name string, body []byte) response {
	old := s.crds[s.find(name)]
	crd, warnings, err := Decode(body, "application/json", "")
	if err != nil {
		return errorResponse(err, warnings)
	}
	crd = s.status.UpdateNoErrors(old, crd, "client").(*apiextensionsv1.CustomResourceDefinition)
	if err := BeforeStatusUpdate(context.Background(), crd, old); err != nil {
		return errorResponse(err, warnings)
	}
	if crd.DeletionTimestamp != nil && len(crd.Finalizers) == 0 {
		s.crds = append(s.crds[:s.find(name)], s.crds[s.find(name)+1:]...)
	} else {
		s.store(crd)
	}
	s.runControllers()
	return response{status: 200, body: crd}
}

func obj(t *testing.T, r response) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, ok := r.body.(*apiextensionsv1.CustomResourceDefinition)
	if !ok {
		t.Fatalf("response %d %+v is not a CRD", r.status, r.body)
	}
	return crd
}

func meta(m map[string]any) map[string]any { return m["metadata"].(map[string]any) }

func TestLifecycle(t *testing.T) {
	s := newAPIServer(t)
	const name = "widgets.example.com"
	if r := s.create([]byte(widgetCRD), "application/json"); r.status != 201 {
		t.Fatalf("create: %d %+v", r.status, r.body)
	} else if got := string(obj(t, r).Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["x"].Default.Raw); got != "1" {
		t.Errorf("stored default %s, want the canonical 1", got)
	}

	steps := []struct {
		name   string
		status bool // PUT to /status instead of the main resource
		edit   func(m map[string]any)
		check  func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition)
	}{
		{
			name: "metadata-only change keeps the generation",
			edit: func(m map[string]any) { meta(m)["labels"] = map[string]any{"a": "b"} },
			check: func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
				if crd.Generation != 1 || crd.Labels["a"] != "b" {
					t.Errorf("generation %d labels %v", crd.Generation, crd.Labels)
				}
			},
		},
		{
			name: "respelling a default is a spec change",
			edit: func(m map[string]any) {
				v := m["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
				v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["x"].(map[string]any)["default"] = json.Number("1.0")
			},
			check: func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
				if crd.Generation != 2 {
					t.Errorf("generation %d, want 2", crd.Generation)
				}
				if got := string(crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["x"].Default.Raw); got != "1" {
					t.Errorf("default stored as %s", got)
				}
			},
		},
		{
			name: "status in a main update is ignored",
			edit: func(m map[string]any) {
				st := m["status"].(map[string]any)
				st["storedVersions"] = []any{"v9"}
				st["acceptedNames"].(map[string]any)["plural"] = "zzz"
			},
			check: func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
				if crd.Generation != 2 || crd.Status.AcceptedNames.Plural != "widgets" || !equalStrings(crd.Status.StoredVersions, []string{"v1"}) {
					t.Errorf("generation %d status %+v", crd.Generation, crd.Status)
				}
			},
		},
		{
			name: "a new storage version is added to storedVersions",
			edit: func(m map[string]any) {
				spec := m["spec"].(map[string]any)
				versions := spec["versions"].([]any)
				v1 := versions[0].(map[string]any)
				raw, _ := json.Marshal(v1)
				var v2 map[string]any
				_ = json.Unmarshal(raw, &v2)
				v2["name"] = "v2"
				v1["storage"] = false
				spec["versions"] = append(versions, v2)
			},
			check: func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
				if crd.Generation != 3 || !equalStrings(crd.Status.StoredVersions, []string{"v1", "v2"}) {
					t.Errorf("generation %d storedVersions %q", crd.Generation, crd.Status.StoredVersions)
				}
			},
		},
		{
			name:   "/status drops spec changes but keeps label and annotation changes",
			status: true,
			edit: func(m map[string]any) {
				meta(m)["labels"] = map[string]any{"c": "d"}
				meta(m)["annotations"] = map[string]any{"n": "m"}
				m["spec"].(map[string]any)["names"].(map[string]any)["shortNames"] = []any{"ww"}
			},
			check: func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
				if crd.Generation != 3 || crd.Labels["c"] != "d" || crd.Annotations["n"] != "m" || len(crd.Spec.Names.ShortNames) != 0 {
					t.Errorf("generation %d labels %v annotations %v shortNames %v", crd.Generation, crd.Labels, crd.Annotations, crd.Spec.Names.ShortNames)
				}
			},
		},
		{
			name:   "/status may drop the storage version from storedVersions",
			status: true,
			edit:   func(m map[string]any) { m["status"].(map[string]any)["storedVersions"] = []any{"v1"} },
			check: func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
				if !equalStrings(crd.Status.StoredVersions, []string{"v1"}) {
					t.Errorf("storedVersions %q", crd.Status.StoredVersions)
				}
			},
		},
		{
			name: "a finalizer of our own",
			edit: func(m map[string]any) { meta(m)["finalizers"] = []any{"example.com/keep"} },
			check: func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
				if !equalStrings(crd.Finalizers, []string{"example.com/keep"}) || !equalStrings(crd.Status.StoredVersions, []string{"v1", "v2"}) {
					t.Errorf("finalizers %q storedVersions %q", crd.Finalizers, crd.Status.StoredVersions)
				}
			},
		},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			s.t = t
			body := s.edit(name, step.edit)
			var r response
			if step.status {
				r = s.updateStatus(name, body)
			} else {
				r = s.update(name, body, "application/json")
			}
			if r.status != 200 {
				t.Fatalf("%d %+v", r.status, r.body)
			}
			step.check(t, obj(t, r))
		})
	}

	t.Run("delete", func(t *testing.T) {
		s.t = t
		r := s.delete(name)
		crd := obj(t, r)
		if crd.DeletionTimestamp == nil || !equalStrings(crd.Finalizers, []string{"example.com/keep", "customresourcecleanup.apiextensions.k8s.io"}) {
			t.Errorf("DELETE answered deletionTimestamp %v finalizers %q", crd.DeletionTimestamp, crd.Finalizers)
		}
		if c := findCondition(crd, apiextensionsv1.Terminating); c.Reason != "InstanceDeletionPending" || c.Status != "True" {
			t.Errorf("Terminating = %+v", c)
		}
		if !IsTerminating(crd) || PrepareForDelete(crd.DeepCopy(), s.now()) {
			t.Error("a deleted CRD is not terminating, or is marked twice")
		}

		// The finalizer controller ran in runControllers: our finalizer keeps the CRD.
		got := obj(t, s.get(name))
		if !equalStrings(got.Finalizers, []string{"example.com/keep"}) {
			t.Errorf("finalizers after cleanup %q", got.Finalizers)
		}
		if c := findCondition(got, apiextensionsv1.Terminating); c.Reason != "InstanceDeletionCompleted" || c.Status != "False" || c.Message != "removed all instances" {
			t.Errorf("Terminating after cleanup = %+v", c)
		}
		if pending, _ := BeginFinalize(got.DeepCopy(), s.now()); pending {
			t.Error("the finalizer controller acts again after removing its finalizer")
		}
	})

	t.Run("no new finalizers while deleting", func(t *testing.T) {
		s.t = t
		body := s.edit(name, func(m map[string]any) {
			meta(m)["finalizers"] = append(meta(m)["finalizers"].([]any), "example.com/other")
		})
		r := s.update(name, body, "application/json")
		st, _ := r.body.(metav1.Status)
		const want = `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/other"}`
		// Two identical causes (ObjectMeta update rules run in rest.BeforeUpdate and in CRD validation)
		// but one message: the aggregate drops duplicates.
		if r.status != 422 || st.Message != want || st.Details == nil || len(st.Details.Causes) != 2 {
			t.Errorf("%d %+v", r.status, r.body)
		}
	})

	t.Run("removing the last finalizer deletes the CRD", func(t *testing.T) {
		s.t = t
		body := s.edit(name, func(m map[string]any) { meta(m)["finalizers"] = []any{} })
		if r := s.updateStatus(name, body); r.status != 200 {
			t.Fatalf("%d %+v", r.status, r.body)
		}
		if r := s.get(name); r.status != 404 {
			t.Errorf("GET after the last finalizer: %d", r.status)
		}
	})
}

// TestFinalize covers the finalizer controller's branches.
func TestFinalize(t *testing.T) {
	base := recordedCRD(t, "basic-crontab", "04-get-crd")
	now := newAPIServer(t).now()
	tests := []struct {
		name            string
		mutate          func(*apiextensionsv1.CustomResourceDefinition)
		deleteErr       error
		deleteInstances bool
		done            bool
		reason          string
	}{
		{name: "established", deleteInstances: true, done: true, reason: "InstanceDeletionCompleted"},
		{name: "instances could not be deleted", deleteErr: errors.New("boom"), deleteInstances: true, reason: "InstanceDeletionFailed"},
		{
			name:   "never established",
			mutate: func(c *apiextensionsv1.CustomResourceDefinition) { c.Status.Conditions = nil },
			done:   true, reason: "NeverEstablished",
		},
		{
			name: "overlapping a built-in resource",
			mutate: func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Spec.Group, c.Spec.Names.Plural = "apiregistration.k8s.io", "apiservices"
			},
			done: true, reason: "OverlappingBuiltInResource",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crd := base.DeepCopy()
			if tc.mutate != nil {
				tc.mutate(crd)
			}
			if pending, _ := BeginFinalize(crd, now); pending {
				t.Fatal("pending before DELETE")
			}
			PrepareForDelete(crd, now)
			pending, deleteInstances := BeginFinalize(crd, now)
			if !pending || deleteInstances != tc.deleteInstances {
				t.Fatalf("BeginFinalize = %v, %v", pending, deleteInstances)
			}
			if c := findCondition(crd, apiextensionsv1.Terminating); c.Reason != "InstanceDeletionInProgress" {
				t.Errorf("after BeginFinalize Terminating = %+v", c)
			}
			if done := FinishFinalize(crd, now, tc.deleteErr); done != tc.done {
				t.Errorf("FinishFinalize = %v", done)
			}
			if c := findCondition(crd, apiextensionsv1.Terminating); c.Reason != tc.reason {
				t.Errorf("Terminating = %+v", c)
			}
			if has := len(crd.Finalizers) > 0; has == tc.done {
				t.Errorf("finalizers %q", crd.Finalizers)
			}
		})
	}
}

// TestStrategyWarnings checks the create and update warnings against the oracle's Warning headers for
// the same CRD: unknown formats in schema order, list-type set warnings sorted, and on update only what
// is new.
func TestStrategyWarnings(t *testing.T) {
	const body = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"fmts.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"fmts","kind":"Fmt"},"versions":[
{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"a":{"type":"string","format":"foo"},"b":{"type":"string","format":"bar"},"c":{"type":"integer","format":"int32"},"s":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","x-kubernetes-map-type":"atomic"}},"s2":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"array","items":{"type":"string"}}}}}}},
{"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","properties":{"a":{"type":"string","format":"foo"},"z":{"type":"string","format":"zzz"}}}}}]}}`
	s := newAPIServer(t)
	r := s.create([]byte(body), "application/json")
	if r.status != 201 {
		t.Fatalf("%d %+v", r.status, r.body)
	}
	want := []string{
		`unrecognized format "foo"`,
		`unrecognized format "bar"`,
		`unrecognized format "zzz"`,
		`x-kubernetes-list-type: set for items of type "array" is not supported by server-side apply or CEL validation rules`,
		`x-kubernetes-list-type: set for items of type "object" is not supported by server-side apply or CEL validation rules`,
	}
	// The "foo" of v2 repeats; the HTTP warning recorder drops repeats.
	if !equalStrings(dedup(r.warnings), want) {
		t.Errorf("create warnings\n got: %q\nwant: %q", r.warnings, want)
	}

	update := s.edit("fmts.example.com", func(m map[string]any) {
		v := m["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
		props := v["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)
		props["q"] = map[string]any{"type": "string", "format": "qqq"}
	})
	r = s.update("fmts.example.com", update, "application/json")
	if r.status != 200 || !equalStrings(r.warnings, []string{`unrecognized format "qqq"`}) {
		t.Errorf("update: %d warnings %q", r.status, r.warnings)
	}
}
