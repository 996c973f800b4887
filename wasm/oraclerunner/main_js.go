//go:build js && wasm

// Command oraclerunner replays the oracle's recorded cases (testdata/oracle) in a browser page against the
// engine behind window.crdplay, with the Go tests' own runner and comparison (internal/oraclecase): the same
// requests, the same normaliser, the same byte-for-byte check against the recorded responses. Only the
// transport differs: each request goes through crdplay.request, so through client.js, the worker and the
// wasm bridge, which is what the browser test (web/test/oracle.spec.mjs) is there to check.
//
// The page sets a global before running this program:
//
//	globalThis.crdplayOracle = {
//	  bundle: '{"files": {"basic-crontab/crd.yaml": "...", ...}}', // test/oracle-cases.json of tools/webbuild -test
//	  only: ['basic-crontab'],       // optional: run only these cases
//	  done(resultJSON) {},           // called once with the Result below, as JSON text
//	}
//
// and the program prints "N case(s), M failed" to the console when it ends.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"slices"
	"syscall/js"
	"testing/fstest"
	"time"

	"crdplay/internal/inproc"
	"crdplay/internal/oraclecase"
)

// Result is what done receives.
type Result struct {
	Cases  []Case `json:"cases"`
	Failed int    `json:"failed"`
	// Summary is the line the Go test logs: "N case(s), M failed".
	Summary string `json:"summary"`
	// Error is set when the run could not start (bad bundle, no crdplay global).
	Error string `json:"error,omitempty"`
}

// Case is the outcome of one case directory.
type Case struct {
	Name  string   `json:"name"`
	Steps int      `json:"steps"`
	Diffs []string `json:"diffs,omitempty"`
	// Error means the case could not run to the end (see oraclecase.Runner.RunCase).
	Error string  `json:"error,omitempty"`
	MS    float64 `json:"ms"`
}

func main() {
	cfg := js.Global().Get("crdplayOracle")
	res := run(cfg)
	out, _ := json.Marshal(res)
	fmt.Println(res.Summary + res.Error)
	if cfg.Type() == js.TypeObject && cfg.Get("done").Type() == js.TypeFunction {
		cfg.Call("done", string(out))
	}
}

func run(cfg js.Value) Result {
	if cfg.Type() != js.TypeObject || cfg.Get("bundle").Type() != js.TypeString {
		return Result{Error: "oraclerunner: set globalThis.crdplayOracle = {bundle, done} first"}
	}
	crdplay := js.Global().Get("crdplay")
	if crdplay.Type() != js.TypeObject {
		return Result{Error: "oraclerunner: no globalThis.crdplay"}
	}
	var bundle struct {
		Files map[string]string `json:"files"`
	}
	if err := json.Unmarshal([]byte(cfg.Get("bundle").String()), &bundle); err != nil {
		return Result{Error: "oraclerunner: bundle: " + err.Error()}
	}
	fsys := fstest.MapFS{}
	for name, text := range bundle.Files {
		fsys[name] = &fstest.MapFile{Data: []byte(text)}
	}
	dirs, err := oraclecase.CaseDirsFS(fsys, ".")
	if err != nil {
		return Result{Error: "oraclerunner: " + err.Error()}
	}
	var only []string
	if o := cfg.Get("only"); o.Type() == js.TypeObject {
		for i := 0; i < o.Length(); i++ {
			only = append(only, o.Index(i).String())
		}
	}

	// The recorded webhook case points its CRD at a closed port: answer as that network did.
	crdplay.Call("setWebhook", js.FuncOf(closedNetwork))
	defer crdplay.Call("setWebhook", js.Null()) // this program ends; its function must not be called after

	// The Go test's options (engine/oracle_test.go), with a longer WaitTimeout: it only bounds how long a
	// broken engine is waited for, and a browser on a loaded machine is slower than a test binary.
	opts := oraclecase.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: 5 * time.Second, NoSleep: true, FS: fsys}
	client := &http.Client{Transport: bridge{crdplay}, Timeout: time.Minute}
	var res Result
	for _, dir := range dirs {
		name := path.Base(dir)
		if len(only) > 0 && !slices.Contains(only, name) {
			continue
		}
		c := Case{Name: name}
		start := time.Now()
		// A fresh engine per case, as in the Go test, so that cases cannot fail each other.
		if _, err := await(context.Background(), crdplay.Call("reset")); err != nil {
			c.Error = "reset: " + err.Error()
		} else {
			r, err := oraclecase.New(client, "http://engine", opts).RunCase(dir)
			c.Steps, c.Diffs = r.Steps, r.Diffs
			if err != nil {
				c.Error = fmt.Sprintf("after %d step(s): %v", r.Steps, err)
			}
		}
		c.MS = float64(time.Since(start).Microseconds()) / 1000
		if c.Error != "" || len(c.Diffs) > 0 {
			res.Failed++
		}
		res.Cases = append(res.Cases, c)
	}
	res.Summary = fmt.Sprintf("%d case(s), %d failed", len(res.Cases), res.Failed)
	return res
}

