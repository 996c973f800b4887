//go:build js && wasm

// Command wasm is crdplay's browser bridge: the engine (crdplay/engine) in a WebAssembly module, served
// in-process to JavaScript through one global object, globalThis.crdplay. Its types are in
// web/static/crdplay.d.ts; web/static/worker.js runs it in a Web Worker and web/static/client.js talks to
// that worker from the page.
//
//	crdplay.request({method, path, headers, body}) -> Promise<{status, headers, body}>
//	crdplay.version()                              -> {revision, modified, go, kubernetes, emulated, emulatedVersions}
//	crdplay.reset()                                -> Promise<void>: an empty store
//	crdplay.setWebhook(fn | null)                  -> fn(reviewJSON, clientConfigJSON) -> Promise<string>
//	crdplay.evaluate(inputJSON)                    -> Promise<resultJSON>: the playground's results (crdplay/playground)
//	crdplay.kubectl({args, files, namespace})      -> Promise<{stdout, stderr, output, exitCode, requests}>: a kubectl command
//	                                                  line over request()'s store (crdplay/playground/kubectl)
//
// This is the only file that touches syscall/js on the engine's side, as tailscale's tsconnect keeps its
// bridge in one file: the engine stays pure Go (internal/depguard bans syscall/js there), and everything
// JavaScript sees is decided here. Values cross as plain objects and strings; bodies are strings because
// the API's bodies are JSON or YAML text.
//
// Two rules keep the JavaScript event loop alive:
//   - Nothing blocks on a js.FuncOf callback's stack. Go runs such a callback synchronously inside the
//     JavaScript call; if it waited there for a Promise, the event loop that must settle the Promise would
//     never run again. So request() only parses its argument, starts a goroutine and returns a Promise; the
//     engine (and the conversion webhook it may call, which awaits the page's Promise) runs on that goroutine.
//   - A panic never escapes: on a callback it would end the Go program, and every later call would throw
//     "Go program has already exited". Panics become rejected Promises {error, stack} instead.
//
// The program takes one flag, the Kubernetes minor to emulate, as kube-apiserver names it:
// go.argv = ['crdplay', '--emulated-version=1.35'] before go.run (worker.js sets it from its init message);
// without it the engine is the newest. Upstream keeps emulation process-wide, so one program (one worker)
// serves one version. A version the engine cannot emulate ends the program before globalThis.crdplay is set,
// with the engine's message in globalThis.crdplayError, which the worker reports as its failure.
//
// tools/webbuild builds it into the site (with the wasm_exec.js of the same GOROOT); by hand:
//
//	go run ./tools/wasmws -o build/wasm
//	GOWORK=$PWD/build/wasm/go.work GOOS=js GOARCH=wasm go build -trimpath -ldflags='-s -w' -o /tmp/crdplay.wasm ./wasm
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall/js"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/klog/v2"

	"crdplay/engine"
	"crdplay/internal/inproc"
	"crdplay/playground"
	"crdplay/playground/kubectl"
)

const (
	// requestTimeout bounds a request that is not a watch. Nothing the engine does legitimately takes this
	// long (a conversion webhook gets 30 s per call); a request that does is a bug or a watch the check below
	// missed, and its Promise must settle rather than hang the page.
	requestTimeout = 2 * time.Minute
	// watchGrace is how long after timeoutSeconds a watch may take to end by itself (the engine closes the
	// stream at timeoutSeconds) before its context is cancelled.
	watchGrace = 5 * time.Second
	// stuckGrace is how long a handler may ignore its cancelled context before the Promise is rejected
	// without waiting for it.
	stuckGrace = 5 * time.Second
)

var (
	// handler serves requests; reset swaps in a new one over an empty store while requests in flight finish
	// on the old one.
	handler atomic.Pointer[http.Handler]
	// pageWebhook is the page's conversion function (a js.Value holding a function), or nil.
	pageWebhook atomic.Pointer[js.Value]
	// session is the playground's evaluator: an engine of its own (so that evaluations never touch the store
	// that request() serves), sharing the page's conversion webhook. main makes it, for the emulated version.
	session *playground.Session
	// emulatedVersion is --emulated-version's value ("" for the newest), for every engine of the program.
	emulatedVersion string
	// kubernetesVersion is the gitVersion the engine reports on /version, and emulatedMinor its emulation
	// version ("1.35"), read once at start.
	kubernetesVersion, emulatedMinor string

	// watchInfo classifies requests the way the engine does (same prefixes), to tell a watch, which never ends
	// by itself, from every other request.
	watchInfo = &request.RequestInfoFactory{
		APIPrefixes:          sets.NewString("api", "apis"),
		GrouplessAPIPrefixes: sets.NewString("api"),
	}
)

