// The upgrade mode's pane: what a CRD change does to the objects already stored (crdplay.evaluate's result
// .upgrade, playground/upgrade.go). First the API's answer to the new CRD PUT over the old one, then a table
// of the stored objects by served version whose cells are the GET, no-op update and /status update verdicts
// (each opening to the API's whole answer), then the static findings with the engine's evidence. Every verdict
// is the engine's REST API's answer; the page only lays them out and links them to their lines.
import type { CrdplayEvaluateResult, CrdplayFinding, CrdplayUpgradeCheck, CrdplayUpgradeObject } from '../static/crdplay.d.ts';
import { diagnosticText } from './editors';
import { gotoLink, h, statusBadge, statusBlock } from './panes';
import { documents } from './yaml';
import './upgrade.css';

/** The ops of a version's checks, in the order they are made, and how a cell names them. */
const OPS: { op: CrdplayUpgradeCheck['op']; label: string; title: string }[] = [
  { op: 'get', label: 'GET', title: 'GET: what a client now reads' },
  { op: 'update', label: 'update', title: 'a no-op PUT of what the GET read: the next write, which ratcheting may let through' },
  { op: 'status', label: 'status', title: 'the same PUT to /status' },
];

/** The editors' titles in the upgrade mode; the others keep the page's (page.templ). */
const TITLES: Record<string, string> = {
  crd: 'New CRD (sent as an update of the old CRD)',
  objects: 'Stored objects (created under the old CRD)',
};

/** Shows the old-CRD editor in the upgrade mode only, and names the CRD and objects editors for the mode. */
export function showUpgradeEditors(upgrade: boolean): void {
  const frame = document.getElementById('oldcrd-frame');
  if (frame) frame.hidden = !upgrade;
  for (const [id, title] of Object.entries(TITLES)) {
    const el = document.querySelector<HTMLElement>(`#${id}-frame .editor-title`);
    if (!el) continue;
    el.dataset.title ??= el.textContent ?? '';
    el.textContent = upgrade ? title : el.dataset.title;
    el.title = el.textContent ?? '';
  }
}

/** The 1-based line where each non-empty document of a text starts, as Go numbers the documents. */
function documentLines(text: string): number[] {
  const starts: number[] = [];
  let line = 1;
  let at = 0;
  for (const d of documents(text)) {
    for (; at < d.from; at++) if (text.charCodeAt(at) === 10) line++;
    starts.push(line);
  }
  return starts;
}

/** An object's name as the report gives it: namespace/name, as a finding's affected list names it. */
function objectName(o: CrdplayUpgradeObject): string {
  return o.namespace ? `${o.namespace}/${o.name}` : o.name;
}

/** Renders the upgrade report of res into pane; objects is the objects editor's text (for the links to each
 * object's lines). */
export function renderUpgrade(pane: HTMLElement, res: CrdplayEvaluateResult, objects: string): void {
  const rep = res.upgrade;
  const out: Node[] = [];
  // What stopped the check before the CRD update (an old CRD refused, an empty text, two CRDs): the
  // diagnostics of the CRD editors, linked to their lines.
  const crdErrors = res.diagnostics.filter((d) => (d.source === 'oldCrds' || d.source === 'crds') && d.severity === 'error' && d.type !== 'Warning'
    && !rep?.findings.some((f) => f.field === d.field && f.line === d.line && f.source === d.source));
  if (!rep) {
    out.push(h('p', { class: 'error' }, 'This engine gave no upgrade report: it has no CRD upgrade mode.'));
    pane.replaceChildren(...out);
    return;
  }
  out.push(crdSection(res, crdErrors));
  if (rep.objects.length || rep.crd.accepted) out.push(objectsSection(res, objects));
  out.push(findingsSection(rep.findings));
  pane.replaceChildren(...out);
}

function crdSection(res: CrdplayEvaluateResult, errors: CrdplayEvaluateResult['diagnostics']): HTMLElement {
  const c = res.upgrade!.crd;
  const name = c.name || 'the CRD';
  const verdict = c.status === 0 ? 'not sent' : c.accepted ? 'update accepted' : 'update refused';
  const sec = h('section', { class: `upgrade-crd ${c.accepted ? 'accepted' : 'rejected'}`, 'data-status': String(c.status) },
    h('h3', {}, statusBadge(c.status), ` CustomResourceDefinition ${name}: ${verdict}`));
  if (c.status === 0) {
    sec.append(h('p', { class: 'muted' }, 'The new CRD was not sent as an update: the check needs the old CRD accepted, and one CRD in each editor.'));
  }
  if (!c.accepted && c.error) sec.append(statusBlock(c.error, (field) => res.diagnostics.find((d) => d.source === 'crds' && d.field === field)));
  for (const w of c.warnings) sec.append(h('p', { class: 'warning' }, `Warning: ${w}`));
  if (c.status === 0 && errors.length) {
    sec.append(h('ul', { class: 'not-sent' }, ...errors.map((d) => h('li', {},
      gotoLink(d.source, d, `${d.source === 'oldCrds' ? 'old' : 'new'} CRD line ${d.line}`), `: ${diagnosticText(d)}`))));
  }
  return sec;
}

