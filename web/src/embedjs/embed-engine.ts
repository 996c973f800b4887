// The engine frame (embed/engine.html): the engine of a docs page that embed.js made live. It is hidden; every
// embed frame of the page talks to it over a MessagePort that embed.js hands to both, so that five examples on
// a page start one worker and one wasm instance, not five. An example asking for an emulated Kubernetes minor
// (data-version="1.35", one the engine emulates but not its newest) gets a worker emulating it, one per minor
// for the page: upstream keeps emulation process-wide, so one engine program emulates one version.
//
// The engine's evaluator keeps one session (the CRD text it installed, wasm/main_js.go), and a frame sends its
// CRD texts only when they changed (evaluate.ts): with several frames that is only true of the frame that
// evaluated last. So each engine's evaluations run here one at a time, and one from another frame than the
// last gets its frame's last CRD texts put back in; so does the CEL scratchpad's call, which compiles against
// the session's CRDs.
import { install, CrdplayClient as WorkerClient } from '../../static/client.js';
import type { CrdplayClient, CrdplayWebhook } from '../../static/crdplay.d.ts';
import { CONNECT, ENGINE_HELLO, fromHost, hostTarget, METHODS } from './protocol';

const assets = JSON.parse(document.getElementById('crdplay-assets')?.textContent ?? '{}');
const host = new URLSearchParams(location.search).get('host') ?? '';
const urls = {
  workerURL: new URL(assets.worker, location.href),
  wasmURL: new URL(assets.wasm, location.href),
  wasmExecURL: new URL(assets.wasmExec, location.href),
};
/** The texts of an evaluation that the engine keeps for the next (playground.Input: nil is "as before"). */
const STICKY = ['crds', 'oldCrds'];

/** One embed frame. */
interface Conn {
  port: MessagePort;
  /** Its last texts of STICKY. */
  sticky: Record<string, string>;
  webhook: boolean;
  webhooks: Map<number, { resolve(v: string): void; reject(e: Error): void }>;
}
/** One engine (a worker) and what its frames share of it. */
interface Engine {
  client: CrdplayClient;
  /** The frame whose evaluation the session holds, and the frame whose call is in flight (for webhooks). */
  last: Conn | null;
  current: Conn | null;
  queue: Promise<unknown>;
}
let seq = 0;

function engine(client: CrdplayClient): Engine {
  const e: Engine = { client, last: null, current: null, queue: Promise.resolve() };
  // The conversion webhook of the frame whose call is in flight.
  const webhook: CrdplayWebhook = (review, clientConfig) => new Promise((resolve, reject) => {
    const c = e.current;
    if (!c?.webhook) throw new Error('webhook unreachable: the page has set no conversion webhook (crdplay.setWebhook)');
    const id = ++seq;
    c.webhooks.set(id, { resolve, reject });
    c.port.postMessage({ type: 'webhook', id, review, clientConfig });
  });
  client.ready.then(() => client.setWebhook(webhook), () => {});
  return e;
}
const newest = engine(install(urls));
const emulating = new Map<string, Engine>();

/** The engine for an emulated minor: the newest's for its own, for none and for one it does not emulate. */
async function engineFor(version: unknown): Promise<Engine> {
  if (typeof version !== 'string' || !version) return newest;
  const ready = await newest.client.ready.catch(() => null);
  const list = ready?.version.emulatedVersions ?? [];
  if (!list.includes(version) || version === ready?.version.emulated) return newest;
  let e = emulating.get(version);
  if (!e) emulating.set(version, e = engine(new WorkerClient({ ...urls, emulatedVersion: version }) as unknown as CrdplayClient));
  return e;
}

function serve(port: MessagePort, e: Engine): void {
  const { client } = e;
  const c: Conn = { port, sticky: {}, webhook: false, webhooks: new Map() };
  const post = (m: unknown) => port.postMessage(m);
  if (client.lastProgress) post({ type: 'progress', ...client.lastProgress });
  client.addEventListener('progress', (ev) => post({ type: 'progress', ...(ev as CustomEvent).detail }));
  client.ready.then((r) => post({ type: 'ready', version: r.version, timings: r.timings, methods: METHODS.filter((m) => client.has(m)) }),
    (err) => post({ type: 'failed', error: err }));
  port.onmessage = ({ data: m }) => {
    switch (m?.op) {
      case 'setWebhook':
        c.webhook = !!m.enabled;
        return;
      case 'webhookReply': {
        const w = c.webhooks.get(m.id);
        c.webhooks.delete(m.id);
        if (w) m.ok ? w.resolve(m.value) : w.reject(new Error(m.error));
        return;
      }
      case 'request':
      case 'reset':
      case 'call': {
        const run = async (): Promise<unknown> => {
          e.current = c;
          if (m.op === 'request') return client.request(m.arg);
          if (m.op === 'reset') return client.reset();
          if (m.method === 'cel' && e.last !== c && typeof c.sticky.crds === 'string') {
            // The scratchpad compiles against the CRDs the session holds, which are another frame's: this
            // frame's go back in first (an evaluation of no objects; the session keeps an unchanged text
            // installed). Its old CRDs of an upgrade cannot go with them (only an upgrade evaluation keeps
            // those), so no frame is the last now: each one's next evaluation brings back all of its texts.
            await client.call('evaluate', JSON.stringify({ crds: c.sticky.crds, objects: '' }));
            e.last = null;
          }
          if (m.method !== 'evaluate' || typeof m.arg !== 'string') return client.call(m.method, m.arg);
          const input = JSON.parse(m.arg);
          for (const k of STICKY) {
            if (typeof input[k] === 'string') c.sticky[k] = input[k];
            else if (e.last !== c && k in c.sticky) input[k] = c.sticky[k];
          }
          e.last = c;
          return client.call('evaluate', JSON.stringify(input));
        };
        // Evaluations and the scratchpad's calls one at a time (see above: both need the frame's CRDs in the
        // session); other calls at once.
        const queued = m.op === 'call' && (m.method === 'evaluate' || m.method === 'cel');
        const done = queued ? (e.queue = e.queue.then(run, run)) : run();
        done.then((value) => post({ type: 'reply', id: m.id, ok: true, value }),
          (err) => post({ type: 'reply', id: m.id, ok: false, error: err?.error ? err : { error: String(err?.message ?? err) } }));
        return;
      }
    }
  };
}

addEventListener('message', (ev) => {
  if (fromHost(ev, host) && ev.data?.type === CONNECT && ev.ports[0]) {
    const port = ev.ports[0];
    void engineFor(ev.data.version).then((e) => serve(port, e));
  }
});
parent.postMessage({ type: ENGINE_HELLO }, hostTarget(host));
