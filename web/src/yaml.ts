// YAML as the editors need it, from the same Lezer tree CodeMirror highlights with: documents of a stream,
// values of a document and the node a field path names (the kinds' schemas for hover, completion and the
// explain pane before the engine is there), the field path at a position (hover, completion), and YAML text
// of a JSON value (the panes). The engine parses the YAML it is sent with its own (Go) parser and places its
// answers itself: these functions never decide what is valid.
import { parser } from '@lezer/yaml';
import type { SyntaxNode, Tree } from '@lezer/common';

/** One non-empty document of a YAML stream: where it is in the whole text, and its top-level node. */
export interface YamlDoc {
  /** Offset of the document's first character in the stream. */
  from: number;
  to: number;
  /** The document's top-level node (BlockMapping, ...). */
  node: SyntaxNode;
}

/** A path segment: a mapping key or a sequence index. */
export type Segment = string | number;

function parse(text: string): Tree {
  return parser.parse(text);
}

/**
 * The documents of a stream, skipping empty ones (only comments or whitespace), as kubectl does and as the
 * engine numbers them.
 */
export function documents(text: string, tree: Tree = parse(text)): YamlDoc[] {
  const docs: YamlDoc[] = [];
  for (let doc = tree.topNode.firstChild; doc; doc = doc.nextSibling) {
    if (doc.name !== 'Document') continue;
    let node: SyntaxNode | null = null;
    for (let c = doc.firstChild; c; c = c.nextSibling) {
      if (c.name !== 'DirectiveEnd' && c.name !== 'DocEnd' && c.name !== 'Comment' && c.name !== 'Directive') {
        node = c;
        break;
      }
    }
    // The Document node of "---\n..." starts at the marker; the body starts after it.
    let from = doc.from;
    const first = doc.firstChild;
    if (first?.name === 'DirectiveEnd') from = first.to;
    if (node) docs.push({ from, to: doc.to, node });
  }
  return docs;
}

/** Removes wrapping Tagged/Anchored nodes. */
function unwrap(n: SyntaxNode | null): SyntaxNode | null {
  while (n && (n.name === 'Tagged' || n.name === 'Anchored')) {
    let inner: SyntaxNode | null = null;
    for (let c = n.firstChild; c; c = c.nextSibling) {
      if (c.name !== 'Tag' && c.name !== 'Anchor') inner = c;
    }
    n = inner;
  }
  return n;
}

/** The key text of a Pair (unquoted), or null for a complex key. */
function pairKey(text: string, pair: SyntaxNode): string | null {
  const key = pair.getChild('Key');
  const lit = key?.firstChild;
  if (!lit) return null;
  return scalarText(text, lit);
}

/** The value node of a Pair, or null when it has none ("key:" alone). */
function pairValue(pair: SyntaxNode): SyntaxNode | null {
  let seenColon = false;
  for (let c = pair.firstChild; c; c = c.nextSibling) {
    if (c.name === ':') seenColon = true;
    else if (seenColon && c.name !== 'Comment') return c;
  }
  return null;
}

function items(n: SyntaxNode): SyntaxNode[] {
  return n.getChildren('Item');
}

function pairs(n: SyntaxNode): SyntaxNode[] {
  return n.getChildren('Pair');
}

/** Text of a scalar node with quotes and escapes resolved. */
function scalarText(text: string, n: SyntaxNode): string {
  const raw = text.slice(n.from, n.to);
  if (n.name === 'QuotedLiteral') {
    if (raw.startsWith("'")) return raw.slice(1, -1).replace(/''/g, "'");
    try {
      return JSON.parse(raw.replace(/\n\s*/g, ' '));
    } catch {
      return raw.slice(1, -1);
    }
  }
  if (n.name === 'BlockLiteral') return blockLiteral(text, n);
  return raw.replace(/\s*\n\s*/g, ' ');
}

function blockLiteral(text: string, n: SyntaxNode): string {
  const header = text.slice(n.getChild('BlockLiteralHeader')?.from ?? n.from, n.getChild('BlockLiteralHeader')?.to ?? n.from);
  const content = n.getChild('BlockLiteralContent');
  if (!content) return '';
  // Content starts after the header's newline; measure indentation from its first line.
  const lineStart = text.lastIndexOf('\n', content.from - 1) + 1;
  const body = text.slice(lineStart, content.to);
  const lines = body.split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
  const stripped = lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0));
  let out = header.startsWith('>')
    ? stripped.join('\n').replace(/([^\n])\n(?=[^\n ])/g, '$1 ')
    : stripped.join('\n');
  if (header.includes('-')) out = out.replace(/\n+$/, '');
  else if (header.includes('+')) out += '\n';
  else out = out.replace(/\n*$/, '\n');
  return out;
}

