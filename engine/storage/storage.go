package storage

import (
	"context"
	"errors"
	"fmt"
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
	// opts.StartKey (exclusive start: the key after the last one returned); the values of the keys past the
	// limit are not read, only counted (Count), so that a page costs its own items and not the collection's. With opts.Revision > 0 the objects
	// are those the store held at that revision, which is also the revision returned; a revision the store no
	// longer remembers fails with a *CompactedError, one it has not reached yet with ErrFutureRevision.
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// Create writes value at key, failing with ErrExists if the key holds an object.
	Create(ctx context.Context, key string, value []byte) (revision int64, err error)
	// Update replaces the object at key if its revision is still expectedRevision; otherwise it fails with
	// ErrConflict (or ErrNotFound when the key is empty).
	Update(ctx context.Context, key string, value []byte, expectedRevision int64) (revision int64, err error)
	// Delete removes the object at key if its revision is expectedRevision (0 means any) and returns the object
	// as it was.
	Delete(ctx context.Context, key string, expectedRevision int64) (Object, error)
	// Watch streams the changes under prefix made after revision fromRevision (0 means from now). A
	// fromRevision whose later changes the store has forgotten fails with a *CompactedError. The channel is
	// closed when ctx is done or the store can no longer follow the changes; a closed channel without a
	// cancelled ctx means the watcher fell behind: the engine ends the watch stream, and the client watches
	// again from the last revision it got.
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
	// Revision, if set, lists the state at that revision rather than the current one, as an etcd range read at
	// a revision does: what a paginated list continues from, and what resourceVersionMatch=Exact asks for.
	Revision int64
}

// ListResult is one page of a List.
type ListResult struct {
	Items []Object
	// Revision is the store's revision when the list was taken.
	Revision int64
	// More reports that keys after the last item also match the prefix.
	More bool
	// Count is the number of keys under the prefix after StartKey at Revision, the items returned included,
	// as etcd counts a range read with a limit: what remainingItemCount is computed from.
	Count int64
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
	// PrevRevision is the revision of the document in Prev (0 when there is none).
	PrevRevision int64
}

// Errors returned (wrapped) by Interface implementations.
var (
	ErrNotFound    = errors.New("not found")
	ErrExists      = errors.New("already exists")
	ErrConflict    = errors.New("revision conflict")
	ErrUnavailable = errors.New("storage unavailable")
	// ErrCompacted means a watch or list asked for a revision the store no longer remembers (etcd compacted it,
	// or the memory store's bounded history forgot it); implementations return it as a *CompactedError when they
	// know how far back they remember. The engine answers it with 410 Gone, "too old resource version", as
	// kube-apiserver does, and the client lists again.
	ErrCompacted = errors.New("revision compacted")
	// ErrFutureRevision means a list asked for a revision the store has not reached yet.
	ErrFutureRevision = errors.New("revision not reached yet")
)

// CompactedError is ErrCompacted with the revisions involved: the changes after Compacted are still known, and
// the state at any revision from Compacted on can still be listed.
type CompactedError struct {
	// Revision is the revision that was asked for.
	Revision int64
	// Compacted is the newest revision whose predecessors the store has forgotten.
	Compacted int64
}

func (e *CompactedError) Error() string {
	return fmt.Sprintf("revision %d is older than the oldest remembered, %d", e.Revision, e.Compacted)
}

// Unwrap makes errors.Is(err, ErrCompacted) hold.
func (e *CompactedError) Unwrap() error { return ErrCompacted }
