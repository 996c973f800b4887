// Browser test of embed.js (docs/embedding.md) in headless Chromium: a docs page on a second origin (a tiny
// static server on another loopback port) with three code blocks and one script tag. Nothing of crdplay
// but embed.js loads before the reader scrolls to a block; then each block becomes a live example that shows
// the engine's answer (a 201 for a good object, a 422 at its line for a broken one, on a CRD that a block
// elsewhere on the page holds), all three on one engine frame; the keyboard can tab into and out of an editor;
// the page's CSS does not reach the frames; the docs theme's switch turns them dark and back; and no frame
// logs an error. Then the site from a plain static
// host under a path prefix, the docs page on a third origin; and an example too big for a link, whose "Open in
// crdplay" says why there is none, in a dark frame on a light system; and a CRD upgrade.
// Screenshot: test-results/embedscript.png.
//
// Run: CRDPLAY_WEB_DIR=build/web-test node --test web/test/embedscript.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { launch, resultsDir, startServer, webDir } from './harness.mjs';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.demo.example.com
spec:
  group: demo.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: string, enum: [small, large]}
              replicas: {type: integer, maximum: 10}`;
const GOOD = `apiVersion: demo.example.com/v1
kind: Widget
metadata:
  name: good-widget
spec:
  size: small`;
// The broken field is on line 7 of the block.
const BROKEN = `apiVersion: demo.example.com/v1
kind: Widget
metadata:
  name: broken-widget
spec:
  size: small
  replicas: 99`;
const BROKEN_LINE = 7;
const UPDATE = `${GOOD}
---
${GOOD.replace('small', 'large')}`;

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
/** A docs page: prose, and each block far below the last (the page scrolls to each in turn). */
function docsPage(scriptSrc) {
  const gap = '<div style="height:2400px">Some prose.</div>';
  return `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>docs</title>
<style>iframe { border: 9px solid red !important; max-width: 10% !important; } pre { white-space: pre; }</style>
<script src="${scriptSrc}" data-selector="pre.crdplay, .crdplay pre" async></script></head><body>
<h1>Widgets</h1>${gap}
<pre class="crdplay" id="widget-crd">${esc(CRD)}
---
${esc(GOOD)}</pre>${gap}
<pre class="crdplay" data-crd="#widget-crd" id="broken">${esc(BROKEN)}</pre>${gap}
<div class="highlight crdplay" data-mode="update" data-crd="#widget-crd"><pre><code>${esc(UPDATE)}</code></pre></div>${gap}
</body></html>`;
}

/** A static server on a free loopback port: routes maps a path to [type, body]; every request is logged. */
function staticServer(routes) {
  const log = [];
  const srv = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    log.push(url.pathname);
    const r = routes(url.pathname);
    if (!r) { res.statusCode = 404; res.end('not found'); return; }
    res.setHeader('Content-Type', r[0]);
    res.end(r[1]);
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${srv.address().port}`, log, close: () => srv.close() })));
}

let server;
let browser;
const closers = [];

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  if (!existsSync(path.join(webDir, 'embed.js'))) throw new Error(`${webDir}/embed.js is missing: build the site with go run ./tools/webbuild -test`);
  server = await startServer({ quiet: true });
  browser = await launch({ viewport: { width: 1000, height: 800 } });
});
after(async () => {
  await browser?.close();
  server?.stop();
  for (const c of closers) c();
});

