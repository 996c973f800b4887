// Browser test: the page's CRD upgrade mode. Choosing "CRD upgrade" shows the old-CRD editor; the
// Result pane then gives the API's answer to the new CRD sent over the old one, a table of the stored objects
// by served version whose cells are the GET, no-op update and /status verdicts, and the static findings, each
// linked to its line of the new CRD (or of the old one, for a removed version), where the editors mark it too.
// A permalink and an embed carry the mode and both CRDs; the gallery's upgrade examples load. Screenshots:
// test-results/upgrade-*.png.
//
// Needs what playground.spec.mjs needs. Run: node --test web/test/upgrade.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { launch, resultsDir, semverCRD, startServer, widget } from './harness.mjs';

let server;
let browser;
let page;

const runs = (p = page) => p.evaluate(() => Number(document.body.dataset.runs ?? 0));
const evaluated = (n, p = page) => p.waitForFunction((k) => Number(document.body.dataset.runs ?? 0) > k, n, { timeout: 90_000 });
/** Waits until no evaluation is running or due: edits and the mode's change each start one. */
async function settled(p = page) {
  await p.evaluate(() => window.crdplayPlayground.idle);
  await p.waitForTimeout(400);
  await p.evaluate(() => window.crdplayPlayground.idle);
}

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

// The CRD documentation's validation CronTab; maximum is the replicas' maximum.
const cronTabCRD = (maximum) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
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
            properties:
              cronSpec:
                type: string
              replicas:
                type: integer
                minimum: 1
                maximum: ${maximum}
`;
/** The line of "maximum:" in cronTabCRD. */
const MAXIMUM_LINE = 28;
const cronTab = (name, replicas) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
  cronSpec: "* * * * */5"
  replicas: ${replicas}
`;

// The versioning docs' CronTab in the versions given as [name, storage].
const versionedCRD = (versions) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab}
  versions:
