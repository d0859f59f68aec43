// A real browser: examples/browser, bundled with esbuild as an app would bundle it, served from
// one origin, talking to the reference server (node adapter) on another origin, so every
// request goes through CORS.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startReferenceServer, type RequestLogEntry, type RunningReferenceServer } from '@animal-store/sdk/node';
import { BROWSERS, bundle, launch, ROOT, serveStatic, type TestBrowser, type TestPage } from './support.js';

/** 2027-01-01T00:00:30Z: the server's clock, standing still, so the page's requests share one minute window. */
const T0 = Date.UTC(2027, 0, 1, 0, 0, 30);

describe.each(BROWSERS)('examples/browser in %s, against the reference server on another origin', (browserName) => {
  let browser: TestBrowser;
  let api: RunningReferenceServer;
  let site: Awaited<ReturnType<typeof serveStatic>>;
  let page: TestPage;
  const log: RequestLogEntry[] = [];

  beforeAll(async () => {
    api = await startReferenceServer({
      port: 0,
      apiKeys: { 'browser-key': 'pro' },
      pets: [
        { name: 'Luna', categoryId: 2, status: 'available' },
        { name: 'Milo', categoryId: 1, status: 'sold' },
      ],
      now: () => T0,
      onRequest: (entry) => log.push(entry),
    });
    const [html, js] = await Promise.all([readFile(join(ROOT, 'examples/browser/index.html'), 'utf8'), bundle('examples/browser/main.ts')]);
    site = await serveStatic({
      '/': { type: 'text/html; charset=utf-8', body: html },
      '/main.js': { type: 'text/javascript; charset=utf-8', body: js },
    });
    browser = await launch(browserName);
    page = await browser.newPage();
    await page.goto(`${site.origin}/?api=${encodeURIComponent(api.url)}&key=browser-key`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await api?.close();
  });

  const statusText = async (pattern: RegExp) => {
    await page.waitFor((source) => new RegExp(source).test(document.querySelector('#status')?.textContent ?? ''), pattern.source);
    return page.text('#status');
  };

  it('the page and the API are on different origins', () => {
    expect(new URL(site.origin).origin).not.toBe(new URL(api.url).origin);
  });

  it('lists the pets on load', async () => {
    expect(await statusText(/^Loaded|Error/)).toBe('Loaded 2 pets.');
    expect(await page.texts('#pets li')).toEqual(['#1 Luna (category 2, available)', '#2 Milo (category 1, sold)']);
  });

  it('creates a pet from the form and lists it', async () => {
    await page.fill('input[name=name]', 'Biscuit');
    await page.fill('input[name=categoryId]', '3');
    await page.click('button[type=submit]');
    expect(await statusText(/^Added|Error/)).toBe('Added Biscuit as #3.');
    expect((await page.texts('#pets li')).at(-1)).toBe('#3 Biscuit (category 3)');
    expect(api.server.inspect().petCount).toBe(3);
  });

  it('shows the rate-limit state live, one line per change as the requests go out', async () => {
    // listPets, createPet, listPets: three requests of a Pro key (300 a minute), in one window.
    expect(await page.attribute('#rate-limit', 'data-remaining')).toBe('297');
    expect(await page.text('#rate-limit span')).toMatch(/^297 of 300 left, resets at \d\d:\d\d:\d\d UTC$/);
    const lines = await page.texts('#rate-limit-log li');
    expect(lines.map((line) => line.split(' of ')[0])).toEqual(['299', '298', '297']);
  });

  it('warns on the console, once, that getPet is deprecated, with its sunset date', async () => {
    await page.click('#first-pet');
    expect(await statusText(/^getPet|Error/)).toBe('getPet(1): Luna.');
    await page.click('#first-pet');
    // The status already reads getPet(1) from the first click: wait for the second request itself.
    await vi.waitFor(() => expect(log.filter((e) => e.path === '/v1/pets/1' && e.method === 'GET')).toHaveLength(2), { timeout: 10_000 });
    await statusText(/^getPet/);
    const warnings = page.console.filter((m) => m.type === 'warning' && m.text.includes('getPet'));
    expect(warnings.map((m) => m.text)).toEqual([
      'DeprecationWarning: PetStoreClient.getPet() is deprecated and stops working on 2030-12-05. Keep the id that createPet returns, or find the pet with listPets.',
    ]);
  });

  it('every request crossed origins: authenticated calls were preflighted, and nothing failed in the page', () => {
    const lines = log.map((e) => `${e.method} ${e.path.replace(/\?.*/, '')} ${e.status}`);
    expect(lines).toContain('OPTIONS /v1/pets 204');
    expect(lines.filter((line) => !line.startsWith('OPTIONS'))).toEqual([
      'GET /v1/pets 200',
      'POST /v1/pets 201',
      'GET /v1/pets 200',
      'GET /v1/pets/1 200',
      'GET /v1/pets/1 200',
    ]);
    expect(page.errors).toEqual([]);
    expect(page.console.filter((m) => m.type === 'error').map((m) => m.text)).toEqual([]);
  });
});
