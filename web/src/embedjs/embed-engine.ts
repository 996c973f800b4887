// The engine frame (embed/engine.html): the one engine of a docs page that embed.js made live. It is hidden;
// every embed frame of the page talks to it over a MessagePort that embed.js hands to both, so that five
// examples on a page start one worker and one wasm instance, not five.
//
// The engine's evaluator keeps one session (the CRD text it installed, wasm/main_js.go), and a frame sends its
// CRD text only when it changed (evaluate.ts): with several frames that is only true of the frame that
// evaluated last. So evaluations run here one at a time, and one from another frame than the last gets its
// frame's last CRD texts put back in.
import { install } from '../../static/client.js';
import type { CrdplayClient, CrdplayWebhook } from '../../static/crdplay.d.ts';
import { CONNECT, ENGINE_HELLO, fromHost, hostTarget, METHODS } from './protocol';

const assets = JSON.parse(document.getElementById('crdplay-assets')?.textContent ?? '{}');
const host = new URLSearchParams(location.search).get('host') ?? '';
const client: CrdplayClient = install({
  workerURL: new URL(assets.worker, location.href),
  wasmURL: new URL(assets.wasm, location.href),
  wasmExecURL: new URL(assets.wasmExec, location.href),
});

/** One embed frame. */
interface Conn {
  port: MessagePort;
  /** The texts of its last evaluation that the engine keeps between evaluations (crds, oldCrds). */
  sticky: Record<string, string>;
  webhook: boolean;
  webhooks: Map<number, { resolve(v: string): void; reject(e: Error): void }>;
}
/** The frame whose evaluation the session holds, and the frame whose call is in flight (for webhooks). */
let last: Conn | null = null;
let current: Conn | null = null;
let queue: Promise<unknown> = Promise.resolve();
let seq = 0;
const STICKY = ['crds', 'oldCrds'];

const webhook: CrdplayWebhook = (review, clientConfig) => new Promise((resolve, reject) => {
  const c = current;
  if (!c?.webhook) throw new Error('webhook unreachable: the page has set no conversion webhook (crdplay.setWebhook)');
  const id = ++seq;
  c.webhooks.set(id, { resolve, reject });
  c.port.postMessage({ type: 'webhook', id, review, clientConfig });
});

function serve(port: MessagePort): void {
  const c: Conn = { port, sticky: {}, webhook: false, webhooks: new Map() };
  const post = (m: unknown) => port.postMessage(m);
  if (client.lastProgress) post({ type: 'progress', ...client.lastProgress });
  client.addEventListener('progress', (e) => post({ type: 'progress', ...(e as CustomEvent).detail }));
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
        const run = (): Promise<unknown> => {
          current = c;
          if (m.op === 'request') return client.request(m.arg);
          if (m.op === 'reset') return client.reset();
          if (m.method !== 'evaluate' || typeof m.arg !== 'string') return client.call(m.method, m.arg);
          const input = JSON.parse(m.arg);
          for (const k of STICKY) {
            if (typeof input[k] === 'string') c.sticky[k] = input[k];
            else if (last !== c && k in c.sticky) input[k] = c.sticky[k];
          }
          last = c;
          return client.call('evaluate', JSON.stringify(input));
        };
        // Evaluations one at a time (see above); other calls at once.
        const done = m.op === 'call' && m.method === 'evaluate' ? (queue = queue.then(run, run)) : run();
        done.then((value) => post({ type: 'reply', id: m.id, ok: true, value }),
          (err) => post({ type: 'reply', id: m.id, ok: false, error: err?.error ? err : { error: String(err?.message ?? err) } }));
        return;
      }
    }
  };
}

client.ready.then(() => client.setWebhook(webhook), () => {});
addEventListener('message', (e) => {
  if (fromHost(e, host) && e.data?.type === CONNECT && e.ports[0]) serve(e.ports[0]);
});
parent.postMessage({ type: ENGINE_HELLO }, hostTarget(host));
