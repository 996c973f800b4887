// Package storagetest is the contract of storage.Interface written as tests: every implementation runs the same
// suite (Run), so that the engine behaves the same over memory in a browser tab and over etcd in a server.
//
// The suite assumes nothing a second implementation could legitimately do differently: revisions are only
// compared (never expected to be consecutive or to start at 1), and a store may be shared with other users as
// long as the keys under the suite's prefix are its own. It opens no socket, so it also runs under GOOS=js.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"crdplay/engine/storage"
)

// eventTimeout bounds every wait for a watch event or a closed channel. It is generous because a loaded
// machine running etcd under the race detector can take a second or more to deliver an event; a store that
// delivers nothing fails after it either way.
const eventTimeout = 10 * time.Second

// Run runs the contract suite. newStore is called once per subtest and must return a store holding no keys
// under /registry/ (a fresh store, or a shared one seen through a private key prefix); it should register its
// own cleanup with t.Cleanup. Subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) storage.Interface) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, s storage.Interface)
	}{
		{"CreateGet", testCreateGet},
		{"CreateExists", testCreateExists},
		{"CreateCopiesValue", testCreateCopiesValue},
		{"GetNotFound", testGetNotFound},
		{"Update", testUpdate},
		{"Delete", testDelete},
		{"List", testList},
		{"ListPaging", testListPaging},
		{"ListAtRevision", testListAtRevision},
		{"PrevRevision", testPrevRevision},
		{"RevisionsIncrease", testRevisionsIncrease},
		{"WatchFromNow", testWatchFromNow},
		{"WatchFromPast", testWatchFromPast},
		{"WatchFromFuture", testWatchFromFuture},
		{"WatchPrefix", testWatchPrefix},
		{"WatchRecreate", testWatchRecreate},
		{"WatchCancel", testWatchCancel},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ConcurrentCreate", testConcurrentCreate},
		{"WatchConcurrentWriters", testWatchConcurrentWriters},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t, newStore(t))
		})
	}
}

// ---------------------------------------------------------------- single objects

func testCreateGet(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	// Not valid JSON and not valid UTF-8: a store keeps bytes, whatever they are.
	value := []byte{'{', 0, 0xff, '\n', '}'}
	rev := create(t, s, "/registry/g/r/ns/a", string(value))
	if rev <= 0 {
		t.Fatalf("Create returned revision %d, want > 0", rev)
	}
	o, err := s.Get(ctx, "/registry/g/r/ns/a")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := storage.Object{Key: "/registry/g/r/ns/a", Value: value, Revision: rev}
	if !sameObject(o, want) {
		t.Errorf("Get = %s, want %s", show(o), show(want))
	}
}

func testCreateExists(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	rev := create(t, s, "/registry/g/r/a", "first")
	if _, err := s.Create(ctx, "/registry/g/r/a", []byte("second")); !errors.Is(err, storage.ErrExists) {
		t.Errorf("second Create: got %v, want ErrExists", err)
	}
	// The failed create must not have written anything, not even a new revision of the same value.
	if o := get(t, s, "/registry/g/r/a"); string(o.Value) != "first" || o.Revision != rev {
		t.Errorf("after a failed Create: %s, want value %q at revision %d", show(o), "first", rev)
	}
}

func testCreateCopiesValue(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	buf := []byte("original")
	rev, err := s.Create(ctx, "/registry/g/r/a", buf)
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "CHANGED!")
	if o := get(t, s, "/registry/g/r/a"); string(o.Value) != "original" {
		t.Errorf("after the caller reused its buffer, Create's value reads %q", o.Value)
	}
	buf = []byte("updated")
	if _, err := s.Update(ctx, "/registry/g/r/a", buf, rev); err != nil {
		t.Fatal(err)
	}
	copy(buf, "CHANGED")
	if o := get(t, s, "/registry/g/r/a"); string(o.Value) != "updated" {
		t.Errorf("after the caller reused its buffer, Update's value reads %q", o.Value)
	}
}

