package engine_test

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"crdplay/engine"
	"crdplay/internal/oraclecase"
)

// maxCaseOutput bounds what one failing case prints: each diff is already
// capped, but a case has up to ~20 output files and a broken engine gets
// all of them wrong. The first diff is always shown in full.
const maxCaseOutput = 6000

// TestOracleCases replays the cases recorded from the real
// apiextensions-apiserver (testdata/oracle) against the engine in-process and
// requires byte-identical normalised responses. Run one case with
// go test ./engine -run TestOracleCases/basic-crontab. Whatever in the tree
// no replay would read (a directory without crd.yaml, a file the runner does
// not take for a step, an expected file no step writes) fails it too, so
// that the cases cannot silently shrink.
func TestOracleCases(t *testing.T) {
	root := filepath.Join("..", "testdata", "oracle")
	failOrphans(t, root)
	dirs, err := oraclecase.CaseDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	// The engine changes CRDs synchronously, so there is nothing to settle
	// and a CRD that is not ready within a second never will be.
	opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: time.Second, NoSleep: true}
	ran, failed := 0, 0
	for _, dir := range dirs {
		ok := t.Run(filepath.Base(dir), func(t *testing.T) {
			ran++ // not counting cases that -run filtered out
			// A fresh engine per case, so that one case's leftovers cannot
			// fail the next and a case fails alike alone or in the full run.
			h, err := engine.NewHandler(engine.Options{Webhook: closedNetwork{}})
			if err != nil {
				t.Fatalf("NewHandler: %v", err)
			}
			res, err := oraclecase.New(oraclecase.HandlerClient(h), "http://engine", opts).RunCase(dir)
			if err != nil {
				t.Fatalf("after %d step(s): %v", res.Steps, err)
			}
			if len(res.Diffs) > 0 {
				t.Errorf("%d of the outputs differ from the real server's:\n%s", len(res.Diffs), joinCapped(res.Diffs, maxCaseOutput))
			}
		})
		if !ok {
			failed++
		}
	}
	t.Logf("%d case(s), %d failed", ran, failed)
}

// failOrphans fails the test for every entry of the tree of cases under root that no replay reads.
func failOrphans(t *testing.T, root string) {
	t.Helper()
	orphans, err := oraclecase.Orphans(filepath.Join(root, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orphans {
		t.Error(o)
	}
}

// joinCapped joins diffs until about limit bytes, then only names the
// files of the rest.
func joinCapped(diffs []string, limit int) string {
	var sb strings.Builder
	for i, d := range diffs {
		if sb.Len() > 0 && sb.Len()+len(d) > limit {
			var rest []string
			for _, d := range diffs[i:] {
				rest = append(rest, strings.SplitN(d, ":", 2)[0])
			}
			fmt.Fprintf(&sb, "... and %d more: %s\n", len(rest), strings.Join(rest, ", "))
			break
		}
		sb.WriteString(strings.TrimSuffix(d, "\n"))
		sb.WriteString("\n")
	}
	return sb.String()
}

// closedNetwork is the webhook transport of a machine where nothing listens: every POST fails the way
// net/http reports a refused loopback connection. The recorded webhook case points its CRD at such a port
// (127.0.0.1:1), so the real server saw exactly this; the test runs without sockets, also under js/wasm.
type closedNetwork struct{}

func (closedNetwork) Call(_ context.Context, cfg apiextensionsv1.WebhookClientConfig, _ []byte) ([]byte, error) {
	if cfg.URL == nil {
		return nil, fmt.Errorf("no url in webhook client config")
	}
	u, err := url.Parse(*cfg.URL)
	if err != nil {
		return nil, err
	}
	target := u.Host
	if u.Port() == "" {
		target += ":443"
	}
	return nil, fmt.Errorf("Post %q: dial tcp %s: connect: connection refused", *cfg.URL+"?timeout=30s", target)
}
