// client.js is the page's side of crdplay: an object with the engine's API (see crdplay.d.ts) whose calls go to
// the engine in worker.js over postMessage. It is an ES module with no dependencies, so that a bundler can take
// it as it is; the worker, the wasm and wasm_exec.js are separate files found next to this module unless the
// options say otherwise.
//
//   import { install } from './client.js';
//   const crdplay = install();               // also window.crdplay
//   crdplay.addEventListener('progress', (e) => bar.value = e.detail.loaded / e.detail.total);
//   await crdplay.ready;
//   const resp = await crdplay.request({ method: 'GET', path: '/apis' });

/** @typedef {import('./crdplay.d.ts').CrdplayRequest} CrdplayRequest */
/** @typedef {import('./crdplay.d.ts').CrdplayResponse} CrdplayResponse */
/** @typedef {import('./crdplay.d.ts').CrdplayVersion} CrdplayVersion */
/** @typedef {import('./crdplay.d.ts').CrdplayWebhook} CrdplayWebhook */
/** @typedef {import('./crdplay.d.ts').CrdplayReady} CrdplayReady */
/** @typedef {import('./crdplay.d.ts').CrdplayClientOptions} CrdplayClientOptions */
/** @typedef {import('./crdplay.d.ts').CrdplayError} CrdplayError */
/** @typedef {import('./crdplay.d.ts').CrdplayClient} CrdplayClientAPI */

/**
 * The engine in a worker. Events: 'progress' ({loaded, total} in detail: the wasm's bytes on the wire, see
 * countProgress in worker.js), 'ready' (CrdplayReady), 'failed' ({error}), 'exit' ({code}).
 */
export class CrdplayClient extends EventTarget {
  /** @type {Worker} */
  #worker;
  /** Calls awaiting a reply, by id. */
  #calls = new Map();
  #seq = 0;
  /** @type {CrdplayVersion | null} */
  #version = null;
  /** @type {CrdplayWebhook | null} */
  #webhook = null;
  /** @type {{error: string, stack?: string} | null} why calls fail from now on */
  #dead = null;
  /** @type {string[]} the bridge's functions, known once the engine is ready */
  #methods = [];
  /** @type {import('./crdplay.d.ts').CrdplayProgress | null} the latest download progress, for late listeners */
  lastProgress = null;

