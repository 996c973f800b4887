// Rendering of the results panes from the engine's evaluation (crdplay.evaluate's result, as it comes). Plain
// DOM: the panes are lists and tables, and the page's bundle stays small.
import type { CrdplayCompatRule, CrdplayKubernetesRange, CrdplayDiagnostic, CrdplayEvaluateResult, CrdplayExchange, CrdplayObjectResult, CrdplayRequest, CrdplayResponse, CrdplaySchemaNode, CrdplaySource } from '../static/crdplay.d.ts';
import type { ExplainKind } from './evaluate';
import { diagnosticText, editorOf, GOTO_EVENT, shapeMessage, type GotoDetail, type ShapedMessage } from './editors';
import './panes.css';
import { documents, stringify, toValue, valueNodeAt, yamlScalar } from './yaml';
import { describe, explainTree, rules, type KindSchema } from './schema';
import { compatLine, minorName, reasonsText, ruleMinor, rulesByField, ruleTitle, type RuleOutcome } from './versions';

type Child = Node | string | null | undefined | false;

/** A DOM element: h('div', {class: 'x'}, 'text', child). */
export function h(tag: string, attrs: Record<string, string | boolean | undefined> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c) el.append(c);
  return el;
}

export function statusBadge(status: number): HTMLElement {
  const cls = status === 0 ? 'pending' : status < 300 ? 'ok' : status < 500 ? 'bad' : 'fault';
  return h('span', { class: `badge ${cls}` }, String(status || '…'));
}

function pre(text: string, cls = ''): HTMLElement {
  return h('pre', { class: `code ${cls}` }, text);
}

const editorNames: Record<string, string> = { crd: 'CRD', objects: 'objects', old: 'old objects', oldcrd: 'old CRD' };

/** A link that shows a place of an editor's text: the editor scrolls there, selects it and takes the focus
 * (editors.ts listens for GOTO_EVENT). */
export function gotoLink(source: CrdplaySource, span: { line: number; column?: number; endLine?: number; endColumn?: number }, ...label: Child[]): HTMLElement {
  const a = h('a', { href: '#', class: 'goto', title: `show line ${span.line} of the ${editorNames[editorOf(source) ?? ''] ?? source} editor`,
    'data-source': source, 'data-line': String(span.line) }, ...label);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    const detail: GotoDetail = { source, line: span.line, column: span.column, endLine: span.endLine, endColumn: span.endColumn };
    document.dispatchEvent(new CustomEvent(GOTO_EVENT, { detail }));
  });
  return a;
}

/** A message of the API as the panes show it: its text (after prefix) without Go dumps, CEL's caret
 * snippet preformatted, and the API's own words behind an expander when they differ. */
function message(text: string, prefix = '', cls = 'error'): Node[] {
  const m = shapeMessage(text);
  return [h('p', { class: cls }, prefix + m.text), ...beneath(m)];
}

/** What the panes show below a shaped message's text: CEL's caret snippet, and the API's own words. */
function beneath(m: ShapedMessage): HTMLElement[] {
  return [
    m.snippet ? h('pre', { class: 'code snippet' }, m.snippet) : null,
    m.full ? asTheAPISaid(m.full) : null,
  ].filter((n): n is HTMLElement => !!n);
}

/** The API's own words behind an expander. */
function asTheAPISaid(text: string): HTMLElement {
  return h('details', { class: 'full-message' }, h('summary', {}, 'as the API said it'), h('pre', { class: 'code wrap' }, text));
}

/** A Warning header of an answer; a link to its place when the engine placed it at a field. */
function warning(w: string, res: CrdplayEvaluateResult, source: CrdplaySource, document: number, item = 0): HTMLElement {
  // A warning about a line of the document the API was sent is placed and said with the editor's line; its
  // detail is the API's words.
  const d = res.diagnostics.find((x) => x.type === 'Warning' && (x.message === w || x.detail === w) && x.source === source && x.document === document && (x.item ?? 0) === item);
  return h('p', { class: 'warning' }, 'Warning: ', d?.field ? gotoLink(d.source, d, w) : w);
}

/** Finds the diagnostic the engine placed for a cause's field, for a link to it. */
type Placer = (field: string) => CrdplayDiagnostic | undefined;

function placer(res: CrdplayEvaluateResult, source: CrdplaySource, document: number, item = 0): Placer {
  return (field) => res.diagnostics.find((d) => d.source === source && d.document === document && (d.item ?? 0) === item && d.field === field);
}

/** Finds the diagnostics that say an answer's message (one without causes: a document the API could not
 * decode) in a person's words, at their places: those whose detail is the message. */
type Sayer = (message: string) => CrdplayDiagnostic[];

function sayer(res: CrdplayEvaluateResult, source: CrdplaySource, document: number, item = 0): Sayer {
  return (message) => res.diagnostics.filter((d) => d.source === source && d.document === document && (d.item ?? 0) === item && d.detail === message);
}

/** The Result pane: acceptance of each CRD, then each object's outcome with its stored form. */
/** Renders the Result pane; target is the Kubernetes minor the page checks for (versions.ts); crdText is the
 * CRD editor's text, where the documents that are not CRDs are named from. */
