package engine_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"crdplay/engine/storage"
)

// closingWatch is a store whose watches deliver at most n events and then close their channel, as a store does
// to a watcher that falls too far behind.
type closingWatch struct {
	storage.Interface
	n int
}

func (c closingWatch) Watch(ctx context.Context, prefix string, from int64) (<-chan storage.Event, error) {
	in, err := c.Interface.Watch(ctx, prefix, from)
	if err != nil {
		return nil, err
	}
	out := make(chan storage.Event)
	go func() {
		defer close(out)
		for range c.n {
			ev, ok := <-in
			if !ok {
				return
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// TestWatchEndsWhenStorageCloses: when the store stops a watch that has not ended (a watcher that fell behind),
// the stream just ends after the events already sent, without an ERROR event, as kube-apiserver's watch handler
// ends it when the watch cache terminates a watcher that cannot keep up
// (k8s.io/apiserver pkg/endpoints/handlers/watch.go: a closed result channel is the end of the results). The
// client watches again from the last resourceVersion it got, and gets 410 only if that is too old.
func TestWatchEndsWhenStorageCloses(t *testing.T) {
	for _, n := range []int{0, 1} {
		t.Run(strconv.Itoa(n)+" events", func(t *testing.T) {
			h := newCronTabEngine(t, closingWatch{Interface: storage.NewMemory(), n: n})
			rec := do(h, "POST", crontabs, "application/json", cronTab("a", ""))
			if rec.Code != http.StatusCreated {
				t.Fatalf("create: %d %s", rec.Code, rec.Body)
			}
			var created struct {
				Metadata struct{ ResourceVersion string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
				t.Fatal(err)
			}
			rv, _ := strconv.ParseInt(created.Metadata.ResourceVersion, 10, 64)
			rec = do(h, "GET", crontabs+"?watch=1&resourceVersion="+strconv.FormatInt(rv-1, 10), "", nil)
			lines := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n")
			if rec.Body.Len() == 0 {
				lines = nil
			}
			if rec.Code != http.StatusOK || len(lines) != n {
				t.Fatalf("watch: %d, %d events, want 200 and %d:\n%s", rec.Code, len(lines), n, rec.Body)
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, `{"type":"ADDED"`) {
					t.Errorf("event %s, want only the ADDED of a", l)
				}
			}
		})
	}
}