${versions.map(([name, storage]) => `  - name: ${name}
    served: true
    storage: ${storage}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          host: {type: string}
          port: {type: string}
`).join('')}`;

/** Sets the three editors of the upgrade mode, chooses it, runs, and waits for the answer. */
async function upgrade({ oldCrd, crd, objects }) {
  const n = await runs();
  await page.evaluate(([o, c, s]) => {
    const p = window.crdplayPlayground;
    p.editors.set('oldcrd', o);
    p.editors.set('crd', c);
    p.editors.set('objects', s);
  }, [oldCrd, crd, objects]);
  if ((await page.inputValue('#mode')) !== 'upgrade') await page.selectOption('#mode', 'upgrade');
  await evaluated(n);
  await settled();
  await page.click('#tab-result');
}

/** The line of the main selection's head in an editor. */
const selectedLine = (id) => page.evaluate((i) => {
  const v = window.crdplayPlayground.editors.views[i];
  return v.state.doc.lineAt(v.state.selection.main.head).number;
}, id);

test('choosing CRD upgrade shows the old-CRD editor and names the editors for it', async () => {
  assert.equal(await page.isVisible('#oldcrd-frame'), false, 'the old-CRD editor shows outside the upgrade mode');
  const options = await page.$$eval('#mode option', (os) => os.map((o) => `${o.value}=${o.textContent}`));
  assert.ok(options.includes('upgrade=CRD upgrade (old CRD → new CRD)'), options.join(', '));
  await page.selectOption('#mode', 'upgrade');
  assert.equal(await page.isVisible('#oldcrd-frame'), true);
  assert.equal(await page.getAttribute('body', 'data-mode'), 'upgrade');
  assert.match(await page.textContent('#crd-frame .editor-title'), /^New CRD/);
  assert.match(await page.textContent('#objects-frame .editor-title'), /^Stored objects/);
  await page.selectOption('#mode', 'create');
  assert.equal(await page.isVisible('#oldcrd-frame'), false);
  assert.match(await page.textContent('#crd-frame .editor-title'), /^CustomResourceDefinition/);
  await settled();
});

test('a tightened maximum: the verdicts by version, the finding at the maximum of the new CRD', async () => {
  await upgrade({ oldCrd: cronTabCRD(10), crd: cronTabCRD(5), objects: cronTab('big', 8) + '---\n' + cronTab('small', 2) });
  const pane = page.locator('#pane-result');
  const crd = pane.locator('section.upgrade-crd');
  assert.match(await crd.locator('h3').textContent(), /^200 CustomResourceDefinition crontabs\.stable\.example\.com: update accepted$/);

  // The table: one row per stored object, one column per served version, each cell the verdicts.
  assert.deepEqual(await pane.locator('table.upgrade thead th').allTextContents(), ['object', 'v1']);
  const big = pane.locator('table.upgrade tr[data-object="default/big"]');
  const verdicts = await big.locator('td[data-version=v1] summary .verdict').allTextContents();
  // What the API answers: the stored 8 reads, and its no-op update passes, since validation ratcheting lets an
  // unchanged value through (the oracle's recording of upgrade-tightened-maximum says the same); sent again as
  // a new object (dryRun=All) it meets the new maximum without ratcheting: a 422.
  assert.deepEqual(verdicts.map((v) => v.replace(/\s+/g, ' ').trim()), ['GET 200', 'update 200', 'as new 422']);
  assert.equal(await big.locator('td[data-version=v1] .verdict[data-op=dryrun]').getAttribute('title'),
    'the stored object sent again as a new object (dryRun=All): the new schema without ratcheting');
  // small (2) is within the new maximum: created as new too.
  assert.deepEqual((await pane.locator('tr[data-object="default/small"] td[data-version=v1] summary .verdict').allTextContents())
    .map((v) => v.replace(/\s+/g, ' ').trim()), ['GET 200', 'update 200', 'as new 201']);
  // A stored object the new schema refuses as new: the upgrade breaks it, and the verdict line says so first.
  assert.equal(await pane.locator('> :first-child').getAttribute('class'), 'upgrade-verdict bad');
  assert.equal(await pane.locator('.upgrade-verdict').getAttribute('data-verdict'), 'breaks');
  // The object is named with the finding that bites it; the other is not.
  assert.deepEqual(await big.locator('ul.bites li').allTextContents(), ['maximum: spec.replicas']);
  assert.equal(await pane.locator('tr[data-object="default/small"] ul.bites').count(), 0);
  // The cell, with a refusal the upgrade causes, is open at the API's answers: the object as the GET read it.
  assert.equal(await big.locator('td[data-version=v1] details.verdicts').evaluate((d) => d.open && d.classList.contains('failed')), true);
  assert.match(await big.locator('.check[data-op=dryrun] .status-error').textContent(), /spec\.replicas: Invalid value: 8: spec\.replicas in body should be less than or equal to 5/);
  const read = await big.locator('.check[data-op=get] details pre').textContent();
  assert.equal(JSON.parse(read).spec.replicas, 8);

  // The finding, with the engine's evidence naming the object it bites and the API's message for it.
  const finding = pane.locator('li.finding[data-rule=maximum]');
  assert.equal(await finding.count(), 1, await pane.textContent());
  assert.match(await finding.textContent(), /maximum of spec\.replicas lowered from 10 to 5/);
  assert.match(await finding.locator('.evidence').textContent(),
    /^Evidence: 1 of 2 objects would be refused if created now \(spec\.replicas: Invalid value: 8: spec\.replicas in body should be less than or equal to 5\)/);
  assert.match(await finding.textContent(), new RegExp(`new CRD line ${MAXIMUM_LINE}(?!\\d)`));
  // In the new CRD's editor: an error at the maximum's line; the finding's link goes there.
  const marked = await page.evaluate(() => [...document.querySelectorAll('#crd-editor .cm-lintRange-error')].length);
  assert.ok(marked > 0, 'no error marked in the CRD editor');
  await finding.locator('a.goto').click();
  assert.equal(await selectedLine('crd'), MAXIMUM_LINE);
  const atLine = await page.evaluate((line) => {
    const v = window.crdplayPlayground.editors.views.crd;
    const from = v.state.doc.line(line).from;
    const to = v.state.doc.line(line).to;
    return [...document.querySelectorAll('#crd-editor .cm-lintRange-error')].some((el) => {
      const pos = v.posAtDOM(el);
      return pos >= from && pos <= to;
    });
  }, MAXIMUM_LINE);
  assert.ok(atLine, `the error is not marked on line ${MAXIMUM_LINE} of the new CRD`);
  await page.screenshot({ path: path.join(resultsDir, 'upgrade-tightened-maximum.png') });
});

test('a new version of the storage: GET, update and /status in every served version', async () => {
  const oldCrd = versionedCRD([['v1beta1', true]]);
  // Each version with the status subresource, so that /status is checked too.
  const withStatus = (t) => t.replaceAll('          port: {type: string}\n', '          port: {type: string}\n    subresources: {status: {}}\n');
  const obj = 'apiVersion: example.com/v1beta1\nkind: CronTab\nmetadata:\n  name: local\nhost: localhost\nport: "1234"\n';
  await upgrade({ oldCrd: withStatus(oldCrd), crd: withStatus(versionedCRD([['v1beta1', false], ['v1', true]])), objects: obj });
  const pane = page.locator('#pane-result');
  assert.deepEqual(await pane.locator('table.upgrade thead th').allTextContents(), ['object', 'v1beta1', 'v1']);
  for (const v of ['v1beta1', 'v1']) {
    const ops = await pane.locator(`tr[data-object="default/local"] td[data-version=${v}] summary .verdict`).allTextContents();
    assert.deepEqual(ops.map((s) => s.replace(/\s+/g, ' ').trim()), ['GET 200', 'update 200', 'status 200', 'as new 201'], v);
  }
});

test('a stored version removed: the CRD update\'s refusal, the finding in the old CRD', async () => {
  const obj = 'apiVersion: example.com/v1beta1\nkind: CronTab\nmetadata:\n  name: local\nhost: localhost\nport: "1234"\n';
  await upgrade({ oldCrd: versionedCRD([['v1beta1', true], ['v1', false]]), crd: versionedCRD([['v1', true]]), objects: obj });
  const crd = page.locator('#pane-result section.upgrade-crd');
  assert.match(await crd.locator('h3').textContent(), /^422 CustomResourceDefinition crontabs\.example\.com: update refused$/);
  assert.match(await crd.locator('.status-error').textContent(),
    /status\.storedVersions\[0\]: Invalid value: "v1beta1": missing from spec\.versions; v1beta1 was previously a storage version/);
  assert.match(await page.textContent('tr[data-object="default/local"]'), /not checked: the CRD update was refused/);
  const finding = page.locator('#pane-result li.finding[data-rule=storedVersionRemoval]');
  assert.equal(await finding.count(), 1);
  assert.match(await finding.textContent(), /old CRD line 10(?!\d)/);
  await finding.locator('a.goto').click();
  assert.equal(await selectedLine('oldcrd'), 10);
  assert.ok(await page.evaluate(() => document.querySelectorAll('#oldcrd-editor .cm-lintRange-error').length > 0), 'no error marked in the old-CRD editor');
  await page.screenshot({ path: path.join(resultsDir, 'upgrade-version-removed.png') });
});

// A release bundle, as an operator ships one: CRDs beside a Namespace. The widgets CRD of the old bundle is as
// `kubectl get crd -o yaml` exports it from a cluster where v1alpha1 was once the storage version: its
// status.storedVersions still name it.
const specSchema = (props) => `    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties: ${props}
`;
const bundleCRD = (plural, kind, versions, props) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: ${plural}, singular: ${kind.toLowerCase()}, kind: ${kind}}
  versions:
${versions.map(([name, storage]) => `  - name: ${name}
    served: true
    storage: ${storage}