export function renderResult(pane: HTMLElement, res: CrdplayEvaluateResult, target: number, crdText?: string): void {
  const out: Node[] = [];
  const others = notCheckedList(res, { crds: crdText });
  if (!res.crds.length) out.push(h('p', { class: 'muted' }, others ? 'No CustomResourceDefinition in the CRD editor: its documents are of other kinds.' : 'No CustomResourceDefinition in the CRD editor.'));
  for (const c of res.crds) {
    const name = c.name ?? `document ${c.document + 1}`;
    const sec = h('section', { class: `crd-result ${c.accepted ? 'accepted' : 'rejected'}`, 'data-crd': name });
    sec.append(h('h3', {}, statusBadge(c.status), ` CustomResourceDefinition ${name}: `, c.accepted ? 'accepted' : 'rejected'));
    // A refused CRD works nowhere as written: its refusal below says why, and the CEL pane each rule's version.
    if (c.compat && c.accepted) {
      const short = c.compat.minor === 0 || c.compat.minor > target;
      sec.append(h('p', { class: `compat${short ? ' warning' : ''}`, title: reasonsText(c.compat.reasons) || undefined, 'data-minor': String(c.compat.minor) },
        compatLine(c.compat, res.kubernetes), short ? ` Not on the target, Kubernetes ${minorName(target)}.` : ''));
    }
    if (c.compat?.emulation) sec.append(h('p', { class: 'compat-emulation warning' }, c.compat.emulation.message));
    if (c.accepted) {
      const names = c.acceptedNames;
      const conds = (c.conditions ?? []).map((x) => `${x.type}=${x.status}${x.reason ? ` (${x.reason})` : ''}`);
      const served = c.versions.filter((v) => v.served).map((v) => v.name + (v.storage ? ' (storage)' : ''));
      sec.append(h('dl', { class: 'facts' },
        h('dt', {}, 'kind'), h('dd', {}, `${names?.kind ?? ''} (${c.scope ?? ''}), plural ${names?.plural ?? ''}` + (names?.shortNames?.length ? `, short names ${names.shortNames.join(', ')}` : '')),
        h('dt', {}, 'served versions'), h('dd', {}, served.join(', ') || 'none'),
        h('dt', {}, 'conditions'), h('dd', {}, conds.join(', ') || 'none yet'),
      ));
    } else {
      sec.append(statusBlock(c.error, placer(res, 'crds', c.document), sayer(res, 'crds', c.document)));
    }
    for (const w of c.warnings ?? []) sec.append(warning(w, res, 'crds', c.document));
    out.push(sec);
  }
  if (others) out.push(others);
  for (const o of res.objects) out.push(objectResult(o, res));
  pane.replaceChildren(...out);
}

/** A document's kind, name and apiVersion as its text has them (each '' when it has none). */
function documentMeta(text: string | undefined, index: number): { kind: string; name: string; apiVersion: string } | null {
  if (text === undefined) return null;
  const d = documents(text)[index];
  if (!d) return null;
  const str = (path: string[]) => {
    const v = toValue(text, valueNodeAt(text, d, path));
    return typeof v === 'string' ? v : '';
  };
  return { kind: str(['kind']), name: str(['metadata', 'name']), apiVersion: str(['apiVersion']) };
}

/** The engine's NotChecked message names the document: "not checked: Namespace shop (v1) is not a ...", or
 * "not applied: ValidatingAdmissionPolicy p (admissionregistration.k8s.io/v1) is admission configuration...". */
function metaOfMessage(message: string): { kind: string; name: string; apiVersion: string } {
  const m = /^not (?:checked|applied): (\S+)(?: ([^\s(]\S*))?(?: \(([^)]*)\))? is /.exec(message);
  return { kind: m?.[1] ?? '', name: m?.[2] ?? '', apiVersion: m?.[3] ?? '' };
}

/**
 * The documents of the CRD editors that are not CRDs (a bundle's Namespaces, RBAC, Deployments...), each listed
 * once as not checked, with its kind, name and a link to its line: the engine notes each with an info
 * diagnostic of type NotChecked, and admission configuration (policies, bindings, webhook configurations) with
 * a warning, since a cluster holding it would run it on the writes answered here. texts are the editors'
 * texts by source, where kind and name are read from; null when there is no such document.
 */
