package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// flood is the flood phase: large objects written, then many clients paging through the collection at once, as
// the informers and kubectl of a busy cluster do, and the server's peak RSS (the kernel's VmHWM) held to a
// bound computed from the sizes involved.
//
// The bound is the RSS before the phase plus twice (the Go collector lets the heap reach twice what is live,
// GOGC=100) what the phase can keep live, copies of the objects' bytes:
//
//   - of the objects written: the store's copy and a transient one per write in flight (2 × their bytes); on
//     embedded etcd, in the same process, also etcd's in-memory raft log, which keeps every entry until its
//     next snapshot (3 ×);
//   - of each page in flight (clients × limit × size): the stored values, the decoded objects and the encoded
//     answer (3 copies); on etcd also the range response etcd marshals and the client unmarshals (5).
//
// A LIST that read the whole collection for each page, as it did before pages were read from storage, holds
// the whole collection per request instead: clients × objects × size × 3, some GiB with the defaults.
type flood struct {
	objects, size, clients, limit int
	duration                      time.Duration
}

// copies are the factors above for a storage: of the objects' bytes, and of each page's.
func (f flood) copies(storage string) (data, page int64) {
	if storage == "etcd" {
		return 3, 5
	}
	return 2, 3
}

// bound is the peak RSS the phase may reach from base.
func (f flood) bound(storage string, base int64) int64 {
	data, page := f.copies(storage)
	return base + 2*(data*int64(f.objects)*int64(f.size)+page*int64(f.clients)*int64(f.limit)*int64(f.size))
}

// run floods the server of s and reports peak RSS against the bound; it returns what went wrong.
func (f flood) run(ctx context.Context, s *soak) error {
	// The peak is the phase's own: writing 5 to clear_refs resets VmHWM to the current RSS.
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.proc.cmd.Process.Pid), []byte("5"), 0)
	base, err := procStatus(s.proc.cmd.Process.Pid, "VmRSS")
	if err != nil {
		return err
	}
	bound := f.bound(s.storage, base)
	data, page := f.copies(s.storage)
	fmt.Printf("%s flood: %d objects of %d KiB written by 8 clients, then %d clients paging through the collection with limit=%d for %v\n",
		s.storage, f.objects, f.size>>10, f.clients, f.limit, f.duration)
	fmt.Printf("%s flood: bound on peak RSS = RSS before (%.1f MiB) + 2 x (%d x %.1f MiB of objects + %d x %d x %d KiB x %d of pages in flight) = %.1f MiB\n",
		s.storage, mib(base), data, mib(int64(f.objects)*int64(f.size)), f.clients, f.limit, f.size>>10, page, mib(bound))

	var pages, items, throttled atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, f.clients+8)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: f.clients + 8}, Timeout: 60 * time.Second}
	large := strings.Repeat("x", f.size)
	writeCtx, stopWrites := context.WithTimeout(ctx, 5*time.Minute)
	defer stopWrites()
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < f.objects && writeCtx.Err() == nil; i += 8 {
				body := fmt.Sprintf(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"flood-%d"},"spec":{"image":%q}}`, i, large)
				code, _, err := floodCall(writeCtx, client, "POST", s.proc.base+collection, body)
				switch {
				case err != nil:
					errs <- err
					return
				case code == http.StatusTooManyRequests:
					throttled.Add(1)
					time.Sleep(100 * time.Millisecond)
					i -= 8 // again
				case code != http.StatusCreated && code != http.StatusConflict:
					errs <- fmt.Errorf("creating flood-%d: status %d", i, code)
					return
				}
			}
		})
	}
	// The LISTs start once the collection is whole, so that each page of a LIST that read the collection
	// would hold all of it.
	wg.Wait()
	d := f.duration
	if len(errs) > 0 {
		d = 0 // the writes failed: no LISTs
	}
	floodCtx, stop := context.WithTimeout(ctx, d)
	defer stop()
	for range f.clients {
		wg.Go(func() {
			cont := ""
			for floodCtx.Err() == nil {
				code, body, err := floodCall(floodCtx, client, "GET", fmt.Sprintf("%s%s?limit=%d&continue=%s", s.proc.base, collection, f.limit, url.QueryEscape(cont)), "")
				switch {
				case floodCtx.Err() != nil:
					return
				case err != nil:
					errs <- err
					return
				case code == http.StatusTooManyRequests:
					// Refused by the server's limit on requests in flight: as a client does, wait and retry.
					throttled.Add(1)
					time.Sleep(100 * time.Millisecond)
					continue
				case code == http.StatusGone:
					cont = "" // the page's revision is forgotten: list again
					continue
				case code != http.StatusOK:
					errs <- fmt.Errorf("LIST: status %d: %.200s", code, body)
					return
				}
				var l struct {
					Metadata struct{ Continue string } `json:"metadata"`
					Items    []json.RawMessage         `json:"items"`
				}
				if err := json.Unmarshal(body, &l); err != nil {
					errs <- err
					return
				}
				pages.Add(1)
				items.Add(int64(len(l.Items)))
				cont = l.Metadata.Continue
			}
		})
	}
	wg.Wait()
	close(errs)
	var failed []string
	for err := range errs {
		failed = append(failed, err.Error())
	}
	peak, err := procStatus(s.proc.cmd.Process.Pid, "VmHWM")
	if err != nil {
		return err
	}
	verdict := "ok"
	if peak > bound {
		verdict = "OVER"
		failed = append(failed, fmt.Sprintf("peak RSS %.1f MiB over the bound %.1f MiB", mib(peak), mib(bound)))
	}
	fmt.Printf("%s flood: %d pages (%d objects) listed, %d answers 429; peak RSS %.1f MiB, bound %.1f MiB: %s\n",
		s.storage, pages.Load(), items.Load(), throttled.Load(), mib(peak), mib(bound), verdict)
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}

func floodCall(ctx context.Context, client *http.Client, method, u, body string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// procStatus reads a figure in kB of /proc/PID/status (VmRSS, VmHWM) in bytes.
func procStatus(pid int, name string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if fields := strings.Fields(v); k == name && len(fields) > 0 {
			n, err := strconv.ParseInt(fields[0], 10, 64)
			return n << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", name, pid)
}

func mib(v int64) float64 { return float64(v) / (1 << 20) }
