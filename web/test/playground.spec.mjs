// Browser end-to-end test of the playground UI in headless Chromium, as a visitor uses it: the page loads cold
// (editors first, then the engine), an edit shows the engine's error inline at the right line, fixing it shows
// the stored object, schema hover and completion (the objects' schemas, and CustomResourceDefinition's own from
// the engine's OpenAPI document in the CRD editor), the engine's explain tree, a permalink round trip (and the
// links it must refuse), the embed route in an iframe, the command line, and a page whose engine cannot start.
// Every evaluation is the engine's (crdplay.evaluate): the tests that edit check that it alone answered.
// Screenshots go to test-results/ (listed in the report).
//
// Needs what oracle.spec.mjs needs. Run: node --test web/test/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import path from 'node:path';
import http from 'node:http';
import { launch, resultsDir, root, startServer, pageHelpers } from './harness.mjs';

let server;
let browser;
let page;
const problems = [];

const shot = (name) => page.screenshot({ path: path.join(resultsDir, `playground-${name}.png`) });
/** Waits until the page has finished an evaluation after `after` evaluations. */
const { evaluated, runs, setEditor, editorText } = pageHelpers(() => page);

/**
 * Runs action (an edit that starts an evaluation) with the page's calls into the engine recorded, waits for
 * the evaluation, and returns the calls: ['call evaluate'] when crdplay.evaluate alone answered, without a
 * request of the page's own.
 */
