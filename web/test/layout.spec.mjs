// Browser test of the page's layout and keyboard in headless Chromium: the page and the embed route fit any
// width (a phone, a narrow window, a docs page's iframe) without scrolling sideways, whatever the editors hold
// (the default example, cert-manager's Certificate CRD, the corpus's largest CRD); the result tabs stay
// reachable; the tabs follow the WAI-ARIA tabs pattern (arrow keys, Home, End, roving tabindex); the example
// menu is filled while the engine is still downloading; the progress counts the bytes on the wire.
// Screenshots: test-results/playground-{390,800,1400}.png and embed-900.png.
//
// Needs what oracle.spec.mjs needs. Run: node --test web/test/layout.spec.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { launch, manifest, resultsDir, root, startServer } from './harness.mjs';

/** The widths the page and the embed are checked at: a phone, a narrow window, a wide one. */
const WIDTHS = [390, 800, 1400];
const corpus = (dir) => ({
  crd: readFileSync(path.join(root, 'testdata/corpus', dir, 'crd.yaml'), 'utf8'),
  objects: readFileSync(path.join(root, 'testdata/corpus', dir, '01-create.yaml'), 'utf8'),
});
// The CRD issue reports named (long description lines), and the corpus's largest (2.8 MB).
const CONTENTS = [
  { name: 'the default example' },
  { name: 'cert-manager Certificate', ...corpus('cert-manager/Certificate') },
  { name: 'argo-workflows Workflow', ...corpus('argo-workflows/Workflow') },
];

let server;
let browser;

before(async () => {
  mkdirSync(resultsDir, { recursive: true });
  server = await startServer();
  browser = await launch({ viewport: { width: 1400, height: 900 } });
});

after(async () => {
  await browser?.close();
  server?.stop();
});

/** Waits until the page (or frame) has finished an evaluation after `n` evaluations. */
const evaluated = (p, n) => p.waitForFunction((k) => Number(document.body.dataset.runs ?? 0) > k, n, { timeout: 120_000 });
const runs = (p) => p.evaluate(() => Number(document.body.dataset.runs ?? 0));

/** Puts a content into the editors and waits for its evaluation. */
async function load(p, content) {
  if (!content.crd) return;
  const n = await runs(p);
  await p.evaluate(({ crd, objects }) => {
    window.crdplayPlayground.editors.set('crd', crd);
    window.crdplayPlayground.editors.set('objects', objects);
  }, content);
  await evaluated(p, n);
}

/**
 * What sticks out sideways: the document's scroll width against its client width, the widest elements that
 * reach past the right edge (to say which), and every visible tab that cannot be reached (outside the window,
 * or outside a tab list that does not scroll).
 */
function measure(p) {
  return p.evaluate(() => {
    const d = document.documentElement;
    const name = (e) => e.tagName.toLowerCase() + (e.id ? `#${e.id}` : '') + (typeof e.className === 'string' && e.className ? `.${e.className.split(' ').join('.')}` : '');
    const past = [...document.body.querySelectorAll('*')]
      .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > d.clientWidth + 0.5)
      .map((e) => `${name(e)} ${Math.round(e.getBoundingClientRect().right)}`);
    const list = document.getElementById('tabs');
    const box = list.getBoundingClientRect();
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(list).overflowX);
    const unreachable = [...list.querySelectorAll('[role=tab]')].filter((t) => t.getClientRects().length).filter((t) => {
      const r = t.getBoundingClientRect();
      const inList = r.left >= box.left - 0.5 && r.right <= box.right + 0.5;
      return box.left < -0.5 || box.right > d.clientWidth + 0.5 || !(inList || scrolls);
    }).map((t) => t.id);
    return { scrollWidth: d.scrollWidth, clientWidth: d.clientWidth, past: past.slice(0, 6), unreachable };
  });
}

/** How many pixels of two PNG screenshots of the same size differ visibly (decoded in a blank page). */
async function changedPixels(a, b) {
  const blank = await browser.context.newPage();
  try {
    return await blank.evaluate(async (srcs) => {
      const data = [];
      for (const src of srcs) {
        const img = new Image();
        img.src = src;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.width;
        canvas.height = img.height;
        const ctx = canvas.getContext('2d');
        ctx.drawImage(img, 0, 0);
        data.push(ctx.getImageData(0, 0, img.width, img.height).data);
      }
      let n = 0;
      for (let i = 0; i < data[0].length; i += 4) {
        // Anti-aliasing moves a channel by a few levels; a drawn ring by far more.
        if ([0, 1, 2].some((c) => Math.abs(data[0][i + c] - data[1][i + c]) > 32)) n++;
      }
      return n;
    }, [a, b].map((png) => `data:image/png;base64,${png.toString('base64')}`));
  } finally {
    await blank.close();
  }
}

