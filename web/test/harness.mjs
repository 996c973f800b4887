// Shared by the tests and web/bench: the built site (tools/webbuild's build/web, CRDPLAY_WEB_DIR overrides);
// for the browser tests, served by the real crdplay-server on a free loopback port, with Debian's Chromium
// driven by playwright-core over a fresh profile (a cold load: nothing cached); for the node tests, the
// engine's wasm started in node.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after } from 'node:test';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const webDir = path.resolve(root, process.env.CRDPLAY_WEB_DIR ?? 'build/web');
export const resultsDir = path.join(root, 'test-results');
export const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
// Flags that work for headless Chromium as root on these machines (see the toolchain notes).
export const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ...(process.env.CHROMIUM_ARGS ?? '').split(' ').filter(Boolean)];

/** The site's manifest: logical asset name -> path (tools/webbuild). */
export function manifest() {
  const file = path.join(webDir, 'manifest.json');
  if (!existsSync(file)) throw new Error(`${file} is missing: build the site with go run ./tools/webbuild -test`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

let serverBin;
/**
 * The crdplay-server binary: CRDPLAY_SERVER (make test-browser passes the one it built), else built once per
 * process into a temporary directory.
 */
function serverBinary() {
  if (process.env.CRDPLAY_SERVER) return path.resolve(root, process.env.CRDPLAY_SERVER);
  if (serverBin) return serverBin;
  const dir = mkdtempSync(path.join(tmpdir(), 'crdplay-server-'));
  serverBin = path.join(dir, 'crdplay-server');
  execFileSync('go', ['build', '-o', serverBin, './server/cmd/crdplay-server'], { cwd: root, stdio: 'inherit' });
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return serverBin;
}

/**
 * Starts crdplay-server with the site on a free loopback port; resolves to {url, stop}. The binary, not
 * go run, so that stopping it by PID stops the server itself.
 */
export function startServer({ quiet = false } = {}) {
  const proc = spawn(serverBinary(), ['--addr', '127.0.0.1:0', '--site', webDir], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    proc.stderr.on('data', (chunk) => {
      if (!quiet) process.stderr.write(chunk);
      seen += chunk;
      const m = seen.match(/url=(http:\/\/127\.0\.0\.1:\d+)/);
      if (m) resolve({ url: m[1] + '/', stop: () => proc.kill('SIGTERM'), proc });
    });
    proc.on('exit', (code) => reject(new Error(`crdplay-server exited (${code}) before serving: ${seen}`)));
  });
}

/** A persistent context over a fresh profile; close() also removes the profile. */
export async function launch(options = {}) {
  if (!existsSync(executablePath)) throw new Error(`${executablePath} is missing: apt-get install chromium (or set CHROMIUM)`);
  const profile = mkdtempSync(path.join(tmpdir(), 'crdplay-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: chromiumArgs, ...options });
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, page: context.pages()[0] ?? await context.newPage(), close };
}

/**
 * Starts the site's crdplay.wasm in this node process, with the wasm_exec.js it was built with, as the worker
 * starts it in a page, and resolves to the global its main sets (globalThis.crdplay, the engine itself: request,
 * evaluate, kubectl...) and exited(), which is true once the Go program has ended (it never should: it serves
 * until the page goes). Await it at the top of a test file, not in a hook: there it adds an after hook to the
 * file's tests that makes the process leave once they have all reported, since the Go program's pending
 * timers would keep node waiting.
 * @returns {Promise<{crdplay: import('../static/crdplay.d.ts').CrdplayEngine, exited: () => boolean}>}
 */
export async function startEngine() {
  const assets = manifest();
  const wasm = path.join(webDir, assets['crdplay.wasm']);
  if (!existsSync(wasm)) throw new Error(`${wasm} is missing: build it with go run ./tools/webbuild -test`);
  // wasm_exec.js as the browser gets it (copied next to the wasm), a classic script that defines globalThis.Go.
  createRequire(import.meta.url)(path.join(webDir, assets['wasm_exec.js']));
  const go = new globalThis.Go();
  const { instance } = await WebAssembly.instantiate(readFileSync(wasm), go.importObject);
  let exited = false;
  go.run(instance).then(() => { exited = true; });
  after(() => { setTimeout(() => process.exit(process.exitCode ?? 0), 100).unref(); });
  if (!globalThis.crdplay) throw new Error('main did not set globalThis.crdplay');
  return { crdplay: /** @type {any} */ (globalThis.crdplay), exited: () => exited };
}

// A CRD whose rule needs Kubernetes 1.34 (semver), so that an older target warns in the CRD editor; the rule is
// on line 20. widget is an object it accepts.
export const semverCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
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
            x-kubernetes-validations:
            - rule: "semver(self.version).major() >= 1"
            properties:
              version: {type: string, maxLength: 32}
`;
export const widget = 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  version: 1.2.3\n';

/**
 * The page helpers of the playground's specs, on the page current() returns unless given another:
 * evaluated(after) waits until the page has shown more than `after` complete evaluations (document.body's
 * data-runs), runs() is that count, setEditor and editorText write and read an editor's text.
 * @param {() => import('playwright-core').Page} current
 */
export function pageHelpers(current, { timeout = 90_000 } = {}) {
  return {
    evaluated: (after, p = current()) => p.waitForFunction((n) => Number(document.body.dataset.runs ?? 0) > n, after, { timeout }),
    runs: (p = current()) => p.evaluate(() => Number(document.body.dataset.runs ?? 0)),
    setEditor: (id, text, p = current()) => p.evaluate(([i, t]) => window.crdplayPlayground.editors.set(i, t), [id, text]),
    editorText: (id, p = current()) => p.evaluate((i) => window.crdplayPlayground.editors.text(i), id),
  };
}

/**
 * The playground's site served and opened in a new browser at width × height: the server, the browser, its
 * page and the page's uncaught errors (problems, which a spec's after hook checks are none). close() stops both.
 */
export async function openPlayground({ width = 1400, height = 900 } = {}) {
  const server = await startServer({ quiet: true });
  const browser = await launch({ viewport: { width, height } });
  const page = browser.page;
  const problems = [];
  page.on('pageerror', (err) => problems.push(`[pageerror] ${err.message}`));
  await page.goto(server.url);
  return { server, browser, page, problems, close: async () => { await browser.close(); server.stop(); } };
}
