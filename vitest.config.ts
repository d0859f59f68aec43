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
  '@animal-store/sdk': src('index.ts'),
};

export default defineConfig({
  resolve: { alias },
  define: { __SDK_VERSION__: JSON.stringify(JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version) },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
    testTimeout: 20_000,
  },
});
