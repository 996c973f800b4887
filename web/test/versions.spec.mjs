// Browser test of the Kubernetes target in headless Chromium: a CRD whose CEL rule needs the semver library
// shows the oldest Kubernetes that accepts it in the CEL pane (per rule) and the Result pane (per CRD); a
// target older than that puts a warning at the rule's line of the CRD editor without a new evaluation; the
// target goes through permalinks and embeds (version=1.33), old links open at the newest, and a version the
// page does not know falls back to the newest with a notice. An emulated target (1.34 to 1.36) runs the page
// on a worker of its own whose engine emulates it (engines.ts): /version, the status line, the evaluation,
// the command line's kubectl and a recorded difference between 1.35 and 1.37 say so; a worker that cannot
// emulate its version gives way to the default, with a notice. Screenshot: test-results/playground-versions.png.
//
// Needs what oracle.spec.mjs needs. Run: node --test web/test/versions.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { deflateRawSync } from 'node:zlib';
import path from 'node:path';
import { launch, manifest, resultsDir, root, semverCRD, startServer, widget, pageHelpers } from './harness.mjs';

let server;
let browser;
let page;
const problems = [];

const { evaluated, runs, setEditor } = pageHelpers(() => page);
/** The CRD editor's lines underlined with a warning, and each underline's text. */
const warningLines = (p = page) => p.evaluate(() => {
  const view = window.crdplayPlayground.editors.views.crd;
  return [...document.querySelectorAll('#crd-editor .cm-lintRange-warning')].map((el) => ({
    line: view.state.doc.lineAt(view.posAtDOM(el)).number, text: el.textContent,
  }));
});
/** A permalink's fragment for a state, as the page writes one (permalink.ts). */
const link = (state) => '#v1.' + deflateRawSync(Buffer.from(JSON.stringify(state))).toString('base64url');


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
  // Labelled by the versions the engine says it emulates (versions.ts's DEFAULT_EMULATED before it says).
  const emulated = await page.evaluate(() => window.crdplay.version().emulatedVersions);
  const m = readFileSync(path.join(root, 'web/src/versions.ts'), 'utf8').match(/DEFAULT_EMULATED: readonly string\[\] = (\[[^\]]*\])/);
  assert.ok(m, 'DEFAULT_EMULATED in web/src/versions.ts');
  assert.deepEqual(emulated, JSON.parse(m[1].replaceAll("'", '"')), 'web/src/versions.ts DEFAULT_EMULATED is engine.EmulatedVersions()');
  assert.deepEqual(emulated, ['1.34', '1.35', '1.36', '1.37']);
  for (let m = range.newest, i = 0; m >= range.oldest; m--, i++) {
    assert.equal(options[i], `1.${m} (${emulated.includes(`1.${m}`) ? 'emulated' : 'compatibility check only'})`);
  }
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

/** semverCRD with its rule replaced: the rule stays on line 20. */
const withRule = (rule, props = '              version: {type: string, maxLength: 32}\n') =>
  semverCRD.replace('- rule: "semver(self.version).major() >= 1"', `- rule: ${JSON.stringify(rule)}`)
    .replace('              version: {type: string, maxLength: 32}\n', props);

