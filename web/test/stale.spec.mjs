// Browser test: the page never shows a stale verdict as if it were current. While an evaluation runs, the
// status line says "Evaluating…", the panes it will replace (Result, CEL, Table, Versions, Explain) are
// aria-busy, dimmed and marked "updating…", and the editors' counts are marked as the previous text's; a
// result for a text that an edit has replaced meanwhile is dropped, never shown; choosing an example or
// opening a short link clears the panes to "Evaluating …" at once rather than leaving the previous example's
// verdict; and the Result pane says "Loading the engine (N MB)…" with the download's progress while the engine
// loads on a slow link, rather than staying blank. The engine's answers are held back by wrapping the page's
// client (window.crdplayPlayground.client.call), so that each state is seen for as long as the test needs.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/stale.spec.mjs
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { launch, resultsDir, semverCRD, startServer, widget, pageHelpers } from './harness.mjs';

let server;
let browser;
let page;
const problems = [];

const { evaluated, runs, setEditor, editorText } = pageHelpers(() => page);
const BUSY = ['result', 'cel', 'table', 'versions', 'explain'];

/**
 * Holds back the engine's answers to crdplay.evaluate from here on: each call goes to the engine at once, and
 * its answer waits in window.held until released (window.arrived counts the answers the engine gave).
 */
const hold = (p = page) => p.evaluate(() => {
  const client = window.crdplayPlayground.client;
  delete client.call;
  const call = client.call.bind(client);
  window.held = [];
  window.arrived = 0;
  window.heldNoMore = false;
  client.call = (method, arg) => {
    const answer = call(method, arg);
    if (method !== 'evaluate') return answer;
    return answer.then((r) => {
      window.arrived++;
      return window.heldNoMore ? r : new Promise((resolve) => window.held.push(() => resolve(r)));
    });
  };
});
/** Releases the answers held, and holds no more. */
const release = (p = page) => p.evaluate(() => {
  delete window.crdplayPlayground.client.call;
  window.heldNoMore = true; // the answers of calls made before, still to come
  for (const f of window.held.splice(0)) f();
});

/** What the page says about its results now. */
const busyState = (p = page) => p.evaluate((tabs) => ({
  status: document.getElementById('status').textContent,
  busy: tabs.map((t) => document.getElementById(`pane-${t}`).getAttribute('aria-busy')),
  infos: ['crd', 'objects'].map((id) => {
    const el = document.getElementById(`${id}-info`);
    return { text: el.textContent, stale: el.dataset.stale ?? null };
  }),
  result: document.getElementById('pane-result').textContent,
}), BUSY);

const objectsWith = (cronSpec) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: ${cronSpec}
  image: my-awesome-cron-image