func main() {
	quietKlog()
	err := parseArgs(os.Args[1:])
	if err == nil {
		err = reset()
	}
	if err != nil {
		// Nothing to serve with: leave the reason where the worker looks for it (it reports the start as
		// failed, with this message), and exit so that it sees the program end instead of waiting for a global
		// that never comes.
		js.Global().Set("crdplayError", "crdplay: "+err.Error())
		return
	}
	session = playground.NewSession(playground.Options{Webhook: jsWebhook{}, EmulatedVersion: emulatedVersion})
	kubernetesVersion, emulatedMinor = readKubernetesVersion()
	js.Global().Set("crdplay", js.ValueOf(map[string]any{
		"request":    js.FuncOf(jsRequest),
		"version":    js.FuncOf(jsVersion),
		"reset":      js.FuncOf(jsReset),
		"setWebhook": js.FuncOf(jsSetWebhook),
		"evaluate":   js.FuncOf(jsEvaluate),
		"cel":        js.FuncOf(jsCEL),
		"kubectl":    js.FuncOf(jsKubectl),
	}))
	// Keep the program (and so the functions above) alive; the Go runtime yields to the event loop here.
	select {}
}

// quietKlog sends klog's output nowhere. Upstream code logs through klog on ordinary requests: a body with a
// value of the wrong type makes managedfields' UpdateNoErrors log "[SHOULD NOT HAPPEN] failed to update
// managedFields" before validation answers 422 (kube-apiserver logs the same line for the same request; see
// engine/internal/apiserver/create.go). In a server that line goes to the operator's log; in the page, Go's
// stderr is the browser console, where it would read as the page's own fault on every type error. The API's
// answer says all there is to say, so the log is dropped.
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	// logtostderr (klog's default) bypasses the outputs; stderrthreshold still copies errors to stderr.
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := fs.Set(name, value); err != nil {
			js.Global().Get("console").Call("warn", "crdplay: klog "+name+": "+err.Error())
		}
	}
	klog.SetOutput(io.Discard)
}

// parseArgs reads the program's flags: --emulated-version=1.35 (or --emulated-version 1.35). The value is
// checked by the engine, whose error names the versions it can emulate.
func parseArgs(args []string) error {
	fs := flag.NewFlagSet("crdplay", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&emulatedVersion, "emulated-version", "", "the Kubernetes minor to answer as")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: the only flag is --emulated-version", fs.Args())
	}
	return nil
}

// reset installs a new engine over an empty in-memory store.
func reset() error {
	h, err := engine.NewHandler(engine.Options{Storage: engine.NewMemoryStorage(), Webhook: jsWebhook{}, EmulatedVersion: emulatedVersion})
	if err != nil {
		return err
	}
	handler.Store(&h)
	return nil
}

// jsRequest is crdplay.request(req): it validates req now (a malformed one is rejected at once, with what is
// wrong) and serves it on a goroutine.
func jsRequest(_ js.Value, args []js.Value) any {
	var arg js.Value
	if len(args) > 0 {
		arg = args[0]
	}
	req, cancel, err := parseRequest(arg)
	if errors.Is(err, errWatchNeedsTimeout) {
		return js.Global().Get("Promise").Call("resolve", js.ValueOf(watchRefusal()))
	}
	if err != nil {
		return rejected(&bridgeError{msg: "crdplay.request: " + err.Error()})
	}
	return makePromise(func() (any, error) {
		defer cancel()
		return serve(req)
	})
}