${specSchema(props)}`).join('')}`;
const namespaceDoc = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n';
const oldBundle = [
  namespaceDoc,
  bundleCRD('widgets', 'Widget', [['v1alpha1', false], ['v1', true]], '{size: {type: integer}}') + 'status:\n  storedVersions:\n  - v1alpha1\n  - v1\n',
  bundleCRD('gadgets', 'Gadget', [['v1', true]], '{color: {type: string}}'),
].join('---\n');
const newBundle = [
  bundleCRD('widgets', 'Widget', [['v1', true]], '{size: {type: integer}}'),
  bundleCRD('gadgets', 'Gadget', [['v1', true]], '{color: {type: string}}'),
  bundleCRD('sprockets', 'Sprocket', [['v1', true]], '{teeth: {type: integer}}'),
].join('---\n');
const bundleObjects = [
  'apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata:\n  name: old-widget\nspec:\n  size: 1\n',
  'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: new-widget\nspec:\n  size: 2\n',
  'apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: blue\nspec:\n  color: blue\n',
].join('---\n');

test('bundles: a version dropped while stored is refused, the storage migration clears it, the Namespace is not checked', async () => {
  await upgrade({ oldCrd: oldBundle, crd: newBundle, objects: bundleObjects });
  const pane = page.locator('#pane-result');
  const clean = (xs) => xs.map((x) => x.replace(/\s+/g, ' ').trim());
  // The verdict first: the API refuses one of the new CRDs.
  const verdict = pane.locator('> .upgrade-verdict');
  assert.equal(await pane.locator('> :first-child').evaluate((el) => el.classList.contains('upgrade-verdict')), true);
  assert.equal(await verdict.getAttribute('data-verdict'), 'refused');
  assert.match(await verdict.textContent(), /refused/);
  assert.equal(await verdict.evaluate((el) => getComputedStyle(el).color), await page.evaluate(() => {
    const probe = document.createElement('span');
    probe.style.color = 'var(--bad)';
    document.body.append(probe);
    const c = getComputedStyle(probe).color;
    probe.remove();
    return c;
  }));

  // One section per CRD, in the new bundle's order: widgets refused, gadgets updated, sprockets created.
  const section = (name) => pane.locator(`section.upgrade-crd[data-crd="${name}"]`);
  assert.deepEqual(await pane.locator('section.upgrade-crd').evaluateAll((ss) => ss.map((s) => `${s.dataset.crd} ${s.dataset.change}`)),
    ['widgets.example.com updated', 'gadgets.example.com updated', 'sprockets.example.com added']);
  const widgets = section('widgets.example.com');
  assert.match(await widgets.locator('h3').textContent(), /^422 CustomResourceDefinition widgets\.example\.com: update refused$/);
  assert.match(await section('gadgets.example.com').locator('h3').textContent(), /^200 CustomResourceDefinition gadgets\.example\.com: update accepted$/);
  assert.match(await section('sprockets.example.com').locator('h3').textContent(), /^201 CustomResourceDefinition sprockets\.example\.com: added: created$/);
  // The stored versions the cluster held (written through /status from the exported CRD), and the API's
  // refusal: v1alpha1 may still be stored, so it cannot leave spec.versions.
  assert.equal(await widgets.locator('dd.stored-versions').textContent(), 'v1alpha1, v1');
  assert.match(await widgets.locator('.status-error').textContent(),
    /status\.storedVersions\[0\]: Invalid value: "v1alpha1": missing from spec\.versions; v1alpha1 was previously a storage version, and must remain in spec\.versions until a storage migration ensures no data remains persisted in v1alpha1 and removes v1alpha1 from status\.storedVersions/);
  assert.ok(await widgets.locator('p.next-step').count() >= 1, 'no next step under the refusal');
  assert.match(await widgets.locator('p.next-step').first().textContent(), /^Next step: \S/);
  assert.equal(await pane.locator('button.migrate').count(), 1, 'the migration is offered for widgets alone');
  assert.equal(await widgets.locator('button.migrate').textContent(), 'Run the storage migration');

  // The objects by CRD: the widgets are not checked (their CRD was not updated); the gadget is.
  assert.deepEqual(await pane.locator('.upgrade-group').evaluateAll((gs) => gs.map((g) => g.dataset.crd)), ['widgets.example.com', 'gadgets.example.com']);
  assert.deepEqual(clean(await pane.locator('.upgrade-group > h4').allTextContents()), ['widgets.example.com (2)', 'gadgets.example.com (1)']);
  const widgetRows = pane.locator('.upgrade-group[data-crd="widgets.example.com"] tbody tr');
  assert.deepEqual(clean(await widgetRows.locator('td').allTextContents()), ['not checked: the CRD update was refused', 'not checked: the CRD update was refused']);
  const gadgets = pane.locator('.upgrade-group[data-crd="gadgets.example.com"]');
  assert.deepEqual(await gadgets.locator('thead th').allTextContents(), ['object', 'v1']);
  assert.deepEqual(clean(await gadgets.locator('tr[data-object="default/blue"] td[data-version=v1] summary .verdict').allTextContents()),
    ['GET 200', 'update 200', 'as new 201']);

  // The Namespace of the old bundle: listed once, as not checked, linked to its line.
  const others = pane.locator('section.not-checked li');
  assert.equal(await others.count(), 1, await pane.textContent());
  assert.equal(await others.getAttribute('data-kind'), 'Namespace');
  assert.equal(await others.getAttribute('data-name'), 'shop');
  assert.match(await others.textContent(), /^Namespace shop \(v1\): not checked, old CRD line 1$/);
  await page.screenshot({ path: path.join(resultsDir, 'upgrade-bundle-refused.png'), fullPage: true });

  // The storage migration, as the Kubernetes docs describe it: the stored objects rewritten in v1,
  // status.storedVersions set to [v1], and the same update sent again, which the API now accepts.
  const n = await runs();
  await widgets.locator('button.migrate').click();
  await evaluated(n);
  await settled();
  const migration = section('widgets.example.com').locator('.migration');
  assert.equal(await migration.count(), 1, await pane.textContent());
  assert.equal(await migration.locator('h4').textContent(), 'Storage migration to v1');
  assert.equal(await migration.locator('li.rewritten').textContent(), 'objects rewritten in v1: 2');
  assert.equal(await migration.locator('li.failed').count(), 0);
  assert.match(await migration.locator('li.status-put').textContent(), /^200 PUT \/status with status\.storedVersions \[v1\]$/);
  assert.equal(clean([await migration.locator('.retry').textContent()])[0], '200 update accepted after the migration');
  assert.equal(await pane.locator('button.migrate').count(), 0);
  // The widgets are now checked against the new CRD: read, updated and created as new in v1.
  const widgetGroup = pane.locator('.upgrade-group[data-crd="widgets.example.com"]');
  assert.deepEqual(await widgetGroup.locator('thead th').allTextContents(), ['object', 'v1']);
  for (const name of ['old-widget', 'new-widget']) {
    assert.deepEqual(clean(await widgetGroup.locator(`tr[data-object="default/${name}"] td[data-version=v1] summary .verdict`).allTextContents()),
      ['GET 200', 'update 200', 'as new 201'], name);
  }
  await page.screenshot({ path: path.join(resultsDir, 'upgrade-bundle-migrated.png'), fullPage: true });

  // The migration was that evaluation's alone: the next edit evaluates without it, and the refusal is back.
  const m = await runs();
  await page.evaluate(() => {
    const p = window.crdplayPlayground;
    p.editors.set('objects', p.editors.text('objects') + '\n');
  });
  await evaluated(m);
  await settled();
  assert.equal(await pane.locator('.migration').count(), 0);
  assert.equal(await pane.locator('button.migrate').count(), 1);
  assert.match(await section('widgets.example.com').locator('h3').textContent(), /^422 /);
});

