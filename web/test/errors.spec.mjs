// Browser test: errors are easy to reach. A field path in the Result and CEL panes shows its place in the
// editor (scrolled there, selected, focused); a paste shows the first error rather than the end of the
// pasted text; a CEL compile error is underlined at its column within the rule, its message shown without Go
// struct dumps and its caret snippet preformatted (upstream's whole text behind an expander); tooltips put
// the error first and have a height limit; the CEL table fits its pane; the Explain pane picks a version.
// Screenshot: test-results/playground-cel-compile-error.png.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/errors.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { launch, resultsDir, startServer } from './harness.mjs';

let server;
let browser;
let page;

const runs = () => page.evaluate(() => Number(document.body.dataset.runs ?? 0));
const evaluated = (n) => page.waitForFunction((k) => Number(document.body.dataset.runs ?? 0) > k, n, { timeout: 90_000 });

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer({ quiet: true });
  browser = await launch({ viewport: { width: 1400, height: 900 } });
  page = browser.page;
  await page.goto(server.url);
  await evaluated(0);
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** Opens a gallery example and waits for its evaluation. */
async function example(id) {
  await page.focus('#examples'); // the gallery loads once the engine is in, or when the menu is used
  await page.waitForSelector(`#examples option[value="${id}"]`, { state: 'attached', timeout: 30_000 });
  const n = await runs();
  await page.selectOption('#examples', id);
  await evaluated(n);
  await page.evaluate(() => window.crdplayPlayground.idle);
}

/** The editor's selection as 1-based line and column, whether it has the focus, and the selected text. */
const selection = (id) => page.evaluate((i) => {
  const v = window.crdplayPlayground.editors.views[i];
  const { from, to } = v.state.selection.main;
  const line = v.state.doc.lineAt(from);
  return { line: line.number, column: from - line.from + 1, text: v.state.sliceDoc(from, to), focused: v.hasFocus };
}, id);

/** Whether a line of an editor is inside its visible area. */
const lineVisible = (id, line) => page.evaluate(([i, n]) => {
  const v = window.crdplayPlayground.editors.views[i];
  const pos = v.state.doc.line(n).from;
  const box = v.coordsAtPos(pos);
  const sc = v.scrollDOM.getBoundingClientRect();
  return !!box && box.top >= sc.top && box.bottom <= sc.bottom;
}, [id, line]);

