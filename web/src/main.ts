// The playground page. Order matters for what a visitor sees: the editors are built first, from the permalink
// or the default example, so the page is usable at once; then the engine (a 10 MB download) starts in its
// worker with a progress bar; each edit re-evaluates once it is ready.
import './style.css';
import { install, CrdplayClient as WorkerClient } from '../static/client.js';
import type { CrdplayClient, CrdplayDiagnostic, CrdplayEvaluateResult, CrdplayMode } from '../static/crdplay.d.ts';
import { createEditors, editorOf, type EditorId, type Editors } from './editors';
import { evaluate, type Session } from './evaluate';
import { decode, droppedNotice, encode, fittingFragment, LinkError, openShort, shortID, type State } from './permalink';
import { share as shareLink, showNotice } from './share';
import { documents, toValue } from './yaml';
import { kindSchemas, type KindSchema } from './schema';
import { openAPIKinds } from './openapi';
import { DEFAULT_EXAMPLE, loadExamples, type Example } from './examples';
import { h, renderCEL, renderExplain, renderLog, renderResult, renderTable, renderVersions, traced, type Exchange } from './panes';
import { ENGINE_EVENT, kubectlVia, mountCLI } from './cli';
import { onExample } from './embedframe';
import { renderUpgrade, showUpgradeEditors } from './upgrade';
import { DEFAULT_WEBHOOK, Webhook } from './webhook';
import { DEFAULT_EMULATED, DEFAULT_RANGE, engineName, fallbackNotice, minorName, parseTarget, targetDiagnostics, targetLabel, targetStatus, targetTitle, unknownTargetNotice } from './versions';
import { Engines } from './engines';
import { Scratchpad } from './scratch';
import { checkCommand, clearWork, downloads, joinDocuments, loadWork, saveWork, splitDocuments, type Work } from './work';

interface Assets {
  script: string; style: string; worker: string; wasm: string; wasmExec: string; home: string;
  /** The gallery; the embed page has none (it has no menu to show it in). */
  examples?: string;
}

const TABS = ['result', 'cel', 'table', 'versions', 'explain', 'cli', 'http'] as const;
type Tab = (typeof TABS)[number];
const MODES: CrdplayMode[] = ['create', 'update', 'status', 'scale', 'delete', 'upgrade'];
/** An edit whose evaluation is slow (a big CRD's install) waits this long for the next keystroke, so that a
 * burst of typing costs one evaluation; a quick one starts at once (schedule). */
const DEBOUNCE_MS = 250;
/** The tab's work (work.ts) is kept this long after the last change. */
const SAVE_MS = 500;
/** An undo offer stays this long. */
const UNDO_MS = 20_000;
/** An evaluation this quick (wall time, the last of its kind) starts at once on an edit. */
const QUICK_MS = 100;
/** The HTTP log keeps this many exchanges. */
const LOG_LIMIT = 300;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T | null;
const assets: Assets = JSON.parse($('crdplay-assets')?.textContent ?? '{}');
const embed = document.body.dataset.page === 'embed';
const params = new URLSearchParams(location.search);

/** Everything the page knows, in one place (also window.crdplayPlayground, for tests and the console). */
const app = {
  editors: null as unknown as Editors,
  client: null as unknown as CrdplayClient,
  mode: 'create' as CrdplayMode,
  tab: 'result' as Tab,
  webhookCode: DEFAULT_WEBHOOK,
  /** The engine's last evaluation (crdplay.evaluate's result), as it came. */
  evaluation: null as CrdplayEvaluateResult | null,
  /** What the last evaluation leaves for the next (the CRD text installed, its explain trees). */
  session: {} as Session,
  log: [] as Exchange[],
  wide: false,
  runs: 0,
  examples: [DEFAULT_EXAMPLE] as Example[],
  /** The Kubernetes minors the page offers as targets (the engine's range, once it has evaluated). */
  range: DEFAULT_RANGE,
  /** The Kubernetes minor the page checks the CRDs for (versions.ts); the engine answers as range.newest. */
  target: DEFAULT_RANGE.newest,
  /** Whether the target was chosen (a link, the URL, the menu), rather than the default newest. */
  targetChosen: false,
  /** The next evaluation runs the upgrade mode's storage migration (the Result pane's button); it alone. */
  migrateNext: false,
  /** Resolves when the current evaluation (if any) ends. */
  idle: Promise.resolve() as Promise<void>,
  /** Where the last shown evaluation's time went, in ms (load.mjs reports it): the engine call from the
   * page (input encoded, worker round trip, result parsed), the engine's own evaluation within it, the
   * editors' diagnostics, and the visible pane. */
  timings: { start: 0, call: 0, engine: 0, diagnostics: 0, pane: 0, shown: 0 },
};
declare global {
  interface Window { crdplayPlayground: typeof app & { run(): Promise<void>; permalink(): Promise<string>; scratch: Scratchpad } }
}

// 1. Editors, at once: the tab's kept work (work.ts: the editors as they were before a reload), else the
// default example; a link in the address (4.) wins over the kept work, unless the work was opened from that
// same link (a reload of its address).
const EDITOR_IDS: EditorId[] = ['crd', 'objects', 'old', 'oldcrd'];
/** The link in the address: its fragment, or s=ID for a short link. */
const linkInAddress = (): string => {
  const id = shortID(new URL(location.href));
  return id ? `s=${id}` : location.hash.slice(1);
};
const resumed: Work | null = (() => {
  if (embed) return null;
  const w = loadWork();
  return w && (!linkInAddress() || w.link === linkInAddress()) ? w : null;
})();
if (resumed?.webhook) app.webhookCode = resumed.webhook;
/** The gallery example the editors were loaded from ('' for none: a link, a file). */
let currentExample = resumed ? resumed.example : DEFAULT_EXAMPLE.id;
/** The link the editors were opened from ('' for none). */
let currentLink = resumed?.link ?? '';
/** Bumped by every edit of an editor's text: an evaluation's answer is shown only if no edit came since it read
 * the texts (run). */
let editGen = 0;
/** Whether the panes show an older text's (or mode's) results than the editors': while an evaluation of the
 * current ones is due or running. setBusy. */
