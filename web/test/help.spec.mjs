// Browser test of the help page (web/help.templ): the header links it, it says what the playground does, and
// every key its Keyboard table lists does what the table says on the playground page (each row's data-key has
// a check here, so a key documented without one fails).
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/help.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPlayground, pageHelpers } from './harness.mjs';

let pg;
let browser;
let page;

const { evaluated, runs } = pageHelpers(() => page);

before(async () => {
  pg = await openPlayground();
  ({ browser, page } = pg);
  await evaluated(0);
});

after(async () => {
  await pg?.close();
  assert.deepEqual(pg?.problems, []);
});

/** What each documented key does, checked on the playground page. */
const checks = {
  'Mod-Enter': async () => {
    const n = await runs();
    await page.click('#objects-editor .cm-content');
    await page.keyboard.press('Control+Enter');
    await evaluated(n);
  },
  'Mod-s': async () => {
    await page.click('#objects-editor .cm-content');
    await page.keyboard.press('Control+s');
    await page.waitForFunction(() => location.hash.length > 1, null, { timeout: 30_000 });
  },
  'scratch Mod-Enter': async () => {
    await page.click('#tab-cel');
    const n = await runs();
    await page.fill('.scratch-expr', '1 + 2');
    await page.press('.scratch-expr', 'Control+Enter');
    await page.waitForFunction(() => /type int/.test(document.querySelector('.scratch-out').textContent));
    assert.equal(await runs(), n);
  },
  'tabs ArrowRight': async () => {
    await page.click('#tab-result');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getAttribute('#tab-cel', 'aria-selected'), 'true');
    await page.keyboard.press('End');
    assert.equal(await page.getAttribute('#tab-http', 'aria-selected'), 'true');
    await page.keyboard.press('Home');
    assert.equal(await page.getAttribute('#tab-result', 'aria-selected'), 'true');
  },
  'examples ArrowDown': async () => {
    const before = await page.evaluate(() => window.crdplayPlayground.editors.text('crd'));
    await page.focus('#examples');
    await page.keyboard.press('ArrowDown');
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.crdplayPlayground.editors.text('crd')), before, 'ArrowDown loaded an example');
    await page.keyboard.press('Escape');
  },
  'editor Ctrl-Space': async () => {
    // On a new line of the object's spec, nothing typed yet: Ctrl+Space alone asks for the keys.
    await page.evaluate(() => {
      const v = window.crdplayPlayground.editors.views.objects;
      const text = v.state.doc.toString();
      const at = text.indexOf('spec:\n') + 'spec:\n'.length;
      v.focus();
      v.dispatch({ changes: { from: at, insert: '  \n' }, selection: { anchor: at + 2 } });
    });
    await page.keyboard.press('Control+Space');
    await page.waitForSelector('.cm-tooltip-autocomplete', { timeout: 10_000 });
    await page.keyboard.press('Escape');
  },
  'editor Mod-f': async () => {
    await page.click('#objects-editor .cm-content');
    await page.keyboard.press('Control+f');
    await page.waitForSelector('#objects-editor .cm-search', { timeout: 10_000 });
    await page.keyboard.press('Escape');
  },
  'editor Mod-z': async () => {
    await page.click('#objects-editor .cm-content');
    const before = await page.evaluate(() => window.crdplayPlayground.editors.text('objects'));
    await page.keyboard.type('# x');
    await page.keyboard.press('Control+z');
    await page.waitForFunction((t) => window.crdplayPlayground.editors.text('objects') === t, before, { timeout: 10_000 });
  },
  'cli ArrowUp': async () => {
    await page.click('#tab-cli');
    await page.fill('#cli-input', 'kubectl version');
    await page.press('#cli-input', 'Enter');
    await page.waitForFunction(() => document.getElementById('cli-input').value === '');
    await page.press('#cli-input', 'ArrowUp');
    assert.equal(await page.inputValue('#cli-input'), 'kubectl version');
  },
};

test('the header links the help page, which says what the playground does and its keys', async () => {
  const href = await page.getAttribute('#help', 'href');
  const help = await browser.context.newPage();
  try {
    const res = await help.goto(new URL(href, page.url()).href);
    assert.equal(res.status(), 200);
    const headings = await help.$$eval('h2', (hs) => hs.map((x) => x.textContent));
    assert.deepEqual(headings, ['What the playground does', 'Keyboard', 'From the command line']);
    assert.match(await help.textContent('main'), /CEL scratchpad/);
    const keys = await help.$$eval('tr[data-key]', (rows) => rows.map((r) => r.dataset.key));
    assert.deepEqual([...keys].sort(), Object.keys(checks).sort(), 'each documented key has a check, and each check a documented key');
    // The page back.
    assert.equal(await help.getAttribute('header a', 'href'), './');
  } finally {
    await help.close();
  }
});

for (const [key, check] of Object.entries(checks)) {
  test(`the documented key ${key} does what the help says`, check);
}
