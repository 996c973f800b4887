// worker.js runs crdplay.wasm (the engine, see wasm/main_js.go) in a Web Worker and serves its API to the page
// over postMessage; client.js is the page's side. The engine runs here, not in the page, so that a slow request
// (a big CRD's validation, a cold start of 50 MB of WebAssembly) never freezes the page.
//
// A classic worker (importScripts), because Go's wasm_exec.js is a classic script that defines globalThis.Go.
//
// Page -> worker messages:
//   {op: 'init', wasmURL, wasmExecURL, emulatedVersion}  first, once: load and start the engine, emulating
//                                            emulatedVersion ("1.35"; absent: the newest). Upstream keeps
//                                            emulation process-wide: one worker serves one version.
//   {op: 'request' | 'reset', id, arg}       a call; answered by {type: 'reply', id, ok, value | error}
//   {op: 'call', id, method, arg}            a call of another method of the bridge (evaluate, kubectl...),
//                                            answered the same way; methods lists what the engine has
//   {op: 'setWebhook', enabled}              route conversion webhooks to the page (or stop)
//   {op: 'webhookReply', id, ok, value | error}  the page's answer to a {type: 'webhook'} message
// Worker -> page messages:
//   {type: 'progress', loaded, total}        download progress of the wasm, bytes on the wire (total 0 when unknown)
//   {type: 'ready', version, methods, timings}  the engine is serving; timings in ms, see start()
//   {type: 'failed', error}                  the engine could not start
//   {type: 'exit', code}                     the Go program ended (it should not): later calls fail
//   {type: 'webhook', id, review, clientConfig}  a ConversionReview for the page's webhook function
'use strict';

/** @type {Promise<void> | null} settles when the engine is up (or could not start) */
let started = null;
/** Conversion webhook calls awaiting the page's answer, by id. */
const webhookCalls = new Map();
let webhookSeq = 0;

self.onmessage = (event) => {
  const m = event.data;
  switch (m.op) {
    case 'init':
      if (!started) {
        started = start(m);
        started.catch(() => {}); // reported by the 'failed' message; calls still see the rejection
      }
      break;
    case 'request':
    case 'reset':
      answer(m.id, () => self.crdplay[m.op](m.arg));
      break;
    case 'call':
      answer(m.id, () => {
        // Only the bridge's own functions, and not those with their own ops (setWebhook takes a function).
        if (typeof m.method !== 'string' || ['setWebhook', 'version'].includes(m.method) ||
          !Object.prototype.hasOwnProperty.call(self.crdplay, m.method) || typeof self.crdplay[m.method] !== 'function') {
          throw new Error(`crdplay.${m.method}: this engine has no such method`);
        }
        return self.crdplay[m.method](m.arg);
      });
      break;
    case 'setWebhook':
      // A failed start is reported by its own message.
      whenStarted(() => self.crdplay.setWebhook(m.enabled ? pageWebhook : null)).catch(() => {});
      break;
    case 'webhookReply': {
      const call = webhookCalls.get(m.id);
      webhookCalls.delete(m.id);
      // An Error, so that the engine reports its message verbatim (see await in wasm/main_js.go).
      if (call) m.ok ? call.resolve(m.value) : call.reject(new Error(m.error));
      break;
    }
    default:
      console.error('crdplay worker: unknown message', m);
  }
};

/** Runs fn once the engine is up; messages may arrive while it is still loading. */
function whenStarted(fn) {
  if (!started) return Promise.reject({ error: 'crdplay worker: not initialised (no init message)' });
  return started.then(fn);
}

/** Calls fn once the engine is up and posts its result, or its failure as {error, stack}. */
function answer(id, fn) {
  whenStarted(fn).then(
    (value) => postMessage({ type: 'reply', id, ok: true, value }),
    (err) => postMessage({ type: 'reply', id, ok: false, error: plainError(err) }),
  );
}

/** The engine rejects with {error, stack}; anything else (an Error, a string) is made to look the same. */
function plainError(err) {
  if (err && typeof err.error === 'string') return { error: err.error, stack: err.stack };
  if (err instanceof Error) return { error: err.message, stack: err.stack };
  return { error: String(err) };
}