function assertFits(m, where) {
  assert.ok(m.scrollWidth <= m.clientWidth, `${where}: the page is ${m.scrollWidth}px wide in ${m.clientWidth}px; past the edge: ${m.past.join(', ')}`);
  assert.deepEqual(m.unreachable, [], `${where}: tabs out of reach`);
}

test('the page fits 320, 390, 800 and 1400 px with the default example and the largest CRDs', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(server.url);
    await evaluated(page, 0);
    for (const content of CONTENTS) {
      await page.setViewportSize({ width: 1400, height: 900 });
      await load(page, content);
      for (const width of [320, ...WIDTHS]) {
        await page.setViewportSize({ width, height: 900 });
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        assertFits(await measure(page), `/ at ${width}px with ${content.name}`);
        if (!content.crd) await page.screenshot({ path: path.join(resultsDir, `playground-${width}.png`) });
      }
    }
  } finally {
    await page.close();
  }
});

test('the embed route fits an iframe of 390, 800, 900 and 1400 px on another origin', async (t) => {
  // A docs page on another origin (another loopback port), framing the embed route as the Embed dialog's
  // snippet does; the frame's width is the test's.
  const docs = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(`<!doctype html><body style="margin:0"><iframe id="f" src="${server.url}embed/" style="width:900px;border:0" height="1200"></iframe></body>`);
  });
  await new Promise((resolve) => docs.listen(0, '127.0.0.1', resolve));
  t.after(() => docs.close());
  const host = await browser.context.newPage();
  try {
    await host.goto(`http://127.0.0.1:${docs.address().port}/`);
    const frame = await (await host.waitForSelector('#f')).contentFrame();
    await evaluated(frame, 0);
    for (const content of CONTENTS) {
      await load(frame, content);
      for (const width of [...WIDTHS, 900]) {
        await host.setViewportSize({ width, height: 1300 });
        await host.evaluate((w) => { document.getElementById('f').style.width = `${w}px`; }, width);
        await frame.waitForFunction((w) => document.documentElement.clientWidth === w, width);
        await frame.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        assertFits(await measure(frame), `/embed/ in a ${width}px iframe with ${content.name}`);
        if (!content.crd && width === 900) await host.screenshot({ path: path.join(resultsDir, 'embed-900.png') });
      }
    }
  } finally {
    await host.close();
  }
});

test('the result tabs follow the WAI-ARIA tabs pattern: roles, roving tabindex, arrow keys, Home, End', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(server.url);
    const state = () => page.evaluate(() => ({
      focused: document.activeElement?.id,
      selected: [...document.querySelectorAll('[role=tab][aria-selected=true]')].map((t) => t.id),
      tabbable: [...document.querySelectorAll('[role=tab]')].filter((t) => t.tabIndex === 0).map((t) => t.id),
      shown: [...document.querySelectorAll('[role=tabpanel]')].filter((p) => !p.hidden).map((p) => p.id),
    }));
    const roles = await page.evaluate(() => [...document.querySelectorAll('[role=tab]')].map((t) => {
      const panel = document.getElementById(t.getAttribute('aria-controls'));
      return { list: t.parentElement.getAttribute('role'), panel: panel?.getAttribute('role'), labelledBy: panel?.getAttribute('aria-labelledby') === t.id };
    }));
    assert.equal(roles.length, 7);
    for (const r of roles) assert.deepEqual(r, { list: 'tablist', panel: 'tabpanel', labelledBy: true });
    const want = (tab) => ({ focused: `tab-${tab}`, selected: [`tab-${tab}`], tabbable: [`tab-${tab}`], shown: [`pane-${tab}`] });
    assert.deepEqual((await state()).tabbable, ['tab-result']);
    await page.focus('#tab-result');
    await page.keyboard.press('ArrowRight');
    assert.deepEqual(await state(), want('cel'));
    await page.keyboard.press('ArrowRight');
    assert.deepEqual(await state(), want('table'));
    await page.keyboard.press('ArrowLeft');
    assert.deepEqual(await state(), want('cel'));
    await page.keyboard.press('End');
    assert.deepEqual(await state(), want('http'));
    await page.keyboard.press('ArrowRight'); // wraps around
    assert.deepEqual(await state(), want('result'));
    await page.keyboard.press('ArrowLeft');
    assert.deepEqual(await state(), want('http'));
    await page.keyboard.press('Home');
    assert.deepEqual(await state(), want('result'));
    // Tab leaves the tab list for the panel's content rather than walking every tab.
    await page.keyboard.press('Tab');
    assert.ok(!(await state()).focused?.startsWith('tab-'), 'Tab stayed in the tab list');
    // A focused editor shows a focus ring: the bottom edge of the editor (below its text) is drawn otherwise
    // once it has the focus. CodeMirror's own outline is outside the editor, where its frame cuts it off.
    const edge = async () => {
      const b = await page.locator('#objects-editor').boundingBox();
      return page.screenshot({ clip: { x: b.x, y: b.y + b.height - 3, width: b.width, height: 3 } });
    };
    await evaluated(page, 0); // the page's layout settles (the status line, the results)
    await page.evaluate(() => document.activeElement?.blur());
    const blurred = await edge();
    assert.equal(await changedPixels(blurred, await edge()), 0, 'the editor\'s edge changes by itself');
    await page.click('#objects-editor .cm-line >> nth=0');
    assert.ok(await page.evaluate(() => document.activeElement?.closest('#objects-editor') !== null));
    const changed = await changedPixels(blurred, await edge());
    const width = (await page.locator('#objects-editor').boundingBox()).width;
    assert.ok(changed > width / 2, `the focused editor's edge differs from the unfocused one's in ${changed} pixels of ${Math.round(width)} wide`);
  } finally {
    await page.close();
  }
});

