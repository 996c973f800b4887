// Browser test: headless Chromium loads the playground that crdplay-server hosts (the site of tools/webbuild),
// waits for the engine (crdplay.wasm in a worker, behind window.crdplay), and replays every oracle case in
// testdata/oracle through window.crdplay.request with the Go tests' own runner (wasm/oraclerunner, a second
// wasm in the page), which must find every recorded response. It also checks what the server sends (types,
// encodings, lengths) and the page's loading progress, reports load and round-trip times, and saves a
// screenshot to test-results/.
//
// Needs: the built site with its test assets (go run ./tools/webbuild -test), node_modules (npm ci) and
// Debian's chromium (CHROMIUM overrides /usr/bin/chromium). Run: node --test web/test/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { launch, manifest, resultsDir, root, startServer, webDir } from './harness.mjs';

let server;
let baseURL;
let browser;
let page;
let assets;
const consoleLines = [];

before(async () => {
  for (const f of ['index.html', 'manifest.json', 'test/oraclerunner.wasm', 'test/oracle-cases.json']) {
    if (!existsSync(path.join(webDir, f))) {
      throw new Error(`${path.join(webDir, f)} is missing: build with go run ./tools/webbuild -test`);
    }
  }
  assets = manifest();
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer();
  baseURL = server.url;
  browser = await launch();
  page = browser.page;
  page.on('console', (msg) => consoleLines.push(`[${msg.type()}] ${msg.text()}`));
  page.on('pageerror', (err) => consoleLines.push(`[pageerror] ${err.message}`));
});

after(async () => {
  await browser?.close();
  server?.stop();
  if (consoleLines.length) writeFileSync(path.join(resultsDir, 'oracle-console.txt'), consoleLines.join('\n') + '\n');
});

test('the server sends the wasm as application/wasm with its lengths', async () => {
  for (const [encoding, wantEncoding] of [['br', 'br'], ['gzip', 'gzip'], ['identity', null]]) {
    const resp = await fetch(new URL(assets['crdplay.wasm'], baseURL), { method: 'HEAD', headers: { 'Accept-Encoding': encoding } });
    assert.equal(resp.status, 200);
    assert.equal(resp.headers.get('content-type'), 'application/wasm');
    assert.equal(resp.headers.get('content-encoding'), wantEncoding);
    assert.ok(Number(resp.headers.get('content-length')) > 1e6, `${encoding}: Content-Length ${resp.headers.get('content-length')}`);
    assert.ok(Number(resp.headers.get('x-decoded-content-length')) > 1e6);
    assert.match(resp.headers.get('cache-control'), /immutable/);
  }
  for (const [file, type] of [['', 'text/html; charset=utf-8'], [assets['main.js'], 'text/javascript; charset=utf-8'],
    [assets['worker.js'], 'text/javascript; charset=utf-8'], [assets['wasm_exec.js'], 'text/javascript; charset=utf-8'],
    [assets['main.css'], 'text/css; charset=utf-8']]) {
    const resp = await fetch(new URL(file, baseURL));
    assert.equal(resp.status, 200, file);
    assert.equal(resp.headers.get('content-type'), type, file);
  }
  assert.equal((await fetch(new URL('nope.js', baseURL))).status, 404);
});

test('the page loads the engine (cold), shows progress, and answers a request', async (t) => {
  const navStart = Date.now();
  await page.goto(baseURL);
  await page.waitForFunction(() => document.getElementById('status')?.dataset.state !== 'loading', null, { timeout: 120_000 });
  const state = await page.evaluate(() => ({
    state: document.getElementById('status').dataset.state,
    text: document.getElementById('status').textContent,
    progress: [document.getElementById('progress').value, document.getElementById('progress').max],
  }));
  assert.equal(state.state, 'ready', state.text);
  const ready = await page.evaluate(() => globalThis.crdplay.ready);
  assert.equal(ready.version.kubernetes, 'v1.37.2');
  // The whole wasm arrived, and the page knew its size in advance (Content-Length or the decoded length).
  assert.ok(state.progress[0] > 1e6 && state.progress[0] === state.progress[1], `progress ${state.progress}`);

  // One raw request through the page's own command line.
  await page.click('#tab-cli');
  await page.fill('#cli-input', 'GET /version');
  await page.press('#cli-input', 'Enter');
  await page.waitForFunction(() => document.getElementById('cli-out').textContent.includes('HTTP 200'));

  // Round trips of a small request: page -> worker -> engine -> page.
  const rtt = await page.evaluate(async () => {
    const times = [];
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now();
      const r = await globalThis.crdplay.request({ path: '/version' });
      times.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`GET /version: ${r.status}`);
    }
    times.sort((a, b) => a - b);
    return { median: times[50], p90: times[90], max: times[99] };
  });
  const ms = (x) => `${x.toFixed(1)} ms`;
  const report = {
    navigationToReady: `${Math.round(ready.timings.page)} ms (page clock), ${Date.now() - navStart} ms (test clock, with goto)`,
    wasmHeaders: ms(ready.timings.fetched),
    wasmDownloadedAndCompiled: ms(ready.timings.compiled),
    goMainDone: ms(ready.timings.ready),
    roundTripGetVersion: `median ${ms(rtt.median)}, p90 ${ms(rtt.p90)}, max ${ms(rtt.max)}`,
  };
  for (const [k, v] of Object.entries(report)) t.diagnostic(`${k}: ${v}`);
  writeFileSync(path.join(resultsDir, 'browser-timings.json'), JSON.stringify({ ...report, raw: { timings: ready.timings, rtt } }, null, 2) + '\n');
  await page.screenshot({ path: path.join(resultsDir, 'page.png'), fullPage: true });
});