func testGetNotFound(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	create(t, s, "/registry/g/r/ab", "x")
	// Neither a key that is a prefix of a stored key nor one that a stored key is a prefix of exists.
	for _, key := range []string{"/registry/g/r/a", "/registry/g/r/abc", "/registry/other"} {
		if o, err := s.Get(ctx, key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get(%s) = %s, %v; want ErrNotFound", key, show(o), err)
		}
	}
}

func testUpdate(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	const key = "/registry/g/r/a"
	rev1 := create(t, s, key, "v1")
	for _, tc := range []struct {
		name     string
		key      string
		expected int64
		wantErr  error
	}{
		{"stale revision", key, rev1 - 1, storage.ErrConflict},
		{"future revision", key, rev1 + 1000, storage.ErrConflict},
		// 0 is no wildcard for Update (it is for Delete): an update always says which version it read.
		{"zero revision", key, 0, storage.ErrConflict},
		{"missing key", "/registry/g/r/missing", rev1, storage.ErrNotFound},
		{"missing key, zero revision", "/registry/g/r/missing", 0, storage.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Update(ctx, tc.key, []byte("bad"), tc.expected); !errors.Is(err, tc.wantErr) {
				t.Errorf("Update(%s, expected %d): got %v, want %v", tc.key, tc.expected, err, tc.wantErr)
			}
		})
	}
	// The failed updates changed nothing and created nothing.
	if o := get(t, s, key); string(o.Value) != "v1" || o.Revision != rev1 {
		t.Fatalf("after failed updates: %s, want v1 at %d", show(o), rev1)
	}
	if _, err := s.Get(ctx, "/registry/g/r/missing"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a failed Update of a missing key created it: Get returned %v", err)
	}

	rev2, err := s.Update(ctx, key, []byte("v2"), rev1)
	if err != nil {
		t.Fatalf("Update with the current revision: %v", err)
	}
	if rev2 <= rev1 {
		t.Errorf("Update returned revision %d, not after %d", rev2, rev1)
	}
	if o := get(t, s, key); !sameObject(o, storage.Object{Key: key, Value: []byte("v2"), Revision: rev2}) {
		t.Errorf("after Update: %s, want v2 at %d", show(o), rev2)
	}
	// The revision the first update consumed is now stale.
	if _, err := s.Update(ctx, key, []byte("v3"), rev1); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("second Update with revision %d: got %v, want ErrConflict", rev1, err)
	}
	// Writing the same bytes again is still a write.
	rev3, err := s.Update(ctx, key, []byte("v2"), rev2)
	if err != nil || rev3 <= rev2 {
		t.Errorf("Update with unchanged value: revision %d, %v; want a revision after %d", rev3, err, rev2)
	}
}

func testDelete(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	// So that no object below is at revision 1, whose "stale" revision 0 would mean "any".
	create(t, s, "/registry/g/r/filler", "")
	for _, tc := range []struct {
		name     string
		expected func(rev int64) int64 // the revision Delete is given, from the object's
		wantErr  error
	}{
		{"current revision", func(rev int64) int64 { return rev }, nil},
		{"any revision", func(int64) int64 { return 0 }, nil},
		{"stale revision", func(rev int64) int64 { return rev - 1 }, storage.ErrConflict},
		{"future revision", func(rev int64) int64 { return rev + 1000 }, storage.ErrConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "/registry/g/r/" + tc.name
			rev := create(t, s, key, "value")
			o, err := s.Delete(ctx, key, tc.expected(rev))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Delete: got %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr != nil {
				if o := get(t, s, key); o.Revision != rev {
					t.Errorf("a failed Delete changed the object: %s", show(o))
				}
				return
			}
			// Delete returns the object as it was, so that a caller can answer with it.
			if want := (storage.Object{Key: key, Value: []byte("value"), Revision: rev}); !sameObject(o, want) {
				t.Errorf("Delete returned %s, want %s", show(o), show(want))
			}
			if _, err := s.Get(ctx, key); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Get after Delete: %v, want ErrNotFound", err)
			}
			if _, err := s.Delete(ctx, key, 0); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("second Delete: %v, want ErrNotFound", err)
			}
			// The key is free again, and its new object has a new revision.
			if rev2 := create(t, s, key, "again"); rev2 <= rev {
				t.Errorf("Create after Delete returned revision %d, not after %d", rev2, rev)
			}
		})
	}
	if _, err := s.Delete(ctx, "/registry/g/r/never", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Delete of a key never written: %v, want ErrNotFound", err)
	}
}

