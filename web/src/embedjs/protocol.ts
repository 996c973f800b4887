// The messages of embed.js (the docs page's script), the engine frame (embed/engine.html: the one engine of
// the docs page) and each embed frame (embed/?host=...: an example's editors and panes).
//
//   engine frame -> docs page   {type: ENGINE_HELLO}                  the frame listens; ports may come
//   docs page -> engine frame   {type: CONNECT, version?}, [port]     one port per embed frame, for an engine
//                                                                     emulating version (the newest: none)
//   embed frame -> docs page    {type: HELLO}                         the frame listens; its example may come
//   docs page -> embed frame    {type: EXAMPLE, example}, [port]      the example's text, and its engine port
//   embed frame -> docs page    {type: 'crdplay:resize', height}      (main.ts) the frame's content height
//   docs page -> embed frame    {type: THEME, theme}                  the docs theme switched light or dark
//
// Over a port (embed frame <-> engine frame), in the shape of client.js <-> worker.js:
//   {op: 'request' | 'reset' | 'call', id, arg, method?}   answered by {type: 'reply', id, ok, value | error}
//   {op: 'setWebhook', enabled}, {op: 'webhookReply', id, ok, value | error}
//   {type: 'progress' | 'ready' | 'failed' | 'webhook', ...}            as the worker sends them
// Every window message is checked for its sender: the docs page takes messages only from crdplay's origin
// and the frames it made; each frame only from its parent, at the origin its URL names (?host=).

export const ENGINE_HELLO = 'crdplay:engine-hello';
export const CONNECT = 'crdplay:connect';
export const HELLO = 'crdplay:hello';
export const EXAMPLE = 'crdplay:example';
export const RESIZE = 'crdplay:resize';
export const THEME = 'crdplay:theme';

/** An example's texts, as the playground's editors hold them. */
export interface Example {
  crd: string;
  objects: string;
  old: string;
  /** The old CRD of an upgrade (mode upgrade). */
  oldCrd: string;
}

/** The bridge functions a frame may ask the shared engine whether it has (client.has). */
export const METHODS = ['evaluate', 'cel', 'kubectl'];

/**
 * Whether a window message comes from this frame's parent at the origin its URL names: "null" (a file: page
 * has an opaque origin) accepts the parent alone.
 */
export function fromHost(e: MessageEvent, host: string): boolean {
  return e.source === parent && parent !== window && (host === 'null' || e.origin === host);
}

/** The target origin for messages to the parent. */
export function hostTarget(host: string): string {
  return host === 'null' ? '*' : host;
}
