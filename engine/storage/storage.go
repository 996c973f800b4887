package storage

import (
	"context"
	"errors"
)

// Interface is where the engine keeps every object, as kube-apiserver keeps them in etcd: JSON documents of the
// storage version under keys such as /registry/<group>/<plural>/<namespace>/<name>, each stamped with the
// revision of the write that produced it. A resourceVersion is that revision in decimal.
//
// Implementations must be safe for concurrent use. Revisions are global to the store and strictly increasing,
// so that a watch can resume from any revision a client has seen.
type Interface interface {
	// Get returns the object at key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) (Object, error)
	// List returns the objects whose keys start with prefix, in key order, and the store's current revision.
	// With opts.Limit > 0 at most Limit items are returned and More reports whether others follow
	// opts.StartKey (exclusive start: the key after the last one returned).
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// Create writes value at key, failing with ErrExists if the key holds an object.
	Create(ctx context.Context, key string, value []byte) (revision int64, err error)
	// Update replaces the object at key if its revision is still expectedRevision; otherwise it fails with
	// ErrConflict (or ErrNotFound when the key is empty).
	Update(ctx context.Context, key string, value []byte, expectedRevision int64) (revision int64, err error)
	// Delete removes the object at key if its revision is expectedRevision (0 means any) and returns the object
	// as it was.
	Delete(ctx context.Context, key string, expectedRevision int64) (Object, error)
	// Watch streams the changes under prefix made after revision fromRevision (0 means from now). The channel
	// is closed when ctx is done or the store can no longer follow the changes; a closed channel without a
	// cancelled ctx means the watcher must list again.
	Watch(ctx context.Context, prefix string, fromRevision int64) (<-chan Event, error)
}

// Object is one stored document.
type Object struct {
	Key      string
	Value    []byte
	Revision int64
}

// ListOptions select a page of a List.
type ListOptions struct {
	// Limit caps the number of items returned; 0 means no limit.
	Limit int64
	// StartKey, if set, makes the list start at the first key strictly greater than it.
	StartKey string
}

// ListResult is one page of a List.
type ListResult struct {
	Items []Object
	// Revision is the store's revision when the list was taken.
	Revision int64
	// More reports that keys after the last item also match the prefix.
	More bool
}

// EventType says what happened to a key.
type EventType int

const (
	// EventPut is a create or an update; Prev is empty for a create.
	EventPut EventType = iota
	// EventDelete is a deletion; Object.Value is empty and Prev holds the deleted document.
	EventDelete
)

// Event is one change seen by a Watch.
type Event struct {
	Type   EventType
	Object Object
	Prev   []byte
}

// Errors returned (wrapped) by Interface implementations.
var (
	ErrNotFound    = errors.New("not found")
	ErrExists      = errors.New("already exists")
	ErrConflict    = errors.New("revision conflict")
	ErrUnavailable = errors.New("storage unavailable")
	// ErrCompacted means a watch or list asked for a revision the store no longer remembers.
	ErrCompacted = errors.New("revision compacted")
)
