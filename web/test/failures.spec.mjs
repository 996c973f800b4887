// Browser test: every operation the page performs (create, update, /status update, /scale, delete) shows a
// refusal as the API answered it: the Status's reason and message, then its causes, never an empty
// "Failure:". And an ordinary refusal leaves nothing in the browser console (upstream's klog lines stay out
// of it). Screenshot: test-results/playground-update-failure.png (the gallery's transition rule refused).
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/failures.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { launch, resultsDir, startServer } from './harness.mjs';

let server;
let browser;
let page;
/** Every console line of the page and its workers (the engine's Go runs in a worker). */
const consoleLines = [];

const runs = () => page.evaluate(() => Number(document.body.dataset.runs ?? 0));
const evaluated = (n) => page.waitForFunction((k) => Number(document.body.dataset.runs ?? 0) > k, n, { timeout: 90_000 });
const setEditor = (id, text) => page.evaluate(([i, t]) => window.crdplayPlayground.editors.set(i, t), [id, text]);

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer({ quiet: true });
  browser = await launch({ viewport: { width: 1400, height: 900 } });
  page = browser.page;
  const listen = (where) => (msg) => consoleLines.push(`[${where} ${msg.type()}] ${msg.text()}`);
  page.on('console', listen('page'));
  page.on('worker', (w) => w.on?.('console', listen('worker')));
  page.on('pageerror', (err) => consoleLines.push(`[pageerror] ${err.message}`));
  await page.goto(server.url);
  await evaluated(0);
});

after(async () => {
  await browser?.close();
  server?.stop();
});

// A CRD without subresources: /status and /scale are not found.
const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
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
              size: {type: integer, maximum: 10}
`;
const widget = (size) => `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  size: ${size}
`;

/** Sets the editors and the mode, runs, and returns the object's block of the Result pane. */
async function evaluate({ crd = CRD, objects, old = '', mode }) {
  const n = await runs();
  await page.evaluate(([c, o, d, m]) => {
    const p = window.crdplayPlayground;
    p.editors.set('crd', c);
    p.editors.set('objects', o);
    p.editors.set('old', d);
    const sel = document.getElementById('mode');
    sel.value = m;
    sel.dispatchEvent(new Event('change'));
  }, [crd, objects, old, mode]);
  await evaluated(n);
  // The change event and the edits each start an evaluation: wait for the last.
  await page.evaluate(() => window.crdplayPlayground.idle);
  await page.waitForTimeout(400);
  await page.evaluate(() => window.crdplayPlayground.idle);
  await page.click('#tab-result');
  return page.locator('#pane-result section.object-result').first();
}

/** The refusal shown in a block: its first line and its causes. */
async function refusal(block) {
  const box = block.locator('.status-error');
  assert.equal(await box.count(), 1, `no refusal shown: ${await block.textContent()}`);
  const first = (await box.locator('p.error').first().textContent()).trim();
  const causes = await box.locator('.causes li').allTextContents();
  // An empty message ("Failure:" and nothing) is the failure this file guards against.
  assert.doesNotMatch(first, /^\w*:\s*$/, `empty message: ${first}`);
  return { heading: await block.locator('h3').textContent(), first, causes };
}

test('create: a refused object shows the 422 message and its causes', async () => {
  const r = await refusal(await evaluate({ objects: widget(11), mode: 'create' }));
  assert.match(r.heading, /create 422/);
  assert.match(r.first, /^Invalid: Widget\.example\.com "w1" is invalid: spec\.size: Invalid value: 11: spec\.size in body should be less than or equal to 10/);
  assert.deepEqual(r.causes.length, 1);
  assert.match(r.causes[0], /^spec\.size Invalid value: 11: spec\.size in body should be less than or equal to 10 \(FieldValueInvalid\)/);
});

test('update: the gallery\'s transition rule, refused, shows the message and causes', async () => {
  await page.focus('#examples'); // the gallery loads once the engine is in, or when the menu is used
  await page.waitForSelector('#examples option[value="examples/transition-rule"]', { state: 'attached', timeout: 30_000 });
  const n = await runs();
  await page.selectOption('#examples', 'examples/transition-rule');
  await evaluated(n);
  await page.click('#tab-result');
  const block = page.locator('#pane-result section.object-result').first();
  const r = await refusal(block);
  assert.match(r.heading, /create old 201 → update 422/);
  assert.match(r.first, /^Invalid: CronTab\.stable\.example\.com "my-level" is invalid: spec\.level: Invalid value: "high": cannot transition directly between 'low' and 'high'/);
  assert.equal(r.causes.length, 1);
  assert.match(r.causes[0], /^spec\.level Invalid value: "high": cannot transition directly between 'low' and 'high' \(FieldValueInvalid\)/);
  await page.screenshot({ path: path.join(resultsDir, 'playground-update-failure.png') });
});

test('/status update of a kind without the status subresource: 404 with its message', async () => {
  const r = await refusal(await evaluate({ objects: widget(1), mode: 'status' }));
  assert.match(r.heading, /status 404/);
  assert.match(r.first, /^NotFound: widgets\.example\.com "w1" not found$/);
});

test('/scale of a kind without the scale subresource: 404 with its message', async () => {
  const r = await refusal(await evaluate({ objects: widget(1), mode: 'scale' }));
  assert.match(r.heading, /scale 404/);
  assert.match(r.first, /^NotFound: widgets\.example\.com "w1" not found$/);
});

test('delete: an object the API refuses to create shows the refusal, not a deletion', async () => {
  const block = await evaluate({ objects: widget(11), mode: 'delete' });
  const r = await refusal(block);
  assert.match(r.heading, /create 422/);
  assert.match(r.first, /^Invalid: Widget\.example\.com "w1" is invalid: spec\.size/);
  assert.equal(r.causes.length, 1);
  assert.doesNotMatch(await block.textContent(), /deleted/);
});

test('a value of the wrong type is refused without a line in the console', async () => {
  const r = await refusal(await evaluate({ objects: widget('"big"'), mode: 'create' }));
  assert.match(r.first, /^Invalid: .*spec\.size: Invalid value: "string": spec\.size in body must be of type integer: "string"/);
  // kube-apiserver logs "[SHOULD NOT HAPPEN] failed to update managedFields" for this request through klog;
  // the page's console is no place for the server's log.
  assert.deepEqual(consoleLines.filter((l) => /SHOULD NOT HAPPEN|managedFields|\[(page|worker) error\]|pageerror/.test(l)), []);
});
