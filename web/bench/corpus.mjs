// Corpus benchmark (a report, never a test): for every CRD of testdata/corpus, the time the playground page
// takes from a CRD edit to its first results on screen (the CRD installed, its object created), in headless
// Chromium as web/bench/load.mjs measures re-evaluations. Writes JSON for tools/sidebyside, which prints it beside
// the real server's (the oracle's) and crdplay-server's time for the same work.
//
// Each repetition sets the CRD editor to the corpus CRD with a comment that differs per repetition (so nothing
// compiled for an earlier one is reused) and the object editor to its object, then awaits run(): the page's
// evaluation and the panes it renders, until the object's result is shown. Each starts from an idle page
// (app.idle, before the edit and outside the measured span): the analysis that the page does after showing
// a CRD's first results (rules' costs, explain trees) is not left running into the next repetition. The first
// repetition of the whole run warms V8 up and is not counted: these are the warm figures.
//
// The cold figures are what a user meets: for each CRD and repetition, a browser on a new profile (no HTTP
// cache, no compiled code kept by V8) opens the page, and once it shows its default example's results (the
// page as it is when a visitor starts typing), the same edit is timed. Nothing of the corpus ran in that page
// before it. So is the gallery's answer for its largest CRD: the example chosen in a freshly opened page, to
// its first and to its complete results.
//
//   CRDPLAY_WEB_DIR=build/web-release node web/bench/corpus.mjs [reps, default 3] [out, default build/bench/page-corpus.json]
//
// COLD_REPS (default: reps) sets the cold repetitions; COLD_REPS=0 measures warm only.
//
// CORPUS=argo-workflows/Workflow,gateway-api/HTTPRoute runs only the named CRDs (project/kind, comma-separated):
// a selection of the same measurement, for comparing a change on the cases it is about.
import fs from 'node:fs';
import path from 'node:path';
import { launch, root, startServer } from '../test/harness.mjs';

const reps = Number(process.argv[2] ?? 3);
const out = path.resolve(root, process.argv[3] ?? 'build/bench/page-corpus.json');
const corpusDir = path.join(root, 'testdata/corpus');
const only = (process.env.CORPUS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const cases = [];
for (const project of fs.readdirSync(corpusDir).sort()) {
  const pdir = path.join(corpusDir, project);
  if (!fs.statSync(pdir).isDirectory()) continue;
  for (const kind of fs.readdirSync(pdir).sort()) {
    const dir = path.join(pdir, kind);
    if (!fs.existsSync(path.join(dir, 'crd.yaml'))) continue;
    if (only.length && !only.includes(`${project}/${kind}`)) continue;
    cases.push({ name: `${project}/${kind}`, crd: fs.readFileSync(path.join(dir, 'crd.yaml'), 'utf8'), object: fs.readFileSync(path.join(dir, '01-create.yaml'), 'utf8') });
  }
}

if (!cases.length) throw new Error(`no corpus CRD matches CORPUS=${process.env.CORPUS}`);
const coldReps = Number(process.env.COLD_REPS ?? reps);

/** Opens the page and waits until it shows its default example's results and is idle. */
async function open(page, url) {
  await page.goto(url);
  await page.evaluate(async () => {
    await globalThis.crdplay.ready;
    await new Promise((resolve) => {
      const check = () => (Number(document.body.dataset.runs ?? 0) >= 1 ? resolve() : setTimeout(check, 5));
      check();
    });
    await window.crdplayPlayground.idle;
  });
}

/** One edit: the CRD editor to crd (tagged, so nothing compiled before is reused), the objects editor to
 * object, timed from the edit to the results on screen. */
function measure(page, c, tag) {
  return page.evaluate(async ({ crd, object, tag }) => {
    const app = window.crdplayPlayground;
    await app.idle;
    app.editors.set('crd', `${crd}\n# ${tag}\n`);
    app.editors.set('objects', object);
    const t0 = performance.now();
    await app.run();
    const wall = performance.now() - t0;
    const t = app.evaluation.timings;
    const p = app.timings;
    return { wall, engine: t.total, crds: t.crds, crdEngine: t.crdEngine, objects: t.objects, objectEngine: t.objectEngine, call: p.call, shown: p.shown, pending: !!app.evaluation.analysisPending, statuses: app.evaluation.objects.map((o) => o.status) };
  }, { crd: c.crd, object: c.object, tag });
}

const server = await startServer({ quiet: true });
const results = {};
const cold = {};
let gallery = null;
try {
  // Cold first, each in a browser of its own, so no repetition inherits another's caches.
  for (let i = 0; i < coldReps; i++) {
    for (const c of cases) {
      const b = await launch();
      try {
        await open(b.page, server.url);
        (cold[c.name] ??= []).push(await measure(b.page, c, `cold ${i}`));
      } finally {
        await b.close();
      }
      process.stderr.write('c');
    }
  }
  // The gallery: in a freshly opened page, the largest CRD's example chosen in the menu (as with the mouse),
  // timed to its first results on screen and to its complete results (the analysis after them: rules' costs,
  // explain trees).
  for (let i = 0; i < coldReps; i++) {
    const b = await launch();
    try {
      await open(b.page, server.url);
      (gallery ??= []).push(await b.page.evaluate(async () => {
        const app = window.crdplayPlayground;
        const ex = [...app.examples].sort((x, y) => y.crd.length - x.crd.length)[0];
        const select = document.getElementById('examples');
        const n = Number(document.body.dataset.runs ?? 0);
        // First results: the objects' answers shown with the analysis still to come (data-analysis
        // "pending"), or the complete results at once (data-runs moves only then).
        const first = new Promise((resolve) => {
          const mo = new MutationObserver(() => {
            if (document.body.dataset.analysis === 'pending' || Number(document.body.dataset.runs) > n) { mo.disconnect(); resolve(performance.now()); }
          });
          mo.observe(document.body, { attributes: true, attributeFilter: ['data-runs', 'data-analysis'] });
        });
        const t0 = performance.now();
        select.value = ex.id;
        select.dispatchEvent(new Event('change'));
        const shown = await first;
        await app.idle;
        return { example: ex.title, crdBytes: ex.crd.length, first: shown - t0, complete: performance.now() - t0 };
      }));
    } finally {
      await b.close();
    }
    process.stderr.write('g');
  }
  const b = await launch();
  try {
    await open(b.page, server.url);
    let n = 0;
    // One warm-up, not counted: the first evaluation of a page pays for V8's first tier of the evaluator.
    for (const [i, c] of [[-1, cases[0]], ...Array.from({ length: reps }, (_, i) => cases.map((c) => [i, c])).flat()]) {
      const r = await measure(b.page, c, `bench ${n++}`);
      if (i < 0) continue;
      (results[c.name] ??= []).push(r);
      process.stderr.write('.');
    }
  } finally {
    await b.close();
  }
  process.stderr.write('\n');
} finally {
  server.stop();
}
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, JSON.stringify({ userAgent: 'headless Chromium', reps, coldReps, cases: results, cold, gallery }, null, 1));
console.log(`page: ${Object.keys(results).length} corpus CRDs x ${reps} warm, x ${coldReps} cold: ${path.relative(root, out)}`);
