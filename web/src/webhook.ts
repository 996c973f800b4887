// The page's conversion webhook: a JavaScript function the user writes, run in a worker of its own made from
// a Blob, so that it can neither reach the page nor freeze it (a call that takes more than CALL_TIMEOUT ms
// ends the worker, and the engine reports the call as failed, as kube-apiserver reports a webhook that timed out).
// The engine (wasm/main_js.go) checks its answer with upstream's response rules.

export const DEFAULT_WEBHOOK = `// A conversion webhook. The engine calls convert(review) with the ConversionReview kube-apiserver would
// POST to your webhook, and checks the answer as kube-apiserver does.
function convert(review) {
  const { uid, desiredAPIVersion, objects } = review.request;
  return {
    apiVersion: review.apiVersion,
    kind: 'ConversionReview',
    response: {
      uid,
      result: { status: 'Success' },
      convertedObjects: objects.map((o) => ({ ...o, apiVersion: desiredAPIVersion })),
    },
  };
}
`;

const CALL_TIMEOUT = 5000;

const RUNNER = `
self.onmessage = async (e) => {
  const { id, review, clientConfig } = e.data;
  try {
    if (typeof convert !== 'function') throw new Error('the webhook code defines no function convert(review)');
    const out = await convert(JSON.parse(review), JSON.parse(clientConfig || 'null'));
    postMessage({ id, ok: true, value: typeof out === 'string' ? out : JSON.stringify(out) });
  } catch (err) {
    postMessage({ id, ok: false, error: err && err.message ? err.message : String(err) });
  }
};
`;

/** A webhook function for crdplay.setWebhook, backed by a worker running code. */
export class Webhook {
  #code: string;
  #worker: Worker | null = null;
  #url: string | null = null;
  #calls = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void; timer: number }>();
  #seq = 0;
  /** Called with a line for the log of each call. */
  onCall: (line: string) => void = () => {};

  constructor(code: string) {
    this.#code = code;
  }

  setCode(code: string): void {
    if (code === this.#code) return;
    this.#code = code;
    this.stop();
  }

  stop(): void {
    this.#worker?.terminate();
    this.#worker = null;
    if (this.#url) URL.revokeObjectURL(this.#url);
    this.#url = null;
    for (const c of this.#calls.values()) {
      clearTimeout(c.timer);
      c.reject(new Error('the webhook worker was restarted'));
    }
    this.#calls.clear();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    this.#url = URL.createObjectURL(new Blob([this.#code, '\n;', RUNNER], { type: 'text/javascript' }));
    const w = new Worker(this.#url);
    w.onmessage = (e) => {
      const call = this.#calls.get(e.data.id);
      if (!call) return;
      this.#calls.delete(e.data.id);
      clearTimeout(call.timer);
      if (e.data.ok) call.resolve(e.data.value);
      else call.reject(new Error(`webhook: ${e.data.error}`));
    };
    w.onerror = (e) => {
      e.preventDefault();
      const msg = `webhook code: ${e.message}`;
      for (const c of this.#calls.values()) { clearTimeout(c.timer); c.reject(new Error(msg)); }
      this.#calls.clear();
      this.onCall(msg);
    };
    this.#worker = w;
    return w;
  }

  /** The function for crdplay.setWebhook. */
  readonly fn = (review: string, clientConfig: string): Promise<string> => {
    const w = this.#start();
    const id = ++this.#seq;
    let kind = '';
    try { kind = JSON.parse(review)?.request?.desiredAPIVersion ?? ''; } catch { /* shown by the engine */ }
    this.onCall(`ConversionReview to ${kind}`);
    return new Promise((resolve, reject) => {
      const timer = window.setTimeout(() => {
        this.#calls.delete(id);
        this.stop();
        reject(new Error(`webhook: no answer within ${CALL_TIMEOUT / 1000}s (the worker was stopped)`));
      }, CALL_TIMEOUT);
      this.#calls.set(id, { resolve, reject, timer });
      w.postMessage({ id, review, clientConfig });
    });
  };
}