test('the example menu is filled before the engine is ready; the progress counts bytes on the wire', async () => {
  const page = await browser.context.newPage();
  let release;
  const held = new Promise((r) => { release = r; });
  try {
    // The engine's download waits until the menu has been checked.
    await page.route('**/*.wasm', async (route) => { await held; await route.continue(); });
    await page.goto(server.url);
    await page.waitForFunction(() => document.querySelectorAll('#examples option').length > 40, null, { timeout: 30_000 })
      .catch(async (e) => { throw new Error(`the menu has ${await page.locator('#examples option').count()} options while the engine loads: ${e.message}`); });
    assert.equal(await page.getAttribute('#status', 'data-state'), 'loading');
    // Every progress event of the download, not only the last (boot.ts made the client before any came).
    await page.evaluate(() => window.crdplay.addEventListener('progress', (e) => (window.progressSeen ??= []).push(e.detail)));
    release();
    await page.waitForSelector('#status[data-state=ready]', { timeout: 90_000 });
    // The brotli file's length, as the server sends it, against the wasm's own.
    const wire = await new Promise((resolve, reject) => {
      const wasm = new URL(manifest()['crdplay.wasm'], server.url);
      http.get(wasm, { headers: { 'Accept-Encoding': 'br' } }, (res) => {
        res.resume();
        resolve({ encoded: Number(res.headers['content-length']), decoded: Number(res.headers['x-decoded-content-length']) });
      }).on('error', reject);
    });
    assert.ok(wire.encoded < wire.decoded / 2, JSON.stringify(wire));
    const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
    const shown = await page.evaluate(() => ({
      text: document.getElementById('bytes').textContent,
      value: document.getElementById('progress').value,
      max: document.getElementById('progress').max,
    }));
    assert.equal(shown.text, `${mb(wire.encoded)} of ${mb(wire.encoded)}`);
    assert.deepEqual([shown.value, shown.max], [wire.encoded, wire.encoded]);
    const seen = await page.evaluate(() => window.progressSeen);
    assert.ok(seen.length >= 2, JSON.stringify(seen));
    seen.forEach((p, i) => {
      assert.equal(p.total, wire.encoded, `event ${i}: ${JSON.stringify(p)}`);
      assert.ok(p.loaded <= p.total && (i === 0 || p.loaded >= seen[i - 1].loaded), `event ${i}: ${JSON.stringify(seen)}`);
    });
  } finally {
    release();
    await page.close();
  }
});