let busy = false;
/** What the editors hold, named while it is evaluated ("Evaluating CronTab with a default and a CEL rule…"). */
let subject = resumed ? 'the editors as you left them' : DEFAULT_EXAMPLE.title;
const editorsReady = performance.now();
let kindsCache: { text: string; kinds: KindSchema[] } = { text: '\0', kinds: [] };
function kinds(): KindSchema[] {
  const text = app.editors.text('crd');
  if (text !== kindsCache.text) {
    kindsCache = { text, kinds: kindSchemas(documents(text).map((d) => toValue(text, d.node))) };
  }
  return kindsCache.kinds;
}
// CustomResourceDefinition's own schema, for hover and completion in the CRD editor: the engine's OpenAPI
// document, read once the engine is there (openapi.ts); until then the CRD editor has no schema help.
let crdKinds: KindSchema[] = [];
app.editors = createEditors(resumed ? { crd: resumed.crd, objects: resumed.objects, old: resumed.old, oldcrd: resumed.oldCrd }
  : { crd: DEFAULT_EXAMPLE.crd, objects: DEFAULT_EXAMPLE.objects ?? '', old: DEFAULT_EXAMPLE.old ?? '', oldcrd: DEFAULT_EXAMPLE.oldCrd ?? '' }, {
  onChange: (id) => edited(id),
  onRun: () => void run(),
  onShare: () => void share(),
  kinds,
  crdKinds: () => crdKinds,
});
performance.mark('crdplay:editors', { detail: { ms: performance.now() - editorsReady } });
/** The editors' texts. */
const texts = (): Record<EditorId, string> => ({ crd: app.editors.text('crd'), objects: app.editors.text('objects'), old: app.editors.text('old'), oldcrd: app.editors.text('oldcrd') });
/** The texts as they were loaded (an example, a link); null when they are the author's own (a file, kept edits). */
let baseline: Record<EditorId, string> | null = resumed?.edited ? null : texts();
/** Whether the editors hold edits of the author's: replacing them offers an undo. */
function isEdited(): boolean {
  return baseline === null || EDITOR_IDS.some((id) => app.editors.text(id) !== baseline![id]);
}
document.body.dataset.editors = 'ready';

// 2. Tabs, mode, panes.
const webhook = new Webhook(app.webhookCode);
const webhookBox = buildWebhookBox();
// The CEL pane: the scratchpad (scratch.ts), kept across evaluations (its text, its focus), above the report
// that each evaluation replaces.
const scratch = new Scratchpad({
  call: () => app.client?.has('cel') ? (input) => app.client.call('cel', input) as Promise<string> : null,
  objects: () => app.editors.text('objects'),
  old: () => app.editors.text('old'),
  mode: () => app.mode,
  shown: () => app.tab === 'cel',
});
const celReport = h('div', { class: 'cel-report' });
$('pane-cel')?.replaceChildren(scratch.el, celReport);
/** Where a pane's results go: the CEL pane's below its scratchpad. */
const paneBody = (t: Tab): HTMLElement | null => t === 'cel' ? celReport : $(`pane-${t}`);
function setTab(tab: string): void {
  // A tab the embed's panes hide is never shown (a link's tab, the default Result): its pane would be blank.
  const shown = (t: string) => (TABS as readonly string[]).includes(t) && !$(`tab-${t}`)?.classList.contains('gone');
  if (!shown(tab)) tab = TABS.find(shown) ?? 'result';
  app.tab = tab as Tab;
  for (const t of TABS) {
    const btn = $(`tab-${t}`);
    btn?.setAttribute('aria-selected', String(t === tab));
    // Roving tabindex: Tab reaches the selected tab alone, the arrow keys the others.
    if (btn) btn.tabIndex = t === tab ? 0 : -1;
    const pane = $(`pane-${t}`);
    if (pane) pane.hidden = t !== tab;
  }
  renderPane(app.tab);
  // The engine traces an evaluation's requests only while the log is shown: opening it evaluates again,
  // traced, unless the last evaluation was.
  if (app.tab === 'http' && app.evaluation && !app.evaluation.exchanges) void run();
  // The same for the tables: an evaluation lists the objects as tables only while their pane is shown.
  if (app.tab === 'table' && app.evaluation && !app.evaluation.tables) void run();
}

// Panes are rendered when shown: an evaluation renders the visible one and marks the others stale (the HTTP
// log and the explain tree can be large, and typing must stay fast). The explain pane can show the page's
// reading of the CRD text before the first evaluation (or when the engine cannot start).
const stale = new Set<Tab>(['explain']);
/** What the explain pane shows now (the engine's trees or the page's kinds): the same is not rendered again. */
let explainShown: unknown = null;
function renderPane(tab: Tab): void {
  if (!stale.has(tab)) return;
  stale.delete(tab);
  const ev = app.evaluation;
  switch (tab) {
    case 'http':
      renderLog($('pane-http')!, app.log);
      return;
    case 'cli':
      return;
    case 'explain': {
      // The engine's trees once it has evaluated (kept across evaluations while the CRD text is the same);
      // the page's reading of the CRD text before.
      const engine = app.session.explain;
      const src = engine ?? kinds();
      if (src !== explainShown) {
        explainShown = src;
        renderExplain($('pane-explain')!, engine ? [] : kinds(), engine);
      }
      return;
    }
  }
  if (!ev) return;
  switch (tab) {
    case 'result':
      if (app.mode === 'upgrade') {
        renderUpgrade($('pane-result')!, ev, { objects: app.editors.text('objects'), crds: app.editors.text('crd'), oldCrds: app.editors.text('oldcrd') },
          { migrate: () => void migrate() });
      } else renderResult($('pane-result')!, ev, app.target, app.editors.text('crd'));
      break;
    case 'cel':
      renderCEL(celReport, kinds(), ev, app.target, (rule, self, crd, version) => scratch.try(rule, self, crd, version));
      scratch.shown();
      break;
    case 'table': {
      const table = (): void => renderTable($('pane-table')!, ev, app.wide, (w) => { app.wide = w; table(); });
      table();
      break;
    }
    case 'versions': renderVersions($('pane-versions')!, ev, webhookBox); break;
  }
}
$('tabs')?.addEventListener('click', (e) => {
  const t = (e.target as HTMLElement).closest<HTMLElement>('[data-tab]');
  if (t) setTab(t.dataset.tab!);
});
// The WAI-ARIA tabs keys: Left and Right move to the previous and next tab (around the ends), Home and End to
// the first and last; the tab moved to is selected at once. Tabs an embed leaves out are skipped.
$('tabs')?.addEventListener('keydown', (e) => {
  const shown = TABS.filter((t) => !$(`tab-${t}`)?.classList.contains('gone'));
  const at = shown.indexOf(app.tab);
  const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: shown.length - 1 }[e.key];
  if (to === undefined || e.altKey || e.ctrlKey || e.metaKey || !shown.length) return;
  e.preventDefault();
  const tab = shown[(to + shown.length) % shown.length];
  setTab(tab);
  $(`tab-${tab}`)?.focus();
});
function setMode(mode: string): void {
  app.mode = (MODES as string[]).includes(mode) ? (mode as CrdplayMode) : 'create';
  const sel = $<HTMLSelectElement>('mode');
  if (sel) sel.value = app.mode;
  const old = $('old-frame');
  if (old) old.hidden = app.mode !== 'update' && app.mode !== 'status';
  showUpgradeEditors(app.mode === 'upgrade');
  document.body.dataset.mode = app.mode;
}
$('mode')?.addEventListener('change', (e) => {
  setMode((e.target as HTMLSelectElement).value);
  // The update modes send the objects as updates of the old objects: an empty Old editor would make them creates.
  // It starts with the objects as they are (an update that changes nothing, until either is edited).
  if ((app.mode === 'update' || app.mode === 'status') && !app.editors.text('old').trim()) {
    const objects = app.editors.text('objects');
    app.editors.set('old', objects);
    if (baseline && !baseline.old.trim()) baseline.old = app.editors.text('old');
  }
  saveSoon();
  void run();
});

