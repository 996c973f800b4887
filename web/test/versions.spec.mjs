// Browser test of the Kubernetes target in headless Chromium: a CRD whose CEL rule needs the semver library
// shows the oldest Kubernetes that accepts it in the CEL pane (per rule) and the Result pane (per CRD); a
// target older than that puts a warning at the rule's line of the CRD editor without a new evaluation; the
// target goes through permalinks and embeds (version=1.33), old links open at the newest, and a version the
// page does not know falls back to the newest with a notice. Screenshot: test-results/playground-versions.png.
//
// Needs what oracle.spec.mjs needs. Run: node --test web/test/versions.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import path from 'node:path';
import { launch, resultsDir, startServer } from './harness.mjs';

let server;
let browser;
let page;
const problems = [];

const evaluated = (after, p = page) => p.waitForFunction((n) => Number(document.body.dataset.runs ?? 0) > n, after, { timeout: 90_000 });
const runs = (p = page) => p.evaluate(() => Number(document.body.dataset.runs ?? 0));
const setEditor = (id, text, p = page) => p.evaluate(([i, t]) => window.crdplayPlayground.editors.set(i, t), [id, text]);
/** The CRD editor's lines underlined with a warning, and each underline's text. */
const warningLines = (p = page) => p.evaluate(() => {
  const view = window.crdplayPlayground.editors.views.crd;
  return [...document.querySelectorAll('#crd-editor .cm-lintRange-warning')].map((el) => ({
    line: view.state.doc.lineAt(view.posAtDOM(el)).number, text: el.textContent,
  }));
});
/** A permalink's fragment for a state, as the page writes one (permalink.ts). */
const link = (state) => '#v1.' + deflateRawSync(Buffer.from(JSON.stringify(state))).toString('base64url');

// The rule is on line 20.
const semverCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
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
            x-kubernetes-validations:
            - rule: "semver(self.version).major() >= 1"
            properties:
              version: {type: string, maxLength: 32}
`;
const widget = 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  version: 1.2.3\n';

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer();
  browser = await launch({ viewport: { width: 1400, height: 900 } });
  page = browser.page;
  page.on('pageerror', (err) => problems.push(`[pageerror] ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`[console] ${msg.text()}`); });
  await page.goto(server.url);
  await evaluated(0);
});

after(async () => {
  await browser?.close();
  server?.stop();
  assert.deepEqual(problems, []);
});

