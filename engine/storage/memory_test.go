package storage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"crdplay/engine/storage"
	"crdplay/engine/storage/storagetest"
)

func TestMemory(t *testing.T) {
	storagetest.Run(t, func(*testing.T) storage.Interface { return storage.NewMemory() })
}

// TestMemoryCompaction: the memory store remembers a bounded history, and a watch from before it must be told
// so (the engine answers 410 Gone and the client lists again) rather than silently miss changes.
func TestMemoryCompaction(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := storage.NewMemory()
	first, err := s.Create(ctx, "/registry/g/r/a", []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	rev := first
	// Enough writes to push the first ones out of any history of up to twice 4096 events.
	const writes = 3 * 4096
	for i := 1; i <= writes; i++ {
		if rev, err = s.Update(ctx, "/registry/g/r/a", []byte(fmt.Sprint(i)), rev); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.Watch(ctx, "/registry/g/r/", first)
	var ce *storage.CompactedError
	if !errors.Is(err, storage.ErrCompacted) || !errors.As(err, &ce) || ce.Revision != first || ce.Compacted <= first || ce.Compacted > rev-4096 {
		t.Errorf("Watch from revision %d after %d writes: %v, want a CompactedError at most 4096 revisions back", first, writes, err)
	}
	if _, err := s.List(ctx, "/registry/g/r/", storage.ListOptions{Revision: first}); !errors.Is(err, storage.ErrCompacted) {
		t.Errorf("List at revision %d after %d writes: %v, want ErrCompacted", first, writes, err)
	}
	// The oldest revision it remembers can still be listed, with the value of then.
	if ce != nil {
		res, err := s.List(ctx, "/registry/g/r/", storage.ListOptions{Revision: ce.Compacted})
		if err != nil || len(res.Items) != 1 || res.Items[0].Revision != ce.Compacted || string(res.Items[0].Value) != fmt.Sprint(ce.Compacted-first) {
			t.Errorf("List at the compaction revision %d: %+v, %v", ce.Compacted, res, err)
		}
	}
	// The recent past is still there.
	ch, err := s.Watch(ctx, "/registry/g/r/", rev-10)
	if err != nil {
		t.Fatalf("Watch from 10 writes ago: %v", err)
	}
	for want := rev - 9; want <= rev; want++ {
		if ev := <-ch; ev.Object.Revision != want {
			t.Fatalf("replayed revision %d, want %d", ev.Object.Revision, want)
		}
	}
}

// BenchmarkMemoryUpdate measures a write once the history is full, where trimming it happens.
func BenchmarkMemoryUpdate(b *testing.B) {
	ctx := context.Background()
	s := storage.NewMemory()
	rev, err := s.Create(ctx, "/registry/g/r/a", []byte("0"))
	if err != nil {
		b.Fatal(err)
	}
	value := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a"}}`)
	for range 10000 {
		if rev, err = s.Update(ctx, "/registry/g/r/a", value, rev); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if rev, err = s.Update(ctx, "/registry/g/r/a", value, rev); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMemoryLongReplay: a watch may resume from anywhere in the history, which is longer than a watcher's
// buffer for live events; the replay must neither block the store nor be cut short.
func TestMemoryLongReplay(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := storage.NewMemory()
	rev, err := s.Create(ctx, "/registry/g/r/a", []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	// 4096 is the history the store promises; more than that may still be there.
	const writes = 4096 + 4000
	for i := 1; i <= writes; i++ {
		if rev, err = s.Update(ctx, "/registry/g/r/a", []byte(fmt.Sprint(i)), rev); err != nil {
			t.Fatal(err)
		}
	}
	from := rev - 4096
	ch, err := s.Watch(ctx, "/registry/g/r/", from)
	if err != nil {
		t.Fatalf("Watch from %d (4096 writes ago): %v", from, err)
	}
	if _, err := s.Update(ctx, "/registry/g/r/a", []byte("live"), rev); err != nil {
		t.Fatal(err)
	}
	for want := from + 1; want <= rev+1; want++ {
		ev, ok := <-ch
		if !ok || ev.Object.Revision != want {
			t.Fatalf("got revision %d (open %v), want %d", ev.Object.Revision, ok, want)
		}
	}
}
