/**
 * Bundle size: esbuild (minified, then gzipped) of an app that imports only `PetStoreClient`
 * from the built dist/index.js. Target: ≤ 19 KB gzip with ky, zod/mini and p-retry included, and
 * none of the server's code. Also the `./server` and `./msw` entry points (msw itself external:
 * an app that uses the handlers already has it).
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { DIST, printTable, round, saveResult, verdict } from './lib.mjs';

const TARGET_KB = 19;

/** Strings only the reference server holds: none may reach a client bundle. */
const SERVER_ONLY = [
  'The reference server failed unexpectedly',
  'Bearer realm="petstore"',
  'petstore-demo-key',
  'Injected fault',
  'payload_too_large',
  'successor-version',
  'Whiskers',
];

/** Bundles `code` (an ES module importing from dist/) and measures it. */
async function measure(name, code, external = []) {
  const result = await build({
    stdin: { contents: code, resolveDir: fileURLToPath(DIST), loader: 'js', sourcefile: `bench-app-${name}.js` },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const text = result.outputFiles[0].text;
  const bytes = Buffer.byteLength(text);
  const gzip = gzipSync(text, { level: 9 }).length;
  // Where the minified bytes come from, by package (or dist/ for ours).
  const inputs = Object.values(result.metafile.outputs)[0].inputs;
  const byPackage = {};
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    if (bytesInOutput === 0) continue;
    const pkg = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? (/(^|\/)(dist|src)\//.test(path) ? '@animal-store/sdk' : path);
    byPackage[pkg] = (byPackage[pkg] ?? 0) + bytesInOutput;
  }
  const serverStrings = SERVER_ONLY.filter((s) => text.includes(s));
  return { name, bytes, gzip, byPackage, serverStrings };
}

const kb = (n) => round(n / 1024, 1);

export async function run() {
  const client = await measure('client', `export { PetStoreClient } from './index.js';`);
  const server = await measure('server', `export { createReferenceServer } from './server.js';`);
  const msw = await measure('msw', `export { createHandlers } from './msw.js';`, ['msw']);
  // Only to explain the client figure: what ky, p-retry and the shared zod/mini schemas weigh
  // on their own, before any client code.
  const floor = await measure(
    'floor',
    `export { default as ky } from 'ky'; export { default as pRetry } from 'p-retry';
     export { check, PetSchema, PetListSchema, NewPetSchema, ListPetsQuerySchema, ErrorRecordSchema, OrderListSchema } from '../src/schemas/index.ts';`,
  );
  // The check must be able to fail: the server bundle has to show the strings it looks for.
  const blind = SERVER_ONLY.filter((s) => !server.serverStrings.includes(s));
  if (blind.length > 0) throw new Error(`bundle-size: server-only strings not found in the server bundle: ${blind.join(', ')}`);

  const APPS = {
    client: 'import { PetStoreClient }',
    server: 'import { createReferenceServer } (./server)',
    msw: 'import { createHandlers } (./msw, msw external)',
    floor: 'floor: ky + p-retry + the schemas, no client code',
  };
  const rows = [client, server, msw, floor].map((m) => ({
    app: APPS[m.name],
    'min KB': kb(m.bytes),
    'gzip KB': kb(m.gzip),
    'by package (min KB)': Object.entries(m.byPackage).sort((x, y) => y[1] - x[1]).map(([p, b]) => `${p} ${kb(b)}`).join(', '),
  }));
  const clientOk = client.gzip <= TARGET_KB * 1024;
  const clean = client.serverStrings.length === 0;
  printTable('Bundle size: esbuild --bundle --minify (browser, ESM), then gzip -9', rows, [
    verdict(`client ≤ ${TARGET_KB} KB gzip`, `${kb(client.gzip)} KB`, clientOk),
    verdict('no server code in the client bundle', clean ? 'none of the server-only strings found' : `found: ${client.serverStrings.join(', ')}`, clean),
  ]);
  return saveResult('bundle-size', {
    client, server, msw, floor, serverOnlyStrings: SERVER_ONLY, targetKbGzip: TARGET_KB, pass: clientOk && clean,
  });
}