// jsVersion is crdplay.version().
func jsVersion(js.Value, []js.Value) any {
	versions := engine.EmulatedVersions()
	list := make([]any, len(versions))
	for i, x := range versions {
		list[i] = x
	}
	v := map[string]any{"revision": "", "modified": false, "go": runtime.Version(), "kubernetes": kubernetesVersion,
		"emulated": emulatedMinor, "emulatedVersions": list}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v["revision"] = s.Value
			case "vcs.modified":
				v["modified"] = s.Value == "true"
			}
		}
	}
	return js.ValueOf(v)
}

// jsReset is crdplay.reset(). It returns a Promise although it finishes at once, so that the page's proxy,
// which must go through the worker, has the same signature.
func jsReset(js.Value, []js.Value) any {
	return makePromise(func() (any, error) { return nil, reset() })
}

// jsSetWebhook is crdplay.setWebhook(fn): fn is called for every ConversionReview of every CRD whose
// conversion strategy is Webhook, whatever its clientConfig says. null or undefined removes it.
func jsSetWebhook(_ js.Value, args []js.Value) any {
	if len(args) == 0 || args[0].IsNull() || args[0].IsUndefined() {
		pageWebhook.Store(nil)
		return js.Undefined()
	}
	if args[0].Type() != js.TypeFunction {
		// Returned, not thrown: a Go callback cannot throw without ending the program.
		return (&bridgeError{msg: "crdplay.setWebhook: want a function or null, got " + typeName(args[0])}).js()
	}
	fn := args[0]
	pageWebhook.Store(&fn)
	return js.Undefined() // nil would be null
}

// jsEvaluate is crdplay.evaluate(inputJSON): a playground.Input as JSON in, a Promise of the
// playground.Result as JSON out.
func jsEvaluate(_ js.Value, args []js.Value) any {
	return jsonCall("evaluate", args, session.Evaluate)
}

// jsCEL is crdplay.cel(inputJSON): the CEL scratchpad, a playground.CELInput as JSON in, a Promise of the
// playground.CELResult as JSON out.
func jsCEL(_ js.Value, args []js.Value) any {
	return jsonCall("cel", args, session.CEL)
}

// jsonCall runs one of the session's methods for crdplay.<name>(inputJSON). Strings both ways, because a
// Result is a deep tree (schemas, objects) that js.ValueOf would copy node by node, while JSON.parse does it
// natively. A malformed input is rejected at once; calls run one at a time (the session's lock) on their own
// goroutine, like requests.
func jsonCall[In, Out any](name string, args []js.Value, run func(context.Context, In) (Out, error)) any {
	if len(args) == 0 || args[0].Type() != js.TypeString {
		var got js.Value
		if len(args) > 0 {
			got = args[0]
		}
		return rejected(&bridgeError{msg: "crdplay." + name + ": want a JSON string (JSON.stringify of the input), got " + typeName(got)})
	}
	var in In
	if err := json.Unmarshal([]byte(args[0].String()), &in); err != nil {
		return rejected(&bridgeError{msg: "crdplay." + name + ": input: " + err.Error()})
	}
	return makePromise(func() (any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		res, err := run(ctx, in)
		if err != nil {
			return nil, &bridgeError{msg: "crdplay." + name + ": " + err.Error()}
		}
		out, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		return string(out), nil
	})
}

// jsKubectl is crdplay.kubectl({args, files, namespace}): a kubectl command line (args: the line as typed, or
// its words) run against the store that request() serves, with files as what -f can name. The result is
// what kubectl would print, its exit code and the requests it made; kubectl's own errors are part of the
// result, and only a malformed input is rejected.
func jsKubectl(_ js.Value, args []js.Value) any {
	line, words, opts, err := parseKubectlInput(arg(args, 0))
	if err != nil {
		return rejected(&bridgeError{msg: "crdplay.kubectl: " + err.Error()})
	}
	return makePromise(func() (any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		h := *handler.Load()
		var res kubectl.Result
		if words != nil {
			res = kubectl.RunArgs(ctx, h, words, opts)
		} else {
			res = kubectl.Run(ctx, h, line, opts)
		}
		requests := make([]any, len(res.Requests))
		for i, x := range res.Requests {
			requests[i] = map[string]any{
				"method":          x.Method,
				"path":            x.Path,
				"query":           x.Query,
				"requestHeaders":  stringMap(x.RequestHeaders),
				"requestBody":     x.RequestBody,
				"status":          x.Status,
				"responseHeaders": stringMap(x.ResponseHeaders),
				"responseBody":    x.ResponseBody,
			}
		}
		return map[string]any{"stdout": res.Stdout, "stderr": res.Stderr, "output": res.Output, "exitCode": res.ExitCode, "requests": requests}, nil
	})
}

