package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"crdplay/engine/storage"
	"crdplay/engine/storage/storagetest"
)

func TestMemory(t *testing.T) {
	storagetest.Run(t, func(*testing.T) storage.Interface { return storage.NewMemory() })
}

// The bounds documented in memory.go, which these tests hold the store to.
const (
	historyEvents = 1024
	historyBytes  = 16 << 20
)

// TestMemoryCompaction: the memory store remembers a bounded history, by count and by size, and a watch or a
// list from before it must be told so (the engine answers 410 Gone and the client lists again) rather than
// silently miss changes.
func TestMemoryCompaction(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes int
		size   int // bytes of each value
		kept   int64
	}{
		// Small objects: the count bound.
		{"events", 2 * historyEvents, 8, historyEvents},
		// 1 MiB objects: each update keeps the previous MiB, so 16 of them fill the size bound.
		{"bytes", 40, 1 << 20, historyBytes / (1 << 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := storage.NewMemory()
			value := func(i int) []byte {
				v := bytes.Repeat([]byte{'x'}, tc.size)
				copy(v, fmt.Sprint(i, ";"))
				return v
			}
			first, err := s.Create(ctx, "/registry/g/r/a", value(0))
			if err != nil {
				t.Fatal(err)
			}
			rev := first
			for i := 1; i <= tc.writes; i++ {
				if rev, err = s.Update(ctx, "/registry/g/r/a", value(i), rev); err != nil {
					t.Fatal(err)
				}
			}
			_, err = s.Watch(ctx, "/registry/g/r/", first)
			var ce *storage.CompactedError
			if !errors.As(err, &ce) || ce.Revision != first || ce.Compacted != rev-tc.kept {
				t.Fatalf("Watch from revision %d after %d writes: %v, want a CompactedError at %d (%d events kept)", first, tc.writes, err, rev-tc.kept, tc.kept)
			}
			if _, err := s.List(ctx, "/registry/g/r/", storage.ListOptions{Revision: first}); !errors.Is(err, storage.ErrCompacted) {
				t.Errorf("List at revision %d after %d writes: %v, want ErrCompacted", first, tc.writes, err)
			}
			// The oldest revision it remembers can still be listed, with the value of then.
			res, err := s.List(ctx, "/registry/g/r/", storage.ListOptions{Revision: ce.Compacted})
			if err != nil || len(res.Items) != 1 || res.Items[0].Revision != ce.Compacted || !bytes.Equal(res.Items[0].Value, value(int(ce.Compacted-first))) {
				t.Errorf("List at the compaction revision %d: %d items, %v", ce.Compacted, len(res.Items), err)
			}
			// And watched from, through the whole history.
			ch, err := s.Watch(ctx, "/registry/g/r/", ce.Compacted)
			if err != nil {
				t.Fatalf("Watch from the compaction revision: %v", err)
			}
			for want := ce.Compacted + 1; want <= rev; want++ {
				if ev, ok := <-ch; !ok || ev.Object.Revision != want {
					t.Fatalf("replayed revision %d (open %v), want %d", ev.Object.Revision, ok, want)
				}
			}
		})
	}
}