test('a refusal the old CRD made too: the cell says it was refused before the upgrade, not that the upgrade broke it', async () => {
  // The new CRD adds a field and keeps the maximum: a stored 12 (seeded, as under an earlier CRD) is refused as
  // new by both, with the same cause.
  const withImage = cronTabCRD(10).replace('              cronSpec:\n', '              image:\n                type: string\n              cronSpec:\n');
  await upgrade({ oldCrd: cronTabCRD(10), crd: withImage, objects: cronTab('over', 12) });
  const row = page.locator('#pane-result tr[data-object="default/over"]');
  assert.match(await row.locator('th').textContent(), /seeded/);
  const cell = row.locator('td[data-version=v1]');
  assert.deepEqual((await cell.locator('summary .verdict').allTextContents()).map((v) => v.replace(/\s+/g, ' ').trim()), ['GET 200', 'update 200', 'as new 422']);
  assert.equal(await cell.locator('.verdict[data-op=dryrun]').evaluate((el) => el.classList.contains('pre-existing')), true);
  assert.equal(await cell.locator('details.verdicts').getAttribute('class'), 'verdicts pre-existing');
  assert.match(await cell.locator('details.verdicts > summary').textContent(), /already refused before the upgrade/);
  assert.match(await cell.locator('.check[data-op=dryrun] .status-error').textContent(), /spec\.replicas: Invalid value: 12: spec\.replicas in body should be less than or equal to 10/);
});

