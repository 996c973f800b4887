// embed.js: one script tag that makes a docs page's CRD examples live (docs/embedding.md).
//
//   <script src="https://HOST/embed.js" data-selector="pre.crdplay" async></script>
//
// Each code block the selector matches becomes, once it nears the viewport, an iframe of the playground's
// embed page (embed/?host=...) next to the block, which is then hidden: without JavaScript, or before, the
// block is what the reader sees. The frame gets the block's text by postMessage (never in its URL), and its
// engine from one hidden engine frame (embed/engine.html) that every live example of the page shares. The
// frames are cross-origin and sandboxed: the page's CSS cannot reach into them, nor they into the page.
// The frames' URLs are made from this script's own src, so the site works under any path prefix.
import { CONNECT, ENGINE_HELLO, EXAMPLE, HELLO, RESIZE, THEME, type Example } from './protocol';

/** Options: data-* of the script (for every block), overridden by data-* of a block or its wrapper. */
interface Options {
  selector: string;
  panes?: string;
  readonly?: string;
  mode?: string;
  tab?: string;
  height?: string;
  theme?: string;
  version?: string;
  crd?: string;
  old?: string;
  oldCrd?: string;
}

// Hugo and MkDocs (a shortcode, a render hook, a custom fence) write <pre class="crdplay">, Docusaurus a fence
// ```crdplay as <pre class="prism-code language-crdplay">; Hugo's {class="crdplay"}, MkDocs' attr_list and an
// MDX <div className="crdplay"> put a wrapper .crdplay around a highlighted pre.
const SELECTOR = 'pre.crdplay, .crdplay pre, pre.language-crdplay';
/** Elements of highlighted code that are not the code: line numbers, copy buttons. */
const NOT_CODE = '.ln, .lnt, .linenos, .line-numbers-rows, [class*="codeLineNumber"], button, [aria-hidden="true"]';
/** Starts an example this far before it scrolls into view. */
const MARGIN = '300px';

const script = (document.currentScript ?? document.querySelector('script[src*="embed.js"]')) as HTMLScriptElement;
const base = new URL('.', script.src);
const origin = base.origin;
const defaults: Options = { selector: SELECTOR, ...script.dataset };
const host = location.origin;

let engine: HTMLIFrameElement | null = null;
let engineReady = false;
const waiting: [unknown, MessagePort][] = [];
/** The live examples, by their frame's window. */
const frames = new Map<Window, { frame: HTMLIFrameElement; example: Example; fixed: boolean; followsPage: boolean; version?: string }>();
const seen = new WeakSet<Element>();

function frameURL(path: string, q: Record<string, string | undefined>): string {
  const u = new URL(path, base);
  u.searchParams.set('host', host);
  for (const [k, v] of Object.entries(q)) if (v) u.searchParams.set(k, v);
  return u.href;
}

/** A sandboxed frame: scripts, and its own origin (its worker and fetches need it); popups for "Open in
 * crdplay", which opens unsandboxed. No forms, no top navigation, no access to the docs page. A docs page of
 * crdplay's own origin (the demo page) shares its origin with the frame, which no sandbox would keep out. */
function iframe(src: string, title: string, popups = true): HTMLIFrameElement {
  const f = document.createElement('iframe');
  if (origin !== host) f.setAttribute('sandbox', `allow-scripts allow-same-origin${popups ? ' allow-popups allow-popups-to-escape-sandbox' : ''}`);
  f.title = title;
  f.src = src;
  return f;
}

/** A port to the shared engine frame (made with the first live example), for an engine emulating version. */
function connect(version: string | undefined): MessagePort {
  const ch = new MessageChannel();
  const msg = { type: CONNECT, version };
  if (!engine) {
    engine = iframe(frameURL('embed/engine.html', {}), 'crdplay engine', false);
    engine.setAttribute('aria-hidden', 'true');
    engine.tabIndex = -1;
    engine.style.setProperty('display', 'none', 'important');
    document.body.append(engine);
  }
  if (engineReady) engine.contentWindow!.postMessage(msg, origin, [ch.port1]);
  else waiting.push([msg, ch.port1]);
  return ch.port2;
}

