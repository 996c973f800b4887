// The command line: kubectl's verbs through the engine's kubectl emulation (crdplay.kubectl, when the engine
// build has it), and raw API requests ("GET /apis", "POST /path @objects") through crdplay.request. It works
// on the store the last evaluation left, so "get" shows what the editors created.
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

const HELP = `Commands run against the API of window.crdplay.request (its own store: apply the editors' texts first,
e.g. POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions @crd):
  kubectl get crontabs -o yaml       kubectl's verbs (apply -f crd.yaml|objects.yaml, get, describe,
  kubectl explain crontab.spec       scale, patch, delete, explain, api-resources), when the engine has them
  GET /apis/stable.example.com/v1    a raw request; the answer is printed as the API sent it
  POST /apis/... @objects            a raw request with an editor's text as body (@crd, @objects, @old)
  clear                              clear this pane`;

export function mountCLI(pane: HTMLElement, host: CLIHost): { run(line: string): Promise<string> } {
  const out = h('pre', { class: 'cli-out', id: 'cli-out', 'aria-live': 'polite' }, HELP + '\n');
  const input = h('input', { id: 'cli-input', class: 'cli-input', spellcheck: 'false', autocomplete: 'off', 'aria-label': 'command', placeholder: 'kubectl get crontabs   |   GET /apis' }) as HTMLInputElement;
  const form = h('form', { class: 'cli-form' }, h('span', { class: 'prompt' }, '$'), input);
  pane.replaceChildren(out, form);
  const history: string[] = [];
  let hpos = 0;

  const print = (s: string) => {
    out.append(s.endsWith('\n') ? s : s + '\n');
    out.scrollTop = out.scrollHeight;
  };

  async function run(line: string): Promise<string> {
    line = line.trim();
    if (!line) return '';
    if (line === 'clear') {
      out.replaceChildren();
      return '';
    }
    print(`$ ${line}`);
    let text: string;
    try {
      await host.ready;
      text = await execute(line, host);
    } catch (e: any) {
      text = `error: ${e?.error ?? e?.message ?? String(e)}`;
    }
    print(text);
    return text;
  }

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
    return res.output + (res.exitCode ? `\n(exit status ${res.exitCode})` : '');
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
