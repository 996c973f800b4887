// One evaluation of the editors' contents: the requests a user would send to a real API server for the chosen
// operation, sent through window.crdplay.request to the engine in the worker, and what came back, arranged for
// the panes. Every verdict (accepted or not, the stored object, warnings, messages) is the engine's answer;
// this file only chooses the requests and places the answers (field paths to YAML positions).
import type { CrdplayRequest, CrdplayResponse } from '../static/crdplay.d.ts';
import { documents, fieldPaths, locate, parse, splitPath, toValue, lineCol, offsetOf, type YamlDoc } from './yaml';

export type Mode = 'create' | 'update' | 'status' | 'scale' | 'delete';
export type EditorId = 'crd' | 'objects' | 'old';

export interface Inputs {
  crd: string;
  objects: string;
  old: string;
  mode: Mode;
}

/** A message placed in an editor: offsets into that editor's text. */
export interface Diagnostic {
  editor: EditorId;
  /** Document index in that editor (as written, from 0). */
  doc: number;
  /** 1 + the index of the object among the items of a List document; 0 or absent when the document is the object. */
  item?: number;
  from: number;
  to: number;
  line: number;
  column: number;
  severity: 'error' | 'warning' | 'info';
  /** The field path the engine named, if any. */
  field?: string;
  message: string;
}

/** One request and its answer, for the HTTP log. */
export interface Exchange {
  request: CrdplayRequest;
  response?: CrdplayResponse;
  error?: string;
  ms: number;
}

export interface CRDResult {
  doc: number;
  name: string;
  status: number;
  accepted: boolean;
  /** The CRD as the server stored it (accepted), or the Status it answered. */
  body: any;
  warnings: string[];
}

export interface ObjectResult {
  doc: number;
  /** 1 + the object's index among the items of a List document; 0 or absent when the document is the object. */
  item?: number;
  title: string;
  /** The operation's decisive response. */
  status: number;
  /** The object as stored (or the response body: a Status for an error). */
  body: any;
  input: unknown;
  warnings: string[];
  /** Field paths in the input that the stored object lacks (pruned), and the reverse (defaulted). */
  pruned: string[];
  defaulted: string[];
  steps: { what: string; status: number }[];
  /** The kubectl get table of the object's resource (a meta.k8s.io Table), if it could be listed. */
  table?: any;
  /** The object read back in each served version. */
  versions: { version: string; status: number; body: any }[];
  scale?: any;
  /** From crdplay.evaluate: the differences with positions in the stored YAML, which it also gives. */
  marks?: { kind: string; path: string; stored?: { line: number } }[];
  storedYAML?: string;
  /** The CEL budget this object's validation used. */
  runtimeCost?: { used: number; budget: number };
}

export interface Evaluation {
  crds: CRDResult[];
  objects: ObjectResult[];
  diagnostics: Diagnostic[];
  log: Exchange[];
  /** kubectl get tables (meta.k8s.io Table bodies), one per resource. */
  tables: { title: string; table: any }[];
  /** Estimated CEL costs per CRD version and the limits (crdplay.evaluate only). */
  cel?: { crd: string; version: string; cost: import('./gosession').GoVersionCost }[];
  celLimits?: { perExpression: number; perCRD: number; perCall: number; runtimeBudget: number };
  /** The engine's explain trees of the CRD versions (crdplay.evaluate only). */
  explain?: import('./gosession').ExplainKind[];
  /** Which path produced this: the engine's playground package, or requests from the page. */
  via: 'evaluate' | 'requests';
  crdCached?: boolean;
  ms: number;
}

type Send = (req: CrdplayRequest) => Promise<CrdplayResponse>;

/**
 * What one evaluation leaves for the next: when the CRD text has not changed, the next one keeps the CRDs
 * in the store (creating a big CRD takes the engine seconds: validation, structural schema, CEL compilation)
 * and only removes the objects this one created.
 */
export interface Session {
  crdText?: string;
  crds?: CRDResult[];
  /** Item paths of the objects created, to remove before the next evaluation. */
  created: string[];
}

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const YAML = { 'Content-Type': 'application/yaml' };