// ---------------------------------------------------------------- lists

func testList(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	empty, err := s.List(ctx, "/registry/g/r/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(empty.Items) != 0 || empty.More {
		t.Errorf("List of an empty prefix: %d items, More %v", len(empty.Items), empty.More)
	}

	// Written out of order, with neighbours that share all but the last byte of the prefix.
	revs := map[string]int64{}
	for _, k := range []string{"/registry/g/r/ns/c", "/registry/g/r/ns/a", "/registry/g/rr/ns/x", "/registry/g/r/ns/b",
		"/registry/g/r/ns2/a", "/registry/g/q/ns/a", "/registry/g/r/ns"} {
		revs[k] = create(t, s, k, "value of "+k)
	}
	last := create(t, s, "/registry/g/r/ns/d", "doomed")
	if _, err := s.Delete(ctx, "/registry/g/r/ns/d", 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"/registry/g/r/ns/", []string{"/registry/g/r/ns/a", "/registry/g/r/ns/b", "/registry/g/r/ns/c"}},
		{"/registry/g/r/", []string{"/registry/g/r/ns", "/registry/g/r/ns/a", "/registry/g/r/ns/b", "/registry/g/r/ns/c", "/registry/g/r/ns2/a"}},
		{"/registry/g/r/ns/a", []string{"/registry/g/r/ns/a"}},
		{"/registry/g/r/ns/z", nil},
		{"/registry/g/", []string{"/registry/g/q/ns/a", "/registry/g/r/ns", "/registry/g/r/ns/a", "/registry/g/r/ns/b", "/registry/g/r/ns/c", "/registry/g/r/ns2/a", "/registry/g/rr/ns/x"}},
	} {
		res, err := s.List(ctx, tc.prefix, storage.ListOptions{})
		if err != nil {
			t.Fatalf("List(%s): %v", tc.prefix, err)
		}
		if got := keys(res.Items); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("List(%s) keys = %v, want %v", tc.prefix, got, tc.want)
		}
		for _, o := range res.Items {
			if want := (storage.Object{Key: o.Key, Value: []byte("value of " + o.Key), Revision: revs[o.Key]}); !sameObject(o, want) {
				t.Errorf("List(%s) item %s, want %s", tc.prefix, show(o), show(want))
			}
		}
		if res.More {
			t.Errorf("List(%s) without a limit reports More", tc.prefix)
		}
		// The delete came after every write: the list's revision must cover it (a shared store may be further
		// ahead).
		if res.Revision <= last {
			t.Errorf("List(%s).Revision = %d, want one after the last write (%d)", tc.prefix, res.Revision, last)
		}
	}
}