test('an old CRD that is empty or refused: the pane says why nothing was sent, at its line', async () => {
  await upgrade({ oldCrd: '', crd: cronTabCRD(5), objects: cronTab('big', 8) });
  const crd = page.locator('#pane-result section.upgrade-crd');
  const problems = page.locator('#pane-result section.upgrade-problems');
  // No old CRD: the cluster has none, so the new one is created, as kubectl apply would create it.
  assert.match(await crd.locator('h3').textContent(), /^201 CustomResourceDefinition crontabs\.stable\.example\.com: added: created$/);
  assert.match(await problems.textContent(), /old CRD line 1: the upgrade check needs the old CRDs?: this text is empty/);

  // An old CRD the API refuses (no versions): its refusal, at its line of the old-CRD editor.
  await upgrade({ oldCrd: cronTabCRD(10).replace(/  versions:[\s\S]*/, '  versions: []\n'), crd: cronTabCRD(5), objects: cronTab('big', 8) });
  assert.match(await crd.locator('h3').textContent(), /not sent$/);
  const links = await problems.locator('ul.not-sent li').allTextContents();
  // Line 12 is "versions: []".
  assert.ok(links.includes('old CRD line 12: spec.versions: Invalid value: []: must have exactly one version marked as storage version'), links.join('\n'));
});

