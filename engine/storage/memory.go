package storage

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/google/btree"
)

// The in-memory store forgets what kube-apiserver's storage forgets, so that its memory stays bounded however
// long it runs and however large its objects are. etcd under kube-apiserver is compacted every 5 minutes, and
// the watch cache in front of it keeps from 100 up to 100*1024 events (k8s.io/apiserver pkg/storage/cacher,
// watch_cache_history.go); here the past is kept by size rather than by age.
const (
	// memoryHistoryEvents is the most past events the store keeps. A watch or a list at an older revision fails
	// with a *CompactedError, which the engine answers with 410 Gone ("too old resource version"), as upstream
	// does for a compacted revision: the client lists again and watches from the list's resourceVersion.
	memoryHistoryEvents = 1024
	// memoryHistoryBytes bounds the previous contents that only the history keeps alive (the Prev of each
	// event; the rest is the current objects): a 1 MiB object, near the largest a write may carry, patched
	// 300 times keeps 16 old copies, not 300. The oldest events are forgotten first, with the same 410 Gone
	// past them as past memoryHistoryEvents. The newest event is kept whatever its size.
	memoryHistoryBytes = 16 << 20
	// memoryWatchBuffer is how many events wait in a watch's channel for its reader, upstream's default watch
	// channel size (minWatchChanSize in watch_cache_history.go). A watcher reads the shared history rather than
	// a private copy of it, so a slow one costs no memory; one so slow that the history forgets an event it has
	// not received yet has its channel closed (the engine ends the watch stream; the client watches again from
	// the last revision it got and is answered 410 Gone, then lists again), as upstream terminates a watcher
	// that cannot keep up. Writers never wait for a watcher.
	memoryWatchBuffer = 10
	// memoryScanCheck is how many keys a List looks at between checks of its context.
	memoryScanCheck = 1024
)

// Memory is the in-memory Interface used in the browser and by default in the server. What it remembers of the
// past is bounded by memoryHistoryEvents and memoryHistoryBytes, and what a watch holds by memoryWatchBuffer.
// A write is bounded as etcd under kube-apiserver bounds it (sizelimit.go): Create and Update refuse a write
// whose etcd request would be over etcd's 1.5 MiB request limit (the value, the key twice, three times for an
// update, and about 40 bytes of framing) with etcd's "etcdserver: request is too large", and one over the etcd
// client's 2 MiB send limit with the gRPC client's "trying to send message larger than max (N vs. 2097152)".
type Memory struct {
	mu   sync.Mutex
	rev  int64
	data map[string]Object
	// keys holds the keys of data in order, so that a page of a List costs the keys before its start and its
	// own items, not the whole collection, as an etcd range with a limit does.
	keys *btree.BTreeG[string]
	// history is the latest events, oldest first; their revisions are consecutive and end at rev, as every
	// write takes the next revision.
	history []Event
	// historyBytes is the sum of len(Prev) over history, the bytes that only the history keeps alive.
	historyBytes int
	watchers     map[*memWatcher]struct{}
}

// memWatcher is one watch's place in the history; its fields are guarded by Memory.mu.
type memWatcher struct {
	prefix string
	// next is the revision of the first event it has not looked at.
	next int64
	// unread is the revision of the oldest event under prefix not yet taken (0 when there is none): once the
	// history forgets it, the watcher has fallen behind.
	unread int64
	// wake holds a token when an event under prefix was published since the watcher last looked.
	wake chan struct{}
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{
		data:     map[string]Object{},
		keys:     btree.NewOrderedG[string](32),
		watchers: map[*memWatcher]struct{}{},
	}
}

var _ Interface = (*Memory)(nil)

// Get implements Interface.
func (s *Memory) Get(ctx context.Context, key string) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.data[key]
	if !ok {
		return Object{}, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return o, nil
}