// Staleness: what the panes and the editors' counts show is the result of the texts (and mode) it was
// evaluated for; from an edit (or a new mode, a rerun) until the answer for the editors' texts is shown, the
// panes it replaces are aria-busy (style.css dims them and shows the "updating…" mark after a moment, so that
// a quick evaluation does not flicker), the counts are marked as the previous text's and the status line
// says "Evaluating…". Choosing an example or opening a link replaces the panes at once (clearPanes): the
// previous example's verdict is never beside the new example's text.
/** The panes an evaluation replaces. */
const REPLACED: Tab[] = ['result', 'cel', 'table', 'versions', 'explain'];
const results = document.querySelector<HTMLElement>('.results');
results?.append(h('span', { class: 'updating', 'aria-hidden': 'true' }, 'updating…'));
/** An edit of an editor's text: the results shown are of an older text from now on. */
function edited(id: EditorId): void {
  editGen++;
  setBusy(true);
  schedule(id);
  saveSoon();
}
function setBusy(on: boolean): void {
  if (busy === on) return;
  busy = on;
  for (const t of REPLACED) {
    const pane = $(`pane-${t}`);
    if (on) pane?.setAttribute('aria-busy', 'true');
    else pane?.removeAttribute('aria-busy');
  }
  if (results) results.dataset.busy = String(on);
  for (const id of EDITOR_IDS) {
    const info = $(`${id}-info`);
    if (!info) continue;
    if (on) {
      info.dataset.stale = 'true';
      info.setAttribute('aria-busy', 'true');
      info.title = 'the previous text\'s count: the current text is being evaluated';
    } else {
      delete info.dataset.stale;
      info.removeAttribute('aria-busy');
      info.title = '';
    }
  }
  showEngine();
}
/** The panes' message while there is no result of the editors' texts: the engine's download (with its
 * progress), or what is being evaluated. */
const loading = { text: h('span', {}, 'Loading the engine…'), bar: h('progress', { max: '1', value: '0' }) as HTMLProgressElement };
const loadingLine = h('p', { class: 'placeholder muted loading' }, loading.text, ' ', loading.bar);
function showPending(what = `Evaluating ${subject}…`): void {
  const state = $('status')?.dataset.state;
  if (state === 'failed') return;
  for (const t of ['result', 'cel', 'table', 'versions'] as Tab[]) {
    paneBody(t)?.replaceChildren(t === 'result' && state === 'loading' ? loadingLine
      : h('p', { class: 'placeholder muted' }, state === 'loading' ? 'Loading the engine…' : what));
  }
}
/** The editors hold something else (an example, a link): the previous verdicts, counts and marks go at once. */
function clearPanes(what?: string): void {
  app.evaluation = null;
  app.session.explain = undefined;
  explainShown = null;
  stale.add('explain');
  if (app.tab === 'explain') renderPane('explain');
  app.editors.show([]);
  for (const id of EDITOR_IDS) {
    const info = $(`${id}-info`);
    if (info) {
      info.textContent = '';
      info.dataset.errors = '0';
    }
  }
  showPending(what);
  setBusy(true);
}
showPending();