test('one verdict for the oldest version: the same at every target, and an emulated 1.34 that answers otherwise says why', { timeout: 300_000 }, async () => {
  // sort() is in the CEL environment of compatibility version 1.34: a real 1.35 server (which compiles new
  // rules for 1.34) accepts it, a real 1.34 (for 1.33) refuses it, and kube-apiserver 1.37 emulating 1.34
  // compiles for 1.34, the lowest it can, and accepts it (testdata/versions: cel-ext-lists-v3).
  await page.click('#tab-result');
  if (await page.inputValue('#k8s-target') !== '1.37') await choose('1.37', '1.37');
  let n = await runs();
  await setEditor('crd', withRule('[3,1].sort()[0] == 1'));
  await setEditor('objects', widget);
  await evaluated(n);
  await page.waitForFunction(() => window.crdplayPlayground.evaluation.crds[0]?.compat && !window.crdplayPlayground.evaluation.analysisPending);
  const works = /^Works on Kubernetes 1\.35 and later — sort needs 1\.35 \(older servers refuse it\)\./;
  const line = () => page.textContent('#pane-result [data-crd="widgets.example.com"] p.compat');
  assert.match(await line(), works);
  assert.equal(await page.$('#pane-result p.compat-emulation'), null, 'the newest answers as a real 1.37');

  const why = 'Kubernetes 1.37 emulating 1.34 accepts sort, unlike a real 1.34 server: emulating, kube-apiserver compiles new CEL rules and checks formats for compatibility version 1.34, the lowest a 1.37 binary allows, where a real 1.34 uses 1.33.';
  await choose('1.34', '1.34');
  await page.waitForFunction(() => !window.crdplayPlayground.evaluation.analysisPending);
  // The engine emulating 1.34 accepts the CRD; the page says it works from 1.35, not on the target, and why the
  // engine accepts it all the same.
  assert.match(await page.textContent('#pane-result [data-crd="widgets.example.com"] h3'), /accepted$/);
  assert.match(await line(), works);
  assert.match(await line(), /Not on the target, Kubernetes 1\.34\.$/);
  assert.equal(await page.textContent('#pane-result p.compat-emulation'), why);
  // The CRD editor warns at the rule, with the same reason.
  await page.waitForFunction(() => document.querySelector('#crd-editor .cm-lintRange-warning'));
  const warned = await warningLines();
  assert.equal(warned.length, 1, JSON.stringify(warned));
  assert.equal(warned[0].line, 20);
  await page.hover('#crd-editor .cm-lintRange-warning');
  const tip = await page.waitForSelector('.cm-tooltip-lint');
  assert.ok((await tip.textContent()).includes(`Kubernetes 1.34 refuses this: needs Kubernetes 1.35 or later: sort. ${why}`), await tip.textContent());
  await page.mouse.move(0, 0);
  // The CEL pane: the same minor, the same sentence.
  await page.click('#tab-cel');
  const cell = await page.waitForSelector('#pane-cel table.cel td.kubernetes');
  assert.equal(await cell.textContent(), '1.35+');
  assert.match(await cell.getAttribute('class'), /warning/);
  assert.equal(await page.textContent('#pane-cel p.compat-emulation'), why);
  await page.click('#tab-result');
  await choose('1.37', '1.37');
  assert.match(await line(), works);
});

