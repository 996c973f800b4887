// Browser test of the command line in headless Chromium: it shares the editors' world. Once the page has
// shown the default example's 201, opening the CLI pane applies the editors' CRD and object to the command
// line's store (and says so in its first line), so that `kubectl get crontabs` lists the object; an edit is
// applied before the next command; its help fits the pane without wrapping.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/cli.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { launch, resultsDir, startServer } from './harness.mjs';

let server;
let browser;
let page;

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

/** Types a command and waits until its output matches want; returns the output after the command line. */
async function cli(line, want) {
  await page.fill('#cli-input', line);
  await page.press('#cli-input', 'Enter');
  const out = await page.waitForFunction(([l, w]) => {
    const text = document.getElementById('cli-out').textContent;
    const at = text.lastIndexOf(`$ ${l}\n`);
    return at >= 0 && new RegExp(w).test(text.slice(at)) && text.slice(at);
  }, [line, want.source], { timeout: 30_000 }).catch(async (e) => {
    throw new Error(`${line}: no ${want} in the output:\n${(await page.textContent('#cli-out')).slice(-3000)}\n${e.message}`);
  });
  return out.jsonValue();
}

test('after the page shows 201, the command line has the editors\' CRD and object', async () => {
  await page.goto(server.url);
  await page.waitForFunction(() => Number(document.body.dataset.runs ?? 0) > 0, null, { timeout: 90_000 });
  assert.match(await page.textContent('#pane-result'), /201 CronTab my-new-cron-object/);
  await page.waitForFunction(() => window.crdplay.has('kubectl'));

  await page.click('#tab-cli');
  await page.waitForFunction(() => /^applied/.test(document.getElementById('cli-out').textContent), null, { timeout: 30_000 });
  const shown = await page.textContent('#cli-out');
  assert.equal(shown.split('\n')[0], 'applied 1 CRD and 1 object from the editors', shown);
  assert.match(await cli('kubectl get crontabs', /my-new-cron-object/), /^\$ kubectl get crontabs\nNAME +SPEC +REPLICAS +AGE\nmy-new-cron-object +\* \* \* \* \*\/5 +1 +\d+s\n/);

  // An edit of the objects editor is applied before the next command.
  await page.evaluate(() => window.crdplayPlayground.editors.set('objects',
    window.crdplayPlayground.editors.text('objects').replace('my-new-cron-object', 'edited-cron-object')));
  const out = await cli('kubectl get crontabs -o name', /edited-cron-object/);
  assert.match(out, /crontab\.stable\.example\.com\/edited-cron-object/);
  assert.match((await page.textContent('#cli-out')), /applied 1 CRD and 1 object from the editors\n(  .*\n)*\$ kubectl get crontabs -o name/);
  // load applies them again at any time.
  await cli('load', /applied 1 CRD and 1 object from the editors/);
  await page.screenshot({ path: path.join(resultsDir, 'cli-shared.png') });
});

test('the help fits the pane: no line wraps', async () => {
  const fit = await page.evaluate(() => {
    const out = document.getElementById('cli-out');
    const style = getComputedStyle(out);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `${style.fontSize} ${style.fontFamily}`;
    const text = out.textContent;
    const help = text.slice(text.indexOf('kubectl get crontabs -o yaml ')).split('\n').slice(0, 6);
    const widest = Math.max(...help.map((l) => ctx.measureText(l).width));
    return { widest, room: out.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight), help };
  });
  assert.match(fit.help.at(-1), /^clear \| help/, fit.help.join('\n'));
  assert.ok(fit.widest <= fit.room, `the widest help line takes ${fit.widest}px of ${fit.room}px`);
});

test('a narrow screen: the help still fits', async () => {
  await page.setViewportSize({ width: 700, height: 900 });
  const { widest, room } = await page.evaluate(() => {
    const out = document.getElementById('cli-out');
    const style = getComputedStyle(out);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = `${style.fontSize} ${style.fontFamily}`;
    const text = out.textContent;
    const help = text.slice(text.indexOf('kubectl get crontabs -o yaml ')).split('\n').slice(0, 6);
    const widest = Math.max(...help.map((l) => ctx.measureText(l).width));
    return { widest, room: out.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) };
  });
  assert.ok(widest <= room, `the widest help line takes ${widest}px of ${room}px at 700px`);
});