/** The widths the CEL pane, the tooltips and the embed frames are checked at. */
const ALL_WIDTHS = [320, 390, 800, 1400];
const nextFrames = (p) => p.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/** The default example's CRD with a second rule that does not compile: its error is long. */
async function withBadRule(p) {
  const crd = await p.evaluate(() => window.crdplayPlayground.editors.text('crd'));
  const bad = crd.replace('            - rule: "self.replicas <= 10"\n', '            - rule: "self.replicas <= 10"\n              message: "at most 10 replicas"\n            - rule: "self.image.startsWith(self.nope.missing)"\n');
  assert.notEqual(bad, crd, 'the default example has the replicas rule');
  return bad;
}

test('the CEL pane fits its pane at 320, 390, 800 and 1400 px: the Kubernetes header whole, a compile error not squeezed into a column', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(server.url);
    await evaluated(page, 0);
    const n = await runs(page);
    await page.evaluate((crd) => window.crdplayPlayground.editors.set('crd', crd), await withBadRule(page));
    await evaluated(page, n);
    await page.waitForFunction(() => !window.crdplayPlayground.evaluation.analysisPending && window.crdplayPlayground.evaluation.crds[0]?.compat);
    await page.click('#tab-cel');
    await page.waitForSelector('#pane-cel .rule-error');
    for (const width of ALL_WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      await nextFrames(page);
      const m = await page.evaluate(() => {
        const pane = document.getElementById('pane-cel');
        const box = pane.getBoundingClientRect();
        const name = (e) => e.tagName.toLowerCase() + (typeof e.className === 'string' && e.className ? `.${e.className.split(' ').join('.')}` : '');
        const wider = [...pane.querySelectorAll('*')].filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > box.left + pane.clientWidth + 0.5)
          .map((e) => `${name(e)} ${Math.round(e.getBoundingClientRect().right - box.left)}`);
        // The Kubernetes header: on one line and whole; or, in a pane too narrow for columns (each rule a block
        // of labelled lines), the label of each Kubernetes cell.
        const header = [...pane.querySelectorAll('table.cel th')].find((t) => t.textContent === 'Kubernetes');
        const label = (td) => getComputedStyle(td, '::before').content;
        const lines = (el) => {
          const range = document.createRange();
          range.selectNodeContents(el);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        };
        const cells = [...pane.querySelectorAll('table.cel td.kubernetes')];
        const th = header?.getClientRects().length
          ? { scroll: header.scrollWidth, client: header.clientWidth, right: header.getBoundingClientRect().right - box.left, lines: lines(header) }
          : cells.length && cells.every((td) => label(td).includes('Kubernetes'))
            ? { scroll: Math.max(...cells.map((td) => td.scrollWidth - td.clientWidth)), client: 0, right: Math.max(...cells.map((td) => td.getBoundingClientRect().right - box.left)), lines: 1 }
            : null;
        const err = pane.querySelector('.rule-error').closest('td');
        const table = pane.querySelector('table.cel');
        // No column squeezed to a few characters (a rule a character per line).
        const narrow = [...pane.querySelectorAll('table.cel td')].map((td) => td.getBoundingClientRect().width).filter((w) => w < 56);
        return {
          narrow,
          scrollWidth: pane.scrollWidth, clientWidth: pane.clientWidth, wider: wider.slice(0, 6),
          th,
          err: { width: err.getBoundingClientRect().width, table: table.getBoundingClientRect().width },
        };
      });
      const where = `CEL pane at ${width}px`;
      assert.ok(m.scrollWidth <= m.clientWidth, `${where}: ${m.scrollWidth}px of content in ${m.clientWidth}px; past the edge: ${m.wider.join(', ')}`);
      assert.deepEqual(m.wider, [], `${where}: past the pane's edge`);
      assert.deepEqual(m.narrow, [], `${where}: cells squeezed`);
      assert.ok(m.th, `${where}: a Kubernetes header`);
      assert.ok(m.th.scroll <= m.th.client && m.th.right <= m.clientWidth + 0.5 && m.th.lines === 1, `${where}: the Kubernetes header is clipped or broken: ${JSON.stringify(m.th)}`);
      // The compile error spans the table (a row of its own), not one column of it.
      assert.ok(m.err.width >= m.err.table * 0.6, `${where}: the compile error is ${Math.round(m.err.width)}px wide in a ${Math.round(m.err.table)}px table`);
      if (width === 390 || width === 1400) await page.locator('#pane-cel').screenshot({ path: path.join(resultsDir, `layout-cel-${width}.png`) });
    }
  } finally {
    await page.close();
  }
});

