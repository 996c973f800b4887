// The evaluation done by the engine's own playground package (crdplay.evaluate, playground.Session.Evaluate in
// Go) when the wasm has it: one call instead of a dozen requests, the CRDs kept installed while their text is
// the same (compiled schemas and CEL programs cached), plus what the REST API does not expose (CEL cost
// estimates, runtime cost). Its Result is converted here into the page's Evaluation, so that the panes are the
// same whichever path produced it. The shapes mirror playground/types.go.
import type { CrdplaySchemaNode } from '../static/crdplay.d.ts';
import type { CRDResult, Diagnostic, EditorId, Evaluation, Exchange, Inputs, ObjectResult } from './evaluate';
import { documents, offsetOf, toValue, valueNodeAt } from './yaml';

interface Span { line: number; column: number; endLine: number; endColumn: number }
interface GoDiagnostic extends Span { source: string; document: number; item?: number; field?: string; type: string; message: string; severity: 'error' | 'warning' | 'info'; exact: boolean }
interface GoMark { kind: string; path: string; value?: unknown; input?: Span; stored?: Span }
interface GoRule { field: string; self: string; rule: string; message?: string; messageExpression?: string; transition: boolean; optionalOldSelf?: boolean; maxCost: number; cardinality: number; cardinalityBounded: boolean; cost: number; messageExpressionCost?: number; exceedsLimit: boolean; error?: string }
export interface GoVersionCost { version: string; rules: GoRule[]; total: number; exceedsLimit: boolean; skipped?: string }
interface GoVersion { name: string; served: boolean; storage: boolean; cel: GoVersionCost; schema?: CrdplaySchemaNode }
interface GoCRD {
  document: number; name?: string; status: number; accepted: boolean; error?: unknown; warnings: string[]; established: boolean;
  acceptedNames?: { plural: string; kind: string; shortNames?: string[] }; conditions?: { type: string; status: string; reason?: string }[];
  group?: string; scope?: string; served: string[]; storage?: string; conversion?: string; versions: GoVersion[];
}
interface GoObject {
  source: string; document: number; item?: number; apiVersion?: string; kind?: string; namespace?: string; name?: string; operation?: string;
  method?: string; path?: string; status: number; accepted: boolean; response?: any; warnings: string[]; stored?: any; storedYAML?: string;
  marks: GoMark[]; versions: { version: string; status: number; object?: any; yaml?: string; error?: string }[];
  cel?: { used: number; budget: number }; seeded?: boolean; deleted?: boolean;
}
interface GoTable { crd: string; version: string; path: string; status: number; columns: { name: string; type: string; format?: string; description?: string; priority: number }[]; rows: { namespace?: string; name: string; cells: unknown[] }[]; error?: string }
interface GoExchange { method: string; path: string; contentType?: string; accept?: string; requestBody?: string; status: number; warnings: string[]; body: string }
export interface GoResult {
  crdRevision: string; crdCached: boolean; schemasOmitted: boolean; crds: GoCRD[]; oldObjects: GoObject[]; objects: GoObject[]; tables: GoTable[];
  diagnostics: GoDiagnostic[]; celLimits: { perExpression: number; perCRD: number; perCall: number; runtimeBudget: number };
  exchanges?: GoExchange[]; timings: { total: number; crds: number; objects: number };
}

const editorOf: Record<string, EditorId> = { crds: 'crd', objects: 'objects', oldObjects: 'old' };

/** The explain tree of one CRD version, computed by the engine (playground/internal/explain). */
export interface ExplainKind {
  crd: string;
  group: string;
  kind: string;
  version: string;
  served: boolean;
  tree: CrdplaySchemaNode;
}

/**
 * State kept between calls: the CRD text is sent only when it changed (the session keeps it installed), and
 * the explain trees of the last CRD revision are kept, so that the engine leaves them out of its answers
 * (knownCRDRevision) while the CRDs stay the same: a big CRD's trees are megabytes of JSON.
 */
export interface GoSession { crdText?: string; revision?: string; explain?: ExplainKind[] }

