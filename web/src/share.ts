// The Share button: a permalink when the state fits in one; otherwise how far over it is and the ways out that
// this host offers (permalink.ts): a link without the CRD's schema descriptions, when that fits, and a short
// link kept by crdplay-server, when the page is served by one. A refusal always says why.
import './share.css';
import { h } from './panes';
import { fragment, kB, LinkError, MAX_FRAGMENT, shortLinks, storeShort, strippedFragment, TooBigError, type State } from './permalink';

/** What share needs of the page. */
export interface ShareHost {
  state(): State;
  /** The page's address without fragment or query, which links are made from. */
  home: URL;
  /** Where messages go (the page's notice bar). */
  notice: HTMLElement;
  /** Called with a link's fragment once it is handed out, to put it in the address bar. */
  shared(fragment: string): void;
}

/** Makes the link of host's state, or offers the ways out when it is too big. */
export async function share(host: ShareHost): Promise<void> {
  try {
    const st = host.state();
    const frag = await fragment(st);
    if (frag.length <= MAX_FRAGMENT) {
      await handOut(host, frag, '');
      return;
    }
    const options: (HTMLElement | string)[] = [];
    const stripped = await strippedFragment(st);
    if (!stripped) {
      options.push(h('span', {}, 'The CRD has no schema descriptions to drop.'));
    } else {
      const small = stripped.frag;
      const what = `${stripped.dropped} schema description${stripped.dropped === 1 ? '' : 's'}`;
      if (small.length <= MAX_FRAGMENT) {
        options.push(button('share-stripped', `Link without the CRD's ${what} (${kB(small.length)} kB)`,
          () => handOut(host, small, `Without the CRD's ${what} (they change no verdict; the page that opens it says so). `)));
      } else {
        options.push(h('span', {}, `Without the CRD's ${what} it is still ${kB(small.length)} kB, ${kB(small.length - MAX_FRAGMENT)} kB over.`));
      }
    }
    const endpoint = await shortLinks();
    if (endpoint) {
      options.push(button('share-short', 'Short link, kept by this server', async () => {
        const id = await storeShort(endpoint, st);
        await handOut(host, `s=${id}`, 'A short link: this server keeps the whole state. ');
      }));
    } else {
      options.push(h('span', {}, 'Short links need the page served by crdplay-server.'));
    }
    showNotice(host.notice, 'error', new TooBigError(frag.length).message, ...options);
  } catch (e) {
    showNotice(host.notice, 'error', e instanceof LinkError ? e.message : `The link could not be made: ${String(e)}`);
  }
}

/** Puts the link to fragment in the address bar and the clipboard, and shows it. */
async function handOut(host: ShareHost, frag: string, prefix: string): Promise<void> {
  const url = new URL(host.home);
  url.hash = frag;
  host.shared(frag);
  const link = h('input', { class: 'link', readonly: true, value: url.href, 'aria-label': 'permalink' });
  try {
    await navigator.clipboard.writeText(url.href);
    showNotice(host.notice, 'info', `${prefix}Link copied (${url.href.length} characters).`, link);
  } catch {
    showNotice(host.notice, 'info', `${prefix}Your browser did not let the page copy; the link is in the address bar and here:`, link);
  }
}

function button(id: string, label: string, action: () => Promise<void>): HTMLElement {
  const b = h('button', { type: 'button', id, class: 'share-option' }, label) as HTMLButtonElement;
  b.addEventListener('click', () => {
    b.disabled = true;
    action().catch((e) => showNotice(b.closest<HTMLElement>('.notice')!, 'error', e instanceof LinkError ? e.message : String(e)));
  });
  return b;
}

/** Shows text (or a span of text and links) in the notice bar n, then the rest (a link, the ways out), with a
 * button that closes it. */
export function showNotice(n: HTMLElement, kind: 'info' | 'error', text: string | HTMLElement, ...rest: (HTMLElement | string)[]): void {
  n.hidden = false;
  n.dataset.kind = kind;
  const close = h('button', { type: 'button', class: 'close', 'aria-label': 'close' }, '×');
  close.addEventListener('click', () => { n.hidden = true; });
  n.replaceChildren(typeof text === 'string' ? h('span', {}, text) : text, ...rest, close);
}
