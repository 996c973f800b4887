// The three YAML editors (CodeMirror 6): highlighting, the engine's diagnostics inline (lint), schema hover and
// completion of schema keys and enum values: in the objects editors from the kinds' schemas (the CRD editor's
// text), in the CRD editor from the engine's OpenAPI document of CustomResourceDefinition itself.
import { basicSetup } from 'codemirror';
import { EditorView, hoverTooltip, keymap, type Tooltip } from '@codemirror/view';
import { Compartment, EditorState, Prec, type Extension, type Text } from '@codemirror/state';
import { yaml } from '@codemirror/lang-yaml';
import { HighlightStyle, syntaxHighlighting, syntaxTree } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { forEachDiagnostic, setDiagnostics, lintGutter, linter, type Diagnostic as CMDiagnostic } from '@codemirror/lint';
import { autocompletion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { documents, mappingKeys, pathAt, toValue, valueNodeAt, type Segment } from './yaml';
import { at, describe, keysOf, schemaFor, typeName, type KindSchema } from './schema';
import type { CrdplayDiagnostic, CrdplaySource } from '../static/crdplay.d.ts';

/** The editors, as the page's elements (crd-editor...) and permalinks name them. oldcrd is the upgrade mode's
 * old CRD (the crd editor then holds the new one). */
export type EditorId = 'crd' | 'objects' | 'old' | 'oldcrd';

const editors: Record<CrdplaySource, EditorId | undefined> = { crds: 'crd', objects: 'objects', oldObjects: 'old', oldCrds: 'oldcrd', history: undefined };

/** The editor of a text the engine names; undefined for an input's history text ('upgrade'), which no editor
 * shows (the page sends none). */
export function editorOf(source: CrdplaySource): EditorId | undefined {
  return source in editors ? editors[source] : 'objects';
}

/** A diagnostic's text as the page shows it: the field it names first, unless the message starts with it. */
export function diagnosticText(d: CrdplayDiagnostic): string {
  return d.field && !d.message.startsWith(d.field) && d.type !== 'Warning' ? `${d.field}: ${d.message}` : d.message;
}

/** A message as the page shows it: upstream's text without the Go values it dumps, and the caret snippet CEL
 * writes under an expression, apart. */
export interface ShapedMessage {
  /** The message's first line, without dumps of Go structs ("Invalid value: {\"Rule\":...}: "). */
  text: string;
  /** CEL's snippet: the expression and a caret under the error (" | self.x > 0\n | .....^"), when there is one. */
  snippet?: string;
  /** The message as the API gave it, when text or snippet differ from it. */
  full?: string;
}

/** The JSON-like dump of a Go struct that field.Invalid prints as the value ({"Rule":"...","Message":""...}):
 * its capitalised keys tell it from a user's value. Returns its end, or -1. */
function goDumpEnd(s: string, from: number): number {
  if (!s.startsWith('{"', from) || !/^\{"[A-Z]\w*":/.test(s.slice(from, from + 40))) return -1;
  let depth = 0;
  let inString = false;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  return -1;
}

/** Shapes a message for reading (ShapedMessage); the API's words are kept, only the dumps go. */
export function shapeMessage(message: string): ShapedMessage {
  let text = '';
  for (let i = 0; i < message.length;) {
    const at = message.indexOf('Invalid value: {"', i);
    if (at < 0) {
      text += message.slice(i);
      break;
    }
    const end = goDumpEnd(message, at + 'Invalid value: '.length);
    if (end < 0 || !message.startsWith(': ', end)) {
      text += message.slice(i, at + 1);
      i = at + 1;
      continue;
    }
    text += message.slice(i, at);
    i = end + 2;
  }
  const lines = text.split('\n');
  const snippet = lines.filter((l) => /^ \| /.test(l));
  const rest = lines.filter((l) => !/^ \| /.test(l));
  const shaped: ShapedMessage = { text: rest.join('\n') };
  if (snippet.length) shaped.snippet = snippet.map((l) => l.slice(3)).join('\n');
  if (shaped.text !== message) shaped.full = message;
  return shaped;
}

/** A diagnostic's notes (the API's causes that follow from its problem), a line each: "note: <field>: <message>". */
export function notesText(d: CrdplayDiagnostic): string[] {
  return (d.notes ?? []).map((n) => {
    const text = shapeMessage(n.message).text.replace(/^Invalid value: null: /, '');
    const field = n.field && n.field !== '<nil>' && !text.startsWith(n.field) ? `${n.field}: ` : '';
    return `note: ${field}${text}`;
  });
}

/** A shaped message as DOM: its text, the snippet preformatted, the diagnostic's notes, and upstream's full
 * text (the diagnostic's detail when it has one) behind an expander. */
export function messageNode(message: string, prefix = '', d?: CrdplayDiagnostic): HTMLElement {
  const m = shapeMessage(message);
  if (d?.detail) m.full = d.detail;
  const box = document.createElement('div');
  box.className = 'message';
  const p = document.createElement('div');
  p.className = 'message-text';
  p.textContent = prefix + m.text;
  box.append(p);
  if (m.snippet) {
    const pre = document.createElement('pre');
    pre.className = 'message-snippet';
    pre.textContent = m.snippet;
    box.append(pre);
  }
  const notes = d ? notesText(d) : [];
  if (notes.length) {
    const ul = document.createElement('ul');
    ul.className = 'message-notes';
    for (const n of notes) {
      const li = document.createElement('li');
      li.textContent = n;
      ul.append(li);
    }
    box.append(ul);
  }
  if (m.full) {
    const det = document.createElement('details');
    det.className = 'message-full';
    const sum = document.createElement('summary');
    sum.textContent = 'as the API said it';
    const pre = document.createElement('pre');
    pre.textContent = m.full;
    det.append(sum, pre);
    box.append(det);
  }
  return box;
}

/** Severities, most serious first: the order of messages in a tooltip. */
const severityOrder: Record<string, number> = { error: 0, warning: 1, info: 2, hint: 3 };

/** The event a pane dispatches on document to show a place in an editor (editorOf(source), 1-based line
 * and UTF-16 column, as diagnostics have them). */
export const GOTO_EVENT = 'crdplay:goto';
export interface GotoDetail {
  source: CrdplaySource;
  line: number;
  column?: number;
  endLine?: number;
  endColumn?: number;
}

/** The offset of a 1-based line and 1-based UTF-16 column (CodeMirror counts UTF-16 code units too). */
function offset(doc: Text, line: number, column: number): number {
  if (line > doc.lines) return doc.length;
  return Math.min(doc.length, doc.line(Math.max(1, line)).from + Math.max(0, column - 1));
}

/** Colours from CSS variables, so that the editors follow the page's light or dark scheme. */
const highlight = HighlightStyle.define([
  { tag: [tags.propertyName, tags.definition(tags.propertyName)], color: 'var(--hl-key)' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--hl-string)' },
  { tag: [tags.number, tags.bool, tags.null, tags.atom], color: 'var(--hl-atom)' },
  { tag: [tags.comment, tags.lineComment], color: 'var(--hl-comment)', fontStyle: 'italic' },
  { tag: [tags.meta, tags.keyword, tags.labelName, tags.typeName], color: 'var(--hl-meta)' },
  { tag: [tags.punctuation, tags.separator, tags.squareBracket, tags.brace], color: 'var(--hl-punct)' },
  { tag: tags.content, color: 'var(--fg)' },
]);

const theme = EditorView.theme({
  '&': { color: 'var(--fg)', backgroundColor: 'var(--editor-bg)', height: '100%', fontSize: '12.5px' },
  '.cm-content': { caretColor: 'var(--fg)', fontFamily: 'var(--mono)' },
  '.cm-gutters': { backgroundColor: 'var(--gutter-bg)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
  '.cm-activeLine': { backgroundColor: 'var(--active-line)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--active-line)' },
  '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: 'var(--selection) !important' },
  '.cm-tooltip': { backgroundColor: 'var(--panel-bg)', color: 'var(--fg)', border: '1px solid var(--border)' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { backgroundColor: 'var(--accent)', color: 'var(--accent-fg)' },
  '.cm-scroller': { overflow: 'auto' },
  // A long message (a CRD with many errors, a big description) scrolls inside its tooltip, which stays
  // within the window.
  '.cm-tooltip-hover, .cm-tooltip-lint': { maxHeight: 'min(45vh, 420px)', maxWidth: 'min(640px, 90vw)', overflow: 'auto' },
  // A field path (spec.versions[0].schema.openAPIV3Schema.properties[spec]...) has no space to wrap at: it
  // breaks anywhere rather than widen the tooltip's content past its edge on a phone.
  '.cm-tooltip-hover, .cm-tooltip-lint .cm-diagnostic': { overflowWrap: 'anywhere' },
  '.cm-tooltip-lint .message-snippet, .cm-tooltip-lint .message-full pre': { font: '12px/1.35 var(--mono)', margin: '4px 0 0', whiteSpace: 'pre', overflowX: 'auto' },
  '.cm-tooltip-lint .message-full summary': { cursor: 'pointer', color: 'var(--muted)', fontSize: '12px' },
  '.cm-tooltip-lint .message-full pre': { whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' },
  '.cm-tooltip-lint .message-notes': { margin: '4px 0 0', paddingLeft: '1.2em', color: 'var(--muted)', fontSize: '12px' },
});

export interface Editors {
  views: Record<EditorId, EditorView>;
  /** Shows the engine's diagnostics (all editors' at once; each editor gets its own). */
  show(diags: CrdplayDiagnostic[]): void;
  text(id: EditorId): string;
  set(id: EditorId, text: string): void;
  /** Selects a place (1-based line and UTF-16 column, as diagnostics have them), scrolls it into view and
   * focuses the editor. */
  reveal(id: EditorId, line: number, column?: number, endLine?: number, endColumn?: number): void;
  setReadOnly(ro: boolean): void;
}

export interface EditorOptions {
  /** Called after every change of any editor's text. */
  onChange(id: EditorId): void;
  /** Ctrl/Cmd+Enter. */
  onRun(): void;
  /** Ctrl/Cmd+S. */
  onShare(): void;
  /** The kinds of the CRD editor's current text. */
  kinds(): KindSchema[];
  /** The kinds the CRD editor's documents may be (CustomResourceDefinition), from the engine's OpenAPI
   * document; none until the engine has answered, and the CRD editor then has no schema help. */
  crdKinds(): KindSchema[];
}

export function createEditors(initial: Record<EditorId, string>, opts: EditorOptions): Editors {
  const readOnly = new Compartment();
  const keys = Prec.highest(keymap.of([
    { key: 'Mod-Enter', run: () => (opts.onRun(), true) },
    { key: 'Mod-s', run: () => (opts.onShare(), true), preventDefault: true },
  ]));
  const views = {} as Record<EditorId, EditorView>;
  // Editors pasted into since their last diagnostics: those then show their first error, not the end of
  // the pasted text where the paste left the cursor.
  const pasted = new Set<EditorId>();
  for (const id of ['oldcrd', 'crd', 'old', 'objects'] as EditorId[]) {
    const extensions: Extension[] = [
      keys,
      basicSetup,
      yaml(),
      syntaxHighlighting(highlight),
      theme,
      // Before the schema's hover, so that a tooltip shows the problems first; errors before warnings.
      linter(null, { tooltipFilter: (ds) => [...ds].sort((a, b) => severityOrder[a.severity] - severityOrder[b.severity]) }),
      lintGutter(),
      readOnly.of([]),
      EditorView.updateListener.of((u) => {
        if (!u.docChanged) return;
        if (u.transactions.some((tr) => tr.isUserEvent('input.paste'))) pasted.add(id);
        opts.onChange(id);
      }),
      EditorView.contentAttributes.of({ 'aria-label': `${id} YAML`, 'data-editor': id }),
    ];
    // The CRD editor's documents are a built-in kind: only an exact apiVersion and kind select its schema,
    // and a field under an untyped node (default, example, enum values are any JSON) is not unknown.
    const crdLike = id === 'crd' || id === 'oldcrd';
    const src: Source = crdLike ? { kinds: opts.crdKinds, builtin: true } : { kinds: opts.kinds, builtin: false };
    extensions.push(schemaHover(src), autocompletion({ override: [schemaCompletion(src)], activateOnTyping: true }));
    const parent = document.getElementById(`${id}-editor`)!;
    views[id] = new EditorView({ parent, state: EditorState.create({ doc: initial[id], extensions }) });
  }
  const reveal: Editors['reveal'] = (id, line, column = 1, endLine, endColumn) => {
    const view = views[id];
    if (!view) return;
    const doc = view.state.doc;
    const from = offset(doc, line, column);
    const to = endColumn ? Math.max(from, Math.min(doc.length, offset(doc, endLine || line, endColumn))) : from;
    view.dispatch({ selection: { anchor: from, head: to }, effects: EditorView.scrollIntoView(from, { y: 'center' }) });
    view.focus();
  };
  // The panes' field paths (panes.ts) name their place with an event, so that they need not hold the editors.
  document.addEventListener(GOTO_EVENT, (e) => {
    const d = (e as CustomEvent<GotoDetail>).detail;
    const id = editorOf(d.source);
    if (id) reveal(id, d.line, d.column, d.endLine, d.endColumn);
  });
  // Each editor's text, made once per version of its document (the page reads them on every edit, and a big
  // CRD's text is megabytes).
  const texts = new WeakMap<Text, string>();
  const text = (id: EditorId): string => {
    const doc = views[id].state.doc;
    let t = texts.get(doc);
    if (t === undefined) texts.set(doc, (t = doc.toString()));
    return t;
  };
  return {
    views,
    show(diags) {
      for (const id of Object.keys(views) as EditorId[]) {
        const view = views[id];
        const doc = view.state.doc;
        const mine: CMDiagnostic[] = diags.filter((d) => editorOf(d.source) === id).map((d) => {
          const from = offset(doc, d.line, d.column);
          const to = Math.max(from + 1, offset(doc, d.endLine || d.line, d.endColumn || d.column + 1));
          const message = diagnosticText(d);
          const shaped = shapeMessage(message);
          const notes = notesText(d);
          return {
            from, to: Math.min(to, doc.length), severity: d.severity,
            message: [message, ...notes].join('\n'), source: d.field ? `field ${d.field}` : undefined,
            renderMessage: shaped.full || d.detail || notes.length ? () => messageNode(message, '', d) : undefined,
          };
        });
        // The same diagnostics as the editor shows (those of the last evaluation, moved with the edits since)
        // are not set again: each update of an editor measures its DOM, a layout of the page.
        if (!pasted.has(id) && sameDiagnostics(view.state, mine)) continue;
        view.dispatch(setDiagnostics(view.state, mine));
        if (pasted.delete(id)) {
          const first = mine.filter((d) => d.severity === 'error').sort((a, b) => a.from - b.from)[0];
          if (first) view.dispatch({ effects: EditorView.scrollIntoView(first.from, { y: 'center' }) });
        }
      }
    },
    text,
    set(id, next) {
      // Only the part that differs is replaced, as typing or a paste would: the rest of the document, its
      // parse and its DOM stay, and so do the selection and the diagnostics around it.
      const v = views[id];
      const old = text(id);
      if (old === next || next.includes('\r')) {
        // The same text is set again as a change (callers expect the evaluation an edit makes); and the editor
        // keeps lines, not their separators: positions in a text with \r are not the document's.
        v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: next } });
        return;
      }
      let from = 0;
      const max = Math.min(old.length, next.length);
      while (from < max && old.charCodeAt(from) === next.charCodeAt(from)) from++;
      let end = 0;
      while (end < max - from && old.charCodeAt(old.length - 1 - end) === next.charCodeAt(next.length - 1 - end)) end++;
      v.dispatch({ changes: { from, to: old.length - end, insert: next.slice(from, next.length - end) } });
    },
    reveal,
    setReadOnly(ro) {
      for (const v of Object.values(views)) {
        v.dispatch({ effects: readOnly.reconfigure(ro ? [EditorState.readOnly.of(true), EditorView.editable.of(false)] : []) });
      }
    },
  };
}

/** Whether the editor shows exactly these diagnostics, at the same places. */
function sameDiagnostics(state: EditorState, ds: CMDiagnostic[]): boolean {
  const key = (d: CMDiagnostic, from = d.from, to = d.to) => `${from}:${Math.min(to, state.doc.length)}:${d.severity}:${d.source ?? ''}:${d.message}`;
  const now: string[] = [];
  forEachDiagnostic(state, (d, from, to) => now.push(key(d, from, to)));
  if (now.length !== ds.length) return false;
  const want = ds.map((d) => key(d)).sort();
  return now.sort().every((k, i) => k === want[i]);
}

/** Where an editor's schemas come from. */
interface Source {
  kinds(): KindSchema[];
  /** The documents are a built-in kind (the CRD editor): exact apiVersion and kind, OpenAPI's untyped JSON. */
  builtin: boolean;
}

/** The document of an editor's text at pos, its kind's schema and the path there. Only the nodes on the way
 * are read (apiVersion, kind, the mapping at the path), so that a big CRD is not converted on every key. */
function contextAt(state: EditorState, pos: number, src: Source) {
  const kinds = src.kinds();
  if (!kinds.length) return null;
  const text = state.doc.toString();
  const tree = syntaxTree(state);
  const doc = documents(text, tree).find((d) => pos >= d.from && pos <= d.to);
  if (!doc) return null;
  const headAt = (prefix: Segment[]) => ({
    apiVersion: toValue(text, valueNodeAt(text, doc, [...prefix, 'apiVersion'])), kind: toValue(text, valueNodeAt(text, doc, [...prefix, 'kind'])),
  });
  let head = headAt([]);
  let where = pathAt(text, tree, pos);
  // prefix is where the object is in the document: a List's item (kind List, CronTabList...) is an object of
  // its own, as the engine sends it.
  let prefix: Segment[] = [];
  if (!src.builtin && where && typeof head.kind === 'string' && head.kind.endsWith('List') && !schemaFor(kinds, head)
    && where.path[0] === 'items' && typeof where.path[1] === 'number') {
    prefix = where.path.slice(0, 2);
    head = headAt(prefix);
    where = { ...where, path: where.path.slice(2) };
  }
  const ks = src.builtin ? kinds.find((k) => `${k.group}/${k.version}` === head.apiVersion && k.kind === head.kind) : schemaFor(kinds, head);
  if (!ks || !where) return null;
  return { text, ks, where, doc, prefix };
}

/** Hovering a key shows its schema: type, description, default, validations. */
function schemaHover(src: Source): Extension {
  return hoverTooltip((view, pos): Tooltip | null => {
    const c = contextAt(view.state, pos, src);
    if (!c) return null;
    const path = c.where.key !== undefined ? [...c.where.path, c.where.key] : c.where.path;
    if (!path.length) return null;
    const s = at(c.ks.schema, path);
    if (!s) {
      const parent = at(c.ks.schema, path.slice(0, -1));
      if (!parent || parent['x-kubernetes-preserve-unknown-fields'] || typeof parent.additionalProperties === 'object') return null;
      if (src.builtin && !parent.properties) return null;
      return tip(c.where.from, c.where.to, [`${path.join('.')}: not in the schema of ${c.ks.kind} ${c.ks.version}`, 'The API server prunes unknown fields (and warns about them).'], 'unknown');
    }
    const parent = at(c.ks.schema, path.slice(0, -1));
    const lines = describe(path.map(String).join('.'), s, !!parent?.required?.includes(String(path[path.length - 1])));
    return tip(c.where.from, c.where.to, lines, 'known');
  });
}

function tip(from: number, to: number, lines: string[], kind: string): Tooltip {
  return {
    pos: from, end: to, above: true,
    create() {
      const dom = document.createElement('div');
      dom.className = `schema-tip ${kind}`;
      lines.forEach((l, i) => {
        const p = document.createElement(i === 0 ? 'strong' : 'div');
        p.textContent = l;
        dom.append(p);
      });
      return { dom };
    },
  };
}

/** Completion of the schema's keys (on a key) and enum values, booleans and defaults (on a value). */
function schemaCompletion(src: Source) {
  return (ctx: CompletionContext): CompletionResult | null => {
    const word = ctx.matchBefore(/[\w.\-/"']*/);
    const c = contextAt(ctx.state, ctx.pos, src);
    if (!c || !word) return null;
    const line = ctx.state.doc.lineAt(ctx.pos);
    const before = line.text.slice(0, ctx.pos - line.from);
    if (/:\s+\S*$/.test(before) || c.where.inValue) {
      // A value: the path is the key's.
      const keyMatch = before.match(/([\w.-]+):\s+\S*$/);
      const path = c.where.inValue ? c.where.path : [...c.where.path, ...(keyMatch ? [keyMatch[1]] : [])];
      const s = at(c.ks.schema, path);
      if (!s) return null;
      let values = s.enum ?? (s.type === 'boolean' ? [true, false] : s.default !== undefined ? [s.default] : []);
      // Upstream's OpenAPI gives built-in fields their Go zero value as default ("" for scope, {} for names):
      // nothing to offer.
      if (src.builtin) values = values.filter((v) => v !== '' && !(v && typeof v === 'object' && !Object.keys(v).length));
      if (!values.length) return null;
      return { from: word.from, options: values.map((v) => ({ label: typeof v === 'string' ? v : JSON.stringify(v), type: 'enum', detail: typeName(s) })) };
    }
    if (!ctx.explicit && word.from === word.to && !/^\s*(- )?$/.test(before)) return null;
    // A key: the keys of the mapping the cursor is in, minus those already there.
    const s = at(c.ks.schema, c.where.path);
    const present = new Set(mappingKeys(c.text, valueNodeAt(c.text, c.doc, [...c.prefix, ...c.where.path])));
    const opts = keysOf(s).filter(([k]) => !present.has(k) || k === c.where.key).map(([k, p]) => ({
      label: k, type: 'property', detail: typeName(p) + (s?.required?.includes(k) ? ' required' : ''),
      info: p.description, apply: k + ': ',
    }));
    return opts.length ? { from: word.from, options: opts, validFor: /^[\w-]*$/ } : null;
  };
}