// 3. Embed configuration: ?panes=objects,result,table&readonly=1&tab=table
if (embed) {
  const panes = (params.get('panes') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (panes.length) {
    for (const ed of ['crd', 'objects', 'old', 'oldcrd']) {
      if (!panes.includes(ed)) $(`${ed}-frame`)?.classList.add('gone');
    }
    const tabs = TABS.filter((t) => panes.includes(t));
    for (const t of TABS) if (tabs.length && !tabs.includes(t)) $(`tab-${t}`)?.classList.add('gone');
    if (tabs.length && !params.get('tab')) setTab(tabs[0]);
  }
  if (params.get('readonly') === '1' || params.get('readonly') === 'true') app.editors.setReadOnly(true);
  if (params.get('mode')) $('mode')!.hidden = false;
  // The content's height, not the document's scrollHeight: that is never less than the frame's own height,
  // so a frame made taller once (a narrow layout, a long answer) would never shrink back.
  new ResizeObserver(() => {
    parent.postMessage({ type: 'crdplay:resize', height: Math.ceil(document.body.getBoundingClientRect().height) }, '*');
  }).observe(document.body);
}
setTab(params.get('tab') ?? 'result');
setMode(params.get('mode') ?? resumed?.mode ?? 'create');

// The Kubernetes target: ?version=1.35 (embeds), else the link's, else the newest. An unknown one falls back
// to the newest, and the page says so.
const targetSelect = $<HTMLSelectElement>('k8s-target');
/** The workers, one per emulated version (engines.ts); made with the engine, in 6. */
let engines: Engines | null = null;
function fillTargets(): void {
  if (!targetSelect) return;
  const opts: HTMLElement[] = [];
  for (let m = app.range.newest; m >= app.range.oldest; m--) {
    opts.push(h('option', { value: minorName(m) }, targetLabel(m, engines ? engines.emulated.filter((v) => engines!.emulates(v)) : DEFAULT_EMULATED)));
  }
  targetSelect.replaceChildren(...opts);
  targetSelect.value = minorName(app.target);
  const label = targetSelect.closest('label');
  if (label) label.title = targetTitle(engines ? engines.emulated.filter((v) => engines!.emulates(v)) : DEFAULT_EMULATED, minorName(app.range.newest));
}
function showTarget(): void {
  const st = $('target-status');
  if (st) st.textContent = targetStatus(app.target, app.client?.emulatedVersion || minorName(app.range.newest));
}
function setTarget(minor: number): void {
  app.target = minor;
  if (targetSelect) targetSelect.value = minorName(minor);
  selectEngine();
  showTarget();
  document.body.dataset.target = minorName(minor);
  if (!app.evaluation) return;
  showDiagnostics(app.evaluation);
  stale.add('result');
  stale.add('cel');
  renderPane(app.tab);
}
/** Chooses the target a link or URL names; false (and a notice) when the page does not know it. */
function chooseTarget(text: string): boolean {
  const minor = parseTarget(text, app.range);
  app.targetChosen = true;
  if (minor === null) {
    notice(unknownTargetNotice(text, app.range), 'error');
    setTarget(app.range.newest);
    return false;
  }
  setTarget(minor);
  return true;
}
fillTargets();
setTarget(app.target);
if (params.get('version') !== null) chooseTarget(params.get('version')!);
else if (resumed?.version) chooseTarget(resumed.version);
targetSelect?.addEventListener('change', () => { chooseTarget(targetSelect.value); saveSoon(); });

// 4. The permalink, if any, replaces the default example.
async function restore(initial = false): Promise<void> {
  const frag = location.hash.slice(1);
  const short = shortID(new URL(location.href));
  if (!frag && !short) return;
  // The kept work was opened from this link: it is the link's texts with the author's edits since.
  if (initial && resumed) return;
  subject = 'the link';
  // A link opened over a page that shows results (another link pasted in the address bar): those are not the
  // link's, and a short link takes a round trip to the server.
  if (app.evaluation) showPending('Opening the link…');
  try {
    const s = short ? await openShort(short) : await decode(frag);
    apply(s);
    loaded('', linkInAddress());
    clearPanes();
    const dropped = droppedNotice(s);
    if (dropped) notice(dropped, 'info');
    if (s.version !== undefined && params.get('version') === null) chooseTarget(s.version);
  } catch (e) {
    notice(e instanceof LinkError ? e.message : `This link could not be opened: ${String(e)}`, 'error');
  }
}
function apply(s: Partial<State>): void {
  if (s.crd !== undefined) app.editors.set('crd', s.crd);
  app.editors.set('objects', s.objects ?? '');
  app.editors.set('old', s.old ?? '');
  app.editors.set('oldcrd', s.oldCrd ?? '');
  if (s.mode) setMode(s.mode);
  if (s.webhook) {
    app.webhookCode = s.webhook;
    (webhookBox.querySelector('textarea') as HTMLTextAreaElement).value = s.webhook;
    webhook.setCode(s.webhook);
  }
  if (s.tab && !params.get('tab')) setTab(s.tab);
}
function state(): State {
  return {
    crd: app.editors.text('crd'), objects: app.editors.text('objects'), old: app.editors.text('old'),
    mode: app.mode, webhook: app.webhookCode === DEFAULT_WEBHOOK ? '' : app.webhookCode, tab: app.tab,
    version: minorName(app.target),
    // The old CRD only where it is used: links of the other modes stay as they were.
    ...(app.mode === 'upgrade' ? { oldCrd: app.editors.text('oldcrd') } : {}),
  };
}
const restored = restore(true);
// An embed made by embed.js gets its example by postMessage (embedframe.ts).
onExample((ex) => apply(ex));
addEventListener('hashchange', () => { if (location.hash.slice(1) !== lastShared) void restore().then(() => run()); });

let lastShared = '';
/** The page's address without fragment or query, which links are made from. */
function home(): URL {
  const url = new URL(assets.home || './', location.href);
  url.search = '';
  return url;
}
/** Puts a handed-out link's fragment in the address bar, where hashchange leaves it be. */
function shared(frag: string): void {
  lastShared = frag;
  currentLink = frag;
  saveSoon();
  history.replaceState(null, '', `${location.pathname}${location.search}#${frag}`);
}
async function permalink(): Promise<string> {
  const frag = await encode(state());
  const url = home();
  url.hash = frag;
  shared(frag);
  return url.href;
}
async function share(): Promise<void> {
  await shareLink({ state, home: home(), notice: $('notice')!, shared });
}
$('share')?.addEventListener('click', () => void share());
addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') { e.preventDefault(); void run(); }
  if ((e.ctrlKey || e.metaKey) && (e.key === 's' || e.key === 'S')) { e.preventDefault(); void share(); }
});

function notice(text: string, kind: 'info' | 'error'): void {
  const n = $('notice');
  if (n) showNotice(n, kind, text);
}

// 5. Examples.
const examplesSelect = $<HTMLSelectElement>('examples');
// The gallery is megabytes of YAML (real CRDs) but a few hundred kB on the wire: the page's menu is filled at
// once, at a low fetch priority (examples.ts) beside the engine's download, so that it can be used while the
// engine loads. The embed has no menu, and shows only its own example: it never fetches the gallery (each
// frame of a docs page would download it, and hold its 10 MB decoded).
function loadGallery(select: HTMLSelectElement, url: string): void {
  void loadExamples(url).then((list) => {
    app.examples = list;
    const groups = new Map<string, HTMLElement>();
    for (const ex of list) {
      const cat = ex.category ?? 'Examples';
      if (!groups.has(cat)) groups.set(cat, h('optgroup', { label: cat }));
      groups.get(cat)!.append(h('option', { value: ex.id, title: describe(ex).map((p) => (typeof p === 'string' ? p : p.title)).join('') }, ex.title));
    }
    select.append(...groups.values());
    document.body.dataset.examples = String(list.length);
    showExample();
  });
}
if (examplesSelect && assets.examples) loadGallery(examplesSelect, assets.examples);
/** An example's description, its "(see SOURCE)" a link to where the example comes from (the gallery's source);
 * left out when the gallery does not say. */
function describe(ex: Example): (string | HTMLElement)[] {
  const text = ex.description ?? '';
  const source = ex.source && /^https:\/\//.test(ex.source) ? ex.source : '';
  if (!text.includes('SOURCE')) return [text];
  if (!source) return [text.replace(/\s*\(see SOURCE\)/g, '').replace(/SOURCE/g, 'its source')];
  const out: (string | HTMLElement)[] = [];
  text.split('SOURCE').forEach((part, i) => {
    if (i) out.push(h('a', { href: source, target: '_blank', rel: 'noopener', title: source, class: 'source' }, 'the source'));
    out.push(part);
  });
  return out;
}

