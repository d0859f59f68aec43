/**
 * How the matrix runs the scenario in each runtime, from a consumer project with the packed
 * package installed (test/support/consumer.ts). The runtimes come from npm: Node 24 (the
 * `node` devDependency), Node 22 (installed once into node_modules/.cache/runtimes/), Bun, Deno
 * and workerd (devDependencies that ship their binaries); the browsers from Debian, launched as
 * the browser tests launch them.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { launch, serveStatic, type BrowserName } from '../browser/support.js';
import type { Consumer } from '../support/consumer.js';
import { run, ROOT } from '../support/consumer.js';
import { freePort } from '../support/ports.js';
import type { CliRequest } from './entries/cli.js';
import type { ScenarioConfig, ScenarioReport } from './scenario.js';

const BIN = join(ROOT, 'node_modules/.bin');
export const NODE_24 = join(ROOT, 'node_modules/node/bin/node');
export const BUN = join(BIN, 'bun');
export const DENO = join(BIN, 'deno');
export const WORKERD = join(BIN, 'workerd');

/** Deno's flags for the scenario: loopback only, the environment readable, the project's node_modules. */
export const DENO_FLAGS = ['--allow-net=127.0.0.1', '--allow-env', '--node-modules-dir=manual', '--no-prompt'];

/**
 * Node 22, from npm's `node@22` package, installed the first time into
 * node_modules/.cache/runtimes/node-22 and reused after (`npm ci` starts it afresh).
 */
export async function node22(): Promise<string> {
  const dir = join(ROOT, 'node_modules/.cache/runtimes/node-22');
  const binary = join(dir, 'node_modules/node/bin/node');
  if (existsSync(binary)) return binary;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ private: true, allowScripts: { node: true } }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', 'node@22'], { cwd: dir, timeout: 180_000 });
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
    for (let attempt = 0; ; attempt++) {
      if (child.exitCode !== null || attempt === 100) throw new Error(`workerd did not start:\n${stderr}`);
      if (await fetch(url).then((response) => response.ok, () => false)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const response = await fetch(url, { method: 'POST', body: JSON.stringify(config) });
    const report = (await response.json()) as ScenarioReport & { crashed?: unknown };
    if (report.crashed) throw new Error(`the scenario threw in workerd: ${JSON.stringify(report.crashed)}\n${stderr}`);
    return report;
  } finally {
    child.kill('SIGKILL');
  }
}

/** Opens a page with `browser.js` in Chromium or Firefox and runs the scenario in it. */
export async function runInBrowser(consumer: Consumer, name: BrowserName, config: ScenarioConfig): Promise<ScenarioReport> {
  const site = await serveStatic({
    '/': { type: 'text/html; charset=utf-8', body: '<!doctype html><title>scenario</title><script type="module" src="/browser.js"></script>' },
    '/browser.js': { type: 'text/javascript; charset=utf-8', body: await readFile(join(consumer.dir, 'browser.js')) },
  });
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
