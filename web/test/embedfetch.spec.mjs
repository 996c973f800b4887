// Browser test of what an embed fetches, in headless Chromium: an embed shows one example in its editors and
// panes, never the gallery (megabytes of YAML behind the full page's Example menu), so each embed frame fetches
// its page, its script and its style and nothing else, whether embed.js made it (its engine the docs page's
// shared engine frame, which alone fetches the engine) or it is the Embed dialog's plain iframe (its own engine).
// The requests are recorded per frame, from the navigation until the frame has evaluated its example, loaded
// the CRD editor's schema (the last thing the page does once the engine is in) and the network is quiet.
//
// Run: CRDPLAY_WEB_DIR=build/web-test node --test web/test/embedfetch.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { launch, manifest, startServer } from './harness.mjs';

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
              size: {type: string, enum: [small, large]}`;
const GOOD = `apiVersion: demo.example.com/v1
kind: Widget
metadata:
  name: good-widget
spec:
  size: small`;

let server;
const closers = [];

before(async () => {
  server = await startServer({ quiet: true });
});
after(async () => {
  for (const c of closers.reverse()) await c();
  server?.stop();
});

/** A page of a browser with a fresh profile (nothing cached: the bytes counted are a first visit's). */
async function freshPage() {
  const browser = await launch({ viewport: { width: 1000, height: 800 } });
  closers.push(browser.close);
  return browser.page;
}

/** A docs page on its own loopback origin. */
function docsServer(html) {
  const srv = http.createServer((req, res) => {
    if (new URL(req.url, 'http://x').pathname !== '/') { res.statusCode = 404; res.end(); return; }
    res.setHeader('Content-Type', 'text/html');
    res.end(html);
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => {
    closers.push(() => srv.close());
    resolve(`http://127.0.0.1:${srv.address().port}/`);
  }));
}

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/**
 * Records every request of crdplay's origin the page and its frames make, by the URL of the frame that made it
 * (its path without query: /embed/, /embed/engine.html), with the bytes on the wire once it has finished.
 * idle() resolves when none is in flight.
 */
function record(page) {
  const requests = [];
  const inFlight = new Set();
  // A frame's own navigation is counted as the frame's, whatever URL the frame had before it.
  const frameOf = (r) => {
    try { return new URL(r.isNavigationRequest() ? r.url() : r.frame().url()).pathname; } catch { return '?'; }
  };
  page.on('request', (r) => {
    if (!r.url().startsWith(server.url)) return;
    requests.push({ request: r, frame: frameOf(r), path: new URL(r.url()).pathname, wire: 0 });
    inFlight.add(r);
  });
  page.on('requestfinished', async (r) => {
    const entry = requests.find((e) => e.request === r);
    if (entry) entry.wire = Math.max(0, (await r.sizes().catch(() => null))?.responseBodySize ?? 0);
    inFlight.delete(r);
  });
  page.on('requestfailed', (r) => inFlight.delete(r));
  const idle = async () => {
    for (let quiet = 0; quiet < 3;) {
      await new Promise((res) => setTimeout(res, 100));
      quiet = inFlight.size === 0 ? quiet + 1 : 0;
    }
  };
  return { requests, idle };
}

/** Waits until the frame has evaluated its example and loaded the CRD editor's schema (after which the page
 * used to fetch the gallery). */
async function settled(frame) {
  await frame.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1 && document.body.dataset.crdSchema !== undefined,
    null, { timeout: 180_000, polling: 100 });
}

/** The paths of an asset list, by manifest name, as the server serves them. */
const assets = (...names) => { const m = manifest(); return names.map((n) => '/' + m[n]); };
const paths = (rs) => [...new Set(rs.map((r) => r.path))].sort();
const kB = (rs) => (rs.reduce((n, r) => n + r.wire, 0) / 1000).toFixed(1);

test('embed.js: each example frame fetches its page, script and style; the engine frame alone the engine; nobody the gallery', async () => {
  const docs = await docsServer(`<!doctype html><link rel="icon" href="data:,"><body>
<pre class="crdplay" id="c1">${esc(CRD)}
---
${esc(GOOD)}</pre>
<pre class="crdplay" data-crd="#c1">${esc(GOOD.replace('small', 'large'))}</pre>
<script src="${server.url}embed.js"></script></body>`);
  const page = await freshPage();
  const { requests, idle } = record(page);
  await page.goto(docs);
  await page.waitForFunction(() => document.querySelectorAll('.crdplay-live').length === 2, null, { timeout: 30_000 });
  const frames = [];
  for (const i of [0, 1]) {
    const handle = await page.evaluateHandle((n) => document.querySelectorAll('.crdplay-live')[n].shadowRoot.querySelector('iframe'), i);
    frames.push(await (await handle.asElement()).contentFrame());
  }
  for (const f of frames) await settled(f);
  await idle();

  const gallery = requests.filter((r) => r.path.startsWith('/assets/examples.'));
  assert.deepEqual(gallery.map((r) => `${r.frame} ${r.path}`), [], 'the gallery was fetched');
  const byFrame = {};
  for (const r of requests) (byFrame[r.frame] ??= []).push(r);
  assert.deepEqual(Object.keys(byFrame).sort(), ['/', '/embed/', '/embed/engine.html']);
  assert.deepEqual(paths(byFrame['/']), ['/embed.js']);
  // Both example frames together: each fetched the same four files (the second from the cache).
  assert.deepEqual(paths(byFrame['/embed/']), ['/embed/', ...assets('boot.js', 'main.css', 'main.js')].sort());
  assert.equal(byFrame['/embed/'].filter((r) => r.path === '/embed/').length, 2);
  assert.deepEqual(paths(byFrame['/embed/engine.html']),
    ['/embed/engine.html', ...assets('embed-engine.js', 'worker.js', 'wasm_exec.js', 'crdplay.wasm')].sort());
  console.log(`embedfetch: two example frames fetched ${byFrame['/embed/'].length} requests, ${kB(byFrame['/embed/'])} kB on the wire; ` +
    `the engine frame ${byFrame['/embed/engine.html'].length}, ${kB(byFrame['/embed/engine.html'])} kB`);
});

test('the Embed dialog\'s plain iframe: its page, script, style and its own engine; not the gallery', async () => {
  const docs = await docsServer(`<!doctype html><link rel="icon" href="data:,"><body>
<iframe src="${server.url}embed/?panes=objects,result&tab=result" width="900" height="700"></iframe></body>`);
  const page = await freshPage();
  const { requests, idle } = record(page);
  await page.goto(docs);
  const frame = await (await page.waitForSelector('iframe')).contentFrame();
  await settled(frame);
  await idle();

  const mine = requests.filter((r) => r.frame === '/embed/');
  assert.deepEqual(requests.filter((r) => r.frame !== '/embed/').map((r) => `${r.frame} ${r.path}`), []);
  assert.deepEqual(paths(mine), ['/embed/', ...assets('boot.js', 'main.css', 'main.js', 'worker.js', 'wasm_exec.js', 'crdplay.wasm')].sort(),
    mine.map((r) => r.path).join('\n'));
  console.log(`embedfetch: a plain embed frame fetched ${mine.length} requests, ${kB(mine)} kB on the wire`);
});
