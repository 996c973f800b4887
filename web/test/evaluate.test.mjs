// Tests of crdplay.evaluate (wasm/main_js.go over crdplay/playground) under node: the playground's results as
// the worker gets them, JSON in and a Promise of JSON out. Needs the built site, as bridge.test.mjs: go run
// ./tools/webbuild -test (CRDPLAY_WEB_DIR overrides build/web). Run: node --test web/test/evaluate.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, startEngine } from './harness.mjs';

const oracle = (p) => readFileSync(path.join(root, 'testdata/oracle', p), 'utf8');
const crdYAML = oracle('basic-crontab/crd.yaml');
const webhookCRD = oracle('webhook-conversion-unreachable/crd.yaml');

const { crdplay, exited } = await startEngine();
assert.equal(typeof crdplay.evaluate, 'function', 'the bridge has no evaluate');

/**
 * @param {import('../static/crdplay.d.ts').CrdplayEvaluateInput} input
 * @returns {Promise<import('../static/crdplay.d.ts').CrdplayEvaluateResult>}
 */
async function evaluate(input) {
  const out = await crdplay.evaluate(JSON.stringify(input));
  assert.equal(typeof out, 'string', 'evaluate resolves with JSON text');
  return JSON.parse(out);
}

const object = (name, spec) =>
  `apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: ${name}\nspec:\n${Object.entries(spec).map(([k, v]) => `  ${k}: ${v}`).join('\n')}\n`;

test('the CronTab: CRD accepted, object stored, pruned field marked and placed, table, versions', async () => {
  const objects = object('first', { cronSpec: '"* * * * */5"', replicas: 3, bogus: 1 }) + '---\n' + object('second', { replicas: '"three"' });
  const res = await evaluate({ crds: crdYAML, objects, trace: true });

  assert.equal(res.crdCached, false);
  assert.equal(res.crds.length, 1);
  const crd = res.crds[0];
  assert.equal(crd.status, 201);
  assert.equal(crd.accepted, true);
  assert.equal(crd.established, true);
  assert.deepEqual(crd.served, ['v1']);
  assert.equal(crd.acceptedNames?.kind, 'CronTab');
  assert.deepEqual(crd.acceptedNames?.shortNames, ['ct']);
  const schema = crd.versions[0].schema;
  assert.ok(schema, 'the explain tree');
  const spec = schema.properties?.find((p) => p.name === 'spec');
  assert.deepEqual(spec?.properties?.map((p) => [p.name, p.explain]), [['cronSpec', 'string'], ['image', 'string'], ['replicas', 'integer']]);
  assert.equal(spec?.span?.line, 21, 'schema nodes point into the CRD text');

  const [first, second] = res.objects;
  assert.equal(first.status, 201);
  assert.equal(first.accepted, true);
  assert.deepEqual(first.warnings, ['unknown field "spec.bogus"']);
  assert.equal(first.stored.spec.replicas, 3);
  assert.equal(first.stored.spec.bogus, undefined);
  assert.match(first.storedYAML ?? '', /^apiVersion: stable\.example\.com\/v1\n/);
  const pruned = first.marks.find((m) => m.kind === 'pruned');
  assert.deepEqual(pruned, { kind: 'pruned', path: 'spec.bogus', value: 1, input: { line: 8, column: 3, endLine: 8, endColumn: 11 } });
  assert.deepEqual(first.versions.map((v) => [v.version, v.status]), [['v1', 200]]);

  // The 422, as the API sent it, and its cause at the field's line in the second document.
  assert.equal(second.status, 422);
  assert.equal(second.response.kind, 'Status');
  assert.equal(second.response.details.causes[0].field, 'spec.replicas');
  const diag = res.diagnostics.find((d) => d.source === 'objects' && d.document === 1 && d.severity === 'error');
  assert.ok(diag, JSON.stringify(res.diagnostics));
  assert.equal(diag.field, 'spec.replicas');
  assert.equal(diag.type, 'FieldValueTypeInvalid');
  assert.deepEqual([diag.line, diag.column, diag.endLine, diag.endColumn, diag.exact], [15, 3, 15, 20, true]);
  const warn = res.diagnostics.find((d) => d.severity === 'warning');
  assert.deepEqual([warn?.field, warn?.line, warn?.type], ['spec.bogus', 8, 'Warning']);

  assert.equal(res.tables.length, 1);
  assert.deepEqual(res.tables[0].columns.map((c) => [c.name, c.wide]), [['Name', false], ['Age', false]]);
  assert.deepEqual(res.tables[0].rows.map((r) => r.name), ['first']);
  assert.ok(res.exchanges && res.exchanges.some((e) => e.method === 'POST' && e.status === 422));
  assert.equal(res.celLimits.perExpression, 10000000);
});

