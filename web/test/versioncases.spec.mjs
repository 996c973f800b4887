// Browser test of the emulated versions: for each Kubernetes minor the engine emulates and testdata/versions
// has recordings of (oracle cases recorded from a real v0.37 apiextensions-apiserver run with
// --emulated-version, see testdata/versions/README.md), headless Chromium opens the playground at
// ?version=<minor>, whose engine then runs in a worker emulating it (web/src/engines.ts; the newest is the
// default worker), and replays that version's cases through window.crdplay.request with the Go tests' own
// runner (wasm/oraclerunner), as oracle.spec.mjs does for testdata/oracle. Every recorded response must match.
//
// Needs the site built with go run ./tools/webbuild -test (test/version-cases/<minor>.json). Run:
// node --test web/test/versioncases.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { launch, manifest, resultsDir, root, startServer, webDir } from './harness.mjs';

let server;
let browser;
let page;
let assets;
const problems = [];

before(async () => {
  for (const f of ['test/oraclerunner.wasm', 'test/version-cases/1.37.json']) {
    if (!existsSync(path.join(webDir, f))) throw new Error(`${path.join(webDir, f)} is missing: build with go run ./tools/webbuild -test`);
  }
  assets = manifest();
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer();
  browser = await launch();
  page = browser.page;
  page.on('pageerror', (err) => problems.push(`[pageerror] ${err.message}`));
  page.on('console', (msg) => { if (msg.type() === 'error') problems.push(`[console] ${msg.text()}`); });
});

after(async () => {
  await browser?.close();
  server?.stop();
  assert.deepEqual(problems, []);
});

const recordedDir = path.join(root, 'testdata/versions');
/** The case directories recorded at a version. */
const casesOf = (version) => readdirSync(path.join(recordedDir, version), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(path.join(recordedDir, version, d.name, 'crd.yaml')))
  .map((d) => d.name).sort();

test('every version case passes in Chromium, each against a page running its version', { timeout: 1_200_000 }, async (t) => {
  // The versions to replay: those the engine says it emulates (its first page tells) that have recordings.
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.engine, null, { timeout: 120_000 });
  const emulated = await page.evaluate(() => window.crdplay.version().emulatedVersions);
  const recorded = readdirSync(recordedDir).filter((v) => /^1\.\d+$/.test(v));
  const versions = emulated.filter((v) => recorded.includes(v));
  assert.deepEqual(versions, ['1.34', '1.35', '1.36', '1.37'], `emulated ${emulated}, recorded ${recorded}`);

  const results = {};
  for (const version of versions) {
    await page.goto(`${server.url}?version=${version}`);
    // The page runs on the worker emulating the version once its engine answers and has evaluated.
    await page.waitForFunction((v) => document.body.dataset.engine === v && Number(document.body.dataset.runs) >= 1, version, { timeout: 180_000 });
    const info = await page.evaluate(async () => ({
      version: JSON.parse((await window.crdplay.request({ path: '/version' })).body),
      emulated: window.crdplay.version().emulated,
      workers: window.crdplayEngines.engines.alive.map((c) => c.emulatedVersion),
    }));
    assert.equal(info.emulated, version);
    assert.equal(`${info.version.emulationMajor}.${info.version.emulationMinor}`, version);
    assert.deepEqual(info.workers, version === versions.at(-1) ? [''] : ['', version]);

    const result = await page.evaluate(async ([wasmExec, bundleURL]) => {
      await new Promise((resolve, reject) => {
        const s = document.createElement('script');
        s.src = wasmExec;
        s.onload = resolve;
        s.onerror = () => reject(new Error(`cannot load ${wasmExec}`));
        document.head.append(s);
      });
      const bundle = await (await fetch(bundleURL)).text();
      const done = new Promise((resolve) => { globalThis.crdplayOracle = { bundle, done: resolve }; });
      const go = new globalThis.Go();
      const { instance } = await WebAssembly.instantiateStreaming(fetch('/test/oraclerunner.wasm'), go.importObject);
      go.run(instance);
      return JSON.parse(await done);
    }, ['/' + assets['wasm_exec.js'], `/test/version-cases/${version}.json`]);
    results[version] = result;
    assert.equal(result.error, undefined, version);
    assert.deepEqual(result.cases.map((c) => c.name), casesOf(version), `${version}: the runner must see every case directory`);
    t.diagnostic(`${version}: ${result.summary} in Chromium (${Math.round(result.cases.reduce((s, c) => s + c.ms, 0))} ms)`);
    const failed = result.cases.filter((c) => c.error || c.diffs?.length);
    const report = failed.map((c) => `--- ${c.name}: ${c.error ?? ''}\n${(c.diffs ?? []).join('\n')}`).join('\n');
    assert.equal(failed.length, 0, `${version}: ${result.summary}\n${report.slice(0, 20000)}`);
  }
  writeFileSync(path.join(resultsDir, 'versioncases-result.json'), JSON.stringify(results, null, 2) + '\n');
});