addEventListener('message', (e) => {
  if (e.origin !== origin || !e.source) return;
  const m = e.data;
  if (engine && e.source === engine.contentWindow && m?.type === ENGINE_HELLO) {
    engineReady = true;
    for (const [msg, p] of waiting.splice(0)) engine.contentWindow!.postMessage(msg, origin, [p]);
    return;
  }
  const live = frames.get(e.source as Window);
  if (!live) return;
  if (m?.type === HELLO) {
    live.frame.contentWindow!.postMessage({ type: EXAMPLE, example: live.example }, origin, [connect(live.version)]);
  } else if (m?.type === RESIZE && !live.fixed && m.height > 0) {
    live.frame.style.setProperty('height', `${Math.min(Math.ceil(m.height), 5000)}px`, 'important');
  }
});

/** The text of a code block: its code element's text, with <br> as line ends and line numbers left out. */
function textOf(el: Element): string {
  let out = '';
  const walk = (n: Node): void => {
    if (n.nodeType === Node.TEXT_NODE) out += (n as Text).data;
    else if (n instanceof HTMLBRElement) out += '\n';
    else if (n instanceof Element && !n.matches(NOT_CODE)) n.childNodes.forEach(walk);
  };
  walk(el.querySelector('code') ?? el);
  return out.replace(/\n$/, '');
}

