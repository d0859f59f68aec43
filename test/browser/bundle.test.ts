// What a browser bundler makes of the package: the client bundles from its exports with no
// Node built-ins, and the Node-only entries' `browser` condition gives a clear error instead.
import { describe, expect, it } from 'vitest';
import { bundle } from './support.js';

describe('bundling for the browser', () => {
  it('the browser example bundles without any node: import', async () => {
    const code = await bundle('examples/browser/main.ts');
    expect(code).toContain('PetStoreClient');
    // From the published build, resolved through package.json exports, not from the sources.
    expect(code).toMatch(/^\/\/ dist\/index\.js$/m);
    expect(code).not.toMatch(/^\/\/ src\//m);
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:/);
  });

  it.each([
    ['node', /@animal-store\/sdk\/node runs only in Node: it starts a node:http server\. In a browser, use @animal-store\/sdk\/msw/],
    ['redis', /@animal-store\/sdk\/redis runs only in Node: it coordinates processes through Redis\./],
  ])('@animal-store/sdk/%s in a browser bundle is a clear error naming what to use instead, and no Node code', async (entry, message) => {
    const code = await bundle(`test/browser/fixtures/imports-${entry}.ts`);
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:|import\(["']node:/);
    await expect(import(`data:text/javascript,${encodeURIComponent(code)}`)).rejects.toThrow(message);
  });
});
