/**
 * What the browser tests share: Debian's Chromium through playwright-core, esbuild bundling the
 * way an app would bundle the package, and a static file server for the pages.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Debian's Chromium; the flags keep it off the (closed) network and out of the sandbox. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    timeout: 30_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
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