/** Problems the page and its frames log (console errors, uncaught exceptions). */
function watchErrors(page) {
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`${m.location()?.url ?? ''}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(String(e)));
  return problems;
}

/** The embed frames of the page (not the engine frame), in the page's order. */
const embedFrames = (page) => page.frames().filter((f) => /\/embed\/\?/.test(f.url()));

/** Scrolls block number i (0-based, of the selector) into view and waits for its frame's first evaluation. */
async function liveAt(page, selector, i) {
  await page.evaluate(([sel, n]) => document.querySelectorAll(sel)[n].scrollIntoView({ block: 'center' }), [selector, i]);
  await page.waitForFunction((n) => document.querySelectorAll('.crdplay-live').length > n, i, { timeout: 30_000 });
  const handle = await page.evaluateHandle((n) => document.querySelectorAll('.crdplay-live')[n].shadowRoot.querySelector('iframe'), i);
  const frame = await handle.asElement().contentFrame();
  await frame.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, { timeout: 120_000, polling: 100 });
  return { frame, iframe: handle.asElement() };
}

test('three blocks on a docs page of another origin: lazy, live, one engine, no errors', async () => {
  const docs = await staticServer((p) => p === '/' ? ['text/html', docsPage(`${server.url}embed.js`)] : null);
  closers.push(docs.close);
  const page = await browser.context.newPage();
  const problems = watchErrors(page);
  const crdplayRequests = [];
  page.on('request', (r) => { if (r.url().startsWith(server.url)) crdplayRequests.push(new URL(r.url()).pathname); });
  const started = Date.now();
  await page.goto(docs.url + '/');
  // Nothing but the script before the reader scrolls: no frame, no engine.
  await page.waitForTimeout(1500);
  assert.deepEqual(crdplayRequests, ['/embed.js']);
  assert.equal(await page.locator('iframe').count(), 0);
  // Scrolling a little (not near a block) still loads nothing.
  await page.mouse.wheel(0, 600);
  await page.waitForTimeout(500);
  assert.deepEqual(crdplayRequests, ['/embed.js']);

  // 1. The CRD and an object in one block: created.
  const first = await liveAt(page, 'pre.crdplay, .crdplay pre', 0);
  const firstLive = Date.now() - started;
  const one = await first.frame.evaluate(() => {
    const ev = window.crdplayPlayground.evaluation;
    return {
      crd: window.crdplayPlayground.editors.text('crd'), objects: window.crdplayPlayground.editors.text('objects'),
      statuses: ev.objects.map((o) => o.status), crdAccepted: ev.crds.map((c) => c.accepted),
      badge: document.querySelector('#pane-result .badge')?.textContent, open: document.getElementById('open-full').href,
    };
  });
  assert.equal(one.crd.trim(), CRD);
  assert.equal(one.objects.trim(), GOOD);
  assert.deepEqual(one.statuses, [201]);
  assert.deepEqual(one.crdAccepted, [true]);
  // The example went by postMessage, not in the frame's URL; "Open in crdplay" carries it in a permalink.
  assert.doesNotMatch(first.frame.url(), /widget/i);
  assert.match(one.open, /^http:\/\/127\.0\.0\.1:\d+\/#v1\./);
  // The block is hidden, the frame shown in its place; the page's iframe rules do not reach it.
  assert.equal(await page.locator('#widget-crd').isVisible(), false);
  const box = await first.iframe.boundingBox();
  assert.ok(box.width > 900, `frame width ${box.width}`);
  assert.equal(await first.iframe.evaluate((f) => getComputedStyle(f).borderTopWidth), '0px');
  assert.equal(await first.iframe.getAttribute('sandbox'), 'allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox');
  assert.equal(await page.getAttribute('iframe[src*="/embed/engine.html"]', 'sandbox'), 'allow-scripts allow-same-origin');
  // The frame cannot reach into the docs page.
  assert.equal(await first.frame.evaluate(() => { try { return String(parent.document.title); } catch { return 'blocked'; } }), 'blocked');

  // Keyboard: Tab reaches the objects editor and leaves it again.
  await first.frame.focus('#objects-editor .cm-content');
  await first.frame.press('#objects-editor .cm-content', 'Tab');
  assert.equal(await first.frame.evaluate(() => !!document.activeElement?.closest('#objects-editor')), false);
  await page.keyboard.press('Shift+Tab');
  assert.equal(await first.frame.evaluate(() => !!document.activeElement?.closest('#objects-editor')), true);
  assert.match(await first.frame.textContent('#keys-hint'), /Tab/);

  // 2. A broken object on the CRD of block 1 (data-crd): a 422 at its line.
  const second = await liveAt(page, 'pre.crdplay, .crdplay pre', 1);
  const two = await second.frame.evaluate(() => {
    const ev = window.crdplayPlayground.evaluation;
    return {
      crdShown: !document.getElementById('crd-frame').classList.contains('gone'),
      crd: window.crdplayPlayground.editors.text('crd'),
      statuses: ev.objects.map((o) => o.status),
      errors: ev.diagnostics.filter((d) => d.source === 'objects' && d.severity === 'error').map((d) => ({ line: d.line, message: d.message })),
      marked: [...document.querySelectorAll('#objects-editor .cm-line')].findIndex((l) => l.querySelector('.cm-lintRange-error')) + 1,
      readOnly: document.querySelector('#objects-editor .cm-content').getAttribute('contenteditable'),
    };
  });
  assert.equal(two.crdShown, false);
  assert.equal(two.crd.trim(), CRD);
  assert.deepEqual(two.statuses, [422]);
  assert.ok(two.errors.some((e) => e.line === BROKEN_LINE && /replicas/.test(e.message)), JSON.stringify(two.errors));
  assert.equal(two.marked, BROKEN_LINE);
  // Still correct after the other frame evaluated on the same engine: an edit in the first frame.
  await first.frame.evaluate(() => window.crdplayPlayground.editors.set('objects', window.crdplayPlayground.editors.text('objects').replace('small', 'medium')));
  // (Polled: an off-screen frame gets no animation frames.)
  await first.frame.waitForFunction(() => window.crdplayPlayground.evaluation.objects[0]?.status === 422, null, { timeout: 30_000, polling: 100 });

  // 3. An update in a Hugo-style wrapper (div.highlight.crdplay > pre): old then new object.
  const third = await liveAt(page, 'pre.crdplay, .crdplay pre', 2);
  const three = await third.frame.evaluate(() => ({
    mode: window.crdplayPlayground.mode, old: window.crdplayPlayground.editors.text('old'),
    objects: window.crdplayPlayground.editors.text('objects'),
    statuses: window.crdplayPlayground.evaluation.objects.map((o) => [o.operation, o.status]),
  }));
  assert.equal(three.mode, 'update');
  assert.match(three.old, /size: small/);
  assert.match(three.objects, /size: large/);
  assert.deepEqual(three.statuses, [['update', 200]]);

  // One engine for the page: one engine frame, one download of the wasm.
  assert.equal(page.frames().filter((f) => f.url().includes('/embed/engine.html')).length, 1);
  assert.equal(embedFrames(page).length, 3);
  assert.equal(crdplayRequests.filter((p) => p.endsWith('.wasm')).length, 1, crdplayRequests.join('\n'));
  await page.screenshot({ path: path.join(resultsDir, 'embedscript.png') });
  // The docs theme's switch (Docusaurus's html[data-theme]) turns every frame dark, and back.
  const background = (f) => f.waitForFunction((want) => getComputedStyle(document.body).backgroundColor === want, 'rgb(20, 22, 27)', { polling: 100, timeout: 10_000 });
  await page.evaluate(() => { document.documentElement.dataset.theme = 'dark'; });
  for (const f of [first.frame, second.frame, third.frame]) await background(f);
  await page.evaluate(() => { document.documentElement.dataset.theme = 'light'; });
  await first.frame.waitForFunction(() => getComputedStyle(document.body).backgroundColor === 'rgb(255, 255, 255)', null, { polling: 100, timeout: 10_000 });
  assert.deepEqual(problems, []);
  console.log(`embedscript: first live example ${firstLive} ms after navigation (a cold profile)`);
  await page.close();
});

test('a plain static host under a path prefix, the docs page on a third origin, a Docusaurus code block', async () => {
  const prefix = '/tools/crdplay/';
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.css': 'text/css' };
  const site = await staticServer((p) => {
    if (!p.startsWith(prefix)) return null;
    let rel = p.slice(prefix.length);
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    const file = path.join(webDir, rel);
    if (!file.startsWith(webDir) || !existsSync(file)) return null;
    return [types[path.extname(file)] ?? 'application/octet-stream', readFileSync(file)];
  });
  closers.push(site.close);
  // The second block as Docusaurus writes a fence (lines ending in <br>, line numbers, a copy button), in an
  // MDX wrapper that carries its options.
  const docusaurus = GOOD.split('\n').map((l, i) => `<span class="token-line"><span class="codeLineNumber_Tfdd">${i + 1}</span>` +
    `<span class="token plain">${esc(l)}</span><br></span>`).join('');
  const docs = await staticServer((p) => p === '/' ? ['text/html', `<!doctype html><link rel="icon" href="data:,"><body>
<pre class="crdplay" id="c1">${esc(CRD)}
---
${esc(GOOD)}</pre>
<div class="crdplay" data-crd="#c1" data-panes="objects,table"><div class="language-crdplay theme-code-block codeBlockContainer_Ckt0">
<div class="codeBlockContent_biex"><pre tabindex="0" class="prism-code language-crdplay codeBlock_bY9V thin-scrollbar"><code class="codeBlockLines_e6Vv">${docusaurus}</code></pre>
<div class="buttonGroup__atx"><button type="button" aria-label="Copy code to clipboard" class="clean-btn">Copy</button></div></div></div></div>
<script src="${site.url}${prefix}embed.js"></script></body>`] : null);
  closers.push(docs.close);
  const page = await browser.context.newPage();
  const problems = watchErrors(page);
  await page.goto(docs.url + '/');
  const { frame } = await liveAt(page, 'pre.crdplay', 0);
  assert.deepEqual(await frame.evaluate(() => window.crdplayPlayground.evaluation.objects.map((o) => o.status)), [201]);
  const second = await liveAt(page, 'pre.crdplay, .crdplay pre', 1);
  const got = await second.frame.evaluate(() => ({
    objects: window.crdplayPlayground.editors.text('objects'), crd: window.crdplayPlayground.editors.text('crd'),
    statuses: window.crdplayPlayground.evaluation.objects.map((o) => o.status), tab: document.querySelector('.tab[aria-selected=true]').dataset.tab,
  }));
  assert.equal(got.objects.trim(), GOOD);
  assert.equal(got.crd.trim(), CRD);
  assert.deepEqual(got.statuses, [201]);
  assert.equal(got.tab, 'table');
  assert.equal(await page.locator('.theme-code-block').isVisible(), false);
  assert.ok(site.log.every((p) => p.startsWith(prefix)), site.log.join('\n'));
  assert.ok(site.log.some((p) => p.endsWith('.wasm')));
  assert.deepEqual(problems, []);
  await page.close();
});

test('an example too big for a link says why it has none; data-theme="dark" on a light system', async () => {
  const noise = randomBytes(90_000).toString('base64');
  const docs = await staticServer((p) => p === '/' ? ['text/html', `<!doctype html><link rel="icon" href="data:,"><body>
<pre class="crdplay" data-theme="dark">${esc(CRD)}
---
# ${noise}
${esc(GOOD)}</pre><script src="${server.url}embed.js"></script></body>`] : null);
  closers.push(docs.close);
  const page = await browser.context.newPage();
  await page.emulateMedia({ colorScheme: 'light' });
  const problems = watchErrors(page);
  await page.goto(docs.url + '/');
  const { frame } = await liveAt(page, 'pre.crdplay', 0);
  await frame.waitForFunction(() => document.getElementById('open-full').getAttribute('aria-disabled') === 'true', null, { polling: 100 });
  const got = await frame.evaluate(() => ({
    statuses: window.crdplayPlayground.evaluation.objects.map((o) => o.status),
    href: document.getElementById('open-full').getAttribute('href'),
    note: document.getElementById('open-note').textContent,
    background: getComputedStyle(document.body).backgroundColor,
  }));
  assert.deepEqual(got.statuses, [201]);
  assert.equal(got.href, null);
  assert.match(got.note, /too big for a link/);
  assert.equal(got.background, 'rgb(20, 22, 27)');
  assert.deepEqual(problems, []);
  await page.close();
});

test('an upgrade: the block holds the old CRD, the new and the stored object; the finding is shown', async () => {
  const lowered = CRD.replace('maximum: 10', 'maximum: 5');
  const docs = await staticServer((p) => p === '/' ? ['text/html', `<!doctype html><link rel="icon" href="data:,"><body>
<pre class="crdplay" data-mode="upgrade">${esc(CRD)}
---
${esc(lowered)}
---
${esc(GOOD.replace('size: small', 'replicas: 8'))}</pre><script src="${server.url}embed.js"></script></body>`] : null);
  closers.push(docs.close);
  const page = await browser.context.newPage();
  const problems = watchErrors(page);
  await page.goto(docs.url + '/');
  const { frame } = await liveAt(page, 'pre.crdplay', 0);
  const got = await frame.evaluate(() => {
    const pg = window.crdplayPlayground;
    const up = pg.evaluation.upgrade;
    return {
      mode: pg.mode, oldCrd: pg.editors.text('oldcrd'), crd: pg.editors.text('crd'),
      shown: [...document.querySelectorAll('.editor-frame')].filter((e) => !e.classList.contains('gone') && !e.hidden).map((e) => e.id),
      crdStatus: up?.crd.status, rules: up?.findings.map((f) => f.rule),
    };
  });
  assert.equal(got.mode, 'upgrade');
  assert.match(got.oldCrd, /maximum: 10/);
  assert.match(got.crd, /maximum: 5/);
  assert.deepEqual(got.shown, ['oldcrd-frame', 'crd-frame', 'objects-frame']);
  assert.equal(got.crdStatus, 200);
  assert.deepEqual(got.rules, ['maximum']);
  assert.deepEqual(problems, []);
  await page.close();
});

test('data-version: an example on an emulated Kubernetes minor, beside one on the newest', async () => {
  const docs = await staticServer((p) => p === '/' ? ['text/html', `<!doctype html><link rel="icon" href="data:,"><body>
<pre class="crdplay" id="c1">${esc(CRD)}
---
${esc(GOOD)}</pre>
<pre class="crdplay" data-crd="#c1" data-version="1.35">${esc(GOOD)}</pre>
<script src="${server.url}embed.js"></script></body>`] : null);
  closers.push(docs.close);
  const page = await browser.context.newPage();
  const problems = watchErrors(page);
  await page.goto(docs.url + '/');
  const kube = (f) => f.evaluate(() => ({
    emulated: window.crdplayPlayground.evaluation.kubernetes.emulated,
    statuses: window.crdplayPlayground.evaluation.objects.map((o) => o.status),
    status: document.getElementById('status').textContent,
  }));
  const newest = await kube((await liveAt(page, 'pre.crdplay', 0)).frame);
  const old = await kube((await liveAt(page, 'pre.crdplay', 1)).frame);
  assert.equal(newest.emulated, '1.37');
  assert.equal(old.emulated, '1.35');
  assert.match(old.status, /emulating 1\.35/);
  assert.deepEqual([newest.statuses, old.statuses], [[201], [201]]);
  assert.equal(page.frames().filter((f) => f.url().includes('/embed/engine.html')).length, 1);
  assert.deepEqual(problems, []);
  await page.close();
});

test('two examples with different CRDs on the one engine: each edit is evaluated against its own CRD', async () => {
  const gadgets = CRD.replaceAll('widget', 'gadget').replaceAll('Widget', 'Gadget');
  const gadget = GOOD.replaceAll('widget', 'gadget').replaceAll('Widget', 'Gadget');
  const docs = await staticServer((p) => p === '/' ? ['text/html', `<!doctype html><link rel="icon" href="data:,"><body>
<pre class="crdplay">${esc(CRD)}
---
${esc(GOOD)}</pre>
<pre class="crdplay">${esc(gadgets)}
---
${esc(gadget)}</pre>
<script src="${server.url}embed.js"></script></body>`] : null);
  closers.push(docs.close);
  const page = await browser.context.newPage();
  const problems = watchErrors(page);
  await page.goto(docs.url + '/');
  const a = (await liveAt(page, 'pre.crdplay', 0)).frame;
  const b = (await liveAt(page, 'pre.crdplay', 1)).frame;
  // Each edit sends only the objects (its frame's CRD text is unchanged); the engine frame puts the CRD of the
  // frame back when the other frame evaluated last.
  const edit = async (f, from, to, kind) => {
    const n = await f.evaluate(() => window.crdplayPlayground.runs);
    await f.evaluate(([x, y]) => window.crdplayPlayground.editors.set('objects', window.crdplayPlayground.editors.text('objects').replace(x, y)), [from, to]);
    await f.waitForFunction((m) => window.crdplayPlayground.runs > m, n, { polling: 100, timeout: 30_000 });
    const got = await f.evaluate(() => window.crdplayPlayground.evaluation.objects.map((o) => [o.kind, o.status]));
    assert.deepEqual(got, [[kind, 201]]);
  };
  await edit(a, 'good-widget', 'widget-2', 'Widget');
  await edit(b, 'good-gadget', 'gadget-2', 'Gadget');
  await edit(a, 'widget-2', 'widget-3', 'Widget');
  await edit(b, 'gadget-2', 'gadget-3', 'Gadget');
  // The CEL scratchpad of the frame that did not evaluate last answers for its own CRD too: its expression is
  // compiled against its CRD's schema, not the one the engine's session holds from the other frame.
  const cel = (f) => f.evaluate(async () => JSON.parse(await window.crdplayPlayground.client.call('cel',
    JSON.stringify({ expression: "self.spec.size == 'small'", object: window.crdplayPlayground.editors.text('objects') }))));
  const fromA = await cel(a);
  assert.deepEqual([fromA.crd, fromA.error, fromA.scratch?.values.map((v) => v.value)], ['widgets.demo.example.com', undefined, [true]], JSON.stringify(fromA));
  const fromB = await cel(b);
  assert.deepEqual([fromB.crd, fromB.error, fromB.scratch?.values.map((v) => v.value)], ['gadgets.demo.example.com', undefined, [true]], JSON.stringify(fromB));
  // And the edits after it still meet their own CRDs.
  await edit(a, 'widget-3', 'widget-4', 'Widget');
  await edit(b, 'gadget-3', 'gadget-4', 'Gadget');
  assert.deepEqual(problems, []);
  await page.close();
});
