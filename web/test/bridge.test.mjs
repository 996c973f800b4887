// Tests of the wasm bridge (wasm/main_js.go) under node: the engine's globalThis.crdplay as the worker sees it,
// without a browser. Needs the built site: go run ./tools/webbuild -test (CRDPLAY_WEB_DIR overrides
// build/web). Run: node --test web/test/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, startEngine } from './harness.mjs';

const crdYAML = readFileSync(path.join(root, 'testdata/oracle/basic-crontab/crd.yaml'), 'utf8');
const webhookCRD = readFileSync(path.join(root, 'testdata/oracle/webhook-conversion-unreachable/crd.yaml'), 'utf8');

const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const crontabs = '/apis/stable.example.com/v1/namespaces/default/crontabs';

const { crdplay, exited } = await startEngine();

/** Sends a request with a JSON or YAML body. */
function send(method, p, body, contentType = 'application/json') {
  const req = { method, path: p };
  if (body !== undefined) {
    req.body = typeof body === 'string' ? body : JSON.stringify(body);
    req.headers = { 'Content-Type': contentType };
  }
  return crdplay.request(req);
}

const crontab = (name, spec) => ({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name }, spec });

test('version', () => {
  const v = crdplay.version();
  assert.equal(v.kubernetes, 'v1.37.2');
  assert.match(v.go, /^go1\./);
  assert.equal(typeof v.revision, 'string');
  assert.equal(typeof v.modified, 'boolean');
});

test('CronTab: CRD, create, get, list, 422, warnings', async () => {
  let r = await send('POST', crds, crdYAML, 'application/yaml');
  assert.equal(r.status, 201, r.body);
  assert.equal(r.headers['Content-Type'], 'application/json');
  const crd = JSON.parse(r.body);
  assert.equal(crd.metadata.name, 'crontabs.stable.example.com');

  r = await send('POST', crontabs, crontab('my-new-cron-object', { cronSpec: '* * * * */5', image: 'my-awesome-cron-image' }));
  assert.equal(r.status, 201, r.body);
  const created = JSON.parse(r.body);

  r = await crdplay.request({ path: `${crontabs}/my-new-cron-object` }); // method defaults to GET
  assert.equal(r.status, 200, r.body);
  const got = JSON.parse(r.body);
  assert.deepEqual(got.spec, { cronSpec: '* * * * */5', image: 'my-awesome-cron-image' });
  assert.equal(got.metadata.uid, created.metadata.uid);
  assert.equal(got.metadata.resourceVersion, created.metadata.resourceVersion);

  r = await crdplay.request({ method: 'get', path: crontabs, headers: { Accept: 'application/json' } });
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.body).items.map((o) => o.metadata.name), ['my-new-cron-object']);

  // replicas is an integer in the schema: a string is a 422 Status with the field's cause.
  r = await send('POST', crontabs, crontab('bad', { replicas: 'three' }));
  assert.equal(r.status, 422, r.body);
  const st = JSON.parse(r.body);
  assert.equal(st.kind, 'Status');
  assert.equal(st.reason, 'Invalid');
  assert.equal(st.code, 422);
  assert.equal(st.details.causes[0].field, 'spec.replicas');

  // Two unknown fields, two Warning headers: an array, in order.
  r = await send('POST', `${crontabs}?fieldValidation=Warn`, crontab('warned', { a: 1, b: 2 }));
  assert.equal(r.status, 201, r.body);
  assert.ok(Array.isArray(r.headers.Warning), JSON.stringify(r.headers));
  assert.deepEqual(r.headers.Warning, ['299 - "unknown field \\"spec.a\\""', '299 - "unknown field \\"spec.b\\""']);

  r = await crdplay.request({ path: '/apis/stable.example.com/v1/namespaces/default/crontabs/nope' });
  assert.equal(r.status, 404);
  assert.equal(JSON.parse(r.body).reason, 'NotFound');
});

test('malformed requests reject with {error}, and the bridge goes on serving', async () => {
  const cases = [
    [undefined, /want an object/],
    [42, /want an object .* got number/],
    [null, /want an object .* got null/],
    [{}, /path: want a string/],
    [{ path: 5 }, /path: want a string .* got number/],
    [{ path: 'apis' }, /absolute path/],
    [{ path: '/apis', method: 1 }, /method: want a string/],
    [{ path: '/apis', body: { a: 1 } }, /body: want a string, got object/],
    [{ path: '/apis', headers: 'x' }, /headers: want an object/],
    [{ path: '/apis', headers: { Accept: {} } }, /headers\["Accept"\]: want a string or an array/],
    [{ path: '/apis', headers: { Accept: ['a', 2] } }, /headers\["Accept"\]\[1\]: want a string/],
    [{ path: '/apis', method: 'BAD METHOD' }, /invalid method/],
  ];
  for (const [req, want] of cases) {
    await assert.rejects(crdplay.request(req), (err) => {
      assert.equal(typeof err.error, 'string', JSON.stringify(err));
      assert.match(err.error, /^crdplay\.request: /);
      assert.match(err.error, want);
      return true;
    }, JSON.stringify(req));
  }
  assert.equal(crdplay.request.length, 0); // a Go function: no declared parameters, any arguments
  const r = await crdplay.request({ path: '/version' });
  assert.equal(r.status, 200);
  assert.equal(JSON.parse(r.body).gitVersion, 'v1.37.2');
  assert.equal(exited(), false);
});

