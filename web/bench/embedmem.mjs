// Report (not a test): memory and time of embed.js's live examples in headless Chromium, to choose how a docs
// page's examples get their engine. Five examples, all in view, on a docs page of another origin:
//   shared: embed.js (one hidden engine frame, every example's frame talks to it over a MessagePort);
//   per-frame: five iframes of embed/ as the Embed dialog writes them, each with an engine of its own;
//   none: the same docs page with static blocks (the baseline).
// Memory is the proportional set size (PSS, /proc/PID/smaps_rollup) of the renderer process that holds
// crdplay's frames (site isolation puts them, and their workers with the engine's wasm memory, in one process
// of their own: the largest renderer), and of all the browser's processes (noisier: spare renderers come and
// go), after the examples have answered and a garbage collection (CDP HeapProfiler.collectGarbage in each
// frame). performance.memory is the frames' shared JS heap, without the workers.
// Also: the time to the first live example of /embed-demo.html, cold (a fresh profile).
//
// Run: CRDPLAY_WEB_DIR=build/web node web/bench/embedmem.mjs (EXAMPLES=1 for one example instead of five)
import http from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { launch, startServer } from '../test/harness.mjs';

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.demo.example.com
spec:
  group: demo.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
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
              size: {type: string, enum: [small, large]}`;
const obj = (i) => `apiVersion: demo.example.com/v1
kind: Widget
metadata:
  name: widget-${i}
spec:
  size: small`;
const N = Number(process.env.EXAMPLES ?? 5);

/** The PSS in MB of pid and its descendants. */
function pss(root) {
  const kids = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch { /* gone */ }
  }
  let kb = 0;
  const each = [];
  const walk = (p) => {
    try {
      const n = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'))[1]);
      kb += n;
      each.push(`${/--type=([\w-]+)/.exec(readFileSync(`/proc/${p}/cmdline`, 'utf8'))?.[1] ?? 'browser'} ${Math.round(n / 1024)}`);
    } catch { /* gone */ }
    for (const k of kids.get(p) ?? []) walk(k);
  };
  walk(root);
  if (process.env.VERBOSE) console.log(each.join(', '));
  const renderers = each.filter((e) => e.startsWith('renderer ')).map((e) => Number(e.split(' ')[1]));
  return { total: kb / 1024, renderer: Math.max(0, ...renderers) };
}

/** The browser's main process: the one this process started (other browsers may run beside it). */
function browserPid() {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (ppid === process.pid && cmd.includes('chrom') && !cmd.includes('--type=')) return Number(d);
    } catch { /* gone */ }
  }
  throw new Error('no browser process of this process');
}

async function measure(server, kind) {
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  let body;
  if (kind === 'per-frame') {
    body = Array.from({ length: N }, () => `<iframe src="${server.url}embed/?panes=objects,result" style="width:100%;height:130px;border:0"></iframe>`).join('\n');
  } else {
    body = Array.from({ length: N }, (_, i) => `<pre class="crdplay"${i ? ' data-crd="#c0"' : ' id="c0"'} data-height="130">${i ? '' : esc(CRD) + '\n---\n'}${esc(obj(i))}</pre>`).join('\n');
    if (kind === 'shared') body += `<script src="${server.url}embed.js"></script>`;
  }
  const docs = http.createServer((req, res) => { res.setHeader('Content-Type', 'text/html'); res.end(`<!doctype html><link rel="icon" href="data:,"><body style="margin:0">${body}</body>`); });
  await new Promise((r) => docs.listen(0, '127.0.0.1', r));
  const b = await launch({ viewport: { width: 1000, height: 1000 } });
  const pid = browserPid();
  const page = b.page;
  const t0 = Date.now();
  await page.goto(`http://127.0.0.1:${docs.address().port}/`);
  const frames = () => page.frames().filter((f) => /\/embed\/\?/.test(f.url()));
  if (kind !== 'none') {
    while (frames().length < N) await page.waitForTimeout(50);
    for (const f of frames()) await f.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, { timeout: 180_000, polling: 100 });
  }
  const allLive = Date.now() - t0;
  await page.waitForTimeout(2000);
  for (const f of page.frames()) {
    try {
      const cdp = await b.context.newCDPSession(f);
      await cdp.send('HeapProfiler.collectGarbage');
      await cdp.detach();
    } catch { /* a same-process frame shares its page's session */ }
  }
  await page.waitForTimeout(1000);
  const heaps = await Promise.all(frames().map((f) => f.evaluate(() => performance.memory.usedJSHeapSize / 1048576)));
  const mem = pss(pid);
  await b.close();
  docs.close();
  return { kind, allLive, pssMB: Math.round(mem.total), rendererMB: mem.renderer, frameJSHeapMB: heaps.map((h) => +h.toFixed(1)) };
}

async function demoFirstLive(server) {
  const b = await launch({ viewport: { width: 1200, height: 900 } });
  const t0 = Date.now();
  await b.page.goto(`${server.url}embed-demo.html`);
  await b.page.waitForFunction(() => document.querySelector('.crdplay-live'), null, { polling: 50 });
  const handle = await b.page.evaluateHandle(() => document.querySelector('.crdplay-live').shadowRoot.querySelector('iframe'));
  const f = await handle.asElement().contentFrame();
  await f.waitForFunction(() => Number(document.body.dataset.runs ?? 0) >= 1, null, { timeout: 180_000, polling: 50 });
  const ms = Date.now() - t0;
  await b.close();
  return ms;
}

const server = await startServer({ quiet: true });
try {
  for (let i = 0; i < 2; i++) console.log(`embed-demo.html: first live example after ${await demoFirstLive(server)} ms (cold profile)`);
  const rows = [];
  for (const kind of ['none', 'shared', 'per-frame']) rows.push(await measure(server, kind));
  const base = rows[0].pssMB;
  for (const r of rows) {
    console.log(`${r.kind.padEnd(9)} crdplay's renderer process (its frames and their workers) ${r.rendererMB} MB PSS; ` +
      `all the browser's processes ${r.pssMB} MB (+${r.pssMB - base} MB over static blocks); ` +
      `${N} examples answered ${r.allLive} ms after navigation; the frames' JS heap ${r.frameJSHeapMB.join(', ')} MB`);
  }
} finally {
  server.stop();
}
