// The upgrade mode's pane: what a change of CRDs does to the objects already stored (crdplay.evaluate's
// result .upgrade, playground/upgrade.go). The editors may hold bundles: several CRDs each, paired by name
// (updated, added, removed), beside documents that are not CRDs (listed as not checked). First the verdict in
// a line, then what stopped the check if anything did, then the API's answer to each CRD (with the storage
// migration a stored version's refusal asks for, run on request), then tables of the stored objects by served
// version (one per CRD when there are several) whose cells are the GET, no-op update, /status update and
// sent-again-as-new verdicts (each opening to the API's whole answer), then the static findings with the
// engine's evidence and the next step. Every verdict is the engine's REST API's answer; the page only lays them
// out and links them to their lines.
import type { CrdplayDiagnostic, CrdplayEvaluateResult, CrdplayFinding, CrdplayMigration, CrdplayUpgradeCheck, CrdplayUpgradeCRD, CrdplayUpgradeObject } from '../static/crdplay.d.ts';
import { diagnosticText, editorOf } from './editors';
import { gotoLink, h, notCheckedList, statusBadge, statusBlock } from './panes';
import { documents } from './yaml';
import './upgrade.css';

/** The ops of a version's checks, in the order a cell shows them, and how it names them. */
const OPS: { op: CrdplayUpgradeCheck['op']; label: string; title: string }[] = [
  { op: 'get', label: 'GET', title: 'GET: what a client now reads' },
  { op: 'update', label: 'update', title: 'a no-op PUT of what the GET read: the next write, which ratcheting may let through' },
  { op: 'status', label: 'status', title: 'the same PUT to /status' },
  { op: 'dryrun', label: 'as new', title: 'the stored object sent again as a new object (dryRun=All): the new schema without ratcheting' },
];

/** What a cell says of a failed check that the same write under the old CRD failed too. */
const PRE_EXISTING = 'already refused before the upgrade';