/** Metadata the server sets (or takes from the URL, like namespace): never "defaulted" in the marks. */
const serverFields = /^metadata\.(uid|resourceVersion|generation|creationTimestamp|managedFields|deletionTimestamp|deletionGracePeriodSeconds|selfLink|namespace)\b/;

export async function evaluate(crdplay: { request: Send; reset(): Promise<void> }, inputs: Inputs, session: Session = { created: [] }): Promise<Evaluation> {
  const start = performance.now();
  const log: Exchange[] = [];
  const send: Send = async (request) => {
    const t0 = performance.now();
    const entry: Exchange = { request, ms: 0 };
    log.push(entry);
    try {
      entry.response = await crdplay.request(request);
      return entry.response;
    } catch (e: any) {
      entry.error = e?.error ?? String(e);
      throw e;
    } finally {
      entry.ms = performance.now() - t0;
    }
  };
  const diagnostics: Diagnostic[] = [];
  const crdTree = parse(inputs.crd);
  const crdDocs = documents(inputs.crd, crdTree);
  let crds: CRDResult[] = [];
  const reuse = session.crdText === inputs.crd && session.crds !== undefined;
  if (reuse) {
    // Same CRDs: remove the previous evaluation's objects (finalizers first, so that they really go).
    crds = session.crds!;
    for (const path of session.created) {
      await send({ method: 'PATCH', path, headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"metadata":{"finalizers":null}}' });
      await send({ method: 'DELETE', path });
    }
    for (const c of crds) {
      const doc = crdDocs.find((d) => d.index === c.doc);
      if (doc) diagnostics.push(...place('crd', inputs.crd, doc, c.status, c.status < 300 ? null : c.body, c.warnings));
    }
  } else {
    await crdplay.reset();
  }
  session.created = [];
  session.crdText = inputs.crd;
  session.crds = undefined;

  // CRDs first, as kubectl apply would send them.
  for (const doc of reuse ? [] : crdDocs) {
    const resp = await send({ method: 'POST', path: CRDS, headers: YAML, body: doc.text });
    const body = json(resp.body);
    const warnings = headerList(resp, 'Warning').map(warningText);
    crds.push({ doc: doc.index, name: body?.metadata?.name ?? (toValue(inputs.crd, doc.node) as any)?.metadata?.name ?? `document ${doc.index + 1}`, status: resp.status, accepted: resp.status < 300, body, warnings });
    diagnostics.push(...place('crd', inputs.crd, doc, resp.status, body, warnings));
  }
  // The CRDs' conditions (Established, NamesAccepted) are set after the create, as on a real server.
  for (const c of reuse ? [] : crds) {
    if (!c.accepted) continue;
    const resp = await send({ method: 'GET', path: `${CRDS}/${c.name}` });
    if (resp.status === 200) c.body = json(resp.body);
  }

  const objects: ObjectResult[] = [];
  const objDocs = documents(inputs.objects);
  const oldDocs = documents(inputs.old);
  const discovery = new Map<string, any>();
  const resourceOf = async (apiVersion: string, kind: string) => {
    if (!discovery.has(apiVersion)) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const resp = await send({ method: 'GET', path });
      discovery.set(apiVersion, resp.status === 200 ? json(resp.body) : null);
    }
    const list = discovery.get(apiVersion);
    return (list?.resources ?? []).find((r: any) => r.kind === kind && !r.name.includes('/')) as { name: string; namespaced: boolean } | undefined;
  };
  const urlOf = async (obj: any): Promise<string | string> => {
    const res = await resourceOf(String(obj?.apiVersion ?? ''), String(obj?.kind ?? ''));
    if (!res) return '';
    const base = String(obj.apiVersion).includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
    const ns = res.namespaced ? `/namespaces/${encodeURIComponent(obj?.metadata?.namespace || 'default')}` : '';
    return `${base}${ns}/${res.name}`;
  };

  for (let i = 0; i < objDocs.length; i++) {
    const doc = objDocs[i];
    const input = toValue(inputs.objects, doc.node) as any;
    if (inputs.mode === 'scale' && input?.kind === 'Scale') continue; // the /scale body of the previous object
    const title = input?.kind ? `${input.kind} ${input?.metadata?.name ?? input?.metadata?.generateName ?? ''}`.trim() : `document ${doc.index + 1}`;
    const r: ObjectResult = { doc: doc.index, title, status: 0, body: null, input, warnings: [], pruned: [], defaulted: [], steps: [], versions: [] };
    objects.push(r);
    const collection = await urlOf(input);
    if (!collection) {
      const msg = !input?.apiVersion || !input?.kind
        ? 'apiVersion and kind are required to find the resource'
        : `no kind "${input.kind}" is served in ${input.apiVersion} (is its CRD above accepted and the version served?)`;
      r.status = 404;
      r.body = { kind: 'Status', status: 'Failure', message: msg };
      diagnostics.push(at('objects', inputs.objects, doc, ['kind'], 'error', msg));
      continue;
    }
    const name = input?.metadata?.name;
    const item = name ? `${collection}/${encodeURIComponent(name)}` : '';
    const step = async (what: string, req: CrdplayRequest, editor: EditorId, text: string, d: YamlDoc) => {
      const resp = await send(req);
      const body = json(resp.body);
      const warnings = headerList(resp, 'Warning').map(warningText);
      r.steps.push({ what, status: resp.status });
      r.warnings.push(...warnings);
      diagnostics.push(...place(editor, text, d, resp.status, body, warnings));
      return { resp, body };
    };

    let final: { resp: CrdplayResponse; body: any } | null = null;
    switch (inputs.mode) {
      case 'create':
        final = await step('create', { method: 'POST', path: collection, headers: YAML, body: doc.text }, 'objects', inputs.objects, doc);
        break;
      case 'update':
      case 'status': {
        // The old object (same position in the old editor, else the first), created first; then the change.
        const oldDoc = oldDocs[Math.min(i, oldDocs.length - 1)];
        const base = oldDoc ?? doc;
        const created = await step('create old', { method: 'POST', path: collection, headers: YAML, body: base === doc ? doc.text : oldDoc.text },
          base === doc ? 'objects' : 'old', base === doc ? inputs.objects : inputs.old, base);
        if (created.resp.status >= 300) {
          final = created;
          break;
        }
        if (!item) {
          final = created;
          break;
        }
        const sub = inputs.mode === 'status' ? '/status' : '';
        // An update of a custom resource must name the version it replaces (as kubectl replace sends it).
        const rv = created.body?.metadata?.resourceVersion;
        const body = input?.metadata?.resourceVersion || !rv ? doc.text : withResourceVersion(inputs.objects, doc, rv);
        final = await step(inputs.mode === 'status' ? 'update /status' : 'update', { method: 'PUT', path: item + sub, headers: YAML, body }, 'objects', inputs.objects, doc);
        break;
      }
      case 'scale': {
        const created = await step('create', { method: 'POST', path: collection, headers: YAML, body: doc.text }, 'objects', inputs.objects, doc);
        final = created;
        if (created.resp.status >= 300 || !item) break;
        const scaleDoc = objDocs.slice(i + 1).find((d) => (toValue(inputs.objects, d.node) as any)?.kind === 'Scale');
        if (scaleDoc) {
          const put = await step('update /scale', { method: 'PUT', path: item + '/scale', headers: YAML, body: scaleDoc.text }, 'objects', inputs.objects, scaleDoc);
          r.scale = put.body;
          if (put.resp.status >= 300) {
            final = put;
            break;
          }
        } else {
          r.scale = (await step('get /scale', { method: 'GET', path: item + '/scale' }, 'objects', inputs.objects, doc)).body;
        }
        final = await step('get', { method: 'GET', path: item }, 'objects', inputs.objects, doc);
        break;
      }
      case 'delete': {
        const created = await step('create', { method: 'POST', path: collection, headers: YAML, body: doc.text }, 'objects', inputs.objects, doc);
        final = created;
        if (created.resp.status >= 300 || !item) break;
        final = await step('delete', { method: 'DELETE', path: item }, 'objects', inputs.objects, doc);
        // With finalizers the object stays, with a deletionTimestamp; without, it is gone (404).
        const after = await step('get after delete', { method: 'GET', path: item }, 'objects', inputs.objects, doc);
        if (after.resp.status === 200) final = after;
        break;
      }
    }
    if (item && !session.created.includes(item)) session.created.push(item);
    r.status = final!.resp.status;
    r.body = final!.body;
    if (r.status < 300 && r.body?.metadata?.name && !session.created.includes(`${collection}/${encodeURIComponent(r.body.metadata.name)}`)) {
      session.created.push(`${collection}/${encodeURIComponent(r.body.metadata.name)}`);
    }
    if (r.status < 300 && r.body?.kind !== 'Status' && input && inputs.mode !== 'delete') {
      const have = new Set(fieldPaths(r.body).filter((p) => !serverFields.test(p)));
      const had = new Set(fieldPaths(input));
      if (inputs.mode !== 'status' && inputs.mode !== 'scale') r.pruned = [...had].filter((p) => !have.has(p) && !p.startsWith('status'));
      r.defaulted = [...have].filter((p) => !had.has(p) && !(inputs.mode === 'create' && p.startsWith('status')));
      r.pruned = topmost(r.pruned);
      r.defaulted = topmost(r.defaulted);
    }
    // The kubectl get table and the object in every served version.
    if (r.status < 300) {
      const list = await send({ method: 'GET', path: collection, headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
      if (list.status === 200) r.table = json(list.body);
      const crd = crds.find((c) => c.accepted && c.body?.spec?.names?.kind === input?.kind && c.body?.spec?.group === String(input?.apiVersion).split('/')[0]);
      if (item && r.body?.metadata?.name) {
        for (const v of crd?.body?.spec?.versions ?? []) {
          if (!v.served) continue;
          const path = item.replace(`/apis/${input.apiVersion}/`, `/apis/${crd!.body.spec.group}/${v.name}/`);
          const resp = await send({ method: 'GET', path });
          r.versions.push({ version: v.name, status: resp.status, body: json(resp.body) });
        }
      }
    }
  }
  session.crds = crds;
  const tables: Evaluation['tables'] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    if (o.table?.kind !== 'Table') continue;
    const title = `${o.input && (o.input as any).kind} (${(o.input as any)?.apiVersion})`;
    if (seen.has(title)) continue;
    seen.add(title);
    tables.push({ title, table: o.table });
  }
  return { crds, objects, diagnostics, log, tables, via: 'requests', ms: performance.now() - start };
}

/**
 * The document's text with metadata.resourceVersion added as a line before metadata.name. The engine's
 * messages name fields, which are placed on the original text, so the added line moves no diagnostic. A
 * document whose metadata has no block-style name is sent as JSON instead.
 */
function withResourceVersion(text: string, doc: YamlDoc, rv: string): string {
  const meta = locate(text, doc, ['metadata', 'name']);
  const value = toValue(text, doc.node) as any;
  if (!meta.exact) return JSON.stringify({ ...value, metadata: { ...(value?.metadata ?? {}), resourceVersion: rv } });
  const lineStart = text.lastIndexOf('\n', meta.from - 1) + 1;
  const indent = text.slice(lineStart, meta.from);
  if (!/^ +$/.test(indent)) return JSON.stringify({ ...value, metadata: { ...value.metadata, resourceVersion: rv } });
  return text.slice(doc.from, lineStart) + `${indent}resourceVersion: ${JSON.stringify(rv)}\n` + text.slice(lineStart, doc.to);
}

/** Only the outermost of nested paths: "spec.x" rather than "spec.x", "spec.x.y". */
function topmost(paths: string[]): string[] {
  const sorted = [...paths].sort();
  return sorted.filter((p) => !sorted.some((q) => q !== p && (p.startsWith(q + '.') || p.startsWith(q + '['))));
}

function json(s: string): any {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

function headerList(resp: CrdplayResponse, name: string): string[] {
  const v = resp.headers[name];
  return v === undefined ? [] : ([] as string[]).concat(v);
}

/** A Warning header's text: `299 - "message"` -> message. */
function warningText(h: string): string {
  const m = h.match(/^\d{3} \S+ "((?:[^"\\]|\\.)*)"/);
  return m ? m[1].replace(/\\(.)/g, '$1') : h;
}

