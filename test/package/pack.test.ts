// The package as users get it: `npm pack`, installed into a fresh project outside the repo, then
// used through an ESM import, a CJS require, `tsc` under strict, and `npx petstore-server`.
// `npm test` builds dist/ first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlocks } from '../docs/blocks.js';
import { createConsumer, ROOT, type Consumer } from '../support/consumer.js';

const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/** TypeScript versions the README's and guides' code is compiled with, by alias. */
const TYPESCRIPTS = { 'typescript-5.5': '~5.5.4', 'typescript-6.0': '~6.0.3', 'typescript-7.0': '^7.0.2' };

let consumer: Consumer;
let dir: string;
let packed: Consumer['packed'];

/** Runs a command in the consumer project, with the same Node as the tests. */
const inConsumer = (file: string, args: string[]) => consumer.run(file, args);

beforeAll(async () => {
  // The tarball's dependencies, msw (an optional peer) and Node's types, as a TypeScript app
  // would have them.
  consumer = await createConsumer([
    'msw@^3', '@types/node@^24', 'redis@^6', 'vitest@^5',
    // The TypeScript versions the docs' code must compile with: the oldest supported, ours, and
    // what `npm i -D typescript` installs today.
    ...Object.entries(TYPESCRIPTS).map(([alias, range]) => `${alias}@npm:typescript@${range}`),
  ]);
  ({ dir, packed } = consumer);
}, 120_000);

afterAll(async () => {
  await consumer?.remove();
});