// The menu shows the example the editors hold. A choice loads at once when made with the mouse (or confirmed in
// the menu's list); moved with the keyboard on the closed menu (each arrow key changes its value), it waits
// for Enter, or for the menu to lose the focus, so that walking the list does not load every example on the
// way. Escape puts the menu back.
let keyed = false;
examplesSelect?.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') {
    keyed = false;
    if (examplesSelect.value !== currentExample) {
      e.preventDefault();
      chooseExample();
    }
  } else if (e.key === 'Escape') {
    keyed = false;
    showExample();
  } else if (e.key === ' ' || e.key === 'F4' || (e.altKey && (e.key === 'ArrowDown' || e.key === 'ArrowUp'))) {
    keyed = false; // the list opens: a choice there is a choice
  } else if (e.key !== 'Tab' && e.key !== 'Shift' && !e.ctrlKey && !e.metaKey) {
    keyed = true;
  }
});
examplesSelect?.addEventListener('pointerdown', () => { keyed = false; });
examplesSelect?.addEventListener('change', () => {
  if (keyed) {
    examplesSelect.dataset.pending = 'true';
    examplesSelect.title = 'Enter loads this example';
    return;
  }
  chooseExample();
});
examplesSelect?.addEventListener('blur', () => {
  if (keyed && examplesSelect.value !== currentExample) chooseExample();
  keyed = false;
});
/** Puts the menu on the example the editors hold ('choose…' for none). */
function showExample(): void {
  if (!examplesSelect) return;
  examplesSelect.value = currentExample;
  if (examplesSelect.value !== currentExample) examplesSelect.value = '';
  delete examplesSelect.dataset.pending;
  examplesSelect.title = '';
}
function chooseExample(): void {
  const ex = app.examples.find((e) => e.id === examplesSelect!.value);
  if (!ex) {
    showExample();
    return;
  }
  loadExample(ex);
}
/** Replaces the editors with an example; the author's edits it replaces can be had back (offerUndo). */
function loadExample(ex: Example, undoText = 'Replaced your edits'): void {
  const before = isEdited() ? snapshot() : null;
  subject = ex.title;
  apply({ crd: ex.crd, objects: ex.objects ?? '', old: ex.old ?? '', oldCrd: ex.oldCrd ?? '', mode: ex.mode ?? 'create', tab: ex.tab });
  loaded(ex.id, '');
  clearPanes();
  if (ex.tab) setTab(ex.tab);
  if (ex.description) showNotice($('notice')!, 'info', h('span', {}, `${ex.title}: `, ...describe(ex)));
  else $('notice')!.hidden = true;
  history.replaceState(null, '', location.pathname + location.search);
  if (before) offerUndo(`${undoText} with ${ex.title}.`, before);
  else hideUndo();
  void run();
}
/** The editors now hold what was loaded from an example or a link, as loaded. */
function loaded(example: string, link: string): void {
  currentExample = example;
  currentLink = link;
  baseline = texts();
  showExample();
  saveSoon();
}

// Undo: what the editors held before an example, a reset or a file replaced the author's edits.
interface Snapshot { texts: Record<EditorId, string>; mode: CrdplayMode; webhook: string; example: string; link: string; tab: Tab }
function snapshot(): Snapshot {
  return { texts: texts(), mode: app.mode, webhook: app.webhookCode, example: currentExample, link: currentLink, tab: app.tab };
}
const undoBar = h('div', { id: 'undo', class: 'notice undo', role: 'status', hidden: true });
$('notice')?.after(undoBar);
let undoTimer = 0;
function offerUndo(text: string, before: Snapshot): void {
  const undo = h('button', { type: 'button', id: 'undo-button' }, 'Undo');
  const close = h('button', { type: 'button', class: 'close', 'aria-label': 'close' }, '×');
  undo.addEventListener('click', () => {
    hideUndo();
    subject = 'your edits';
    apply({ crd: before.texts.crd, objects: before.texts.objects, old: before.texts.old, oldCrd: before.texts.oldcrd, mode: before.mode, webhook: before.webhook, tab: before.tab });
    currentExample = before.example;
    currentLink = before.link;
    baseline = null;
    showExample();
    $('notice')!.hidden = true;
    clearPanes();
    saveSoon();
    void run();
  });
  close.addEventListener('click', hideUndo);
  undoBar.replaceChildren(h('span', {}, `${text} `), undo, close);
  undoBar.hidden = false;
  clearTimeout(undoTimer);
  undoTimer = window.setTimeout(hideUndo, UNDO_MS);
}
function hideUndo(): void {
  clearTimeout(undoTimer);
  undoBar.hidden = true;
}
function resetWebhook(): void {
  app.webhookCode = DEFAULT_WEBHOOK;
  (webhookBox.querySelector('textarea') as HTMLTextAreaElement).value = DEFAULT_WEBHOOK;
  webhook.setCode(DEFAULT_WEBHOOK);
}

// Reset: the tab forgets its kept work and the page shows the default example (with an undo).
$('reset')?.addEventListener('click', () => {
  clearWork();
  resetWebhook();
  app.targetChosen = false;
  setTarget(app.range.newest);
  setTab('result');
  loadExample(DEFAULT_EXAMPLE, 'Reset: replaced your edits');
});

// The tab's work is kept a moment after each change (and when the page goes), never on each keystroke.
let saveTimer = 0;
function saveSoon(): void {
  if (embed) return;
  clearTimeout(saveTimer);
  saveTimer = window.setTimeout(saveNow, SAVE_MS);
}
function saveNow(): void {
  clearTimeout(saveTimer);
  saveTimer = 0;
  const t = texts();
  saveWork({
    crd: t.crd, objects: t.objects, old: t.old, oldCrd: t.oldcrd, mode: app.mode, example: currentExample,
    version: app.targetChosen ? minorName(app.target) : undefined,
    webhook: app.webhookCode === DEFAULT_WEBHOOK ? undefined : app.webhookCode, link: currentLink, edited: isEdited(),
  });
}
addEventListener('pagehide', () => { if (saveTimer) saveNow(); });

// Import: YAML (or JSON) files into the editors, CRDs into the CRD editor and the other documents into the
// objects editor; an editor that gets nothing keeps its text.
const importFile = $<HTMLInputElement>('import-file');
$('import')?.addEventListener('click', () => importFile?.click());
importFile?.addEventListener('change', async () => {
  const files = [...(importFile.files ?? [])];
  importFile.value = '';
  if (!files.length) return;
  const names = files.map((f) => f.name).join(', ');
  let docs: { crds: string[]; objects: string[] };
  try {
    docs = splitDocuments(await Promise.all(files.map((f) => f.text())));
  } catch (e) {
    notice(`${names} could not be read: ${String(e)}`, 'error');
    return;
  }
  if (!docs.crds.length && !docs.objects.length) {
    notice(`${names}: no YAML documents to import.`, 'error');
    return;
  }
  const before = isEdited() ? snapshot() : null;
  if (docs.crds.length) app.editors.set('crd', joinDocuments(docs.crds));
  if (docs.objects.length) app.editors.set('objects', joinDocuments(docs.objects));
  subject = names;
  currentExample = '';
  currentLink = '';
  baseline = null;
  showExample();
  history.replaceState(null, '', location.pathname + location.search);
  clearPanes();
  const count = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  notice(`Imported ${count(docs.crds.length, 'CRD document')} into the CRD editor and ${count(docs.objects.length, 'document')} into the objects editor from ${names}.`, 'info');
  if (before) offerUndo('Replaced your edits with the imported files.', before);
  saveSoon();
  void run();
});

