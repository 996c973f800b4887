// The command line: kubectl's verbs through the engine's kubectl emulation (crdplay.kubectl, when the engine
// build has it), and raw API requests ("GET /apis", "POST /path @objects") through crdplay.request. Both use
// the bridge's store, not the evaluator's (each evaluation has a session engine of its own): so that the
// command line sees the editors' world, it applies the editors' CRDs and objects there with kubectl apply when
// it is opened, and again before a command once the editors changed ("load" does it at any time), or the page
// switched to another engine (ENGINE_EVENT: the worker of another emulated version, with a store of its own).
import type { CrdplayKubectlResult, CrdplayRequest, CrdplayResponse } from '../static/crdplay.d.ts';
import { h, prettyJSON, type Exchange } from './panes';

export interface CLIHost {
  request(req: CrdplayRequest): Promise<CrdplayResponse>;
  /** The engine's kubectl, or null when this build has none. */
  kubectl: ((commandLine: string, files: Record<string, string>) => Promise<{ output: string; exitCode?: number; requests?: Exchange[] }>) | null;
  /** Editor texts, for -f crd.yaml / objects.yaml / old.yaml and @crd bodies. */
  files(): Record<string, string>;
  /** Adds exchanges to the HTTP log. */
  logged(x: Exchange[]): void;
  ready: Promise<unknown>;
}

const HELP = `kubectl get crontabs -o yaml  kubectl: get, describe, apply, patch,
kubectl explain crontab.spec  scale, delete, wait, explain, api-resources
GET /apis/stable.example.com  a raw request, answered as the API sent it
POST /apis/... @objects       a body from an editor (@crd @objects @old)
load                          apply the editors' CRDs and objects again
clear | help                  clear this pane | show this`;

/** Dispatched on the command line's pane when the page switches engines, with the new one's name as detail. */
export const ENGINE_EVENT = 'crdplay:engine';

