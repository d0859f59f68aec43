import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

// Tests import the package by its public names, as users do; these aliases point those names at
// the sources. The packed tarball is tested separately (test/package).
export const alias = {
  '@animal-store/sdk/server': src('server/index.ts'),
  '@animal-store/sdk/msw': src('msw.ts'),
  '@animal-store/sdk/node': src('node.ts'),
  '@animal-store/sdk/redis': src('redis.ts'),
  '@animal-store/sdk': src('index.ts'),
};

/**
 * The slow set: the packed tarball, real browsers and runtimes, the docs site, Redis and child
 * processes. Everything else is the fast unit set.
 */
const INTEGRATION = ['test/package', 'test/browser', 'test/docs', 'test/runtimes', 'test/redis', 'test/cli', 'test/python'];

export default defineConfig({
  resolve: { alias },
  define: { __SDK_VERSION__: JSON.stringify(JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version) },
  test: {
    testTimeout: 20_000,
    // `npm test` runs both; `npm run test:unit` runs the fast set alone, in seconds.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: INTEGRATION.map((dir) => `${dir}/**`),
          // The type tests compile under exactOptionalPropertyTypes, as users' strictest projects do.
          typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: 'tsconfig.types.json' },
        },
      },
      {
        extends: true,
        test: { name: 'integration', include: INTEGRATION.map((dir) => `${dir}/**/*.test.ts`), globalSetup: ['test/support/dist-setup.ts', 'test/support/node22-setup.ts'] },
      },
    ],
  },
});