func testListPaging(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	for _, k := range []string{"e", "c", "a", "d", "b"} {
		create(t, s, "/registry/g/r/"+k, k)
	}
	create(t, s, "/registry/g/s/a", "outside the prefix, after it in key order")
	const p = "/registry/g/r/"
	for _, tc := range []struct {
		limit    int64
		start    string
		want     string // the keys after p, joined
		wantMore bool
		// wantCount is the keys after start, those past the limit included (what remainingItemCount comes from).
		wantCount int64
	}{
		{0, "", "abcde", false, 5},
		{2, "", "ab", true, 5},
		{2, p + "b", "cd", true, 3},
		{2, p + "d", "e", false, 1},
		{3, p + "b", "cde", false, 3}, // exactly what is left: no More, although a key outside the prefix follows
		{5, "", "abcde", false, 5},
		{10, "", "abcde", false, 5},
		{1, p + "e", "", false, 0},
		{0, p + "c", "de", false, 2},
		{0, p + "bb", "cde", false, 3}, // a start key that names no object
		{1, p + "a", "b", true, 4},
	} {
		res, err := s.List(ctx, p, storage.ListOptions{Limit: tc.limit, StartKey: tc.start})
		if err != nil {
			t.Fatalf("List(limit %d, start %q): %v", tc.limit, tc.start, err)
		}
		got := ""
		for _, k := range keys(res.Items) {
			got += k[len(p):]
		}
		if got != tc.want || res.More != tc.wantMore || res.Count != tc.wantCount {
			t.Errorf("List(limit %d, start %q) = %q, More %v, Count %d; want %q, More %v, Count %d",
				tc.limit, tc.start, got, res.More, res.Count, tc.want, tc.wantMore, tc.wantCount)
		}
	}

	// Walking the pages as the engine does yields every key once, in order.
	var all []string
	start := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		res, err := s.List(ctx, p, storage.ListOptions{Limit: 2, StartKey: start})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, keys(res.Items)...)
		if !res.More {
			break
		}
		start = res.Items[len(res.Items)-1].Key
	}
	if fmt.Sprint(all) != fmt.Sprint([]string{p + "a", p + "b", p + "c", p + "d", p + "e"}) {
		t.Errorf("pages of 2 gave %v", all)
	}
}

