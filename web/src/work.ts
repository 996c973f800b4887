// The author's work: the editors' texts kept across reloads (sessionStorage: local to the browser and to the
// tab, gone with it), files read into the editors (Import), and the editors' texts written out as files with
// the `crdplay check` command that gives the same result (Download).
import { documents, toValue, valueNodeAt } from './yaml';

/** What a tab keeps of the page (main.ts saves it a moment after each change, and on leaving the page). */
export interface Work {
  crd: string;
  objects: string;
  old: string;
  oldCrd: string;
  mode: string;
  /** The gallery example the texts were loaded from ('' for none: a link, a file). */
  example: string;
  /** The Kubernetes target, when one was chosen. */
  version?: string;
  /** The conversion webhook's code, when it is not the default. */
  webhook?: string;
  /** The address's link (its fragment) the texts were opened from: reloading that address resumes the work,
   * another link in the address wins. */
  link: string;
  /** Whether the texts hold edits of the author's (not an example's or a link's texts as loaded). */
  edited: boolean;
}

const KEY = 'crdplay:work:v1';

/** The tab's kept work, or null when there is none (or it cannot be read). */
export function loadWork(): Work | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const w = JSON.parse(raw);
    if (!w || typeof w !== 'object') return null;
    const str = (v: unknown) => (typeof v === 'string' ? v : '');
    if (typeof w.crd !== 'string') return null;
    return {
      crd: w.crd, objects: str(w.objects), old: str(w.old), oldCrd: str(w.oldCrd), mode: str(w.mode) || 'create',
      example: str(w.example), version: typeof w.version === 'string' ? w.version : undefined,
      webhook: typeof w.webhook === 'string' ? w.webhook : undefined, link: str(w.link), edited: w.edited !== false,
    };
  } catch {
    return null;
  }
}

/** Keeps the work for this tab; false when the browser refuses (storage off, or over its quota). */
export function saveWork(w: Work): boolean {
  try {
    sessionStorage.setItem(KEY, JSON.stringify(w));
    return true;
  } catch {
    try {
      sessionStorage.removeItem(KEY); // an older state must not come back in its place
    } catch { /* storage off */ }
    return false;
  }
}

export function clearWork(): void {
  try {
    sessionStorage.removeItem(KEY);
  } catch { /* storage off */ }
}

/** The documents of YAML (or JSON) files sorted for the editors: CustomResourceDefinitions (and Lists of them,
 * as kubectl get crds -o yaml writes) for the CRD editor, everything else for the objects editor. Each document
 * keeps its text as written. */
export function splitDocuments(texts: string[]): { crds: string[]; objects: string[] } {
  const crds: string[] = [];
  const objects: string[] = [];
  for (const text of texts) {
    for (const d of documents(text)) {
      const body = text.slice(d.from, d.to).replace(/^\r?\n/, '').replace(/\n(\.\.\.|---)?\s*$/, '').trimEnd();
      if (!body) continue;
      const kind = toValue(text, valueNodeAt(text, d, ['kind']));
      let crd = kind === 'CustomResourceDefinition';
      if (!crd && typeof kind === 'string' && kind.endsWith('List')) {
        const items = toValue(text, valueNodeAt(text, d, ['items']));
        crd = Array.isArray(items) && items.length > 0 && items.every((it) => (it as { kind?: unknown } | null)?.kind === 'CustomResourceDefinition');
      }
      (crd ? crds : objects).push(body);
    }
  }
  return { crds, objects };
}

/** A YAML stream of documents. */
export function joinDocuments(docs: string[]): string {
  return docs.length ? docs.join('\n---\n') + '\n' : '';
}

/** The files Download offers: the editors' texts the mode uses, under the names the command reads. */
export interface Download {
  name: string;
  text: string;
  what: string;
}

/** What Download needs of the page. */
export interface DownloadInput {
  mode: string;
  crd: string;
  objects: string;
  old: string;
  oldCrd: string;
  /** The Kubernetes minor the engine emulates ('' for the newest, which needs no flag). */
  emulated: string;
}

const blank = (text: string) => !text.split('\n').some((l) => l.trim() && !l.trimStart().startsWith('#') && !/^(---|\.\.\.)\s*$/.test(l));

/** The `crdplay check` command (cmd/crdplay) that gives the result the page shows for these texts, and what it
 * cannot reproduce. The page's evaluations send no fieldValidation, which the API answers as Warn; the command's
 * default is kubectl's, Strict. */
export function checkCommand(input: DownloadInput): { command: string; note: string } {
  const args = ['crdplay', 'check'];
  if (input.emulated) args.push('--emulated-version', input.emulated);
  args.push('--field-validation', 'Warn');
  if (input.mode === 'upgrade') args.push('--old', 'old-crds.yaml', '--new', 'crds.yaml');
  else args.push('--crd', 'crds.yaml');
  if (!blank(input.objects)) args.push('objects.yaml');
  const modes: Record<string, string> = {
    update: 'the update mode (the old object created, then the objects sent as its update)',
    status: 'the /status update mode',
    scale: 'the /scale mode',
    delete: 'the delete mode',
  };
  const note = modes[input.mode]
    ? `crdplay check has no form of ${modes[input.mode]}: this command checks the CRDs and the objects' creates.`
    : '';
  return { command: args.join(' '), note };
}

/** The files of a download: each editor the mode uses, then crdplay-check.sh with the command. */
export function downloads(input: DownloadInput): Download[] {
  const out: Download[] = [];
  if (input.mode === 'upgrade') out.push({ name: 'old-crds.yaml', text: input.oldCrd, what: 'the old CRDs (the CRDs the objects were stored under)' });
  out.push({ name: 'crds.yaml', text: input.crd, what: input.mode === 'upgrade' ? 'the new CRDs' : 'the CRDs' });
  if (!blank(input.objects)) out.push({ name: 'objects.yaml', text: input.objects, what: input.mode === 'upgrade' ? 'the stored objects' : 'the objects' });
  if ((input.mode === 'update' || input.mode === 'status') && !blank(input.old)) {
    out.push({ name: 'old-objects.yaml', text: input.old, what: 'the old objects (the update mode\'s)' });
  }
  const { command, note } = checkCommand(input);
  out.push({
    name: 'crdplay-check.sh',
    text: '#!/bin/sh\n# The playground\'s result for these files, from crdplay check (cmd/crdplay; README: "Checking CRDs in CI").\n' +
      (note ? `# ${note}\n` : '') + `${command}\n`,
    what: 'the crdplay check command',
  });
  return out;
}
