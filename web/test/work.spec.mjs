// Browser test: the author's work is kept. The editors' texts, the operation, the example and the Kubernetes
// target survive a reload of the tab (sessionStorage), and Reset forgets them for the default example; a link
// in the address wins over the kept work, except the link the work was opened from (its reload); choosing an
// example over the author's edits offers to undo it (no modal dialog); walking the example menu with the arrow
// keys loads nothing until Enter; Import reads YAML files into the editors (CRDs into the CRD editor, the
// other documents into the objects editor); Download offers each editor's text as a file, with the
// `crdplay check` command that gives the page's result.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/work.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import path from 'node:path';
import { launch, resultsDir, semverCRD, startServer, widget, pageHelpers } from './harness.mjs';

let server;
let browser;
let page;
const problems = [];

const { evaluated, runs, setEditor, editorText } = pageHelpers(() => page);
const texts = (p = page) => p.evaluate(() => Object.fromEntries(['crd', 'objects', 'old', 'oldcrd'].map((id) => [id, window.crdplayPlayground.editors.text(id)])));
/** A permalink's fragment for a state, as the page writes one (permalink.ts). */
const link = (state) => '#v1.' + deflateRawSync(Buffer.from(JSON.stringify(state))).toString('base64url');
/** Waits until the page has loaded (the gallery in its menu) and evaluated. */
async function ready(p = page) {
  await evaluated(0, p);
  await p.waitForFunction(() => Number(document.body.dataset.examples ?? 0) > 40, null, { timeout: 30_000 });
}
/** Waits for the kept work to be written (it is, a moment after the last change). */
const kept = (p = page) => p.waitForTimeout(1200);

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer({ quiet: true });
  browser = await launch({ viewport: { width: 1400, height: 900 } });
  page = browser.page;
  page.on('pageerror', (err) => problems.push(`[pageerror] ${err.message}`));
  await page.goto(server.url);
  await ready();
});

after(async () => {
  await browser?.close();
  server?.stop();
  assert.deepEqual(problems, []);
});

test('a reload keeps the editors, the operation, the example and the target; Reset forgets them', async () => {
  let n = await runs();
  await page.selectOption('#examples', 'examples/defaulting');
  await evaluated(n);
  n = await runs();
  const objects = (await editorText('objects')).replace(/name: (\S+)/, 'name: $1-edited');
  await setEditor('objects', objects);
  await evaluated(n);
  n = await runs();
  await page.selectOption('#mode', 'update');
  await evaluated(n);
  await page.selectOption('#k8s-target', '1.31');
  const want = await texts();
  await kept();
  await page.reload();
  await ready();
  assert.deepEqual(await texts(), want);
  assert.equal(await page.inputValue('#mode'), 'update');
  assert.equal(await page.inputValue('#examples'), 'examples/defaulting');
  assert.equal(await page.inputValue('#k8s-target'), '1.31');
  assert.match(await page.textContent('#pane-result'), /-edited/);

  // Reset: the default example, in create mode, for the newest Kubernetes; a reload keeps that.
  n = await runs();
  await page.click('#reset');
  await evaluated(n);
  const fresh = await browser.context.newPage();
  await fresh.goto(server.url);
  await ready(fresh);
  const defaults = await texts(fresh);
  await fresh.close();
  assert.deepEqual(await texts(), defaults);
  assert.equal(await page.inputValue('#mode'), 'create');
  assert.equal(await page.inputValue('#k8s-target'), '1.37');
  // The edits Reset replaced can be had back.
  assert.match(await page.textContent('#undo'), /replaced your edits/i);
  await kept();
  await page.reload();
  await ready();
  assert.deepEqual(await texts(), defaults);
  assert.equal(await page.inputValue('#mode'), 'create');
});

test('a link in the address wins over the kept work; the link the work came from resumes the work', async () => {
  let n = await runs();
  await setEditor('objects', (await editorText('objects')).replace('my-new-cron-object', 'kept-object'));
  await evaluated(n);
  await kept();
  // Another link, opened in the same tab.
  await page.goto(server.url + link({ crd: semverCRD, objects: widget, mode: 'create' }));
  await ready();
  assert.equal(await editorText('crd'), semverCRD);
  assert.equal(await editorText('objects'), widget);
  // Edits of the link's texts, then a reload of the same address: the edits stay.
  n = await runs();
  await setEditor('objects', widget.replace('name: w', 'name: w-edited'));
  await evaluated(n);
  await kept();
  await page.reload();
  await ready();
  assert.equal(await editorText('objects'), widget.replace('name: w', 'name: w-edited'));
  n = await runs();
  await page.click('#reset');
  await evaluated(n);
});

