// The embed frame's side of embed.js (docs/embedding.md): when the embed page is opened by embed.js
// (embed/?host=ORIGIN, ORIGIN being the docs page's), its example comes from the docs page by postMessage,
// never in the URL, and its engine is the docs page's shared engine frame, reached over the MessagePort that
// comes with the example. globalThis.crdplay is set here, before main.ts's body runs, to a client of that port
// (so boot.ts starts no worker of its own, and main.ts none either); its ready waits for the example too, so
// the first evaluation is the example's. Without ?host= this module does nothing.
import type { CrdplayClient, CrdplayProgress, CrdplayReady, CrdplayWebhook } from '../static/crdplay.d.ts';
import { EXAMPLE, fromHost, HELLO, hostTarget, THEME, type Example } from './embedjs/protocol';

const params = new URLSearchParams(location.search);
/** The docs page's origin, or null when this frame was not made by embed.js. */
export const embedHost = document.body.dataset.page === 'embed' ? params.get('host') : null;

/** A CrdplayClient of the shared engine, over a MessagePort (the engine frame's side: embedjs/engine.ts). */
class PortClient extends EventTarget {
  lastProgress: CrdplayProgress | null = null;
  readonly ready: Promise<CrdplayReady>;
  #port: MessagePort | null = null;
  #queued: unknown[] = [];
  #calls = new Map<number, { resolve(v: any): void; reject(e: any): void }>();
  #seq = 0;
  #methods: string[] = [];
  #version: CrdplayReady['version'] | null = null;
  #webhook: CrdplayWebhook | null = null;
  #dead: { error: string } | null = null;
  #engine: Promise<CrdplayReady>;
  #gotExample!: () => void;