test('a permalink carries the mode and both CRDs; an embed of it shows the upgrade', async () => {
  await upgrade({ oldCrd: cronTabCRD(10), crd: cronTabCRD(5), objects: cronTab('big', 8) });
  const link = await page.evaluate(() => window.crdplayPlayground.permalink());
  const other = await browser.context.newPage();
  try {
    await other.goto(link);
    await evaluated(0, other);
    await settled(other);
    const got = await other.evaluate(() => {
      const p = window.crdplayPlayground;
      return { mode: p.mode, oldCrd: p.editors.text('oldcrd'), crd: p.editors.text('crd'), objects: p.editors.text('objects') };
    });
    assert.deepEqual(got, { mode: 'upgrade', oldCrd: cronTabCRD(10), crd: cronTabCRD(5), objects: cronTab('big', 8) });
    assert.equal(await other.isVisible('#oldcrd-frame'), true);
    assert.match(await other.textContent('#pane-result section.upgrade-crd h3'), /update accepted/);

    // The embed, from the same fragment, with the mode's menu shown.
    const embed = new URL(`embed/?mode=upgrade${new URL(link).hash}`, server.url).href;
    await other.goto(embed);
    await evaluated(0, other);
    await settled(other);
    assert.equal(await other.evaluate(() => window.crdplayPlayground.mode), 'upgrade');
    assert.equal(await other.evaluate(() => window.crdplayPlayground.editors.text('oldcrd')), cronTabCRD(10));
    assert.equal(await other.locator('#pane-result li.finding[data-rule=maximum]').count(), 1);
  } finally {
    await other.close();
  }
});

test('a link made before the upgrade mode opens as it did: no old CRD, its own mode', async () => {
  // A v1 link of an older page: its State has no oldCrd.
  const frag = await page.evaluate(async () => {
    const bytes = new TextEncoder().encode(JSON.stringify({ crd: 'a: 1\n', objects: '', old: '', mode: 'update', webhook: '', tab: 'result' }));
    const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate-raw'));
    const packed = new Uint8Array(await new Response(stream).arrayBuffer());
    let bin = '';
    for (const b of packed) bin += String.fromCharCode(b);
    return 'v1.' + btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  });
  const other = await browser.context.newPage();
  try {
    await other.goto(`${server.url}#${frag}`);
    await other.waitForFunction(() => window.crdplayPlayground?.mode === 'update', null, { timeout: 30_000 });
    assert.equal(await other.evaluate(() => window.crdplayPlayground.editors.text('oldcrd')), '');
    assert.equal(await other.isVisible('#oldcrd-frame'), false);
  } finally {
    await other.close();
  }
});