// parseKubectlInput checks crdplay.kubectl's argument: exactly one of line and words is set.
func parseKubectlInput(v js.Value) (line string, words []string, opts kubectl.Options, err error) {
	if v.Type() != js.TypeObject || js.Global().Get("Array").Call("isArray", v).Bool() {
		return "", nil, opts, fmt.Errorf("want an object {args, files, namespace}, got %s", typeName(v))
	}
	a := v.Get("args")
	switch {
	case a.Type() == js.TypeString:
		line = a.String()
	case js.Global().Get("Array").Call("isArray", a).Bool():
		words = make([]string, a.Length())
		for i := range words {
			if a.Index(i).Type() != js.TypeString {
				return "", nil, opts, fmt.Errorf("args[%d]: want a string, got %s", i, typeName(a.Index(i)))
			}
			words[i] = a.Index(i).String()
		}
	default:
		return "", nil, opts, fmt.Errorf("args: want a string or an array of strings, got %s", typeName(a))
	}
	if f := v.Get("files"); !f.IsUndefined() && !f.IsNull() {
		if f.Type() != js.TypeObject || js.Global().Get("Array").Call("isArray", f).Bool() {
			return "", nil, opts, fmt.Errorf("files: want an object of file names to texts, got %s", typeName(f))
		}
		opts.Files = map[string]string{}
		keys := js.Global().Get("Object").Call("keys", f)
		for i := 0; i < keys.Length(); i++ {
			name := keys.Index(i).String()
			if f.Get(name).Type() != js.TypeString {
				return "", nil, opts, fmt.Errorf("files[%q]: want a string, got %s", name, typeName(f.Get(name)))
			}
			opts.Files[name] = f.Get(name).String()
		}
	}
	if ns := v.Get("namespace"); !ns.IsUndefined() && !ns.IsNull() {
		if ns.Type() != js.TypeString {
			return "", nil, opts, fmt.Errorf("namespace: want a string, got %s", typeName(ns))
		}
		opts.Namespace = ns.String()
	}
	return line, words, opts, nil
}