// bridge is an http.RoundTripper over crdplay.request.
type bridge struct{ crdplay js.Value }

func (b bridge) RoundTrip(req *http.Request) (*http.Response, error) {
	headers := map[string]any{}
	for k, vs := range req.Header {
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		headers[k] = arr
	}
	obj := map[string]any{"method": req.Method, "path": req.URL.RequestURI(), "headers": headers}
	if req.Body != nil {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		obj["body"] = string(data)
	}
	v, err := await(req.Context(), b.crdplay.Call("request", js.ValueOf(obj)))
	if err != nil {
		return nil, fmt.Errorf("crdplay.request %s %s: %w", req.Method, req.URL.RequestURI(), err)
	}
	status := v.Get("status").Int()
	header := http.Header{}
	h := v.Get("headers")
	keys := js.Global().Get("Object").Call("keys", h)
	for i := 0; i < keys.Length(); i++ {
		k := keys.Index(i).String()
		val := h.Get(k)
		if val.Type() == js.TypeString {
			header.Add(k, val.String())
			continue
		}
		for j := 0; j < val.Length(); j++ {
			header.Add(k, val.Index(j).String())
		}
	}
	resp := &inproc.Response{StatusCode: status, Header: header, Body: []byte(v.Get("body").String())}
	return resp.HTTP(req), nil
}

// await waits for a Promise on this program's main goroutine, never on a JavaScript callback, so the event
// loop (and the worker's replies) go on meanwhile.
func await(ctx context.Context, p js.Value) (js.Value, error) {
	type settled struct {
		v   js.Value
		err error
	}
	ch := make(chan settled, 1)
	then := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{v: args[0]}
		return nil
	})
	catch := js.FuncOf(func(_ js.Value, args []js.Value) any {
		msg := js.Global().Get("JSON").Call("stringify", args[0]).String()
		if e := args[0]; e.Type() == js.TypeObject && e.Get("error").Type() == js.TypeString {
			msg = e.Get("error").String()
		}
		ch <- settled{err: errors.New(msg)}
		return nil
	})
	p.Call("then", then, catch)
	select {
	case s := <-ch:
		then.Release()
		catch.Release()
		return s.v, s.err
	case <-ctx.Done():
		go func() {
			<-ch
			then.Release()
			catch.Release()
		}()
		return js.Undefined(), ctx.Err()
	}
}

// closedNetwork is the page's conversion webhook for the replay: every call fails as net/http reports a
// refused loopback connection, which is what the real server saw for the recorded webhook case (127.0.0.1:1).
// It mirrors closedNetwork in engine/oracle_test.go. It runs on a JavaScript callback, so it returns a
// rejected Promise at once and never blocks.
func closedNetwork(_ js.Value, args []js.Value) any {
	reject := func(msg string) any {
		return js.Global().Get("Promise").Call("reject", js.Global().Get("Error").New(msg))
	}
	var cfg struct {
		URL *string `json:"url"`
	}
	if len(args) < 2 || json.Unmarshal([]byte(args[1].String()), &cfg) != nil || cfg.URL == nil {
		return reject("no url in webhook client config")
	}
	u, err := url.Parse(*cfg.URL)
	if err != nil {
		return reject(err.Error())
	}
	target := u.Host
	if u.Port() == "" {
		target += ":443"
	}
	return reject(fmt.Sprintf("Post %q: dial tcp %s: connect: connection refused", *cfg.URL+"?timeout=30s", target))
}