// Download: the editors' texts as files, and the crdplay check command that gives the same result.
const downloadDialog = $<HTMLDialogElement>('download-dialog');
let downloadURLs: string[] = [];
$('download')?.addEventListener('click', () => {
  if (!downloadDialog) return;
  for (const u of downloadURLs) URL.revokeObjectURL(u);
  const t = texts();
  const input = { mode: app.mode, crd: t.crd, objects: t.objects, old: t.old, oldCrd: t.oldcrd, emulated: app.client.emulatedVersion ?? '' };
  const files = downloads(input);
  downloadURLs = files.map((f) => URL.createObjectURL(new Blob([f.text], { type: f.name.endsWith('.sh') ? 'text/x-shellscript' : 'application/yaml' })));
  $('download-files')!.replaceChildren(...files.map((f, i) => h('li', {},
    h('a', { href: downloadURLs[i], download: f.name, 'data-file': f.name }, f.name), h('span', { class: 'muted' }, `: ${f.what}`))));
  const { command, note } = checkCommand(input);
  $('download-command')!.textContent = command;
  const n = $('download-note')!;
  n.textContent = note;
  n.hidden = !note;
  downloadDialog.showModal();
});
$('download-copy')?.addEventListener('click', () => {
  navigator.clipboard?.writeText($('download-command')!.textContent ?? '').catch(() => {});
});

// 6. The engine.
const mb = (n: number) => (n / 1e6).toFixed(1) + ' MB';
// boot.ts started it already (so that the wasm downloads while this bundle builds the editors); a page
// without boot.ts starts it here.
app.client = (globalThis.crdplay as CrdplayClient | undefined)
  ?? install({ workerURL: new URL(assets.worker, location.href), wasmURL: new URL(assets.wasm, location.href), wasmExecURL: new URL(assets.wasmExec, location.href) });
// Progress events that came before this listener: the bar starts from the last one.
if (app.client.lastProgress) showProgress(app.client.lastProgress.loaded, app.client.lastProgress.total);
function showProgress(loaded: number, total: number): void {
  const p = $<HTMLProgressElement>('progress')!;
  if (total) p.max = total;
  p.value = loaded;
  $('bytes')!.textContent = total ? `${mb(loaded)} of ${mb(total)}` : mb(loaded);
  // The Result pane says it too, until there is a result.
  loading.text.textContent = total ? `Loading the engine (${mb(total)})… ${mb(loaded)}` : `Loading the engine… ${mb(loaded)}`;
  if (total) loading.bar.max = total;
  loading.bar.value = loaded;
}
app.client.addEventListener('progress', ({ detail: { loaded, total } }) => showProgress(loaded, total));
// A worker of the page's own (boot.ts's client.js, another copy of the class than this bundle's: no instanceof)
// can have siblings; an embed on a docs page's shared engine (embedframe.ts) cannot.
engines = new Engines(app.client, typeof app.client.emulatedVersion === 'string' ? (v) => new WorkerClient({
  workerURL: new URL(assets.worker, location.href), wasmURL: new URL(assets.wasm, location.href),
  wasmExecURL: new URL(assets.wasmExec, location.href), emulatedVersion: v,
}) : null);
app.client.ready.then(({ version }) => {
  const status = $('status')!;
  status.dataset.state = 'ready';
  $('engine')!.dataset.state = 'ready';
  fillTargets(); // labelled by the versions the engine says it emulates
  showEngine();
  status.title = `${version.go}${version.revision ? ', ' + version.revision.slice(0, 12) + (version.modified ? '+' : '') : ''}`;
  $('progress')!.hidden = $('bytes')!.hidden = true;
  if (!app.evaluation) showPending();
  performance.mark('crdplay:engine-ready');
  webhook.onCall = (line) => { const l = webhookBox.querySelector('.webhook-log'); if (l) l.textContent += line + '\n'; };
  app.client.setWebhook(webhook.fn);
  void restored.then(() => run()).then(() => loadCRDSchema());
}, (err) => {
  const message = `The engine could not start: ${err?.error ?? err?.message ?? String(err)}`;
  $('status')!.dataset.state = 'failed';
  $('engine')!.dataset.state = 'failed';
  $('status')!.textContent = message;
  noResult(`${message}. Nothing can be evaluated; hover and completion still work from the CRD text.`);
  for (const t of ['cel', 'table', 'versions'] as Tab[]) paneBody(t)?.replaceChildren();
  setBusy(false);
});
selectEngine();

// Emulated versions: the target picks the worker that answers (engines.ts). Switching keeps the editors' text
// and evaluates it again there; a worker that cannot start is dropped for the default, and the page says so.
function selectEngine(): void {
  const c = engines?.for(minorName(app.target));
  if (c && c !== app.client) useEngine(c);
}
function useEngine(c: CrdplayClient): void {
  app.client = c;
  app.session = {}; // that worker's evaluator has installed none of the editors' CRDs
  globalThis.crdplay = c;
  c.setWebhook(webhook.fn);
  showEngine();
  showTarget();
  $('pane-cli')?.dispatchEvent(new CustomEvent(ENGINE_EVENT, { detail: engineName({ kubernetes: minorName(app.range.newest), emulated: c.emulatedVersion }) }));
  c.ready.then(() => showEngine(), (err) => {
    if (app.client !== c) return;
    engines!.drop(c);
    notice(fallbackNotice(c.emulatedVersion ?? '', err, engines!.newest), 'error');
    useEngine(engines!.default);
  });
  void run();
}
/** The status line names what runs: "Kubernetes v1.37.2 emulating 1.35", from the engine's /version. */
function showEngine(): void {
  const r = engines?.readyOf(app.client);
  document.body.dataset.engine = r?.version.emulated ?? '';
  const st = $('status');
  if (!st || st.dataset.state !== 'ready') return;
  st.dataset.busy = String(busy);
  st.textContent = !r ? `Starting Kubernetes ${app.client.emulatedVersion} (emulated)…`
    : busy ? 'Evaluating…'
    : `Engine ready${app.client === engines?.default ? ` in ${Math.round(r.timings.page)} ms` : ''}: ${engineName(r.version)}`;
}
window.crdplayEngines = { engines: engines!, emulate: (v) => useEngine(engines!.start(v)) };

/** CustomResourceDefinition's schema from the engine's own OpenAPI v3 document (kube-apiserver's, generated
 * from upstream's types), for the CRD editor's hover and completion. A failure leaves it without them. */
async function loadCRDSchema(): Promise<void> {
  try {
    const res = await app.client.request({ path: '/openapi/v3/apis/apiextensions.k8s.io/v1' });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    crdKinds = openAPIKinds(JSON.parse(res.body), 'apiextensions.k8s.io', 'v1');
    document.body.dataset.crdSchema = String(crdKinds.length);
  } catch (e: any) {
    console.warn('crdplay: no schema for the CRD editor:', e?.error ?? e?.message ?? e);
  }
}

