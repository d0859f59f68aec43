import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    server: 'src/server/index.ts',
    msw: 'src/msw.ts',
    node: 'src/node.ts',
    cli: 'src/cli.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'es2022',
  // Runtime dependencies stay external: users' bundlers dedupe them.
  external: ['ky', 'zod', 'p-retry', 'msw'],
});