/** A plain scalar's value under YAML 1.2's core schema, as Go's sigs.k8s.io/yaml reads it. */
function plainValue(s: string): unknown {
  if (s === '' || s === '~' || /^(null|Null|NULL)$/.test(s)) return null;
  if (/^(true|True|TRUE)$/.test(s)) return true;
  if (/^(false|False|FALSE)$/.test(s)) return false;
  if (/^[-+]?[0-9]+$/.test(s)) return Number(s);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return parseInt(s.slice(2), 16);
  if (/^0o[0-7]+$/.test(s)) return parseInt(s.slice(2), 8);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(s)) return Number(s);
  if (/^[-+]?\.(inf|Inf|INF)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^\.(nan|NaN|NAN)$/.test(s)) return NaN;
  return s;
}

/** The text each scalar was written as, by the mapping or sequence toValue put it in: hover shows a schema's
 * values as the CRD's YAML writes them ('^(\d+|\*)'), not as JSON would ("^(\\d+|\\*)"). */
const written = new WeakMap<object, Map<string | number, string>>();

/** The text a scalar of a value toValue made was written as (`container[key]`); undefined for a value not read
 * from a scalar of the text. */
export function writtenAs(container: object, key: string | number): string | undefined {
  return written.get(container)?.get(key);
}

/** Records the text of node, when it is a one-line scalar, as how container[key] was written. */
function noteWritten(text: string, container: object, key: string | number, node: SyntaxNode | null): void {
  if (!node || (node.name !== 'Literal' && node.name !== 'QuotedLiteral')) return;
  const src = text.slice(node.from, node.to);
  if (src.includes('\n')) return;
  let m = written.get(container);
  if (!m) written.set(container, (m = new Map()));
  m.set(key, src);
}

/** A scalar as a YAML writer would write it on one line: plain when it reads back as the same string, single
 * quoted when that is enough, double quoted (JSON's escapes) for a newline or a control character. */
export function yamlScalar(v: unknown): string {
  if (typeof v !== 'string') return v === undefined ? 'null' : JSON.stringify(v);
  const plain = scalar(v);
  if (plain === v) return v;
  return /[\u0000-\u001f\u007f]/.test(v) ? plain : `'${v.replaceAll("'", "''")}'`;
}

/**
 * The value of a node: objects, arrays and scalars. Aliases resolve to the anchored value seen before them.
 * Good enough for describing a document; the engine's parser is the one that judges it.
 */
export function toValue(text: string, node: SyntaxNode | null, anchors = new Map<string, unknown>()): unknown {
  if (!node) return null;
  if (node.name === 'Anchored') {
    const anchor = node.getChild('Anchor');
    const v = toValue(text, unwrap(node), anchors);
    if (anchor) anchors.set(text.slice(anchor.from + 1, anchor.to), v);
    return v;
  }
  if (node.name === 'Tagged') {
    const tag = node.getChild('Tag');
    const inner = unwrap(node);
    if (tag && /^!!str$/.test(text.slice(tag.from, tag.to)) && inner) return scalarText(text, inner);
    return toValue(text, inner, anchors);
  }
  switch (node.name) {
    case 'BlockMapping':
    case 'FlowMapping': {
      const out: Record<string, unknown> = {};
      for (const p of pairs(node)) {
        const k = pairKey(text, p);
        if (k === null) continue;
        if (k === '<<') {
          const merged = toValue(text, pairValue(p), anchors);
          if (merged && typeof merged === 'object' && !Array.isArray(merged)) {
            for (const [mk, mv] of Object.entries(merged)) if (!(mk in out)) out[mk] = mv;
          }
          continue;
        }
        const vn = pairValue(p);
        out[k] = toValue(text, vn, anchors);
        noteWritten(text, out, k, vn);
      }
      return out;
    }
    case 'BlockSequence':
    case 'FlowSequence': {
      const out = items(node).map((it) => toValue(text, itemValue(it), anchors));
      items(node).forEach((it, i) => noteWritten(text, out, i, itemValue(it)));
      return out;
    }
    case 'Literal':
      return plainValue(scalarText(text, node));
    case 'QuotedLiteral':
    case 'BlockLiteral':
      return scalarText(text, node);
    case 'Alias':
      return anchors.get(text.slice(node.from + 1, node.to)) ?? null;
    default:
      return null;
  }
}

