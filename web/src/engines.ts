// The engines of the page: a worker per emulated Kubernetes version. Upstream keeps emulation process-wide
// (component-base's compatibility registry, the feature gates, the CEL environment's compatibility version),
// so one engine program emulates one version (wasm/main_js.go's --emulated-version), and one worker runs one
// program. The default worker (boot.ts's) is the newest; choosing 1.34, 1.35 or 1.36 starts a worker emulating
// it, once, and choosing another terminates it: at most one such worker is alive besides the default, each
// costing a wasm instance's memory. Targets older than the engine emulates are answered by the default.
import type { CrdplayClient, CrdplayReady } from '../static/crdplay.d.ts';
import { DEFAULT_EMULATED } from './versions';

declare global {
  interface Window {
    /** The page's workers, and emulate(version), which runs the page on a worker emulating any version (even
     * one the engine refuses, to see the page fall back): for the console and the tests. */
    crdplayEngines: { engines: Engines; emulate(version: string): void };
  }
}

export class Engines {
  /** The worker the page started with: the newest version. */
  readonly default: CrdplayClient;
  /** The versions the engine emulates, oldest first: the default's word once it is ready. */
  emulated: readonly string[] = DEFAULT_EMULATED;
  #make: ((version: string) => CrdplayClient) | null;
  #extra: CrdplayClient | null = null;
  /** Versions whose worker failed to start: the default answers for them from then on. */
  #failed = new Set<string>();
  #ready = new WeakMap<CrdplayClient, CrdplayReady>();

  /**
   * @param def the default client
   * @param make starts a worker emulating a version; null when the page cannot start workers of its own (an
   *   embed on a docs page's shared engine), which then answers every target
   */
  constructor(def: CrdplayClient, make: ((version: string) => CrdplayClient) | null) {
    this.default = def;
    this.#make = make;
    this.#watch(def);
    def.ready.then(({ version }) => {
      if (Array.isArray(version.emulatedVersions) && version.emulatedVersions.length) this.emulated = version.emulatedVersions;
    }, () => {});
  }

  /** The newest version: the one the default answers as. */
  get newest(): string {
    return this.emulated[this.emulated.length - 1] ?? '';
  }

  /** Whether a target (as "1.35") gets an engine emulating it, rather than a compatibility check by the newest. */
  emulates(target: string): boolean {
    return this.emulated.includes(target) && !this.#failed.has(target) && (target === this.newest || this.#make !== null);
  }

  /** The client that answers for a target: the default, or the worker emulating it (started now if need be). */
  for(target: string): CrdplayClient {
    if (target === this.newest || !this.emulates(target)) return this.default;
    return this.start(target);
  }

  /**
   * The worker emulating version, whatever the engine says of it: the one alive if it emulates that version,
   * else a new one (the previous one terminated). for() calls it; the page's console and tests may, with a
   * version the engine refuses, to see the page fall back.
   */
  start(version: string): CrdplayClient {
    if (!this.#make) return this.default;
    if (this.#extra?.emulatedVersion === version) return this.#extra;
    this.#extra?.terminate();
    this.#extra = this.#make(version);
    this.#watch(this.#extra);
    return this.#extra;
  }

  /** Terminates a worker that failed to start, so that its version is answered by the default from now on. */
  drop(c: CrdplayClient): void {
    if (c === this.default) return;
    if (c.emulatedVersion) this.#failed.add(c.emulatedVersion);
    if (this.#extra === c) this.#extra = null;
    c.terminate();
  }

  /** The workers alive: the default and the emulating one, if any. */
  get alive(): CrdplayClient[] {
    return this.#extra ? [this.default, this.#extra] : [this.default];
  }

  /** What a client said when it became ready; undefined while it starts (or when it failed). */
  readyOf(c: CrdplayClient): CrdplayReady | undefined {
    return this.#ready.get(c);
  }

  #watch(c: CrdplayClient): void {
    c.ready.then((r) => { this.#ready.set(c, r); }, () => {});
  }
}