test('a conversion webhook that fails for stored objects: the failed read opens to the API\'s answer', async () => {
  // The new CRD adds v1, converted by a webhook (the page's JavaScript) that refuses objects without a port.
  const webhookCRD = versionedCRD([['v1beta1', true], ['v1', false]]).replace('  versions:\n',
    '  conversion:\n    strategy: Webhook\n    webhook:\n      conversionReviewVersions: [v1]\n      clientConfig: {url: "https://convert.example.com/crontabs"}\n  versions:\n');
  const code = `function convert(review) {
  const { uid, desiredAPIVersion, objects } = review.request;
  const bad = objects.find((o) => !o.port);
  const result = bad ? { status: 'Failure', message: 'no port in ' + bad.metadata.name } : { status: 'Success' };
  return { apiVersion: review.apiVersion, kind: 'ConversionReview',
    response: { uid, result, convertedObjects: bad ? [] : objects.map((o) => ({ ...o, apiVersion: desiredAPIVersion })) } };
}`;
  await page.click('#tab-versions');
  const defaultCode = await page.inputValue('#webhook-code');
  await page.fill('#webhook-code', code);
  await page.click('text=Use this webhook and run');
  await settled();
  const objects = ['apiVersion: example.com/v1beta1\nkind: CronTab\nmetadata:\n  name: with-port\nhost: a\nport: "1"\n',
    'apiVersion: example.com/v1beta1\nkind: CronTab\nmetadata:\n  name: no-port\nhost: b\n'].join('---\n');
  await upgrade({ oldCrd: versionedCRD([['v1beta1', true]]), crd: webhookCRD, objects });
  const pane = page.locator('#pane-result');
  const verdicts = async (name, v) => (await pane.locator(`tr[data-object="default/${name}"] td[data-version=${v}] details.verdicts > summary .verdict`).allTextContents())
    .map((s) => s.replace(/\s+/g, ' ').trim());
  assert.deepEqual(await verdicts('with-port', 'v1'), ['GET 200', 'update 200', 'as new 201']);
  assert.deepEqual(await verdicts('no-port', 'v1beta1'), ['GET 200', 'update 200', 'as new 201']);
  // The read in v1 fails, so nothing is written there; its cell is open at the API's Status.
  assert.deepEqual(await verdicts('no-port', 'v1'), ['GET 500']);
  const cell = pane.locator('tr[data-object="default/no-port"] td[data-version=v1] details.verdicts');
  assert.equal(await cell.evaluate((d) => d.open && d.classList.contains('failed')), true);
  assert.equal(await cell.locator('.check[data-op=get] details summary').textContent(), 'the API\'s whole answer');
  assert.match(await cell.locator('.check[data-op=get] .status-error').textContent(), /^InternalError: Internal error occurred: StorageError: corrupt object, .*: conversion webhook for example\.com\/v1beta1, Kind=CronTab failed: no port in no-port/);
  await page.screenshot({ path: path.join(resultsDir, 'upgrade-webhook-failure.png') });
  // The page's default webhook again, for the tests after.
  await page.click('#tab-versions');
  await page.fill('#webhook-code', defaultCode);
  await page.click('text=Use this webhook and run');
  await settled();
  await page.click('#tab-result');
});