export function mountCLI(pane: HTMLElement, host: CLIHost): { run(line: string): Promise<string> } {
  const out = h('pre', { class: 'cli-out', id: 'cli-out', 'aria-live': 'polite' },
    (host.kubectl ? "The editors' CRDs and objects are applied here when this pane opens.\n" : '') + HELP + '\n');
  const input = h('input', { id: 'cli-input', class: 'cli-input', spellcheck: 'false', autocomplete: 'off', 'aria-label': 'command', placeholder: 'kubectl get crontabs   |   GET /apis' }) as HTMLInputElement;
  const form = h('form', { class: 'cli-form' }, h('span', { class: 'prompt' }, '$'), input);
  pane.replaceChildren(out, form);
  const history: string[] = [];
  let hpos = 0;

  const print = (s: string) => {
    out.append(s.endsWith('\n') ? s : s + '\n');
    out.scrollTop = out.scrollHeight;
  };
  // A command's output: a line that quotes a long value (an API error quoting the whole patched object as
  // escaped JSON, as real kubectl prints it) is shown with the value shortened, the line as printed behind
  // an expander.
  const printOutput = (s: string, fold: boolean) => {
    if (!fold) {
      print(s);
      return;
    }
    const lines = (s.endsWith('\n') ? s.slice(0, -1) : s).split('\n');
    let plain: string[] = [];
    const flush = () => {
      if (plain.length) print(plain.join('\n'));
      plain = [];
    };
    for (const l of lines) {
      const short = shortened(l);
      if (short === l) {
        plain.push(l);
        continue;
      }
      flush();
      out.append(h('details', { class: 'cli-full' }, h('summary', {}, short), h('span', { class: 'cli-full-text' }, `as kubectl printed it:\n${l}`)));
    }
    flush();
    out.scrollTop = out.scrollHeight;
  };

  // What was last applied (the editors' texts), and the queue that keeps loads and commands in order.
  let loaded: string | null = null;
  let typed = false;
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(f: () => Promise<T>): Promise<T> => {
    const p = queue.then(f, f);
    queue = p.catch(() => {});
    return p;
  };

  /** Applies the editors' texts when they differ from the last applied (or always, with force). */
  async function sync(force: boolean): Promise<string> {
    if (!host.kubectl) return 'load needs kubectl, which this engine build does not have';
    await host.ready;
    const files = host.files();
    const key = `${files['crd.yaml']}\0${files['objects.yaml']}`;
    if (!force && key === loaded) return '';
    const first = loaded === null;
    loaded = key;
    const text = await loadEditors(host, files);
    if (first && !typed) {
      // Nothing was typed yet: the pane starts with what it holds, then the help.
      out.replaceChildren();
      print(text);
      print(HELP);
    } else {
      print(text);
    }
    return text;
  }

  async function run(line: string): Promise<string> {
    line = line.trim();
    if (!line) return '';
    if (line === 'clear') {
      out.replaceChildren();
      return '';
    }
    return serial(async () => {
      let text: string;
      try {
        await host.ready;
        if (line === 'load') {
          typed = true;
          print(`$ ${line}`);
          return await sync(true);
        }
        await sync(false);
        typed = true;
        print(`$ ${line}`);
        text = await execute(line, host);
      } catch (e: any) {
        text = `error: ${e?.error ?? e?.message ?? String(e)}`;
      }
      // Only kubectl's output is folded: a raw request's answer is the API's JSON, whole.
      printOutput(text, /^(kubectl|k)\s/.test(line));
      return text;
    });
  }

  // The pane is shown by the page's tabs (its hidden attribute): that is when the editors' world is loaded.
  const whenShown = () => {
    if (!pane.hidden && host.kubectl) void serial(() => sync(false)).catch((e) => print(`error: ${e?.error ?? e?.message ?? String(e)}`));
  };
  new MutationObserver(whenShown).observe(pane, { attributes: true, attributeFilter: ['hidden'] });
  whenShown();
  // The page switched engines (a worker per emulated Kubernetes version, engines.ts; detail names it): the
  // commands go to that one now, whose store has none of the editors' world yet.
  pane.addEventListener(ENGINE_EVENT, (e) => {
    loaded = null;
    if (host.kubectl && typed) print(`(now ${(e as CustomEvent<string>).detail}: a store of its own; the editors' CRDs and objects are applied there)`);
    whenShown();
  });

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const line = input.value;
    if (line.trim()) history.push(line);
    hpos = history.length;
    input.value = '';
    void run(line);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowUp' && hpos > 0) input.value = history[--hpos];
    else if (e.key === 'ArrowDown' && hpos < history.length) input.value = history[++hpos] ?? '';
    else return;
    e.preventDefault();
  });
  return { run };
}

/**
 * Applies the editors' CRDs (then waits until they are Established, as a script would) and objects through the
 * command line's kubectl, and says in one line what it applied; what kubectl refused follows that line.
 */
async function loadEditors(host: CLIHost, files: Record<string, string>): Promise<string> {
  const kubectl = host.kubectl!;
  const problems: string[] = [];
  const apply = async (file: string): Promise<number> => {
    if (!hasDocuments(files[file] ?? '')) return 0;
    // Warn, as the page's evaluations send them (kubectl's default, Strict, would refuse what the page showed
    // created with a warning).
    const res = await kubectl(`kubectl apply --validate=warn -f ${file}`, files);
    if (res.requests?.length) host.logged(res.requests);
    const lines = res.output.split('\n');
    problems.push(...lines.filter((l) => /^(error|Error from server|Warning)\b/.test(l)).map((l) => `${file}: ${l}`));
    return lines.filter((l) => /^\S+ (created|configured|unchanged)( \(server dry run\))?$/.test(l)).length;
  };
  const crds = await apply('crd.yaml');
  if (crds) {
    const res = await kubectl('kubectl wait --for=condition=Established -f crd.yaml --timeout=10s', files);
    if (res.requests?.length) host.logged(res.requests);
    if (res.exitCode) problems.push(...res.output.split('\n').filter((l) => l.trim()).map((l) => `crd.yaml: ${l}`));
  }
  const objects = await apply('objects.yaml');
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return `applied ${plural(crds, 'CRD', 'CRDs')} and ${plural(objects, 'object', 'objects')} from the editors` +
    problems.map((p) => `\n  ${p}`).join('');
}

