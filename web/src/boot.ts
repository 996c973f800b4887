// The first script of the page: it starts the engine's worker (and so the download of the wasm, the page's
// biggest file) before the main bundle has run and built the editors. main.ts picks the client up from
// window.crdplay.
import { install } from '../static/client.js';

const assets = JSON.parse(document.getElementById('crdplay-assets')?.textContent ?? '{}');
// An embed made by embed.js (embed/?host=...) uses the docs page's shared engine instead (embedframe.ts).
if (!(document.body.dataset.page === 'embed' && new URLSearchParams(location.search).has('host'))) {
  install({
    workerURL: new URL(assets.worker, location.href),
    wasmURL: new URL(assets.wasm, location.href),
    wasmExecURL: new URL(assets.wasmExec, location.href),
  });
}
