// Permalinks: the page's whole state in the URL fragment, so that a link carries everything and no server
// stores anything. Format: "#" + VERSION + "." + base64url(deflate-raw(JSON)). The version prefix lets later
// formats be added while old links keep decoding with the code for their version.

/** The state a link carries. Fields may be missing in links from older pages: read them with defaults. */
export interface State {
  crd: string;
  objects: string;
  old: string;
  mode: string;
  webhook: string;
  tab: string;
}

/** Current format: v1 = deflate-raw of the JSON of State. */
export const VERSION = 'v1';
/** Longest fragment the page writes: browsers and chat tools truncate or refuse much longer URLs. */
export const MAX_FRAGMENT = 64 * 1024;
/** Most bytes a link may expand to: bigger is refused (a decompression bomb must not hang the tab). */
export const MAX_DECODED = 2 * 1024 * 1024;

export class LinkError extends Error {}

export async function encode(state: State): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(state));
  const packed = await pipe(bytes, new CompressionStream('deflate-raw'), Infinity);
  const frag = `${VERSION}.${toBase64url(packed)}`;
  if (frag.length > MAX_FRAGMENT) {
    throw new LinkError(`This playground is too big for a link: ${Math.round(frag.length / 1024)} kB compressed, ` +
      `and links are limited to ${MAX_FRAGMENT / 1024} kB. Shorten the CRD (descriptions are the usual bulk) or share the files.`);
  }
  return frag;
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
  if (!state || typeof state !== 'object') throw new LinkError('This link holds no playground state.');
  const s = state as Record<string, unknown>;
  const out: Partial<State> = {};
  for (const k of ['crd', 'objects', 'old', 'mode', 'webhook', 'tab'] as const) {
    if (typeof s[k] === 'string') out[k] = s[k] as string;
  }
  return out;
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
