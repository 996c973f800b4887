// The Kubernetes target: the minor version a visitor wants the CRD to work on. A target the engine can
// emulate (1.34 to 1.37, CrdplayVersion.emulatedVersions) is answered by an engine emulating it, in a worker of
// its own (engines.ts); an older one is a compatibility check only, answered by the newest. Either way each
// CRD's compat report (crdplay.evaluate's CrdplayCRDResult.compat) says from which minor every field works, and
// the page turns the fields that need more than the target into warnings at their place.
import type { CrdplayCompatReason, CrdplayCompatReport, CrdplayCompatRule, CrdplayCRDResult, CrdplayDiagnostic, CrdplayEvaluateResult, CrdplayKubernetesRange } from '../static/crdplay.d.ts';

/** The minors the page offers before the engine has said which it considers (CrdplayEvaluateResult.kubernetes,
 * which then replaces it): Go's k8sversions.Oldest and Newest, as evaluate.test.mjs checks. */
export const DEFAULT_RANGE: CrdplayKubernetesRange = { oldest: 28, newest: 37, version: 'v1.37.2', emulated: '1.37' };

/** The minors the engine emulates, before it has said (CrdplayVersion.emulatedVersions, which then replaces
 * it): Go's engine.EmulatedVersions(), as versions.spec.mjs checks. */
export const DEFAULT_EMULATED: readonly string[] = ['1.34', '1.35', '1.36', '1.37'];

/** A minor as the page writes it: "1.35". */
export function minorName(minor: number): string {
  return `1.${minor}`;
}

/** The minor a target written as "1.35" names, when range has it; null otherwise (and for "1.035", "v1.35"). */
export function parseTarget(text: string, range: CrdplayKubernetesRange): number | null {
  const m = /^1\.(0|[1-9][0-9]{0,2})$/.exec(text.trim());
  if (!m) return null;
  const minor = Number(m[1]);
  return minor >= range.oldest && minor <= range.newest ? minor : null;
}

/** A target's label in the menu: whether an engine emulating it answers, or the newest checks for it. */
export function targetLabel(minor: number, emulated: readonly string[]): string {
  return `${minorName(minor)} (${emulated.includes(minorName(minor)) ? 'emulated' : 'compatibility check only'})`;
}

/** The target menu's tooltip: what choosing a version does, for the versions the engine emulates (oldest first)
 * and its own minor. */
export function targetTitle(emulated: readonly string[], newest: string): string {
  const range = emulated.length > 1 ? `${emulated[0]} to ${emulated[emulated.length - 1]}` : emulated[0] ?? newest;
  return 'The Kubernetes version to check the CRDs for: the CRD editor warns where servers of that version refuse or ' +
    `ignore what the CRD uses. ${range} ("emulated"): the engine answers as that version, as kube-apiserver ${newest} ` +
    'does with --emulated-version. Older versions ("compatibility check only"): the warnings alone; the engine ' +
    `answers as ${newest}.`;
}

/** The line under the menu: what the target is checked with. answering is the minor the engine answers as. */
export function targetStatus(minor: number, answering: string): string {
  if (minorName(minor) === answering) return `checking for Kubernetes ${answering}`;
  return `checking for Kubernetes ${minorName(minor)} (compatibility check only: the engine answers as ${answering})`;
}

/** What runs, as the status line names it: "Kubernetes v1.37.2 emulating 1.35", or "Kubernetes v1.37.2" when
 * the engine answers as its own minor. */
export function engineName(v: { kubernetes: string; emulated?: string }): string {
  const own = /^v?(\d+\.\d+)/.exec(v.kubernetes)?.[1];
  return `Kubernetes ${v.kubernetes}${v.emulated && v.emulated !== own ? ` emulating ${v.emulated}` : ''}`;
}

/** What the page says when a worker could not emulate a version, and the newest answers instead. */
export function fallbackNotice(version: string, err: { error?: string; message?: string } | undefined, newest: string): string {
  return `Kubernetes ${version} could not be emulated (${err?.error ?? err?.message ?? String(err)}); ` +
    `the playground answers as Kubernetes ${newest} instead and checks for ${version} only by compatibility.`;
}

/** What the page says when a link or URL names a target it does not know. */
export function unknownTargetNotice(text: string, range: CrdplayKubernetesRange): string {
  const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  return `This link asks for Kubernetes version "${shown}", which the playground does not check; it checks for ` +
    `Kubernetes ${minorName(range.newest)} instead (it knows ${minorName(range.oldest)} to ${minorName(range.newest)}).`;
}