test('client.js: bridge faults cross the worker as {error}; a missing wasm fails ready', async () => {
  await page.evaluate(() => globalThis.crdplay.ready);
  const got = await page.evaluate(async () => {
    const settle = (p) => p.then((v) => ({ ok: v }), (e) => ({ err: e }));
    const CrdplayClient = globalThis.crdplay.constructor;
    const m = await (await fetch('/manifest.json')).json();
    const broken = new CrdplayClient({ wasmURL: '/nope.wasm', workerURL: '/' + m['worker.js'], wasmExecURL: '/' + m['wasm_exec.js'] });
    const failed = new Promise((resolve) => broken.addEventListener('failed', (e) => resolve(e.detail)));
    const out = {
      notObject: await settle(globalThis.crdplay.request(42)),
      notCloneable: await settle(globalThis.crdplay.request({ path: '/version', body: () => 1 })),
      watch: await settle(globalThis.crdplay.request({ path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=1' })),
      badWebhook: globalThis.crdplay.setWebhook(7),
      brokenReady: await settle(broken.ready),
      brokenEvent: await failed,
      brokenCall: await settle(broken.request({ path: '/version' })),
    };
    broken.terminate();
    return out;
  });
  assert.match(got.notObject.err.error, /^crdplay\.request: want an object .* got number$/);
  assert.match(got.notCloneable.err.error, /^crdplay\.request: .*could not be cloned/);
  assert.equal(got.watch.ok.status, 400);
  assert.match(JSON.parse(got.watch.ok.body).message, /timeoutSeconds/);
  assert.deepEqual(got.badWebhook, { error: 'crdplay.setWebhook: want a function or null, got number' });
  assert.match(got.brokenReady.err.error, /nope\.wasm: HTTP 404/);
  assert.match(got.brokenEvent.error, /nope\.wasm: HTTP 404/);
  assert.match(got.brokenCall.err.error, /nope\.wasm: HTTP 404/);
});

test('every oracle case passes in Chromium through window.crdplay', { timeout: 600_000 }, async (t) => {
  await page.evaluate(() => globalThis.crdplay.ready);
  // The playground evaluates its editors once the engine is ready (a reset and a few requests): let that end
  // first, so that it cannot reset the store under a case.
  await page.waitForFunction(() => Number(document.body.dataset.runs) >= 1, null, { timeout: 60_000 });
  const result = await page.evaluate(async (wasmExec) => {
    await new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = wasmExec;
      s.onload = resolve;
      s.onerror = () => reject(new Error(`cannot load ${wasmExec}`));
      document.head.append(s);
    });
    const bundle = await (await fetch('/test/oracle-cases.json')).text();
    const done = new Promise((resolve) => { globalThis.crdplayOracle = { bundle, done: resolve }; });
    const go = new globalThis.Go();
    const { instance } = await WebAssembly.instantiateStreaming(fetch('/test/oraclerunner.wasm'), go.importObject);
    go.run(instance);
    return JSON.parse(await done);
  }, '/' + assets['wasm_exec.js']);
  writeFileSync(path.join(resultsDir, 'oracle-result.json'), JSON.stringify(result, null, 2) + '\n');
  assert.equal(result.error, undefined);

  const want = readdirSync(path.join(root, 'testdata/oracle'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(root, 'testdata/oracle', d.name, 'crd.yaml')))
    .map((d) => d.name).sort();
  assert.deepEqual(result.cases.map((c) => c.name), want, 'the runner must see every case directory');
  t.diagnostic(`${result.summary} in Chromium (${Math.round(result.cases.reduce((s, c) => s + c.ms, 0))} ms)`);

  const failed = result.cases.filter((c) => c.error || c.diffs?.length);
  const report = failed.map((c) => `--- ${c.name}: ${c.error ?? ''}\n${(c.diffs ?? []).join('\n')}`).join('\n');
  assert.equal(failed.length, 0, `${result.summary}\n${report.slice(0, 20000)}`);
  assert.equal(result.summary, `${want.length} case(s), 0 failed`);
});