async function engineCalls(action) {
  await page.evaluate(() => {
    const client = window.crdplayPlayground.client;
    const call = client.call.bind(client);
    const request = client.request.bind(client);
    window.engineCalls = [];
    client.call = (method, arg) => { window.engineCalls.push(`call ${method}`); return call(method, arg); };
    client.request = (req) => { window.engineCalls.push(`request ${req.method ?? 'GET'} ${req.path}`); return request(req); };
  });
  try {
    const n = await runs();
    await action();
    await evaluated(n);
    return await page.evaluate(() => window.engineCalls);
  } finally {
    await page.evaluate(() => {
      delete window.crdplayPlayground.client.call;
      delete window.crdplayPlayground.client.request;
    });
  }
}

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer();
  browser = await launch({ viewport: { width: 1400, height: 900 } });
  page = browser.page;
  page.on('pageerror', (err) => problems.push(`[pageerror] ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`[console] ${msg.text()}`); });
});

after(async () => {
  await browser?.close();
  server?.stop();
  writeFileSync(path.join(resultsDir, 'playground-console.txt'), problems.join('\n') + '\n');
});

const objectsWith = (cronSpec) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-new-cron-object
spec:
  cronSpec: ${cronSpec}
  image: my-awesome-cron-image
`;

test('cold load: editors at once, then the engine, then results', async (t) => {
  await page.goto(server.url);
  // The editors exist before the engine has arrived (the wasm is megabytes; the editors are not waiting).
  const early = await page.evaluate(() => ({
    editors: document.body.dataset.editors,
    engine: document.getElementById('status').dataset.state,
    cm: document.querySelectorAll('.cm-editor').length,
    mark: performance.getEntriesByName('crdplay:editors')[0]?.startTime,
  }));
  assert.equal(early.editors, 'ready');
  assert.equal(early.cm, 4); // CRD, old objects, objects, and the upgrade mode's old CRD
  t.diagnostic(`editors built at ${Math.round(early.mark)} ms; engine state then: ${early.engine}`);
  await evaluated(0);
  const state = await page.evaluate(() => ({
    status: document.getElementById('status').dataset.state,
    progress: [document.getElementById('progress').value, document.getElementById('progress').max],
    result: document.getElementById('pane-result').textContent,
    stored: document.querySelector('[data-stored]')?.textContent ?? '',
  }));
  assert.equal(state.status, 'ready');
  // The evaluation is crdplay.evaluate's result, as it came (playground.Result: its revision, its timings).
  const ev = await page.evaluate(() => window.crdplayPlayground.evaluation);
  assert.match(ev.crdRevision, /\S/);
  assert.equal(typeof ev.timings.total, 'number');
  assert.ok(state.progress[0] > 1e6 && state.progress[0] === state.progress[1], `progress ${state.progress}`);
  assert.match(state.result, /CustomResourceDefinition crontabs\.stable\.example\.com: accepted/);
  // The default example's object: replicas defaulted by the schema, the unknown field pruned with a warning.
  assert.match(state.stored, /replicas: 1 {2}# defaulted/);
  assert.doesNotMatch(state.stored, /unknownField/);
  assert.match(state.result, /pruned: spec\.unknownField/);
  assert.match(state.result, /Warning: unknown field "spec\.unknownField"/);
  await shot('loaded');
});

test('an edit shows the engine\'s error inline at its line; fixing it shows the stored object', async () => {
  // crdplay.evaluate answers the edit, alone.
  assert.deepEqual(await engineCalls(() => setEditor('objects', objectsWith('"not a cron spec"'))), ['call evaluate']);
  // The 422's cause for spec.cronSpec, placed on line 6 of the objects editor, as CodeMirror shows it.
  const diag = await page.evaluate(() => window.crdplayPlayground.evaluation.diagnostics.filter((d) => d.source === 'objects' && d.severity === 'error'));
  assert.equal(diag.length, 1, JSON.stringify(diag));
  assert.equal(diag[0].line, 6);
  assert.equal(diag[0].column, 3);
  assert.equal(diag[0].field, 'spec.cronSpec');
  assert.match(diag[0].message, /^Invalid value: "not a cron spec": spec\.cronSpec in body should match/);
  const inline = await page.evaluate(() => {
    const range = document.querySelector('#objects-editor .cm-lintRange-error');
    const line = range?.closest('.cm-line');
    const lines = [...document.querySelectorAll('#objects-editor .cm-line')];
    return { text: range?.textContent, line: lines.indexOf(line) + 1 };
  });
  assert.equal(inline.line, 6);
  assert.match(inline.text, /^cronSpec/);
  assert.match(await page.textContent('#pane-result'), /422/);
  assert.match(await page.textContent('#objects-info'), /1 error/);
  await page.hover('#objects-editor .cm-lintRange-error');
  // The editor's message names the field first.
  const lint = await page.waitForSelector('.cm-tooltip-lint', { timeout: 5000 });
  assert.match(await lint.textContent(), /spec\.cronSpec: Invalid value: "not a cron spec": spec\.cronSpec in body should match/);
  await shot('inline-error');

  const n = await runs();
  await setEditor('objects', objectsWith('"*/5 * * * *"'));
  await evaluated(n);
  const fixed = await page.evaluate(() => ({
    errors: window.crdplayPlayground.evaluation.diagnostics.filter((d) => d.severity === 'error').length,
    marks: document.querySelectorAll('#objects-editor .cm-lintRange-error').length,
    stored: document.querySelector('[data-stored]')?.textContent ?? '',
  }));
  assert.equal(fixed.errors, 0);
  assert.equal(fixed.marks, 0);
  assert.match(fixed.stored, /cronSpec: ["']\*\/5 \* \* \* \*["']/);
  assert.match(fixed.stored, /uid: /);
  await shot('fixed');
});

test('a document that cannot be sent says why and where in the result pane', async () => {
  const before = await page.evaluate(() => window.crdplayPlayground.editors.text('objects'));
  const n = await runs();
  await setEditor('objects', 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: x\n');
  await evaluated(n);
  const result = await page.textContent('#pane-result');
  assert.match(result, /document 1: not sent/);
  const errs = await page.evaluate(() => window.crdplayPlayground.evaluation.diagnostics.filter((d) => d.source === 'objects' && d.severity === 'error'));
  assert.ok(errs.length >= 1, JSON.stringify(errs));
  // Each of the document's errors, with the line and column the editor underlines.
  for (const d of errs) assert.ok(result.includes(`line ${d.line}, column ${d.column}: ${d.message}`), `${result}\n${JSON.stringify(d)}`);
  const m = await runs();
  await setEditor('objects', before);
  await evaluated(m);
});

test('a List document (kubectl get -o yaml) stands for its items, each with its own result and errors', async () => {
  const before = await page.evaluate(() => window.crdplayPlayground.editors.text('objects'));
  const n = await runs();
  await setEditor('objects', [
    'apiVersion: v1', 'kind: List', 'items:',
    '- apiVersion: stable.example.com/v1', '  kind: CronTab', '  metadata: {name: first}', '  spec: {cronSpec: "*/5 * * * *", image: a}',
    '- apiVersion: stable.example.com/v1', '  kind: CronTab', '  metadata: {name: second}', '  spec:', '    cronSpec: "not a cron spec"', '    image: b', '',
  ].join('\n'));
  await evaluated(n);
  const sections = await page.$$eval('#pane-result section.object-result', (ss) => ss.map((s) => ({ item: s.dataset.item, text: s.textContent })));
  assert.deepEqual(sections.map((s) => s.item), ['1', '2'], JSON.stringify(sections));
  assert.match(sections[0].text, /CronTab first: create 201/);
  assert.match(sections[1].text, /CronTab second: create 422/);
  assert.doesNotMatch(sections[0].text, /cronSpec in body should match/);
  const errs = await page.evaluate(() => window.crdplayPlayground.evaluation.diagnostics.filter((d) => d.source === 'objects' && d.severity === 'error'));
  assert.equal(errs.length, 1, JSON.stringify(errs));
  assert.deepEqual([errs[0].item, errs[0].line, errs[0].column, errs[0].field], [2, 12, 5, 'spec.cronSpec']);
  await shot('list');
  // Hover inside an item: the schema of the item's kind.
  await page.locator('#objects-editor .cm-line', { hasText: 'cronSpec: "not a cron spec"' }).hover({ position: { x: 60, y: 5 } });
  const tip = await page.waitForSelector('.schema-tip', { timeout: 5000 });
  assert.match(await tip.textContent(), /spec\.cronSpec <string>/);
  await page.mouse.move(0, 0);
  const m = await runs();
  await setEditor('objects', before);
  await evaluated(m);
});

test('a CRD error is placed in the CRD editor at the field it names', async () => {
  const crd = await editorText('crd');
  const n = await runs();
  await setEditor('crd', crd.replace('type: integer', 'type: integr'));
  await evaluated(n);
  try {
  const diags = await page.evaluate(() => window.crdplayPlayground.evaluation.diagnostics.filter((d) => d.source === 'crds' && d.severity === 'error'));
  assert.ok(diags.length >= 1, 'no CRD error');
  const line = crd.split('\n').findIndex((l) => l.includes('type: integer')) + 1;
  const d = diags.find((x) => x.field?.endsWith('properties[replicas].type'));
  assert.ok(d, JSON.stringify(diags));
  assert.equal(d.line, line);
  assert.match(d.message, /Unsupported value: "integr"/);
  await shot('crd-error');
  } finally {
    const n2 = await runs();
    await setEditor('crd', crd);
    await evaluated(n2);
  }
});

test('hover shows the schema; completion offers keys and enum values', async () => {
  const n = await runs();
  await setEditor('objects', objectsWith('"*/5 * * * *"') + '  policy: \n');
  await evaluated(n);
  // Hover the cronSpec key: type, description and pattern from the CRD's schema.
  const key = page.locator('#objects-editor .cm-line', { hasText: 'cronSpec' });
  await key.hover({ position: { x: 30, y: 5 } });
  const tip = await page.waitForSelector('.schema-tip', { timeout: 5000 });
  const tipText = await tip.textContent();
  assert.match(tipText, /spec\.cronSpec <string>/);
  assert.match(tipText, /The schedule, in cron format/);
  assert.match(tipText, /pattern:/);
  await shot('hover');
  await page.mouse.move(0, 0);

  // Enum values after "policy: ".
  await page.evaluate(() => {
    const v = window.crdplayPlayground.editors.views.objects;
    const text = v.state.doc.toString();
    const pos = text.indexOf('policy: ') + 'policy: '.length;
    v.focus();
    v.dispatch({ selection: { anchor: pos } });
  });
  await page.keyboard.type('F');
  await page.waitForSelector('.cm-tooltip-autocomplete', { timeout: 5000 });
  const options = await page.$$eval('.cm-tooltip-autocomplete li', (lis) => lis.map((l) => l.textContent));
  assert.ok(options.some((x) => x.startsWith('Forbid')), `enum options: ${options}`);
  await page.keyboard.press('Escape');

  // Keys of spec on a new line.
  await page.evaluate(() => {
    const v = window.crdplayPlayground.editors.views.objects;
    const text = v.state.doc.toString().replace(/ {2}policy: \n$/, '');
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text + '  ' }, selection: { anchor: text.length + 2 } });
  });
  await page.keyboard.type('r');
  await page.waitForSelector('.cm-tooltip-autocomplete', { timeout: 5000 });
  const keys = await page.$$eval('.cm-tooltip-autocomplete li', (lis) => lis.map((l) => l.textContent));
  // Keys of spec's schema that match "r", not those already in the object.
  assert.ok(keys.some((k) => k.startsWith('replicas')), `key options: ${keys}`);
  assert.ok(!keys.some((k) => k.startsWith('image')), `image is already there: ${keys}`);
  await shot('completion');
  await page.keyboard.press('Escape');
});

/** Waits until no evaluation is due or running (edits made one after another each schedule one). */
const settled = async () => {
  await page.waitForTimeout(400);
  await page.evaluate(() => window.crdplayPlayground.idle);
};

/** Hovers the key `key` on the first line of `editor` that has `lineText`, and returns the schema tip's text. */
async function hoverKey(editor, lineText, key) {
  await page.mouse.move(0, 0);
  await page.waitForSelector('.schema-tip', { state: 'detached', timeout: 5000 });
  const line = page.locator(`#${editor}-editor .cm-line`, { hasText: lineText }).first();
  await line.scrollIntoViewIfNeeded();
  // The key's middle: measured in the line's text, so the indentation does not matter.
  const box = await line.evaluate((el, k) => {
    const text = el.textContent;
    const at = text.indexOf(k);
    const range = document.createRange();
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let offset = 0;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const len = n.textContent.length;
      if (at + 1 < offset + len) {
        range.setStart(n, at + 1 - offset);
        range.setEnd(n, at + 2 - offset);
        break;
      }
      offset += len;
    }
    const r = range.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  }, key);
  await page.mouse.move(box.x, box.y);
  const tip = await page.waitForSelector('.schema-tip', { timeout: 5000 });
  return tip.textContent();
}

/** Puts `text` in the editor with the cursor at the end of `before` in it, types `typed`, returns the options. */
async function completionAt(editor, text, before, typed) {
  await page.evaluate(([id, t, b]) => {
    const v = window.crdplayPlayground.editors.views[id];
    v.focus();
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: t }, selection: { anchor: t.indexOf(b) + b.length } });
  }, [editor, text, before]);
  await page.keyboard.type(typed);
  await page.waitForSelector('.cm-tooltip-autocomplete', { timeout: 5000 });
  return page.$$eval('.cm-tooltip-autocomplete li', (lis) => lis.map((l) => l.textContent));
}