// testListAtRevision: a list at a past revision shows the objects as they were then, with their revisions of
// then, and reports that revision; pages of it stay at it. A revision not reached yet is ErrFutureRevision.
func testListAtRevision(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	const p = "/registry/g/r/"
	revA := create(t, s, p+"a", "a1")
	revB := create(t, s, p+"b", "b1")
	revA2, err := s.Update(ctx, p+"a", []byte("a2"), revA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, p+"b", 0); err != nil {
		t.Fatal(err)
	}
	afterDelete, err := s.List(ctx, p, storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	revC := create(t, s, p+"c", "c1")
	show := func(items []storage.Object) string {
		var out []string
		for _, o := range items {
			out = append(out, fmt.Sprintf("%s=%s@%d", o.Key[len(p):], o.Value, o.Revision))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		rev   int64
		limit int64
		start string
		want  string
		more  bool
		count int64
	}{
		{revA, 0, "", fmt.Sprintf("a=a1@%d", revA), false, 1},
		{revB, 0, "", fmt.Sprintf("a=a1@%d b=b1@%d", revA, revB), false, 2},
		{revB, 1, "", fmt.Sprintf("a=a1@%d", revA), true, 2},
		{revA2, 0, "", fmt.Sprintf("a=a2@%d b=b1@%d", revA2, revB), false, 2},
		{revA2, 1, "", fmt.Sprintf("a=a2@%d", revA2), true, 2},
		{revA2, 1, p + "a", fmt.Sprintf("b=b1@%d", revB), false, 1},
		{afterDelete.Revision, 0, "", fmt.Sprintf("a=a2@%d", revA2), false, 1},
		{afterDelete.Revision, 1, p + "a", "", false, 0},
		{revC, 0, "", fmt.Sprintf("a=a2@%d c=c1@%d", revA2, revC), false, 2},
	} {
		res, err := s.List(ctx, p, storage.ListOptions{Revision: tc.rev, Limit: tc.limit, StartKey: tc.start})
		if err != nil {
			t.Errorf("List at %d (limit %d, start %q): %v", tc.rev, tc.limit, tc.start, err)
			continue
		}
		if got := show(res.Items); got != tc.want || res.More != tc.more || res.Revision != tc.rev || res.Count != tc.count {
			t.Errorf("List at %d (limit %d, start %q) = %q, More %v, revision %d, Count %d; want %q, More %v, revision %d, Count %d",
				tc.rev, tc.limit, tc.start, got, res.More, res.Revision, res.Count, tc.want, tc.more, tc.rev, tc.count)
		}
	}
	if _, err := s.List(ctx, p, storage.ListOptions{Revision: revC + 1000}); !errors.Is(err, storage.ErrFutureRevision) {
		t.Errorf("List at a revision not reached: %v, want ErrFutureRevision", err)
	}
}

// testPrevRevision: events carry the revision of the document they replace or delete.
func testPrevRevision(t *testing.T, s storage.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const p = "/registry/g/r/"
	ch, err := s.Watch(ctx, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	revA := create(t, s, p+"a", "a1")
	revA2, err := s.Update(ctx, p+"a", []byte("a2"), revA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, p+"a", 0); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{0, revA, revA2} {
		if ev := next(t, ch); ev.PrevRevision != want {
			t.Errorf("event %d (%s): PrevRevision %d, want %d", i, showEvent(ev), ev.PrevRevision, want)
		}
	}
}

func testRevisionsIncrease(t *testing.T, s storage.Interface) {
	ctx := context.Background()
	var revs []int64
	note := func(rev int64, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, rev)
	}
	note(s.Create(ctx, "/registry/g/r/a", []byte("1")))
	note(s.Create(ctx, "/registry/g/r/b", []byte("1")))
	note(s.Update(ctx, "/registry/g/r/a", []byte("2"), revs[0]))
	note(s.Create(ctx, "/registry/g/x/c", []byte("1")))
	note(s.Update(ctx, "/registry/g/r/b", []byte("2"), revs[1]))
	if _, err := s.Delete(ctx, "/registry/g/r/a", 0); err != nil {
		t.Fatal(err)
	}
	note(s.Create(ctx, "/registry/g/r/a", []byte("3")))
	for i := 1; i < len(revs); i++ {
		if revs[i] <= revs[i-1] {
			t.Errorf("write %d got revision %d, not after %d (all: %v)", i, revs[i], revs[i-1], revs)
		}
	}
	// Each object keeps the revision of its own last write, whatever was written elsewhere since.
	for key, want := range map[string]int64{"/registry/g/r/a": revs[5], "/registry/g/r/b": revs[4], "/registry/g/x/c": revs[3]} {
		if o := get(t, s, key); o.Revision != want {
			t.Errorf("%s at revision %d, want %d", key, o.Revision, want)
		}
	}
	res, err := s.List(ctx, "/registry/g/r/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision < revs[len(revs)-1] {
		t.Errorf("List.Revision %d is before the last write %d", res.Revision, revs[len(revs)-1])
	}
}

// ---------------------------------------------------------------- watches

func testWatchFromNow(t *testing.T, s storage.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	create(t, s, "/registry/g/r/before", "not seen: written before the watch")
	ch, err := s.Watch(ctx, "/registry/g/r/", 0)
	if err != nil {
		t.Fatal(err)
	}
	rev1 := create(t, s, "/registry/g/r/a", "v1")
	rev2, err := s.Update(ctx, "/registry/g/r/a", []byte("v2"), rev1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, "/registry/g/r/a", rev2); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, ch, storage.Event{Type: storage.EventPut, Object: storage.Object{Key: "/registry/g/r/a", Value: []byte("v1"), Revision: rev1}})
	expectEvent(t, ch, storage.Event{Type: storage.EventPut, Object: storage.Object{Key: "/registry/g/r/a", Value: []byte("v2"), Revision: rev2}, Prev: []byte("v1")})
	del := next(t, ch)
	// A delete carries the deleted document in Prev (the engine sends it as the DELETED object) and gets a
	// revision of its own.
	if del.Type != storage.EventDelete || del.Object.Key != "/registry/g/r/a" || len(del.Object.Value) != 0 ||
		string(del.Prev) != "v2" || del.Object.Revision <= rev2 {
		t.Errorf("delete event = %s, want a delete of /registry/g/r/a after revision %d with Prev v2", showEvent(del), rev2)
	}
}

func testWatchFromPast(t *testing.T, s storage.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	revA := create(t, s, "/registry/g/r/a", "a1")
	revB := create(t, s, "/registry/g/r/b", "b1")
	revA2, err := s.Update(ctx, "/registry/g/r/a", []byte("a2"), revA)
	if err != nil {
		t.Fatal(err)
	}
	delB, err := s.Delete(ctx, "/registry/g/r/b", 0)
	if err != nil {
		t.Fatal(err)
	}

	// From revA: everything after it, in order, with the same Prev a live watch would have seen.
	ch, err := s.Watch(ctx, "/registry/g/r/", revA)
	if err != nil {
		t.Fatal(err)
	}
	expectEvent(t, ch, storage.Event{Type: storage.EventPut, Object: storage.Object{Key: "/registry/g/r/b", Value: []byte("b1"), Revision: revB}})
	expectEvent(t, ch, storage.Event{Type: storage.EventPut, Object: storage.Object{Key: "/registry/g/r/a", Value: []byte("a2"), Revision: revA2}, Prev: []byte("a1")})
	ev := next(t, ch)
	if ev.Type != storage.EventDelete || ev.Object.Key != "/registry/g/r/b" || string(ev.Prev) != string(delB.Value) || ev.Object.Revision <= revA2 {
		t.Errorf("replayed delete = %s", showEvent(ev))
	}
	// The replay joins the live stream without a gap or a repeat.
	revC := create(t, s, "/registry/g/r/c", "c1")
	expectEvent(t, ch, storage.Event{Type: storage.EventPut, Object: storage.Object{Key: "/registry/g/r/c", Value: []byte("c1"), Revision: revC}})

	// From the revision of the last write: only what comes next.
	ch2, err := s.Watch(ctx, "/registry/g/r/", revC)
	if err != nil {
		t.Fatal(err)
	}
	revD := create(t, s, "/registry/g/r/d", "d1")
	expectEvent(t, ch2, storage.Event{Type: storage.EventPut, Object: storage.Object{Key: "/registry/g/r/d", Value: []byte("d1"), Revision: revD}})
}

// testWatchFromFuture: a client may resume from any revision it was given, including one from a List whose
// revision is later than every key under the watched prefix. Changes up to that revision are not "after" it.
func testWatchFromFuture(t *testing.T, s storage.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rev := create(t, s, "/registry/g/r/a", "a1")
	ch, err := s.Watch(ctx, "/registry/g/r/", rev+2)
	if err != nil {
		t.Fatal(err)
	}
	rev1, err := s.Update(ctx, "/registry/g/r/a", []byte("a2"), rev)
	if err != nil {
		t.Fatal(err)
	}
	rev2, err := s.Update(ctx, "/registry/g/r/a", []byte("a3"), rev1)
	if err != nil {
		t.Fatal(err)
	}
	rev3, err := s.Update(ctx, "/registry/g/r/a", []byte("a4"), rev2)
	if err != nil {
		t.Fatal(err)
	}
	// Another user of a shared store may have written in between, so which of these is the first after rev+2
	// is not known; what is known is that nothing at or before rev+2 arrives, and a4 does.
	for {
		ev := next(t, ch)
		if ev.Object.Revision <= rev+2 {
			t.Fatalf("watch from %d delivered %s", rev+2, showEvent(ev))
		}
		if ev.Object.Revision == rev3 {
			break
		}
	}
}

func testWatchPrefix(t *testing.T, s storage.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Watch(ctx, "/registry/g/r/ns/", 0)
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.Watch(ctx, "/registry/g/r/ns/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Keys that share all but the last bytes of the prefix, or of which the prefix is itself a prefix, are
	// outside. A sentinel written last under the prefix proves they were skipped rather than late.
	for _, k := range []string{"/registry/g/r/ns", "/registry/g/r/ns2/a", "/registry/g/r/other/a", "/registry/g/s/ns/a"} {
		create(t, s, k, "outside")
	}
	revAB := create(t, s, "/registry/g/r/ns/ab", "inside")
	revA := create(t, s, "/registry/g/r/ns/a", "inside")
	ev := next(t, ch)
	if ev.Object.Key != "/registry/g/r/ns/ab" || ev.Object.Revision != revAB {
		t.Errorf("prefix watch: first event %s, want the put of /registry/g/r/ns/ab", showEvent(ev))
	}
	if ev := next(t, ch); ev.Object.Key != "/registry/g/r/ns/a" || ev.Object.Revision != revA {
		t.Errorf("prefix watch: second event %s, want the put of /registry/g/r/ns/a", showEvent(ev))
	}
	// A watch's prefix is a prefix: /ns/ab starts with /ns/a.
	if ev := next(t, one); ev.Object.Key != "/registry/g/r/ns/ab" {
		t.Errorf("watch of /registry/g/r/ns/a: first event %s, want /registry/g/r/ns/ab", showEvent(ev))
	}
	if ev := next(t, one); ev.Object.Key != "/registry/g/r/ns/a" {
		t.Errorf("watch of /registry/g/r/ns/a: second event %s", showEvent(ev))
	}
}

// testWatchRecreate: the engine tells ADDED from MODIFIED by Prev, so a put that follows a delete must have no
// Prev, whatever the key held before.
func testWatchRecreate(t *testing.T, s storage.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Watch(ctx, "/registry/g/r/", 0)
	if err != nil {
		t.Fatal(err)
	}
	rev1 := create(t, s, "/registry/g/r/a", "first life")
	if _, err := s.Delete(ctx, "/registry/g/r/a", rev1); err != nil {
		t.Fatal(err)
	}
	rev2 := create(t, s, "/registry/g/r/a", "second life")
	expectEvent(t, ch, storage.Event{Type: storage.EventPut, Object: storage.Object{Key: "/registry/g/r/a", Value: []byte("first life"), Revision: rev1}})
	if ev := next(t, ch); ev.Type != storage.EventDelete || string(ev.Prev) != "first life" {
		t.Errorf("second event %s, want the delete", showEvent(ev))
	}
	expectEvent(t, ch, storage.Event{Type: storage.EventPut, Object: storage.Object{Key: "/registry/g/r/a", Value: []byte("second life"), Revision: rev2}})
}

func testWatchCancel(t *testing.T, s storage.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := s.Watch(ctx, "/registry/g/r/", 0)
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, "/registry/g/r/a", "v")
	cancel()
	// Events already queued may still arrive; then the channel must close.
	deadline := time.After(eventTimeout)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				// Writers are unaffected by the gone watcher.
				create(t, s, "/registry/g/r/b", "v")
				return
			}
		case <-deadline:
			t.Fatalf("watch channel still open %v after its context was cancelled", eventTimeout)
		}
	}
}