/** The YAML documents of a text, as written (a line of --- separates them), blank ones dropped. */
function docs(text: string): string[] {
  return text.split(/^---[ \t]*(?:#.*)?$\n?/m).filter((d) => /^\s*[^\s#]/m.test(d));
}
const isCRD = (doc: string) => /^kind:[ \t]*["']?CustomResourceDefinition["']?[ \t]*(#.*)?$/m.test(doc);
const join = (ds: string[]) => ds.map((d) => d.replace(/\n*$/, '\n')).join('---\n');

/** The CRD documents (crds) or the others of the blocks a list of selectors names (data-crd="#crontab-crd"). */
function referred(list: string | undefined, crds: boolean): string[] {
  return (list ?? '').split(/[\s,]+/).filter(Boolean).flatMap((sel) => {
    const el = document.querySelector(sel);
    if (!el) console.warn(`crdplay embed.js: no element ${sel} on this page`);
    return el ? docs(textOf(el)).filter((d) => isCRD(d) === crds) : [];
  });
}

/** The wrapper a generator puts around a highlighted block, which goes with it. */
function blockOf(el: Element): Element {
  return el.closest('.theme-code-block') ?? (el.parentElement?.matches('div.highlight, .crdplay') && el.parentElement.children.length === 1 ? el.parentElement : el);
}

/** The options of a block: the script's, then data-* of its .crdplay wrapper, its generator's wrapper, itself. */
function optionsOf(el: Element, block: Element): Options {
  const data = (e: Element | null | undefined) => (e as HTMLElement | null)?.dataset ?? {};
  return { ...defaults, ...data(el.parentElement?.closest('.crdplay')), ...data(block), ...data(el) };
}

/** The page's own light or dark scheme, where the site's theme says it (Docusaurus, MkDocs Material, Docsy). */
function pageTheme(): string | undefined {
  const d = document.documentElement, b = document.body;
  if (d.dataset.theme === 'dark' || d.dataset.bsTheme === 'dark' || b.dataset.mdColorScheme === 'slate') return 'dark';
  if (d.dataset.theme === 'light' || d.dataset.bsTheme === 'light' || b.dataset.mdColorScheme === 'default') return 'light';
  return undefined;
}

function makeLive(el: Element): void {
  const block = blockOf(el);
  const o = optionsOf(el, block);
  const own = docs(textOf(el));
  let crds = [...referred(o.crd, true), ...own.filter(isCRD)];
  let objects = own.filter((d) => !isCRD(d));
  let old = referred(o.old, false);
  let oldCrds = referred(o.oldCrd, true);
  const update = o.mode === 'update' || o.mode === 'status';
  const upgrade = o.mode === 'upgrade';
  // Without data-old, an update's block holds the old object first, then the new; without data-old-crd, an
  // upgrade's CRDs are the old one first, then the new.
  if (update && !old.length && objects.length > 1) [old, objects] = [objects.slice(0, 1), objects.slice(1)];
  if (upgrade && !oldCrds.length && crds.length > 1) [oldCrds, crds] = [crds.slice(0, 1), crds.slice(1)];
  const example = { crd: join(crds), objects: join(objects), old: join(old), oldCrd: join(oldCrds) };
  const editors = [upgrade ? 'oldcrd' : '', upgrade || own.some(isCRD) || !objects.length ? 'crd' : '', update ? 'old' : '', objects.length ? 'objects' : ''];
  const panes = o.panes ?? [...editors.filter(Boolean), 'result', 'table'].join(',');
  const tab = o.tab ?? panes.split(',').find((p) => /^(result|cel|table|versions|explain|cli|http)$/.test(p.trim()))?.trim();
  const followsPage = o.theme !== 'light' && o.theme !== 'dark' && o.theme !== 'auto';
  const theme = followsPage ? pageTheme() : o.theme === 'auto' ? undefined : o.theme;
  const frame = iframe(frameURL('embed/', {
    panes, readonly: o.readonly === '' || o.readonly === 'true' || o.readonly === '1' ? '1' : undefined,
    tab, mode: o.mode, version: o.version, theme,
  }), `Live example: ${(/^\s*name:\s*(\S+)/m.exec(example.objects || example.crd)?.[1]) ?? 'crdplay'}`);
  const fixed = /^\d+$/.test(o.height ?? '');
  const s = frame.style;
  for (const [k, v] of Object.entries({
    display: 'block', width: '100%', 'max-width': 'none', border: '0', margin: '0', padding: '0',
    height: `${fixed ? o.height : Math.max(360, (block as HTMLElement).offsetHeight + 160)}px`,
  })) s.setProperty(k, v, 'important');
  // In a shadow root: the page's selectors (iframe {...}) cannot reach the frame.
  const wrap = document.createElement('div');
  wrap.className = 'crdplay-live';
  wrap.style.setProperty('display', 'block', 'important');
  wrap.style.setProperty('margin', '1em 0', 'important');
  wrap.attachShadow({ mode: 'open' }).append(frame);
  block.before(wrap);
  (block as HTMLElement).hidden = true;
  (block as HTMLElement).style.setProperty('display', 'none', 'important');
  frames.set(frame.contentWindow!, { frame, example, fixed, followsPage, version: o.version });
  watchTheme();
}

/** Tells the frames that follow the page's theme when its switch changes it. */
let themeWatched = false;
function watchTheme(): void {
  if (themeWatched) return;
  themeWatched = true;
  const tell = (): void => {
    const theme = pageTheme() ?? 'auto';
    for (const live of frames.values()) if (live.followsPage) live.frame.contentWindow?.postMessage({ type: THEME, theme }, origin);
  };
  const filter = { attributes: true, attributeFilter: ['data-theme', 'data-bs-theme', 'data-md-color-scheme'] };
  new MutationObserver(tell).observe(document.documentElement, filter);
  new MutationObserver(tell).observe(document.body, filter);
}

const observer = new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (!e.isIntersecting) continue;
    observer.unobserve(e.target);
    makeLive(e.target);
  }
}, { rootMargin: `${MARGIN} 0px` });

/** Watches the page's blocks, now and as a site's client-side navigation adds them (Docusaurus), and forgets
 * the frames it removed. */
function scan(): void {
  for (const [win, live] of frames) if (!live.frame.isConnected) frames.delete(win);
  for (const el of document.querySelectorAll(defaults.selector)) {
    if (seen.has(el) || el.closest('.crdplay-live')) continue;
    seen.add(el);
    observer.observe(el);
  }
}
let scheduled = false;
function start(): void {
  scan();
  new MutationObserver(() => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => { scheduled = false; scan(); }, 100);
  }).observe(document.body, { childList: true, subtree: true });
}
// Once per page, should a site's layout carry the tag twice.
const w = window as { crdplayEmbed?: boolean };
if (!w.crdplayEmbed) {
  w.crdplayEmbed = true;
  if (document.readyState === 'loading') addEventListener('DOMContentLoaded', start);
  else start();
}
