// One evaluation of the editors' texts: a call of the engine's evaluator (crdplay.evaluate, the Go package
// playground in the worker), whose result the page shows as it comes (editors.ts, panes.ts). Every verdict in
// it is the engine's REST API's answer, placed in the texts by Go. What is kept here between calls is what
// makes an edit cheap to send: the CRD text goes only when it changed (the worker's session keeps those CRDs
// installed), and the explain trees of the last CRD revision stay here, so that the engine leaves them out of
// its answers (knownCRDRevision) while the CRDs are the same: a big CRD's trees are megabytes of JSON.
import type { CrdplayEvaluateInput, CrdplayEvaluateResult, CrdplayMode, CrdplaySchemaNode } from '../static/crdplay.d.ts';
import { documents, toValue, valueNodeAt } from './yaml';

/** The explain tree of one CRD version, computed by the engine (playground/internal/explain). */
export interface ExplainKind {
  crd: string;
  group: string;
  kind: string;
  version: string;
  served: boolean;
  tree: CrdplaySchemaNode;
}

/** What one evaluation leaves for the next. */
export interface Session {
  /** The CRD text the worker's session has installed. */
  crdText?: string;
  /** The old CRD text the worker's session has (the upgrade mode's). */
  oldCrdText?: string;
  /** Its crdRevision, and the explain trees of its versions. */
  revision?: string;
  explain?: ExplainKind[];
}

/** The editors' texts. */
export interface Texts {
  crd: string;
  objects: string;
  old: string;
  /** The upgrade mode's old CRD. */
  oldCrd?: string;
}

/** Evaluates the texts with crdplay.evaluate (call is the client's call('evaluate', ...)); trace asks for the
 * evaluation's HTTP exchanges (the log's), which only the HTTP log shows. deferAnalysis asks for the results
 * without the analysis of newly installed CRDs (rules' costs, compat, explain trees, objects' CEL costs): the
 * result then says analysisPending, and the next evaluation without it has all of it. tables false leaves out
 * the kubectl get tables (and the requests that make them), which only the Table pane shows. migrate asks the
 * upgrade mode to run the storage migration a stored version's refusal asks for (the result's
 * upgrade.migrations). */
export async function evaluate(call: (input: string) => Promise<string>, texts: Texts, mode: CrdplayMode, session: Session, { trace = true, deferAnalysis = false, tables = true, migrate = false } = {}): Promise<CrdplayEvaluateResult> {
  const input: CrdplayEvaluateInput = { objects: texts.objects, oldObjects: texts.old, mode };
  if (trace) input.trace = true;
  if (migrate && mode === 'upgrade') input.migrate = true;
  if (!tables) input.skipTables = true;
  if (deferAnalysis) input.deferAnalysis = true;
  if (session.crdText !== texts.crd) input.crds = texts.crd;
  if (mode === 'upgrade' && session.oldCrdText !== texts.oldCrd) input.oldCrds = texts.oldCrd ?? '';
  if (session.revision && session.explain) input.knownCRDRevision = session.revision;
  const res: CrdplayEvaluateResult = JSON.parse(await call(JSON.stringify(input)));
  session.crdText = texts.crd;
  if (mode === 'upgrade') session.oldCrdText = texts.oldCrd ?? '';
  // A result whose analysis is pending has no trees yet: the next one must bring them (no knownCRDRevision).
  if (res.analysisPending) session.explain = undefined;
  else if (!res.schemasOmitted || !session.explain) session.explain = explainKinds(res, texts.crd);
  session.revision = res.crdRevision;
  return res;
}

/** The trees of every CRD version that has a schema, named as the API names them. */
function explainKinds(res: CrdplayEvaluateResult, crdText: string): ExplainKind[] {
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