test('choosing an example over the author\'s edits can be undone', async () => {
  const n = await runs();
  const mine = (await editorText('objects')).replace('my-new-cron-object', 'my-own-object');
  await setEditor('objects', mine);
  await evaluated(n);
  const m = await runs();
  await page.selectOption('#examples', 'examples/defaulting');
  await evaluated(m);
  assert.doesNotMatch(await editorText('objects'), /my-own-object/);
  await page.waitForSelector('#undo:not([hidden])', { timeout: 5000 });
  assert.match(await page.textContent('#undo'), /Replaced your edits with .*\. Undo/);
  await page.screenshot({ path: path.join(resultsDir, 'work-undo.png') });
  const k = await runs();
  await page.click('#undo-button');
  await evaluated(k);
  assert.equal(await editorText('objects'), mine);
  assert.equal(await page.isVisible('#undo'), false);
  assert.match(await page.textContent('#pane-result'), /my-own-object/);
  // An example over an example's own texts asks nothing.
  const j = await runs();
  await page.click('#reset');
  await evaluated(j);
  const i = await runs();
  await page.selectOption('#examples', 'examples/defaulting');
  await evaluated(i);
  assert.equal(await page.isVisible('#undo'), false);
  const h = await runs();
  await page.click('#reset');
  await evaluated(h);
});

test('the arrow keys walk the example menu without loading; Enter loads', async () => {
  const start = await texts();
  await page.focus('#examples');
  const was = await page.inputValue('#examples');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.waitForTimeout(800);
  const moved = await page.inputValue('#examples');
  assert.notEqual(moved, was, 'the arrow keys did not move the menu');
  assert.deepEqual(await texts(), start, 'an example was loaded by an arrow key');
  const n = await runs();
  await page.keyboard.press('Enter');
  await evaluated(n);
  const chosen = await page.evaluate((id) => window.crdplayPlayground.examples.find((e) => e.id === id), moved);
  assert.equal(await editorText('crd'), chosen.crd);
  const m = await runs();
  await page.click('#reset');
  await evaluated(m);
});

test('Import reads YAML files into the editors: CRDs into the CRD editor, the other documents into the objects editor', async () => {
  const file = `# a release file\n${semverCRD}---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n---\n${widget}`;
  const n = await runs();
  await page.setInputFiles('#import-file', [
    { name: 'release.yaml', mimeType: 'application/yaml', buffer: Buffer.from(file) },
    { name: 'more.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w2' }, spec: { version: '2.0.0' } })) },
  ]);
  await evaluated(n);
  const crd = await editorText('crd');
  assert.match(crd, /^# a release file\napiVersion: apiextensions\.k8s\.io\/v1\nkind: CustomResourceDefinition\n/);
  assert.doesNotMatch(crd, /kind: Namespace\n|kind: Widget\n/);
  const objects = await editorText('objects');
  assert.match(objects, /^apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n---\napiVersion: example\.com\/v1\nkind: Widget\n/);
  assert.match(objects, /---\n\{"apiVersion":"example\.com\/v1","kind":"Widget"/);
  assert.match(await page.textContent('#notice'), /Imported 1 CRD document into the CRD editor and 3 documents into the objects editor from release\.yaml, more\.json/);
  await page.click('#tab-result');
  await page.waitForFunction(() => /Widget w2: create 201/.test(document.getElementById('pane-result').textContent), null, { timeout: 30_000 });
  assert.match(await page.textContent('#pane-result'), /widgets\.example\.com: accepted/);
  const m = await runs();
  await page.click('#reset');
  await evaluated(m);
});

test('Download: each editor as a file, and the crdplay check command that gives the result', async () => {
  // Each link downloads its file, as a click of the author's does.
  const files = async () => {
    await page.click('#download');
    await page.waitForSelector('#download-dialog[open]');
    const out = {};
    for (const name of await page.$$eval('#download-files a', (as) => as.map((a) => a.getAttribute('download')))) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(`#download-files a[download="${name}"]`)]);
      assert.equal(download.suggestedFilename(), name);
      out[name] = readFileSync(await download.path(), 'utf8');
    }
    const command = await page.textContent('#download-command');
    await page.click('#download-dialog button[value=close]');
    return { files: out, command };
  };
  let got = await files();
  assert.deepEqual(Object.keys(got.files), ['crds.yaml', 'objects.yaml', 'crdplay-check.sh']);
  assert.equal(got.files['crds.yaml'], await editorText('crd'));
  assert.equal(got.files['objects.yaml'], await editorText('objects'));
  assert.equal(got.command, 'crdplay check --field-validation Warn --crd crds.yaml objects.yaml');
  assert.match(got.files['crdplay-check.sh'], /^#!\/bin\/sh\n(#.*\n)+crdplay check --field-validation Warn --crd crds\.yaml objects\.yaml\n$/);
  await page.click('#download');
  await page.screenshot({ path: path.join(resultsDir, 'work-download.png') });
  await page.click('#download-dialog button[value=close]');

  // The upgrade mode: the old CRDs too, and --old/--new.
  const n = await runs();
  await page.selectOption('#examples', 'examples/upgrade-tightened-maximum');
  await evaluated(n);
  got = await files();
  assert.deepEqual(Object.keys(got.files), ['old-crds.yaml', 'crds.yaml', 'objects.yaml', 'crdplay-check.sh']);
  assert.equal(got.files['old-crds.yaml'], await editorText('oldcrd'));
  assert.equal(got.command, 'crdplay check --field-validation Warn --old old-crds.yaml --new crds.yaml objects.yaml');
  const m = await runs();
  await page.click('#reset');
  await evaluated(m);
});