export async function evaluateGo(call: (input: string) => Promise<string>, inputs: Inputs, state: GoSession): Promise<Evaluation> {
  const t0 = performance.now();
  const input: Record<string, unknown> = { objects: inputs.objects, oldObjects: inputs.old, mode: inputs.mode, trace: true };
  if (state.crdText !== inputs.crd) input.crds = inputs.crd;
  if (state.revision && state.explain) input.knownCRDRevision = state.revision;
  const res: GoResult = JSON.parse(await call(JSON.stringify(input)));
  state.crdText = inputs.crd;
  if (!res.schemasOmitted || !state.explain) state.explain = explainKinds(res, inputs.crd);
  state.revision = res.crdRevision;
  const texts: Record<EditorId, string> = { crd: inputs.crd, objects: inputs.objects, old: inputs.old };

  const diagnostics: Diagnostic[] = res.diagnostics.map((d) => {
    const editor = editorOf[d.source] ?? 'objects';
    const text = texts[editor];
    const from = offsetOf(text, d.line, d.column);
    const to = Math.max(from + 1, offsetOf(text, d.endLine || d.line, d.endColumn || d.column + 1));
    return { editor, doc: d.document, item: d.item ?? 0, from, to, line: d.line, column: d.column, severity: d.severity, field: d.field, message: d.field && !d.message.startsWith(d.field) && d.type !== 'Warning' ? `${d.field}: ${d.message}` : d.message };
  });

  const crds: CRDResult[] = res.crds.map((c) => ({
    doc: c.document, name: c.name ?? `document ${c.document + 1}`, status: c.status, accepted: c.accepted, warnings: c.warnings ?? [],
    body: c.accepted
      ? { spec: { names: { kind: c.acceptedNames?.kind, plural: c.acceptedNames?.plural, shortNames: c.acceptedNames?.shortNames }, scope: c.scope, group: c.group,
          conversion: { strategy: c.conversion }, versions: c.versions.map((v) => ({ name: v.name, served: v.served, storage: v.storage })) },
        status: { conditions: c.conditions ?? [] } }
      : c.error,
  }));

  const objects: ObjectResult[] = res.objects.map((o) => ({
    doc: o.document,
    item: o.item ?? 0,
    title: o.kind ? `${o.kind} ${o.name ?? ''}`.trim() : `document ${o.document + 1}` + (o.item ? `, items[${o.item - 1}]` : ''),
    status: o.status,
    body: o.deleted ? { kind: 'Status', status: 'Success', details: { name: o.name } } : o.stored ?? o.response,
    input: null,
    warnings: o.warnings ?? [],
    pruned: o.marks.filter((m) => m.kind === 'pruned').map((m) => m.path),
    defaulted: o.marks.filter((m) => m.kind === 'defaulted').map((m) => m.path),
    // Server-set metadata (uid, creationTimestamp...) is marked too; the panes show the rest.
    marks: o.marks.filter((m) => m.kind !== 'server'),
    storedYAML: o.storedYAML,
    steps: [
      ...res.oldObjects.filter((x) => x.kind === o.kind && x.name === o.name && x.namespace === o.namespace)
        .map((x) => ({ what: x.seeded ? 'seed old' : 'create old', status: x.status })),
      ...(o.operation ? [{ what: o.operation, status: o.status }] : []),
    ],
    versions: o.versions.map((v) => ({ version: v.version, status: v.status, body: v.object ?? { message: v.error } })),
    scale: o.operation === 'scale' ? o.response : undefined,
    runtimeCost: o.cel,
  }));

  const tables = res.tables.filter((t) => t.status === 200).map((t) => ({
    title: `${t.crd} (${t.version})`,
    table: {
      kind: 'Table',
      columnDefinitions: t.columns.map((c) => ({ name: c.name, type: c.type, format: c.format, description: c.description, priority: c.priority })),
      rows: t.rows.map((r) => ({ cells: r.cells })),
    },
  }));

  const log: Exchange[] = (res.exchanges ?? []).map((x) => {
    const headers: Record<string, string> = {};
    if (x.contentType) headers['Content-Type'] = x.contentType;
    if (x.accept) headers.Accept = x.accept;
    return {
      request: { method: x.method, path: x.path, headers, body: x.requestBody },
      response: { status: x.status, headers: (x.warnings?.length ? { Warning: x.warnings } : {}) as Record<string, string | string[]>, body: x.body },
      ms: NaN,
    };
  });

  const cel = res.crds.flatMap((c) => c.versions.map((v) => ({ crd: c.name ?? '', version: v.name, cost: v.cel })));
  return {
    crds, objects, diagnostics, log, tables, cel, celLimits: res.celLimits, via: 'evaluate', crdCached: res.crdCached, explain: state.explain,
    ms: res.timings?.total ?? performance.now() - t0,
  };
}

/** The trees of every CRD version that has a schema, named as the API names them. */
function explainKinds(res: GoResult, crdText: string): ExplainKind[] {
  const out: ExplainKind[] = [];
  let docs: ReturnType<typeof documents> | undefined;
  for (const c of res.crds) {
    let kind = c.acceptedNames?.kind;
    if (!kind && c.versions.some((v) => v.schema)) {
      // A refused CRD has no accepted names; its text still has one. Go numbers the non-empty documents.
      docs ??= documents(crdText);
      const d = docs[c.document];
      const k = d && toValue(crdText, valueNodeAt(crdText, d, ['spec', 'names', 'kind']));
      kind = typeof k === 'string' ? k : undefined;
    }
    for (const v of c.versions) {
      if (v.schema) out.push({ crd: c.name ?? '', group: c.group ?? '', kind: kind ?? '?', version: v.name, served: v.served, tree: v.schema });
    }
  }
  return out;
}
