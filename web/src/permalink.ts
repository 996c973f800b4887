// Permalinks: the page's whole state in the URL fragment, so that a link carries everything and no server
// stores anything. Format: "#" + VERSION + "." + base64url(deflate-raw(JSON)). The version prefix lets later
// formats be added while old links keep decoding with the code for their version.
//
// A state too big for a link (real CRDs: Gateway API's HTTPRoute is 78 kB compressed) has two ways out: a link
// without the CRD's schema descriptions, which change no verdict (withoutDescriptions), and, when crdplay-server
// hosts the page, a short link "#s=ID" whose state the server keeps (server/links.go). A static host has no
// short links; the page learns which it is on from a header of its own page (shortLinks).
import type { SyntaxNode } from '@lezer/common';
import { documents, stringify, toValue, valueNodeAt } from './yaml';

/** The state a link carries. Fields may be missing in links from older pages: read them with defaults. */
export interface State {
  crd: string;
  objects: string;
  old: string;
  mode: string;
  webhook: string;
  tab: string;
  /** Set in links made without the CRD's schema descriptions: how many were dropped (decimal), for the page
   * that opens the link to say so. */
  dropped?: string;
  /** The Kubernetes target ("1.35", versions.ts); links from pages without one open at the default. */
  version?: string;
  /** The upgrade mode's old CRD (crd is then the new one); links from pages without it open with none. */
  oldCrd?: string;
  /** Like dropped, for the old CRD's schema descriptions. */
  oldDropped?: string;
}

/** Current format: v1 = deflate-raw of the JSON of State. */
export const VERSION = 'v1';
/** Longest fragment the page writes: browsers and chat tools truncate or refuse much longer URLs. */
export const MAX_FRAGMENT = 64 * 1024;
/** Most bytes a link may expand to: bigger is refused (a decompression bomb must not hang the tab). */
export const MAX_DECODED = 2 * 1024 * 1024;

/** A link that cannot be made or opened, with a message for the user. */
export class LinkError extends Error {}

/** A state whose link would pass MAX_FRAGMENT: bytes is the link's length (its fragment) had it been made. */
export class TooBigError extends LinkError {
  constructor(readonly bytes: number) {
    super(`This playground is too big for a link: ${kB(bytes)} kB compressed, and links are limited to ` +
      `${MAX_FRAGMENT / 1024} kB (${kB(bytes - MAX_FRAGMENT)} kB over).`);
  }
}

/** The link's fragment (without "#") for a state; a TooBigError when it would pass MAX_FRAGMENT. */
export async function encode(state: State): Promise<string> {
  const frag = await fragment(state);
  if (frag.length > MAX_FRAGMENT) throw new TooBigError(frag.length);
  return frag;
}

/** The fragment of a state, however long. */
export async function fragment(state: State): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(state));
  const packed = await pipe(bytes, new CompressionStream('deflate-raw'), Infinity);
  return `${VERSION}.${toBase64url(packed)}`;
}

/** Kilobytes (1024 bytes), rounded up: "over by 0 kB" would say nothing. */
export function kB(bytes: number): number {
  return Math.ceil(bytes / 1024);
}

/** Decodes a fragment (without "#"). Throws LinkError with a message for the user. */
export async function decode(fragment: string): Promise<Partial<State>> {
  const dot = fragment.indexOf('.');
  const version = dot < 0 ? '' : fragment.slice(0, dot);
  if (version !== 'v1') throw new LinkError(`This link's format (${version || 'none'}) is unknown to this version of crdplay.`);
  if (fragment.length > MAX_FRAGMENT * 2) throw new LinkError('This link is longer than any link crdplay writes; it was not opened.');
  let bytes: Uint8Array;
  try {
    bytes = fromBase64url(fragment.slice(dot + 1));
  } catch {
    throw new LinkError('This link is damaged (not base64url); was it cut short?');
  }
  let plain: Uint8Array;
  try {
    plain = await pipe(bytes, new DecompressionStream('deflate-raw'), MAX_DECODED);
  } catch (e) {
    if (e instanceof LinkError) throw e;
    throw new LinkError('This link is damaged (it does not decompress); was it cut short?');
  }
  let state: unknown;
  try {
    state = JSON.parse(new TextDecoder().decode(plain));
  } catch {
    throw new LinkError('This link is damaged (its content is not JSON).');
  }
  return stateOf(state);
}