test('the engine\'s Kubernetes range is the one the page offers before the engine has answered', async () => {
  const res = await evaluate({ crds: crdYAML, objects: '' });
  const m = readFileSync(path.join(root, 'web/src/versions.ts'), 'utf8').match(/DEFAULT_RANGE: CrdplayKubernetesRange = \{ oldest: (\d+), newest: (\d+), version: '([^']+)', emulated: '([^']+)' \}/);
  assert.ok(m, 'DEFAULT_RANGE in web/src/versions.ts');
  assert.deepEqual(res.kubernetes, { oldest: Number(m[1]), newest: Number(m[2]), version: m[3], emulated: m[4] }, 'web/src/versions.ts DEFAULT_RANGE');
});

test('the CRD stays installed while only the objects change', async () => {
  const first = await evaluate({ crds: crdYAML, objects: object('a', { replicas: 1 }) });
  for (let i = 0; i < 3; i++) {
    // No crds: the previous text. The same name every time: nothing is left over from the last evaluation.
    const res = await evaluate({ objects: object('a', { replicas: i }), knownCRDRevision: first.crdRevision });
    assert.equal(res.crdCached, true);
    assert.equal(res.schemasOmitted, true);
    assert.equal(res.crds[0].versions[0].schema, undefined);
    assert.equal(res.objects[0].status, 201, JSON.stringify(res.objects[0].response));
    assert.equal(res.objects[0].stored.spec.replicas, i);
  }
});

test('update: transition rules and ratcheting come back as the API answers them', async () => {
  const crd = oracle('validation-ratcheting/02-update-crd-tighten.yaml');
  const old = oracle('validation-ratcheting/01-create.yaml');
  const changed = old.replace('name: old-object', 'name: old-object\n  labels: {touched: "yes"}');
  const res = await evaluate({ crds: crd, oldObjects: old, objects: changed, mode: 'update' });
  assert.equal(res.oldObjects[0].seeded, true, 'the old object, invalid under this CRD, is stored as an earlier CRD would have');
  const o = res.objects[0];
  assert.equal(o.operation, 'update');
  assert.equal(o.status, 200, JSON.stringify(o.response));
  assert.deepEqual(o.warnings, ['spec: Invalid value: image must come from registry/']);
  assert.ok(res.diagnostics.some((d) => d.source === 'oldObjects' && d.type === 'Seeded' && d.severity === 'info'));
});

test('delete with a finalizer, scale, status', async () => {
  const fin = oracle('finalizers/crd.yaml');
  let res = await evaluate({ crds: fin, objects: oracle('finalizers/01-create.yaml'), mode: 'delete' });
  assert.equal(res.objects[0].status, 200);
  assert.ok(res.objects[0].stored.metadata.deletionTimestamp);
  assert.equal(res.objects[0].deleted ?? false, false);

  const scale = oracle('scale-subresource/crd.yaml');
  res = await evaluate({ crds: scale, objects: oracle('scale-subresource/01-create.yaml'), mode: 'scale', replicas: 5 });
  assert.equal(res.objects[0].status, 200, JSON.stringify(res.objects[0].response));
  assert.equal(res.objects[0].response.kind, 'Scale');
  assert.equal(res.objects[0].stored.spec.replicas, 5);

  const status = oracle('status-subresource/crd.yaml');
  res = await evaluate({ crds: status, oldObjects: oracle('status-subresource/01-create-with-status.yaml'), objects: oracle('status-subresource/02-status-update.yaml'), mode: 'status' });
  assert.equal(res.objects[0].operation, 'status');
  assert.equal(res.objects[0].status, 200);
  assert.equal(res.objects[0].stored.status.replicas, 2);
  assert.ok(res.objects[0].marks.some((m) => m.kind === 'ignored' && m.path === 'spec.replicas'));
});