test('watch: refused without timeoutSeconds, collected with it', async () => {
  let r = await crdplay.request({ path: `${crontabs}?watch=true` });
  assert.equal(r.status, 400);
  const st = JSON.parse(r.body);
  assert.equal(st.kind, 'Status');
  assert.equal(st.reason, 'BadRequest');
  assert.match(st.message, /timeoutSeconds/);
  r = await crdplay.request({ path: `/apis/stable.example.com/v1/watch/namespaces/default/crontabs` });
  assert.equal(r.status, 400, 'the deprecated /watch/ path is a watch too');

  // The first watch runs code nothing ran before, and V8 (dynamic tiering) may then stall node's event loop
  // for a second or more while it optimises the wasm (not with --liftoff-only or --no-liftoff). One warm-up
  // watch keeps that out of the timed one below.
  r = await crdplay.request({ path: `${crontabs}?watch=1&timeoutSeconds=1` });
  assert.equal(r.status, 200, r.body);

  const start = Date.now();
  const watching = crdplay.request({ path: `${crontabs}?watch=1&timeoutSeconds=2` });
  // A change made while the watch is open arrives in it: the engine runs concurrently with this request.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const p = await send('PATCH', `${crontabs}/my-new-cron-object`, { spec: { replicas: 2 } }, 'application/merge-patch+json');
  assert.equal(p.status, 200, p.body);
  r = await watching;
  const took = Date.now() - start;
  assert.equal(r.status, 200, r.body);
  assert.equal(r.headers['Transfer-Encoding'], undefined);
  const events = r.body.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(events.map((e) => e.type), ['ADDED', 'ADDED', 'MODIFIED']);
  assert.equal(events[2].object.spec.replicas, 2);
  assert.ok(took >= 1900 && took < 10000, `watch took ${took} ms for timeoutSeconds=2`);
});

test('concurrent requests', async () => {
  const rs = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    send('POST', crontabs, crontab(`c${i}`, { replicas: i }))));
  assert.deepEqual(rs.map((r) => r.status), Array(20).fill(201));
  const list = JSON.parse((await crdplay.request({ path: crontabs })).body);
  assert.equal(list.items.length, 22);
});

test('conversion webhook: the page converts, awaited from inside the engine', async () => {
  assert.deepEqual(crdplay.setWebhook('nope'), { error: 'crdplay.setWebhook: want a function or null, got string' });

  let r = await send('POST', crds, webhookCRD, 'application/yaml');
  assert.equal(r.status, 201, r.body);
  const objs = '/apis/example.com/v1beta1/namespaces/default/crontabs';
  r = await send('POST', objs, { apiVersion: 'example.com/v1beta1', kind: 'CronTab', metadata: { name: 'web' }, hostPort: 'localhost:7070' });
  assert.equal(r.status, 201, r.body);

  // Without a webhook, reading at the other version fails as an unreachable webhook does.
  const v1 = '/apis/example.com/v1/namespaces/default/crontabs/web';
  r = await crdplay.request({ path: v1 });
  assert.equal(r.status, 500, r.body);
  assert.match(JSON.parse(r.body).message, /the page has set no conversion webhook/);

  // The versioning docs' example converter, answering only after a macrotask: the engine's goroutine must wait
  // for this Promise without blocking the event loop that settles it.
  const calls = [];
  crdplay.setWebhook(async (reviewJSON, clientConfigJSON) => {
    const review = JSON.parse(reviewJSON);
    calls.push({ review, clientConfig: JSON.parse(clientConfigJSON) });
    await new Promise((resolve) => setTimeout(resolve, 10));
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
    return JSON.stringify({
      apiVersion: review.apiVersion, kind: 'ConversionReview',
      response: { uid: review.request.uid, convertedObjects, result: { status: 'Success' } },
    });
  });
  r = await crdplay.request({ path: v1 });
  assert.equal(r.status, 200, r.body);
  const got = JSON.parse(r.body);
  assert.equal(got.apiVersion, 'example.com/v1');
  assert.equal(got.host, 'localhost');
  assert.equal(got.port, '7070');
  assert.ok(calls.length >= 1);
  assert.equal(calls[0].clientConfig.url, 'https://127.0.0.1:1/crdconvert');
  assert.equal(calls[0].review.kind, 'ConversionReview');

  // A rejection's message becomes the transport error, verbatim.
  crdplay.setWebhook(() => Promise.reject(new Error('dial tcp 127.0.0.1:1: connect: connection refused')));
  r = await crdplay.request({ path: v1 });
  assert.equal(r.status, 500, r.body);
  assert.match(JSON.parse(r.body).message, /dial tcp 127\.0\.0\.1:1: connect: connection refused/);
  // So does a synchronous throw, which must not end the Go program.
  crdplay.setWebhook(() => { throw new Error('thrown synchronously'); });
  r = await crdplay.request({ path: v1 });
  assert.equal(r.status, 500, r.body);
  assert.match(JSON.parse(r.body).message, /thrown synchronously/);
  assert.equal(crdplay.setWebhook(null), undefined);
  assert.equal(exited(), false);
});

test('reset empties the store', async () => {
  await crdplay.reset();
  let r = await crdplay.request({ path: `${crds}/crontabs.stable.example.com` });
  assert.equal(r.status, 404);
  r = await crdplay.request({ path: crds });
  assert.deepEqual(JSON.parse(r.body).items, []);
  r = await crdplay.request({ path: crontabs });
  assert.equal(r.status, 404);
});