/** The fields of a State in a decoded value; others, and fields that are not strings, are left out. */
function stateOf(state: unknown): Partial<State> {
  if (!state || typeof state !== 'object' || Array.isArray(state)) throw new LinkError('This link holds no playground state.');
  const s = state as Record<string, unknown>;
  const out: Partial<State> = {};
  for (const k of ['crd', 'objects', 'old', 'mode', 'webhook', 'tab', 'dropped', 'version', 'oldCrd', 'oldDropped'] as const) {
    if (typeof s[k] === 'string') out[k] = s[k] as string;
  }
  return out;
}

/**
 * The CRD text without the descriptions of its schemas (spec.versions[*].schema.openAPIV3Schema, and
 * v1beta1's spec.validation.openAPIV3Schema, at every depth), and how many were dropped. Only the schemas'
 * own "description" keys go: a property named description (a key under properties) is a field and stays.
 * The rest of the text is kept as it was written, lines and comments included.
 */
export function withoutDescriptions(text: string): { text: string; dropped: number } {
  const cuts: { from: number; to: number; insert: string }[] = [];
  const docs = documents(text);
  for (const doc of docs) {
    if (toValue(text, valueNodeAt(text, doc, ['kind'])) !== 'CustomResourceDefinition') continue;
    stripSchema(text, valueNodeAt(text, doc, ['spec', 'validation', 'openAPIV3Schema']), cuts);
    for (let i = 0; valueNodeAt(text, doc, ['spec', 'versions', i]); i++) {
      stripSchema(text, valueNodeAt(text, doc, ['spec', 'versions', i, 'schema', 'openAPIV3Schema']), cuts);
    }
  }
  if (!cuts.length) return { text, dropped: 0 };
  let out = '';
  let at = 0;
  for (const c of cuts.sort((a, b) => a.from - b.from)) {
    out += text.slice(at, c.from) + c.insert;
    at = c.to;
  }
  out += text.slice(at);
  // The cuts follow the YAML tree's spans; should a layout they do not foresee change anything but the
  // descriptions, the documents are written anew from their values instead (comments and layout lost).
  const want = docs.map((d) => dropDescriptions(toValue(text, d.node)));
  const got = documents(out).map((d) => toValue(out, d.node));
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    out = want.map((v) => stringify(v)).join('---\n');
  }
  return { text: out, dropped: cuts.length };
}

/** Keys of JSONSchemaProps whose value is a schema, a list of schemas, or a map of names to schemas. */
const SUBSCHEMA = new Set(['items', 'additionalProperties', 'additionalItems', 'not']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'items']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', 'dependencies']);

function stripSchema(text: string, node: SyntaxNode | null, cuts: { from: number; to: number; insert: string }[]): void {
  node = unwrapNode(node);
  if (!node) return;
  if (node.name === 'BlockSequence' || node.name === 'FlowSequence') return; // not a schema
  if (node.name !== 'BlockMapping' && node.name !== 'FlowMapping') return;
  const ps = node.getChildren('Pair');
  ps.forEach((p, i) => {
    const key = pairKey(text, p);
    const value = unwrapNode(pairValue(p));
    if (key === 'description') {
      // The pair and the separator before the next (or after the previous) go, so that the neighbours keep
      // their places; an only pair leaves an empty mapping.
      if (ps.length === 1) cuts.push({ from: p.from, to: p.to, insert: '{}' });
      else if (i < ps.length - 1) cuts.push({ from: p.from, to: ps[i + 1].from, insert: '' });
      else cuts.push({ from: ps[i - 1].to, to: p.to, insert: '' });
    } else if (key && SCHEMA_MAPS.has(key) && value && (value.name === 'BlockMapping' || value.name === 'FlowMapping')) {
      for (const q of value.getChildren('Pair')) stripSchema(text, pairValue(q), cuts);
    } else if (key && SCHEMA_LISTS.has(key) && value && (value.name === 'BlockSequence' || value.name === 'FlowSequence')) {
      for (const it of value.getChildren('Item')) stripSchema(text, itemValue(it), cuts);
    } else if (key && SUBSCHEMA.has(key)) {
      stripSchema(text, value, cuts);
    }
  });
}