// 7. Evaluation: on each edit, one at a time, the latest input wins. An edit starts its evaluation at once
// when evaluations of its kind are quick (an object edit against installed CRDs: milliseconds), so that its
// results are on screen in the next frames; edits made meanwhile are evaluated together when it ends. An edit
// whose evaluation is slow (a CRD edit that reinstalls a big CRD) waits DEBOUNCE_MS for the next keystroke.
// A new CRD text is installed with its analysis deferred (the rules' costs, compat, explain trees and the
// objects' CEL costs: what only some panes and the CRD editor's version warnings show, and a big CRD's take
// a while): the objects' results are shown as soon as the API has answered, and the loop then asks for the
// analysis, whose complete results replace them. run() resolves once the results of the texts it was called
// for are shown; app.idle once the analysis is in too.
let timer = 0;
let dirty = false;
let running = false;
/** The run() calls waiting for results to be shown. */
let waiting: (() => void)[] = [];
function resolveWaiting(): void {
  const w = waiting;
  waiting = [];
  for (const f of w) f();
}
/** The wall times of the last evaluations that installed CRDs, and of the last that did not; the quickest of
 * them is what the next one is expected to take (a busy moment does not make the page wait). */
const costs = { crds: [] as number[], objects: [] as number[] };
function schedule(id: EditorId): void {
  clearTimeout(timer);
  // An edit of a CRD editor reinstalls (its text is not read here: a big CRD's is megabytes, on each keystroke).
  const crdEdit = id === 'crd' || id === 'oldcrd';
  const seen = costs[crdEdit ? 'crds' : 'objects'];
  // Before any, a CRD's install is expected to be slow, an object's evaluation quick.
  const expected = seen.length ? Math.min(...seen) : crdEdit ? Infinity : 0;
  if (expected < QUICK_MS) void run();
  else timer = window.setTimeout(() => void run(), DEBOUNCE_MS);
}
async function run(): Promise<void> {
  clearTimeout(timer);
  if ($('status')?.dataset.state !== 'ready') {
    // No engine yet: the explain pane follows the CRD text from the page's reading of it.
    stale.add('explain');
    if (app.tab === 'explain') renderPane('explain');
    return;
  }
  const shown = new Promise<void>((r) => waiting.push(r));
  if (running) {
    dirty = true;
    return shown;
  }
  running = true;
  let done!: () => void;
  app.idle = new Promise((r) => { done = r; });
  try {
    let again = true;
    while (again) {
      const client = app.client;
      let res: CrdplayEvaluateResult;
      let t0: number;
      let installs: boolean;
      let analysis: boolean;
      let gen = editGen;
      try {
        await client.ready;
        if (!client.has('evaluate')) throw new Error('this engine build has no evaluator (crdplay.evaluate)');
        // What is read now is what this evaluation answers: edits made before (in the same task, or while
        // waiting for the engine) need no evaluation of their own.
        dirty = false;
        // The storage migration is asked for by one evaluation: the next edit's runs without it.
        const migrating = app.migrateNext && app.mode === 'upgrade';
        app.migrateNext = false;
        const texts = { crd: app.editors.text('crd'), objects: app.editors.text('objects'), old: app.editors.text('old'), oldCrd: app.editors.text('oldcrd') };
        gen = editGen;
        installs = texts.crd !== app.session.crdText || (app.mode === 'upgrade' && texts.oldCrd !== app.session.oldCrdText);
        // The shown results wait for their analysis, and nothing was edited since: this evaluation is that.
        analysis = !installs && !!app.evaluation?.analysisPending;
        // The panes will be replaced (a rerun in another mode, traced or with tables, replaces them too); the
        // analysis of the results shown completes them.
        if (!analysis) setBusy(true);
        t0 = performance.now();
        // The requests are traced only for the log, when it is shown (setTab evaluates again when it opens);
        // the analysis' evaluation repeats the requests the log has just shown.
        res = await evaluate((input) => client.call('evaluate', input), texts, app.mode, app.session,
          { trace: app.tab === 'http' && !analysis, deferAnalysis: installs && app.mode !== 'upgrade', tables: app.tab === 'table', migrate: migrating });
      } catch (e) {
        if (client === app.client) throw e;
        dirty = true; // the page switched engines meanwhile: this one's answer, or its end, is not the page's
        continue;
      }
      const call = performance.now() - t0;
      if (!analysis) {
        const seen = costs[installs ? 'crds' : 'objects'];
        seen.push(call);
        if (seen.length > 3) seen.shift();
      }
      if (client !== app.client) dirty = true;
      if (dirty) continue; // stale: the text or the engine changed meanwhile
      // An edit since, whose evaluation waits for the next keystroke (schedule's timer): its run evaluates the
      // texts now in the editors, and this answer, of texts already gone, is not shown.
      if (gen !== editGen) break;
      setBusy(false);
      if (analysis && !res.exchanges) res.exchanges = app.evaluation?.exchanges; // the same requests, logged once
      show(res, t0, call, analysis ? undefined : res.exchanges);
      if (!dirty) resolveWaiting();
      again = dirty || !!res.analysisPending;
    }
  } catch (e: any) {
    const message = `The evaluation failed: ${e?.error ?? e?.message ?? String(e)}`;
    notice(message, 'error');
    noResult(message);
    setBusy(false);
  } finally {
    running = false;
    resolveWaiting();
    done();
  }
}

/** Evaluates the same texts again with the upgrade mode's storage migration (the Result pane's button). */
function migrate(): Promise<void> {
  app.migrateNext = true;
  return run();
}

/** Says in the result pane why there is no result, while it has no evaluation to show: a blank pane would
 * say nothing. */
function noResult(message: string): void {
  if (!app.evaluation) $('pane-result')?.replaceChildren(h('p', { class: 'error placeholder' }, message));
}

