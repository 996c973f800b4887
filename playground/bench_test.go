package playground

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The targets for re-evaluation after an object edit (compile cached): 20 ms median for the CronTab
// examples, 150 ms for the largest CRD of the corpus. `make bench` reports these benchmarks beside them.

// BenchmarkReevaluate measures an evaluation after an edit of the object text, with the CRD text unchanged
// (installed once, before the timer), as the page does it: the CRD text not sent again (Input.CRDs nil),
// the schema trees known (KnownCRDRevision), the HTTP exchanges traced for the page's log, and the result
// encoded as JSON for the bridge.
func BenchmarkReevaluate(b *testing.B) {
	for _, bc := range []struct {
		name, dir string
	}{
		{"crontab", "../testdata/examples/crontab"},
		// The largest CRD of ../shared/corpus (2.8 MB, 10,505 schema nodes, 38 CEL rules).
		{"corpus-largest", "../testdata/corpus/argo-workflows/Workflow"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			crd := readBenchFile(b, filepath.Join(bc.dir, "crd.yaml"))
			object := readBenchFile(b, filepath.Join(bc.dir, "01-create.yaml"))
			s := NewSession(Options{})
			ctx := context.Background()
			first, err := s.Evaluate(ctx, Input{CRDs: &crd, Objects: object})
			if err != nil {
				b.Fatal(err)
			}
			if len(first.Objects) != 1 || !first.Objects[0].Accepted {
				b.Fatalf("the object is not accepted: %+v", first.Objects)
			}
			edits := make([]string, 16)
			for i := range edits {
				// A different label each time: a real edit of the text, accepted like the original.
				edits[i] = strings.Replace(object, "\nmetadata:\n", "\nmetadata:\n  labels: {edit: \"e"+strconv.Itoa(i)+"\"}\n", 1)
			}
			var ph phases
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := s.Evaluate(ctx, Input{Objects: edits[i%len(edits)], KnownCRDRevision: first.CRDRevision, Trace: true})
				if err != nil {
					b.Fatal(err)
				}
				if !res.CRDCached || !res.Objects[0].Accepted {
					b.Fatalf("cached=%v accepted=%v", res.CRDCached, res.Objects[0].Accepted)
				}
				encStart := time.Now()
				if _, err := json.Marshal(res); err != nil {
					b.Fatal(err)
				}
				t := res.Timings
				ph.add("evaluate", t.Total)
				ph.add("parse", t.Parse)
				ph.add("engine", t.ObjectEngine)
				ph.add("place", t.Objects-t.Parse-t.ObjectEngine)
				ph.add("encode", ms(time.Since(encStart)))
			}
			ph.report(b)
		})
	}
}

// BenchmarkInstall measures an evaluation after an edit of the CRD text: a new engine, the CRD created and
// established, its cost report and explain tree, and the object. Not a target of the issue; reported so
// that CRD edits stay usable. The -first cases are the page's first results of a CRD edit: the same with
// Input.DeferAnalysis, the analysis left for the evaluation after (not timed here).
func BenchmarkInstall(b *testing.B) {
	for _, bc := range []struct {
		name, dir     string
		deferAnalysis bool
	}{
		{"crontab", "../testdata/examples/crontab", false},
		{"corpus-largest", "../testdata/corpus/argo-workflows/Workflow", false},
		{"corpus-largest-first", "../testdata/corpus/argo-workflows/Workflow", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			crd := readBenchFile(b, filepath.Join(bc.dir, "crd.yaml"))
			object := readBenchFile(b, filepath.Join(bc.dir, "01-create.yaml"))
			s := NewSession(Options{})
			ctx := context.Background()
			var ph phases
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				text := crd + "\n# edit " + strconv.Itoa(i) + "\n"
				res, err := s.Evaluate(ctx, Input{CRDs: &text, Objects: object, DeferAnalysis: bc.deferAnalysis})
				if err != nil {
					b.Fatal(err)
				}
				if res.CRDCached || !res.CRDs[0].Accepted || res.AnalysisPending != bc.deferAnalysis {
					b.Fatalf("cached=%v accepted=%v pending=%v", res.CRDCached, res.CRDs[0].Accepted, res.AnalysisPending)
				}
				ph.add("install", res.Timings.CRDs)
				ph.add("crd-engine", res.Timings.CRDEngine)
				ph.add("crd-analysis", res.Timings.CRDs-res.Timings.CRDEngine)
				ph.add("objects", res.Timings.Objects)
				ph.add("object-engine", res.Timings.ObjectEngine)
				if _, err := json.Marshal(res); err != nil {
					b.Fatal(err)
				}
			}
			ph.report(b)
		})
	}
}

func readBenchFile(b *testing.B, path string) string {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return string(data)
}

// phases adds up the parts of the evaluations a benchmark ran, for b.ReportMetric: one "<phase>-ms/op" metric
// each, which make bench (tools/wasmratio) compares between the native and the js/wasm build.
type phases struct {
	names []string
	sum   map[string]float64
}

func (p *phases) add(name string, ms float64) {
	if p.sum == nil {
		p.sum = map[string]float64{}
	}
	if _, ok := p.sum[name]; !ok {
		p.names = append(p.names, name)
	}
	p.sum[name] += ms
}

func (p *phases) report(b *testing.B) {
	for _, n := range p.names {
		b.ReportMetric(p.sum[n]/float64(b.N), n+"-ms/op")
	}
}

// BenchmarkDeferredAnalysis measures what the page asks for after a CRD edit's first results (Input.DeferAnalysis):
// the evaluation that does the analysis the install left (cost reports, version analysis, explain trees,
// runtime cost model) and runs the object again. The deferred install before it is not timed.
func BenchmarkDeferredAnalysis(b *testing.B) {
	dir := "../testdata/corpus/argo-workflows/Workflow"
	crd := readBenchFile(b, filepath.Join(dir, "crd.yaml"))
	object := readBenchFile(b, filepath.Join(dir, "01-create.yaml"))
	s := NewSession(Options{})
	ctx := context.Background()
	var ph phases
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		text := crd + "\n# edit " + strconv.Itoa(i) + "\n"
		first, err := s.Evaluate(ctx, Input{CRDs: &text, Objects: object, DeferAnalysis: true})
		if err != nil || !first.AnalysisPending {
			b.Fatalf("first evaluation: %v, pending %v", err, first != nil && first.AnalysisPending)
		}
		b.StartTimer()
		res, err := s.Evaluate(ctx, Input{Objects: object})
		if err != nil {
			b.Fatal(err)
		}
		if res.AnalysisPending || !res.Objects[0].Accepted || res.Objects[0].CEL == nil {
			b.Fatalf("pending=%v accepted=%v cel=%v", res.AnalysisPending, res.Objects[0].Accepted, res.Objects[0].CEL)
		}
		if _, err := json.Marshal(res); err != nil {
			b.Fatal(err)
		}
		ph.add("analysis", res.Timings.Analysis)
		ph.add("objects", res.Timings.Objects)
	}
	ph.report(b)
}