  constructor() {
    super();
    let ok!: (r: CrdplayReady) => void, fail!: (e: unknown) => void;
    this.#engine = new Promise((res, rej) => { ok = res; fail = rej; });
    this.#engine.catch(() => {});
    this.addEventListener('ready', (e) => ok((e as CustomEvent).detail));
    this.addEventListener('failed', (e) => fail((e as CustomEvent).detail));
    const example = new Promise<void>((res) => { this.#gotExample = res; });
    this.ready = example.then(() => this.#engine);
    this.ready.catch(() => {});
  }

  connect(port: MessagePort): void {
    this.#port = port;
    port.onmessage = ({ data: m }) => this.#receive(m);
    for (const m of this.#queued.splice(0)) port.postMessage(m);
  }
  exampleArrived(): void { this.#gotExample(); }

  request(req: unknown) { return this.#call('request', req); }
  reset() { return this.#call('reset'); }
  call(method: string, arg?: unknown) { return this.#call('call', arg, method); }
  has(method: string) { return this.#methods.includes(method); }
  version() {
    if (!this.#version) throw new Error('crdplay: the engine is not ready yet (await crdplay.ready)');
    return this.#version;
  }
  setWebhook(fn: CrdplayWebhook | null) {
    this.#webhook = fn;
    this.#post({ op: 'setWebhook', enabled: !!fn });
    return undefined;
  }
  terminate() { this.#port?.close(); }

  #post(m: unknown): void {
    if (this.#port) this.#port.postMessage(m);
    else this.#queued.push(m);
  }
  #call(op: string, arg?: unknown, method?: string): Promise<any> {
    if (this.#dead) return Promise.reject(this.#dead);
    return new Promise((resolve, reject) => {
      const id = ++this.#seq;
      this.#calls.set(id, { resolve, reject });
      try {
        this.#post({ op, id, arg, method });
      } catch (err) {
        this.#calls.delete(id);
        reject({ error: `crdplay.${method ?? op}: ${err instanceof Error ? err.message : String(err)}` });
      }
    });
  }
  #receive(m: any): void {
    const emit = (type: string, detail: unknown): void => { this.dispatchEvent(new CustomEvent(type, { detail })); };
    switch (m?.type) {
      case 'reply': {
        const c = this.#calls.get(m.id);
        this.#calls.delete(m.id);
        if (c) m.ok ? c.resolve(m.value) : c.reject(m.error);
        return;
      }
      case 'progress':
        this.lastProgress = { loaded: m.loaded, total: m.total };
        return emit('progress', this.lastProgress);
      case 'ready':
        this.#version = m.version;
        this.#methods = m.methods ?? [];
        // The engine frame's clock is not this frame's: say when this frame learnt it.
        return emit('ready', { version: m.version, timings: { ...m.timings, page: performance.now() } });
      case 'failed':
        this.#dead = { error: m.error?.error ?? 'crdplay: the engine failed to start' };
        for (const c of this.#calls.values()) c.reject(this.#dead);
        this.#calls.clear();
        return emit('failed', m.error);
      case 'webhook': {
        const fn = this.#webhook;
        Promise.resolve().then(() => {
          if (!fn) throw new Error('webhook unreachable: the page has set no conversion webhook (crdplay.setWebhook)');
          return fn(m.review, m.clientConfig);
        }).then((value) => this.#post({ op: 'webhookReply', id: m.id, ok: true, value }),
          (err) => this.#post({ op: 'webhookReply', id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) }));
      }
    }
  }
}

/** style.css's dark media rules, and the style element that applies them for theme=dark (applyTheme). */
let darkRules: { rule: CSSMediaRule; media: string }[] | null = null;
const darkStyle = document.createElement('style');

/** Puts the example in the editors; set by main.ts (the editors are built after this module has run). */
let show: ((e: Example) => void) | null = null;
let pending: Example | null = null;
/** main.ts hands over how to show an example; one that came first is shown now. */
export function onExample(fn: (e: Example) => void): void {
  show = fn;
  if (pending) fn(pending);
}

if (embedHost !== null) {
  const client = new PortClient();
  (globalThis as any).crdplay = client as unknown as CrdplayClient;
  let got = false;
  addEventListener('message', (e) => {
    if (fromHost(e, embedHost) && e.data?.type === THEME) applyTheme(e.data.theme);
    if (got || !fromHost(e, embedHost) || e.data?.type !== EXAMPLE || !e.ports[0]) return;
    const ex = e.data.example;
    if (!ex || [ex.crd, ex.objects, ex.old, ex.oldCrd].some((t) => typeof t !== 'string')) return;
    got = true;
    client.connect(e.ports[0]);
    pending = { crd: ex.crd, objects: ex.objects, old: ex.old, oldCrd: ex.oldCrd };
    show?.(pending);
    client.exampleArrived();
  });
  parent.postMessage({ type: HELLO }, hostTarget(embedHost));
  applyTheme(params.get('theme'));
  hintKeys();
  noteNoLink();
}

/** "Open in crdplay" is disabled (main.ts) for a state too big for any link: say why beside it, not only in
 * its title. */
function noteNoLink(): void {
  const a = document.getElementById('open-full');
  if (!a) return;
  const note = document.createElement('span');
  note.id = 'open-note';
  note.style.cssText = 'font-size:12px;color:var(--muted)';
  a.after(note);
  new MutationObserver(() => {
    note.textContent = a.getAttribute('aria-disabled') === 'true' ? a.title : '';
  }).observe(a, { attributes: true, attributeFilter: ['aria-disabled', 'title'] });
}

/**
 * theme=light or dark fixes the scheme whatever the reader's system prefers, auto follows the system (the
 * docs page may switch it later: THEME messages). style.css follows prefers-color-scheme: its dark media rules
 * are turned off for a fixed scheme, and their rules applied as they are for dark.
 */
function applyTheme(theme: string | null): void {
  if (theme !== 'light' && theme !== 'dark' && theme !== 'auto') return;
  if (!darkRules) {
    darkRules = [];
    for (const sheet of document.styleSheets) {
      let rules: CSSRuleList;
      try { rules = sheet.cssRules; } catch { continue; }
      for (const r of rules) {
        if (r instanceof CSSMediaRule && /prefers-color-scheme:\s*dark/.test(r.conditionText)) darkRules.push({ rule: r, media: r.media.mediaText });
      }
    }
    document.head.append(darkStyle);
  }
  const fixed = theme !== 'auto';
  for (const d of darkRules) d.rule.media.mediaText = fixed ? 'not all' : d.media;
  darkStyle.textContent = theme === 'dark' ? darkRules.flatMap((d) => [...d.rule.cssRules].map((x) => x.cssText)).join('\n') : '';
  document.documentElement.style.colorScheme = fixed ? theme : '';
  document.body.dataset.theme = theme;
}
/** Says how the keyboard leaves an editor: Tab moves focus (the editors do not indent with it). */
function hintKeys(): void {
  const bar = document.querySelector('.bar.slim');
  if (!bar) return;
  const hint = document.createElement('span');
  hint.id = 'keys-hint';
  hint.className = 'keys-hint';
  hint.textContent = 'Tab and Shift+Tab move in and out of the editors';
  hint.style.cssText = 'margin-right:auto;font-size:12px;color:var(--muted)';
  bar.prepend(hint);
}