/** dropDescriptions on values: what withoutDescriptions must leave of a document. */
function dropDescriptions(doc: unknown): unknown {
  const d = structuredClone(doc) as any;
  if (!d || typeof d !== 'object' || d.kind !== 'CustomResourceDefinition') return d;
  const strip = (s: any): void => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return;
    delete s.description;
    for (const [k, v] of Object.entries(s) as [string, any][]) {
      if (SCHEMA_MAPS.has(k) && v && typeof v === 'object' && !Array.isArray(v)) Object.values(v).forEach(strip);
      else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) v.forEach(strip);
      else if (SUBSCHEMA.has(k)) strip(v);
    }
  };
  strip(d.spec?.validation?.openAPIV3Schema);
  for (const v of Array.isArray(d.spec?.versions) ? d.spec.versions : []) strip(v?.schema?.openAPIV3Schema);
  return d;
}

function unwrapNode(n: SyntaxNode | null): SyntaxNode | null {
  while (n && (n.name === 'Tagged' || n.name === 'Anchored')) {
    let inner: SyntaxNode | null = null;
    for (let c = n.firstChild; c; c = c.nextSibling) if (c.name !== 'Tag' && c.name !== 'Anchor') inner = c;
    n = inner;
  }
  return n;
}

function pairKey(text: string, pair: SyntaxNode): string | null {
  const k = toValue(text, pair.getChild('Key')?.firstChild ?? null);
  return typeof k === 'string' ? k : null;
}

function pairValue(pair: SyntaxNode): SyntaxNode | null {
  let colon = false;
  for (let c = pair.firstChild; c; c = c.nextSibling) {
    if (c.name === ':') colon = true;
    else if (colon && c.name !== 'Comment') return c;
  }
  return null;
}

function itemValue(item: SyntaxNode): SyntaxNode | null {
  for (let c = item.firstChild; c; c = c.nextSibling) if (c.name !== '-' && c.name !== 'Comment' && c.name !== ',') return c;
  return null;
}

/** What the page says when it opens a link made without the CRD's descriptions. */
export function droppedNotice(s: Partial<State>): string | null {
  const n = (Number(s.dropped) || 0) + (Number(s.oldDropped) || 0);
  if (!(n > 0)) return null;
  return `This link's CRD was shared without its ${n} schema description${n === 1 ? '' : 's'}, to fit in a link: ` +
    'they change no verdict, but the Explain pane and hover have no descriptions.';
}

// Short links, on crdplay-server only.

/**
 * Where this page's host stores short links (crdplay-server's LinksPath, as a URL), or null on a host that
 * does not (a static host). Read from a header of the page itself, so that a static host is asked nothing
 * it would answer with an error.
 */
export function shortLinks(page: string = location.href): Promise<URL | null> {
  shortLinksProbe ??= fetch(page.split('#')[0], { method: 'HEAD', cache: 'no-store' }).then(async (r) => {
    await r.arrayBuffer(); // an unread response is cancelled, which the browser reports as a failed request
    const p = r.headers.get('X-Crdplay-Links');
    return p ? new URL(p, page) : null;
  }, () => null);
  return shortLinksProbe;
}
let shortLinksProbe: Promise<URL | null> | null = null;

/** Stores the state on the server at endpoint and returns its id. Throws LinkError with the server's reason. */
export async function storeShort(endpoint: URL, state: State): Promise<string> {
  let res: Response;
  try {
    res = await fetch(endpoint, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(state) });
  } catch (e) {
    throw new LinkError(`The server could not be reached to store the link: ${String(e)}`);
  }
  const body = await res.json().catch(() => ({}));
  if (!res.ok || typeof body.id !== 'string') {
    throw new LinkError(`The server did not store the link (HTTP ${res.status}): ${body.error ?? 'no reason given'}`);
  }
  return body.id;
}

