package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/registry/rest"

	"crdplay/engine/internal/crds"
	"crdplay/engine/storage"
)

// TestTrackManagedFieldsLight holds trackManagedFields, which hands the field manager CRDs without the parts
// that cannot change its answer, to the answer of the field manager given the whole objects: a create, a
// client's /status write that takes a condition, the controllers' status write that changes it again (the
// client loses the field), and a spec update (nothing left out), for every CRD of the corpus and the examples.
func TestTrackManagedFieldsLight(t *testing.T) {
	full := func(fm *managedfields.FieldManager, live, obj *apiextensionsv1.CustomResourceDefinition, manager string) *apiextensionsv1.CustomResourceDefinition {
		return fm.UpdateNoErrors(live.DeepCopy(), obj.DeepCopy(), manager).(*apiextensionsv1.CustomResourceDefinition)
	}
	check := func(t *testing.T, step string, got, want *apiextensionsv1.CustomResourceDefinition) {
		t.Helper()
		g, w := got.DeepCopy(), want.DeepCopy()
		for _, c := range []*apiextensionsv1.CustomResourceDefinition{g, w} {
			for i := range c.ManagedFields {
				c.ManagedFields[i].Time = nil // the clock's second may turn between the two
			}
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: managedFields\n%+v\nwant\n%+v", step, g.ManagedFields, w.ManagedFields)
		}
		if len(w.ManagedFields) == 0 {
			t.Errorf("%s: no managedFields", step)
		}
	}
	main, status := crdFieldManagers().main, crdFieldManagers().status
	forEachCRD(t, func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
		empty := &apiextensionsv1.CustomResourceDefinition{}
		created, err := trackManagedFields(main, empty, crd.DeepCopy(), "client")
		if err != nil {
			t.Fatal(err)
		}
		check(t, "create", created, full(main, empty, crd, "client"))

		rest.FillObjectMetaSystemFields(created)
		live := created
		now := metav1.NewTime(time.Now())
		byClient := &apiextensionsv1.CustomResourceDefinition{TypeMeta: live.TypeMeta, ObjectMeta: *live.ObjectMeta.DeepCopy(), Spec: live.Spec}
		byClient.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse, Reason: "Mine", LastTransitionTime: now}}
		want := full(status, live, byClient, "client")
		got, err := trackManagedFields(status, live, byClient, "client")
		if err != nil {
			t.Fatal(err)
		}
		check(t, "client status write", got, want)
		if &got.Spec.Versions[0] != &live.Spec.Versions[0] {
			t.Errorf("the status write's spec is not the live one")
		}

		live = got
		st, _ := crds.ComputeStatus(live, []*apiextensionsv1.CustomResourceDefinition{live}, now)
		next := &apiextensionsv1.CustomResourceDefinition{TypeMeta: live.TypeMeta, ObjectMeta: *live.ObjectMeta.DeepCopy(), Spec: live.Spec, Status: st}
		want = full(status, live, next, "kube-apiserver")
		got, err = trackManagedFields(status, live, next, "kube-apiserver")
		if err != nil {
			t.Fatal(err)
		}
		check(t, "controller status write", got, want)

		live = got
		upd := live.DeepCopy()
		upd.Spec.Versions[0].Served = !upd.Spec.Versions[0].Served
		upd.Labels = map[string]string{"a": "b"}
		check(t, "update", must(trackManagedFields(main, live, upd.DeepCopy(), "other")), full(main, live, upd, "other"))
	})
}

// forEachCRD runs f in a subtest for every CRD of the corpus and the examples that decodes (some examples are
// invalid on purpose: those subtests are skipped).
func forEachCRD(t *testing.T, f func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition)) {
	files, _ := filepath.Glob("../../../testdata/corpus/*/*/crd.yaml")
	examples, _ := filepath.Glob("../../../testdata/examples/*/crd.yaml")
	files = append(files, examples...)
	if len(files) < 20 {
		t.Fatalf("%d CRDs found", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			y, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			crd, _, err := crds.Decode(y, "application/yaml", "")
			if err != nil {
				t.Skip(err)
			}
			f(t, crd)
		})
	}
}

func must(crd *apiextensionsv1.CustomResourceDefinition, err error) *apiextensionsv1.CustomResourceDefinition {
	if err != nil {
		panic(err)
	}
	return crd
}