/**
 * Where the CRD fields that upstream validates in its internal form are written in a v1 CRD: when every
 * version has the same schema (subresources, columns), the internal CRD holds it once at spec.validation
 * (spec.subresources, spec.additionalPrinterColumns), and the messages name that path, as kube-apiserver's do.
 * The text has it under spec.versions[i]: the first version that has the rest of the path is the place.
 */
const hoisted: [string, string[]][] = [
  ['validation', ['schema']],
  ['subresources', ['subresources']],
  ['additionalPrinterColumns', ['additionalPrinterColumns']],
];

function locateField(text: string, doc: YamlDoc, path: (string | number)[]) {
  const loc = locate(text, doc, path);
  if (loc.exact || path[0] !== 'spec') return loc;
  const h = hoisted.find(([k]) => path[1] === k);
  if (!h) return loc;
  const versions = (toValue(text, doc.node) as any)?.spec?.versions;
  let best = loc;
  for (let i = 0; i < (Array.isArray(versions) ? versions.length : 0); i++) {
    const alt = locate(text, doc, ['spec', 'versions', i, ...h[1], ...path.slice(2)]);
    if (alt.exact) return alt;
    if (alt.from > best.from) best = alt;
  }
  return best;
}

/** A diagnostic for a path of a document. */
function at(editor: EditorId, text: string, doc: YamlDoc, path: (string | number)[], severity: Diagnostic['severity'], message: string, field?: string): Diagnostic {
  const loc = locateField(text, doc, path);
  const { line, column } = lineCol(text, loc.from);
  return { editor, doc: doc.index, from: loc.from, to: Math.max(loc.to, loc.from + 1), line, column, severity, field, message };
}