test('the oldest Kubernetes per rule and per CRD, and warnings for an older target', async () => {
  const options = await page.$$eval('#k8s-target option', (os) => os.map((o) => o.textContent));
  const range = await page.evaluate(() => window.crdplayPlayground.evaluation.kubernetes);
  assert.equal(options.length, range.newest - range.oldest + 1, `options ${options}`);
  assert.equal(options[0], `1.${range.newest}`);
  assert.equal(options.at(-1), `1.${range.oldest} (compatibility check only)`);
  assert.equal(await page.inputValue('#k8s-target'), `1.${range.newest}`);
  assert.match(await page.textContent('#target-status'), new RegExp(`^checking for Kubernetes 1\\.${range.newest}$`));

  let n = await runs();
  await setEditor('crd', semverCRD);
  await setEditor('objects', widget);
  await evaluated(n);
  await page.waitForFunction(() => window.crdplayPlayground.evaluation.crds[0]?.compat);
  assert.deepEqual(await warningLines(), [], 'the newest accepts the rule: no warning');

  // The Result pane: one line for the CRD.
  const line = await page.textContent('#pane-result [data-crd="widgets.example.com"] p.compat');
  assert.match(line, /^Works on Kubernetes 1\.34 and later — semver needs 1\.34 \(older servers refuse it\)\.$/);

  // The CEL pane: a Kubernetes column, its reasons as tooltip.
  await page.click('#tab-cel');
  const cell = await page.waitForSelector('#pane-cel table.cel td.kubernetes');
  assert.equal(await cell.textContent(), '1.34+');
  assert.match(await cell.getAttribute('title'), /needs Kubernetes 1\.34 or later: semver/);
  assert.equal(await page.textContent('#pane-cel table.cel th:nth-child(5)'), 'Kubernetes');

  // Target 1.32: a warning at the rule, the panes say so, and the engine is not asked again.
  n = await runs();
  await page.selectOption('#k8s-target', '1.32');
  await page.waitForFunction(() => document.querySelector('#crd-editor .cm-lintRange-warning'));
  const warned = await warningLines();
  assert.equal(warned.length, 1, JSON.stringify(warned));
  assert.equal(warned[0].line, 20);
  assert.match(warned[0].text, /semver\(self\.version\)/);
  assert.equal(await runs(), n, 'a target change re-evaluates nothing');
  assert.match(await page.textContent('#target-status'), /^checking for Kubernetes 1\.32 \(compatibility check only: the engine answers as 1\.\d+\)$/);
  assert.match(await page.getAttribute('#pane-cel td.kubernetes', 'class'), /warning/);
  assert.match(await page.textContent('#crd-info'), /0 errors, 1 warning/);
  await page.click('#tab-result');
  assert.match(await page.textContent('#pane-result p.compat.warning'), /Not on the target, Kubernetes 1\.32\./);
  await page.screenshot({ path: path.join(resultsDir, 'playground-versions.png') });
  // The warning's tooltip is the reason's message.
  await page.hover('#crd-editor .cm-lintRange-warning');
  const tip = await page.waitForSelector('.cm-tooltip-lint');
  assert.match(await tip.textContent(), /Kubernetes 1\.32 refuses this: needs Kubernetes 1\.34 or later: semver/);
  await page.mouse.move(0, 0);

  // Target 1.34: nothing to warn about.
  await page.selectOption('#k8s-target', '1.34');
  await page.waitForFunction(() => !document.querySelector('#crd-editor .cm-lintRange-warning'));
});

test('the target goes through permalinks and embeds; old links open at the newest', async () => {
  await page.selectOption('#k8s-target', '1.33');
  const url = await page.evaluate(() => window.crdplayPlayground.permalink());
  const other = await browser.context.newPage();
  try {
    await other.goto(url);
    await evaluated(0, other);
    assert.equal(await other.inputValue('#k8s-target'), '1.33');
    await other.waitForFunction(() => document.querySelector('#crd-editor .cm-lintRange-warning'));
    assert.equal(await other.isHidden('#notice'), true);

    // The embed: ?version= in the query wins over the link's.
    await other.goto(`${server.url}embed/?tab=cel&version=1.30${new URL(url).hash}`);
    await evaluated(0, other);
    assert.equal(await other.evaluate(() => document.body.dataset.target), '1.30');
    assert.match(await other.textContent('#target-status'), /checking for Kubernetes 1\.30/);
    await other.waitForFunction(() => document.querySelector('#crd-editor .cm-lintRange-warning'));

    // A link from a page without targets: the newest, no notice.
    await other.goto(server.url + link({ crd: semverCRD, objects: widget, mode: 'create', tab: 'result' }));
    await evaluated(0, other);
    const range = await other.evaluate(() => window.crdplayPlayground.evaluation.kubernetes);
    assert.equal(await other.inputValue('#k8s-target'), `1.${range.newest}`);
    assert.equal(await other.isHidden('#notice'), true);
  } finally {
    await other.close();
  }
});

test('an unknown version falls back to the newest and says so', async () => {
  const other = await browser.context.newPage();
  try {
    for (const [name, url] of [
      ['URL', `${server.url}?version=1.99`],
      ['link', server.url + link({ crd: semverCRD, objects: widget, version: 'banana' })],
    ]) {
      await other.goto(url);
      await evaluated(0, other);
      const range = await other.evaluate(() => window.crdplayPlayground.evaluation.kubernetes);
      assert.equal(await other.inputValue('#k8s-target'), `1.${range.newest}`, name);
      assert.match(await other.textContent('#notice'), new RegExp(`Kubernetes version "(1\\.99|banana)", which the playground does not check; it checks for Kubernetes 1\\.${range.newest} instead`), name);
      assert.ok(await other.textContent('#pane-result'), `${name}: the result pane is not blank`);
    }
  } finally {
    await other.close();
  }
});