test('the gallery\'s upgrade examples load into the three editors', async () => {
  await page.focus('#examples');
  await page.waitForSelector('#examples optgroup[label="CRD upgrades"] option', { state: 'attached', timeout: 30_000 });
  const ids = await page.$$eval('#examples optgroup[label="CRD upgrades"] option', (os) => os.map((o) => o.value));
  assert.ok(ids.length >= 5, ids.join(', '));
  assert.ok(ids.includes('corpus/cert-manager/Certificate-upgrade'), ids.join(', '));
  await page.selectOption('#mode', 'create');
  await settled();
  const n = await runs();
  await page.selectOption('#examples', 'examples/upgrade-tightened-maximum');
  await evaluated(n);
  await settled();
  assert.equal(await page.inputValue('#mode'), 'upgrade');
  const texts = await page.evaluate(() => ({ old: window.crdplayPlayground.editors.text('oldcrd'), crd: window.crdplayPlayground.editors.text('crd') }));
  assert.match(texts.old, /maximum: 10/);
  assert.match(texts.crd, /maximum: 5/);
  const pane = page.locator('#pane-result');
  assert.match(await pane.locator('section.upgrade-crd h3').textContent(), /update accepted/);
  assert.equal(await pane.locator('table.upgrade tbody tr').count(), 2);
  assert.equal(await pane.locator('li.finding[data-rule=maximum]').count(), 1);

  // The corpus CRD's edit: a CEL rule the stored 3072-bit key breaks; ratcheting lets its no-op update through
  // with the rule's message as a warning, but the same object sent as new meets the rule: a 422.
  const m = await runs();
  await page.selectOption('#examples', 'corpus/cert-manager/Certificate-upgrade');
  await evaluated(m);
  await settled();
  const legacy = pane.locator('tr[data-object="sandbox/legacy-com"] td[data-version=v1]');
  assert.deepEqual((await legacy.locator('summary .verdict').allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim()), ['GET 200', 'update 200', 'status 200', 'as new 422']);
  assert.match(await legacy.textContent(), /Warning: spec\.privateKey: Invalid value: an RSA key's size is 2048, 4096 or 8192/);
  await page.screenshot({ path: path.join(resultsDir, 'upgrade-cert-manager.png') });
});

test('the upgrade mode fits a phone: 320 and 390 px, the table scrolling inside its pane', async () => {
  // The cert-manager example from the test before: long field paths, three verdicts a cell, warnings.
  assert.equal(await page.inputValue('#mode'), 'upgrade');
  try {
    for (const width of [320, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await page.waitForTimeout(300);
      const over = await page.evaluate(() => {
        const d = document.documentElement;
        const wide = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > d.clientWidth + 1
          && !el.closest('.upgrade-scroll, .cm-scroller') && el.getClientRects().length);
        return { scroll: d.scrollWidth, client: d.clientWidth, wide: wide.slice(0, 5).map((el) => `${el.tagName}.${el.className}`) };
      });
      assert.ok(over.scroll <= over.client, `${width} px: the page scrolls sideways (${over.scroll} > ${over.client}): ${over.wide.join(', ')}`);
      assert.deepEqual(over.wide, [], `${width} px: past the right edge`);
      assert.equal(await page.isVisible('#oldcrd-frame'), true);
      await page.locator('#pane-result li.finding').first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(resultsDir, `upgrade-${width}.png`), fullPage: true });
    }
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
});

test('a bundle in the CRD editor of the other modes: its CRD checked, the Namespace listed once as not checked, its admission policy as not applied', async () => {
  const n = await runs();
  const policy = 'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: widget-limits\nspec:\n  validations:\n  - expression: "true"\n';
  await page.evaluate(([crd, objects]) => {
    const p = window.crdplayPlayground;
    p.editors.set('crd', crd);
    p.editors.set('objects', objects);
  }, [`${namespaceDoc}---\n${semverCRD}---\n${policy}`, widget]);
  await page.selectOption('#mode', 'create');
  await evaluated(n);
  await settled();
  await page.click('#tab-result');
  const pane = page.locator('#pane-result');
  assert.match(await pane.locator('section.crd-result[data-crd="widgets.example.com"] h3').textContent(), /^201 CustomResourceDefinition widgets\.example\.com: accepted$/);
  assert.doesNotMatch(await pane.textContent(), /No CustomResourceDefinition/);
  const others = pane.locator('section.not-checked li');
  assert.equal(await others.count(), 2);
  assert.match(await others.first().textContent(), /^Namespace shop \(v1\): not checked, CRD line 1$/);
  // The policy: a warning, since a cluster holding it would run it on the writes answered here.
  const policyLine = `${namespaceDoc}---\n${semverCRD}---\n`.split('\n').length;
  assert.equal(await others.nth(1).textContent(), `ValidatingAdmissionPolicy widget-limits (admissionregistration.k8s.io/v1): not applied (a cluster holding it would run it on these writes), CRD line ${policyLine}`);
  assert.match(await pane.locator('section.not-checked p').textContent(), /are not applied: the answers here are those of a cluster without them/);
  await others.first().locator('a.goto').click();
  assert.equal(await selectedLine('crd'), 1);
  assert.match(await pane.locator('section.object-result').first().locator('h3').textContent(), /^201 Widget w: create 201$/);
});