// ---------------------------------------------------------------- concurrency

// testConcurrentUpdates is optimistic concurrency as the engine uses it: read, change, write back with the
// revision read, and on a conflict start again. No increment may be lost or applied twice.
func testConcurrentUpdates(t *testing.T, s storage.Interface) {
	const writers, increments = 8, 25
	const key = "/registry/g/r/counter"
	create(t, s, key, "0")
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	var conflicts sync.Map
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for range increments {
				for attempt := 0; ; attempt++ {
					if attempt > 10000 {
						errs <- fmt.Errorf("writer %d: no progress after %d conflicts", w, attempt)
						return
					}
					o, err := s.Get(ctx, key)
					if err != nil {
						errs <- err
						return
					}
					var n int
					fmt.Sscan(string(o.Value), &n)
					_, err = s.Update(ctx, key, []byte(fmt.Sprint(n+1)), o.Revision)
					if errors.Is(err, storage.ErrConflict) {
						conflicts.Store(w, true)
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if o := get(t, s, key); string(o.Value) != fmt.Sprint(writers*increments) {
		t.Errorf("counter = %s after %d writers each added %d", o.Value, writers, increments)
	}
}

func testConcurrentCreate(t *testing.T, s storage.Interface) {
	const racers = 8
	var wg sync.WaitGroup
	results := make(chan error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Create(context.Background(), "/registry/g/r/contested", []byte(fmt.Sprint(i)))
			results <- err
		}()
	}
	wg.Wait()
	close(results)
	won := 0
	for err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, storage.ErrExists):
			t.Errorf("Create: %v, want nil or ErrExists", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent Creates of one key succeeded, want exactly 1", won, racers)
	}
}

// testWatchConcurrentWriters: with writers racing on several keys, a watcher still sees every write once, in
// revision order, each event matching what its writer was told.
func testWatchConcurrentWriters(t *testing.T, s storage.Interface) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Watch(ctx, "/registry/g/r/", 0)
	if err != nil {
		t.Fatal(err)
	}
	const writers, writes = 4, 20
	var mu sync.Mutex
	written := map[int64]string{} // revision -> key
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("/registry/g/r/w%d", w)
			rev, err := s.Create(ctx, key, []byte("0"))
			for i := 1; err == nil && i <= writes; i++ {
				mu.Lock()
				written[rev] = key
				mu.Unlock()
				if i < writes {
					rev, err = s.Update(ctx, key, []byte(fmt.Sprint(i)), rev)
				}
			}
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
			}
		}()
	}
	wg.Wait()
	var last int64
	for range writers * writes {
		ev := next(t, ch)
		if ev.Object.Revision <= last {
			t.Fatalf("event at revision %d after one at %d", ev.Object.Revision, last)
		}
		last = ev.Object.Revision
		mu.Lock()
		key, ok := written[ev.Object.Revision]
		delete(written, ev.Object.Revision)
		mu.Unlock()
		if !ok || key != ev.Object.Key {
			t.Fatalf("event %s matches no acknowledged write (or repeats one)", showEvent(ev))
		}
	}
}