// stringMap converts for js.ValueOf, which takes map[string]any but not map[string]string.
func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// parseRequest turns the page's request object into an *http.Request as net/http's server would hand it to
// a handler (inproc.NewRequest), with a context that bounds it. It checks every field's type itself rather
// than trusting js.Value's accessors, which panic on a wrong type.
func parseRequest(v js.Value) (req *http.Request, cancel context.CancelFunc, err error) {
	if v.Type() != js.TypeObject {
		return nil, nil, fmt.Errorf("want an object {method, path, headers, body}, got %s", typeName(v))
	}
	method := "GET"
	if m := v.Get("method"); !m.IsUndefined() && !m.IsNull() {
		if m.Type() != js.TypeString {
			return nil, nil, fmt.Errorf("method: want a string, got %s", typeName(m))
		}
		// As fetch does for the standard methods; the engine matches them in upper case.
		method = strings.ToUpper(m.String())
	}
	p := v.Get("path")
	if p.Type() != js.TypeString {
		return nil, nil, fmt.Errorf("path: want a string such as \"/apis\", got %s", typeName(p))
	}
	path := p.String()
	if !strings.HasPrefix(path, "/") {
		return nil, nil, fmt.Errorf("path: want an absolute path starting with /, got %q", path)
	}
	var body []byte
	if b := v.Get("body"); !b.IsUndefined() && !b.IsNull() {
		if b.Type() != js.TypeString {
			return nil, nil, fmt.Errorf("body: want a string, got %s", typeName(b))
		}
		body = []byte(b.String())
	}
	header := http.Header{}
	if h := v.Get("headers"); !h.IsUndefined() && !h.IsNull() {
		if h.Type() != js.TypeObject {
			return nil, nil, fmt.Errorf("headers: want an object of strings or string arrays, got %s", typeName(h))
		}
		keys := js.Global().Get("Object").Call("keys", h)
		for i := 0; i < keys.Length(); i++ {
			name := keys.Index(i).String()
			val := h.Get(name)
			switch {
			case val.Type() == js.TypeString:
				header.Add(name, val.String())
			case js.Global().Get("Array").Call("isArray", val).Bool():
				for j := 0; j < val.Length(); j++ {
					if val.Index(j).Type() != js.TypeString {
						return nil, nil, fmt.Errorf("headers[%q][%d]: want a string, got %s", name, j, typeName(val.Index(j)))
					}
					header.Add(name, val.Index(j).String())
				}
			default:
				return nil, nil, fmt.Errorf("headers[%q]: want a string or an array of strings, got %s", name, typeName(val))
			}
		}
	}

	req, err = inproc.NewRequest(context.Background(), method, path, header, body)
	if err != nil {
		return nil, nil, err
	}

	// A watch streams until its client goes away, but a Promise settles once: serve a watch only for the
	// time the caller asks for, and refuse one that would never end.
	timeout := requestTimeout
	info, err := watchInfo.NewRequestInfo(req)
	if err == nil && info.Verb == "watch" {
		secs, _ := strconv.ParseInt(req.URL.Query().Get("timeoutSeconds"), 10, 64)
		if secs <= 0 {
			return nil, nil, errWatchNeedsTimeout
		}
		timeout = time.Duration(secs)*time.Second + watchGrace
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	return req.WithContext(ctx), cancel, nil
}

// errWatchNeedsTimeout is answered as a 400 Status, not a rejection: the request is well formed, the API just
// cannot serve it here, and a client shows a Status like any other.
var errWatchNeedsTimeout = errors.New("watch requests need timeoutSeconds: a watch streams until its client " +
	"disconnects, but crdplay.request returns one whole response, so add e.g. &timeoutSeconds=5 to collect " +
	"the events of 5 seconds")

// serve runs the engine on req and returns the response object, {status, headers, body}. A header with one
// value is a string, one with several (Warning, typically) an array, in the order the engine added them.
// It runs on its own goroutine (see makePromise); the engine runs on another, so that a handler that ignores
// its cancelled context for stuckGrace rejects the Promise instead of holding it.
func serve(req *http.Request) (any, error) {
	resp, err := inproc.Serve(*handler.Load(), req, inproc.Options{Grace: stuckGrace})
	if perr, ok := errors.AsType[*inproc.PanicError](err); ok {
		return nil, &bridgeError{msg: "engine: " + perr.Error(), stack: string(perr.Stack)}
	}
	if err != nil {
		return nil, err
	}
	headers := map[string]any{}
	for k, vs := range resp.Header {
		if len(vs) == 1 {
			headers[k] = vs[0]
			continue
		}
		arr := make([]any, len(vs))
		for i, v := range vs {
			arr[i] = v
		}
		headers[k] = arr
	}
	return map[string]any{"status": resp.StatusCode, "headers": headers, "body": string(resp.Body)}, nil
}

// watchRefusal is the response to a watch without timeoutSeconds.
func watchRefusal() any {
	st := apierrors.NewBadRequest(errWatchNeedsTimeout.Error()).Status()
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	body, _ := json.Marshal(st)
	return map[string]any{
		"status":  int(st.Code),
		"headers": map[string]any{"Content-Type": "application/json"},
		"body":    string(body),
	}
}

// jsWebhook is the engine's WebhookCaller: it hands each ConversionReview to the page's function.
type jsWebhook struct{}

// Call runs on the request's goroutine (never on a JavaScript callback), so it may wait for the page's
// Promise: the event loop is free to settle it meanwhile.
func (jsWebhook) Call(ctx context.Context, cfg apiextensionsv1.WebhookClientConfig, review []byte) (out []byte, err error) {
	fn := pageWebhook.Load()
	if fn == nil {
		return nil, errors.New("webhook unreachable: the page has set no conversion webhook (crdplay.setWebhook)")
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	// Invoke panics with a js.Error if fn throws instead of returning a rejected Promise.
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("conversion webhook threw: %v", p)
		}
	}()
	res, err := await(ctx, fn.Invoke(string(review), string(cfgJSON)))
	if err != nil {
		return nil, err
	}
	if res.Type() != js.TypeString {
		return nil, fmt.Errorf("conversion webhook: want a JSON string from the page's function, got %s", typeName(res))
	}
	return []byte(res.String()), nil
}

