/**
 * How the matrix runs the scenario in each runtime, from a consumer project with the packed
 * package installed (test/support/consumer.ts). The runtimes come from npm: Node 24 (the
 * `node` devDependency), Node 22 (installed once into node_modules/.cache/runtimes/), Bun, Deno
 * and workerd (devDependencies that ship their binaries); the browsers from Debian: Chromium and
 * Firefox launched as the browser tests launch them, WebKit through WebKitWebDriver.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { launch, serveStatic, type BrowserName } from '../browser/support.js';
import { PROGRAMS, programPath } from '../support/programs.js';
import type { Consumer } from '../support/consumer.js';
import { run, ROOT } from '../support/consumer.js';
import { freePort } from '../support/ports.js';
import type { CliRequest } from './entries/cli.js';
import { probeHead, type ScenarioConfig, type ScenarioReport } from './scenario.js';

const BIN = join(ROOT, 'node_modules/.bin');
export const NODE_24 = join(ROOT, 'node_modules/node/bin/node');
export const BUN = join(BIN, 'bun');
export const DENO = join(BIN, 'deno');
export const WORKERD = join(BIN, 'workerd');

/** Deno's flags for the scenario: loopback only, the environment readable, the project's node_modules. */
export const DENO_FLAGS = ['--allow-net=127.0.0.1', '--allow-env', '--node-modules-dir=manual', '--no-prompt'];

/** The Node 22 the matrix runs, exactly, so the README can say which. */
export const NODE_22_VERSION = '22.23.3';

/**
 * Node 22, from npm's `node` package, installed the first time into
 * node_modules/.cache/runtimes/ and reused after (`npm ci` starts it afresh). Installed into a
 * directory of its own, then moved into place: two test files, in two workers, may ask for it at
 * once, and two npm installs into one directory can leave neither whole.
 */