test('the CRD editor: hover and completion from the engine\'s OpenAPI document of CustomResourceDefinition', async () => {
  // Fetched once the engine is ready (GET /openapi/v3/apis/apiextensions.k8s.io/v1).
  await page.waitForFunction(() => Number(document.body.dataset.crdSchema ?? 0) > 0, null, { timeout: 30_000 });
  const crd = await editorText('crd');
  try {
    // A field of CustomResourceDefinitionSpec: upstream's description and type.
    let tip = await hoverKey('crd', 'scope: Namespaced', 'scope');
    assert.match(tip, /^spec\.scope <string>/);
    assert.match(tip, /scope indicates whether the defined custom resource is cluster- or namespace-scoped/);
    // References are named as kubectl explain names them.
    tip = await hoverKey('crd', 'versions:', 'versions');
    assert.match(tip, /^spec\.versions <\[\]CustomResourceDefinitionVersion> -required-/);
    tip = await hoverKey('crd', 'openAPIV3Schema:', 'openAPIV3Schema');
    assert.match(tip, /spec\.versions\.0\.schema\.openAPIV3Schema <JSONSchemaProps>/);
    assert.match(tip, /openAPIV3Schema is the OpenAPI v3 schema to use for validation and pruning/);
    // Inside the nested schema: properties.<name> is JSONSchemaProps again, at any depth.
    tip = await hoverKey('crd', 'x-kubernetes-validations:', 'x-kubernetes-validations');
    assert.match(tip, /^spec\.versions\.0\.schema\.openAPIV3Schema\.properties\.spec\.x-kubernetes-validations <\[\]ValidationRule>/);
    assert.match(tip, /validation rules written in the CEL expression language/);
    tip = await hoverKey('crd', 'type: integer', 'type');
    assert.match(tip, /^spec\.versions\.0\.schema\.openAPIV3Schema\.properties\.spec\.properties\.replicas\.type <string>/);
    tip = await hoverKey('crd', 'message: "at most 10 replicas"', 'message');
    assert.match(tip, /x-kubernetes-validations\.0\.message <string>/);
    assert.match(tip, /Message represents the message displayed when validation fails/);
    await shot('crd-hover');
    await page.mouse.move(0, 0);

    // Keys of spec, with their types, on a new line of spec.
    const head = crd.slice(0, crd.indexOf('  names:')).replace('  scope: Namespaced\n', '') + '  ';
    for (const [typed, want] of [['s', 'scope<string> required'], ['c', 'conversion<CustomResourceConversion>'], ['p', 'preserveUnknownFields<boolean>']]) {
      const keys = await completionAt('crd', head, head, typed);
      assert.ok(keys.includes(want), `${want} not in the options after "${typed}": ${keys}`);
      if (typed === 's') await shot('crd-completion');
      await page.keyboard.press('Escape');
    }
    // Enum values, deep inside the schema: a rule's reason.
    const withReason = crd.replace('message: "at most 10 replicas"\n', 'message: "at most 10 replicas"\n              reason: \n');
    const values = await completionAt('crd', withReason, 'reason: ', 'F');
    for (const v of ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired']) {
      assert.ok(values.some((x) => x.startsWith(v)), `enum options: ${values}`);
    }
    await page.keyboard.press('Escape');
  } finally {
    const n = await runs();
    await setEditor('crd', crd);
    await evaluated(n);
    await settled();
  }
});