  /** @param {CrdplayClientOptions} [options] */
  constructor(options = {}) {
    super();
    const here = import.meta.url;
    /** @type {(u: string | URL | undefined, name: string) => string} */
    const url = (u, name) => new URL(u ?? name, here).href;
    /** @type {Promise<CrdplayReady>} resolves once the engine serves; rejects if it cannot start */
    this.ready = new Promise((resolve, reject) => {
      this.addEventListener('ready', (e) => resolve(/** @type {CustomEvent} */ (e).detail));
      this.addEventListener('failed', (e) => reject(/** @type {CustomEvent} */ (e).detail));
    });
    this.ready.catch(() => {}); // reported by the 'failed' event too; unawaited is fine
    this.#worker = new Worker(url(options.workerURL, './worker.js'));
    this.#worker.onmessage = (e) => this.#receive(e.data);
    this.#worker.onerror = (e) => this.#die('failed', { error: `crdplay worker: ${e.message || 'failed to load'}` });
    // Absolute URLs: the worker resolves relative ones against its own URL, not the page's.
    /** @type {string} the Kubernetes minor the engine was asked to emulate ("1.35"); "" for the newest */
    this.emulatedVersion = options.emulatedVersion ?? '';
    this.#worker.postMessage({
      op: 'init',
      wasmURL: url(options.wasmURL, './crdplay.wasm'),
      wasmExecURL: url(options.wasmExecURL, './wasm_exec.js'),
      emulatedVersion: this.emulatedVersion || undefined,
    });
  }

  /**
   * Sends one request to the engine.
   * @param {CrdplayRequest} req
   * @returns {Promise<CrdplayResponse>}
   */
  request(req) {
    return this.#call('request', req);
  }

  /**
   * Calls another function of the bridge (such as evaluate or kubectl) with one structured-cloneable argument.
   * Rejects with a CrdplayError when the engine has no such function.
   * @param {string} method
   * @param {unknown} [arg]
   * @returns {Promise<any>}
   */
  call(method, arg) {
    return this.#call('call', arg, method);
  }

  /**
   * Whether the engine has a function; false until it is ready.
   * @param {string} method
   * @returns {boolean}
   */
  has(method) {
    return this.#methods.includes(method);
  }

  /**
   * Empties the engine's store.
   * @returns {Promise<void>}
   */
  reset() {
    return this.#call('reset');
  }

  /**
   * The engine's version; throws before the engine is ready (await this.ready first).
   * @returns {CrdplayVersion}
   */
  version() {
    if (!this.#version) throw new Error('crdplay: the engine is not ready yet (await crdplay.ready)');
    return this.#version;
  }

  /**
   * Sets the function that answers conversion webhooks (null removes it). Like the engine's own setWebhook it
   * returns {error} for anything but a function or null, rather than throwing.
   * @param {CrdplayWebhook | null} fn
   */
  setWebhook(fn) {
    if (fn != null && typeof fn !== 'function') {
      return { error: `crdplay.setWebhook: want a function or null, got ${typeof fn}` };
    }
    this.#webhook = fn ?? null;
    this.#worker.postMessage({ op: 'setWebhook', enabled: this.#webhook !== null });
    return undefined;
  }

  /** Stops the worker and fails every call from now on. */
  terminate() {
    this.#worker.terminate();
    this.#die('exit', { code: null });
  }

  /**
   * @param {'request' | 'reset' | 'call'} op
   * @param {unknown} [arg]
   * @param {string} [method] for op 'call'
   * @returns {Promise<any>}
   */
  #call(op, arg, method) {
    if (this.#dead) return Promise.reject(this.#dead);
    return new Promise((resolve, reject) => {
      const id = ++this.#seq;
      try {
        this.#worker.postMessage({ op, id, arg, method });
      } catch (err) {
        // Not cloneable (a function in the request, say): the engine never sees it.
        reject({ error: `crdplay.${method ?? op}: ${err instanceof Error ? err.message : String(err)}` });
        return;
      }
      this.#calls.set(id, { resolve, reject });
    });
  }

  /** @param {any} m a message from worker.js */
  #receive(m) {
    switch (m.type) {
      case 'reply': {
        const call = this.#calls.get(m.id);
        this.#calls.delete(m.id);
        if (call) m.ok ? call.resolve(m.value) : call.reject(m.error);
        break;
      }
      case 'progress':
        this.lastProgress = { loaded: m.loaded, total: m.total };
        this.#emit('progress', this.lastProgress);
        break;
      case 'ready': {
        this.#version = m.version;
        this.#methods = Array.isArray(m.methods) ? m.methods : [];
        // The worker's clock is its own: move its timestamps onto the page's (ms since navigation start).
        /** @type {Record<string, number>} */
        const t = {};
        for (const [k, v] of Object.entries(m.timings)) t[k] = v - performance.timeOrigin;
        this.#emit('ready', { version: m.version, timings: { ...t, page: performance.now() } });
        break;
      }
      case 'webhook':
        this.#convert(m);
        break;
      case 'failed':
        this.#die('failed', m.error);
        break;
      case 'exit':
        this.#die('exit', { code: m.code });
        break;
      default:
        console.error('crdplay: unknown message from the worker', m);
    }
  }

  /**
   * Answers a webhook call from the engine with the page's function.
   * @param {{id: number, review: string, clientConfig: string}} call
   */
  #convert({ id, review, clientConfig }) {
    const fn = this.#webhook;
    Promise.resolve()
      .then(() => {
        if (!fn) throw new Error('webhook unreachable: the page has set no conversion webhook (crdplay.setWebhook)');
        return fn(review, clientConfig);
      })
      .then(
        (value) => this.#worker.postMessage({ op: 'webhookReply', id, ok: true, value }),
        (err) => this.#worker.postMessage({
          op: 'webhookReply', id, ok: false, error: err instanceof Error ? err.message : String(err),
        }),
      );
  }

  /**
   * Fails pending and future calls, then tells listeners.
   * @param {'failed' | 'exit'} type
   * @param {any} detail
   */
  #die(type, detail) {
    if (!this.#dead) {
      this.#dead = type === 'exit'
        ? { error: 'crdplay: the engine has exited; reload the page' }
        : { error: detail?.error ?? 'crdplay: the engine failed to start', stack: detail?.stack };
      for (const call of this.#calls.values()) call.reject(this.#dead);
      this.#calls.clear();
    }
    this.#emit(type, detail);
  }

  /**
   * @param {string} type
   * @param {unknown} detail
   */
  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}

/**
 * Starts the engine in a worker and makes it window.crdplay (globalThis.crdplay).
 * @param {CrdplayClientOptions} [options]
 * @returns {CrdplayClientAPI} the client, typed with its events
 */
export function install(options) {
  const client = /** @type {CrdplayClientAPI} */ (/** @type {unknown} */ (new CrdplayClient(options)));
  globalThis.crdplay = client;
  return client;
}