export async function node22(): Promise<string> {
  const dir = join(ROOT, `node_modules/.cache/runtimes/node-${NODE_22_VERSION}`);
  const binary = join(dir, 'node_modules/node/bin/node');
  if (existsSync(binary)) return binary;
  const staging = `${dir}.installing-${process.pid}-${Date.now()}`;
  await mkdir(staging, { recursive: true });
  try {
    await writeFile(join(staging, 'package.json'), JSON.stringify({ private: true, allowScripts: { node: true } }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', `node@${NODE_22_VERSION}`], { cwd: staging, timeout: 180_000 });
    // Another worker's install landed first (the rename fails onto its directory): use that one.
    // A directory left without the binary (an install interrupted before this rule) is replaced.
    if (!existsSync(binary)) await rm(dir, { recursive: true, force: true });
    await rename(staging, dir).catch((error: unknown) => {
      if (!existsSync(binary)) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return binary;
}

/**
 * Writes the scenario's entries into the consumer project: `cli.mjs` importing the installed
 * package (for Node, Bun and Deno), and `worker.js` and `browser.js` bundled from it as an app's
 * bundler would (workerd's and the browser's export conditions).
 */
export async function writeEntries(consumer: Consumer): Promise<void> {
  const entry = (name: string) => join(ROOT, 'test/runtimes/entries', `${name}.ts`);
  const common = { bundle: true, format: 'esm', target: 'es2022', logLevel: 'silent', tsconfigRaw: {} } as const;
  // The scenario and the entry become one file; the package stays an import, resolved by each
  // runtime from the consumer's node_modules.
  for (const name of ['cli', 'worker', 'browser']) {
    await build({ ...common, entryPoints: [entry(name)], outfile: join(consumer.dir, `${name}.mjs`), platform: 'neutral', external: ['@animal-store/sdk', '@animal-store/sdk/*'] });
  }
  await build({ ...common, entryPoints: [join(consumer.dir, 'worker.mjs')], outfile: join(consumer.dir, 'worker.js'), absWorkingDir: consumer.dir, platform: 'browser', conditions: ['workerd', 'worker', 'browser'] });
  await build({ ...common, entryPoints: [join(consumer.dir, 'browser.mjs')], outfile: join(consumer.dir, 'browser.js'), absWorkingDir: consumer.dir, platform: 'browser' });
}

/** Runs `cli.mjs` with a command-line runtime and parses the report it prints. */
export async function runCli<T>(consumer: Consumer, command: string, flags: string[], request: CliRequest): Promise<T> {
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' };
  const { stdout } = await consumer.run(command, [...flags, 'cli.mjs', JSON.stringify(request)], { timeout: 60_000, env });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
}

/** Serves `worker.js` with workerd on a free port, POSTs the config to it, and stops it. */
export async function runWorkerd(consumer: Consumer, config: ScenarioConfig): Promise<ScenarioReport> {
  const port = await freePort();
  await writeFile(
    join(consumer.dir, 'workerd.capnp'),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # The default outbound service reaches only public addresses; the test's servers are on 127.0.0.1.
    (name = "network", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker", esModule = embed "worker.js")],
  compatibilityDate = "2026-10-01",
  globalOutbound = "network",
);
`,
  );
  const child = spawn(WORKERD, ['serve', 'workerd.capnp'], { cwd: consumer.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  try {
    const url = `http://127.0.0.1:${port}/`;
    await poll(
      () => fetch(url).then((response) => response.ok, () => false),
      () => (child.exitCode === null ? undefined : `workerd did not start:\n${stderr}`),
    );
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(config) });
    const report = (await response.json()) as ScenarioReport & { crashed?: unknown };
    if (report.crashed) throw new Error(`the scenario threw in workerd: ${JSON.stringify(report.crashed)}\n${stderr}`);
    // A worker knows no version of its runtime; this is the npm package's that served it.
    const { version } = JSON.parse(await readFile(join(ROOT, 'node_modules/workerd/package.json'), 'utf8')) as { version: string };
    return { ...report, runtime: `${report.runtime} ${version}`, served: await probeHead(`${url}v1`) };
  } finally {
    child.kill('SIGKILL');
  }
}

/** A page that loads the bundled scenario (`browser.js`), on a static server of its own. */
async function scenarioSite(consumer: Consumer) {
  return serveStatic({
    '/': { type: 'text/html; charset=utf-8', body: '<!doctype html><title>scenario</title><script type="module" src="/browser.js"></script>' },
    '/browser.js': { type: 'text/javascript; charset=utf-8', body: await readFile(join(consumer.dir, 'browser.js')) },
  });
}

/** Opens a page with `browser.js` in Chromium or Firefox and runs the scenario in it. */
export async function runInBrowser(consumer: Consumer, name: BrowserName, config: ScenarioConfig): Promise<ScenarioReport> {
  const site = await scenarioSite(consumer);
  const browser = await launch(name);
  try {
    const page = await browser.newPage();
    await page.goto(`${site.origin}/`);
    await page.waitFor(() => 'runScenario' in globalThis, undefined);
    const report = await page.evaluate(
      (scenarioConfig) => (globalThis as unknown as { runScenario(config: ScenarioConfig): Promise<ScenarioReport> }).runScenario(scenarioConfig),
      config,
    );
    return { ...report, runtime: browser.version };
  } finally {
    await browser.close();
    await site.close();
  }
}

/** Waits until `ready()` holds, up to `attempts` times 100 ms; `failed()` says why to stop early. */
async function poll(ready: () => Promise<boolean>, failed: () => string | undefined, attempts = 100): Promise<void> {
  for (let attempt = 0; !(await ready()); attempt++) {
    const reason = failed() ?? (attempt === attempts ? 'it did not start in time' : undefined);
    if (reason) throw new Error(reason);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs the scenario page in WebKit: Debian's WebKitWebDriver drives WebKitGTK's MiniBrowser over
 * W3C WebDriver (plain HTTP, no client library), on a private Xvfb display, since WebKitGTK
 * cannot run without a display.
 */
export async function runInWebKit(consumer: Consumer, config: ScenarioConfig): Promise<ScenarioReport> {
  const children: ReturnType<typeof spawn>[] = [];
  const site = await scenarioSite(consumer);
  try {
    // Xvfb picks a free display and writes its number to fd 3.
    const xvfb = spawn(programPath(PROGRAMS.xvfb), ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x800x24'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
    children.push(xvfb);
    let display = '';
    xvfb.stdio[3]!.on('data', (chunk: Buffer) => (display += chunk));
    await poll(async () => /\d+\n/.test(display), () => (xvfb.exitCode === null ? undefined : `Xvfb exited with ${xvfb.exitCode}`));

    const port = await freePort();
    let log = '';
    const driver = spawn(programPath(PROGRAMS.webkit), [`--port=${port}`, '--host=127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DISPLAY: `:${display.trim()}` } });
    children.push(driver);
    driver.stdout!.on('data', (chunk) => (log += chunk));
    driver.stderr!.on('data', (chunk) => (log += chunk));
    const base = `http://127.0.0.1:${port}`;
    const webdriver = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${base}${path}`, { method, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const { value } = (await response.json()) as { value: T & { error?: string; message?: string } };
      if (!response.ok) throw new Error(`WebKitWebDriver ${method} ${path}: ${value.error}: ${value.message}\n${log}`);
      return value;
    };
    await poll(() => fetch(`${base}/status`).then((response) => response.ok, () => false), () => (driver.exitCode === null ? undefined : `WebKitWebDriver exited:\n${log}`));

    const session = await webdriver<{ sessionId: string; capabilities: { browserVersion: string } }>('POST', '/session', { capabilities: { alwaysMatch: { timeouts: { script: 60_000 } } } });
    try {
      const at = `/session/${session.sessionId}`;
      await webdriver('POST', `${at}/url`, { url: `${site.origin}/` });
      const report = await webdriver<ScenarioReport & { crashed?: string }>('POST', `${at}/execute/async`, {
        script: 'const [config, done] = arguments; runScenario(config).then(done, (error) => done({ crashed: String(error && error.stack || error) }));',
        args: [config],
      });
      if (report.crashed) throw new Error(`the scenario threw in WebKit: ${report.crashed}`);
      return { ...report, runtime: `webkit/${session.capabilities.browserVersion}` };
    } finally {
      await webdriver('DELETE', `/session/${session.sessionId}`).catch(() => undefined);
    }
  } finally {
    for (const child of children.reverse()) child.kill('SIGKILL');
    await site.close();
  }
}