test('webhook conversion goes through the page function', async () => {
  const stored = 'apiVersion: example.com/v1beta1\nkind: CronTab\nmetadata:\n  name: web\nhostPort: "localhost:7070"\n';
  let res = await evaluate({ crds: webhookCRD, objects: stored });
  let v1 = res.objects[0].versions.find((v) => v.version === 'v1');
  assert.equal(v1?.status, 500);
  assert.match(v1?.error ?? '', /the page has set no conversion webhook/);

  crdplay.setWebhook(async (reviewJSON) => {
    const review = JSON.parse(reviewJSON);
    const convertedObjects = review.request.objects.map((o) => {
      const out = { ...o, apiVersion: review.request.desiredAPIVersion };
      if (out.apiVersion === 'example.com/v1') {
        const [host, port] = o.hostPort.split(':');
        delete out.hostPort;
        Object.assign(out, { host, port });
      } else {
        out.hostPort = `${o.host}:${o.port}`;
        delete out.host;
        delete out.port;
      }
      return out;
    });
    return JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: review.request.uid, convertedObjects, result: { status: 'Success' } } });
  });
  try {
    res = await evaluate({ objects: stored });
    v1 = res.objects[0].versions.find((v) => v.version === 'v1');
    assert.equal(v1?.status, 200, JSON.stringify(v1));
    assert.equal(v1?.object.host, 'localhost');
    assert.match(v1?.yaml ?? '', /port: "7070"/);
  } finally {
    crdplay.setWebhook(null);
  }
});

test('bad texts are diagnostics; malformed calls reject; the bridge goes on', async () => {
  const res = await evaluate({ crds: 'kind: [', objects: 'a: b: c\n' });
  assert.ok(res.diagnostics.some((d) => d.source === 'crds' && d.type === 'YAMLSyntax' && d.line === 1));
  assert.ok(res.diagnostics.some((d) => d.source === 'objects' && d.type === 'YAMLSyntax' && d.line === 1));

  for (const [arg, want] of [
    [undefined, /want a JSON string/],
    [{ objects: '' }, /want a JSON string .* got object/],
    ['{', /crdplay\.evaluate: input: /],
    [JSON.stringify({ objects: '', mode: 'replace' }), /unknown mode "replace"/],
  ]) {
    await assert.rejects(crdplay.evaluate(/** @type {any} */ (arg)), (err) => {
      assert.match(err.error, want);
      return true;
    });
  }
  const again = await evaluate({ crds: crdYAML, objects: object('after', { replicas: 1 }) });
  assert.equal(again.objects[0].status, 201);
  // The playground's engine is its own: the request() store saw none of it.
  const r = await crdplay.request({ path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions' });
  assert.deepEqual(JSON.parse(r.body).items, []);
  assert.equal(exited(), false);
});

test('cel: the scratchpad on the CRDs the last evaluation installed; a malformed input rejects', async () => {
  const celCRD = readFileSync(path.join(root, 'testdata/oracle/cel-basic/crd.yaml'), 'utf8');
  await evaluate({ crds: celCRD, objects: '' });
  const cel = async (input) => JSON.parse(await crdplay.cel(JSON.stringify(input)));
  const object = 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: a}\nspec: {minReplicas: 0, replicas: 20, maxReplicas: 10}\n';
  const res = await cel({ expression: 'self.replicas <= self.maxReplicas', self: 'spec', object });
  assert.equal(res.crd, 'crontabs.stable.example.com');
  assert.deepEqual(res.selves, ['', 'spec']);
  assert.equal(res.scratch.type, 'bool');
  assert.deepEqual(res.scratch.values.map((v) => [v.path, v.value]), [['spec', false]]);
  assert.ok(res.scratch.runtimeCost > 0 && res.scratch.maxCost > 0);
  const bad = await cel({ expression: 'self.nope', object });
  assert.deepEqual(bad.scratch.errors.map((e) => [e.line, e.column]), [[1, 5]]);
  await assert.rejects(crdplay.cel('{'), (e) => /^crdplay\.cel: input: /.test(e.error));
  await assert.rejects(crdplay.cel({}), (e) => /^crdplay\.cel: want a JSON string/.test(e.error));
});
