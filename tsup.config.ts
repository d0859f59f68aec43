import { readFileSync, rmSync } from 'node:fs';
import { defineConfig, type Options } from 'tsup';

/** The library's entry points, built as ESM and CommonJS; the CLI is ESM only (its bin). */
const entry = {
  index: 'src/index.ts',
  server: 'src/server/index.ts',
  msw: 'src/msw.ts',
  node: 'src/node.ts',
  redis: 'src/redis.ts',
};

const shared: Options = {
  entry,
  // `npm start` needs only the JavaScript; type declarations are for `npm test` and publishing.
  dts: process.env.npm_lifecycle_event !== 'start',
  sourcemap: true,
  // Cleaned once here: the two builds below run in parallel and must not clean each other's output.
  clean: false,
  target: 'es2022',
  // Node built-ins keep the `node:` scheme the source gives them (tsup 8 strips it by default):
  // runtimes and bundlers that map only `node:` specifiers (Deno, workerd's nodejs_compat) find them.
  removeNodeProtocol: false,
  // The SDK names itself and its version in every request (User-Agent, X-Animal-Store-Client).
  define: { __SDK_VERSION__: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) },
};

rmSync(new URL('./dist', import.meta.url), { recursive: true, force: true });

export default defineConfig([
  {
    ...shared,
    // The CLI, and what browser bundles get for the Node-only entries, are ESM only.
    entry: { ...entry, cli: 'src/cli.ts', 'browser/node': 'src/browser/node.ts', 'browser/redis': 'src/browser/redis.ts' },
    format: ['esm'],
    // Declarations for the library only: nothing imports the CLI, and the browser conditions
    // point at JavaScript (their types come from the entries' `types`).
    dts: shared.dts && { entry },
    // Runtime dependencies stay external: users' bundlers dedupe them.
    external: ['ky', 'zod', 'p-retry', 'msw', 'redis'],
    plugins: [
      {
        // esbuild's splitting adds `import "./chunk-….js";` for each chunk an entry reaches only
        // through another: needless (the named imports load them first), and the package.json's
        // `sideEffects` calls every chunk pure, so esbuild warned "Ignoring this import" in apps
        // that link the package (npm link, file:) instead of installing it. Emptied, line kept
        // (the source map stays right).
        name: 'drop-bare-chunk-imports',
        renderChunk: (code) => ({ code: code.replace(/^import "\.\/chunk-\w+\.js";$/gm, '') }),
      },
    ],
  },
  {
    ...shared,
    format: ['cjs'],
    // Shared chunks, as in the ESM build: without them each entry bundled its own copy of the
    // client and the server, so in CommonJS an error from /redis was no PetStoreError of the main
    // entry, and a fault from /node no InjectedFault of /server.
    splitting: true,
    // ky and p-retry are ESM-only with a default export. `require()` of them returns the module
    // namespace, which esbuild's CJS interop then wraps once more, so `ky(...)` and `pRetry(...)`
    // would not be functions (the pack test's CJS require caught it). They are bundled into the
    // CJS build instead; zod ships CJS, and msw is only used through named imports.
    external: ['zod', 'msw', 'redis'],
    noExternal: ['ky', 'p-retry'],
  },
]);
