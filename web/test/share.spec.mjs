// Browser test of sharing states too big for a link, in headless Chromium: the largest corpus CRD (argo-workflows'
// Workflow) is refused with how far over the limit it is, and shared through a short link that crdplay-server
// keeps; the largest corpus CRD whose link fits without its schema descriptions (kyverno's ClusterPolicy) is
// shared that way. Each link is opened in a new page, whose verdicts must equal those of the full CRD. A static
// host (no crdplay-server) offers no short links and says why a short link cannot be opened there.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/share.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { launch, resultsDir, root, startServer, webDir, pageHelpers } from './harness.mjs';

let server;
let browser;
let page;

const { evaluated, runs, editorText } = pageHelpers(() => page, { timeout: 120_000 });
const corpus = (name, file) => readFileSync(path.join(root, 'testdata/corpus', name, file), 'utf8');

/** What the engine decided, without what descriptions, the CRD's line numbers or the moment change. */
const verdict = (p = page) => p.evaluate(() => {
  const ev = window.crdplayPlayground.evaluation;
  return {
    result: document.getElementById('pane-result').textContent
      .replace(/(creationTimestamp|resourceVersion|uid): .*/g, '$1: ...'),
    diagnostics: ev.diagnostics.map((d) => `${d.source} ${d.severity} ${d.source === 'objects' ? d.line : ''} ${d.message}`),
  };
});

/** Loads a corpus CRD and its sample object into the editors and waits for their evaluation. */
async function load(name) {
  await page.goto(server.url);
  await evaluated(0);
  const n = await runs();
  await page.evaluate(([crd, objects]) => {
    window.crdplayPlayground.editors.set('crd', crd);
    window.crdplayPlayground.editors.set('objects', objects);
  }, [corpus(name, 'crd.yaml'), corpus(name, '01-create.yaml')]);
  await evaluated(n);
  return verdict();
}

/** Opens url in a new page and returns its verdict and its editors' texts. */
async function open(url) {
  const other = await browser.context.newPage();
  try {
    await other.goto(url);
    await evaluated(0, other);
    // The first evaluation may be of the default example, before the link's state arrived.
    await other.waitForFunction(() => window.crdplayPlayground.editors.text('crd').length > 100_000, null, { timeout: 30_000 });
    const n = await runs(other);
    await other.evaluate(() => window.crdplayPlayground.run());
    await evaluated(n, other);
    const notice = await other.evaluate(() => { const n = document.getElementById('notice'); return n.hidden ? '' : n.textContent; });
    return { verdict: await verdict(other), crd: await editorText('crd', other), notice };
  } finally {
    await other.close();
  }
}

/** Clicks Share and returns the notice's text. */
async function clickShare() {
  await page.evaluate(() => { document.getElementById('notice').hidden = true; });
  await page.click('#share');
  await page.waitForSelector('#notice:not([hidden])', { timeout: 60_000 });
  return page.textContent('#notice');
}