// List implements Interface. It walks the keys from opts.StartKey in order and reads the values of the first
// opts.Limit of them only; the keys after those are only counted, as etcd counts the rest of a limited range.
// A list at an older revision reads the current keys too, with the keys the history's newer events touched
// taken as they were at that revision.
func (s *Memory) List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error) {
	// A request past its deadline (already answered 504) or whose client went away takes no lock and scans
	// nothing: under a flood of lists, the store serves those still waited for.
	if err := ctx.Err(); err != nil {
		return ListResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := ListResult{Revision: s.rev}
	var past map[string]*Object
	var pastKeys []string
	if opts.Revision > 0 && opts.Revision != s.rev {
		var err error
		if past, err = s.changedSince(prefix, opts.Revision); err != nil {
			return ListResult{}, err
		}
		for k, o := range past {
			if o != nil && k > opts.StartKey {
				pastKeys = append(pastKeys, k)
			}
		}
		sort.Strings(pastKeys)
		res.Revision = opts.Revision
	}
	add := func(o Object) {
		res.Count++
		if opts.Limit > 0 && int64(len(res.Items)) >= opts.Limit {
			res.More = true
			return
		}
		res.Items = append(res.Items, o)
	}
	from := prefix
	if opts.StartKey != "" && opts.StartKey+"\x00" > from {
		from = opts.StartKey + "\x00" // the first key after StartKey
	}
	n := 0
	var cancelled error
	s.keys.AscendGreaterOrEqual(from, func(k string) bool {
		if !strings.HasPrefix(k, prefix) {
			return false
		}
		if n++; n%memoryScanCheck == 0 {
			if cancelled = ctx.Err(); cancelled != nil {
				return false
			}
		}
		for len(pastKeys) > 0 && pastKeys[0] < k {
			add(*past[pastKeys[0]])
			pastKeys = pastKeys[1:]
		}
		if _, changed := past[k]; !changed {
			add(s.data[k])
		}
		return true
	})
	if cancelled != nil {
		return ListResult{}, cancelled
	}
	for _, k := range pastKeys {
		add(*past[k])
	}
	return res, nil
}

// changedSince is, for each key under prefix that an event after revision rev touched, what it held at rev
// (nil: nothing); s.mu is held.
func (s *Memory) changedSince(prefix string, rev int64) (map[string]*Object, error) {
	if rev > s.rev {
		return nil, fmt.Errorf("revision %d (the store is at %d): %w", rev, s.rev, ErrFutureRevision)
	}
	if compacted := s.compactedLocked(); rev < compacted {
		return nil, &CompactedError{Revision: rev, Compacted: compacted}
	}
	past := map[string]*Object{}
	// Newest first, so that the oldest event after rev, which says what the key held at rev, is kept.
	for i := len(s.history) - 1; i >= 0 && s.history[i].Object.Revision > rev; i-- {
		ev := s.history[i]
		if !strings.HasPrefix(ev.Object.Key, prefix) {
			continue
		}
		if ev.Prev == nil {
			past[ev.Object.Key] = nil // created after rev
		} else {
			past[ev.Object.Key] = &Object{Key: ev.Object.Key, Value: ev.Prev, Revision: ev.PrevRevision}
		}
	}
	return past, nil
}

// compactedLocked is the newest revision whose predecessors are forgotten: the history holds every event after
// it. s.mu is held.
func (s *Memory) compactedLocked() int64 {
	if len(s.history) == 0 {
		return s.rev
	}
	return s.history[0].Object.Revision - 1
}

// Create implements Interface.
func (s *Memory) Create(_ context.Context, key string, value []byte) (int64, error) {
	if err := checkWriteSize(key, value, 0, false); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.data[key]; ok {
		return 0, fmt.Errorf("%s: %w", key, ErrExists)
	}
	return s.put(key, value, nil, 0), nil
}

// Update implements Interface.
func (s *Memory) Update(_ context.Context, key string, value []byte, expected int64) (int64, error) {
	if err := checkWriteSize(key, value, expected, true); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.data[key]
	if !ok {
		return 0, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if old.Revision != expected {
		return 0, fmt.Errorf("%s: at revision %d, not %d: %w", key, old.Revision, expected, ErrConflict)
	}
	return s.put(key, value, old.Value, old.Revision), nil
}

// Delete implements Interface.
func (s *Memory) Delete(_ context.Context, key string, expected int64) (Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.data[key]
	if !ok {
		return Object{}, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	if expected != 0 && old.Revision != expected {
		return Object{}, fmt.Errorf("%s: at revision %d, not %d: %w", key, old.Revision, expected, ErrConflict)
	}
	delete(s.data, key)
	s.keys.Delete(key)
	s.rev++
	s.publish(Event{Type: EventDelete, Object: Object{Key: key, Revision: s.rev}, Prev: old.Value, PrevRevision: old.Revision})
	return old, nil
}

// put stores value and publishes the event; s.mu is held.
func (s *Memory) put(key string, value, prev []byte, prevRev int64) int64 {
	s.rev++
	v := append([]byte(nil), value...)
	o := Object{Key: key, Value: v, Revision: s.rev}
	if _, ok := s.data[key]; !ok {
		s.keys.ReplaceOrInsert(key)
	}
	s.data[key] = o
	s.publish(Event{Type: EventPut, Object: o, Prev: prev, PrevRevision: prevRev})
	return s.rev
}

// publish appends ev to the history, forgets what the bounds no longer allow, and wakes the watchers ev
// concerns; s.mu is held.
func (s *Memory) publish(ev Event) {
	s.history = append(s.history, ev)
	s.historyBytes += len(ev.Prev)
	for len(s.history) > 1 && (len(s.history) > memoryHistoryEvents || s.historyBytes > memoryHistoryBytes) {
		s.historyBytes -= len(s.history[0].Prev)
		// Cleared so that the array behind the slice does not keep the contents alive until append moves it.
		s.history[0] = Event{}
		s.history = s.history[1:]
	}
	for w := range s.watchers {
		// A watch may start from a revision the store has not reached yet (a client resuming from a list
		// taken elsewhere): the writes up to it are not "after" it.
		if ev.Object.Revision < w.next || !strings.HasPrefix(ev.Object.Key, w.prefix) {
			continue
		}
		if w.unread == 0 {
			w.unread = ev.Object.Revision
		}
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// Watch implements Interface. The events come from the shared history (see memoryWatchBuffer): a watcher that
// falls further behind than the history reaches has its channel closed.
func (s *Memory) Watch(ctx context.Context, prefix string, from int64) (<-chan Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from <= 0 {
		from = s.rev
	}
	w := &memWatcher{prefix: prefix, next: from + 1, wake: make(chan struct{}, 1)}
	if from < s.rev {
		if compacted := s.compactedLocked(); from < compacted {
			return nil, &CompactedError{Revision: from, Compacted: compacted}
		}
		for _, ev := range s.history[s.indexLocked(w.next):] {
			if strings.HasPrefix(ev.Object.Key, prefix) {
				w.unread = ev.Object.Revision
				w.wake <- struct{}{}
				break
			}
		}
	}
	s.watchers[w] = struct{}{}
	out := make(chan Event, memoryWatchBuffer)
	go s.serveWatch(ctx, w, out)
	return out, nil
}

// serveWatch copies the events w asks for from the history to out until ctx is done or w falls behind.
func (s *Memory) serveWatch(ctx context.Context, w *memWatcher, out chan<- Event) {
	defer close(out)
	defer func() {
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
	}()
	batch := make([]Event, 0, memoryWatchBuffer)
	for {
		s.mu.Lock()
		var ok bool
		batch, ok = s.takeLocked(w, batch[:0])
		s.mu.Unlock()
		if !ok {
			return
		}
		for i, ev := range batch {
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
			batch[i] = Event{} // sent: the batch must not keep its contents alive
		}
		if len(batch) == cap(batch) {
			continue // there may be more
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return
		}
	}
}

// takeLocked appends to batch, up to its capacity, the events under w.prefix from w.next on, and moves w past
// them. It reports false when the history has forgotten an event w has not taken. s.mu is held.
func (s *Memory) takeLocked(w *memWatcher, batch []Event) ([]Event, bool) {
	if w.unread == 0 {
		// Nothing under the prefix since w last looked: skip what it has not looked at.
		w.next = max(w.next, s.rev+1)
		return batch, true
	}
	if w.unread <= s.compactedLocked() {
		return batch, false
	}
	i := s.indexLocked(w.next)
	for ; i < len(s.history) && len(batch) < cap(batch); i++ {
		if ev := s.history[i]; strings.HasPrefix(ev.Object.Key, w.prefix) {
			batch = append(batch, ev)
		}
	}
	w.next = s.rev + 1
	w.unread = 0
	if i < len(s.history) {
		// The batch is full: the next event may be under the prefix.
		w.next = s.history[i].Object.Revision
		w.unread = w.next
	}
	return batch, true
}

// indexLocked is the index in the history of the event at revision rev, clamped to the history's bounds.
// s.mu is held.
func (s *Memory) indexLocked(rev int64) int {
	if len(s.history) == 0 {
		return 0
	}
	return int(min(max(rev-s.history[0].Object.Revision, 0), int64(len(s.history))))
}