// await waits for a Promise (or any value, as Promise.resolve takes it) to settle. It must not be called on a
// js.FuncOf callback's stack. A rejection becomes an error with the reason's message, verbatim, so that the
// page decides what the engine reports (for instance net/http's wording for a refused connection).
func await(ctx context.Context, v js.Value) (js.Value, error) {
	type settled struct {
		v   js.Value
		err error
	}
	ch := make(chan settled, 1)
	then := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{v: arg(args, 0)}
		return nil
	})
	catch := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{err: errors.New(reason(arg(args, 0)))}
		return nil
	})
	js.Global().Get("Promise").Call("resolve", v).Call("then", then, catch)
	select {
	case s := <-ch:
		then.Release()
		catch.Release()
		return s.v, s.err
	case <-ctx.Done():
		// The Promise may still settle and call then or catch: release them only after that.
		go func() {
			<-ch
			then.Release()
			catch.Release()
		}()
		return js.Undefined(), ctx.Err()
	}
}

// bridgeError is what a rejected Promise carries, as {error, stack}: a message, and a Go stack when the cause
// was a panic.
type bridgeError struct {
	msg, stack string
}

func (e *bridgeError) Error() string { return e.msg }

func (e *bridgeError) js() js.Value {
	m := map[string]any{"error": e.msg}
	if e.stack != "" {
		m["stack"] = e.stack
	}
	return js.ValueOf(m)
}

// makePromise runs fn on a new goroutine and returns a Promise of its result: resolved with the value, or
// rejected with {error, stack} for an error or a panic. fn may block; the executor returns at once.
func makePromise(fn func() (any, error)) js.Value {
	executor := js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			defer func() {
				if p := recover(); p != nil {
					reject.Invoke((&bridgeError{msg: fmt.Sprint("crdplay: panic: ", p), stack: string(debug.Stack())}).js())
				}
			}()
			v, err := fn()
			var be *bridgeError
			switch {
			case errors.As(err, &be):
				reject.Invoke(be.js())
			case err != nil:
				reject.Invoke((&bridgeError{msg: err.Error()}).js())
			default:
				resolve.Invoke(js.ValueOf(v))
			}
		}()
		return nil
	})
	defer executor.Release() // the Promise constructor calls it synchronously
	return js.Global().Get("Promise").New(executor)
}

// rejected returns a Promise already rejected with e.
func rejected(e *bridgeError) js.Value {
	return js.Global().Get("Promise").Call("reject", e.js())
}

// readKubernetesVersion asks the engine for its /version, as a client would: its gitVersion and emulation
// version ("1.35").
func readKubernetesVersion() (gitVersion, emulated string) {
	req, err := inproc.NewRequest(context.Background(), "GET", "/version", nil, nil)
	if err != nil {
		return "", ""
	}
	resp, err := inproc.Serve(*handler.Load(), req, inproc.Options{})
	if err != nil {
		return "", ""
	}
	var v struct {
		GitVersion     string `json:"gitVersion"`
		EmulationMajor string `json:"emulationMajor"`
		EmulationMinor string `json:"emulationMinor"`
	}
	_ = json.Unmarshal(resp.Body, &v)
	if v.EmulationMajor != "" {
		emulated = v.EmulationMajor + "." + v.EmulationMinor
	}
	return v.GitVersion, emulated
}

func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// reason is the message of a rejection: an Error's message, a string as it is, anything else as String(x).
func reason(v js.Value) string {
	if v.Type() == js.TypeObject {
		if m := v.Get("message"); m.Type() == js.TypeString {
			return m.String()
		}
		if m := v.Get("error"); m.Type() == js.TypeString {
			return m.String()
		}
	}
	if v.Type() == js.TypeString {
		return v.String()
	}
	return js.Global().Call("String", v).String()
}

// typeName names a value's type for messages, telling null and arrays from other objects.
func typeName(v js.Value) string {
	switch {
	case v.IsNull():
		return "null"
	case v.Type() == js.TypeObject && js.Global().Get("Array").Call("isArray", v).Bool():
		return "array"
	}
	return v.Type().String()
}