/** The state a short link's id names, from the server hosting the page. Throws LinkError saying why not. */
export async function openShort(id: string, page: string = location.href): Promise<Partial<State>> {
  const endpoint = await shortLinks(page);
  if (!endpoint) {
    throw new LinkError(`This is a short link (${id}), kept by the crdplay-server that made it; this host keeps no links, so it cannot be opened here.`);
  }
  let res: Response;
  try {
    res = await fetch(new URL(`${endpoint.pathname}/${encodeURIComponent(id)}`, endpoint));
  } catch (e) {
    throw new LinkError(`The server could not be reached to open the short link ${id}: ${String(e)}`);
  }
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new LinkError(`This short link could not be opened (HTTP ${res.status}): ${body?.error ?? 'no reason given'}`);
  return stateOf(body);
}

/**
 * The fragment of a link to state that opens on any host when the whole state is too big for one: the state
 * without the CRD's schema descriptions (they change no verdict) when that fits, else, with short, a short link
 * kept by the server hosting the page. note says what the link leaves out or where it is kept; '' for the whole
 * state. A LinkError says why no link can be made.
 */
export async function fittingFragment(state: State, opts: { short: boolean }): Promise<{ frag: string; note: string }> {
  const whole = await fragment(state);
  if (whole.length <= MAX_FRAGMENT) return { frag: whole, note: '' };
  const over = new TooBigError(whole.length).message;
  const stripped = await strippedFragment(state);
  if (stripped && stripped.frag.length <= MAX_FRAGMENT) {
    return { frag: stripped.frag, note: `${over} This link leaves out the CRD's ${stripped.dropped} schema descriptions, which change no verdict.` };
  }
  const endpoint = opts.short ? await shortLinks() : null;
  if (endpoint) return { frag: `s=${await storeShort(endpoint, state)}`, note: `${over} This is a short link: the server hosting this page keeps the state.` };
  throw new LinkError(`${over} ${stripped ? 'Even without its schema descriptions the CRD does not fit' : 'The CRD has no schema descriptions to leave out'}${opts.short ? ', and this host keeps no short links (they need crdplay-server).' : '.'}`);
}

/**
 * The fragment of a link to state without the CRD's schema descriptions (withoutDescriptions), however long,
 * and how many it leaves out; null when the CRD has none.
 */
export async function strippedFragment(state: State): Promise<{ frag: string; dropped: number } | null> {
  const stripped = withoutDescriptions(state.crd);
  // The upgrade mode's old CRD is stripped too; dropped and oldDropped say how many each lost.
  const old = state.oldCrd ? withoutDescriptions(state.oldCrd) : { text: state.oldCrd, dropped: 0 };
  if (stripped.dropped + old.dropped === 0) return null;
  const s: State = { ...state, crd: stripped.text };
  if (stripped.dropped) s.dropped = String(stripped.dropped);
  if (old.dropped) {
    s.oldCrd = old.text;
    s.oldDropped = String(old.dropped);
  }
  return { frag: await fragment(s), dropped: stripped.dropped + old.dropped };
}

/** The short link's id in a URL ("#s=ID" or "?s=ID"), or null. */
export function shortID(url: URL): string | null {
  return new URLSearchParams(url.hash.slice(1)).get('s') ?? url.searchParams.get('s');
}

/** Runs bytes through a (de)compression stream, stopping with LinkError once the output passes limit. */
async function pipe(input: Uint8Array, stream: CompressionStream | DecompressionStream, limit: number): Promise<Uint8Array> {
  const writer = stream.writable.getWriter();
  // Not awaited: the reader below must drain while the writer fills, or a big input deadlocks.
  const written = writer.write(input as Uint8Array<ArrayBuffer>).then(() => writer.close());
  written.catch(() => {});
  const reader = stream.readable.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      writer.abort().catch(() => {});
      throw new LinkError(`This link expands to more than ${limit / 1024 / 1024} MB; it was refused.`);
    }
    chunks.push(value);
  }
  await written;
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

function toBase64url(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(s: string): Uint8Array {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new Error('not base64url');
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
