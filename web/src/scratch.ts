// The CEL scratchpad, at the top of the CEL pane: an expression evaluated by the engine (crdplay.cel, Go's
// playground.Session.CEL) as an x-kubernetes-validations rule at a node of an installed CRD version would be:
// compiled by upstream's cel.Compile in the environment, compatibility version and cost limits of the CRD's
// own rules, and evaluated on one of the objects editor's documents (and, in the update modes, its old
// object) with self and oldSelf bound as upstream's validator binds them. Its value, type, costs and compile
// errors (at their column) are shown; the page computes none of it.
import type { CrdplayCELInput, CrdplayCELLimits, CrdplayCELResult, CrdplayEvaluateResult, CrdplayMode, CrdplayScratchResult, CrdplayScratchValue } from '../static/crdplay.d.ts';
import { h } from './panes';
import { documents, toValue, valueNodeAt } from './yaml';

/** What the scratchpad needs of the page. */
export interface ScratchHost {
  /** crdplay.cel through the page's engine; null when the engine has none (an older shared engine). */
  call(): ((input: string) => Promise<string>) | null;
  objects(): string;
  old(): string;
  mode(): CrdplayMode;
  /** Whether the CEL pane is shown: the expression is evaluated again after an evaluation only then. */
  shown(): boolean;
}

/** The scratchpad's text and choices, kept for the tab (sessionStorage) like the editors. */
interface Kept { expression: string; self: string; optionalOldSelf: boolean; target: string }
const KEY = 'crdplay:scratch';
/** Typing is evaluated once it pauses this long. */
const DEBOUNCE_MS = 200;

export class Scratchpad {
  readonly el: HTMLElement;
  #host: ScratchHost;
  #expr: HTMLTextAreaElement;
  #target: HTMLSelectElement;
  #self: HTMLInputElement;
  #selves: HTMLElement;
  #object: HTMLSelectElement;
  #optional: HTMLInputElement;
  #out: HTMLElement;
  /** The editors' last evaluation: the CRD versions to choose from, the cost limits. */
  #res: CrdplayEvaluateResult | null = null;
  /** Bumped by every request: an answer is shown only if it is the last one's. */
  #gen = 0;
  #timer = 0;
  /** Whether an evaluation came since the choices were filled and the expression evaluated: the pane was
   * hidden then, and what it would have read (the objects editor's documents) waits until it is shown. */
  #outdated = false;
  /** Resolves when the last request's answer is shown (tests, the console). */
  idle: Promise<void> = Promise.resolve();