/** Shows an evaluation's results; log are the exchanges to add to the HTTP log. */
function show(res: CrdplayEvaluateResult, start = 0, call = 0, log = res.exchanges): void {
  const t0 = performance.now();
  if (!performance.getEntriesByName('crdplay:first-result').length) performance.mark('crdplay:first-result');
  app.evaluation = res;
  // runs counts complete results: a CRD's first results, whose analysis is pending, are followed by them.
  if (!res.analysisPending) app.runs++;
  document.body.dataset.analysis = res.analysisPending ? 'pending' : 'done';
  // Only the default's range: an engine emulating 1.35 considers minors up to 1.35, the menu up to the newest.
  if (res.kubernetes && app.client === engines?.default && (res.kubernetes.oldest !== app.range.oldest || res.kubernetes.newest !== app.range.newest)) {
    // The engine's range replaces the page's guess; a chosen target it lacks falls back to its newest.
    const was = app.target;
    app.range = res.kubernetes;
    if (!app.targetChosen || was < app.range.oldest || was > app.range.newest) app.target = app.range.newest;
    fillTargets();
    setTarget(app.target);
  }
  showDiagnostics(res);
  if (app.mode !== 'upgrade') scratch.update(res);
  const t1 = performance.now();
  // The visible pane alone; the others when shown (setTab).
  for (const t of TABS) stale.add(t);
  if (log) pushLog(log.map(traced));
  renderPane(app.tab);
  const t2 = performance.now();
  // The kinds of a new CRD text (hover and completion in the objects editors read them; a big CRD takes a
  // while to read) are read when the page is idle rather than on the next keystroke.
  if (kindsCache.text !== app.editors.text('crd')) (globalThis.requestIdleCallback ?? setTimeout)(() => void kinds());
  app.timings = { start, call, engine: res.timings.total, diagnostics: t1 - t0, pane: t2 - t1, shown: t2 - t0 };
  document.body.dataset.runs = String(app.runs);
  if (embed) {
    // "Open in crdplay" carries what the frame shows.
    // Every evaluation would store a short link, so the link is made without one: a state too big even without
    // its schema descriptions says so on the link rather than opening something else.
    void fittingFragment(state(), { short: false }).then(({ frag, note }) => {
      const a = $<HTMLAnchorElement>('open-full');
      if (!a) return;
      const url = home();
      url.hash = frag;
      a.href = url.href;
      a.title = note;
      a.removeAttribute('aria-disabled');
    }, (e) => {
      const a = $<HTMLAnchorElement>('open-full');
      if (!a) return;
      a.removeAttribute('href');
      a.setAttribute('aria-disabled', 'true');
      a.title = e instanceof LinkError ? e.message : String(e);
    });
  }
  const st = $('status');
  if (st) st.dataset.evaluated = `${res.timings.total.toFixed(1)}`;
}

/** The engine's diagnostics, and the target's warnings (versions.ts), in the editors and their counts. */
function showDiagnostics(res: CrdplayEvaluateResult): void {
  const all = [...res.diagnostics, ...targetDiagnostics(res, app.target)];
  app.editors.show(all);
  summarize(all);
}

function summarize(diags: CrdplayDiagnostic[]): void {
  for (const id of ['crd', 'objects', 'old', 'oldcrd'] as EditorId[]) {
    const mine = diags.filter((d) => editorOf(d.source) === id);
    const errors = mine.filter((d) => d.severity === 'error').length;
    const warnings = mine.filter((d) => d.severity === 'warning').length;
    const info = $(`${id}-info`);
    if (info) {
      info.textContent = errors || warnings ? `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}` : mine.length === 0 && app.runs ? 'ok' : '';
      info.dataset.errors = String(errors);
    }
  }
}

function pushLog(x: Exchange[]): void {
  app.log.push(...x);
  if (app.log.length > LOG_LIMIT) app.log.splice(0, app.log.length - LOG_LIMIT);
  stale.add('http');
  if (app.tab === 'http') renderPane('http');
}

function buildWebhookBox(): HTMLElement {
  const ta = h('textarea', { class: 'webhook-code', id: 'webhook-code', spellcheck: 'false', rows: '16', 'aria-label': 'conversion webhook (JavaScript)' }) as HTMLTextAreaElement;
  ta.value = app.webhookCode;
  const apply = h('button', { type: 'button' }, 'Use this webhook and run');
  apply.addEventListener('click', () => {
    app.webhookCode = ta.value;
    webhook.setCode(ta.value);
    saveSoon();
    void run();
  });
  return h('section', { class: 'webhook' }, h('h3', {}, 'Conversion webhook (JavaScript, runs in a sandboxed worker)'), ta, apply,
    h('pre', { class: 'webhook-log code' }));
}

// 8. The command line and the log.
const cli = mountCLI($('pane-cli')!, {
  request: (req) => app.client.request(req),
  kubectl: null,
  files: () => ({ 'crd.yaml': app.editors.text('crd'), 'objects.yaml': app.editors.text('objects'), 'old.yaml': app.editors.text('old') }),
  logged: (x) => pushLog(x),
  get ready() { return app.client.ready; },
});
void app.client.ready.then(() => {
  if (!app.client.has('kubectl')) return;
  // The engine's kubectl: argv and the editor files in, output and the requests it made out.
  mountCLI($('pane-cli')!, {
    request: (req) => app.client.request(req),
    kubectl: kubectlVia((arg) => app.client.call('kubectl', arg)),
    files: () => ({ 'crd.yaml': app.editors.text('crd'), 'objects.yaml': app.editors.text('objects'), 'old.yaml': app.editors.text('old') }),
    logged: (x) => pushLog(x),
    get ready() { return app.client.ready; },
  });
});
void cli;
renderLog($('pane-http')!, app.log);

// 9. The embed dialog.
const dialog = $<HTMLDialogElement>('embed-dialog');
async function snippet(): Promise<string> {
  // A state too big for a link gets a link that still shows it (or says why there is none), never an iframe
  // that would open the default example instead.
  let frag: string;
  let note: string;
  try {
    ({ frag, note } = await fittingFragment(state(), { short: true }));
  } catch (e) {
    return `<!-- crdplay: no embed snippet: ${e instanceof LinkError ? e.message : String(e)} -->`;
  }
  const p = new URLSearchParams();
  if (($('embed-readonly') as HTMLInputElement)?.checked) p.set('readonly', '1');
  if (($('embed-objects-only') as HTMLInputElement)?.checked) p.set('panes', `objects,${($('embed-tab') as HTMLSelectElement).value}`);
  p.set('tab', ($('embed-tab') as HTMLSelectElement)?.value ?? 'result');
  if (app.target !== app.range.newest) p.set('version', minorName(app.target));
  const src = new URL(`embed/?${p}#${frag}`, home()).href;
  return (note ? `<!-- crdplay: ${note} -->\n` : '') +
    `<iframe src="${src}" title="crdplay" style="width:100%;border:0" height="560" loading="lazy"></iframe>\n` +
    `<script>addEventListener('message',function(e){if(e.data&&e.data.type==='crdplay:resize')` +
    `document.querySelectorAll('iframe').forEach(function(f){if(f.contentWindow===e.source)f.height=e.data.height})})</script>`;
}
async function refreshSnippet(): Promise<void> {
  ($('embed-snippet') as HTMLTextAreaElement).value = await snippet();
}
$('embed-open')?.addEventListener('click', () => { void refreshSnippet(); dialog?.showModal(); });
for (const id of ['embed-readonly', 'embed-objects-only', 'embed-tab']) $(id)?.addEventListener('change', () => void refreshSnippet());
$('embed-copy')?.addEventListener('click', () => {
  const ta = $('embed-snippet') as HTMLTextAreaElement;
  navigator.clipboard?.writeText(ta.value).catch(() => { ta.select(); });
});
$('run')?.addEventListener('click', () => void run());

window.crdplayPlayground = Object.assign(app, { run, permalink, scratch });