/** The webhook given to the engine: it asks the page, whose function cannot cross postMessage. */
function pageWebhook(review, clientConfig) {
  return new Promise((resolve, reject) => {
    const id = ++webhookSeq;
    webhookCalls.set(id, { resolve, reject });
    postMessage({ type: 'webhook', id, review, clientConfig });
  });
}

/**
 * Downloads, compiles and starts the engine. Timings are epoch ms (performance.timeOrigin + now, so that the
 * page can put them on its own clock): `fetched` when the response headers arrived, `compiled` when the module
 * was downloaded and instantiated (streaming: compiling overlaps the download), `ready` when the Go program's
 * main had set up globalThis.crdplay.
 */
async function start({ wasmURL, wasmExecURL, emulatedVersion }) {
  try {
    importScripts(wasmExecURL);
    const go = new Go();
    // The program's flags, as kube-apiserver's (wasm/main_js.go reads os.Args).
    if (emulatedVersion) go.argv = ['crdplay', `--emulated-version=${emulatedVersion}`];
    let exitCode = 0;
    go.exit = (code) => { exitCode = code; };

    const resp = await fetch(wasmURL);
    if (!resp.ok) throw new Error(`${wasmURL}: HTTP ${resp.status} ${resp.statusText}`);
    const fetched = now();
    const { instance } = await WebAssembly.instantiateStreaming(countProgress(resp), go.importObject);
    const compiled = now();

    // run() executes main until it blocks (after it set globalThis.crdplay), then returns to us; the
    // Promise it returns settles only if the program ends.
    go.run(instance).then(() => postMessage({ type: 'exit', code: exitCode }));
    // A setup fault (an emulated version the engine does not have) ends main with its reason in crdplayError.
    if (!self.crdplay) throw new Error(self.crdplayError || 'crdplay.wasm started but did not set globalThis.crdplay (see the console)');
    const ready = now();
    const methods = Object.keys(self.crdplay).filter((k) => typeof self.crdplay[k] === 'function');
    postMessage({ type: 'ready', version: self.crdplay.version(), methods, timings: { fetched, compiled, ready } });
  } catch (err) {
    postMessage({ type: 'failed', error: plainError(err) });
    throw err;
  }
}

function now() {
  return performance.timeOrigin + performance.now();
}

/**
 * Returns a Response for instantiateStreaming that posts download progress as the body streams in, in bytes
 * on the wire: what the visitor waits for is the compressed download (a few MB), not the decoded wasm (tens of
 * MB). The stream yields decoded bytes, so with Content-Encoding the count is carried onto the encoded
 * Content-Length in proportion to the decoded total (the server's X-Decoded-Content-Length): an estimate while
 * it streams (the compression ratio varies along the file), exact at the end. Without an encoding,
 * Content-Length counts both. An encoded response without the decoded total gives decoded bytes, total 0.
 */
function countProgress(resp) {
  const length = Number(resp.headers.get('Content-Length')) || 0;
  const decodedTotal = resp.headers.get('Content-Encoding')
    ? Number(resp.headers.get('X-Decoded-Content-Length')) || 0
    : length;
  const total = decodedTotal ? length : 0;
  const wire = (decoded) => (total && decodedTotal ? Math.min(total, Math.round(decoded * total / decodedTotal)) : decoded);
  let loaded = 0;
  let posted = 0;
  const counter = new TransformStream({
    transform(chunk, controller) {
      loaded += chunk.byteLength;
      // At most every 50 ms: a 50 MB download arrives in thousands of chunks.
      const t = performance.now();
      if (t - posted >= 50) {
        posted = t;
        postMessage({ type: 'progress', loaded: wire(loaded), total });
      }
      controller.enqueue(chunk);
    },
    flush() {
      postMessage({ type: 'progress', loaded: total || loaded, total: total || loaded });
    },
  });
  postMessage({ type: 'progress', loaded: 0, total });
  return new Response(resp.body.pipeThrough(counter), { headers: { 'Content-Type': 'application/wasm' } });
}