test('the Explain pane shows the engine\'s explain tree, kept while the CRD is the same', async () => {
  await page.click('#tab-explain');
  await page.waitForSelector('#pane-explain[data-source=engine] li[data-path="spec.replicas"]', { timeout: 30_000 });
  const text = await page.textContent('#pane-explain');
  assert.match(text, /KIND: CronTab/);
  assert.match(text, /replicas <integer>/);
  assert.match(text, /default: 1 · minimum: 1/);
  assert.match(text, /policy <string>/);
  assert.match(text, /enum: Allow, Forbid, Replace/);
  // A pattern as YAML writes it, its backslashes as they are (not JSON-escaped).
  assert.ok(text.includes(String.raw`pattern: ^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$`), text);
  assert.match(text, /rule: self\.replicas <= 10 \(message: at most 10 replicas\)/);
  // apiVersion, kind and metadata as every object has them, with the API's own descriptions.
  assert.match(text, /metadata <ObjectMeta>/);
  assert.match(text, /Standard object's metadata\. More info: https:\/\/git\.k8s\.io\/community\/contributors\/devel\/sig-architecture\/api-conventions\.md#metadata/);
  assert.match(text, /creationTimestamp <string>/);
  // The text view is written when opened, as kubectl explain --recursive prints it.
  await page.click('#pane-explain .explain-text summary');
  const rec = await page.textContent('#pane-explain .explain-text pre');
  assert.match(rec, /^GROUP: {6}stable\.example\.com\nKIND: {7}CronTab\nVERSION: {4}v1\n/);
  assert.match(rec, /\n {2}spec\t<Object>\n {4}cronSpec\t<string>\n/);
  assert.match(rec, /\n {4}policy\t<string>\n {4}enum: Allow, Forbid, Replace\n/);
  await shot('explain');

  // An edit of the objects alone: the engine leaves the trees out (knownCRDRevision), the page keeps them,
  // and the pane is not built again.
  await page.evaluate(() => { document.querySelector('#pane-explain li[data-path="spec.replicas"]').dataset.kept = 'yes'; });
  const n = await runs();
  await setEditor('objects', objectsWith('"0 0 * * *"'));
  await evaluated(n);
  assert.equal(await page.getAttribute('#pane-explain li[data-path="spec.replicas"]', 'data-kept'), 'yes');
  // A change of the CRD: a new tree.
  const crd = await editorText('crd');
  const n2 = await runs();
  await setEditor('crd', crd.replace('minimum: 1\n', 'minimum: 1\n                maximum: 10\n'));
  await evaluated(n2);
  try {
    await page.waitForFunction(() => /minimum: 1 · maximum: 10/.test(document.getElementById('pane-explain').textContent));
    assert.equal(await page.getAttribute('#pane-explain li[data-path="spec.replicas"]', 'data-kept'), null);
  } finally {
    const n3 = await runs();
    await setEditor('crd', crd);
    await evaluated(n3);
    await settled();
    await page.click('#tab-result');
  }
});

test('the Explain pane of a huge CRD builds its deeper fields when they are opened', async () => {
  const dir = path.join(root, 'testdata/corpus/argo-workflows/Workflow');
  const big = { crd: readFileSync(path.join(dir, 'crd.yaml'), 'utf8'), objects: readFileSync(path.join(dir, '01-create.yaml'), 'utf8') };
  const before = { crd: await editorText('crd'), objects: await editorText('objects') };
  try {
    const n = await runs();
    await setEditor('crd', big.crd);
    await setEditor('objects', big.objects);
    await evaluated(n);
    await page.click('#tab-explain');
    await page.waitForSelector('#pane-explain[data-source=engine] li[data-path="spec.templates"]', { timeout: 60_000 });
    // Two levels laid out (spec, spec.templates); below them, lists built on demand.
    const container = '#pane-explain li[data-path="spec.templates[*].container"]';
    assert.equal(await page.locator(container).count(), 0);
    const more = page.locator('#pane-explain li[data-path="spec.templates"] > details.explain-more');
    assert.match(await more.locator('summary').textContent(), /^\d+ fields$/);
    await more.locator('summary').click();
    await page.waitForSelector(container);
    assert.match(await page.textContent(`${container} summary`), /container <Object>/);
    // Its own fields are a list to open again.
    assert.equal(await page.locator(`${container} > details.explain-more`).count(), 1);
  } finally {
    const n = await runs();
    await setEditor('crd', before.crd);
    await setEditor('objects', before.objects);
    await evaluated(n);
    await settled();
    await page.click('#tab-result');
  }
});

test('permalink round trip, and links the page refuses', async () => {
  const n = await runs();
  await setEditor('objects', objectsWith('"0 * * * *"'));
  await evaluated(n);
  await page.selectOption('#mode', 'create');
  const url = await page.evaluate(() => window.crdplayPlayground.permalink());
  assert.match(url, /#v1\.[A-Za-z0-9_-]+$/);
  const want = { crd: await editorText('crd'), objects: await editorText('objects') };

  const other = await browser.context.newPage();
  await other.goto(url);
  await evaluated(0, other);
  assert.equal(await editorText('crd', other), want.crd);
  assert.equal(await editorText('objects', other), want.objects);
  assert.match(await other.textContent('[data-stored]'), /cronSpec: ["']?0 \* \* \* \*/);

  // A decompression bomb: 64 kB of link that would expand to 50 MB. Refused quickly, with a message.
  const bomb = deflateRawSync(Buffer.alloc(50 * 1024 * 1024, 0x61)).toString('base64url');
  const t0 = Date.now();
  await other.goto(server.url + '#v1.' + bomb);
  await other.waitForSelector('#notice:not([hidden])', { timeout: 10_000 });
  assert.match(await other.textContent('#notice'), /expands to more than 2 MB; it was refused/);
  assert.ok(Date.now() - t0 < 10_000);
  // A damaged link and an unknown version.
  await other.goto(server.url + '#v1.!!!');
  await other.waitForSelector('#notice:not([hidden])');
  assert.match(await other.textContent('#notice'), /damaged/);
  await other.goto(server.url + '#v9.abc');
  await other.waitForSelector('#notice:not([hidden])');
  assert.match(await other.textContent('#notice'), /format \(v9\) is unknown/);
  // A state too big for a link: a clear message instead of a URL that chat tools or browsers would cut.
  const tooBig = await other.evaluate(async () => {
    const bytes = new Uint8Array(90_000);
    for (let i = 0; i < bytes.length; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
    window.crdplayPlayground.editors.set('crd', '# ' + btoa(String.fromCharCode(...bytes)));
    return window.crdplayPlayground.permalink().then(() => 'no error', (e) => e.message);
  });
  assert.match(tooBig, /too big for a link: \d+ kB compressed, and links are limited to 64 kB/);
  await other.close();
});

test('embed route: minimal chrome, panes and read-only from the URL, resizes its iframe', async (t) => {
  const frag = new URL(await page.evaluate(() => window.crdplayPlayground.permalink())).hash;
  const src = `${server.url}embed/?panes=objects,result,table&readonly=1&tab=table${frag}`;
  // A docs page on another origin (another loopback port: Chromium blocks a public page from framing a
  // loopback one), which frames the embed route as the snippet of the Embed dialog does.
  const docs = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(`<!doctype html><body style="margin:0"><iframe id="f" src="${src}" style="width:1000px;border:0" height="200"></iframe>
    <script>window.sizes = []; addEventListener('message', (e) => { if (e.data && e.data.type === 'crdplay:resize') { window.sizes.push(e.data.height); document.getElementById('f').height = e.data.height; } });</script></body>`);
  });
  await new Promise((resolve) => docs.listen(0, '127.0.0.1', resolve));
  t.after(() => docs.close());
  const host = await browser.context.newPage();
  await host.goto(`http://127.0.0.1:${docs.address().port}/`);
  const frame = await (await host.waitForSelector('#f')).contentFrame();
  await frame.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, { timeout: 90_000 });
  const got = await frame.evaluate(() => ({
    page: document.body.dataset.page,
    header: !!document.querySelector('header h1'),
    crdShown: !document.getElementById('crd-frame').classList.contains('gone'),
    objectsShown: !document.getElementById('objects-frame').classList.contains('gone'),
    tabs: [...document.querySelectorAll('.tab:not(.gone)')].map((b) => b.dataset.tab),
    selected: document.querySelector('.tab[aria-selected=true]')?.dataset.tab,
    editable: document.querySelector('#objects-editor .cm-content').getAttribute('contenteditable'),
    table: document.getElementById('pane-table').textContent,
  }));
  assert.deepEqual({ ...got, table: undefined }, {
    page: 'embed', header: false, crdShown: false, objectsShown: true, tabs: ['result', 'table'], selected: 'table', editable: 'false', table: undefined,
  });
  assert.match(got.table, /my-new-cron-object/);
  // kubectl's AGE column: the server sends it formatted (e.g. "3s").
  assert.match(got.table, /my-new-cron-object.*\d+s/);
  assert.doesNotMatch(got.table, /NaN/);
  await host.waitForFunction(() => window.sizes.length > 0);
  const height = await host.evaluate(() => window.sizes.at(-1));
  assert.ok(height > 200, `resize message height ${height}`);
  await host.screenshot({ path: path.join(resultsDir, 'playground-embed.png'), fullPage: true });
  await host.close();
});

test('embed route without tab=: the first tab of panes opens, not a hidden Result', async (t) => {
  const frag = new URL(await page.evaluate(() => window.crdplayPlayground.permalink())).hash;
  const embedPage = await browser.context.newPage();
  t.after(() => embedPage.close());
  await embedPage.goto(`${server.url}embed/?panes=objects,table${frag}`);
  await embedPage.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, { timeout: 90_000 });
  const got = await embedPage.evaluate(() => ({
    tabs: [...document.querySelectorAll('.tab:not(.gone)')].map((b) => b.dataset.tab),
    selected: document.querySelector('.tab[aria-selected=true]')?.dataset.tab,
  }));
  assert.deepEqual(got, { tabs: ['table'], selected: 'table' });
});

test('the command line: raw requests, and kubectl when the engine has it', async () => {
  await page.click('#tab-cli');
  const cli = async (line, want) => {
    await page.fill('#cli-input', line);
    await page.press('#cli-input', 'Enter');
    await page.waitForFunction(([l, w]) => {
      const out = document.getElementById('cli-out').textContent;
      const at = out.lastIndexOf(`$ ${l}\n`);
      return at >= 0 && new RegExp(w).test(out.slice(at));
    }, [line, want.source], { timeout: 30_000 }).catch(async (e) => {
      throw new Error(`${line}: no ${want} in the output:\n${(await page.textContent('#cli-out')).slice(-3000)}\n${e.message}`);
    });
  };
  // The command line's store is window.crdplay.request's: apply the editors' texts, then read them back.
  await cli('POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions @crd', /HTTP (201|409)/);
  await cli('POST /apis/stable.example.com/v1/namespaces/default/crontabs @objects', /HTTP (201|409)/);
  await cli('GET /apis/stable.example.com/v1/namespaces/default/crontabs', /HTTP 200(?=[\s\S]*"kind": "CronTabList")(?=[\s\S]*my-new-cron-object)/);
  await cli('DELETE /apis/stable.example.com/v1/namespaces/default/crontabs/nope', /HTTP 404/);
  const hasKubectl = await page.evaluate(() => window.crdplay.has('kubectl'));
  if (hasKubectl) {
    await cli('kubectl get crontabs', /NAME/);
  }
  await shot('cli');
  // Every request shows in the HTTP log, with the answer.
  await page.click('#tab-http');
  const log = await page.textContent('#pane-http');
  assert.match(log, /GET \/apis\/stable\.example\.com\/v1\/namespaces\/default\/crontabs/);
  assert.match(log, /POST \/apis\/apiextensions\.k8s\.io\/v1\/customresourcedefinitions/);
});

test('the gallery: every example of the docs and the corpus is in the menu; one loads and evaluates', async () => {
  await page.waitForFunction(() => Number(document.body.dataset.examples ?? 0) > 40, null, { timeout: 30_000 });
  const groups = await page.$$eval('#examples optgroup', (gs) => gs.map((g) => g.label));
  for (const g of ['Basics', 'CEL validation rules', 'Transition rules', 'Subresources', 'Versions', 'Real-world CRDs']) assert.ok(groups.includes(g), `${g} in ${groups}`);
  const n = await runs();
  await page.selectOption('#examples', 'examples/defaulting');
  await evaluated(n);
  const crd = await editorText('crd');
  assert.match(crd, /default:/);
  // Only the visible pane is rendered on each evaluation: the others when shown.
  await page.click('#tab-result');
  assert.match(await page.textContent('#pane-result'), /defaulted: /);
  // An edit of the objects alone: crdplay.evaluate answers it, with the CRD still installed in its session
  // (no second CRD POST), and the previous object gone (the session rolls each evaluation's writes back).
  // Its requests are traced while the HTTP log is shown (opening it evaluates again, traced, unless the last
  // evaluation was).
  await page.click('#tab-http');
  await page.evaluate(() => window.crdplayPlayground.idle);
  const objects = await editorText('objects');
  assert.deepEqual(await engineCalls(() => setEditor('objects', objects.replace(/name: (\S+)/, 'name: $1-2'))), ['call evaluate']);
  const ev = await page.evaluate(() => {
    const e = window.crdplayPlayground.evaluation;
    return { cached: e.crdCached, methods: e.exchanges.map((x) => `${x.method} ${x.path.split('?')[0]}`), tables: e.tables };
  });
  assert.equal(ev.cached, true);
  assert.ok(!ev.methods.some((m) => m.startsWith('POST /apis/apiextensions.k8s.io')), ev.methods.join('\n'));
  // The objects are listed as tables only while the Table pane is shown: opening it evaluates again.
  assert.equal(ev.tables, undefined);
  const n2 = await runs();
  await page.click('#tab-table');
  await evaluated(n2);
  ev.tables = await page.evaluate(() => window.crdplayPlayground.evaluation.tables);
  assert.match(await page.textContent('#pane-table'), /-2/);
  const names = ev.tables.flatMap((t) => t.rows.map((r) => r.name));
  assert.ok(names.length > 0 && names.every((name) => name.endsWith('-2')), JSON.stringify(names));
  // The log again, as the tests after this one had it (it evaluates again, traced).
  const n4 = await runs();
  await page.click('#tab-http');
  await evaluated(n4);
  await shot('gallery');
  // Back to the default example for the tests after this one.
  const n3 = await runs();
  await page.selectOption('#examples', 'default');
  await evaluated(n3);
});

test('conversion webhook: the page\'s JavaScript converts between versions, in a sandboxed worker', async () => {
  const n = await runs();
  await page.selectOption('#examples', 'examples/webhook-conversion-url');
  await evaluated(n);
  await page.click('#tab-versions');
  const pane = () => page.textContent('#pane-versions');
  // Read in both served versions: the other one through the default webhook, which sets apiVersion.
  await page.waitForFunction(() => document.querySelectorAll('#pane-versions .version').length >= 2);
  let text = await pane();
  assert.match(text, /Conversion strategy Webhook/);
  assert.match(text, /200 v1beta1/);
  assert.match(text, /200 v1[^b]/);
  assert.match(text, /apiVersion: example\.com\/v1\n/);
  assert.match(await page.textContent('.webhook-log'), /ConversionReview to example\.com\/v1/);
  await shot('webhook');
  // A webhook that throws: the engine reports the failed call as kube-apiserver reports a failing webhook.
  const original = await page.inputValue('#webhook-code');
  await page.fill('#webhook-code', 'function convert(review) { throw new Error("no conversion today"); }');
  const n2 = await runs();
  await page.click('.webhook button');
  await evaluated(n2);
  await page.waitForFunction(() => /no conversion today/.test(document.getElementById('pane-versions').textContent), null, { timeout: 30_000 });
  // Back to the default webhook and example.
  await page.fill('#webhook-code', original);
  const n3 = await runs();
  await page.click('.webhook button');
  await evaluated(n3);
  const n4 = await runs();
  await page.selectOption('#examples', 'default');
  await evaluated(n4);
});

test('update mode and the other panes render; dark scheme follows the system', async () => {
  await setEditor('old', objectsWith('"0 * * * *"'));
  await page.selectOption('#mode', 'update');
  await page.click('#tab-result');
  await page.waitForFunction(() => /create old 201 → update 200/.test(document.getElementById('pane-result').textContent), null, { timeout: 30_000 });
  // A refused update shows the API's refusal with its causes, not the old object that is still stored.
  const objects = await editorText('objects');
  const n = await runs();
  await setEditor('objects', objects.replace(/cronSpec: .*/, 'cronSpec: "not a cron spec"'));
  await evaluated(n);
  const refused = page.locator('#pane-result section.object-result');
  assert.match(await refused.textContent(), /create old 201 → update 422/);
  assert.match(await refused.locator('.status-error').textContent(), /^Invalid: CronTab\.stable\.example\.com "my-new-cron-object" is invalid: spec\.cronSpec: Invalid value: "not a cron spec"/);
  assert.match(await refused.locator('.causes').textContent(), /spec\.cronSpec/);
  assert.equal(await refused.locator('[data-stored]').count(), 0);
  const n2 = await runs();
  await setEditor('objects', objects);
  await evaluated(n2);
  for (const tab of ['cel', 'table', 'versions', 'explain']) {
    await page.click(`#tab-${tab}`);
    assert.ok((await page.textContent(`#pane-${tab}`)).length > 20, `${tab} pane is empty`);
  }
  assert.match(await page.textContent('#pane-cel'), /self\.replicas <= 10/);
  await page.click('#tab-cel');
  await shot('cel');
  assert.match(await page.textContent('#pane-explain'), /cronSpec <string>/);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.click('#tab-result');
  await shot('dark-update');
  // With a long example name the header wraps to two lines; the editors give up the height, so the page
  // still fits the window and the header stays in view.
  const fit = await page.evaluate(() => ({ scroll: document.documentElement.scrollHeight, inner: innerHeight,
    headerLines: Math.round(document.querySelector('header.bar').getBoundingClientRect().height) }));
  assert.ok(fit.scroll <= fit.inner, `the page is ${fit.scroll}px high in a ${fit.inner}px window (header ${fit.headerLines}px)`);
  await page.emulateMedia({ colorScheme: 'light' });
  assert.deepEqual(problems.filter((p) => !/favicon/.test(p)), []);
});

test('a page whose engine cannot start says so in the result pane; the editors still help', async () => {
  const other = await browser.context.newPage();
  await other.route('**/*.wasm', (route) => route.fulfill({ status: 404, body: 'not here' }));
  await other.goto(server.url);
  await other.waitForSelector('#status[data-state=failed]', { timeout: 30_000 });
  assert.match(await other.textContent('#status'), /The engine could not start/);
  const result = await other.textContent('#pane-result');
  assert.match(result, /The engine could not start: .+\. Nothing can be evaluated/);
  assert.equal(await other.evaluate(() => window.crdplayPlayground.evaluation), null);
  // The explain pane reads the CRD text itself.
  await other.click('#tab-explain');
  await other.waitForSelector('#pane-explain[data-source=page]');
  assert.match(await other.textContent('#pane-explain'), /cronSpec <string>/);
  await other.screenshot({ path: path.join(resultsDir, 'playground-engine-failed.png') });
  await other.close();
});
