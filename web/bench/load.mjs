// Load benchmark (a report, never a test): how long headless Chromium takes from navigation to "engine ready",
// cold (fresh profile: no HTTP cache, no compiled-wasm cache) and warm (a reload in the same profile), with the
// wasm sent gzip-encoded and as it is, and the round trip of a small request. Prints a Markdown table.
//
// Needs what web/test/oracle.spec.mjs needs. Run: node web/bench/load.mjs [runs per row, default 5]
// (CHROMIUM_ARGS adds browser flags).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const webDir = path.resolve(root, process.env.CRDPLAY_WEB_DIR ?? 'build/web');
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  // e.g. CHROMIUM_ARGS=--js-flags=--liftoff-only, to see what V8's tiering costs
  ...(process.env.CHROMIUM_ARGS ?? '').split(' ').filter(Boolean)];
const runs = Number(process.argv[2] ?? 5);

const binDir = mkdtempSync(path.join(tmpdir(), 'crdplay-webdev-'));
const bin = path.join(binDir, 'webdev');
execFileSync('go', ['build', '-o', bin, './tools/webdev'], { cwd: root, stdio: 'inherit' });

/** Starts webdev on a free loopback port; resolves to {url, stop}. */
function startServer(gzip) {
  const proc = spawn(bin, ['-build=false', `-gzip=${gzip}`, '-addr', '127.0.0.1:0', '-o', webDir], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let seen = '';
    proc.stderr.on('data', (c) => {
      seen += c;
      const m = seen.match(/on (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (m) resolve({ url: m[1], stop: () => proc.kill('SIGTERM') });
    });
    proc.on('exit', (code) => reject(new Error(`webdev exited (${code}): ${seen}`)));
  });
}

/** Loads the page and returns the client's ready timings (ms since navigation start). */
async function load(page, url) {
  await page.goto(url);
  return page.evaluate(() => globalThis.crdplay.ready.then((r) => r.timings));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
let rtt;
for (const gzip of [true, false]) {
  const server = await startServer(gzip);
  const cold = [];
  const warm = [];
  for (let i = 0; i < runs; i++) {
    const profile = mkdtempSync(path.join(tmpdir(), 'crdplay-chromium-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args });
    const page = context.pages()[0] ?? await context.newPage();
    cold.push(await load(page, server.url));
    warm.push(await load(page, server.url));
    if (!rtt) {
      rtt = await page.evaluate(async () => {
        const times = [];
        for (let j = 0; j < 200; j++) {
          const t0 = performance.now();
          await globalThis.crdplay.request({ path: '/version' });
          times.push(performance.now() - t0);
        }
        return times;
      });
    }
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
  server.stop();
  for (const [kind, ts] of [['cold', cold], ['warm', warm]]) {
    rows.push({
      load: `${kind}, wasm ${gzip ? 'gzip' : 'identity'}`,
      headers: median(ts.map((t) => t.fetched)),
      compiled: median(ts.map((t) => t.compiled)),
      main: median(ts.map((t) => t.ready)),
      ready: median(ts.map((t) => t.page)),
      all: ts.map((t) => Math.round(t.page)).join(', '),
    });
  }
}
rmSync(binDir, { recursive: true, force: true });

const f = (x) => Math.round(x);
console.log(`Median of ${runs} run(s), ms since navigation start (headless Chromium, loopback server).\n`);
console.log('| load | wasm headers | downloaded + compiled | Go main done | page sees ready | each run (ready) |');
console.log('|---|---:|---:|---:|---:|---|');
for (const r of rows) console.log(`| ${r.load} | ${f(r.headers)} | ${f(r.compiled)} | ${f(r.main)} | ${f(r.ready)} | ${r.all} |`);
const sorted = [...rtt].sort((a, b) => a - b);
console.log(`\nRound trip of GET /version through window.crdplay (page -> worker -> engine -> page), ${rtt.length} requests:` +
  ` median ${sorted[rtt.length >> 1].toFixed(2)} ms, p90 ${sorted[Math.floor(rtt.length * 0.9)].toFixed(2)} ms,` +
  ` max ${sorted[rtt.length - 1].toFixed(2)} ms`);
