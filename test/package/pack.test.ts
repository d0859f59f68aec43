// The package as users get it: `npm pack`, installed into a fresh project outside the repo, then
// used through an ESM import, a CJS require, `tsc` under strict, `npx petstore-server`, and a
// Vite 8 browser build run in Chromium. `npm test` builds dist/ first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build as esbuild } from 'esbuild';
import { build, createLogger, type Rolldown } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, type TestBrowser } from '../browser/support.js';
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
        // Chunks shared by the entries, in each format, so two entries hold one copy of the SDK.
        'dist/<chunk>.js', 'dist/<chunk>.js.map', 'dist/<chunk>.cjs', 'dist/<chunk>.cjs.map', 'dist/<chunk>.d.ts', 'dist/<chunk>.d.cts',
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
    expect(JSON.parse(stdout)).toEqual({ pets: 2, created: 3, handlers: 1, node: 'function', notFound: 'function' });
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

  it('a CJS require of two entry points shares one copy of the SDK: an error from /redis is a PetStoreError of the main entry, a fault from /node an InjectedFault of /server', async () => {
    await writeFile(
      join(dir, 'cjs-shared.cjs'),
      `const { PetStoreError, ValidationError } = require('@animal-store/sdk');
const { createRedisCoordinator } = require('@animal-store/sdk/redis');
const { DEMO_API_KEY, InjectedFault } = require('@animal-store/sdk/server');
const { startReferenceServer } = require('@animal-store/sdk/node');
(async () => {
  let error;
  try {
    createRedisCoordinator({ redis: 'redis://127.0.0.1:6379' });
  } catch (thrown) {
    error = thrown;
  }
  const running = await startReferenceServer({ port: 0, faults: { rate: 1, kinds: ['drop'] } });
  const request = new Request(running.url + '/pets', { headers: { Authorization: 'Bearer ' + DEMO_API_KEY } });
  const fault = await running.server.fetch(request).catch((thrown) => thrown);
  await running.close();
  console.log(JSON.stringify({
    name: error.name, validation: error instanceof ValidationError, petStore: error instanceof PetStoreError,
    fault: fault.name, injected: fault instanceof InjectedFault,
  }));
})();
`,
    );
    const { stdout } = await inConsumer(process.execPath, ['cjs-shared.cjs']);
    expect(JSON.parse(stdout)).toEqual({ name: 'ValidationError', validation: true, petStore: true, fault: 'InjectedFault', injected: true });
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

  // Each module resolution TypeScript users may have (node10 cannot see subpath exports: unsupported).
  it.each([
    ['nodenext', 'nodenext'],
    ['node16', 'node16'],
    ['preserve', 'bundler'],
  ])('a consumer .ts (ESM) and .cts (CJS) type-check under strict with the shipped .d.ts, library checks on, with module %s and moduleResolution %s', async (module, moduleResolution) => {
    const tsconfig = `tsconfig.consumer-${moduleResolution}.json`;
    await writeFile(
      join(dir, tsconfig),
      JSON.stringify({
        compilerOptions: {
          strict: true, module, moduleResolution, target: 'es2022',
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
import { createRedisCoordinator } from '@animal-store/sdk/redis';
import { createClient } from 'redis';

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
createHandlers(server, { baseUrl: new URL('https://petstore.test/v1') });
const coordinator = createRedisCoordinator({ redis: createClient(), prefix: process.env.PREFIX });
new PetStoreClient({ ...options, coordinator, headers: [['X-Team', 'pets']] as const });
const running: RunningReferenceServer = await startReferenceServer({ port: 0, host: process.env.HOST, pets: serverOptions.pets });
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
import server = require('@animal-store/sdk/server');
import redis = require('@animal-store/sdk/redis');
const document: server.OpenApiDocument = server.openApiDocument();
const coordinator: typeof redis.createRedisCoordinator = redis.createRedisCoordinator;
const client: sdk.PetStoreClient = new sdk.PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.test/v1' });
const listed: Promise<sdk.Pet[]> = client.listPets();
const started: Promise<node.RunningReferenceServer> = node.startReferenceServer();
export = { listed, started, document, coordinator };
`,
    );
    const result = await inConsumer(process.execPath, [TSC, '-p', tsconfig]).catch((error: { stdout: string }) => error);
    expect('stdout' in result ? result.stdout : '').toBe('');
  }, 60_000);

  it('a TypeScript project that resolves the browser condition (customConditions) gets the same declarations for /node and /redis as under import', async () => {
    // The browser condition's target is JavaScript only: TypeScript (5.5, 6 and 7 tried) finds no
    // declarations beside it and goes on to the next condition, `import`. A stub's own
    // declarations there (`never`) would be the wrong ones.
    await writeFile(
      join(dir, 'tsconfig.browser-condition.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true, module: 'preserve', moduleResolution: 'bundler', customConditions: ['browser'], target: 'es2022',
          lib: ['es2023', 'dom'], types: ['node'], noEmit: true, skipLibCheck: false,
        },
        files: ['browser-condition.ts'],
      }),
    );
    await writeFile(
      join(dir, 'browser-condition.ts'),
      `import { startReferenceServer, type RunningReferenceServer } from '@animal-store/sdk/node';
import { createRedisCoordinator, type RedisCoordinatorOptions } from '@animal-store/sdk/redis';
export const start: (options?: { port?: number }) => Promise<RunningReferenceServer> = startReferenceServer;
export const options: Pick<RedisCoordinatorOptions, 'prefix'> = { prefix: 'app' };
export const create: typeof createRedisCoordinator = createRedisCoordinator;
`,
    );
    const result = await inConsumer(process.execPath, [TSC, '-p', 'tsconfig.browser-condition.json']).catch((error: { stdout: string }) => error);
    expect('stdout' in result ? result.stdout : '').toBe('');
  }, 60_000);

  it('a Node consumer without the DOM lib (lib es2023 and types node, as @tsconfig/node22 has it) type-checks with library checks on, headers option typed', async () => {
    await writeFile(
      join(dir, 'tsconfig.node-only.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022',
          lib: ['es2023'], types: ['node'], noEmit: true, skipLibCheck: false, exactOptionalPropertyTypes: true,
        },
        files: ['node-only.ts'],
      }),
    );
    await writeFile(
      join(dir, 'node-only.ts'),
      `import { PetStoreClient } from '@animal-store/sdk';
import { createReferenceServer } from '@animal-store/sdk/server';
import { startReferenceServer } from '@animal-store/sdk/node';
import { createRedisCoordinator } from '@animal-store/sdk/redis';
const server = createReferenceServer();
const client = new PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.test/v1', headers: new Headers({ 'X-Team': 'pets' }), fetch: (request) => server.fetch(request) });
await client.listPets({}, { headers: { 'X-Trace': '1' } });
await client.listPets({}, { headers: [['X-Trace', '1']] });
// @ts-expect-error -- headers are Headers, a record of strings or name-value pairs
new PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.test/v1', headers: 5 });
export { startReferenceServer, createRedisCoordinator };
`,
    );
    const result = await inConsumer(process.execPath, [TSC, '-p', 'tsconfig.node-only.json']).catch((error: { stdout: string }) => error);
    expect('stdout' in result ? result.stdout : '').toBe('');
  }, 60_000);

  it.each([
    ['the schemas', 'PetSchema'],
    ['the errors', 'NotFoundError'],
  ])('an esbuild browser bundle of an app that imports only %s from @animal-store/sdk leaves the client, ky and p-retry out', async (_what, name) => {
    await writeFile(join(dir, `shake-${name}.js`), `import { ${name} } from '@animal-store/sdk';\nconsole.log(${name});\n`);
    const { metafile } = await esbuild({
      entryPoints: [join(dir, `shake-${name}.js`)], absWorkingDir: dir, bundle: true, platform: 'browser', format: 'esm',
      minify: true, write: false, metafile: true, logLevel: 'silent',
    });
    // What the bundle holds: esbuild lists every file it read, even one it shook out entirely.
    const held = Object.values(metafile.outputs).flatMap((output) => Object.entries(output.inputs)).filter(([, input]) => input.bytesInOutput > 0);
    expect(held.map(([path]) => path).filter((path) => /node_modules\/(ky|p-retry)\//.test(path))).toEqual([]);
  });

  it('an esbuild browser bundle of an app that imports only DEMO_API_KEY from @animal-store/sdk/server holds the constant and nothing else: no zod, no server', async () => {
    await writeFile(join(dir, 'shake-demo-key.js'), `import { DEMO_API_KEY } from '@animal-store/sdk/server';\nconsole.log(DEMO_API_KEY);\n`);
    const { metafile } = await esbuild({
      entryPoints: [join(dir, 'shake-demo-key.js')], absWorkingDir: dir, bundle: true, platform: 'browser', format: 'esm',
      minify: true, write: false, metafile: true, logLevel: 'silent',
    });
    const held = Object.values(metafile.outputs).flatMap((output) => Object.entries(output.inputs)).filter(([, input]) => input.bytesInOutput > 0);
    const packages = held.filter(([path]) => path.includes('node_modules/'));
    expect(packages.map(([path]) => path).filter((path) => !path.startsWith('node_modules/@animal-store/sdk/'))).toEqual([]);
    // The package's part of the bundle: `var o="petstore-demo-key";` at most.
    expect(packages.reduce((bytes, [, input]) => bytes + input.bytesInOutput, 0)).toBeLessThanOrEqual('var o="petstore-demo-key";'.length);
  });

  it("engines.node admits no Node that a dependency or an optional peer refuses (msw, which the CommonJS /msw entry requires, needs 22.12)", async () => {
    /** The oldest version a `>=` range admits, as [major, minor, patch]; `>=22` is 22.0.0. */
    const oldest = (range: string) => {
      const match = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
      if (!match) throw new Error(`not a >= range: ${range}`);
      return match.slice(1).map((part) => Number(part ?? 0));
    };
    const compare = (a: number[], b: number[]) => a.reduce((order, part, i) => order || part - b[i]!, 0);
    const manifest = async (name: string) =>
      JSON.parse(await readFile(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as {
        engines?: { node?: string }; dependencies?: Record<string, string>; peerDependencies?: Record<string, string>;
      };
    const sdk = await manifest('@animal-store/sdk');
    const ours = oldest(sdk.engines!.node!);
    const refusing = [];
    for (const name of Object.keys({ ...sdk.dependencies, ...sdk.peerDependencies })) {
      const theirs = (await manifest(name)).engines?.node;
      if (theirs && compare(ours, oldest(theirs)) < 0) refusing.push(`${name} ${theirs}`);
    }
    expect(refusing).toEqual([]);
  });

  it('an esbuild bundle of every entry point, with the package linked (npm link, a file: dependency) rather than installed, warns of nothing', async () => {
    // Linked, the package's files are outside any node_modules, where esbuild shows the warnings
    // it keeps quiet about for installed packages.
    const app = join(dir, 'linked-app');
    await mkdir(join(app, 'node_modules/@animal-store'), { recursive: true });
    await symlink(ROOT, join(app, 'node_modules/@animal-store/sdk'), 'dir');
    const warnings: Record<string, string[]> = {};
    for (const entry of ['', '/server', '/msw', '/node', '/redis']) {
      const result = await esbuild({
        stdin: { contents: `export * from '@animal-store/sdk${entry}';`, resolveDir: app, loader: 'js' },
        bundle: true, platform: 'node', format: 'esm', write: false, logLevel: 'silent', external: ['msw', 'redis'],
      });
      warnings[entry || '.'] = result.warnings.map((warning) => warning.text);
    }
    expect(warnings).toEqual({ '.': [], '/server': [], '/msw': [], '/node': [], '/redis': [] });
  });

  it('every Node built-in the packaged JavaScript imports or requires is named with the node: scheme, as the source names it (before: tsup stripped it, so dist imported "http" and "crypto")', async () => {
    const { builtinModules } = await import('node:module');
    const builtins = new Set(builtinModules.filter((name) => !name.startsWith('_')));
    const code = packed.files.filter((f) => /\.c?js$/.test(f.path));
    expect(code.length).toBeGreaterThan(10);
    const bare: string[] = [];
    let prefixed = 0;
    for (const { path } of code) {
      const text = await readFile(join(dir, 'node_modules/@animal-store/sdk', path), 'utf8');
      for (const [, name] of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\(\s*)["']([^"']+)["']/g)) {
        if (name!.startsWith('node:')) prefixed++;
        else if (builtins.has(name!.split('/')[0]!)) bare.push(`${path}: ${name}`);
      }
    }
    expect(bare).toEqual([]);
    expect(prefixed).toBeGreaterThan(0);
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

describe('a Vite 8 browser build of an app that installed the tarball', () => {
  let browser: TestBrowser | undefined;

  afterAll(async () => {
    await browser?.close();
  });

  /** Builds an app whose entry is `main`, with Vite's defaults (production, minified): its JavaScript and Vite's warnings. */
  async function viteBuild(main: string) {
    // Inside the consumer project, so the app resolves the package from its node_modules.
    const app = await mkdtemp(join(dir, 'vite-app-'));
    await writeFile(join(app, 'index.html'), '<!doctype html><script type="module" src="./main.ts"></script>\n');
    await writeFile(join(app, 'main.ts'), main);
    const warnings: string[] = [];
    const logger = createLogger('warn');
    logger.warn = (message) => void warnings.push(message);
    logger.warnOnce = logger.warn;
    const result = await build({ root: app, configFile: false, logLevel: 'warn', customLogger: logger, build: { write: false } });
    const outputs = (Array.isArray(result) ? result : [result]) as Rolldown.RolldownOutput[];
    const code = outputs.flatMap((o) => o.output).flatMap((chunk) => (chunk.type === 'chunk' ? [chunk.code] : [])).join('\n');
    return { code, warnings };
  }

  /** Loads `code` as a module in a Chromium page: the error it threw, if any, and the page's title. */
  async function runInChromium(code: string) {
    browser ??= await launch('chromium');
    const page = await browser.newPage();
    return page.evaluate(async (source) => {
      const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
      // Through Function, so the test runner's transform leaves this import() alone.
      const load = new Function('url', 'return import(url)') as (url: string) => Promise<unknown>;
      const errors: string[] = [];
      await load(url).catch((error: Error) => errors.push(error.message));
      return { errors, title: document.title };
    }, code);
  }

  it('an app that uses the client builds with no warning and no Node built-in, and runs', async () => {
    const { code, warnings } = await viteBuild(
      `import { PetStoreClient } from '@animal-store/sdk';
const client = new PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.example/v1' });
document.title = typeof client.listPets;
`,
    );
    expect(warnings).toEqual([]);
    // Booleans: a failed match would print the whole minified bundle.
    expect(/from\s*["'](node:)?(http|https|net|fs|stream|events)["']|require\(["'](node:)?\w+["']\)/.test(code)).toBe(false);
    expect(await runInChromium(code)).toEqual({ errors: [], title: 'function' });
  }, 60_000);

  it.each([
    ['node', 'startReferenceServer', '@animal-store/sdk/node runs only in Node: it starts a node:http server. In a browser, use @animal-store/sdk/msw with msw/browser, or createReferenceServer() from @animal-store/sdk/server in-process.'],
    ['redis', 'createRedisCoordinator', '@animal-store/sdk/redis runs only in Node: it coordinates processes through Redis. A browser app needs no coordinator: every call of one PetStoreClient is already coordinated.'],
  ])('an app that imports @animal-store/sdk/%s builds with no warning and, when loaded, throws what to use instead', async (entry, name, message) => {
    const { code, warnings } = await viteBuild(
      `import { ${name} } from '@animal-store/sdk/${entry}';
document.title = typeof ${name};
`,
    );
    // Vite used to externalize \`http\` with a warning here and ship the Node code.
    expect(warnings).toEqual([]);
    expect(code.includes('createServer(')).toBe(false);
    expect((await runInChromium(code)).errors).toEqual([message]);
  }, 60_000);
});