/** Opens the Embed dialog and returns its snippet once made, then closes the dialog. */
async function embedSnippet() {
  await page.click('#embed-open');
  await page.waitForFunction(() => document.getElementById('embed-snippet').value.includes('crdplay'), null, { timeout: 60_000 });
  const v = await page.inputValue('#embed-snippet');
  await page.keyboard.press('Escape');
  return v;
}

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer();
  browser = await launch({ viewport: { width: 1400, height: 900 } });
  page = browser.page;
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test('the largest corpus CRD: too big by N kB, still too big without descriptions, shared by a short link', async (t) => {
  const full = await load('argo-workflows/Workflow');
  const text = await clickShare();
  const m = text.match(/too big for a link: (\d+) kB compressed, and links are limited to 64 kB \((\d+) kB over\)/);
  assert.ok(m, text);
  assert.equal(Number(m[1]) - 64, Number(m[2]));
  assert.match(text, /Without the CRD's \d+ schema descriptions it is still \d+ kB, \d+ kB over/);
  t.diagnostic(text.replace('×', ''));
  await page.screenshot({ path: path.join(resultsDir, 'share-too-big.png') });

  await page.click('#share-short');
  await page.waitForFunction(() => document.querySelector('#notice .link')?.value.includes('#s='), null, { timeout: 30_000 });
  const url = await page.inputValue('#notice .link');
  assert.match(url, /#s=[A-Za-z0-9_-]{16}$/);
  t.diagnostic(`short link: ${url}`);
  const opened = await open(url);
  assert.equal(opened.crd, await editorText('crd'));
  assert.deepEqual(opened.verdict, full);

  // The Embed dialog's snippet carries the same state by a short link, and says so, rather than an empty link.
  const snippet = await embedSnippet();
  assert.match(snippet, /^<!-- crdplay: This playground is too big for a link: .* This is a short link/);
  assert.match(snippet, /<iframe src="[^"]*embed\/\?[^"]*#s=[A-Za-z0-9_-]{16}"/);
});

test('a CRD too big for a link that fits without its descriptions: the link says so and gives the same verdicts', async (t) => {
  const full = await load('kyverno/ClusterPolicy');
  const text = await clickShare();
  assert.match(text, /too big for a link: \d+ kB compressed, and links are limited to 64 kB \(\d+ kB over\)/);
  assert.ok(await page.isVisible('#share-short'), 'crdplay-server offers short links');
  const label = await page.textContent('#share-stripped');
  const dropped = Number(label.match(/without the CRD's (\d+) schema descriptions \((\d+) kB\)/)[1]);
  t.diagnostic(label);

  await page.click('#share-stripped');
  await page.waitForFunction(() => document.querySelector('#notice .link')?.value.includes('#v1.'), null, { timeout: 30_000 });
  const url = await page.inputValue('#notice .link');
  assert.ok(url.length < 64 * 1024 + 200, `${url.length} characters`);
  const opened = await open(url);
  assert.match(opened.notice, new RegExp(`shared without its ${dropped} schema descriptions`));
  assert.deepEqual(opened.verdict, full);
  // Only descriptions went: the schema's fields named description (properties.description) stay.
  const original = corpus('kyverno/ClusterPolicy', 'crd.yaml');
  assert.ok(opened.crd.length < original.length / 2, `${opened.crd.length} of ${original.length} characters`);
  assert.equal((original.match(/^ *description:$/gm) ?? []).length, (opened.crd.match(/^ *description:$/gm) ?? []).length);

  // The Embed dialog's snippet does the same, and says what it leaves out.
  const snippet = await embedSnippet();
  assert.match(snippet, new RegExp(`^<!-- crdplay: This playground is too big for a link: .* leaves out the CRD's ${dropped} schema descriptions`));
  assert.match(snippet, /<iframe src="[^"]*embed\/\?[^"]*#v1\.[A-Za-z0-9_-]+"/);
});

test('an unknown short link says why it is not opened', async () => {
  await page.goto(`${server.url}#s=AAAAAAAAAAAAAAAA`);
  await page.waitForSelector('#notice:not([hidden])', { timeout: 30_000 });
  assert.match(await page.textContent('#notice'), /HTTP 404\): no short link "AAAAAAAAAAAAAAAA" on this server/);
});

test('a static host: no short links offered, and a short link says it cannot be opened there', async (t) => {
  // The site as any static file host serves it: its files, their types, nothing else.
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json', '.wasm': 'application/wasm' };
  const host = http.createServer((req, res) => {
    let file = path.join(webDir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (existsSync(file) && statSync(file).isDirectory()) file = path.join(file, 'index.html');
    if (!file.startsWith(webDir) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    const body = readFileSync(file);
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] ?? 'application/octet-stream', 'Content-Length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise((resolve) => host.listen(0, '127.0.0.1', resolve));
  t.after(() => host.close());
  const base = `http://127.0.0.1:${host.address().port}/`;

  const failed = [];
  page.on('requestfailed', (r) => failed.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
  await page.goto(base);
  await evaluated(0);
  const n = await runs();
  await page.evaluate((crd) => window.crdplayPlayground.editors.set('crd', crd), corpus('gateway-api/HTTPRoute', 'crd.yaml'));
  await evaluated(n);
  const text = await clickShare();
  assert.match(text, /too big for a link: \d+ kB compressed, and links are limited to 64 kB \(\d+ kB over\)/);
  assert.match(text, /Short links need the page served by crdplay-server/);
  assert.equal(await page.isVisible('#share-short'), false);
  assert.ok(await page.isVisible('#share-stripped'));
  t.diagnostic(text.replace('×', ''));
  assert.deepEqual(failed, [], 'no request of the page failed on the static host');

  await page.goto(`${base}#s=AAAAAAAAAAAAAAAA`);
  await page.waitForSelector('#notice:not([hidden])', { timeout: 30_000 });
  assert.match(await page.textContent('#notice'), /short link \(AAAAAAAAAAAAAAAA\).*this host keeps no links/);
});