// ---------------------------------------------------------------- helpers

func create(t *testing.T, s storage.Interface, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(context.Background(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%s): %v", key, err)
	}
	return rev
}

func get(t *testing.T, s storage.Interface, key string) storage.Object {
	t.Helper()
	o, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%s): %v", key, err)
	}
	return o
}

func keys(items []storage.Object) []string {
	var out []string
	for _, o := range items {
		out = append(out, o.Key)
	}
	return out
}

// next returns the next event, failing the test if none comes or the channel closes.
func next(t *testing.T, ch <-chan storage.Event) storage.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed unexpectedly")
		}
		return ev
	case <-time.After(eventTimeout):
		t.Fatalf("no watch event within %v", eventTimeout)
	}
	panic("unreachable")
}

func expectEvent(t *testing.T, ch <-chan storage.Event, want storage.Event) {
	t.Helper()
	got := next(t, ch)
	// Prev nil and Prev empty differ: nil means the key held nothing (the engine's ADDED).
	if got.Type != want.Type || !sameObject(got.Object, want.Object) || !bytes.Equal(got.Prev, want.Prev) || (got.Prev == nil) != (want.Prev == nil) {
		t.Errorf("event = %s, want %s", showEvent(got), showEvent(want))
	}
}

// sameObject compares objects, treating a nil and an empty value alike.
func sameObject(a, b storage.Object) bool {
	return a.Key == b.Key && a.Revision == b.Revision && bytes.Equal(a.Value, b.Value)
}

func show(o storage.Object) string {
	return fmt.Sprintf("{%s %q rev %d}", o.Key, o.Value, o.Revision)
}

func showEvent(ev storage.Event) string {
	typ := "put"
	if ev.Type == storage.EventDelete {
		typ = "delete"
	}
	prev := "nil"
	if ev.Prev != nil {
		prev = fmt.Sprintf("%q", ev.Prev)
	}
	return fmt.Sprintf("%s %s prev %s", typ, show(ev.Object), prev)
}