  constructor(host: ScratchHost) {
    this.#host = host;
    const kept = load();
    const id = 'scratch-selves';
    this.#expr = h('textarea', {
      class: 'scratch-expr', rows: '2', spellcheck: 'false', autocapitalize: 'off', 'aria-label': 'CEL expression',
      placeholder: 'self.spec.replicas <= 10   (Ctrl/Cmd+Enter evaluates at once)',
    }) as HTMLTextAreaElement;
    this.#expr.value = kept.expression;
    this.#target = h('select', { 'aria-label': 'CRD version' }) as HTMLSelectElement;
    this.#target.dataset.want = kept.target;
    this.#self = h('input', { type: 'text', list: id, spellcheck: 'false', placeholder: '(the object)', 'aria-label': 'self: the node the rule sits on' }) as HTMLInputElement;
    this.#self.value = kept.self;
    this.#selves = h('datalist', { id });
    this.#object = h('select', { 'aria-label': 'object' }) as HTMLSelectElement;
    this.#optional = h('input', { type: 'checkbox' }) as HTMLInputElement;
    this.#optional.checked = kept.optionalOldSelf;
    this.#out = h('div', { class: 'scratch-out', role: 'status', 'aria-live': 'polite' });
    this.el = h('section', { class: 'scratch', 'aria-label': 'CEL scratchpad' },
      h('h3', {}, 'Try an expression'),
      h('div', { class: 'scratch-controls' },
        h('label', {}, 'in ', this.#target),
        h('label', { title: 'The node of the schema the rule sits on, as the rules below write it: empty for the object, spec.tags[*] for the items of a list (or the values of a map)' }, 'self ', this.#self, this.#selves),
        h('label', {}, 'on ', this.#object),
        h('label', { title: 'The rule\'s optionalOldSelf: oldSelf is an optional, none on a create' }, this.#optional, ' optionalOldSelf')),
      this.#expr, this.#out);
    this.#expr.addEventListener('input', () => this.#soon());
    this.#expr.addEventListener('keydown', (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
        // The expression, not the editors (the page's Ctrl/Cmd+Enter).
        e.preventDefault();
        e.stopPropagation();
        void this.evaluate();
      }
    });
    for (const c of [this.#target, this.#self, this.#object, this.#optional]) c.addEventListener('change', () => this.#soon(0));
    this.#self.addEventListener('input', () => this.#soon());
    this.#show(h('p', { class: 'muted' }, 'Evaluated as an x-kubernetes-validations rule of the CRD would be, once the CRD is installed.'));
  }

  /** A new evaluation of the editors: the choices and the expression again, now if the pane is shown, else when
   * it is (shown): an edit with the pane hidden costs the scratchpad nothing. */
  update(res: CrdplayEvaluateResult): void {
    this.#res = res;
    this.#outdated = true;
    if (this.#host.shown()) this.shown();
  }

  /** The CEL pane is shown: an evaluation that came since the last one the scratchpad saw is evaluated against. */
  shown(): void {
    if (!this.#outdated || !this.#res) return;
    this.#outdated = false;
    this.#fillTargets(this.#res);
    this.#fillObjects();
    this.#soon(0);
  }

  /** The established CRDs' served versions, the one chosen before kept. */
  #fillTargets(res: CrdplayEvaluateResult): void {
    const want = this.#target.value || this.#target.dataset.want || '';
    const opts: HTMLElement[] = [];
    for (const c of res.crds) {
      if (!c.established || !c.name) continue;
      for (const v of c.versions) {
        if (!v.served) continue;
        const value = `${c.name} ${v.name}`;
        opts.push(h('option', { value, 'data-kind': c.acceptedNames?.kind ?? '' }, `${c.acceptedNames?.kind ?? c.name} ${v.name}${v.name === c.storage ? ' (storage)' : ''}`));
      }
    }
    this.#target.replaceChildren(...opts);
    if (opts.some((o) => (o as HTMLOptionElement).value === want)) this.#target.value = want;
  }

  /** Puts a rule in the scratchpad (the CEL table's "try"), on its CRD version and node. */
  try(rule: string, self: string, crd: string, version: string): void {
    this.#expr.value = rule;
    this.#self.value = self;
    const value = `${crd} ${version}`;
    if ([...this.#target.options].some((o) => o.value === value)) this.#target.value = value;
    this.#fillObjects();
    this.el.scrollIntoView({ block: 'nearest' });
    this.#expr.focus();
    // Evaluated now, not on a timer: idle is then this evaluation's, for whoever awaits the rule's result.
    this.#remember();
    void this.evaluate();
  }

  /** The objects editor's documents, the first of the chosen kind selected (or the one chosen before). */
  #fillObjects(): void {
    const text = this.#host.objects();
    const kind = this.#target.selectedOptions[0]?.dataset.kind ?? '';
    const was = this.#object.value;
    const opts: HTMLElement[] = [h('option', { value: '' }, '(no object: compile only)')];
    let first = '';
    documents(text).forEach((d, i) => {
      const k = toValue(text, valueNodeAt(text, d, ['kind']));
      const n = toValue(text, valueNodeAt(text, d, ['metadata', 'name']));
      const label = `${i + 1}: ${typeof k === 'string' ? k : '?'} ${typeof n === 'string' ? n : ''}`.trim();
      opts.push(h('option', { value: String(i) }, label));
      if (!first && k === kind) first = String(i);
    });
    this.#object.replaceChildren(...opts);
    const values = opts.map((o) => (o as HTMLOptionElement).value);
    this.#object.value = was && values.includes(was) ? was : first || (values[1] ?? '');
  }

  #soon(ms = DEBOUNCE_MS): void {
    clearTimeout(this.#timer);
    this.#remember();
    this.#timer = window.setTimeout(() => void this.evaluate(), ms);
  }

  /** Keeps the scratchpad's text and choices for the tab. */
  #remember(): void {
    save({ expression: this.#expr.value, self: this.#self.value.trim(), optionalOldSelf: this.#optional.checked, target: this.#target.value });
  }

  /** Evaluates the expression now. */
  evaluate(): Promise<void> {
    clearTimeout(this.#timer);
    const gen = ++this.#gen;
    const call = this.#host.call();
    const expression = this.#expr.value;
    if (!call) {
      this.#show(h('p', { class: 'muted' }, 'This engine has no CEL scratchpad (crdplay.cel).'));
      return this.idle;
    }
    if (this.#host.mode() === 'upgrade') {
      this.#show(h('p', { class: 'muted' }, 'The scratchpad evaluates against the CRD editor\'s CRDs as the other operations install them: choose create, update or another operation.'));
      return this.idle;
    }
    if (!expression.trim()) {
      this.#show(h('p', { class: 'muted' }, 'Type an expression: it is compiled as a rule of the chosen CRD version at self, and evaluated on the chosen object.'));
      return this.idle;
    }
    const [crd, version] = this.#target.value.split(' ');
    const input: CrdplayCELInput = { expression, self: this.#self.value.trim() };
    if (crd) { input.crd = crd; input.version = version; }
    if (this.#optional.checked) input.optionalOldSelf = true;
    const obj = this.#documentText(this.#host.objects(), this.#object.value);
    if (obj !== undefined) {
      input.object = obj;
      const mode = this.#host.mode();
      if (mode === 'update' || mode === 'status') input.oldObject = this.#oldFor(obj);
    }
    this.el.setAttribute('aria-busy', 'true');
    this.idle = call(JSON.stringify(input)).then((json) => {
      if (gen !== this.#gen) return;
      this.#render(expression, JSON.parse(json) as CrdplayCELResult);
    }, (e) => {
      if (gen !== this.#gen) return;
      this.#show(h('p', { class: 'error' }, `The scratchpad failed: ${e?.error ?? e?.message ?? String(e)}`));
    }).finally(() => {
      if (gen === this.#gen) this.el.removeAttribute('aria-busy');
    });
    return this.idle;
  }

  #documentText(text: string, index: string): string | undefined {
    if (index === '') return undefined;
    const d = documents(text)[Number(index)];
    return d ? text.slice(d.from, d.to) : undefined;
  }

  /** The old object of the update modes: the old editor's document of the same kind and name, else none. */
  #oldFor(objText: string): string | undefined {
    const key = (t: string, d: ReturnType<typeof documents>[number]) =>
      JSON.stringify([toValue(t, valueNodeAt(t, d, ['kind'])), toValue(t, valueNodeAt(t, d, ['metadata', 'name']))]);
    const od = documents(objText)[0];
    if (!od) return undefined;
    const want = key(objText, od);
    const old = this.#host.old();
    const d = documents(old).find((x) => key(old, x) === want);
    return d ? old.slice(d.from, d.to) : undefined;
  }

  #show(...nodes: Node[]): void {
    this.#out.replaceChildren(...nodes);
  }

  #render(expression: string, res: CrdplayCELResult): void {
    if (res.selves) this.#selves.replaceChildren(...res.selves.filter((s) => s).map((s) => h('option', { value: s })));
    const out: Node[] = [];
    if (res.error) {
      this.#show(h('p', { class: 'error' }, res.error));
      return;
    }
    const s = res.scratch;
    if (!s) return;
    if (s.errors?.length) {
      const lines = expression.split('\n');
      for (const e of s.errors) {
        out.push(h('p', { class: 'error scratch-error', 'data-line': String(e.line), 'data-column': String(e.column) }, `line ${e.line}, column ${e.column}: ${e.message}`));
        const line = lines[e.line - 1] ?? '';
        out.push(h('pre', { class: 'code scratch-caret' }, `${line}\n${' '.repeat(Math.max(0, e.column - 1))}^`));
      }
      this.#show(...out);
      return;
    }
    if (res.objectError) out.push(h('p', { class: 'warning' }, res.objectError));
    out.push(h('p', { class: 'scratch-type' }, 'type ', h('code', {}, s.type ?? '?'), s.usesOldSelf ? h('span', { class: 'muted' }, ' (uses oldSelf: a transition rule)') : null));
    out.push(values(s.values));
    if (s.asRule) out.push(h('p', { class: 'warning scratch-asrule' }, `As a rule, the API would refuse it: ${s.asRule}`));
    out.push(costs(s, this.#res?.celLimits ?? null, res.compatibility));
    this.#show(...out);
  }
}

/** The values, one per node self names in the object. */
function values(vs: CrdplayScratchValue[]): HTMLElement {
  if (!vs.length) return h('p', { class: 'muted scratch-value' }, 'No value: the object has no node where self is (or no object is chosen).');
  const one = (v: CrdplayScratchValue): HTMLElement => {
    if (v.skipped) return h('span', { class: 'muted' }, `not evaluated: ${v.skipped}`);
    if (v.error) return h('span', { class: 'error' }, v.error);
    return h('code', { class: 'scratch-json' }, JSON.stringify(v.value ?? null, null, 2));
  };
  if (vs.length === 1 && vs[0].path === '') return h('div', { class: 'scratch-value' }, '= ', one(vs[0]));
  return h('table', { class: 'grid scratch-values' },
    h('tr', {}, h('th', {}, 'self at'), h('th', {}, 'value'), h('th', {}, 'cost')),
    ...vs.map((v) => h('tr', {}, h('td', {}, h('code', {}, v.path || '(the object)')), h('td', { class: 'scratch-value' }, one(v)), h('td', {}, v.cost.toLocaleString()))));
}

function costs(s: CrdplayScratchResult, lim: CrdplayCELLimits | null, compat?: string): HTMLElement {
  const per = lim ? ` of ${lim.perExpression.toLocaleString()} per rule` : '';
  const over = s.exceedsLimit ? ' — over the limit: the API would refuse the CRD' : lim ? ` (${((s.cost / lim.perExpression) * 100).toPrecision(2)}%)` : '';
  return h('p', { class: 'muted scratch-cost' },
    `Estimated cost ${s.maxCost.toLocaleString()} × ${s.cardinality.toLocaleString()}${s.cardinalityBounded ? '' : ' (no maxItems/maxProperties above: estimated)'} = ${s.cost.toLocaleString()}${per}${over}. `,
    `Cost on this object: ${s.runtimeCost.toLocaleString()}${lim ? ` of ${lim.runtimeBudget.toLocaleString()} per object` : ''}. `,
    compat ? `Compiled for compatibility version ${compat}, as the engine compiles a new rule.` : '');
}

function load(): Kept {
  const none: Kept = { expression: '', self: '', optionalOldSelf: false, target: '' };
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? { ...none, ...JSON.parse(raw) } : none;
  } catch {
    return none;
  }
}

function save(k: Kept): void {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(k));
  } catch {
    // A full or denied storage keeps the text on the page only.
  }
}
