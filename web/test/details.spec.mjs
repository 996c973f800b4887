// Browser test of the page's smaller promises, each as the page states it: the footer says what leaves the tab
// and when (a short link POSTs the state), not that nothing does; the Kubernetes target's tooltip says what a
// target does (an emulated version answers as kube-apiserver's --emulated-version; older ones are a
// compatibility check), not that the engine always answers as the newest; a gallery notice's "(see SOURCE)"
// links the example's source, and says nothing of it when the gallery does not name one; and the update mode
// starts with the current objects as the old objects, so that its result is an update, not a create.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/details.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPlayground, pageHelpers } from './harness.mjs';

let pg;
let browser;
let page;

const { evaluated, runs, editorText } = pageHelpers(() => page);

before(async () => {
  pg = await openPlayground();
  ({ browser, page } = pg);
  await evaluated(0);
});

after(async () => {
  await pg?.close();
  assert.deepEqual(pg?.problems, []);
});

test('the footer says what leaves the tab, and when', async () => {
  const foot = await page.textContent('footer.foot');
  assert.doesNotMatch(foot, /Nothing leaves this tab/);
  // The Share button's short link sends the state to the server (permalink.ts storeShort: a POST).
  assert.match(foot, /short link[^.]*sends them to this server/);
});

test('the Kubernetes target\'s tooltip says what a target does', async () => {
  const title = await page.evaluate(() => document.getElementById('k8s-target').closest('label').title);
  assert.doesNotMatch(title, /the engine itself answers as the newest/);
  const emulated = await page.evaluate(() => window.crdplay.version().emulatedVersions);
  assert.match(title, new RegExp(`${emulated[0].replace('.', '\\.')} to ${emulated.at(-1).replace('.', '\\.')} \\("emulated"\\): the engine answers as that version, as kube-apiserver 1\\.37 does with --emulated-version`));
  assert.match(title, /Older versions \("compatibility check only"\): the warnings alone; the engine answers as 1\.37\./);
});

test('a gallery notice links the example\'s source; without one it names none', async () => {
  const other = await browser.context.newPage();
  try {
    // The gallery as a build whose examples name their source (tools/webbuild's examples asset with a source field).
    const source = 'https://github.com/argoproj/argo-cd/blob/37ee0097cf851bc2dd7665fc081bbce61a7e836e/manifests/crds/application-crd.yaml';
    await other.route('**/assets/examples.*.json', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      for (const ex of body.examples) if (ex.id === 'corpus/argo-cd/Application') ex.source = source;
      await route.fulfill({ response: res, json: body });
    });
    await other.goto(pg.server.url);
    await evaluated(0, other);
    await other.waitForSelector('#examples option[value="corpus/argo-cd/ApplicationSet"]', { state: 'attached', timeout: 30_000 });
    let n = await runs(other);
    await other.selectOption('#examples', 'corpus/argo-cd/Application');
    await evaluated(n, other);
    const notice = await other.evaluate(() => {
      const n = document.getElementById('notice');
      const a = n.querySelector('a');
      return { text: n.textContent, href: a?.href, link: a?.textContent };
    });
    assert.match(notice.text, /with a sample object \(see the source\)\./);
    assert.doesNotMatch(notice.text, /SOURCE/);
    assert.equal(notice.href, source);
    // The menu's tooltip names it too.
    assert.match(await other.getAttribute('#examples option[value="corpus/argo-cd/Application"]', 'title'), new RegExp(`\\(see ${source.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\)`));
    // An example whose source the gallery does not name.
    n = await runs(other);
    await other.selectOption('#examples', 'corpus/argo-cd/ApplicationSet');
    await evaluated(n, other);
    const plain = await other.textContent('#notice');
    assert.match(plain, /The ApplicationSet CRD as argoproj\/argo-cd ships it/);
    assert.doesNotMatch(plain, /SOURCE/);
  } finally {
    await other.close();
  }
});

test('the update mode starts with the objects as the old objects: its result is an update', async () => {
  assert.equal(await editorText('old'), '');
  const n = await runs();
  await page.selectOption('#mode', 'update');
  await evaluated(n);
  await page.evaluate(() => window.crdplayPlayground.idle);
  const result = await page.textContent('#pane-result section.object-result h3');
  assert.match(result, /CronTab my-new-cron-object: create old 201 → update 200/);
  assert.equal(await editorText('old'), await editorText('objects'));
  // An Old editor with text of its own keeps it.
  await page.selectOption('#mode', 'create');
  await page.evaluate(() => window.crdplayPlayground.editors.set('old', 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: my-new-cron-object\nspec:\n  image: old-image\n'));
  const m = await runs();
  await page.selectOption('#mode', 'update');
  await evaluated(m);
  assert.match(await editorText('old'), /image: old-image/);
});
