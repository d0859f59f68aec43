import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

// Tests import the package by its public names, as users do; these aliases point those names at
// the sources. The packed tarball is tested separately (test/package).
export const alias = {
  'petstore-sdk/server': src('server/index.ts'),
  'petstore-sdk/msw': src('msw.ts'),
  'petstore-sdk/node': src('node.ts'),
  'petstore-sdk': src('index.ts'),
};

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
    testTimeout: 20_000,
  },
});