// TestMemoryLongReplay: a watch may resume from far back in the history, further than a watcher's channel
// holds; the replay must neither block the store nor be cut short, and live events follow it. (A watch from the
// oldest revision remembered falls behind at the next write, as the history forgets the event it has yet to
// send.)
func TestMemoryLongReplay(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := storage.NewMemory()
	rev, err := s.Create(ctx, "/registry/g/r/a", []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2*historyEvents; i++ {
		if rev, err = s.Update(ctx, "/registry/g/r/a", []byte(fmt.Sprint(i)), rev); err != nil {
			t.Fatal(err)
		}
	}
	from := rev - historyEvents/2
	ch, err := s.Watch(ctx, "/registry/g/r/", from)
	if err != nil {
		t.Fatalf("Watch from %d (%d writes ago): %v", from, historyEvents/2, err)
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

// TestMemorySlowWatcher: a watcher that stops reading never holds up writers; once the history has forgotten
// an event it has not received, its channel closes (the client lists again) after every event before that one,
// so that no acknowledged write is skipped without the watcher being told. A watcher that keeps reading sees
// every write.
func TestMemorySlowWatcher(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := storage.NewMemory()
	slow, err := s.Watch(ctx, "/registry/g/r/", 0)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := s.Watch(ctx, "/registry/g/r/", 0)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 2 * historyEvents
	var fastRevs []int64
	fastDone := make(chan struct{})
	go func() {
		defer close(fastDone)
		for ev := range fast {
			if fastRevs = append(fastRevs, ev.Object.Revision); len(fastRevs) == writes {
				return
			}
		}
	}()
	wrote := make(chan error, 1)
	go func() {
		rev, err := s.Create(ctx, "/registry/g/r/a", []byte("0"))
		for i := 1; err == nil && i < writes; i++ {
			rev, err = s.Update(ctx, "/registry/g/r/a", []byte(fmt.Sprint(i)), rev)
		}
		wrote <- err
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("writers blocked by a watcher that does not read")
	}

	var got int64
	deadline := time.After(10 * time.Second)
	for open := true; open; {
		select {
		case ev, ok := <-slow:
			if open = ok; ok {
				if got++; ev.Object.Revision != got {
					t.Fatalf("slow watcher got revision %d after %d events: an event was skipped", ev.Object.Revision, got-1)
				}
			}
		case <-deadline:
			t.Fatalf("slow watcher still open after %d of %d events, though the history holds only %d", got, writes, historyEvents)
		}
	}
	if got >= writes-historyEvents+1 {
		t.Errorf("slow watcher got %d events, more than were sent before the history forgot the next", got)
	}

	select {
	case <-fastDone:
	case <-time.After(10 * time.Second):
		t.Fatalf("fast watcher got %d of %d events", len(fastRevs), writes)
	}
	for i, rev := range fastRevs {
		if rev != int64(i+1) {
			t.Fatalf("fast watcher's event %d is at revision %d", i, rev)
		}
	}
}

// TestMemoryHistoryHeap: what the store keeps of the past is bounded by bytes: 300 patches of a 1 MiB object
// (near the largest etcd takes) keep 16 old copies (the history's 16 MiB), not 300.
func TestMemoryHistoryHeap(t *testing.T) {
	const size, patches = 1 << 20, 300
	// The current object, the 16 MiB of history and room for the collector's accounting.
	const limit = size + historyBytes + 8<<20
	ctx := context.Background()
	before := liveHeap()
	s := storage.NewMemory()
	value := bytes.Repeat([]byte{'x'}, size)
	rev, err := s.Create(ctx, "/registry/g/r/big", value)
	if err != nil {
		t.Fatal(err)
	}
	for i := range patches {
		copy(value, fmt.Sprintf("label-%03d", i)) // the store copies what it is given
		if rev, err = s.Update(ctx, "/registry/g/r/big", value, rev); err != nil {
			t.Fatal(err)
		}
	}
	grown := int64(liveHeap()) - int64(before)
	runtime.KeepAlive(s)
	t.Logf("%d patches of a %d MiB object: live heap grew by %.1f MiB", patches, size>>20, float64(grown)/(1<<20))
	if grown > limit {
		t.Errorf("live heap grew by %.1f MiB, want at most %.1f MiB", float64(grown)/(1<<20), float64(limit)/(1<<20))
	}
}

// TestMemoryWatchCost: an idle watch costs a goroutine and a few small buffers, not a private copy of the
// history: thousands of watches must cost less than the objects they watch.
func TestMemoryWatchCost(t *testing.T) {
	const watches = 500
	const perWatch = 16 << 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := storage.NewMemory()
	if _, err := s.Create(ctx, "/registry/g/r/a", []byte("0")); err != nil {
		t.Fatal(err)
	}
	before := liveHeap()
	for range watches {
		if _, err := s.Watch(ctx, "/registry/g/r/", 0); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // the watchers' goroutines start and wait
	cost := (int64(liveHeap()) - int64(before)) / watches
	t.Logf("%d idle watches: %d bytes each", watches, cost)
	if cost > perWatch {
		t.Errorf("an idle watch costs %d bytes, want at most %d", cost, perWatch)
	}
	runtime.KeepAlive(s)
}

// liveHeap is the memory in use after a collection: the live heap and the goroutines' stacks.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// BenchmarkMemoryUpdate measures a write once the history is full, where forgetting the oldest events happens.
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

// doneAfter is a context that reports being past its deadline from the (n+1)th look at it on: a deadline that
// passes while its reader works, at a point the test chooses rather than at a time.
type doneAfter struct {
	context.Context
	n     int
	looks int
}

func (c *doneAfter) Err() error {
	if c.looks++; c.looks > c.n {
		return context.DeadlineExceeded
	}
	return nil
}

// TestMemoryContextDone: a read whose caller has given up (its deadline passed, its client went away) fails
// with the context's error: Get and List before taking the lock, List also while it scans the keys, so that
// a collection of many thousands is not scanned for nobody.
func TestMemoryContextDone(t *testing.T) {
	s := storage.NewMemory()
	ctx := context.Background()
	const n = 5000
	for i := 0; i < n; i++ {
		if _, err := s.Create(ctx, fmt.Sprintf("/registry/k%05d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		looks    int // how many looks at the context find it alive
		maxLooks int // how many looks at most before the read gives up
	}{
		{"done before", 0, 1},
		{"done during the scan", 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &doneAfter{Context: ctx, n: tc.looks}
			if _, err := s.List(c, "/registry/", storage.ListOptions{}); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("List: %v, want the context's error", err)
			}
			if c.looks > tc.maxLooks {
				t.Errorf("List looked at the context %d times, want at most %d: it went on after", c.looks, tc.maxLooks)
			}
			if tc.looks == 0 {
				if _, err := s.Get(&doneAfter{Context: ctx}, "/registry/k00001"); !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Get: %v, want the context's error", err)
				}
			}
		})
	}
}
