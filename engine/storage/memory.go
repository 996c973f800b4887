package storage

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// memoryHistory is how many past events the in-memory store keeps at least so that a watch can resume from an
// older revision. A watcher that falls further behind gets ErrCompacted, as from a compacted etcd.
const memoryHistory = 4096

// Memory is the in-memory Interface used in the browser and by default in the server.
type Memory struct {
	mu       sync.Mutex
	rev      int64
	data     map[string]Object
	history  []Event // the last memoryHistory to 2*memoryHistory events, oldest first
	watchers map[*memWatcher]struct{}
}

type memWatcher struct {
	prefix string
	from   int64 // only events after this revision are sent
	ch     chan Event
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{data: map[string]Object{}, watchers: map[*memWatcher]struct{}{}}
}

var _ Interface = (*Memory)(nil)

// Get implements Interface.
func (s *Memory) Get(_ context.Context, key string) (Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.data[key]
	if !ok {
		return Object{}, fmt.Errorf("%s: %w", key, ErrNotFound)
	}
	return o, nil
}

// List implements Interface.
func (s *Memory) List(_ context.Context, prefix string, opts ListOptions) (ListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, rev := s.data, s.rev
	if opts.Revision > 0 && opts.Revision != s.rev {
		var err error
		if data, err = s.stateAt(prefix, opts.Revision); err != nil {
			return ListResult{}, err
		}
		rev = opts.Revision
	}
	var keys []string
	for k := range data {
		if strings.HasPrefix(k, prefix) && (opts.StartKey == "" || k > opts.StartKey) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	res := ListResult{Revision: rev}
	if opts.Limit > 0 && int64(len(keys)) > opts.Limit {
		keys = keys[:opts.Limit]
		res.More = true
	}
	res.Items = make([]Object, len(keys))
	for i, k := range keys {
		res.Items[i] = data[k]
	}
	return res, nil
}

// stateAt rebuilds the objects under prefix as they were at revision rev by undoing the newer events of the
// history; s.mu is held.
func (s *Memory) stateAt(prefix string, rev int64) (map[string]Object, error) {
	if rev > s.rev {
		return nil, fmt.Errorf("revision %d (the store is at %d): %w", rev, s.rev, ErrFutureRevision)
	}
	if compacted := s.compactedLocked(); rev < compacted {
		return nil, &CompactedError{Revision: rev, Compacted: compacted}
	}
	state := map[string]Object{}
	for k, o := range s.data {
		if strings.HasPrefix(k, prefix) {
			state[k] = o
		}
	}
	for i := len(s.history) - 1; i >= 0 && s.history[i].Object.Revision > rev; i-- {
		ev := s.history[i]
		if !strings.HasPrefix(ev.Object.Key, prefix) {
			continue
		}
		if ev.Prev == nil {
			delete(state, ev.Object.Key) // undo a create
		} else {
			state[ev.Object.Key] = Object{Key: ev.Object.Key, Value: ev.Prev, Revision: ev.PrevRevision}
		}
	}
	return state, nil
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.data[key]; ok {
		return 0, fmt.Errorf("%s: %w", key, ErrExists)
	}
	return s.put(key, value, nil, 0), nil
}

// Update implements Interface.
func (s *Memory) Update(_ context.Context, key string, value []byte, expected int64) (int64, error) {
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
	s.rev++
	s.publish(Event{Type: EventDelete, Object: Object{Key: key, Revision: s.rev}, Prev: old.Value, PrevRevision: old.Revision})
	return old, nil
}

// put stores value and publishes the event; s.mu is held.
func (s *Memory) put(key string, value, prev []byte, prevRev int64) int64 {
	s.rev++
	v := append([]byte(nil), value...)
	o := Object{Key: key, Value: v, Revision: s.rev}
	s.data[key] = o
	s.publish(Event{Type: EventPut, Object: o, Prev: prev, PrevRevision: prevRev})
	return s.rev
}

func (s *Memory) publish(ev Event) {
	s.history = append(s.history, ev)
	// Trimming only when the history has doubled makes its cost one copy per memoryHistory writes rather than
	// one per write.
	if len(s.history) > 2*memoryHistory {
		s.history = append(s.history[:0:0], s.history[len(s.history)-memoryHistory:]...)
	}
	for w := range s.watchers {
		// A watch may start from a revision the store has not reached yet (a client resuming from a list
		// taken elsewhere): the writes up to it are not "after" it.
		if !strings.HasPrefix(ev.Object.Key, w.prefix) || ev.Object.Revision <= w.from {
			continue
		}
		select {
		case w.ch <- ev:
		default:
			// A watcher that cannot keep up is closed rather than allowed to block writers or lose events
			// silently; its client re-lists, as with a real API server.
			close(w.ch)
			delete(s.watchers, w)
		}
	}
}

// Watch implements Interface.
func (s *Memory) Watch(ctx context.Context, prefix string, from int64) (<-chan Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var replay []Event
	if from > 0 && from < s.rev {
		if compacted := s.compactedLocked(); from < compacted {
			return nil, &CompactedError{Revision: from, Compacted: compacted}
		}
		for _, ev := range s.history {
			if ev.Object.Revision > from && strings.HasPrefix(ev.Object.Key, prefix) {
				replay = append(replay, ev)
			}
		}
	}
	// The replay must fit (it is sent with s.mu held), and leave a resumed watcher as much room for live
	// events as a new one has.
	w := &memWatcher{prefix: prefix, from: from, ch: make(chan Event, len(replay)+memoryHistory)}
	for _, ev := range replay {
		w.ch <- ev
	}
	s.watchers[w] = struct{}{}
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.watchers[w]; ok {
			delete(s.watchers, w)
			close(w.ch)
		}
	}()
	return w.ch, nil
}