// TestWriteCRDKeepingSpec holds the controllers' status write, which neither encodes nor decodes the spec, to
// writeCRD's: the same bytes stored, the same revision and the same decoded answer, for the two writes of the
// naming and establishing controllers, one that changes nothing (not written), and one from a stale live object
// (left to writeCRD).
func TestWriteCRDKeepingSpec(t *testing.T) {
	ctx := context.Background()
	forEachCRD(t, func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
		rest.FillObjectMetaSystemFields(crd)
		crd.CreationTimestamp = metav1.NewTime(time.Now())
		crd = must(trackManagedFields(crdFieldManagers().main, &apiextensionsv1.CustomResourceDefinition{}, crd, "client"))
		if _, err := crds.BeforeCreate(ctx, crd); err != nil {
			t.Skip(err)
		}
		data, err := encodeCRD(crd)
		if err != nil {
			t.Fatal(err)
		}
		var servers [2]*Server
		var live [2]*apiextensionsv1.CustomResourceDefinition
		for i := range servers {
			if servers[i], err = New(Config{Storage: storage.NewMemory(), Now: time.Now, MaxRequestBytes: 3 << 20}); err != nil {
				t.Fatal(err)
			}
			rev, err := servers[i].cfg.Storage.Create(ctx, crdKey(crd.Name), data)
			if err != nil {
				t.Fatal(err)
			}
			if live[i], err = decodeCRD(storage.Object{Key: crdKey(crd.Name), Value: data, Revision: rev}); err != nil {
				t.Fatal(err)
			}
		}
		checkMarshalCRD(t, "created", servers[0], live[0], false)
		servers[0].rememberStoredSpec(live[0], data)
		checkMarshalCRD(t, "created", servers[0], live[0], true)
		checkMarshalCRD(t, "a copy", servers[0], live[0].DeepCopy(), false)
		compare := func(step string, keep, next *apiextensionsv1.CustomResourceDefinition) {
			t.Helper()
			got, done, err := servers[0].writeCRDKeepingSpec(ctx, keep, live[0])
			if !done || err != nil {
				t.Fatalf("%s: done %v, %v", step, done, err)
			}
			want, err := servers[1].writeCRD(ctx, next, live[1])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: answers differ", step)
			}
			a, _ := servers[0].cfg.Storage.Get(ctx, crdKey(crd.Name))
			b, _ := servers[1].cfg.Storage.Get(ctx, crdKey(crd.Name))
			if a.Revision != b.Revision || !bytes.Equal(a.Value, b.Value) {
				t.Errorf("%s: stored revision %d, %d bytes; writeCRD's: %d, %d bytes", step, a.Revision, len(a.Value), b.Revision, len(b.Value))
			}
			live[0], live[1] = got, want
			checkMarshalCRD(t, step, servers[0], got, true)
		}
		now := metav1.NewTime(time.Now())
		for _, step := range []string{"names accepted", "established", "unchanged"} {
			st, _ := crds.ComputeStatus(live[0], []*apiextensionsv1.CustomResourceDefinition{live[0]}, now)
			if step == "unchanged" {
				st = *live[0].Status.DeepCopy()
			}
			keep := &apiextensionsv1.CustomResourceDefinition{TypeMeta: live[0].TypeMeta, ObjectMeta: *live[0].ObjectMeta.DeepCopy(), Spec: live[0].Spec, Status: st}
			next := live[1].DeepCopy()
			next.Status = *st.DeepCopy()
			compare(step, keep, next)
		}
		stale := live[0].DeepCopy()
		stale.ResourceVersion = "1"
		if _, done, _ := servers[0].writeCRDKeepingSpec(ctx, live[0], stale); done {
			t.Errorf("a stale live object was written over")
		}
	})
}

// checkMarshalCRD compares marshalCRD with json.Marshal, and whether it used a kept spec.
func checkMarshalCRD(t *testing.T, step string, s *Server, crd *apiextensionsv1.CustomResourceDefinition, kept bool) {
	t.Helper()
	want, err := json.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := s.marshalCRD(crd)
	if ok != kept || ok && !bytes.Equal(got, want) {
		t.Errorf("%s: marshalCRD used the kept spec: %v (want %v); same bytes as json.Marshal: %v", step, ok, kept, bytes.Equal(got, want))
	}
}
