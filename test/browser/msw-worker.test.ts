// A real browser with no API server at all: examples/msw-browser runs the reference server
// behind msw's service worker (msw/browser's setupWorker + @animal-store/sdk/msw's createHandlers),
// and the client talks to a host that does not exist.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pet, RateLimitState } from '@animal-store/sdk';
import { BROWSERS, bundle, launch, ROOT, serveStatic, type TestBrowser } from './support.js';

interface PageResult {
  before: Pet[];
  created: Pet;
  pending: Pet[];
  rateLimit: RateLimitState & { resetAt: string };
  petCount: number;
}

describe.each(BROWSERS)('examples/msw-browser in %s: the reference server inside the msw service worker', (browserName) => {
  let browser: TestBrowser;
  let site: Awaited<ReturnType<typeof serveStatic>>;
  let status: string | null;
  let result: PageResult;

  beforeAll(async () => {
    const [html, js, worker] = await Promise.all([
      readFile(join(ROOT, 'examples/msw-browser/index.html'), 'utf8'),
      bundle('examples/msw-browser/main.ts'),
      // The worker script of the installed msw, as `npx msw init` would copy it.
      readFile(join(ROOT, 'node_modules/msw/lib/mockServiceWorker.js')),
    ]);
    site = await serveStatic({
      '/': { type: 'text/html; charset=utf-8', body: html },
      '/main.js': { type: 'text/javascript; charset=utf-8', body: js },
      '/mockServiceWorker.js': { type: 'text/javascript; charset=utf-8', body: worker },
    });
    browser = await launch(browserName);
    const page = await browser.newPage();
    // The start of a minute, so the page's requests share one window of the reference server's clock (the page's).
    await page.startClockAt(Date.UTC(2027, 0, 1));
    await page.goto(`${site.origin}/`);
    await page.waitFor(() => !document.querySelector('#status')?.textContent?.startsWith('Starting'), undefined, 20_000);
    status = await page.text('#status');
    result = JSON.parse((await page.text('#result')) || 'null') as PageResult;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it('the page finishes without an error', () => {
    expect(status).toBe('Done.');
  });

  it('lists the seeded pets, creates one, and finds it by status', () => {
    expect(result.before.map((pet) => pet.id)).toEqual([1, 2]);
    expect(result.created).toEqual({ id: 3, name: 'Pixel', categoryId: 4, status: 'pending' });
    expect(result.pending.map((pet) => pet.name)).toContain('Pixel');
    expect(result.petCount).toBe(3);
  });

  it('the client read the rate-limit headers the in-browser server sent', () => {
    // listPets, createPet, listPets: three requests of a Free key (60 a minute). The reset is
    // measured from the server's Date, in whole seconds: it falls less than a second after the window's end.
    expect(result.rateLimit).toMatchObject({ limit: 60, remaining: 57, resetAt: expect.stringMatching(/^2027-01-01T00:01:00\./) });
  });

  it('no API request reached a server: only the page, its script and the worker were fetched', () => {
    expect([...new Set(site.requested)].sort()).toEqual(['GET /', 'GET /main.js', 'GET /mockServiceWorker.js']);
  });
});
