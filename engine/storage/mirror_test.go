package storage

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// cachedEventually waits until m answers for key from its copy with the want value ("" for no object).
func cachedEventually(t *testing.T, m *Mirror, key, want string) Object {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		o, found, ok := m.Cached(key)
		if ok && found == (want != "") && string(o.Value) == want {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("Cached(%q) = %q, found %v, ok %v; want %q", key, o.Value, found, ok, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// cachedNow checks what m answers for key from its copy at once.
func cachedNow(t *testing.T, m *Mirror, key, want string, wantRev int64) {
	t.Helper()
	o, found, ok := m.Cached(key)
	if !ok || found != (want != "") || string(o.Value) != want || (found && o.Revision != wantRev) {
		t.Errorf("Cached(%q) = %q@%d, found %v, ok %v; want %q@%d", key, o.Value, o.Revision, found, ok, want, wantRev)
	}
}

func TestMirror(t *testing.T) {
	ctx := context.Background()
	const prefix = "/registry/g/crds/"
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, inner *Memory, m *Mirror)
	}{
		{"listed before the first answer", func(t *testing.T, inner *Memory, m *Mirror) {
			rev, _ := inner.Create(ctx, prefix+"a", []byte("a1"))
			if _, _, ok := m.Cached(prefix + "a"); ok {
				t.Fatal("the copy answers before it listed")
			}
			cachedEventually(t, m, prefix+"a", "a1")
			cachedNow(t, m, prefix+"a", "a1", rev)
			cachedNow(t, m, prefix+"none", "", 0)
		}},
		{"own writes at once", func(t *testing.T, inner *Memory, m *Mirror) {
			cachedEventually(t, m, prefix+"a", "")
			rev, err := m.Create(ctx, prefix+"a", []byte("a1"))
			if err != nil {
				t.Fatal(err)
			}
			cachedNow(t, m, prefix+"a", "a1", rev)
			if rev, err = m.Update(ctx, prefix+"a", []byte("a2"), rev); err != nil {
				t.Fatal(err)
			}
			cachedNow(t, m, prefix+"a", "a2", rev)
			if _, err := m.Delete(ctx, prefix+"a", rev); err != nil {
				t.Fatal(err)
			}
			cachedNow(t, m, prefix+"a", "", 0)
			// The watch's events for those writes come later and change nothing; a new object does.
			rev, _ = m.Create(ctx, prefix+"a", []byte("a3"))
			time.Sleep(20 * time.Millisecond)
			cachedNow(t, m, prefix+"a", "a3", rev)
		}},
		{"failed writes leave the copy", func(t *testing.T, inner *Memory, m *Mirror) {
			rev, _ := m.Create(ctx, prefix+"a", []byte("a1"))
			cachedEventually(t, m, prefix+"a", "a1")
			if _, err := m.Create(ctx, prefix+"a", []byte("other")); err == nil {
				t.Fatal("a create over an object succeeded")
			}
			if _, err := m.Update(ctx, prefix+"a", []byte("other"), rev+100); err == nil {
				t.Fatal("an update at a wrong revision succeeded")
			}
			if _, err := m.Delete(ctx, prefix+"a", rev+100); err == nil {
				t.Fatal("a delete at a wrong revision succeeded")
			}
			cachedNow(t, m, prefix+"a", "a1", rev)
		}},
		{"another writer's changes with the watch", func(t *testing.T, inner *Memory, m *Mirror) {
			cachedEventually(t, m, prefix+"a", "")
			rev, _ := inner.Create(ctx, prefix+"a", []byte("a1"))
			o := cachedEventually(t, m, prefix+"a", "a1")
			if o.Revision != rev {
				t.Errorf("revision %d, want %d", o.Revision, rev)
			}
			inner.Update(ctx, prefix+"a", []byte("a2"), rev)
			cachedEventually(t, m, prefix+"a", "a2")
			inner.Delete(ctx, prefix+"a", 0)
			cachedEventually(t, m, prefix+"a", "")
		}},
		{"other prefixes are not mirrored", func(t *testing.T, inner *Memory, m *Mirror) {
			cachedEventually(t, m, prefix+"a", "")
			m.Create(ctx, "/registry/g/other/a", []byte("x"))
			if _, _, ok := m.Cached("/registry/g/other/a"); ok {
				t.Error("the copy answers for a key outside its prefix")
			}
			if o, err := m.Get(ctx, "/registry/g/other/a"); err != nil || string(o.Value) != "x" {
				t.Errorf("Get = %q, %v", o.Value, err)
			}
		}},
		{"stale news is ignored", func(t *testing.T, inner *Memory, m *Mirror) {
			rev, _ := m.Create(ctx, prefix+"a", []byte("a1"))
			cachedEventually(t, m, prefix+"a", "a1")
			m.put(Object{Key: prefix + "a", Value: []byte("old"), Revision: rev - 1})
			cachedNow(t, m, prefix+"a", "a1", rev)
			m.remove(prefix+"a", rev-1)
			cachedNow(t, m, prefix+"a", "a1", rev)
			m.remove(prefix+"a", rev)
			m.put(Object{Key: prefix + "a", Value: []byte("a1"), Revision: rev})
			cachedNow(t, m, prefix+"a", "", 0)
		}},
		{"a watch that fell behind lists again", func(t *testing.T, inner *Memory, m *Mirror) {
			cachedEventually(t, m, prefix+"a", "")
			// Writes while the copy cannot take events (its lock is held): the memory store closes a watch
			// whose unread events it forgot, and "late" comes after that.
			m.mu.Lock()
			for i := range memoryHistoryEvents + memoryWatchBuffer + 10 {
				inner.Create(ctx, fmt.Sprintf("%sk%04d", prefix, i), []byte("v"))
			}
			inner.Create(ctx, prefix+"a", []byte("late"))
			m.mu.Unlock()
			cachedEventually(t, m, prefix+"a", "late")
			cachedEventually(t, m, prefix+"k0000", "v")
		}},
		{"reads newer than the watch", func(t *testing.T, inner *Memory, _ *Mirror) {
			m := NewMirror(stalledWatch{inner}, prefix)
			defer m.Close()
			rev, _ := inner.Create(ctx, prefix+"a", []byte("a1"))
			bRev, _ := inner.Create(ctx, prefix+"b", []byte("b1"))
			cachedEventually(t, m, prefix+"a", "a1")
			rev, _ = inner.Update(ctx, prefix+"a", []byte("a2"), rev)
			inner.Delete(ctx, prefix+"b", 0)
			cachedNow(t, m, prefix+"a", "a1", 1) // the watch has not brought the update
			if o, err := m.Get(ctx, prefix+"a"); err != nil || string(o.Value) != "a2" {
				t.Fatalf("Get = %q, %v", o.Value, err)
			}
			cachedNow(t, m, prefix+"a", "a2", rev)
			cachedNow(t, m, prefix+"b", "b1", bRev)
			if _, err := m.List(ctx, prefix, ListOptions{Limit: 1}); err != nil {
				t.Fatal(err)
			}
			cachedNow(t, m, prefix+"b", "b1", bRev) // a page says nothing of the keys after it
			if _, err := m.List(ctx, prefix, ListOptions{}); err != nil {
				t.Fatal(err)
			}
			cachedNow(t, m, prefix+"b", "", 0)
		}},
		{"closed", func(t *testing.T, inner *Memory, m *Mirror) {
			cachedEventually(t, m, prefix+"a", "")
			m.Close()
			if _, _, ok := m.Cached(prefix + "a"); ok {
				t.Error("a closed copy answers")
			}
			time.Sleep(20 * time.Millisecond)
			if _, _, ok := m.Cached(prefix + "a"); ok {
				t.Error("a closed copy answers")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := NewMemory()
			m := NewMirror(inner, prefix)
			defer m.Close()
			tc.run(t, inner, m)
		})
	}
}

// stalledWatch is a store whose watches deliver nothing: a watch that lags behind the reads.
type stalledWatch struct{ *Memory }

func (stalledWatch) Watch(ctx context.Context, _ string, _ int64) (<-chan Event, error) {
	ch := make(chan Event)
	go func() {
		<-ctx.Done()
		close(ch)
	}()
	return ch, nil
}