test('the lint tooltip stays inside the window at 320, 390, 800 and 1400 px', async () => {
  const page = await browser.context.newPage();
  try {
    await page.goto(server.url);
    await evaluated(page, 0);
    // The default example's warning (an unknown field, pruned), then the bad rule's compile error, whose
    // tooltip quotes the rule with a caret under the mistake.
    for (const [what, selector] of [['a warning', '#objects-editor .cm-lintRange-warning'], ['a compile error', '#crd-editor .cm-lintRange-error']]) {
      if (what === 'a compile error') {
        await page.setViewportSize({ width: 1400, height: 900 });
        const n = await runs(page);
        await page.evaluate((crd) => window.crdplayPlayground.editors.set('crd', crd), await withBadRule(page));
        await evaluated(page, n);
      }
      for (const width of ALL_WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        await nextFrames(page);
        await page.mouse.move(0, 0);
        await page.waitForSelector('.cm-tooltip-lint', { state: 'detached', timeout: 5000 });
        const mark = page.locator(selector).first();
        await mark.scrollIntoViewIfNeeded();
        const box = await mark.boundingBox();
        // At the mark's right end (inside the window): the tooltip opens where the pointer is.
        await page.mouse.move(Math.min(box.x + box.width - 2, width - 4), box.y + box.height / 2);
        const tip = await page.waitForSelector('.cm-tooltip-lint', { timeout: 5000 });
        await nextFrames(page);
        const r = await tip.evaluate((el) => {
          const b = el.getBoundingClientRect();
          const vw = document.documentElement.clientWidth;
          const past = [...el.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > vw + 0.5).map((e) => e.tagName.toLowerCase() + '.' + e.className);
          return { left: b.left, right: b.right, vw, past, inner: el.scrollWidth - el.clientWidth, text: el.textContent.slice(0, 80) };
        });
        const where = `the lint tooltip of ${what} at ${width}px (${r.text})`;
        assert.ok(r.left >= -0.5 && r.right <= r.vw + 0.5, `${where}: ${Math.round(r.left)} to ${Math.round(r.right)} in ${r.vw}px`);
        assert.deepEqual(r.past, [], `${where}: past the window's edge`);
        // Its text wraps inside it (a caret snippet scrolls in a box of its own).
        assert.ok(r.inner <= 1, `${where}: ${r.inner}px of its content scroll sideways`);
        if (width === 390) await page.screenshot({ path: path.join(resultsDir, `layout-lint-390-${what.replace(/ /g, '-')}.png`) });
      }
    }
  } finally {
    await page.close();
  }
});

test('an embed frame follows its content\'s height down as well as up, at 320, 390, 800 and 1400 px', async (t) => {
  // A docs page on another origin with the Embed dialog's snippet: the frame takes the height it is told.
  const docs = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(`<!doctype html><body style="margin:0"><iframe id="f" src="${server.url}embed/" style="width:1400px;border:0" height="560"></iframe>` +
      '<script>addEventListener("message",function(e){if(e.data&&e.data.type==="crdplay:resize")document.getElementById("f").height=e.data.height})</script></body>');
  });
  await new Promise((resolve) => docs.listen(0, '127.0.0.1', resolve));
  t.after(() => docs.close());
  const host = await browser.context.newPage();
  try {
    await host.setViewportSize({ width: 1400, height: 900 });
    await host.goto(`http://127.0.0.1:${docs.address().port}/`);
    const frame = await (await host.waitForSelector('#f')).contentFrame();
    await evaluated(frame, 0);
    // Narrow first (one column: tall), then wider and back: the frame must follow each way.
    const seen = [];
    for (const width of [320, 1400, 390, 800, 1400, 320]) {
      await host.evaluate((w) => { document.getElementById('f').style.width = `${w}px`; }, width);
      await frame.waitForFunction((w) => document.documentElement.clientWidth === w, width);
      let m;
      for (let i = 0; i < 50; i++) {
        await nextFrames(frame);
        m = {
          frame: await host.evaluate(() => document.getElementById('f').getBoundingClientRect().height),
          content: await frame.evaluate(() => Math.ceil(document.body.getBoundingClientRect().height)),
        };
        if (Math.abs(m.frame - m.content) <= 1) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      seen.push(`${width}: ${Math.round(m.frame)} for ${m.content}`);
      assert.ok(Math.abs(m.frame - m.content) <= 1, `a ${width}px embed frame is ${Math.round(m.frame)}px high for ${m.content}px of content (${seen.join(', ')})`);
    }
  } finally {
    await host.close();
  }
});