`;

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer({ quiet: true });
  browser = await launch({ viewport: { width: 1400, height: 900 } });
  page = browser.page;
  page.on('pageerror', (err) => problems.push(`[pageerror] ${err.message}`));
  await page.goto(server.url);
  await evaluated(0);
  await page.evaluate(() => window.crdplayPlayground.idle);
});

// A test that failed holding answers leaves none held for the next.
afterEach(() => page.evaluate(() => {
  delete window.crdplayPlayground.client.call;
  window.heldNoMore = true;
  for (const f of window.held?.splice(0) ?? []) f();
}));

after(async () => {
  await browser?.close();
  server?.stop();
  assert.deepEqual(problems, []);
});

test('while an evaluation runs: "Evaluating…", the panes busy, dimmed and marked, the counts marked stale', async () => {
  await hold();
  const n = await runs();
  await setEditor('objects', objectsWith('"not a cron spec"'));
  await page.waitForFunction(() => window.held.length > 0);
  const during = await busyState();
  assert.match(during.status, /^Evaluating…/, 'the status line');
  assert.deepEqual(during.busy, BUSY.map(() => 'true'), 'aria-busy of the panes');
  // The counts shown are the previous text's ("ok": no error yet for the edit), and say so.
  assert.deepEqual(during.infos.map((i) => i.stale), ['true', 'true'], JSON.stringify(during.infos));
  // The dimming and the "updating…" mark come after a moment (a quick evaluation does not flicker).
  await page.waitForTimeout(900);
  const shown = await page.evaluate(() => {
    const mark = document.querySelector('.results .updating');
    const style = mark && getComputedStyle(mark);
    return {
      mark: mark?.textContent ?? null,
      markShown: !!style && style.display !== 'none' && style.visibility !== 'hidden' && Number(style.opacity) === 1 && mark.getBoundingClientRect().width > 0,
      paneOpacity: Number(getComputedStyle(document.querySelector('#pane-result > *')).opacity),
      infoOpacity: Number(getComputedStyle(document.getElementById('objects-info')).opacity),
    };
  });
  assert.equal(shown.mark, 'updating…');
  assert.ok(shown.markShown, 'the updating mark is visible');
  assert.ok(shown.paneOpacity < 0.7, `the result pane is dimmed (opacity ${shown.paneOpacity})`);
  assert.ok(shown.infoOpacity < 0.7, `the counts are dimmed (opacity ${shown.infoOpacity})`);
  await page.screenshot({ path: path.join(resultsDir, 'stale-evaluating.png') });
  await release();
  await evaluated(n);
  const afterwards = await busyState();
  assert.match(afterwards.status, /^Engine ready/);
  assert.deepEqual(afterwards.busy, BUSY.map(() => null));
  assert.deepEqual(afterwards.infos.map((i) => i.stale), [null, null]);
  assert.match(afterwards.infos[1].text, /^1 error/);
  assert.equal(await page.evaluate(() => getComputedStyle(document.querySelector('.results .updating')).display), 'none');
  const m = await runs();
  await setEditor('objects', objectsWith('"* * * * */5"'));
  await evaluated(m);
});

test('a result for a text an edit has replaced is never shown', async () => {
  // CRD edits whose evaluations are slow wait for the next keystroke (main.ts's DEBOUNCE_MS): the page learns
  // that from the last three, made slow here.
  const crd = await editorText('crd');
  await page.evaluate(() => {
    const client = window.crdplayPlayground.client;
    const call = client.call.bind(client);
    client.call = (method, arg) => call(method, arg).then((r) => new Promise((resolve) => setTimeout(() => resolve(r), 150)));
  });
  for (let i = 0; i < 3; i++) {
    const n = await runs();
    await setEditor('crd', `${crd}# slow ${i}\n`);
    await evaluated(n);
    await page.evaluate(() => window.crdplayPlayground.idle);
  }
  // Edit A is being evaluated when edit B comes; A's answer arrives before B's evaluation starts.
  await hold();
  const n = await runs();
  await setEditor('crd', `${crd}# edit A\n`);
  await page.waitForFunction(() => window.arrived > 0, null, { timeout: 60_000 });
  const got = await page.evaluate(async (text) => {
    const app = window.crdplayPlayground;
    const shownBefore = app.evaluation;
    app.editors.set('crd', text);
    for (const f of window.held.splice(0)) f(); // A's answer
    await new Promise((r) => setTimeout(r, 60));
    return { same: app.evaluation === shownBefore, status: document.getElementById('status').textContent };
  }, `${crd}# edit B\n`);
  assert.ok(got.same, 'the answer for edit A was shown while the editor held edit B');
  assert.match(got.status, /^Evaluating…/);
  await release();
  await evaluated(n);
  await page.evaluate(() => window.crdplayPlayground.idle);
  assert.match(await editorText('crd'), /# edit B\n$/);
  const m = await runs();
  await setEditor('crd', crd);
  await evaluated(m);
  await page.evaluate(() => window.crdplayPlayground.idle);
});

