// Browser test: the page shows what was written as it was written. Hover shows a schema's values as the CRD's
// YAML writes them (a pattern's backslashes as they are, not JSON-escaped). The command line shows what kubectl
// printed: when an API error quotes a whole object as escaped JSON (real kubectl v1.37.2 prints the 1.3 kB
// of a strict merge patch's refusal as it is, recorded against the oracle), the pane shortens the quoted value
// and keeps the line as printed behind an expander, and says why a plain `kubectl apply` refuses what the page
// applied with --validate=warn.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/written.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, startServer } from './harness.mjs';

let server;
let browser;
let page;
const problems = [];

const evaluated = (after) => page.waitForFunction((n) => Number(document.body.dataset.runs ?? 0) > n, after, { timeout: 90_000 });

before(async () => {
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

/** Hovers the first occurrence of key in the editor's line holding lineText and returns the schema tooltip's lines. */
async function hoverKey(editor, lineText, key) {
  await page.mouse.move(0, 0);
  await page.waitForSelector('.schema-tip', { state: 'detached', timeout: 5000 });
  const line = page.locator(`#${editor}-editor .cm-line`, { hasText: lineText }).first();
  await line.scrollIntoViewIfNeeded();
  const box = await line.evaluate((el, k) => {
    const at = el.textContent.indexOf(k);
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    let offset = 0;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (at + 1 < offset + n.textContent.length) {
        range.setStart(n, at + 1 - offset);
        range.setEnd(n, at + 2 - offset);
        break;
      }
      offset += n.textContent.length;
    }
    const r = range.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
  }, key);
  await page.mouse.move(box.x, box.y);
  const tip = await page.waitForSelector('.schema-tip', { timeout: 5000 });
  return tip.evaluate((el) => [...el.children].map((c) => c.textContent));
}

test('hover shows a schema\'s values as the CRD writes them', async () => {
  const crd = await page.evaluate(() => window.crdplayPlayground.editors.text('crd'));
  // The default example's pattern, as its CRD text writes it (single-quoted, backslashes as they are).
  const written = /^\s*pattern: (.*)$/m.exec(crd)?.[1];
  assert.ok(written?.startsWith("'^(\\d+|\\*)"), `the default example's pattern: ${written}`);
  const lines = await hoverKey('objects', 'cronSpec', 'cronSpec');
  assert.equal(lines[0], 'spec.cronSpec <string>');
  const facts = lines.find((l) => l.includes('pattern: '));
  assert.ok(facts?.includes(`pattern: ${written}`), `hover: ${JSON.stringify(lines)}`);
  await page.mouse.move(0, 0);
});

/** Runs a command line in the CLI pane; returns the pane's new children as text and the expanders' texts. */
async function cli(line) {
  return page.evaluate(async (l) => {
    const out = document.getElementById('cli-out');
    const marker = `$ ${l}\n`;
    const before = out.textContent.split(marker).length - 1;
    const input = document.getElementById('cli-input');
    input.value = l;
    input.form.requestSubmit();
    let last = null;
    for (let i = 0; i < 600; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const text = out.textContent;
      if (text.split(marker).length - 1 <= before) continue;
      const after = text.slice(text.lastIndexOf(marker) + marker.length);
      if (after && after === last) {
        // What shows with the expanders closed: the text outside them and their summaries.
        const shown = [];
        let seen = false;
        for (const n of out.childNodes) {
          const t = n.nodeType === Node.TEXT_NODE ? n.textContent : n.matches('details') ? n.querySelector('summary').textContent + '\n' : n.textContent;
          if (!seen) {
            const at = t.lastIndexOf(marker);
            if (at < 0) continue;
            seen = true;
            shown.push(t.slice(at + marker.length));
            continue;
          }
          shown.push(t);
        }
        return { shown: shown.join(''), full: [...out.querySelectorAll('details.cli-full .cli-full-text')].map((d) => d.textContent) };
      }
      last = after;
    }
    throw new Error(`no output for ${l}: ${out.textContent.slice(-2000)}`);
  }, line);
}

test('kubectl apply of the default example: kubectl\'s answer, the escaped object folded, and why', async () => {
  await page.click('#tab-cli');
  await page.waitForFunction(() => /applied 1 CRD and 1 object from the editors/.test(document.getElementById('cli-out').textContent), null, { timeout: 60_000 });
  // As the editors were applied (--validate=warn): what real kubectl prints (recorded against the oracle).
  const warn = await cli('kubectl apply --validate=warn -f objects.yaml');
  assert.match(warn.shown, /^Warning: unknown field "spec\.unknownField"\ncrontab\.stable\.example\.com\/my-new-cron-object configured\n$/);
  // kubectl's default, strict: real kubectl prints the API's refusal of the merge patch, which quotes the whole
  // patched object as escaped JSON (1.3 kB). The pane shows it shortened, the line as printed behind an
  // expander, and the page's word on why.
  const strict = await cli('kubectl apply -f objects.yaml');
  const [first, ...rest] = strict.shown.split('\n');
  assert.match(first, /^The request is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"stable\.example\.com\/v1…" \([\d,]+ characters\): strict decoding error: unknown field "spec\.unknownField"$/);
  assert.ok(first.length < 250, first);
  assert.equal(rest[0], '');
  assert.equal(rest[1], '(exit status 1)');
  assert.match(rest[2], /^\(kubectl validates with --validate=strict unless told otherwise, .* Add --validate=warn to do the same\.\)$/);
  const full = strict.full.at(-1);
  assert.match(full, /^as kubectl printed it:\nThe request is invalid: patch: Invalid value: "\{.*\\"unknownField\\":\\"pruned by the server\\"\}\}": strict decoding error: unknown field "spec\.unknownField"$/);
  assert.ok(full.length > 1200, `${full.length} characters`);
  await page.click('#tab-result');
});