/** The fields of every CRD that servers of the target refuse or ignore, as warnings at their place in the
 * CRD editor. */
export function targetDiagnostics(res: CrdplayEvaluateResult, target: number): CrdplayDiagnostic[] {
  const out: CrdplayDiagnostic[] = [];
  for (const c of res.crds) {
    for (const r of c.compat?.reasons ?? []) {
      if (r.minor <= target || !r.span) continue;
      // The engine emulating the target may answer this field otherwise than a real server of it: say so here
      // too, so that the warning and the engine's answer do not contradict each other without a reason.
      const emulation = c.compat?.emulation?.minor === target && c.compat.emulation.fields.includes(r.field) ? `. ${c.compat.emulation.message}` : '';
      out.push({
        source: 'crds', document: c.document, field: r.field, type: 'KubernetesVersion', severity: 'warning',
        message: `Kubernetes ${minorName(target)} ${r.effect === 'refused' ? 'refuses' : 'ignores'} this: ${r.message}${emulation}`,
        line: r.span.line, column: r.span.column, endLine: r.span.endLine, endColumn: r.span.endColumn, exact: true,
      });
    }
  }
  return out;
}

/** One line on a CRD for the Result pane: the oldest minor that accepts it, and what decides it. */
export function compatLine(c: CrdplayCompatReport, range: CrdplayKubernetesRange): string {
  if (c.minor === 0) return 'No Kubernetes version accepts this CRD: a rule is refused by every one (the engine says why).';
  if (c.minor <= range.oldest) {
    return `Works on Kubernetes ${minorName(range.oldest)} and later (the oldest version checked).`;
  }
  const deciding = c.reasons.filter((r) => r.minor === c.minor);
  const why = deciding.slice(0, 3).map((r) => `${r.feature || r.field} needs ${minorName(r.minor)} (older servers ${r.effect === 'refused' ? 'refuse it' : 'drop or ignore it'})`);
  if (deciding.length > 3) why.push(`${deciding.length - 3} more`);
  return `Works on Kubernetes ${minorName(c.minor)} and later${why.length ? ` — ${why.join('; ')}` : ''}.`;
}

/** The tooltip of a rule's or a CRD's minor: each reason's message, and the older server's compile error. */
export function reasonsText(reasons: CrdplayCompatReason[] | undefined): string {
  return (reasons ?? []).map((r) => r.message + (r.detail ? `\n${r.detail}` : '')).join('\n');
}

/** What the CEL pane knows of a rule besides its version report: the engine's compile error and whether its
 * estimated cost is over the limit (CrdplayRuleCost). */
export interface RuleOutcome {
  error?: string;
  exceedsLimit?: boolean;
  cost?: number;
}

/** A rule's minor as the CEL pane shows it: "1.34+"; when no version accepts it, why: "does not compile",
 * "over the cost limit", or "none" when the engine's report says neither. */
export function ruleMinor(r: CrdplayCompatRule, o?: RuleOutcome): string {
  if (r.minor) return `${minorName(r.minor)}+`;
  if (o?.error) return 'does not compile';
  if (o?.exceedsLimit) return 'over the cost limit';
  return 'none';
}

/** The tooltip of a rule's Kubernetes cell: the reasons it needs a newer version; why no version accepts it;
 * or that every version checked does. limit is the per-expression cost limit. */
export function ruleTitle(r: CrdplayCompatRule, o: RuleOutcome | undefined, range: CrdplayKubernetesRange, limit: number): string {
  const checked = `Kubernetes ${minorName(range.oldest)} to ${minorName(range.newest)}`;
  if (!r.minor) {
    const why = o?.error ? `it does not compile: ${o.error}`
      : o?.exceedsLimit ? `its estimated cost, ${(o.cost ?? 0).toLocaleString()}, is over the limit of ${limit.toLocaleString()}`
        : 'the engine says why';
    return `No version checked (${checked}) accepts this rule: ${why}`;
  }
  return reasonsText(r.reasons) || `Every version checked (${checked}) accepts it.`;
}

/** The version reports of a CRD's rules by field (a CrdplayRuleCost's field). */
export function rulesByField(c: CrdplayCRDResult): Map<string, CrdplayCompatRule> {
  return new Map((c.compat?.rules ?? []).map((r) => [r.field, r]));
}
