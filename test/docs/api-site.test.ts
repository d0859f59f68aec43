// `npm run docs` builds the typedoc site with zero warnings, and the site, opened in Chromium and Firefox,
// lists every symbol the four entry points export, with getPet shown deprecated and its sunset.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSERS, launch, type TestBrowser, type TestPage } from '../browser/support.js';

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

/** What a typedoc page shows for the member whose anchor is `#id`: the sections holding it, and the first one's parts. */
const member = (page: TestPage, id: string) =>
  page.evaluate((anchor) => {
    const sections = [...document.querySelectorAll<HTMLElement>('section.tsd-member')].filter((section) => section.querySelector(`#${anchor}`));
    const first = sections[0];
    return {
      count: sections.length,
      text: first?.innerText ?? '',
      deprecatedBadges: first?.querySelectorAll('h3 .deprecated').length ?? 0,
      comment: first?.querySelector<HTMLElement>('.tsd-comment')?.innerText ?? '',
      signatureLinks: [...(first?.querySelector('.tsd-signature')?.querySelectorAll('a') ?? [])].map((link) => link.textContent ?? ''),
    };
  }, id);

/** The PetStoreClient page of the site. */
const clientPage = () => pathToFileURL(join(ROOT, `docs/api/classes/${slug('@animal-store/sdk')}.PetStoreClient.html`)).href;

let output: string;

beforeAll(async () => {
  const result = await run('npm', ['run', 'docs', '--silent'], { cwd: ROOT, timeout: 90_000 });
  output = result.stdout + result.stderr;
}, 120_000);

describe('the API reference (npm run docs)', () => {
  it('builds with zero warnings and zero errors', () => {
    expect(output).not.toMatch(/\[warning\]|\[error\]/);
    expect(output).toContain('html generated at ./docs/api');
  });
});

describe.each(BROWSERS)('the API reference, opened in %s', (browserName) => {
  let browser: TestBrowser;
  let page: TestPage;

  beforeAll(async () => {
    browser = await launch(browserName);
    page = await browser.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it.each(Object.entries(publicSymbols()))('the %s page lists every symbol it exports', async (name, symbols) => {
    expect(symbols.length).toBeGreaterThan(0);
    await page.goto(modulePage(name));
    const listed = await page.texts('.col-content a');
    const names = new Set(listed.map((text) => text.replace(/\u200b/g, '').trim()));
    expect(symbols.filter((symbol) => !names.has(symbol))).toEqual([]);
  });

  it('getPet is shown deprecated, with its sunset date and replacement', async () => {
    await page.goto(clientPage());
    const getPet = await member(page, 'getpet');
    expect(getPet.deprecatedBadges).toBe(1);
    expect(getPet.text).toMatch(/Deprecated/);
    expect(getPet.text).toContain('2030-12-05');
    expect(getPet.text).toMatch(/Keep the\s*id\s*createPet\s*returns/);
  });

  it.each([
    ['Pet', ['id', 'name', 'categoryId', 'status']],
    ['NewPet', ['name', 'categoryId', 'status']],
    ['ListPetsQuery', ['limit', 'status']],
    ['ErrorRecord', ['code', 'message', 'status']],
  ])('%s shows each of its fields, documented', async (name, fields) => {
    await page.goto(pathToFileURL(join(ROOT, `docs/api/interfaces/${slug('@animal-store/sdk')}.${name}.html`)).href);
    for (const field of fields) {
      const shown = await member(page, field.toLowerCase());
      expect(shown.count, `${name}.${field}`).toBe(1);
      expect(shown.comment.length, `${name}.${field} is documented`).toBeGreaterThan(10);
    }
  });

  it('listPets links to ListPetsQuery and Pet instead of spelling out object types', async () => {
    await page.goto(clientPage());
    const links = (await member(page, 'listpets')).signatureLinks;
    expect(links).toContain('ListPetsQuery');
    expect(links).toContain('Pet');
  });

  it('the guides are part of the site', async () => {
    await page.goto(pathToFileURL(join(ROOT, 'docs/api/index.html')).href);
    const links = await page.evaluate(() => [...document.querySelectorAll('a')].map((link) => link.getAttribute('href')), undefined);
    for (const guide of ['getting-started', 'errors', 'retries-and-rate-limits', 'running-many-processes', 'testing-with-the-reference-server', 'decisions']) {
      expect(links, guide).toContain(`documents/${guide}.html`);
    }
  });
});