/** The editors' titles in the upgrade mode; the others keep the page's (page.templ). */
const TITLES: Record<string, string> = {
  crd: 'New CRDs (sent as updates of the old CRDs)',
  objects: 'Stored objects (created under the old CRDs)',
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

const ok = (status: number) => status >= 200 && status < 300;

/** Which CRD text a source is, in words. */
const textName = (source: string) => (source === 'oldCrds' ? 'old CRD' : source === 'history' ? 'earlier CRD' : 'new CRD');

/** The editors' texts the report places things in. */
export interface UpgradeTexts {
  objects: string;
  crds: string;
  oldCrds: string;
}

/** What the pane can ask the page to do. migrate evaluates the same texts again with the storage migration
 * (the input's migrate), once. */
export interface UpgradeActions {
  migrate?: () => void;
}

/** Renders the upgrade report of res into pane; texts are the editors' (for the links to each object's lines
 * and the names of the documents not checked). */
export function renderUpgrade(pane: HTMLElement, res: CrdplayEvaluateResult, texts: UpgradeTexts, actions: UpgradeActions = {}): void {
  const rep = res.upgrade;
  if (!rep) {
    pane.replaceChildren(h('p', { class: 'error' }, 'This engine gave no upgrade report: it has no CRD upgrade mode.'));
    return;
  }
  const crds = rep.crds ?? [rep.crd];
  const several = crds.length > 1;
  const out: Node[] = [verdictLine(rep.verdict, rep.summary)];
  const problems = problemsSection(res, crds);
  if (problems) out.push(problems);
  for (const c of crds) out.push(crdSection(res, c, actions));
  if (rep.objects.length || crds.some((c) => c.accepted)) out.push(objectsSection(res, texts.objects, several));
  // A finding whose evidence is a CRD's refusal has the refusal's next step, said once, under the refusal.
  const shown = new Map<string, string>();
  for (const c of crds) for (const f of refusalFixes(res, c)) shown.set(f, c.name);
  out.push(findingsSection(rep.findings, several, shown));
  const others = notCheckedList(res, { crds: texts.crds, oldCrds: texts.oldCrds });
  if (others) out.push(others);
  pane.replaceChildren(...out);
}

/** The verdict in a line: safe (green), warnings (amber), breaks or refused (red). */
function verdictLine(verdict: string | undefined, summary: string | undefined): HTMLElement {
  const v = verdict ?? '';
  const tone = v === 'safe' ? 'ok' : v === 'warnings' ? 'warn' : 'bad';
  return h('p', { class: `upgrade-verdict ${tone}`, 'data-verdict': v, role: 'status' }, summary || v || 'no verdict');
}

/** Errors of the CRD texts that stopped part of the check and that no section below shows (an old CRD the
 * API refuses, an empty text, a text that does not parse): each linked to its line. */
function problemsSection(res: CrdplayEvaluateResult, crds: CrdplayUpgradeCRD[]): HTMLElement | null {
  const rep = res.upgrade!;
  // A refused CRD's causes are in its section, with its Status.
  const refused = crds.filter((c) => c.error !== undefined && c.source === 'crds').map((c) => c.document);
  const errors = res.diagnostics.filter((d) => (d.source === 'oldCrds' || d.source === 'crds') && d.severity === 'error' && d.type !== 'Warning'
    && !(d.source === 'crds' && refused.includes(d.document))
    && !rep.findings.some((f) => f.field === d.field && f.line === d.line && f.source === d.source));
  if (!errors.length) return null;
  return h('section', { class: 'upgrade-problems' }, h('h3', {}, `Not checked in full (${errors.length})`),
    h('ul', { class: 'not-sent' }, ...errors.map((d) => h('li', {},
      gotoLink(d.source, d, `${textName(d.source)} line ${d.line}`), `: ${diagnosticText(d)}`,
      d.fix ? nextStep(d.fix) : null))));
}

/** "Next step: ..." under a problem. */
function nextStep(fix: string): HTMLElement {
  return h('p', { class: 'next-step' }, h('strong', {}, 'Next step: '), fix);
}

/** What happened to a CRD, in a few words. */
function crdVerdict(c: CrdplayUpgradeCRD): string {
  switch (c.change) {
    case 'removed': return 'not in the new CRDs: left as it is';
    case 'added': return c.status === 0 ? 'added, not sent' : c.accepted ? 'added: created' : 'added: create refused';
    default: return c.status === 0 ? 'not sent' : c.accepted ? 'update accepted' : 'update refused';
  }
}

/** The next steps the engine gives for a refused CRD's causes (its error diagnostics' fix), each once. */
function refusalFixes(res: CrdplayEvaluateResult, c: CrdplayUpgradeCRD): string[] {
  if (c.accepted || !c.error) return [];
  const mine = (d: CrdplayDiagnostic) => d.source === c.source && d.document === c.document && d.severity === 'error' && !!d.fix;
  return [...new Set(res.diagnostics.filter(mine).map((d) => d.fix!))];
}

/** A refusal of a CRD update for a version still in status.storedVersions: what a storage migration clears. */
function storedVersionRefusal(c: CrdplayUpgradeCRD): boolean {
  const causes: any[] = c.error?.details?.causes ?? [];
  return !c.accepted && causes.some((x) => String(x?.field ?? '').startsWith('status.storedVersions'));
}

function crdSection(res: CrdplayEvaluateResult, c: CrdplayUpgradeCRD, actions: UpgradeActions): HTMLElement {
  const name = c.name || 'the CRD';
  const state = c.change === 'removed' ? 'removed' : c.accepted ? 'accepted' : c.status === 0 ? 'not-sent' : 'rejected';
  const sec = h('section', { class: `upgrade-crd ${state}`, 'data-crd': c.name, 'data-change': c.change, 'data-status': String(c.status) },
    h('h3', {}, c.change === 'removed' ? null : statusBadge(c.status), c.change === 'removed' ? '' : ' ', `CustomResourceDefinition ${name}: ${crdVerdict(c)}`));
  const where = c.line && editorOf(c.source) ? gotoLink(c.source, { line: c.line }, `${textName(c.source)} line ${c.line}`) : null;
  const change = c.change === 'updated' ? 'updated (PUT over the old CRD)' : c.change === 'added' ? 'added (POSTed: the old CRDs do not have it)'
    : c.change === 'removed' ? 'removed: not in the new CRDs, left as it is (kubectl apply deletes nothing)' : c.change;
  sec.append(h('dl', { class: 'facts' },
    h('dt', {}, 'change'), h('dd', { class: 'change' }, change, where ? ', ' : '', where),
    ...(c.storedVersions?.length ? [h('dt', {}, 'stored versions'), h('dd', { class: 'stored-versions' }, c.storedVersions.join(', '))] : []),
    ...(c.change !== 'added' ? [h('dt', {}, 'stored objects'), h('dd', {}, String(c.objects ?? 0))] : []),
  ));
  if (c.status === 0 && c.change === 'updated') {
    sec.append(h('p', { class: 'muted' }, 'The new CRD was not sent as an update: the old CRD was not accepted (see above).'));
  }
  if (!c.accepted && c.error) {
    sec.append(statusBlock(c.error, (field) => res.diagnostics.find((d) => d.source === c.source && d.document === c.document && d.field === field)));
    for (const f of refusalFixes(res, c)) sec.append(nextStep(f));
  }
  for (const w of c.warnings ?? []) sec.append(h('p', { class: 'warning' }, `Warning: ${w}`));
  const migration = res.upgrade!.migrations?.find((m) => m.crd === c.name);
  if (migration) sec.append(migrationBlock(migration));
  else if (storedVersionRefusal(c) && actions.migrate) sec.append(migrateButton(actions.migrate));
  return sec;
}

/** The button that evaluates again with the storage migration, and what it does. */
function migrateButton(migrate: () => void): HTMLElement {
  const button = h('button', { type: 'button', class: 'migrate' }, 'Run the storage migration') as HTMLButtonElement;
  button.addEventListener('click', () => {
    button.disabled = true;
    button.textContent = 'Running the storage migration…';
    migrate();
  });
  return h('div', { class: 'migrate-offer' }, button, h('p', { class: 'muted' },
    'Through the API, as the Kubernetes docs describe it: every stored object of the CRD read and written back in the storage version, ' +
    'status.storedVersions set to the storage version alone (PUT /status), then the new CRD sent again.'));
}

/** A storage migration the engine ran: the objects rewritten, the /status PUT, and the new CRD's answer after. */
function migrationBlock(m: CrdplayMigration): HTMLElement {
  const box = h('div', { class: 'migration', 'data-crd': m.crd },
    h('h4', {}, `Storage migration to ${m.to || 'the storage version'}`));
  const steps = h('ul', { class: 'migration-steps' },
    m.from?.length ? h('li', {}, `stored versions before: ${m.from.join(', ')}`) : null,
    h('li', { class: 'rewritten' }, `objects rewritten in ${m.to}: ${m.rewritten}`),
    ...m.failed.map((f) => h('li', { class: 'failed error' }, `not rewritten: ${f}`)),
    h('li', { class: 'status-put' }, m.status ? statusBadge(m.status) : null, m.status ? ' ' : '',
      m.status ? `PUT /status with status.storedVersions [${m.to}]` : 'status.storedVersions not written: an object could not be rewritten'));
  box.append(steps);
  const r = m.retry;
  const retry = h('div', { class: `retry ${r.accepted ? 'accepted' : 'rejected'}`, 'data-status': String(r.status) });
  if (r.status === 0) {
    retry.append(h('p', { class: 'muted' }, 'The new CRD was not sent again.'));
  } else {
    retry.append(h('p', {}, statusBadge(r.status), r.accepted ? ' update accepted after the migration' : ' update still refused after the migration'));
    if (!r.accepted && r.error) retry.append(statusBlock(r.error));
    for (const w of r.warnings ?? []) retry.append(h('p', { class: 'warning' }, `Warning: ${w}`));
  }
  box.append(retry);
  return box;
}

function objectsSection(res: CrdplayEvaluateResult, objects: string, several: boolean): HTMLElement {
  const rep = res.upgrade!;
  const sec = h('section', { class: 'upgrade-objects' }, h('h3', {}, `Stored objects after the upgrade (${rep.objects.length})`));
  if (!rep.objects.length) {
    sec.append(h('p', { class: 'muted' }, 'No object is stored: put the objects created under the old CRDs in the objects editor.'));
    return sec;
  }
  const lines = documentLines(objects);
  if (!several) {
    sec.append(objectsTable(res, rep.objects, lines));
    return sec;
  }
  // One table per CRD, in the report's order of the CRDs: each has its own served versions.
  const names = [...(rep.crds ?? []).map((c) => c.name), ...rep.objects.map((o) => o.crd)];
  for (const name of [...new Set(names)]) {
    const mine = rep.objects.filter((o) => o.crd === name);
    if (!mine.length) continue;
    sec.append(h('div', { class: 'upgrade-group', 'data-crd': name },
      h('h4', {}, `${name || 'no CRD'} (${mine.length})`), objectsTable(res, mine, lines)));
  }
  return sec;
}

/** Why an object has no checks: what happened to its CRD. */
function notCheckedReason(res: CrdplayEvaluateResult, o: CrdplayUpgradeObject): string {
  const c = (res.upgrade!.crds ?? []).find((x) => x.name === o.crd);
  if (c?.change === 'removed') return 'not checked: its CRD is not in the new CRDs';
  if (c && c.status === 0) return 'not checked: the CRD update was not sent';
  if (c && !c.accepted) return 'not checked: the CRD update was refused';
  return 'not checked';
}

function objectsTable(res: CrdplayEvaluateResult, objects: CrdplayUpgradeObject[], lines: number[]): HTMLElement {
  const rep = res.upgrade!;
  const versions: string[] = [];
  for (const o of objects) for (const c of o.checks) if (!versions.includes(c.version)) versions.push(c.version);
  const table = h('table', { class: 'grid upgrade' },
    h('thead', {}, h('tr', {}, h('th', {}, 'object'), ...(versions.length ? versions : ['']).map((v) => h('th', {}, v || 'no version checked')))));
  const body = h('tbody');
  for (const o of objects) {
    const line = lines[o.document];
    const who = `${o.kind} ${objectName(o)}`;
    const head = h('th', { scope: 'row' }, line ? gotoLink('objects', { line }, who) : who);
    if (o.seeded) {
      head.append(h('span', { class: 'seeded', title: o.seedReason ?? '' }, ' seeded'),
        h('div', { class: 'muted seed-reason' }, `the old CRD refused it: ${o.seedReason ?? ''}`));
    }
    // The findings the engine showed biting this object, named under it: the cells show what the API answers
    // now, these what its next change of that field meets.
    const bites = rep.findings.filter((f) => (!f.crd || !o.crd || f.crd === o.crd) && f.affected.includes(objectName(o)));
    if (bites.length) {
      head.append(h('ul', { class: 'bites' }, ...bites.map((f) => h('li', { class: `sev-${f.severity}` },
        gotoLink(f.source, f, f.rule), f.objectPath ? `: ${f.objectPath}` : ''))));
    }
    const row = h('tr', { 'data-object': objectName(o), 'data-crd': o.crd }, head);
    if (!o.checks.length) row.append(h('td', { class: 'muted', colspan: String(Math.max(1, versions.length)) }, notCheckedReason(res, o)));
    else for (const v of versions) row.append(cell(o, v));
    body.append(row);
  }
  table.append(body);
  return h('div', { class: 'upgrade-scroll' }, table);
}

/** The causes of a failed answer, as field and message: the Status's causes, or its message without any. */
function causeKeys(err: any): Set<string> {
  const out = new Set<string>();
  const causes: any[] = err?.details?.causes ?? [];
  for (const c of causes) out.add(`${c?.field ?? ''}\u0000${c?.message ?? ''}`);
  if (!out.size && err?.message !== undefined) out.add(`\u0000${err.message}`);
  return out;
}

/** Whether a failed check met the refusal the same write met under the old CRD (its before: same op, the same
 * causes), so that the upgrade did not cause it. */
function preExisting(o: CrdplayUpgradeObject, c: CrdplayUpgradeCheck): boolean {
  if (ok(c.status) || c.op === 'get') return false;
  const keys = causeKeys(c.error);
  if (!keys.size) return false;
  return (o.before ?? []).some((b) => b.op === c.op && !ok(b.status) && [...keys].every((k) => causeKeys(b.error).has(k)));
}

/** A cell: the version's verdicts as badges, opening to each answer in full. */
function cell(o: CrdplayUpgradeObject, version: string): HTMLElement {
  const checks = o.checks.filter((c) => c.version === version);
  const td = h('td', { 'data-version': version });
  if (!checks.length) {
    td.append(h('span', { class: 'muted' }, '—'));
    return td;
  }
  const pre = new Set(checks.filter((c) => preExisting(o, c)));
  const failed = checks.some((c) => !ok(c.status) && !pre.has(c));
  const warned = checks.some((c) => c.warnings.length);
  const summary = h('summary', {});
  for (const { op, label, title } of OPS) {
    const c = checks.find((x) => x.op === op);
    if (!c) continue;
    const was = pre.has(c);
    summary.append(h('span', { class: `verdict${was ? ' pre-existing' : ''}`, 'data-op': op, title: was ? `${title} — ${PRE_EXISTING}` : title },
      `${label} `, statusBadge(c.status)));
  }
  if (pre.size && !failed) summary.append(h('span', { class: 'pre-existing-note' }, ` ${PRE_EXISTING}`));
  if (warned) summary.append(h('span', { class: 'warning' }, ' ⚠'));
  const details = h('details', { class: `verdicts ${failed ? 'failed' : pre.size ? 'pre-existing' : 'passed'}` }, summary) as HTMLDetailsElement;
  if (failed) details.open = true;
  for (const { op } of OPS) {
    const c = checks.find((x) => x.op === op);
    if (c) details.append(answer(c, pre.has(c)));
  }
  td.append(details);
  return td;
}

/** One check's answer: the API's message and warnings, its whole body behind an expander. */
function answer(c: CrdplayUpgradeCheck, pre: boolean): HTMLElement {
  const op = OPS.find((x) => x.op === c.op);
  const box = h('div', { class: `check${pre ? ' pre-existing' : ''}`, 'data-op': c.op, 'data-status': String(c.status) },
    h('h4', { title: op?.title }, statusBadge(c.status), ` ${op?.label ?? c.op}`));
  if (pre) box.append(h('p', { class: 'pre-existing-note' }, `${PRE_EXISTING}: the same write under the old CRD (dryRun=All) met the same refusal`));
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

/** shown are the next steps said under a CRD's refusal already, with the CRD's name. */
function findingsSection(findings: CrdplayFinding[], several: boolean, shown: Map<string, string>): HTMLElement {
  const sec = h('section', { class: 'upgrade-findings' }, h('h3', {}, `Findings (${findings.length})`));
  if (!findings.length) {
    sec.append(h('p', { class: 'muted' }, 'No static finding: the change removes, tightens or adds no rule the checks know.'));
    return sec;
  }
  const order: Record<string, number> = { error: 0, warning: 1, info: 2 };
  const sorted = [...findings].sort((a, b) => order[a.severity] - order[b.severity] || (several ? a.crd.localeCompare(b.crd) : 0) || a.line - b.line);
  sec.append(h('ul', { class: 'findings' }, ...sorted.map((f) => h('li', {
    class: `finding sev-${f.severity}`, 'data-rule': f.rule, 'data-severity': f.severity, 'data-crd': f.crd, 'data-refuses': String(!!f.refuses),
  },
    h('div', {}, h('span', { class: `severity sev-${f.severity}`, title: f.refuses ? 'the API refuses what the upgrade does here' : undefined }, f.severity), ' ',
      several && f.crd ? h('span', { class: 'finding-crd' }, `${f.crd} `) : null,
      h('strong', {}, f.rule),
      f.version ? h('span', { class: 'muted' }, ` (${f.version})`) : null, ' ',
      editorOf(f.source) ? gotoLink(f.source, f, h('code', {}, f.field || 'the CRD')) : h('code', {}, f.field || 'the CRD'),
      h('span', { class: 'muted' }, ` ${textName(f.source)} line ${f.line}`)),
    h('div', { class: 'finding-message' }, f.objectPath ? h('code', {}, f.objectPath) : null, f.objectPath ? ': ' : '', f.message),
    h('div', { class: `evidence${f.affected.length ? ' bites' : ''}` }, 'Evidence: ', f.evidence),
    !f.fix ? null : shown.has(f.fix)
      ? h('p', { class: 'next-step' }, h('strong', {}, 'Next step: '), `as under the API's refusal of ${shown.get(f.fix)} above`)
      : nextStep(f.fix),
  ))));
  return sec;
}
