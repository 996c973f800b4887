// Browser test of a CRD edit's two steps in headless Chromium: the page shows the object's results as soon as
// the engine has answered (crdplay.evaluate with deferAnalysis), then asks for the CRD's analysis (the rules'
// costs, the Kubernetes versions, the explain trees, the object's CEL cost) and fills the panes and the CRD
// editor's version warnings with it. run() resolves at the first step, app.idle after the second.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/analysis.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, semverCRD, startServer, widget } from './harness.mjs';

let server;
let browser;
let page;
const problems = [];


before(async () => {
  server = await startServer();
  browser = await launch({ viewport: { width: 1400, height: 900 } });
  page = browser.page;
  page.on('pageerror', (err) => problems.push(`[pageerror] ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`[console] ${msg.text()}`); });
  await page.goto(server.url);
  await page.waitForFunction(() => Number(document.body.dataset.runs ?? 0) > 0, null, { timeout: 90_000 });
});

after(async () => {
  await browser?.close();
  server?.stop();
  assert.deepEqual(problems, []);
});

/** What the page shows now: the result, the CEL pane, the CRD editor's version warnings. */
function shown() {
  const app = window.crdplayPlayground;
  const ev = app.evaluation;
  return {
    pending: !!ev.analysisPending,
    analysis: document.body.dataset.analysis,
    status: ev.objects.map((o) => o.status),
    objectCEL: ev.objects.map((o) => o.cel?.used ?? null),
    compat: ev.crds.map((c) => c.compat?.minor ?? null),
    rules: ev.crds.flatMap((c) => c.versions.flatMap((v) => v.cel.rules.map((r) => r.cost))),
    celPending: !!document.querySelector('#pane-cel [data-pending="analysis"]'),
    celRules: document.querySelectorAll('#pane-cel table.cel tr').length,
    versionWarnings: [...document.querySelectorAll('#crd-editor .cm-lintRange-warning')].map((el) => el.textContent),
    explain: app.session.explain?.length ?? null,
  };
}

test('a CRD edit shows the object at once, then its analysis', async () => {
  // An older target than the rule needs (1.32: a compatibility check only, no other engine), and the CEL
  // pane shown.
  await page.selectOption('#k8s-target', '1.32');
  await page.click('#tab-cel');
  await page.evaluate(() => window.crdplayPlayground.idle);
  const calls = await page.evaluate(async ({ crd, object, shownSrc }) => {
    const shown = new Function(`return (${shownSrc})()`);
    const app = window.crdplayPlayground;
    const client = app.client;
    const call = client.call.bind(client);
    const inputs = [];
    client.call = (method, arg) => { inputs.push(method === 'evaluate' ? JSON.parse(arg) : method); return call(method, arg); };
    try {
      app.editors.set('crd', crd);
      app.editors.set('objects', object);
      await app.run();
      // Synchronously after run(): what the first results put on screen.
      const first = shown();
      await app.idle;
      return { first, complete: shown(), inputs: inputs.map((i) => ({ crds: typeof i.crds === 'string', deferAnalysis: !!i.deferAnalysis })) };
    } finally {
      delete client.call;
    }
  }, { crd: semverCRD, object: widget, shownSrc: shown.toString() });
  const { first, complete, inputs } = calls;

  // Two evaluations: the new CRD text with the analysis deferred, then the same texts without.
  assert.deepEqual(inputs, [{ crds: true, deferAnalysis: true }, { crds: false, deferAnalysis: false }]);

  // The first results: the object created, shown; no analysis yet, and the panes say so.
  assert.equal(first.pending, true);
  assert.equal(first.analysis, 'pending');
  assert.deepEqual(first.status, [201]);
  assert.deepEqual(first.objectCEL, [null]);
  assert.deepEqual(first.compat, [null]);
  assert.deepEqual(first.rules, []);
  assert.equal(first.celPending, true);
  assert.deepEqual(first.versionWarnings, []);
  assert.equal(first.explain, null);

  // Then the analysis fills them: the rule's cost, the object's CEL cost, the oldest Kubernetes, the warning
  // for the 1.32 target at the rule in the CRD editor, the explain tree.
  assert.equal(complete.pending, false);
  assert.equal(complete.analysis, 'done');
  assert.deepEqual(complete.status, [201]);
  assert.equal(complete.rules.length, 1);
  assert.ok(complete.rules[0] > 0, `rule cost ${complete.rules[0]}`);
  assert.ok(complete.objectCEL[0] > 0, `object CEL cost ${complete.objectCEL[0]}`);
  assert.deepEqual(complete.compat, [34]);
  assert.equal(complete.celPending, false);
  assert.ok(complete.celRules >= 2, `CEL pane rows ${complete.celRules}`);
  assert.equal(complete.versionWarnings.length, 1, JSON.stringify(complete.versionWarnings));
  assert.match(complete.versionWarnings[0], /semver\(self\.version\)/);
  assert.ok(complete.explain >= 1, `explain trees ${complete.explain}`);

  // The result pane's compat line, and the explain pane's tree from the engine.
  await page.click('#tab-result');
  assert.match(await page.textContent('#pane-result p.compat'), /Works on Kubernetes 1\.34 and later/);
  assert.match(await page.textContent('#pane-result'), /CEL runtime cost \d+ of/);
  await page.click('#tab-explain');
  assert.match(await page.textContent('#pane-explain'), /Widget/);

  // An object edit now needs no analysis: one evaluation, complete.
  const n = await page.evaluate(() => window.crdplayPlayground.runs);
  await page.evaluate((o) => window.crdplayPlayground.editors.set('objects', o), widget.replace('1.2.3', '2.0.0'));
  await page.waitForFunction((k) => window.crdplayPlayground.runs > k, n);
  const after = await page.evaluate(() => ({ pending: !!window.crdplayPlayground.evaluation.analysisPending, cel: window.crdplayPlayground.evaluation.objects[0].cel?.used }));
  assert.equal(after.pending, false);
  assert.ok(after.cel > 0);
});
