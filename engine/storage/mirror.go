package storage

import (
	"context"
	"strings"
	"sync"
	"time"
)

// CRDPrefix is where the engine stores CustomResourceDefinitions, as the standalone apiextensions-apiserver
// does: the prefix to mirror (NewMirror) for the engine to read CRDs as kube-apiserver reads them.
const CRDPrefix = "/registry/apiextensions.kubernetes.io/apiextensions.k8s.io/customresourcedefinitions/"

// Cache is implemented by stores that keep a copy of some of their keys, kept current by a watch (Mirror).
// kube-apiserver reads what it serves custom resources with, their CRD, from its informer's copy rather than
// from etcd; the engine does the same through Cache when its store offers one.
type Cache interface {
	// Cached returns the copy's object at key: found is false when the copy holds none. ok is false when the
	// copy cannot answer (key is not under a mirrored prefix, or the copy is not following the store at the
	// moment: not listed yet, or listing again after its watch ended); the caller then reads the store.
	Cached(key string) (o Object, found, ok bool)
}

// Mirror is a store that keeps a copy of the objects under one prefix, as kube-apiserver's informers keep
// CRDs: it lists them, then follows the store's watch from the list's revision. Its own writes under the
// prefix (through Create, Update and Delete) are in the copy as soon as they return, as the informer of the
// server that wrote them would have them a moment later; another process's writes arrive with the watch, when
// an informer would see them. Every other call goes to the store.
//
// The copy starts on the first Cached call and is kept until Close. While the watch is down (a compaction, a
// watch that fell behind, an unreachable store), Cached reports that it cannot answer and the copy is listed
// again, retrying with a growing delay.
type Mirror struct {
	Interface
	prefix string

	mu sync.Mutex
	// objects holds, by key, the newest known object, or a tombstone (deleted) with the revision of the last
	// object the key held: a watch event or list item no newer than what a key has is stale and ignored.
	objects map[string]mirrored
	synced  bool // listed, and the watch open since
	running bool // the goroutine that lists and watches is started
	ctx     context.Context
	cancel  context.CancelFunc
}

type mirrored struct {
	obj     Object
	deleted bool
}

// NewMirror returns s with a copy of the objects whose keys start with prefix.
func NewMirror(s Interface, prefix string) *Mirror {
	ctx, cancel := context.WithCancel(context.Background())
	return &Mirror{Interface: s, prefix: prefix, objects: map[string]mirrored{}, ctx: ctx, cancel: cancel}
}

var _ Cache = (*Mirror)(nil)

// Cached implements Cache.
func (m *Mirror) Cached(key string) (Object, bool, bool) {
	if !strings.HasPrefix(key, m.prefix) {
		return Object{}, false, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.synced {
		if !m.running && m.ctx.Err() == nil {
			m.running = true
			go m.run()
		}
		return Object{}, false, false
	}
	e, ok := m.objects[key]
	if !ok || e.deleted {
		return Object{}, false, true
	}
	return e.obj, true, true
}

// Close stops following the store; Cached no longer answers. It does not close the store.
func (m *Mirror) Close() {
	m.cancel()
	m.mu.Lock()
	m.synced = false
	m.mu.Unlock()
}

// Get implements Interface. What it reads under the prefix goes into the copy, unless the copy has a newer
// state: the copy never answers with an older state than a read of this process saw (the copy's list may be
// older than a read made while it was listing, and the watch brings it up to date a moment later).
func (m *Mirror) Get(ctx context.Context, key string) (Object, error) {
	o, err := m.Interface.Get(ctx, key)
	if err == nil {
		m.put(o)
	}
	return o, err
}

// List implements Interface. A whole list of the prefix goes into the copy, as Get's answer does.
func (m *Mirror) List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error) {
	res, err := m.Interface.List(ctx, prefix, opts)
	if err == nil && prefix == m.prefix && opts == (ListOptions{}) {
		m.mu.Lock()
		m.mergeLocked(res)
		m.mu.Unlock()
	}
	return res, err
}

