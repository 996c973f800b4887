// Tests of crdplay.kubectl, the wasm bridge to the playground's kubectl (crdplay/playground/kubectl), under
// node: the engine's global as the worker sees it. What kubectl prints is checked against real kubectl in Go
// (playground/kubectl/script_test.go); here the bridge: its input forms, the result's shape, the store it
// shares with request(), and its refusals. Needs the built site: go run ./tools/webbuild -test
// (CRDPLAY_WEB_DIR overrides build/web). Run: node --test web/test/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, startEngine } from './harness.mjs';

const testFiles = path.join(root, 'playground/kubectl/testdata/files');
const files = {
  'crd.yaml': readFileSync(path.join(testFiles, 'crontab-crd.yaml'), 'utf8'),
  'objects.yaml': readFileSync(path.join(testFiles, 'my-crontab.yaml'), 'utf8'),
};

const { crdplay } = await startEngine();
assert.equal(typeof crdplay.kubectl, 'function', 'the bridge has no kubectl');
await crdplay.reset();

test('apply, get and describe over the shared store', async () => {
  let res = await crdplay.kubectl({ args: 'kubectl apply -f crd.yaml', files });
  assert.equal(res.stderr, '');
  assert.equal(res.exitCode, 0);
  assert.equal(res.stdout, 'customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created\n');
  const post = res.requests.find((r) => r.method === 'POST');
  assert.ok(post, JSON.stringify(res.requests.map((r) => `${r.method} ${r.path}`)));
  assert.equal(post.path, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
  assert.equal(post.query, 'fieldManager=kubectl-client-side-apply&fieldValidation=Strict');
  assert.equal(post.status, 201);
  assert.equal(post.requestHeaders['Content-Type'], 'application/json');
  assert.match(post.requestBody, /"kubectl.kubernetes.io\/last-applied-configuration"/);
  assert.equal(JSON.parse(post.responseBody).metadata.name, 'crontabs.stable.example.com');

  // Words work as well as a line, and the leading "kubectl" is optional.
  res = await crdplay.kubectl({ args: ['apply', '-f', 'objects.yaml'], files });
  assert.equal(res.stdout, 'crontab.stable.example.com/my-new-cron-object created\n', res.stderr);

  // The object is in the store that request() serves.
  const r = await crdplay.request({ path: '/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object' });
  assert.equal(r.status, 200, r.body);

  res = await crdplay.kubectl({ args: 'get ct -o wide' });
  assert.equal(res.exitCode, 0, res.stderr);
  assert.match(res.stdout, /^NAME {17}SPEC {10}REPLICAS {3}AGE {3}IMAGE\nmy-new-cron-object {3}\* \* \* \* \*\/5 {14}\d+s +my-awesome-cron-image\n$/);
  const list = res.requests.at(-1);
  assert.equal(list.query, 'limit=500');
  assert.match(list.requestHeaders.Accept, /^application\/json;as=Table;v=v1;g=meta.k8s.io,/);

  res = await crdplay.kubectl({ args: "describe ct my-new-cron-object" });
  assert.match(res.stdout, /^Name: {9}my-new-cron-object\nNamespace: {4}default\n/);
  assert.match(res.stdout, /\nSpec:\n  Cron Spec:  \* \* \* \* \*\/5\n  Image:      my-awesome-cron-image\nEvents:       <none>\n$/);
});

test('kubectl errors are results, with kubectl exit codes', async () => {
  let res = await crdplay.kubectl({ args: 'kubectl get nothing' });
  assert.equal(res.exitCode, 1);
  assert.equal(res.stdout, '');
  assert.equal(res.stderr, 'error: the server doesn\'t have a resource type "nothing"\n');

  // output interleaves the two streams as a terminal would: the row that was found, then the error.
  res = await crdplay.kubectl({ args: 'kubectl get ct my-new-cron-object nope -o name' });
  assert.equal(res.output, 'crontab.stable.example.com/my-new-cron-object\nError from server (NotFound): crontabs.stable.example.com "nope" not found\n');
  assert.equal(res.output, res.stdout + res.stderr);

  res = await crdplay.kubectl({ args: 'kubectl get ct nope -n other' });
  assert.equal(res.exitCode, 1);
  assert.match(res.stderr, /^Error from server \(NotFound\)/);

  res = await crdplay.kubectl({ args: 'kubectl apply -f missing.yaml', files });
  assert.equal(res.stderr, 'error: the path "missing.yaml" does not exist\n');

  // The namespace of the context applies without -n.
  res = await crdplay.kubectl({ args: 'kubectl get ct', namespace: 'team-a' });
  assert.equal(res.stderr, 'No resources found in team-a namespace.\n');

  // Shell syntax that needs a shell is refused with exit code 2, before any request.
  res = await crdplay.kubectl({ args: 'kubectl get ct | grep cron' });
  assert.equal(res.exitCode, 2);
  assert.deepEqual(res.requests, []);
  assert.match(res.stderr, /pipes/);
});

test('malformed inputs are rejected with a CrdplayError', async () => {
  for (const [input, want] of [
    [undefined, /want an object/],
    ['kubectl get ct', /want an object/],
    [{}, /args: want a string or an array of strings/],
    [{ args: 42 }, /args: want a string or an array of strings/],
    [{ args: ['get', 1] }, /args\[1\]: want a string/],
    [{ args: 'get ct', files: 'crd.yaml' }, /files: want an object/],
    [{ args: 'get ct', files: { 'crd.yaml': 1 } }, /files\["crd.yaml"\]: want a string/],
    [{ args: 'get ct', namespace: 1 }, /namespace: want a string/],
  ]) {
    await assert.rejects(crdplay.kubectl(input), (e) => {
      assert.match(e.error, want);
      assert.match(e.error, /^crdplay\.kubectl: /);
      return true;
    });
  }
});