function objectsSection(res: CrdplayEvaluateResult, objects: string): HTMLElement {
  const rep = res.upgrade!;
  const sec = h('section', { class: 'upgrade-objects' }, h('h3', {}, `Stored objects after the upgrade (${rep.objects.length})`));
  if (!rep.objects.length) {
    sec.append(h('p', { class: 'muted' }, 'No object is stored: put the objects created under the old CRD in the objects editor.'));
    return sec;
  }
  const versions: string[] = [];
  for (const o of rep.objects) for (const c of o.checks) if (!versions.includes(c.version)) versions.push(c.version);
  const lines = documentLines(objects);
  const table = h('table', { class: 'grid upgrade' },
    h('thead', {}, h('tr', {}, h('th', {}, 'object'), ...(versions.length ? versions : ['']).map((v) => h('th', {}, v || 'no version checked')))));
  const body = h('tbody');
  for (const o of rep.objects) {
    const line = lines[o.document];
    const who = `${o.kind} ${objectName(o)}`;
    const head = h('th', { scope: 'row' }, line ? gotoLink('objects', { line }, who) : who);
    if (o.seeded) {
      head.append(h('span', { class: 'seeded', title: o.seedReason ?? '' }, ' seeded'),
        h('div', { class: 'muted seed-reason' }, `the old CRD refused it: ${o.seedReason ?? ''}`));
    }
    // The findings the engine showed biting this object, named under it: the cells show what the API answers
    // now, these what its next change of that field meets.
    const bites = rep.findings.filter((f) => f.affected.includes(objectName(o)));
    if (bites.length) {
      head.append(h('ul', { class: 'bites' }, ...bites.map((f) => h('li', { class: `sev-${f.severity}` },
        gotoLink(f.source, f, f.rule), f.objectPath ? `: ${f.objectPath}` : ''))));
    }
    const row = h('tr', { 'data-object': objectName(o) }, head);
    if (!versions.length) row.append(h('td', { class: 'muted' }, res.upgrade!.crd.accepted ? 'not checked' : 'not checked: the CRD update was refused'));
    for (const v of versions) row.append(cell(o, v));
    body.append(row);
  }
  table.append(body);
  sec.append(h('div', { class: 'upgrade-scroll' }, table));
  return sec;
}

/** A cell: the version's verdicts as badges, opening to each answer in full. */
function cell(o: CrdplayUpgradeObject, version: string): HTMLElement {
  const checks = o.checks.filter((c) => c.version === version);
  const td = h('td', { 'data-version': version });
  if (!checks.length) {
    td.append(h('span', { class: 'muted' }, '—'));
    return td;
  }
  const failed = checks.some((c) => c.status < 200 || c.status >= 300);
  const warned = checks.some((c) => c.warnings.length);
  const summary = h('summary', {});
  for (const { op, label, title } of OPS) {
    const c = checks.find((x) => x.op === op);
    if (c) summary.append(h('span', { class: 'verdict', 'data-op': op, title }, `${label} `, statusBadge(c.status)));
  }
  if (warned) summary.append(h('span', { class: 'warning' }, ' ⚠'));
  const details = h('details', { class: `verdicts ${failed ? 'failed' : 'passed'}` }, summary) as HTMLDetailsElement;
  if (failed) details.open = true;
  for (const c of checks) details.append(answer(c));
  td.append(details);
  return td;
}

/** One check's answer: the API's message and warnings, its whole body behind an expander. */
function answer(c: CrdplayUpgradeCheck): HTMLElement {
  const label = OPS.find((x) => x.op === c.op)?.label ?? c.op;
  const box = h('div', { class: 'check', 'data-op': c.op, 'data-status': String(c.status) }, h('h4', {}, statusBadge(c.status), ` ${label}`));
  if (c.error) box.append(statusBlock(c.error));
  for (const w of c.warnings) box.append(h('p', { class: 'warning' }, `Warning: ${w}`));
  const body = c.error ?? c.object;
  if (body !== undefined) {
    box.append(h('details', { class: 'full-message' }, h('summary', {}, c.error ? 'the API\'s whole answer' : 'the object as read'),
      h('pre', { class: 'code wrap' }, JSON.stringify(body, null, 2))));
  } else if (!c.error) {
    box.append(h('p', { class: 'muted' }, 'accepted'));
  }
  return box;
}

function findingsSection(findings: CrdplayFinding[]): HTMLElement {
  const sec = h('section', { class: 'upgrade-findings' }, h('h3', {}, `Findings (${findings.length})`));
  if (!findings.length) {
    sec.append(h('p', { class: 'muted' }, 'No static finding: the change removes, tightens or adds no rule the checks know.'));
    return sec;
  }
  const order: Record<string, number> = { error: 0, warning: 1, info: 2 };
  const sorted = [...findings].sort((a, b) => order[a.severity] - order[b.severity] || a.line - b.line);
  sec.append(h('ul', { class: 'findings' }, ...sorted.map((f) => h('li', { class: `finding sev-${f.severity}`, 'data-rule': f.rule, 'data-severity': f.severity },
    h('div', {}, h('span', { class: `severity sev-${f.severity}` }, f.severity), ' ', h('strong', {}, f.rule),
      f.version ? h('span', { class: 'muted' }, ` (${f.version})`) : null, ' ',
      gotoLink(f.source, f, h('code', {}, f.field || 'the CRD')),
      h('span', { class: 'muted' }, ` ${f.source === 'oldCrds' ? 'old' : 'new'} CRD line ${f.line}`)),
    h('div', { class: 'finding-message' }, f.objectPath ? h('code', {}, f.objectPath) : null, f.objectPath ? ': ' : '', f.message),
    h('div', { class: `evidence${f.affected.length ? ' bites' : ''}` }, 'Evidence: ', f.evidence),
  ))));
  return sec;
}