test('choosing an example clears the previous verdict at once: "Evaluating <example>…"', async () => {
  await page.waitForSelector('#examples option[value="examples/defaulting"]', { state: 'attached', timeout: 30_000 });
  const title = await page.textContent('#examples option[value="examples/defaulting"]');
  assert.match(await page.textContent('#pane-result'), /crontabs\.stable\.example\.com: accepted/);
  await hold();
  const n = await runs();
  await page.selectOption('#examples', 'examples/defaulting');
  const during = await busyState();
  assert.doesNotMatch(during.result, /crontabs\.stable\.example\.com/, 'the previous example\'s verdict is still shown');
  assert.match(during.result, new RegExp(`Evaluating ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}…`));
  assert.deepEqual(during.infos.map((i) => i.text), ['', ''], 'the previous example\'s counts are still shown');
  assert.match(during.status, /^Evaluating…/);
  await page.click('#tab-cel');
  assert.doesNotMatch(await page.textContent('#pane-cel'), /self\.replicas <= 10/, 'the CEL pane shows the previous example\'s rules');
  await page.click('#tab-result');
  await release();
  await evaluated(n);
  assert.match(await page.textContent('#pane-result'), /defaulted: /);
  const m = await runs();
  await page.selectOption('#examples', 'default');
  await evaluated(m);
});

test('opening a short link clears the previous verdict at once', async () => {
  const id = await page.evaluate(async (state) => {
    const head = await fetch(location.href.split('#')[0], { method: 'HEAD' });
    const res = await fetch(head.headers.get('X-Crdplay-Links'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(state) });
    return (await res.json()).id;
  }, { crd: semverCRD, objects: widget, mode: 'create' });
  assert.match(id, /^[\w-]+$/);
  assert.match(await page.textContent('#pane-result'), /crontabs\.stable\.example\.com: accepted/);
  await hold();
  const n = await runs();
  await page.evaluate((i) => { location.hash = `s=${i}`; }, id);
  await page.waitForFunction(() => window.crdplayPlayground.editors.text('crd').includes('widgets.example.com'), null, { timeout: 30_000 });
  const during = await busyState();
  assert.doesNotMatch(during.result, /crontabs\.stable\.example\.com/, 'the previous verdict is still shown');
  assert.match(during.result, /Evaluating the link…/);
  assert.deepEqual(during.infos.map((i) => i.text), ['', '']);
  await release();
  await evaluated(n);
  assert.match(await page.textContent('#pane-result'), /widgets\.example\.com: accepted/);
});

/**
 * A proxy of the server that sends the engine's wasm at rate bytes per second, as a slow link would (Chromium's
 * network emulation does not reach the engine's worker).
 */
async function slowProxy(rate) {
  const target = new URL(server.url);
  const proxy = http.createServer((req, res) => {
    const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      if (!req.url.endsWith('.wasm')) {
        r.pipe(res);
        return;
      }
      r.pause();
      const chunks = [];
      r.on('data', (c) => chunks.push(c));
      r.on('end', async () => {
        const body = Buffer.concat(chunks);
        const step = Math.ceil(rate / 10);
        for (let at = 0; at < body.length && !res.destroyed; at += step) {
          res.write(body.subarray(at, at + step));
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        res.end();
      });
      r.resume();
    });
    req.pipe(up);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${proxy.address().port}/`, close: () => proxy.close() };
}

test('on a slow link the Result pane says the engine is loading, with its size, rather than staying blank', async (t) => {
  // 10 Mbit/s: the engine's few MB take seconds.
  const proxy = await slowProxy(10e6 / 8);
  t.after(() => proxy.close());
  const other = await browser.context.newPage();
  try {
    await other.goto(proxy.url);
    await other.waitForFunction(() => /\S/.test(document.getElementById('pane-result').textContent), null, { timeout: 20_000 })
      .catch(() => { throw new Error('the Result pane is blank while the engine loads'); });
    assert.match(await other.textContent('#pane-result'), /^Loading the engine/);
    await other.waitForFunction(() => /^Loading the engine \(\d+\.\d MB\)…/.test(document.getElementById('pane-result').textContent), null, { timeout: 30_000 });
    const progress = await other.evaluate(() => {
      const bar = document.querySelector('#pane-result progress');
      return bar ? [bar.value, bar.max] : null;
    });
    assert.ok(progress && progress[1] > 1e6 && progress[0] <= progress[1], `progress ${progress}`);
    await other.screenshot({ path: path.join(resultsDir, 'stale-loading.png') });
    await evaluated(0, other);
    assert.match(await other.textContent('#pane-result'), /crontabs\.stable\.example\.com: accepted/);
  } finally {
    await other.close();
  }
});
