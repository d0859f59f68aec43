// What a browser bundler makes of the package: the client bundles from its exports with no
// Node built-ins, and `@animal-store/sdk/node` is refused by its `"browser": null` condition.
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

  it('@animal-store/sdk/node is kept out of browser bundles', async () => {
    await expect(bundle('test/browser/fixtures/imports-node.ts')).rejects.toThrow(/Could not resolve "@animal-store\/sdk\/node"/);
  });
});
