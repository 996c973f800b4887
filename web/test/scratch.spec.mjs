// Browser test of the CEL scratchpad (scratch.ts over crdplay.cel): a rule of the CRD tried on an object from the
// CEL table's "try" gives the value the real server's verdict implies (the oracle's recorded 422 for the same
// CRD and object quotes exactly the rules that are false); an expression that is not a rule shows its value and
// the API's refusal of it as a rule; a compile error is placed at its column; Ctrl/Cmd+Enter in the scratchpad
// evaluates the expression, not the editors; the expression is kept across a reload.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/scratch.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openPlayground, root, pageHelpers } from './harness.mjs';

const oracle = (p) => readFileSync(path.join(root, 'testdata/oracle/cel-basic', p), 'utf8');
const crd = oracle('crd.yaml');
// The step's object without its comment line.
const object = oracle('01-create-invalid.yaml');
const refusal = JSON.stringify(JSON.parse(oracle('expected/01-create-invalid.json')).body);

let pg;
let browser;
let page;

const { evaluated, runs } = pageHelpers(() => page);
const scratchIdle = (p = page) => p.evaluate(() => window.crdplayPlayground.scratch.idle);
const out = (p = page) => p.textContent('.scratch-out');

before(async () => {
  pg = await openPlayground();
  ({ browser, page } = pg);
  await evaluated(0);
  const n = await runs();
  await page.evaluate(([c, o]) => {
    window.crdplayPlayground.editors.set('crd', c);
    window.crdplayPlayground.editors.set('objects', o);
  }, [crd, object]);
  await evaluated(n);
  await page.click('#tab-cel');
});

after(async () => {
  await pg?.close();
  assert.deepEqual(pg?.problems, []);
});

test('each rule tried on the object is false exactly where the real server refused it with the rule\'s message', async () => {
  const rules = await page.$$eval('#pane-cel table.grid.cel tr', (rows) => rows.map((r) => r.querySelector('td[data-label=rule] code')?.textContent).filter(Boolean));
  assert.equal(rules.length, 2, `the CEL table's rules: ${rules}`);
  const messages = { 'self.minReplicas <= self.replicas': 'replicas should be greater than or equal to minReplicas.', 'self.replicas <= self.maxReplicas': 'replicas should be smaller than or equal to maxReplicas.' };
  for (let i = 0; i < rules.length; i++) {
    await page.locator('#pane-cel table.grid.cel button.try').nth(i).click();
    await page.waitForFunction((r) => document.querySelector('.scratch-expr').value === r, rules[i]);
    await scratchIdle();
    assert.equal(await page.inputValue('.scratch input[list]'), 'spec');
    const value = (await page.textContent('.scratch-values td.scratch-value')).trim();
    const refused = refusal.includes(messages[rules[i]]);
    assert.equal(value, String(!refused), `${rules[i]}: ${await out()}`);
    assert.match(await out(), /type bool/);
    // The limit the CEL table holds each rule to.
    const limit = await page.textContent('#pane-cel table.grid.cel th:nth-child(4)');
    assert.match(await out(), new RegExp(`Estimated cost \\d+ × 1 = \\d+ ${limit} per rule`));
  }
});

test('an expression of another type: its value, and the API\'s refusal of it as a rule', async () => {
  await page.fill('.scratch-expr', 'self.replicas * 2');
  await page.waitForFunction(() => /type int/.test(document.querySelector('.scratch-out').textContent));
  await scratchIdle();
  assert.equal((await page.textContent('.scratch-values td.scratch-value')).trim(), '40');
  assert.match(await page.textContent('.scratch-asrule'), /As a rule, the API would refuse it: cel expression must evaluate to a bool/);
});

test('a compile error at its column, with a caret under it', async () => {
  const expr = 'self.minReplicas <= self.nope';
  await page.fill('.scratch-expr', expr);
  await page.waitForSelector('.scratch-error');
  await scratchIdle();
  const err = await page.$eval('.scratch-error', (e) => ({ line: e.dataset.line, column: Number(e.dataset.column), text: e.textContent }));
  assert.match(err.text, /undefined field 'nope'/);
  // CEL places a field selection's error at its dot.
  assert.equal(err.column, expr.indexOf('.nope') + 1);
  const caret = (await page.textContent('.scratch-caret')).split('\n');
  assert.equal(caret[0], expr);
  assert.equal(caret[1].indexOf('^'), expr.indexOf('.nope'));
});

test('Ctrl+Enter in the scratchpad evaluates the expression, not the editors; the expression is kept across a reload', async () => {
  const n = await runs();
  await page.fill('.scratch input[list]', '');
  await page.fill('.scratch-expr', 'self.metadata.name');
  await page.press('.scratch-expr', 'Control+Enter');
  await page.waitForFunction(() => /my-new-cron-object/.test(document.querySelector('.scratch-out').textContent));
  assert.equal(await runs(), n, 'the editors were evaluated again');
  await page.reload();
  await evaluated(0);
  await page.click('#tab-cel');
  assert.equal(await page.inputValue('.scratch-expr'), 'self.metadata.name');
  await page.waitForFunction(() => /my-new-cron-object/.test(document.querySelector('.scratch-out').textContent), null, { timeout: 60_000 });
});
