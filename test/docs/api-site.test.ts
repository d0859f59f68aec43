// `npm run docs` builds the typedoc site with zero warnings, and the site, opened in Chromium,
// lists every symbol the four entry points export, with getPet shown deprecated and its sunset.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../browser/support.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY_POINTS = {
  '@animal-store/sdk': 'src/index.ts',
  '@animal-store/sdk/server': 'src/server/index.ts',
  '@animal-store/sdk/msw': 'src/msw.ts',
  '@animal-store/sdk/node': 'src/node.ts',
  '@animal-store/sdk/redis': 'src/redis.ts',
} as const;

/** What each entry point exports, values and types, as the compiler sees it: the public API. */
function publicSymbols(): Record<string, string[]> {
  const files = Object.values(ENTRY_POINTS).map((f) => join(ROOT, f));
  const program = ts.createProgram(files, { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, skipLibCheck: true, types: ['node'] });
  const checker = program.getTypeChecker();
  return Object.fromEntries(
    Object.entries(ENTRY_POINTS).map(([name, file]) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, file))!)!;
      return [name, checker.getExportsOfModule(module).map((s) => s.name).sort()];
    }),
  );
}

/** typedoc's file name for a module: `@animal-store/sdk/server` → `_animal-store_sdk_server`. */
const slug = (name: string) => name.replace(/[@/]/g, '_');
/** The typedoc page of a module: `@animal-store/sdk/server` → modules/_animal-store_sdk_server.html. */
const modulePage = (name: string) => pathToFileURL(join(ROOT, 'docs/api/modules', `${slug(name)}.html`)).href;

describe('the API reference (npm run docs)', () => {
  let output: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const result = await run('npm', ['run', 'docs', '--silent'], { cwd: ROOT, timeout: 90_000 });
    output = result.stdout + result.stderr;
    browser = await launchChromium();
    page = await browser.newPage();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('builds with zero warnings and zero errors', () => {
    expect(output).not.toMatch(/\[warning\]|\[error\]/);
    expect(output).toContain('html generated at ./docs/api');
  });

  it.each(Object.entries(publicSymbols()))('the %s page lists every symbol it exports', async (name, symbols) => {
    expect(symbols.length).toBeGreaterThan(0);
    await page.goto(modulePage(name));
    const listed = await page.locator('.col-content a').allTextContents();
    const names = new Set(listed.map((text) => text.replace(/\u200b/g, '').trim()));
    expect(symbols.filter((symbol) => !names.has(symbol))).toEqual([]);
  });

  it('getPet is shown deprecated, with its sunset date and replacement', async () => {
    await page.goto(pathToFileURL(join(ROOT, `docs/api/classes/${slug('@animal-store/sdk')}.PetStoreClient.html`)).href);
    const member = page.locator('section.tsd-member', { has: page.locator('#getpet') });
    expect(await member.locator('h3 .deprecated').count()).toBe(1);
    const text = await member.innerText();
    expect(text).toMatch(/Deprecated/);
    expect(text).toContain('2030-12-05');
    expect(text).toMatch(/Keep the\s*id\s*createPet\s*returns/);
  });

  it.each([
    ['Pet', ['id', 'name', 'categoryId', 'status']],
    ['NewPet', ['name', 'categoryId', 'status']],
    ['ListPetsQuery', ['limit', 'status']],
    ['ErrorRecord', ['code', 'message', 'status']],
  ])('%s shows each of its fields, documented', async (name, fields) => {
    await page.goto(pathToFileURL(join(ROOT, `docs/api/interfaces/${slug('@animal-store/sdk')}.${name}.html`)).href);
    for (const field of fields) {
      const member = page.locator('section.tsd-member', { has: page.locator(`#${field.toLowerCase()}`) });
      expect(await member.count(), `${name}.${field}`).toBe(1);
      expect((await member.locator('.tsd-comment').innerText()).length, `${name}.${field} is documented`).toBeGreaterThan(10);
    }
  });

  it('listPets links to ListPetsQuery and Pet instead of spelling out object types', async () => {
    await page.goto(pathToFileURL(join(ROOT, `docs/api/classes/${slug('@animal-store/sdk')}.PetStoreClient.html`)).href);
    const signature = page.locator('section.tsd-member', { has: page.locator('#listpets') }).locator('.tsd-signature').first();
    expect(await signature.locator('a', { hasText: 'ListPetsQuery' }).count()).toBeGreaterThan(0);
    expect(await signature.locator('a', { hasText: 'Pet' }).count()).toBeGreaterThan(0);
  });

  it('the guides are part of the site', async () => {
    await page.goto(pathToFileURL(join(ROOT, 'docs/api/index.html')).href);
    for (const guide of ['getting-started', 'errors', 'retries-and-rate-limits', 'running-many-processes', 'testing-with-the-reference-server', 'decisions']) {
      expect(await page.locator(`a[href="documents/${guide}.html"]`).count(), guide).toBeGreaterThan(0);
    }
  });
});