describe('the packed tarball', () => {
  it('holds exactly the entry points, their chunks, the browser stubs, the ESM CLI, README, CHANGELOG, LICENSE and package.json', () => {
    // Chunk names carry a content hash (`chunk-7LA6YVJH.js`, `server-B1wKWtnL.d.cts`): one name for all.
    const files = [...new Set(packed.files.map((f) => f.path.replace(/^dist\/[^/]+-[\w-]{8}\./, 'dist/<chunk>.')))].sort();
    expect(files).toEqual(
      [
        'CHANGELOG.md', 'LICENSE', 'README.md', 'package.json',
        ...['index', 'server', 'msw', 'node', 'redis'].flatMap((entry) =>
          ['js', 'js.map', 'cjs', 'cjs.map', 'd.ts', 'd.cts'].map((ext) => `dist/${entry}.${ext}`),
        ),
        'dist/<chunk>.js', 'dist/<chunk>.js.map', 'dist/<chunk>.d.ts', 'dist/<chunk>.d.cts',
        // The bin is ESM only and nothing imports it: no CommonJS CLI, no declarations.
        'dist/cli.js', 'dist/cli.js.map',
        // What browser builds get for the Node-only entries (their `browser` condition).
        'dist/browser/node.js', 'dist/browser/node.js.map', 'dist/browser/redis.js', 'dist/browser/redis.js.map',
      ].sort(),
    );
  });

  it('an ESM import of every entry point works, and the client talks to the server in-process', async () => {
    await writeFile(
      join(dir, 'esm.mjs'),
      `import { PetStoreClient, NotFoundError } from '@animal-store/sdk';
import { createReferenceServer } from '@animal-store/sdk/server';
import { createHandlers } from '@animal-store/sdk/msw';
import { startReferenceServer } from '@animal-store/sdk/node';
const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 2 });
const client = new PetStoreClient({ apiKey: 'k', baseUrl: 'http://in-process/v1', fetch: (request) => server.fetch(request) });
const pets = await client.listPets();
const created = await client.createPet({ name: 'Esm', categoryId: 1 });
console.log(JSON.stringify({ pets: pets.length, created: created.id, handlers: createHandlers(server, { baseUrl: 'http://x/v1' }).length, node: typeof startReferenceServer, notFound: typeof NotFoundError }));
`,
    );
    const { stdout } = await inConsumer(process.execPath, ['esm.mjs']);
    expect(JSON.parse(stdout)).toEqual({ pets: 2, created: 3, handlers: 2, node: 'function', notFound: 'function' });
  });

  it('a CJS require of every entry point works, and the client talks to the node adapter over HTTP', async () => {
    await writeFile(
      join(dir, 'cjs.cjs'),
      `const { PetStoreClient, ValidationError } = require('@animal-store/sdk');
const { DEMO_API_KEY } = require('@animal-store/sdk/server');
const { createHandlers } = require('@animal-store/sdk/msw');
const { startReferenceServer } = require('@animal-store/sdk/node');
(async () => {
  const running = await startReferenceServer({ port: 0, pets: 1 });
  const client = new PetStoreClient({ apiKey: DEMO_API_KEY, baseUrl: running.url });
  const pets = await client.listPets();
  const invalid = await client.createPet({ name: 'Rex', categoryId: 1.5 }).catch((e) => e instanceof ValidationError);
  await running.close();
  console.log(JSON.stringify({ pets: pets.length, invalid, msw: typeof createHandlers, remaining: client.rateLimit.getSnapshot().remaining }));
})();
`,
    );
    const { stdout } = await inConsumer(process.execPath, ['cjs.cjs']);
    expect(JSON.parse(stdout)).toEqual({ pets: 1, invalid: true, msw: 'function', remaining: 59 });
  });

  it.each(Object.keys(TYPESCRIPTS))(
    'every TypeScript block of the README and the guides compiles against the package with %s under strict, exactOptionalPropertyTypes and noUncheckedIndexedAccess',
    async (alias) => {
      const blocksDir = join(dir, 'doc-blocks');
      await mkdir(blocksDir, { recursive: true });
      const blocks = codeBlocks();
      for (const block of blocks) await writeFile(join(blocksDir, block.name), block.code);
      await writeFile(
        join(dir, `tsconfig.${alias}.json`),
        JSON.stringify({
          compilerOptions: {
            strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true,
            module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2023', 'dom', 'dom.iterable'],
            types: ['node'], noEmit: true, skipLibCheck: true,
          },
          files: blocks.map((block) => `doc-blocks/${block.name}`),
        }),
      );
      const tsc = join(dir, 'node_modules', alias, 'bin', 'tsc');
      const result = await inConsumer(process.execPath, [tsc, '-p', `tsconfig.${alias}.json`]).catch((error: { stdout: string }) => error);
      expect('stdout' in result ? result.stdout : '').toBe('');
    },
    60_000,
  );

  it('a consumer .ts (ESM) and .cts (CJS) type-check under strict with the shipped .d.ts, library checks on', async () => {
    await writeFile(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022',
          lib: ['es2023', 'dom'], types: ['node'], noEmit: true, skipLibCheck: false,
          exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true,
        },
        files: ['consumer.ts', 'consumer.cts'],
      }),
    );
    await writeFile(
      join(dir, 'consumer.ts'),
      `import { ApiError, PetStoreClient, RateLimitError, type ClientOptions, type Pet, type RateLimitState } from '@animal-store/sdk';
import { createReferenceServer, type ReferenceServerOptions } from '@animal-store/sdk/server';
import { createHandlers } from '@animal-store/sdk/msw';
import { startReferenceServer, type RunningReferenceServer } from '@animal-store/sdk/node';

const serverOptions: ReferenceServerOptions = { apiKeys: { k: 'pro', big: { perMinute: 5000, perDay: 1_000_000 } }, pets: 3 };
const server = createReferenceServer(serverOptions);
const options: ClientOptions = { apiKey: 'k', baseUrl: 'https://petstore.test/v1', maxRetries: 1, fetch: (request) => server.fetch(request) };
const client = new PetStoreClient(options);
const pets: Pet[] = await client.listPets({ limit: 10, status: 'available' });
const pet: Pet = await client.createPet({ name: 'Rex', categoryId: 1 });
const state: RateLimitState | undefined = client.rateLimit.getSnapshot();
const stop: () => void = client.rateLimit.subscribe((next) => next?.remaining);
stop();
try {
  await client.listOrders();
} catch (error) {
  if (error instanceof RateLimitError) error.retryAfterMs satisfies number | undefined;
  else if (error instanceof ApiError) error.status satisfies number;
}
createHandlers(server, { baseUrl: 'https://petstore.test/v1' });
const running: RunningReferenceServer = await startReferenceServer({ port: 0 });
await running.close();
// @ts-expect-error -- status is one of available, pending, sold
await client.listPets({ status: 'lost' });
// @ts-expect-error -- name is required
await client.createPet({ categoryId: 1 });
export { pets, pet, state };
`,
    );
    await writeFile(
      join(dir, 'consumer.cts'),
      `import sdk = require('@animal-store/sdk');
import node = require('@animal-store/sdk/node');
const client: sdk.PetStoreClient = new sdk.PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.test/v1' });
const listed: Promise<sdk.Pet[]> = client.listPets();
const started: Promise<node.RunningReferenceServer> = node.startReferenceServer();
export = { listed, started };
`,
    );
    const result = await inConsumer(process.execPath, [TSC, '-p', 'tsconfig.json']).catch((error: { stdout: string }) => error);
    expect('stdout' in result ? result.stdout : '').toBe('');
  });

  it('npx petstore-server --help prints the usage', async () => {
    const { stdout } = await inConsumer('npx', ['--no-install', 'petstore-server', '--help']);
    expect(stdout).toContain('Usage: petstore-server [options]');
  });

  it('the installed petstore-server bin starts on --port 0, answers, and exits 0 on SIGTERM', async () => {
    // The bin npx runs, started directly: npx does not pass SIGTERM on to its child.
    const bin = join(dir, 'node_modules/.bin/petstore-server');
    const child = spawn(process.execPath, [bin, '--port', '0', '--key', 'pack-key:business'], { cwd: dir, stdio: 'pipe' });
    try {
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      const deadline = Date.now() + 20_000;
      while (!/listening on (\S+)/.test(out)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`petstore-server did not start:\n${out}`);
        await Promise.race([once(child.stdout, 'data'), once(child, 'exit')]);
      }
      const url = out.match(/listening on (\S+)/)![1]!;
      const response = await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer pack-key' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('X-RateLimit-Limit')).toBe('1000');
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      expect(out).toContain('SIGTERM received, shutting down');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
