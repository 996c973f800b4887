package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"runtime/debug"
	"sort"
	"strconv"
	"sync"
	"time"

	"crdplay/engine"
	"crdplay/playground/internal/celcost"
)

// Options configure a Session.
type Options struct {
	// Webhook carries conversion webhooks' ConversionReviews (in the browser: the page's function). Nil makes
	// every conversion webhook unreachable.
	Webhook engine.WebhookCaller
	// Now is the engine's clock. Defaults to time.Now.
	Now func() time.Time
	// UserAgent is sent with every request; the API names the managedFields manager after its first word.
	// Defaults to "crdplay".
	UserAgent string
	// Admission, when set, makes each engine of the session run an admission chain that serves its own
	// configuration (AdmissionServer), built on the engine's storage: the admission policies and bindings
	// among the inputs are then applied and run on the writes, as a cluster runs them. Native hosts set it
	// (crdplay check: crdplay/policies); without it they are reported as not applied.
	Admission func(store engine.Storage) (AdmissionServer, error)
	// EmulatedVersion is the Kubernetes minor the engine answers as ("1.34" to "1.37"; "" is the newest), as
	// engine.Options.EmulatedVersion. It is process-wide: every session of a process must ask for the same one,
	// or Evaluate fails.
	EmulatedVersion string
}

// Session evaluates the editors' texts against an engine of its own, keeping the CRDs installed between
// evaluations for as long as their text stays the same. It is safe for concurrent use; evaluations run one
// at a time.
type Session struct {
	opts      Options
	userAgent string

	mu sync.Mutex
	st *crdState // nil before the first evaluation, and after one that could not clean up
	// crdText and oldCRDText are the last evaluation's CRD texts, which an Input without them means.
	crdText, oldCRDText string
	// chain is the admission chain of the last engine made (Options.Admission).
	chain AdmissionServer
}

// NewSession returns a session with no CRDs installed.
func NewSession(opts Options) *Session {
	ua := opts.UserAgent
	if ua == "" {
		ua = "crdplay"
	}
	return &Session{opts: opts, userAgent: ua}
}

// maxText bounds each editor's text: above the engine's 3 MiB request limit for one document, room for
// several, far below what would stall a tab.
const maxText = 8 << 20

// Evaluate runs the input through the engine and returns what the API answered, placed in the texts. Problems
// with the input itself (invalid YAML, an unknown kind, a refused object) are diagnostics in the Result;
// the error is only for a caller's mistake (an unknown Mode) or a fault of the playground itself.
func (s *Session) Evaluate(ctx context.Context, in Input) (res *Result, err error) {
	switch in.Mode {
	case "":
		in.Mode = ModeCreate
	case ModeCreate, ModeUpdate, ModeStatus, ModeScale, ModeDelete, ModeUpgrade:
	default:
		return nil, fmt.Errorf("playground: unknown mode %q (want create, update, status, scale, delete or upgrade)", in.Mode)
	}
	switch in.FieldValidation {
	case "", "Strict", "Warn", "Ignore":
	default:
		return nil, fmt.Errorf("playground: unknown fieldValidation %q (want Strict, Warn, Ignore or empty)", in.FieldValidation)
	}
	if in.Namespace == "" {
		in.Namespace = "default"
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			// The engine recovers its own panics into 500s; this is one of ours. Start over next time.
			s.st = nil
			res, err = nil, fmt.Errorf("playground: internal error: %v\n%s", p, debug.Stack())
		}
	}()

	start := time.Now()
	crdText := s.crdText
	if in.CRDs != nil {
		crdText = *in.CRDs
	}
	s.crdText = crdText

	// The emulated version is applied before anything reads it (the compatibility report, the engine).
	emulated, err := engine.Emulate(s.opts.EmulatedVersion)
	if err != nil {
		return nil, err
	}
	res = &Result{Limits: celcost.DefaultLimits, Kubernetes: kubernetesRange(emulated)}
	var trace *[]Exchange
	if in.Trace {
		trace = &[]Exchange{}
	}
	if in.Mode == ModeUpgrade {
		if in.OldCRDs != nil {
			s.oldCRDText = *in.OldCRDs
		}
		if err := s.upgrade(ctx, in, s.oldCRDText, crdText, res, trace); err != nil {
			return nil, err
		}
		return finishResult(res, trace, start), nil
	}
	if s.st == nil || s.st.text != crdText {
		var engineTime time.Duration
		st, err := s.install(ctx, crdText, trace, &engineTime, in.DeferAnalysis)
		if err != nil {
			s.st = nil
			return nil, err
		}
		s.st = st
		res.Timings.CRDs = ms(time.Since(start))
		res.Timings.CRDEngine = ms(engineTime)
	} else {
		res.CRDCached = true
	}
	st := s.st
	if len(st.pending) > 0 && !in.DeferAnalysis {
		t := time.Now()
		st.analysePending()
		res.Timings.Analysis = ms(time.Since(t))
	}
	res.AnalysisPending = len(st.pending) > 0
	res.CRDRevision = st.revision
	res.SchemasOmitted = in.KnownCRDRevision != "" && in.KnownCRDRevision == st.revision
	res.CRDs = st.resultsFor(res.SchemasOmitted)
	res.Diagnostics = append(res.Diagnostics, st.diags...)

	objStart := time.Now()
	ev := &evaluation{ctx: ctx, s: s, st: st, in: in, res: res, trace: trace}
	st.store.record()
	ev.run()
	if !st.store.rollback(context.Background()) {
		s.st = nil // the next evaluation reinstalls
	}
	res.Timings.Objects = ms(time.Since(objStart))
	res.Timings.ObjectEngine, res.Timings.Parse = ms(ev.engineTime), ms(ev.parseTime)
	return finishResult(res, trace, start), nil
}