function itemValue(item: SyntaxNode): SyntaxNode | null {
  for (let c = item.firstChild; c; c = c.nextSibling) {
    if (c.name !== '-' && c.name !== 'Comment' && c.name !== ',') return c;
  }
  return null;
}

/**
 * One segment down from a node: the value of the sequence item at an index, or of the mapping pair with a
 * key ({next: null} for an empty one); null when the node has no such child.
 */
function step(text: string, node: SyntaxNode, seg: Segment): { next: SyntaxNode | null } | null {
  if (typeof seg === 'number' && (node.name === 'BlockSequence' || node.name === 'FlowSequence')) {
    const it = items(node)[seg];
    return it ? { next: itemValue(it) } : null;
  }
  if (node.name === 'BlockMapping' || node.name === 'FlowMapping') {
    const p = pairs(node).find((pp) => pairKey(text, pp) === String(seg));
    return p ? { next: pairValue(p) } : null;
  }
  return null;
}

/**
 * The value node a path names in a document, or null when the document does not go that deep. Reads only the
 * nodes on the path, so that hover and completion in a big CRD do not convert the whole document to values.
 */
export function valueNodeAt(text: string, doc: YamlDoc, path: Segment[]): SyntaxNode | null {
  let node = unwrap(doc.node);
  for (const seg of path) {
    const s = node && step(text, node, seg);
    if (!s) return null;
    node = unwrap(s.next);
  }
  return node;
}

/** The keys of a mapping node ([] for any other node). */
export function mappingKeys(text: string, node: SyntaxNode | null): string[] {
  if (!node || (node.name !== 'BlockMapping' && node.name !== 'FlowMapping')) return [];
  return pairs(node).map((p) => pairKey(text, p)).filter((k): k is string => k !== null);
}

/** What is at a position of a document: the path of the mapping the position is in, and the key there. */
export interface PathAt {
  /** Path of the enclosing value (the mapping whose key is being typed, or the pair's value). */
  path: Segment[];
  /** The key under the cursor, if the position is on a key. */
  key?: string;
  /** True when the position is on a value (after "key: "). */
  inValue: boolean;
  /** Node range of the key or value at the position, for hover ranges. */
  from: number;
  to: number;
}

/**
 * The path at a position, by walking up the tree from the node there. Returns null outside any document
 * body. For a position on a key, path is the key's mapping and key the key; for one on a value, path ends with
 * the key whose value it is.
 */
export function pathAt(text: string, tree: Tree, pos: number): PathAt | null {
  let node: SyntaxNode | null = tree.resolveInner(pos, -1);
  if (node.name === 'Stream' || node.name === 'Document') node = tree.resolveInner(pos, 1);
  const segs: Segment[] = [];
  let key: string | undefined;
  let inValue = false;
  let from = node.from;
  let to = node.to;
  // Was the start node inside a Key? Then it is "on a key".
  for (let n: SyntaxNode | null = node; n; n = n.parent) {
    if (n.name === 'Key') {
      const pair = n.parent!;
      key = pairKey(text, pair) ?? undefined;
      from = n.from;
      to = n.to;
      node = pair.parent; // the mapping
      break;
    }
    if (n.name === 'Pair' || n.name === 'Item' || n.name === 'Document') break;
  }
  if (key === undefined && node) {
    // On a value: is it directly a pair's value?
    for (let n: SyntaxNode | null = node; n; n = n.parent) {
      if (n.name === 'Pair') {
        const v = pairValue(n);
        if (v && pos >= v.from && pos <= v.to && (v.name === 'Literal' || v.name === 'QuotedLiteral' || v.name === 'BlockLiteral')) {
          inValue = true;
          from = v.from;
          to = v.to;
        } else if (!v || pos > (n.getChild(':')?.to ?? n.to)) {
          inValue = !v || v.name === 'Literal' || v.name === 'QuotedLiteral';
        }
        const k = pairKey(text, n);
        if (inValue && k !== null) {
          key = k;
          node = n.parent;
        }
        break;
      }
      if (n.name === 'BlockMapping' || n.name === 'FlowMapping' || n.name === 'Item' || n.name === 'Document') break;
    }
  }
  // Walk up, collecting keys and indexes.
  for (let n: SyntaxNode | null = node; n && n.name !== 'Document' && n.name !== 'Stream'; n = n.parent) {
    const parent = n.parent;
    if (!parent) break;
    if (parent.name === 'Pair' && pairValue(parent) && pairValue(parent)!.from === n.from) {
      const k = pairKey(text, parent);
      if (k !== null) segs.unshift(k);
    } else if (n.name === 'Item' && parent && (parent.name === 'BlockSequence' || parent.name === 'FlowSequence')) {
      segs.unshift(items(parent).findIndex((it) => it.from === n!.from));
    }
  }
  if (inValue && key !== undefined) segs.push(key);
  return { path: segs, key: inValue ? undefined : key, inValue, from, to };
}