test('a CEL compile error is underlined at its column; its message is readable, the API\'s kept', async () => {
  await example('examples/cel-compile-errors');
  const diags = await page.evaluate(() => window.crdplayPlayground.evaluation.diagnostics.filter((d) => d.source === 'crds'));
  const d = diags.find((x) => x.message.includes("undefined field 'nonExistingField'"));
  assert.ok(d, JSON.stringify(diags));
  // CEL's "<input>:1:5" is the "." of self.nonExistingField: the mark covers ".nonExistingField" in the rule.
  const marked = await page.evaluate((x) => {
    const v = window.crdplayPlayground.editors.views.crd;
    const line = v.state.doc.line(x.line);
    return { text: v.state.sliceDoc(line.from + x.column - 1, line.from + x.endColumn - 1), line: line.text };
  }, d);
  assert.equal(marked.text, '.nonExistingField', marked.line);
  const range = page.locator('#crd-editor .cm-lintRange-error', { hasText: 'nonExistingField' }).first();
  assert.equal((await range.textContent()).trim(), '.nonExistingField');
  await range.scrollIntoViewIfNeeded();
  await range.hover();
  const tip = page.locator('.cm-tooltip-lint').first();
  await tip.waitFor({ timeout: 5000 });
  const text = await tip.textContent();
  assert.match(text, /compilation failed: ERROR: <input>:1:5: undefined field 'nonExistingField'/);
  // The caret snippet is preformatted, and no Go struct dump is shown outside the expander.
  assert.equal(await tip.locator('pre.message-snippet').textContent(), 'self.nonExistingField > 0\n....^');
  assert.doesNotMatch(await tip.locator('.message-text').allTextContents().then((t) => t.join('\n')), /"Rule":/);
  assert.match(await tip.locator('details.message-full pre').first().textContent(), /Invalid value: \{"Rule":"self\.nonExistingField \\u003e 0"/);
  // The tooltip shows the error first (before the schema's help) and stays within its height limit.
  const order = await page.evaluate(() => {
    const host = document.querySelector('.cm-tooltip-lint');
    const all = [...document.querySelectorAll('.cm-tooltip-lint, .schema-tip')];
    const hover = host.closest('.cm-tooltip-hover') ?? host;
    return { first: all[0]?.className ?? '', maxHeight: getComputedStyle(hover).maxHeight, height: hover.getBoundingClientRect().height, inner: innerHeight };
  });
  assert.match(order.first, /cm-tooltip-lint/);
  assert.notEqual(order.maxHeight, 'none');
  assert.ok(order.height <= order.inner * 0.5, `tooltip ${order.height}px high`);
  await page.screenshot({ path: path.join(resultsDir, 'playground-cel-compile-error.png') });
  await page.mouse.move(0, 0);

  // The Result pane: the causes without dumps, each field a link to its place.
  await page.click('#tab-result');
  const causes = page.locator('#pane-result section.crd-result .causes li');
  assert.equal(await causes.count(), 3);
  // The Status's message joins the three with their snippets: its first line heads the causes.
  const head = await page.locator('#pane-result section.crd-result .status-error > p.error').textContent();
  assert.match(head, /^Invalid: CustomResourceDefinition\.apiextensions\.k8s\.io "crontabs\.stable\.example\.com" is invalid: \[/);
  assert.doesNotMatch(head, /"Rule":|\n/);
  const cause = causes.filter({ hasText: 'nonExistingField' }).first();
  assert.doesNotMatch(await cause.evaluate((li) => [...li.childNodes].filter((n) => n.nodeName !== 'DETAILS').map((n) => n.textContent).join('')), /"Rule":/);
  assert.equal(await cause.locator('pre.snippet').textContent(), 'self.nonExistingField > 0\n....^');
  await cause.locator('a.goto').click();
  const sel = await selection('crd');
  assert.deepEqual(sel, { line: d.line, column: d.column, text: '.nonExistingField', focused: true });
  assert.ok(await lineVisible('crd', d.line));
});

test('the CEL pane: its columns fit, a rule\'s field shows its place in the CRD', async () => {
  await example('examples/cel-compile-errors');
  await page.click('#tab-cel');
  const fit = await page.evaluate(() => {
    const pane = document.getElementById('pane-cel');
    return { scroll: pane.scrollWidth, client: pane.clientWidth };
  });
  assert.ok(fit.scroll <= fit.client, `the CEL pane is ${fit.scroll}px wide in ${fit.client}px`);
  const link = page.locator('#pane-cel table.cel a.goto').first();
  const line = Number(await link.getAttribute('data-line'));
  await page.evaluate(() => window.crdplayPlayground.editors.views.objects.focus());
  await link.click();
  const sel = await selection('crd');
  assert.equal(sel.line, line);
  assert.ok(sel.focused);
  assert.ok(await lineVisible('crd', line));
  // What the engine said about the rules: each line a link too.
  const said = page.locator('#pane-cel ul.engine-said a.goto').first();
  const saidLine = Number(await said.getAttribute('data-line'));
  await said.click();
  assert.equal((await selection('crd')).line, saidLine);
});

test('after a paste the editor shows the first error, not the end of the text', async () => {
  await page.selectOption('#examples', 'default');
  await page.evaluate(() => window.crdplayPlayground.idle);
  const lines = ['apiVersion: stable.example.com/v1', 'kind: CronTab', 'metadata:', '  name: pasted', 'spec:',
    '  cronSpec: "not a cron spec"', '  image: my-awesome-cron-image', ...Array.from({ length: 200 }, (_, i) => `# note ${i + 1}`)];
  const n = await runs();
  // A paste as CodeMirror records one: the cursor ends after the pasted text, scrolled to it.
  await page.evaluate((text) => {
    const v = window.crdplayPlayground.editors.views.objects;
    v.focus();
    v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text }, selection: { anchor: text.length }, scrollIntoView: true, userEvent: 'input.paste' });
  }, lines.join('\n') + '\n');
  await evaluated(n);
  await page.evaluate(() => window.crdplayPlayground.idle);
  await page.waitForFunction(() => window.crdplayPlayground.evaluation.diagnostics.some((d) => d.source === 'objects' && d.severity === 'error'));
  await page.waitForTimeout(200);
  assert.ok(await lineVisible('objects', 6), 'line 6 (spec.cronSpec) is in view');
  assert.ok(!(await lineVisible('objects', 200)), 'the end of the text is out of view');
});

test('the Explain pane picks the version it explains', async () => {
  await example('examples/multiple-versions');
  await page.click('#tab-explain');
  const select = page.locator('#pane-explain select.explain-version');
  await select.waitFor({ timeout: 30_000 });
  const options = await select.locator('option').evaluateAll((os) => os.map((o) => ({ value: o.value, text: o.textContent })));
  assert.ok(options.length >= 2, JSON.stringify(options));
  assert.equal(await page.locator('#pane-explain h3').count(), 1);
  const other = options[1];
  await select.selectOption(other.value);
  const version = other.value.split('/').pop();
  assert.match(await page.textContent('#pane-explain h3'), new RegExp(`VERSION: ${version}$`));
  // The choice stays across evaluations of the same CRD.
  const n = await runs();
  await page.evaluate(() => window.crdplayPlayground.run());
  await page.waitForFunction((k) => Number(document.body.dataset.runs ?? 0) > k, n);
  assert.equal(await page.locator('#pane-explain select.explain-version').inputValue(), other.value);
});

test('a warning of the Result pane that names a field shows its place', async () => {
  const n = await runs();
  await page.selectOption('#examples', 'default');
  await evaluated(n);
  await page.evaluate(() => window.crdplayPlayground.idle);
  await page.click('#tab-result');
  const d = await page.evaluate(() => window.crdplayPlayground.evaluation.diagnostics.find((x) => x.type === 'Warning' && x.field === 'spec.unknownField'));
  assert.ok(d);
  await page.locator('#pane-result p.warning a.goto', { hasText: 'unknown field "spec.unknownField"' }).click();
  const sel = await selection('objects');
  assert.deepEqual([sel.line, sel.column, sel.focused], [d.line, d.column, true]);
  assert.match(sel.text, /^unknownField/);
});
