/**
 * What the browser tests share: Debian's Chromium (through playwright-core) and Debian's Firefox
 * ESR (through puppeteer-core over WebDriver BiDi; Playwright cannot drive a stock Firefox) behind
 * one small page interface, esbuild bundling the way an app would bundle the package, and a
 * static file server for the pages. The browsers are found where `npm test`'s provisioning step
 * looks for them (test/support/programs.ts: $CHROMIUM_PATH, $FIREFOX_PATH, or Debian's paths).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { PROGRAMS, programPath } from '../support/programs.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The browsers every browser test runs in. */
export const BROWSERS = ['chromium', 'firefox'] as const;
export type BrowserName = (typeof BROWSERS)[number];

/** A console message, with Chromium's and Firefox's names for the levels made the same. */
export interface ConsoleEntry {
  type: 'log' | 'info' | 'warning' | 'error' | 'debug' | string;
  text: string;
}

/** The part of a page the tests use; the same in both browsers. */
export interface TestPage {
  goto(url: string): Promise<void>;
  /** Runs `fn(arg)` in the page (serialized, so it sees only its argument). */
  evaluate<A, T>(fn: (arg: A) => T | Promise<T>, arg: A): Promise<T>;
  /** Resolves once `fn(arg)` is truthy in the page. */
  waitFor<A>(fn: (arg: A) => unknown, arg: A, timeout?: number): Promise<void>;
  text(selector: string): Promise<string | null>;
  texts(selector: string): Promise<string[]>;
  attribute(selector: string, name: string): Promise<string | null>;
  fill(selector: string, value: string): Promise<void>;
  click(selector: string): Promise<void>;
  /** Starts the page's clock (`Date.now()`) at `ms` on each load, before its scripts run; it moves on in real time. */
  startClockAt(ms: number): Promise<void>;
  /** Everything the page logged, and every uncaught error, since it opened. */
  readonly console: ConsoleEntry[];
  readonly errors: string[];
}

export interface TestBrowser {
  name: BrowserName;
  /** e.g. `chromium/156.0.7529.0`, `firefox/153.7.0`. */
  version: string;
  newPage(): Promise<TestPage>;
  close(): Promise<void>;
}

/** Runs in the page before its scripts: `Date.now()` reads `at`, then moves on with the real clock. */
const shiftClock = (at: number) => {
  const offset = at - Date.now();
  const now = Date.now.bind(Date);
  Date.now = () => now() + offset;
};

/** Launches Debian's Chromium or Firefox ESR, headless. */
export function launch(name: BrowserName): Promise<TestBrowser> {
  return name === 'chromium' ? launchChromium() : launchFirefox();
}

/** Chromium's flags keep it off the (closed) network and out of the sandbox. */
async function launchChromium(): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: programPath(PROGRAMS.chromium),
    headless: true,
    timeout: 30_000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return {
    name: 'chromium',
    version: `chromium/${browser.version()}`,
    close: () => browser.close(),
    async newPage() {
      const page = await browser.newPage();
      const console: ConsoleEntry[] = [];
      const errors: string[] = [];
      page.on('console', (message) => console.push({ type: message.type(), text: message.text() }));
      page.on('pageerror', (error) => errors.push(String(error)));
      return {
        console,
        errors,
        goto: async (url) => void (await page.goto(url)),
        evaluate: (fn, arg) => page.evaluate(fn as (arg: unknown) => never, arg),
        waitFor: async (fn, arg, timeout = 15_000) => void (await page.waitForFunction(fn as (arg: unknown) => unknown, arg, { timeout })),
        text: (selector) => page.textContent(selector),
        texts: (selector) => page.locator(selector).allTextContents(),
        attribute: (selector, name) => page.getAttribute(selector, name),
        fill: (selector, value) => page.fill(selector, value),
        click: (selector) => page.click(selector),
        startClockAt: async (ms) => void (await page.addInitScript(shiftClock, ms)),
      };
    },
  };
}

/** Firefox ESR over WebDriver BiDi; its profile keeps it off the network (no updates, no telemetry). */
async function launchFirefox(): Promise<TestBrowser> {
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: programPath(PROGRAMS.firefox),
    headless: true,
    timeout: 30_000,
    extraPrefsFirefox: { 'app.update.enabled': false, 'network.captive-portal-service.enabled': false, 'network.connectivity-service.enabled': false },
  });
  const version = await browser.version();
  return {
    name: 'firefox',
    version,
    close: () => browser.close(),
    async newPage() {
      const page = await browser.newPage();
      const console: ConsoleEntry[] = [];
      const errors: string[] = [];
      page.on('console', (message) => console.push({ type: message.type() === 'warn' ? 'warning' : message.type(), text: message.text() }));
      page.on('pageerror', (error) => errors.push(String(error)));
      return {
        console,
        errors,
        goto: async (url) => void (await page.goto(url)),
        evaluate: (fn, arg) => page.evaluate(fn as (arg: unknown) => unknown, arg) as never,
        waitFor: async (fn, arg, timeout = 15_000) => void (await page.waitForFunction(fn as (arg: unknown) => unknown, { timeout, polling: 50 }, arg)),
        text: (selector) => page.$eval(selector, (element) => element.textContent),
        texts: (selector) => page.$$eval(selector, (elements) => elements.map((element) => element.textContent ?? '')),
        attribute: (selector, name) => page.$eval(selector, (element, attribute) => element.getAttribute(attribute), name),
        fill: async (selector, value) => {
          await page.$eval(selector, (element) => void ((element as HTMLInputElement).value = ''));
          await page.type(selector, value);
        },
        click: (selector) => page.click(selector),
        startClockAt: async (ms) => void (await page.evaluateOnNewDocument(shiftClock, ms)),
      };
    },
  };
}

/**
 * Bundles a page's entry for the browser as users' bundlers do: `@animal-store/sdk` is resolved
 * through its package.json `exports` (the built `dist/`, with the browser conditions), not
 * through the test aliases.
 */
export async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    // Not the repository's tsconfig.json: its `paths` point the package's names at src/, and a
    // user's bundler only sees the published package.
    tsconfigRaw: {},
  });
  return result.outputFiles[0]!.text;
}

export interface StaticFile {
  type: string;
  body: string | Buffer;
}

/** A static site on 127.0.0.1 (a port of its own, so an origin of its own); logs each path asked for. */
export async function serveStatic(files: Record<string, StaticFile>) {
  const requested: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requested.push(`${req.method} ${path}`);
    const file = files[path];
    if (!file) return void res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'Content-Type': file.type, 'Cache-Control': 'no-store' }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requested,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