/**
 * The diagnostics of one response: a Status's causes at their fields (or the whole message at the document's
 * start), a YAML syntax error at its line, and warnings that name a field ("unknown field \"spec.x\"").
 */
function place(editor: EditorId, text: string, doc: YamlDoc, status: number, body: any, warnings: string[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (status >= 400 && body && typeof body === 'object') {
    const causes: any[] = body.details?.causes ?? [];
    const syntax = String(body.message ?? '').match(/yaml: line (\d+): (.*)$/) ?? String(body.message ?? '').match(/line (\d+)(?:, column (\d+))?:? (.*)$/);
    if (causes.length) {
      for (const c of causes) {
        const field = c.field ?? '';
        const path = splitPath(field);
        const msg = c.message ? (field ? `${field}: ${c.message}` : c.message) : body.message;
        out.push(at(editor, text, doc, path, 'error', msg, field || undefined));
      }
    } else if (syntax && status === 400) {
      // The line is counted in the document the engine was sent.
      const docStart = lineCol(text, doc.from);
      const line = docStart.line + Number(syntax[1]) - 1 + (text[doc.from] === '\n' ? 1 : 0);
      const from = offsetOf(text, line, 1);
      const end = text.indexOf('\n', from);
      out.push({ editor, doc: doc.index, from, to: end < 0 ? text.length : end, line, column: 1, severity: 'error', message: body.message });
    } else {
      out.push(at(editor, text, doc, [], 'error', body.message ?? `HTTP ${status}`));
    }
  }
  for (const w of warnings) {
    const m = w.match(/unknown field "([^"]+)"/) ?? w.match(/^([\w.[\]-]+): /);
    out.push(at(editor, text, doc, m ? splitPath(m[1]) : [], 'warning', w, m?.[1]));
  }
  return out;
}