// Create implements Interface.
func (m *Mirror) Create(ctx context.Context, key string, value []byte) (int64, error) {
	rev, err := m.Interface.Create(ctx, key, value)
	if err == nil {
		m.put(Object{Key: key, Value: value, Revision: rev})
	}
	return rev, err
}

// Update implements Interface.
func (m *Mirror) Update(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	rev, err := m.Interface.Update(ctx, key, value, expected)
	if err == nil {
		m.put(Object{Key: key, Value: value, Revision: rev})
	}
	return rev, err
}

// Delete implements Interface.
func (m *Mirror) Delete(ctx context.Context, key string, expected int64) (Object, error) {
	prev, err := m.Interface.Delete(ctx, key, expected)
	if err == nil {
		// The deletion's own revision is not returned; the revision of the object it removed is what a stale
		// event or list item for the key cannot be newer than.
		m.remove(key, prev.Revision)
	}
	return prev, err
}

// put records o unless the copy has a newer state of its key.
func (m *Mirror) put(o Object) {
	if !strings.HasPrefix(o.Key, m.prefix) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.objects[o.Key]; !ok || e.obj.Revision < o.Revision {
		m.objects[o.Key] = mirrored{obj: o}
	}
}

// remove records the deletion of key, whose last object was at revision rev, unless the copy has a newer state.
func (m *Mirror) remove(key string, rev int64) {
	if !strings.HasPrefix(key, m.prefix) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.objects[key]; !ok || e.obj.Revision <= rev {
		m.objects[key] = mirrored{obj: Object{Key: key, Revision: rev}, deleted: true}
	}
}

// mergeLocked records a whole list of the prefix. m.mu is held.
func (m *Mirror) mergeLocked(res ListResult) {
	listed := make(map[string]bool, len(res.Items))
	for _, o := range res.Items {
		listed[o.Key] = true
		if e, ok := m.objects[o.Key]; !ok || e.obj.Revision < o.Revision {
			m.objects[o.Key] = mirrored{obj: o}
		}
	}
	for k, e := range m.objects {
		// Gone by the list's revision, unless known from a later write or read.
		if !listed[k] && !e.deleted && e.obj.Revision <= res.Revision {
			m.objects[k] = mirrored{obj: Object{Key: k, Revision: e.obj.Revision}, deleted: true}
		}
	}
}

// mirrorRetry bounds the delay between attempts to list and watch again.
const (
	mirrorRetryMin = 50 * time.Millisecond
	mirrorRetryMax = 5 * time.Second
)

// run lists and watches until Close, listing again whenever the watch ends.
func (m *Mirror) run() {
	delay := mirrorRetryMin
	for m.ctx.Err() == nil {
		if m.follow() {
			delay = mirrorRetryMin // the watch was up: a new failure starts a new series of retries
			continue
		}
		select {
		case <-time.After(delay):
		case <-m.ctx.Done():
		}
		delay = min(2*delay, mirrorRetryMax)
	}
}

// follow lists the prefix, then applies the watch's events until it ends. It reports whether the watch was
// opened.
func (m *Mirror) follow() bool {
	res, err := m.Interface.List(m.ctx, m.prefix, ListOptions{})
	if err != nil {
		return false
	}
	ch, err := m.Interface.Watch(m.ctx, m.prefix, res.Revision)
	if err != nil {
		return false
	}
	m.mu.Lock()
	m.mergeLocked(res)
	m.synced = m.ctx.Err() == nil
	m.mu.Unlock()

	for ev := range ch {
		if ev.Type == EventDelete {
			m.remove(ev.Object.Key, ev.Object.Revision)
		} else {
			m.put(ev.Object)
		}
	}
	m.mu.Lock()
	m.synced = false
	m.mu.Unlock()
	return true
}