export function notCheckedList(res: CrdplayEvaluateResult, texts: Partial<Record<CrdplaySource, string>>): HTMLElement | null {
  const seen = new Set<string>();
  const notes = res.diagnostics.filter((d) => {
    // An item of a List document (kubectl get -o yaml exports one) is noted at its own line.
    const key = `${d.source}\u0000${d.document}\u0000${d.line}`;
    if (d.type !== 'NotChecked' || !editorOf(d.source) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (!notes.length) return null;
  const where: Record<string, string> = { crds: 'CRD', oldCrds: 'old CRD', objects: 'objects', oldObjects: 'old objects' };
  return h('section', { class: 'not-checked' },
    h('h3', {}, `Not checked (${notes.length})`),
    h('p', { class: 'muted' }, 'Not CustomResourceDefinitions: the playground checks CRDs and the objects they define.' +
      (notes.some((d) => d.severity === 'warning') ? ' Admission policies, their bindings and webhook configurations are not applied: the answers here are those of a cluster without them.' : '')),
    h('ul', {}, ...notes.map((d) => {
      const doc = documentMeta(texts[d.source], d.document);
      const m = doc && doc.kind !== 'List' ? doc : metaOfMessage(d.message);
      const what = `${m.kind || 'document'}${m.name ? ` ${m.name}` : ''}`;
      const applied = d.severity === 'warning';
      return h('li', { 'data-kind': m.kind, 'data-name': m.name, 'data-source': d.source, class: applied ? 'warning' : undefined },
        h('span', { class: 'what' }, what), m.apiVersion ? h('span', { class: 'muted' }, ` (${m.apiVersion})`) : null,
        applied ? ': not applied (a cluster holding it would run it on these writes), ' : ': not checked, ',
        gotoLink(d.source, d, `${where[d.source] ?? d.source} line ${d.line}`));
    })));
}

export function statusBlock(body: any, place?: Placer, say?: Sayer): HTMLElement {
  if (!body || typeof body !== 'object') return pre(String(body ?? ''), 'error');
  const causes: any[] = body.details?.causes ?? [];
  const text = String(body.message ?? '');
  const prefix = `${body.reason ?? 'Failure'}: `;
  // A message that joins several causes with their CEL snippets interleaves the snippets with the text: its
  // first line heads the causes, each shown below with its own snippet, and the whole is behind the expander.
  const joined = causes.length > 1 && shapeMessage(text).snippet !== undefined;
  // A message about a document the API could not decode is said as the engine placed it (the editor's
  // lines, no hex of the body, YAML's words for Go's types), each problem linked to its place.
  const said = causes.length ? [] : (say?.(text) ?? []);
  const box = h('div', { class: 'status-error' }, ...(said.length
    ? [h('p', { class: 'error' }, prefix.trim()),
      h('ul', { class: 'causes' }, ...said.map((d) => h('li', {}, gotoLink(d.source, d, `line ${d.line}, column ${d.column}`), `: ${diagnosticText(d)}`))),
      asTheAPISaid(text)]
    : joined
      ? [h('p', { class: 'error' }, `${prefix}${shapeMessage(text.split('\n')[0]).text} …`),
        asTheAPISaid(text)]
      : message(text, prefix)));
  if (causes.length) {
    box.append(h('ul', { class: 'causes' }, ...causes.map((c) => {
      const field = String(c.field ?? '');
      const d = field ? place?.(field) : undefined;
      const m = shapeMessage(String(c.message ?? ''));
      return h('li', {},
        d ? gotoLink(d.source, d, h('code', {}, field)) : h('code', {}, field), ' ', m.text,
        c.reason ? h('span', { class: 'muted' }, ` (${c.reason})`) : null,
        ...beneath(m));
    })));
  }
  return box;
}

/** An object's name in the panes: its kind and name, or where it is in the text when it has no kind. */
function objectTitle(o: CrdplayObjectResult): string {
  return o.kind ? `${o.kind} ${o.name ?? ''}`.trim() : `document ${o.document + 1}` + (o.item ? `, items[${o.item - 1}]` : '');
}

/** What was sent for an object, with each answer's status: its old object's create (update, status), then
 * the operation. */
function steps(o: CrdplayObjectResult, res: CrdplayEvaluateResult): string {
  const old = res.oldObjects.filter((x) => x.kind === o.kind && x.name === o.name && x.namespace === o.namespace);
  return [
    ...old.map((x) => `${x.seeded ? 'seed old' : 'create old'} ${x.status}`),
    ...(o.operation ? [`${o.operation} ${o.status}`] : []),
  ].join(' → ');
}

function objectResult(o: CrdplayObjectResult, res: CrdplayEvaluateResult): HTMLElement {
  const ok = o.status > 0 && o.status < 300;
  const sec = h('section', { class: `object-result ${ok ? 'accepted' : 'rejected'}`, 'data-doc': String(o.document), 'data-item': String(o.item ?? 0) });
  sec.append(h('h3', {}, statusBadge(o.status), ` ${objectTitle(o)}: `, steps(o, res) || 'not sent'));
  for (const w of o.warnings ?? []) sec.append(warning(w, res, o.source, o.document, o.item ?? 0));
  if (o.status === 0) {
    // Never sent (a YAML error, no kind, a kind no CRD serves): say why, where, instead of an empty answer.
    const errs = res.diagnostics.filter((d) => d.source === o.source && d.document === o.document && (d.item ?? 0) === (o.item ?? 0) && d.severity === 'error');
    sec.append(errs.length
      ? h('ul', { class: 'not-sent' }, ...errs.map((d) => h('li', {}, gotoLink(d.source, d, `line ${d.line}, column ${d.column}`), `: ${diagnosticText(d)}`)))
      : h('p', { class: 'muted' }, 'Not sent to the API.'));
    return sec;
  }
  if (!ok) {
    // The API's Status: a refused update leaves the old object stored, but the answer is the refusal.
    sec.append(statusBlock(o.response, placer(res, o.source, o.document, o.item ?? 0), sayer(res, o.source, o.document, o.item ?? 0)));
    return sec;
  }
  if (o.deleted) {
    sec.append(h('p', {}, `Success: ${o.name ?? ''} deleted`));
    return sec;
  }
  // Server-set metadata (uid, creationTimestamp...) is marked too; the panes show the other marks.
  const marks = o.marks.filter((m) => m.kind !== 'server');
  const defaulted = marks.filter((m) => m.kind === 'defaulted').map((m) => m.path);
  const pruned = marks.filter((m) => m.kind === 'pruned').map((m) => m.path);
  const others = marks.filter((m) => m.kind !== 'pruned' && m.kind !== 'defaulted');
  sec.append(h('div', { class: 'marks' },
    defaulted.length ? h('span', { class: 'mark defaulted' }, `defaulted: ${defaulted.join(', ')}`) : null,
    pruned.length ? h('span', { class: 'mark pruned' }, `pruned: ${pruned.join(', ')}`) : null,
    ...others.map((m) => h('span', { class: `mark ${m.kind}` }, `${m.kind}: ${m.path}`)),
    o.cel ? h('span', { class: 'mark cost' }, `CEL runtime cost ${o.cel.used} of ${o.cel.budget}`) : null,
  ));
  let text: string;
  if (o.storedYAML) {
    // The engine's kubectl-style YAML; its marks carry their line in it.
    const lines = o.storedYAML.replace(/\n$/, '').split('\n');
    for (const m of marks) {
      if (m.stored && m.kind !== 'pruned' && lines[m.stored.line - 1] !== undefined && !lines[m.stored.line - 1].includes('  # ')) {
        lines[m.stored.line - 1] += `  # ${m.kind}`;
      }
    }
    text = lines.join('\n') + '\n';
  } else {
    text = stringify(withoutManagedFields(o.stored ?? o.response), new Map(defaulted.map((p) => [p, 'defaulted'])));
  }
  const yaml = pre(text, 'stored');
  yaml.setAttribute('data-stored', '');
  sec.append(h('details', { open: true }, h('summary', {}, 'stored object (managedFields hidden)'), yaml));
  if (o.operation === 'scale' && o.response) sec.append(h('details', {}, h('summary', {}, 'scale subresource'), pre(stringify(o.response))));
  return sec;
}

/** A rule's button that puts it in the scratchpad. */
function tryButton(onClick: () => void): HTMLElement {
  const b = h('button', { type: 'button', class: 'try', title: 'Try this rule in the scratchpad above, on an object' }, 'try');
  b.addEventListener('click', onClick);
  return b;
}

/** The CEL pane: the engine's cost estimate of every rule of every CRD version, and the runtime cost of each
 * object; the rules of the CRD text's schemas when the engine found no version. */
/** Renders the CEL pane; target is the Kubernetes minor the page checks for (versions.ts); onTry puts a rule in
 * the scratchpad (scratch.ts). */
export function renderCEL(pane: HTMLElement, kinds: KindSchema[], res: CrdplayEvaluateResult, target: number, onTry?: (rule: string, self: string, crd: string, version: string) => void): void {
  const out: Node[] = [];
  const versions = res.crds.flatMap((c) => {
    const compat = rulesByField(c);
    return c.versions.map((v, i) => ({ crd: c.name ?? '', version: v.name, cost: v.cel, compat, emulation: i === 0 ? c.compat?.emulation : undefined }));
  });
  if (versions.length) {
    const lim = res.celLimits;
    out.push(h('p', { class: 'muted' }, `Limits: ${lim.perExpression.toLocaleString()} per expression, ${lim.perCRD.toLocaleString()} per CRD (estimated); ${lim.runtimeBudget.toLocaleString()} at run time per object.`));
    // The first results of a new CRD text come before its analysis (main.ts asks for it next).
    if (res.analysisPending) out.push(h('p', { class: 'muted', 'data-pending': 'analysis' }, 'Estimating the rules\' costs…'));
    for (const c of versions) {
      if (!c.cost?.rules?.length && !c.cost?.skipped) continue;
      out.push(h('h3', {}, `${c.crd} ${c.version}: estimated ${c.cost.total.toLocaleString()}${c.cost.exceedsLimit ? ' (over the limit)' : ''}`));
      if (c.cost.skipped) out.push(h('p', { class: 'muted' }, c.cost.skipped));
      if (c.emulation) out.push(h('p', { class: 'compat-emulation warning' }, c.emulation.message));
      out.push(h('table', { class: 'grid cel' },
        h('tr', {}, h('th', {}, 'field'), h('th', {}, 'rule'), h('th', { title: 'worst case of one evaluation × how many times it can run for one object' }, 'estimated cost'),
          h('th', {}, `of ${lim.perExpression.toLocaleString()}`),
          h('th', { title: 'the oldest Kubernetes version whose API server accepts the rule in a new CRD' }, 'Kubernetes')),
        ...(c.cost.rules ?? []).flatMap((r) => [h('tr', { class: r.exceedsLimit || r.error ? 'over' : '' },
          // data-label: a narrow pane shows each row as a block of labelled lines (panes.css).
          h('td', { 'data-label': 'field' }, r.span ? gotoLink('crds', r.span, h('code', {}, r.self || r.field)) : h('code', {}, r.self || r.field)),
          h('td', { 'data-label': 'rule' }, h('code', {}, r.rule),
            onTry ? tryButton(() => onTry(r.rule, r.self, c.crd, c.version)) : null, r.transition ? h('span', { class: 'muted' }, r.optionalOldSelf ? ' (transition rule, optionalOldSelf)' : ' (transition rule: updates only)') : null),
          h('td', { 'data-label': 'estimated cost' }, `${r.maxCost.toLocaleString()} × ${r.cardinality.toLocaleString()}${r.cardinalityBounded ? '' : ' (no maxItems/maxProperties: estimated)'} = ${r.cost.toLocaleString()}`),
          h('td', { class: r.error ? 'error' : '', 'data-label': `of ${lim.perExpression.toLocaleString()}` }, r.error ? 'error' : r.exceedsLimit ? 'exceeds the limit' : `${((r.cost / lim.perExpression) * 100).toPrecision(2)}%`),
          kubernetesCell(c.compat.get(r.field), r, target, res.kubernetes, lim.perExpression)),
        // A compile error (with CEL's caret snippet) gets a row of its own, across the table: in a column
        // it would be squeezed a word per line.
        r.error ? h('tr', { class: 'over rule-error-row' }, h('td', { colspan: '5' }, ...message(r.error, '', 'rule-error'))) : null,
        ]).filter((x): x is HTMLElement => !!x)));
    }
    const runtime = res.objects.filter((o) => o.cel);
    if (runtime.length) {
      out.push(h('h3', {}, 'Runtime cost of the objects'));
      out.push(h('ul', {}, ...runtime.map((o) => h('li', {}, `${objectTitle(o)}: ${o.cel!.used.toLocaleString()} of ${o.cel!.budget.toLocaleString()}`))));
    }
  } else {
    for (const k of kinds) {
      const rs = rules(k.schema);
      out.push(h('h3', {}, `${k.kind} ${k.version}: ${rs.length} rule${rs.length === 1 ? '' : 's'}`));
      if (rs.length) out.push(h('table', { class: 'grid' }, h('tr', {}, h('th', {}, 'field'), h('th', {}, 'rule'), h('th', {}, 'message')),
        ...rs.map((r) => h('tr', {}, h('td', {}, h('code', {}, r.path)), h('td', {}, h('code', {}, r.rule)), h('td', {}, r.message ?? '')))));
    }
  }
  const celMsgs = res.diagnostics.map((d) => ({ d, text: diagnosticText(d) })).filter(({ text }) => /cost|CEL|rule|x-kubernetes-validations/i.test(text));
  if (celMsgs.length) {
    out.push(h('h3', {}, 'What the engine said about rules'));
    out.push(h('ul', { class: 'engine-said' }, ...celMsgs.map(({ d, text }) => h('li', { class: d.severity },
      gotoLink(d.source, d, `${editorOf(d.source) ?? d.source} line ${d.line}`), ': ', ...message(text, '', 'said')))));
  }
  if (!out.length) out.push(h('p', { class: 'muted' }, 'No x-kubernetes-validations rules in the schemas.'));
  pane.replaceChildren(...out);
}

/** The Table pane: kubectl get's table of each resource, wide or not. */
/** A rule's oldest Kubernetes minor, with its reasons as tooltip; marked when the target is older, and when no
 * version accepts it, why (it does not compile, or costs too much). */
function kubernetesCell(r: CrdplayCompatRule | undefined, o: RuleOutcome, target: number, range: CrdplayKubernetesRange, limit: number): HTMLElement {
  if (!r) return h('td', { class: 'kubernetes', 'data-label': 'Kubernetes' });
  const short = r.minor === 0 || r.minor > target;
  return h('td', { class: `kubernetes${r.minor === 0 ? ' error' : short ? ' warning' : ''}`, 'data-label': 'Kubernetes', title: ruleTitle(r, o, range, limit) }, ruleMinor(r, o));
}

export function renderTable(pane: HTMLElement, res: CrdplayEvaluateResult, wide: boolean, onWide: (w: boolean) => void): void {
  const toggle = h('label', { class: 'toggle' }, h('input', { type: 'checkbox', id: 'table-wide', checked: wide }), ' wide (-o wide)');
  toggle.querySelector('input')!.addEventListener('change', (e) => onWide((e.target as HTMLInputElement).checked));
  const out: Node[] = [toggle];
  // Absent from an evaluation made while the pane was hidden: showing it evaluates again (main.ts).
  for (const t of res.tables ?? []) {
    if (t.status !== 200) continue;
    const cols = t.columns.map((c, i) => ({ ...c, i })).filter((c) => wide || !c.priority);
    out.push(h('h3', {}, `kubectl get ${t.crd} (${t.version})${wide ? ' -o wide' : ''}`));
    out.push(h('table', { class: 'grid kubectl' },
      h('tr', {}, ...cols.map((c) => h('th', { title: c.description ?? '' }, c.name.toUpperCase()))),
      ...t.rows.map((r) => h('tr', {}, ...cols.map((c) => h('td', {}, cell(r.cells[c.i], c.type))))),
    ));
  }
  if (out.length === 1) out.push(h('p', { class: 'muted' }, 'No object was stored, so there is nothing to list.'));
  pane.replaceChildren(...out);
}

function cell(v: unknown, type: string): string {
  if (v === null || v === undefined) return '<none>';
  if (type === 'date' && typeof v === 'string' && Number.isFinite(Date.parse(v))) {
    // kubectl prints a date column as the age of the time it holds.
    const s = Math.max(0, Math.round((Date.now() - Date.parse(v)) / 1000));
    return s < 120 ? `${s}s` : s < 7200 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
  }
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** The Versions pane: each object read in every served version. */
export function renderVersions(pane: HTMLElement, res: CrdplayEvaluateResult, webhookBox: HTMLElement): void {
  const out: Node[] = [];
  const usesWebhook = res.crds.some((c) => c.accepted && c.conversion === 'Webhook');
  out.push(h('p', { class: 'muted' }, usesWebhook
    ? 'Conversion strategy Webhook: the engine calls the JavaScript function below for every conversion.'
    : 'Conversion strategy None: only apiVersion changes between versions. With strategy Webhook, the function below converts.'));
  for (const o of res.objects) {
    if (!o.versions?.length) continue;
    out.push(h('h3', {}, objectTitle(o)));
    out.push(h('div', { class: 'versions' }, ...o.versions.map((v) => h('div', { class: 'version' },
      h('h4', {}, statusBadge(v.status), ' ', v.version),
      v.status < 300 ? pre(v.yaml ?? stringify(withoutManagedFields(v.object))) : statusBlock(v.object ?? { message: v.error })))));
  }
  out.push(webhookBox);
  pane.replaceChildren(...out);
}

/** An object without metadata.managedFields, as kubectl get -o yaml shows it. */
function withoutManagedFields(o: any): any {
  const c = structuredClone(o);
  if (c?.metadata) delete c.metadata.managedFields;
  return c;
}

/**
 * The Explain pane: kubectl explain --recursive of each kind, with descriptions on demand. From the engine's
 * explain trees (engine) once it has evaluated, else (the engine not there yet, or unable to start) from the
 * page's own reading of the CRD text.
 */
export function renderExplain(pane: HTMLElement, kinds: KindSchema[], engine?: ExplainKind[]): void {
  if (engine) {
    renderEngineExplain(pane, engine);
    return;
  }
  pane.dataset.source = 'page';
  if (!kinds.length) {
    pane.replaceChildren(h('p', { class: 'muted' }, 'No schema: the CRD editor has no CustomResourceDefinition with a schema.'));
    return;
  }
  const out: Node[] = [];
  for (const k of kinds) {
    out.push(h('h3', {}, `KIND: ${k.kind}`, h('br'), `VERSION: ${k.group}/${k.version}`));
    out.push(tree(k.schema, ''));
    out.push(h('details', {}, h('summary', {}, 'as kubectl explain --recursive prints it'), pre(explainTree(k.schema).join('\n'))));
  }
  pane.replaceChildren(...out);
}

function tree(s: any, path: string, depth = 0): HTMLElement {
  const ul = h('ul', { class: 'explain' });
  if (depth > 30) return ul;
  const req = new Set<string>(s.required ?? []);
  for (const [k, p] of Object.entries<any>(s.properties ?? {})) {
    const lines = describe(k, p, req.has(k));
    const inner = p.type === 'array' ? p.items : (typeof p.additionalProperties === 'object' && !p.properties ? p.additionalProperties : p);
    const li = fieldItem(lines);
    if (inner?.properties) li.append(tree(inner, path ? `${path}.${k}` : k, depth + 1));
    ul.append(li);
  }
  return ul;
}

/** A field of an explain tree: its kubectl explain line, and the rest of its lines when opened. */
function fieldItem(lines: string[], attrs: Record<string, string> = {}): HTMLElement {
  return h('li', attrs, h('details', {}, h('summary', {}, h('code', {}, lines[0])), ...lines.slice(1).map((l) => h('div', { class: 'desc' }, l))));
}

/** The version the Explain pane shows (crd/version), once one was picked. */
let explainChoice = '';

function renderEngineExplain(pane: HTMLElement, kinds: ExplainKind[]): void {
  pane.dataset.source = 'engine';
  if (!kinds.length) {
    pane.replaceChildren(h('p', { class: 'muted' }, 'No schema: the CRD editor has no CustomResourceDefinition version with a schema.'));
    return;
  }
  const out: Node[] = [];
  // One version at a time, as kubectl explain --api-version shows it: a CRD of many versions (or several
  // CRDs) would otherwise be one long page of near-identical trees. The choice stays across evaluations.
  const id = (k: ExplainKind) => `${k.crd}/${k.version}`;
  const shown = kinds.find((k) => id(k) === explainChoice) ?? kinds.find((k) => k.served) ?? kinds[0];
  if (kinds.length > 1) {
    const many = new Set(kinds.map((k) => k.crd)).size > 1;
    const select = h('select', { class: 'explain-version', 'aria-label': 'version to explain' },
      ...kinds.map((k) => h('option', { value: id(k), selected: k === shown },
        `${many ? `${k.kind} ` : ''}${k.version}${k.served ? '' : ' (not served)'}`))) as HTMLSelectElement;
    select.addEventListener('change', () => {
      explainChoice = select.value;
      renderEngineExplain(pane, kinds);
    });
    out.push(h('label', { class: 'explain-pick' }, 'version ', select));
  }
  for (const k of [shown]) {
    out.push(h('h3', {}, k.group ? `GROUP: ${k.group}` : null, k.group ? h('br') : null, `KIND: ${k.kind}`, h('br'), `VERSION: ${k.version}`,
      k.served ? null : h('span', { class: 'muted' }, ' (not served)')));
    if (k.tree.description) out.push(h('p', { class: 'desc' }, k.tree.description));
    // A huge schema (argo-workflows: ~9,000 fields) would take most of a second to lay out in full: its
    // fields below the second level are then built when their list is opened.
    out.push(engineTree(fieldsOf(k.tree), 0, countFields(k.tree) > LAZY_EXPLAIN_FIELDS ? 2 : Infinity));
    // The text view is built when opened: for a big CRD it is thousands of lines nobody asked for yet.
    const text = h('details', { class: 'explain-text' }, h('summary', {}, 'as kubectl explain --recursive prints it'));
    text.addEventListener('toggle', () => {
      if (text.childElementCount === 1) text.append(pre(explainRecursive(k)));
    });
    out.push(text);
  }
  pane.replaceChildren(...out);
}

/** The fields under a node as kubectl explain lists them: its properties, then those of its list items or map
 * values (a field of type []Object or map[string]Object lists its elements' fields). */
function fieldsOf(n: CrdplaySchemaNode): CrdplaySchemaNode[] {
  const out = [...(n.properties ?? [])];
  if (n.items) out.push(...fieldsOf(n.items));
  if (n.additionalProperties) out.push(...fieldsOf(n.additionalProperties));
  return out;
}

const LAZY_EXPLAIN_FIELDS = 2000;

function countFields(n: CrdplaySchemaNode): number {
  let c = 0;
  for (const f of fieldsOf(n)) c += 1 + countFields(f);
  return c;
}

function engineTree(fields: CrdplaySchemaNode[], depth = 0, lazyFrom = Infinity): HTMLElement {
  const ul = h('ul', { class: 'explain' });
  for (const f of fields) {
    const lines = describeNode(f);
    const li = fieldItem(lines, { 'data-path': f.path });
    const inner = fieldsOf(f);
    if (inner.length && depth + 1 < lazyFrom) {
      li.append(engineTree(inner, depth + 1, lazyFrom));
    } else if (inner.length) {
      const more = h('details', { class: 'explain-more' }, h('summary', { class: 'muted' }, `${inner.length} field${inner.length === 1 ? '' : 's'}`)) as HTMLDetailsElement;
      more.addEventListener('toggle', () => {
        if (more.open && more.childElementCount === 1) more.append(engineTree(inner, depth + 1, depth + 2));
      });
      li.append(more);
    }
    ul.append(li);
  }
  return ul;
}

// Values as YAML writes them on one line (a pattern's backslashes as they are, not JSON-escaped).
const yamlValue = (v: unknown) => yamlScalar(v);

/** Lines describing an engine tree node: the kubectl explain line, description, then facts and CEL rules. */
function describeNode(n: CrdplaySchemaNode): string[] {
  const out = [`${n.name} <${n.explain}>${n.required ? ' -required-' : ''}`];
  if (n.description) out.push(n.description);
  const facts: string[] = [];
  if (n.format) facts.push(`format: ${n.format}`);
  if (n.default !== undefined) facts.push(`default: ${yamlValue(n.default)}`);
  if (n.enum) facts.push(`enum: ${n.enum.map(yamlValue).join(', ')}`);
  if (n.nullable) facts.push('nullable');
  const v = n.validations ?? {};
  if (v.minimum !== undefined) facts.push(`minimum: ${v.minimum}${v.exclusiveMinimum ? ' (exclusive)' : ''}`);
  if (v.maximum !== undefined) facts.push(`maximum: ${v.maximum}${v.exclusiveMaximum ? ' (exclusive)' : ''}`);
  for (const k of ['multipleOf', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'minProperties', 'maxProperties'] as const) {
    if (v[k] !== undefined) facts.push(`${k}: ${yamlValue(v[k])}`);
  }
  if (v.uniqueItems) facts.push('uniqueItems');
  if (n.preserveUnknownFields) facts.push('x-kubernetes-preserve-unknown-fields');
  if (n.embeddedResource) facts.push('x-kubernetes-embedded-resource');
  if (n.listType) facts.push(`list-type: ${n.listType}`);
  if (n.listMapKeys?.length) facts.push(`list-map-keys: ${n.listMapKeys.join(', ')}`);
  if (n.mapType) facts.push(`map-type: ${n.mapType}`);
  const c = n.combinators;
  if (c) facts.push([c.allOf && `allOf: ${c.allOf}`, c.anyOf && `anyOf: ${c.anyOf}`, c.oneOf && `oneOf: ${c.oneOf}`, c.not && 'not'].filter(Boolean).join(', '));
  if (n.builtin) facts.push('every object has it (not in the CRD\'s schema)');
  if (facts.length) out.push(facts.join(' · '));
  for (const r of n.rules ?? []) {
    const more = [r.message && `message: ${r.message}`, r.messageExpression && `messageExpression: ${r.messageExpression}`,
      r.reason && `reason: ${r.reason}`, r.fieldPath && `fieldPath: ${r.fieldPath}`, r.optionalOldSelf && 'optionalOldSelf'].filter(Boolean);
    out.push(`rule: ${r.rule}${more.length ? ` (${more.join(', ')})` : ''}`);
  }
  return out;
}

/** kubectl explain <kind> --recursive, as its plaintext template prints it (k8s.io/kubectl/pkg/explain/v2). */
function explainRecursive(k: ExplainKind): string {
  const out: string[] = [];
  if (k.group) out.push(`GROUP:      ${k.group}`);
  out.push(`KIND:       ${k.kind}`, `VERSION:    ${k.version}`, '', 'DESCRIPTION:');
  out.push(wrap(k.tree.description || '<empty>', 76).map((l) => `    ${l}`).join('\n'));
  const fields: string[] = [];
  const walk = (n: CrdplaySchemaNode, level: number) => {
    for (const p of n.properties ?? []) {
      const indent = ' '.repeat(level * 2);
      let line = `${indent}${p.name}\t<${p.explain}>${p.required ? ' -required-' : ''}`;
      if (p.enum?.length) {
        const shown = p.enum.slice(0, 4).map((e) => (e === '' ? '""' : typeof e === 'string' ? e : JSON.stringify(e)));
        line += `\n${indent}enum: ${shown.join(', ')}${p.enum.length > 4 ? ', ....' : ''}`;
      }
      fields.push(line);
      walk(p, level + 1);
    }
    if (n.items) walk(n.items, level);
    if (n.additionalProperties) walk(n.additionalProperties, level);
  };
  walk(k.tree, 1);
  if (fields.length) out.push('FIELDS:', ...fields);
  return out.join('\n') + '\n';
}

/** Words of text in lines of at most width characters (longer words alone on their line), paragraphs kept. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const para of text.split('\n')) {
    let cur = '';
    for (const w of para.split(/ +/)) {
      if (cur && cur.length + 1 + w.length > width) {
        lines.push(cur);
        cur = w;
      } else {
        cur = cur ? `${cur} ${w}` : w;
      }
    }
    lines.push(cur);
  }
  return lines;
}

/**
 * One request and its answer in the HTTP log, which has the evaluations' requests (crdplay.evaluate's
 * exchanges), the command line's raw requests and kubectl's: one shape for the three.
 */
export interface Exchange {
  request: CrdplayRequest;
  response: CrdplayResponse;
  /** Milliseconds; NaN when the engine did not time it. */
  ms: number;
}

/** An evaluation's exchange, for the log. */
export function traced(x: CrdplayExchange): Exchange {
  const headers: Record<string, string> = {};
  if (x.contentType) headers['Content-Type'] = x.contentType;
  if (x.accept) headers.Accept = x.accept;
  return {
    request: { method: x.method, path: x.path, headers, body: x.requestBody },
    response: { status: x.status, headers: x.warnings?.length ? { Warning: x.warnings } : {}, body: x.body },
    ms: NaN,
  };
}

/** Each exchange's element in the log, once built: the log grows by an evaluation's requests at a time, and
 * what it showed already is not built again (an opened exchange stays open). */
const logNodes = new WeakMap<Exchange, HTMLElement>();

/** The HTTP log: every request of the last evaluation and of the command line, with the exact answer. */
export function renderLog(pane: HTMLElement, log: Exchange[]): void {
  pane.replaceChildren(
    h('p', { class: 'muted' }, `${log.length} request${log.length === 1 ? '' : 's'} through window.crdplay.request (newest last).`),
    ...log.map((x, i) => {
      let el = logNodes.get(x);
      if (!el) logNodes.set(x, (el = exchange(x, i)));
      el.dataset.i = String(i);
      return el;
    }),
  );
}

function exchange(x: Exchange, i: number): HTMLElement {
  const r = x.request;
  const headers = Object.entries(r.headers ?? {}).map(([k, v]) => `${k}: ${v}`).join('\n');
  const resp = x.response;
  const respHeaders = Object.entries(resp.headers).flatMap(([k, v]) => ([] as string[]).concat(v).map((vv) => `${k}: ${vv}`)).join('\n');
  return h('details', { class: 'exchange', 'data-i': String(i) },
    h('summary', {}, statusBadge(resp.status), ` ${r.method ?? 'GET'} ${r.path}`, Number.isFinite(x.ms) ? h('span', { class: 'muted' }, ` ${x.ms.toFixed(1)} ms`) : null),
    pre(`${r.method ?? 'GET'} ${r.path}\n${headers}${r.body ? '\n\n' + r.body : ''}`, 'request'),
    pre(`HTTP ${resp.status}\n${respHeaders}\n\n${prettyJSON(resp.body)}`, 'response'),
  );
}

export function prettyJSON(s: string): string {
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}