/** YAML text of a JSON value, in the block style kubectl prints, with a comment per marked path. */
export function stringify(v: unknown, marks: Map<string, string> = new Map()): string {
  const lines: string[] = [];
  emit(v, '', 0, lines, marks, null);
  return lines.join('\n') + '\n';
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = String(v);
  if (s === '' || /^[\s-?:,[\]{}#&*!|>'"%@`]|[:#]\s|\s$|\n/.test(s) || plainValue(s) !== s || /: |:$/.test(s)) {
    return JSON.stringify(s);
  }
  return s;
}

function childPath(prefix: string, k: string | number): string {
  if (typeof k === 'number') return `${prefix}[${k}]`;
  return /^[A-Za-z_$][\w$-]*$/.test(k) ? (prefix ? `${prefix}.${k}` : k) : `${prefix}[${k}]`;
}

function emit(v: unknown, path: string, indent: number, lines: string[], marks: Map<string, string>, lead: string | null): void {
  const pad = ' '.repeat(indent);
  const note = (p: string) => (marks.has(p) ? `  # ${marks.get(p)}` : '');
  if (Array.isArray(v)) {
    if (v.length === 0) {
      if (lead !== null) lines.push(lead + ' []' + note(path));
      else lines.push(pad + '[]');
      return;
    }
    if (lead !== null) lines.push(lead + note(path));
    v.forEach((x, i) => {
      const p = childPath(path, i);
      if (x && typeof x === 'object' && !Array.isArray(x) && Object.keys(x).length) {
        const entries = Object.entries(x);
        entries.forEach(([k, y], j) => {
          const prefix = j === 0 ? pad + '- ' : pad + '  ';
          emitPair(k, y, childPath(p, k), indent + 2, lines, marks, prefix);
        });
      } else if (x && typeof x === 'object') {
        emit(x, p, indent + 2, lines, marks, pad + '-');
      } else {
        lines.push(pad + '- ' + scalar(x) + note(p));
      }
    });
    return;
  }
  if (v && typeof v === 'object') {
    const entries = Object.entries(v);
    if (entries.length === 0) {
      if (lead !== null) lines.push(lead + ' {}' + note(path));
      else lines.push(pad + '{}');
      return;
    }
    if (lead !== null) lines.push(lead + note(path));
    for (const [k, y] of entries) emitPair(k, y, childPath(path, k), indent, lines, marks, pad);
    return;
  }
  if (lead !== null) lines.push(lead + ' ' + scalar(v) + note(path));
  else lines.push(pad + scalar(v));
}

function emitPair(k: string, y: unknown, p: string, indent: number, lines: string[], marks: Map<string, string>, prefix: string): void {
  const key = scalar(k) + ':';
  if (y && typeof y === 'object') {
    const nonEmpty = Array.isArray(y) ? y.length > 0 : Object.keys(y).length > 0;
    if (nonEmpty) {
      lines.push(prefix + key + (marks.has(p) ? `  # ${marks.get(p)}` : ''));
      const pad = ' '.repeat(indent);
      if (Array.isArray(y)) {
        // kubectl's style: sequence items at the key's indentation.
        const sub: string[] = [];
        emit(y, p, indent, sub, marks, null);
        lines.push(...sub);
      } else {
        for (const [k2, y2] of Object.entries(y)) emitPair(k2, y2, childPath(p, k2), indent + 2, lines, marks, pad + '  ');
      }
      return;
    }
  }
  emit(y, p, indent, lines, marks, prefix + key);
}
