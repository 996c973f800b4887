package playground

import (
	"context"
	"errors"
	"testing"

	"crdplay/engine/storage"
	"crdplay/engine/storage/storagetest"
)

// TestJournalStorage runs the storage contract suite against the journal, idle and while it records an
// evaluation's writes: the engine must not be able to tell it from the store it wraps.
func TestJournalStorage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record bool
	}{{"idle", false}, {"recording", true}} {
		t.Run(tc.name, func(t *testing.T) {
			storagetest.Run(t, func(*testing.T) storage.Interface {
				j := newJournal(storage.NewMemory())
				if tc.record {
					j.record()
				}
				return j
			})
		})
	}
}

// TestJournalRollback checks what rollback promises the session: the keys written since record are gone and
// what was there before stays, unless an evaluation changed something that existed before it (then only a
// reinstall restores the store).
func TestJournalRollback(t *testing.T) {
	const (
		crd    = "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com"
		widget = "/registry/example.com/widgets/default/a"
		other  = "/registry/example.com/widgets/default/b"
	)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, j *journal, crdRev int64)
		// back is rollback's answer: the store is as it was at record.
		back bool
	}{
		{"nothing written", func(*testing.T, *journal, int64) {}, true},
		{"objects created, updated and deleted", func(t *testing.T, j *journal, _ int64) {
			rev, err := j.Create(ctx, widget, []byte("1"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := j.Update(ctx, widget, []byte("2"), rev); err != nil {
				t.Fatal(err)
			}
			if _, err := j.Create(ctx, other, []byte("1")); err != nil {
				t.Fatal(err)
			}
			if _, err := j.Delete(ctx, other, 0); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"the CRD updated", func(t *testing.T, j *journal, crdRev int64) {
			if _, err := j.Update(ctx, crd, []byte("crd v2"), crdRev); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJournal(storage.NewMemory())
			crdRev, err := j.Create(ctx, crd, []byte("crd"))
			if err != nil {
				t.Fatal(err)
			}
			j.record()
			tc.write(t, j, crdRev)
			if got := j.rollback(ctx); got != tc.back {
				t.Fatalf("rollback = %v, want %v", got, tc.back)
			}
			if !tc.back {
				return
			}
			if o, err := j.Get(ctx, crd); err != nil || string(o.Value) != "crd" || o.Revision != crdRev {
				t.Errorf("the CRD after rollback: %+v, %v; want it as installed", o, err)
			}
			for _, k := range []string{widget, other} {
				if _, err := j.Get(ctx, k); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("%s after rollback: %v, want ErrNotFound", k, err)
				}
			}
			if got := j.objectKey("example.com", "widgets", "default", "a"); got != widget {
				t.Errorf("objectKey = %q, want %q (the prefix learnt from the CRD's key)", got, widget)
			}
		})
	}
}
