package playground

import (
	"context"
	"errors"
	"strings"
	"sync"

	"crdplay/engine/storage"
)

// journal is the engine's storage as the session gives it: an in-memory store that remembers the keys the
// objects of an evaluation wrote, so that rollback can remove them and the next evaluation starts from the
// installed CRDs alone. The CRDs stay, with their uid and resourceVersion, so that the engine keeps its
// compiled schemas and CEL programs.
type journal struct {
	storage.Interface

	mu        sync.Mutex
	recording bool
	touched   map[string]bool
	// spoiled is set when an evaluation changed an object that existed before it (a CRD): rollback cannot
	// restore it, so the session reinstalls.
	spoiled bool
	// prefix is the engine's key prefix, learnt from the first CRD it stores (see crdKeySuffix).
	prefix string
}

// crdKeySuffix is the end of a CRD's storage key, minus the CRD's name: kube-apiserver's layout
// (<prefix>/apiextensions.k8s.io/customresourcedefinitions/<name>), which the engine keeps.
const crdKeySuffix = "/apiextensions.k8s.io/customresourcedefinitions/"

func newJournal(inner storage.Interface) *journal {
	return &journal{Interface: inner, touched: map[string]bool{}}
}

func (j *journal) note(ctx context.Context, key string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.prefix == "" {
		if i := strings.Index(key, crdKeySuffix); i >= 0 {
			j.prefix = key[:i]
		}
	}
	if !j.recording || j.touched[key] {
		return
	}
	if _, err := j.Interface.Get(ctx, key); err == nil {
		j.spoiled = true
	}
	j.touched[key] = true
}

func (j *journal) Create(ctx context.Context, key string, value []byte) (int64, error) {
	j.note(ctx, key)
	return j.Interface.Create(ctx, key, value)
}

func (j *journal) Update(ctx context.Context, key string, value []byte, rev int64) (int64, error) {
	j.note(ctx, key)
	return j.Interface.Update(ctx, key, value, rev)
}

func (j *journal) Delete(ctx context.Context, key string, rev int64) (storage.Object, error) {
	j.note(ctx, key)
	return j.Interface.Delete(ctx, key, rev)
}

// record starts remembering writes.
func (j *journal) record() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.recording = true
}

// rollback deletes what was written since record and reports whether the store is back to where it was.
func (j *journal) rollback(ctx context.Context) bool {
	j.mu.Lock()
	keys := j.touched
	j.touched, j.recording = map[string]bool{}, false
	spoiled := j.spoiled
	j.mu.Unlock()
	if spoiled {
		return false
	}
	for k := range keys {
		if _, err := j.Interface.Delete(ctx, k, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return false
		}
	}
	return true
}

// objectKey is where the engine keeps a custom resource, or "" before any CRD was stored.
func (j *journal) objectKey(group, plural, namespace, name string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.prefix == "" {
		return ""
	}
	k := j.prefix + "/" + group + "/" + plural
	if namespace != "" {
		k += "/" + namespace
	}
	return k + "/" + name
}