// finishResult orders the diagnostics by editor and place, and adds the trace and the total time.
func finishResult(res *Result, trace *[]Exchange, start time.Time) *Result {
	sort.SliceStable(res.Diagnostics, func(i, j int) bool {
		a, b := res.Diagnostics[i], res.Diagnostics[j]
		if a.Source != b.Source {
			return sourceOrder[a.Source] < sourceOrder[b.Source]
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	if res.Diagnostics == nil {
		res.Diagnostics = []Diagnostic{}
	}
	if trace != nil {
		res.Exchanges = *trace
	}
	res.Timings.Total = ms(time.Since(start))
	return res
}

var sourceOrder = map[Source]int{SourceOldCRDs: 0, SourceCRDs: 1, SourceOldObjects: 2, SourceObjects: 3}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// revisionOf names a CRD text.
func revisionOf(text string) string {
	h := fnv.New64a()
	h.Write([]byte(text))
	return strconv.FormatUint(h.Sum64(), 36)
}

// maxRequestBytes is the engines' limit on a request body, kube-apiserver's (and engine.NewHandler's default).
const maxRequestBytes = 3 << 20

// newEngine builds the engine for a fresh install.
func (s *Session) newEngine() (http.Handler, *journal, error) {
	store := newJournal(engine.NewMemoryStorage())
	opts := engine.Options{Storage: store, Webhook: s.opts.Webhook, Now: s.opts.Now, EmulatedVersion: s.opts.EmulatedVersion, MaxRequestBytes: maxRequestBytes}
	var chain AdmissionServer
	if s.opts.Admission != nil {
		c, err := s.opts.Admission(store)
		if err != nil {
			return nil, nil, err
		}
		chain, opts.Admission = c, c
	}
	h, err := engine.NewHandler(opts)
	if err != nil {
		return nil, nil, err
	}
	if chain != nil {
		chain.Attach(h)
		// One engine's chain at a time: the one before it is done (its informers stop).
		if s.chain != nil {
			s.chain.Close()
		}
		s.chain = chain
	}
	return h, store, nil
}

// statusBody is the part of a metav1.Status the playground reads.
type statusBody struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
	Details *struct {
		Causes []struct {
			Type    string `json:"reason"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"causes"`
	} `json:"details"`
}

func parseStatus(body []byte) (statusBody, bool) {
	var st statusBody
	if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" {
		return st, false
	}
	return st, true
}
