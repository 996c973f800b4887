// Types of crdplay's browser API, written by hand from wasm/main_js.go (the engine's bridge) and client.js (its
// proxy in the page). Keep the three in step: a change of shape there is a change here.
//
// The same Crdplay interface is globalThis.crdplay in two places: in the worker that runs crdplay.wasm it is
// the engine itself; in the page it is a CrdplayClient that forwards each call to that worker.

/** One API request, as an HTTP client would send it. */
export interface CrdplayRequest {
  /** HTTP method, upper-cased by the engine. Default "GET". */
  method?: string;
  /** Absolute path with the query, e.g. "/apis/stable.example.com/v1/namespaces/default/crontabs?limit=5". */
  path: string;
  /**
   * Request headers, e.g. {"Content-Type": "application/yaml"}. None are added: send Content-Type with a body
   * (without Accept the engine answers JSON). An array sends the name once per value.
   */
  headers?: Record<string, string | string[]>;
  /** Request body: JSON or YAML text. */
  body?: string | null;
}

/** The engine's answer, whole. */
export interface CrdplayResponse {
  /** HTTP status code. Errors are Kubernetes Status objects in body, with the same code. */
  status: number;
  /**
   * Response headers by canonical name ("Content-Type", "Warning"): a string, or an array when the name repeats
   * (several Warning headers, typically).
   */
  headers: Record<string, string | string[]>;
  /** Response body as text: JSON for the API's objects and Status errors. */
  body: string;
}

/**
 * What a rejected Promise carries when the bridge cannot serve a request: a malformed request object (not an
 * object, a path that is not a string...), a panic (with the Go stack), an engine that exited or never
 * started. The API's own errors (404, 409, 422 and the rest) are CrdplayResponses, not this.
 */
export interface CrdplayError {
  error: string;
  /** Go stack of a panic, or a JavaScript stack. */
  stack?: string;
}

export interface CrdplayVersion {
  /** Git commit the wasm was built from; empty when the build had no VCS information. */
  revision: string;
  /** The build had uncommitted changes. */
  modified: boolean;
  /** Go version that built the wasm, e.g. "go1.26.8". */
  go: string;
  /** Kubernetes version the engine answers as (its /version gitVersion), e.g. "v1.37.2". */
  kubernetes: string;
}

/**
 * A conversion webhook implemented by the page. It gets the ConversionReview the engine would POST (JSON text)
 * and the CRD's spec.conversion.webhook.clientConfig (JSON text), and returns the response ConversionReview as
 * JSON text. A thrown or rejected Error makes the call fail with error.message as the transport error, which
 * the engine reports as kube-apiserver reports an unreachable webhook.
 */
export type CrdplayWebhook = (review: string, clientConfig: string) => string | Promise<string>;

/** The engine's API: globalThis.crdplay. */
export interface Crdplay {
  /**
   * Serves one request. A watch (?watch=true, or a /watch/ path) is answered only with ?timeoutSeconds=N: the
   * response then holds the events of those N seconds, one JSON WatchEvent per line. Without it the answer is
   * a 400 Status, since a watch never ends by itself. Rejects with a CrdplayError only for a bridge fault.
   */
  request(req: CrdplayRequest): Promise<CrdplayResponse>;
  /** Replaces the store with an empty one. Requests in flight finish on the old store. */
  reset(): Promise<void>;
  /** Where the engine comes from. In the page, it throws until the client is ready. */
  version(): CrdplayVersion;
  /**
   * Sets the page's conversion webhook, used for every CRD with spec.conversion.strategy Webhook whatever its
   * URL; null removes it (webhook calls then fail as unreachable). Returns a CrdplayError, rather than
   * throwing, for anything but a function or null.
   */
  setWebhook(fn: CrdplayWebhook | null): CrdplayError | undefined;
}

/** Detail of the client's 'progress' event: bytes of the wasm received so far, of total (0 when unknown). */
export interface CrdplayProgress {
  loaded: number;
  total: number;
}

/** Detail of the client's 'ready' event and value of its ready Promise. */
export interface CrdplayReady {
  version: CrdplayVersion;
  /** Milliseconds since the page's navigation started (performance.now() of the page). */
  timings: {
    /** The wasm's response headers arrived. */
    fetched: number;
    /** The wasm was downloaded, compiled and instantiated. */
    compiled: number;
    /** The engine's main had run and globalThis.crdplay was set, in the worker. */
    ready: number;
    /** The page learnt that the engine was ready. */
    page: number;
  };
}

export interface CrdplayClientOptions {
  /** URL of worker.js. Default: next to client.js. */
  workerURL?: string | URL;
  /** URL of crdplay.wasm. Default: next to client.js. */
  wasmURL?: string | URL;
  /** URL of wasm_exec.js (from the Go toolchain that built the wasm). Default: next to client.js. */
  wasmExecURL?: string | URL;
}

export interface CrdplayClientEventMap {
  progress: CustomEvent<CrdplayProgress>;
  ready: CustomEvent<CrdplayReady>;
  failed: CustomEvent<CrdplayError>;
  exit: CustomEvent<{ code: number | null }>;
}

/** The page's crdplay (client.js): the engine's API, proxied to the worker, plus loading state. */
export interface CrdplayClient extends Crdplay, EventTarget {
  /** Resolves once the engine serves; rejects with a CrdplayError if it cannot start. */
  readonly ready: Promise<CrdplayReady>;
  /** Stops the worker; every later call rejects. */
  terminate(): void;
  addEventListener<K extends keyof CrdplayClientEventMap>(
    type: K,
    listener: (ev: CrdplayClientEventMap[K]) => void,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
}

declare global {
  /** The engine in its worker; the CrdplayClient in a page that called install(). */
  var crdplay: Crdplay | undefined;
}