test('a refused CRD has no "works on" line, and a rule no version accepts says why in the CEL pane', async () => {
  for (const [name, crd, text, title] of [
    ['does not compile', withRule('self.nope == 1'), 'does not compile', /^No version checked \(Kubernetes 1\.28 to 1\.37\) accepts this rule: it does not compile: .*undefined field 'nope'/],
    ['over the cost limit', withRule('self.l.all(a, self.l.all(b, a == b))', '              l: {type: array, items: {type: string}}\n'), 'over the cost limit',
      /^No version checked \(Kubernetes 1\.28 to 1\.37\) accepts this rule: its estimated cost, [\d,]+, is over the limit of [\d,]+$/],
  ]) {
    const n = await runs();
    await setEditor('crd', crd);
    await evaluated(n);
    await page.waitForFunction(() => window.crdplayPlayground.evaluation.crds[0]?.compat && !window.crdplayPlayground.evaluation.analysisPending);
    assert.equal(await page.evaluate(() => window.crdplayPlayground.evaluation.crds[0].status), 422, name);
    await page.click('#tab-result');
    assert.match(await page.textContent('#pane-result [data-crd="widgets.example.com"] h3'), /rejected$/, name);
    assert.equal(await page.$('#pane-result p.compat'), null, `${name}: ${await page.textContent('#pane-result')}`);
    await page.click('#tab-cel');
    const cell = await page.waitForSelector('#pane-cel table.cel td.kubernetes');
    assert.equal(await cell.textContent(), text, name);
    assert.match(await cell.getAttribute('title'), title, name);
  }
  await page.click('#tab-result');
  // The tests below start from the semver CRD.
  const n = await runs();
  await setEditor('crd', semverCRD);
  await evaluated(n);
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

/** The page's engine workers (worker.js; not the conversion webhook's sandbox), as Chromium lists them. */
const engineWorkers = (p = page) => p.workers().filter((w) => w.url().endsWith(manifest()['worker.js']));
/** Waits until the page's engine workers number n. */
async function workersAre(n, p = page) {
  for (let i = 0; i < 100 && engineWorkers(p).length !== n; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(engineWorkers(p).length, n, `engine workers: ${engineWorkers(p).map((w) => w.url())}`);
}
/** Chooses a target in the menu and waits until the engine emulating want answers and has evaluated. */
async function choose(target, want, p = page) {
  const n = await runs(p);
  await p.selectOption('#k8s-target', target);
  await p.waitForFunction((v) => document.body.dataset.engine === v, want, { timeout: 120_000 });
  await evaluated(n, p);
  await p.waitForFunction((v) => window.crdplayPlayground.evaluation.kubernetes.emulated === v, want);
}
/** Runs a command line in the CLI pane and returns what it printed. */
async function cli(line, p = page) {
  return p.evaluate(async (l) => {
    const out = document.getElementById('cli-out');
    const marker = `$ ${l}\n`;
    const echoes = () => out.textContent.split(marker).length - 1;
    const before = echoes();
    const input = document.getElementById('cli-input');
    input.value = l;
    input.form.requestSubmit();
    let last = null;
    for (let i = 0; i < 600; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const text = out.textContent;
      // The pane prints the echo, then the whole output in one piece (cli.ts). The first command may clear the
      // pane (its first load replaces the help), so echoes are counted, not offsets.
      if (echoes() <= before) continue;
      const after = text.slice(text.lastIndexOf(marker) + marker.length);
      if (after && after === last) return after;
      last = after;
    }
    throw new Error(`no output for ${l}: ${out.textContent.slice(-2000)}`);
  }, line);
}
/** A recorded step of testdata/versions: what the real server answered at that version. */
const recorded = (version, file) => JSON.parse(readFileSync(path.join(root, 'testdata/versions', version, 'delete-ignore-read-error/expected', file), 'utf8'));

test('an emulated target runs on a worker emulating it; switching back gives the newest', { timeout: 600_000 }, async () => {
  await page.selectOption('#k8s-target', '1.37');
  await page.waitForFunction(() => document.body.dataset.engine === '1.37');
  await setEditor('crd', semverCRD);
  await setEditor('objects', widget);
  const texts = await page.evaluate(() => ({ crd: window.crdplayPlayground.editors.text('crd'), objects: window.crdplayPlayground.editors.text('objects') }));
  // The delete the recordings answer differently at 1.35 and 1.37 (DeleteOptions' ignoreStoreReadErrorWithClusterBreakingPotential,
  // whose gate is on from 1.37), on the editors' object through the command line.
  const step = readFileSync(path.join(root, 'testdata/versions/1.37/delete-ignore-read-error/03-delete-with-grace-period.yaml'), 'utf8');
  const body = JSON.stringify(JSON.parse(/^  body: (.*)$/m.exec(step)[1]));
  const deleteLine = `DELETE /apis/example.com/v1/namespaces/default/widgets/w ${body}`;
  await page.click('#tab-cli');

  for (const [target, want, workers] of [['1.35', '1.35', 2], ['1.37', '1.37', 2], ['1.36', '1.36', 2], ['1.35', '1.35', 2], ['1.33', '1.37', 2]]) {
    await choose(target, want);
    await workersAre(workers);
    // /version through window.crdplay, which is the worker that answers.
    const v = await page.evaluate(async () => JSON.parse((await window.crdplay.request({ path: '/version' })).body));
    assert.equal(v.gitVersion, 'v1.37.2', target);
    assert.equal(`${v.emulationMajor}.${v.emulationMinor}`, want, target);
    assert.equal(await page.evaluate(() => window.crdplay.version().emulated), want);
    // The status line names what runs; the target's line says whether the engine answers as the target.
    const status = await page.textContent('#status');
    if (want === '1.37') assert.match(status, /^Engine ready in \d+ ms: Kubernetes v1\.37\.2$/, target);
    else assert.equal(status, `Engine ready: Kubernetes v1.37.2 emulating ${want}`, target);
    assert.equal(await page.textContent('#target-status'), target === want ? `checking for Kubernetes ${target}`
      : `checking for Kubernetes ${target} (compatibility check only: the engine answers as ${want})`);
    // The evaluation ran there, on the same texts.
    const ev = await page.evaluate(() => window.crdplayPlayground.evaluation.kubernetes);
    assert.equal(ev.emulated, want);
    assert.equal(ev.version, 'v1.37.2');
    assert.deepEqual(await page.evaluate(() => ({ crd: window.crdplayPlayground.editors.text('crd'), objects: window.crdplayPlayground.editors.text('objects') })), texts);
    assert.match(await page.textContent('#pane-result [data-crd="widgets.example.com"] p.compat'), /^Works on Kubernetes 1\.34 and later — semver needs 1\.34 \(older servers refuse it\)\./);

    // The command line: kubectl version agrees, and the recorded delete gets that version's answer.
    const kv = JSON.parse(await cli('kubectl version -o json'));
    assert.equal(`${kv.serverVersion.emulationMajor}.${kv.serverVersion.emulationMinor}`, want, target);
    if (!['1.35', '1.37'].includes(want)) continue;
    await cli('kubectl apply -f objects.yaml'); // the previous run deleted it, or refused to
    const rec = recorded(want, '03-delete-with-grace-period.json');
    const out = await cli(deleteLine);
    assert.match(out, new RegExp(`^HTTP ${rec.status}\\n`), `${target}: ${out}`);
    const got = JSON.parse(out.slice(out.indexOf('\n') + 1));
    assert.equal(got.status, rec.body.status);
    assert.equal(got.message, rec.body.message);
    assert.deepEqual(got.details?.causes, rec.body.details?.causes);
  }
  await page.click('#tab-result');
});

test('a worker that cannot emulate its version gives way to the default, and the page says so', { timeout: 300_000 }, async () => {
  const n = await runs();
  // A version the engine does not emulate (the menu only offers those it does): the worker fails with the
  // engine's message, which names the range.
  await page.evaluate(() => window.crdplayEngines.emulate('1.33'));
  await page.waitForFunction(() => !document.getElementById('notice').hidden && /could not be emulated/.test(document.getElementById('notice').textContent), null, { timeout: 120_000 });
  assert.match(await page.textContent('#notice'),
    /^Kubernetes 1\.33 could not be emulated \(crdplay: emulated version "1\.33" is not supported: crdplay emulates Kubernetes 1\.34 to 1\.37\); the playground answers as Kubernetes 1\.37 instead/);
  await page.waitForFunction(() => document.body.dataset.engine === '1.37');
  await evaluated(n);
  assert.match(await page.textContent('#status'), /^Engine ready in \d+ ms: Kubernetes v1\.37\.2$/);
  assert.equal(await page.evaluate(() => window.crdplayPlayground.evaluation.kubernetes.emulated), '1.37');
  assert.ok(await page.textContent('#pane-result'), 'the result pane is not blank');
  await workersAre(1);
  // The client says why too.
  const err = await page.evaluate(async () => {
    const C = window.crdplay.constructor;
    const m = await (await fetch('/manifest.json')).json();
    const c = new C({ workerURL: '/' + m['worker.js'], wasmURL: '/' + m['crdplay.wasm'], wasmExecURL: '/' + m['wasm_exec.js'], emulatedVersion: '1.99' });
    try {
      await c.ready;
      return null;
    } catch (e) {
      return e.error;
    } finally {
      c.terminate();
    }
  });
  assert.equal(err, 'crdplay: emulated version "1.99" is not supported: crdplay emulates Kubernetes 1.34 to 1.37');
});
