// A typed use of the page's API, for tsc (npm run typecheck): it fails when crdplay.d.ts and client.js disagree.
import { install } from '../static/client.js';
import type { Crdplay, CrdplayClient, CrdplayError, CrdplayResponse } from '../static/crdplay.d.ts';

const client: CrdplayClient = install({ wasmURL: '/crdplay.wasm' });
const api: Crdplay = client;
const global: Crdplay | undefined = globalThis.crdplay;

client.addEventListener('progress', (e) => console.log(e.detail.loaded, e.detail.total));

async function use(): Promise<void> {
  const { version, timings } = await client.ready;
  console.log(version.kubernetes, timings.page - timings.compiled, global === api);
  const resp: CrdplayResponse = await api.request({
    method: 'POST',
    path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    headers: { 'Content-Type': 'application/yaml', Accept: ['application/json'] },
    body: 'kind: CustomResourceDefinition',
  });
  const warnings: string[] = ([] as string[]).concat(resp.headers['Warning'] ?? []);
  console.log(resp.status, warnings, resp.body.length);
  const bad: CrdplayError | undefined = api.setWebhook(async (review, clientConfig) => review + clientConfig);
  console.log(bad?.error, api.version().go);
  await api.reset();
}
void use;