/** Whether a YAML text has anything but comments and document markers (kubectl refuses to apply nothing). */
function hasDocuments(text: string): boolean {
  return text.split('\n').some((l) => l.trim() && !l.trimStart().startsWith('#') && !/^(---|\.\.\.)\s*$/.test(l));
}

/** Quoted values longer than this are shortened in the pane (the whole line stays behind an expander). */
const LONG_VALUE = 160;

/** A line with each double-quoted value of over LONG_VALUE characters cut to its start and its length. */
export function shortened(line: string): string {
  return line.replace(/"((?:[^"\\]|\\.)*)"/g, (q, inner: string) =>
    inner.length > LONG_VALUE ? `"${inner.slice(0, 40).replace(/\\+$/, '')}…" (${inner.length.toLocaleString()} characters)` : q);
}

/**
 * The page's word after kubectl refused a field under strict validation, kubectl's default: the editors were
 * applied with --validate=warn, as the page evaluates them (the server pruned the field and kept the object),
 * so the same file can be refused here; nothing when the command chose its validation.
 */
function strictNote(argv: string[], output: string): string {
  if (!/strict decoding error: unknown field/.test(output) || argv.some((a) => /^--validate(=|$)/.test(a))) return '';
  return '\n(kubectl validates with --validate=strict unless told otherwise, and refuses a field the schema does not have; ' +
    'the page applied the editors with --validate=warn, as it evaluates them, so the server pruned the field and kept the object. ' +
    'Add --validate=warn to do the same.)';
}

/** Splits a command line into words, with single and double quotes. */
export function words(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m; (m = re.exec(line)); ) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2] ?? m[3]);
  return out;
}

async function execute(line: string, host: CLIHost): Promise<string> {
  const argv = words(line);
  if (argv[0] === 'help') return HELP;
  if (argv[0] === 'kubectl' || argv[0] === 'k') {
    if (!host.kubectl) {
      return 'kubectl is not in this engine build yet; raw requests work: GET /apis, GET /apis/<group>/<version>/namespaces/default/<plural>';
    }
    const res = await host.kubectl(line, host.files());
    if (res.requests?.length) host.logged(res.requests);
    return res.output + (res.exitCode ? `\n(exit status ${res.exitCode})` : '') + strictNote(argv, res.output);
  }
  const method = argv[0]?.toUpperCase();
  if (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method) && argv[1]?.startsWith('/')) {
    const req: CrdplayRequest = { method, path: argv[1] };
    const bodyRef = argv[2];
    if (bodyRef) {
      const files = host.files();
      const name = bodyRef.replace(/^@/, '').replace(/\.yaml$/, '') + '.yaml';
      req.body = bodyRef.startsWith('@') ? files[name] ?? '' : argv.slice(2).join(' ');
      req.headers = { 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/yaml' };
    }
    const t0 = performance.now();
    const resp = await host.request(req);
    host.logged([{ request: req, response: resp, ms: performance.now() - t0 }]);
    const warnings = ([] as string[]).concat(resp.headers.Warning ?? []).map((w) => `Warning: ${w}\n`).join('');
    return `HTTP ${resp.status}\n${warnings}${prettyJSON(resp.body)}`;
  }
  return `unknown command: ${argv[0]} (try "help")`;
}

/**
 * The command line's kubectl over the bridge's crdplay.kubectl({args, files}): the command line and the
 * editors' files in, what kubectl printed and the requests it made out. It shares request()'s store.
 */
export function kubectlVia(call: (arg: unknown) => Promise<unknown>) {
  return async (commandLine: string, files: Record<string, string>) => {
    const raw = await call({ args: commandLine, files });
    const r = (typeof raw === 'string' ? JSON.parse(raw) : raw) as CrdplayKubectlResult;
    const requests: Exchange[] = (r.requests ?? []).map((x) => ({
      request: { method: x.method, path: x.path + (x.query ? `?${x.query}` : ''), headers: x.requestHeaders ?? {}, body: x.requestBody || undefined },
      response: { status: x.status, headers: x.responseHeaders ?? {}, body: x.responseBody ?? '' },
      ms: NaN,
    }));
    return { output: r.output, exitCode: r.exitCode, requests };
  };
}
