package engine_test

import (
	"flag"
	"net/http"
	"runtime"
	"testing"

	"crdplay/engine"
	"crdplay/internal/apirace"
	"crdplay/internal/oraclecase"
)

// raceURL runs TestConcurrency against a running server instead (the oracle: `oracle serve --port P`, then
// -apirace.url http://127.0.0.1:P), to record the status codes the real server answers to the same requests.
var raceURL = flag.String("apirace.url", "", "run TestConcurrency against the API server at this URL")

// raceOptions sizes the concurrent-write suite: 16 clients × 50 merge patches of one object as in the report
// it answers, fewer under js/wasm, where every goroutine shares one thread.
func raceOptions() apirace.Options {
	if runtime.GOOS == "js" {
		return apirace.Options{Workers: 4, OpsPerWorker: 16, StormWorkers: 4, StormPatches: 10, ExactCodes: true}
	}
	return apirace.Options{Workers: 8, OpsPerWorker: 40, StormWorkers: 16, StormPatches: 50, ExactCodes: true}
}

// TestConcurrency runs the concurrent-write suite on the engine over memory storage: patches and applies racing
// each other, PUTs, deletes and creates, on one name and on several, answer as kube-apiserver does (no 409 for
// a patch, 409 for a PUT of a stale object, no 5xx) and the objects end up holding what was acknowledged. The
// codes ExactCodes allows are those the oracle answered to the same requests (-apirace.url): every patch and
// apply 200 (apply 201 when it created), PUT 200 or 409, stale PUT 409, PUT without resourceVersion 422, and
// while objects come and go merge patch and delete 200 or 404, create 201 or 409.
func TestConcurrency(t *testing.T) {
	if *raceURL != "" {
		opts := raceOptions()
		opts.ExactCodes = false
		tr := &http.Transport{MaxIdleConnsPerHost: 64}
		apirace.Run(t, []apirace.Target{{Client: &http.Client{Transport: tr}, URL: *raceURL}}, opts)
		return
	}
	h, err := engine.NewHandler(engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	apirace.Run(t, []apirace.Target{{Client: oraclecase.HandlerClient(h), URL: "http://engine"}}, raceOptions())
}
