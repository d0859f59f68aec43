// The runtime matrix: the packed package's client and reference server, installed into a fresh
// project, run the same scenario (scenario.ts) in Node 22 and 24, Bun, Deno, workerd, Chromium,
// Firefox and WebKit, in-process (`fetch: server.fetch`) and against real HTTP reference servers this
// test starts in Node from the same tarball. Each runtime reports JSON; the assertions are here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsumer, ROOT, type Consumer } from '../support/consumer.js';
import { PROGRAMS, programPath } from '../support/programs.js';
import { BUN, DENO, DENO_FLAGS, NODE_22_VERSION, NODE_24, node22, runCli, runInBrowser, runInWebKit, runWorkerd, writeEntries } from './runners.js';
import { SCENARIO, STREAMED_NAME, type ErrorReport, type ModeReport, type ScenarioConfig, type ScenarioReport } from './scenario.js';

type NodeAdapter = typeof import('@animal-store/sdk/node');
type RunningServer = Awaited<ReturnType<NodeAdapter['startReferenceServer']>>;

let consumer: Consumer;
let api: RunningServer;
let slowApi: RunningServer;
let config: ScenarioConfig;

beforeAll(async () => {
  consumer = await createConsumer();
  await writeEntries(consumer);
  // The HTTP servers come from the same tarball as the code under test.
  const { startReferenceServer } = (await import(join(consumer.dir, 'node_modules/@animal-store/sdk/dist/node.js'))) as NodeAdapter;
  const apiKeys = { [SCENARIO.apiKey]: SCENARIO.plan };
  api = await startReferenceServer({ port: 0, apiKeys, pets: SCENARIO.pets });
  slowApi = await startReferenceServer({ port: 0, apiKeys, pets: SCENARIO.pets, faults: { rate: 1, kinds: ['latency'], latencyMs: SCENARIO.latencyMs } });
  config = { baseUrl: api.url, slowBaseUrl: slowApi.url };
}, 180_000);

afterAll(async () => {
  await api?.close();
  await slowApi?.close();
  await consumer?.remove();
});

const scenario = (command: () => Promise<string> | string, flags: string[] = []) => async () =>
  runCli<ScenarioReport>(consumer, await command(), flags, { run: 'scenario', config });

/**
 * Each runtime: how it names itself (the version captured as the README's table shows it), its
 * row in that table, and how it runs the scenario.
 */
const RUNTIMES: [string, RegExp, string, () => Promise<ScenarioReport>][] = [
  ['Node 22', new RegExp(`^node (${NODE_22_VERSION.replaceAll('.', '\\.')})$`), 'Node.js', scenario(node22)],
  ['Node 24', /^node (24\.\d+\.\d+)$/, 'Node.js', scenario(() => NODE_24)],
  ['Bun', /^bun (1\.\d+\.\d+)$/, 'Bun', scenario(() => BUN)],
  ['Deno', /^deno (2\.\d+\.\d+)$/, 'Deno', scenario(() => DENO, ['run', ...DENO_FLAGS])],
  ['workerd', /^workerd (1\.\d+\.\d+)$/, 'workerd (Cloudflare Workers)', () => runWorkerd(consumer, config)],
  // Debian updates its browsers within a major version; the README names the major.
  ['Chromium', /^chromium\/(\d+)\./, 'Chromium', () => runInBrowser(consumer, 'chromium', config)],
  ['Firefox', /^firefox\/(\d+\.\d+)\./, 'Firefox ESR', () => runInBrowser(consumer, 'firefox', config)],
  ['WebKit', /^webkit\/(2\.\d+)\./, "WebKit (WebKitGTK's MiniBrowser)", () => runInWebKit(consumer, config)],
];

/**
 * How the client should name itself in each runtime (the runtime part of its User-Agent, or the
 * X- header where a page may not set User-Agent), and where its default deprecation warning
 * should go: a process 'warning' event where the runtime prints those (Node, Bun, Deno), else
 * the console (workerd has a `process` whose warnings nobody prints).
 */
const HOST: Record<string, { userAgent: RegExp | null; warning: 'process' | 'console' }> = {
  'Node 22': { userAgent: /^@animal-store\/sdk\/\S+ \(node\/22\.\d+\.\d+\)$/, warning: 'process' },
  'Node 24': { userAgent: /^@animal-store\/sdk\/\S+ \(node\/24\.\d+\.\d+\)$/, warning: 'process' },
  Bun: { userAgent: /^@animal-store\/sdk\/\S+ \(bun\/1\.\d+\.\d+\)$/, warning: 'process' },
  Deno: { userAgent: /^@animal-store\/sdk\/\S+ \(deno\/2\.\d+\.\d+\)$/, warning: 'process' },
  workerd: { userAgent: /^@animal-store\/sdk\/\S+ \(workerd\)$/, warning: 'console' },
  Chromium: { userAgent: null, warning: 'console' },
  Firefox: { userAgent: null, warning: 'console' },
  WebKit: { userAgent: null, warning: 'console' },
};

/**
 * The HTTP server each runtime that has one serves the reference server with, as its users would
 * (browsers serve none): the scenario reads `GET` and `HEAD` back over it.
 */
const SERVER: Record<string, string> = {
  'Node 22': 'node:http (@animal-store/sdk/node)',
  'Node 24': 'node:http (@animal-store/sdk/node)',
  Bun: 'Bun.serve({ fetch: server.fetch })',
  Deno: 'Deno.serve(server.fetch)',
  workerd: 'a workerd module (server.fetch)',
};

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

const MODES = [
  ['in-process', 'inProcess'],
  ['over HTTP', 'http'],
] as const;

const error = (outcome: unknown): ErrorReport => {
  expect(outcome, 'the call should have failed').not.toBe('resolved');
  return outcome as ErrorReport;
};

describe.each(RUNTIMES)('the packed package in %s', (name, runtime, readmeRow, runScenario) => {
  let report: ScenarioReport;

  beforeAll(async () => {
    // A fresh store and fresh counters on the HTTP servers, so every runtime starts alike.
    api.server.reset();
    slowApi.server.reset();
    report = await runScenario();
  }, 120_000);

  it('ran in that runtime, the version the README names', () => {
    expect(report.runtime).toMatch(runtime);
    const row = README.split('\n').find((line) => line.startsWith(`| ${readmeRow} |`));
    expect(row, `README's Runtime support row for ${readmeRow}`).toContain(report.runtime.match(runtime)![1]);
  });

  describe('its host', () => {
    const expected = HOST[name]!;

    it(expected.userAgent ? 'the User-Agent names the SDK and this runtime' : 'the X-Animal-Store-Client header names the SDK (a page may not set User-Agent)', () => {
      const { identity } = report.host;
      if (expected.userAgent) expect(identity).toEqual({ userAgent: expect.stringMatching(expected.userAgent), client: null });
      else expect(identity).toEqual({ userAgent: null, client: expect.stringMatching(/^@animal-store\/sdk\/\S+$/) });
    });

    it(`without onDeprecation, getPet warns where this runtime shows it (${expected.warning === 'process' ? 'process.emitWarning' : 'console.warn'})`, () => {
      expect(report.host.warning).toEqual([expected.warning]);
    });

    it('a body streamed one byte per chunk decodes characters split across chunks', () => {
      expect(report.host.streamed).toEqual([STREAMED_NAME]);
    });

    if (SERVER[name]) {
      it(`HEAD over ${SERVER[name]} carries the Content-Length its GET has, and no body (before: 0 under Bun and Deno, none under Node and workerd)`, () => {
        const { get, head } = report.served!;
        expect(get.bytes).toBeGreaterThan(0);
        expect(get.contentLength).toBe(String(get.bytes));
        expect(head).toEqual({ contentLength: String(get.bytes), bytes: 0 });
      });
    }

    it('maxResponseBytes fails a larger body, with or without Content-Length', () => {
      const tooLarge = { name: 'ConnectionError', petStoreError: true, message: expect.stringContaining('maxResponseBytes') };
      expect(error(report.host.tooLarge.chunked)).toMatchObject(tooLarge);
      expect(error(report.host.tooLarge.declared)).toMatchObject(tooLarge);
    });
  });

  describe.each(MODES)('%s', (_mode, key) => {
    const mode = (): ModeReport => report[key];

    it('listPets answers the seeded pets', () => {
      expect(mode().listed).toEqual(SCENARIO.pets.map((pet) => pet.name));
    });

    it('the rate-limit headers and the request id are readable (exposed to a page of another origin)', () => {
      expect(mode().seen).toEqual({ limit: expect.any(Number), remaining: expect.any(Number), resetsLater: true, requestId: expect.stringMatching(/\S/) });
      expect(mode().seen.remaining).toBeLessThan(mode().seen.limit!);
    });

    it('createPet sends its body and answers the stored pet', () => {
      expect(mode().created).toEqual({ id: 3, name: 'Runtime', categoryId: 3, status: 'pending' });
    });

    it('getPet answers, and onDeprecation hears of it once, with its sunset', () => {
      expect(mode().getPet).toEqual({ name: 'Luna', notices: [{ operation: 'getPet', sunset: '2030-12-05' }] });
    });

    it('a 429 is a RateLimitError carrying its Retry-After', () => {
      const rateLimited = error(mode().rateLimited);
      expect(rateLimited).toMatchObject({ name: 'RateLimitError', petStoreError: true, status: 429 });
      expect(rateLimited.retryAfterMs).toBeGreaterThan(0);
    });

    it('a call inside that window is refused without sending: a ThrottledError, one of our errors', () => {
      expect(mode().throttled).toMatchObject({ name: 'ThrottledError', petStoreError: true, code: 'rate_limited', sent: 0 });
    });

    it('a timeout fails the call with TimeoutError before the slow answer arrives', () => {
      expect(mode().timedOut).toMatchObject({ settled: true, error: { name: 'TimeoutError', petStoreError: true } });
    });

    it("an abort rejects the call with an AbortError carrying the signal's reason before the slow answer arrives", () => {
      expect(mode().aborted).toMatchObject({ settled: true, withReason: true, error: { name: 'AbortError', petStoreError: true } });
    });
  });
});

describe('the packed package in Deno, without permissions', () => {
  it('without --allow-env, a client given only baseUrl throws the ValidationError naming apiKey', async () => {
    const flags = ['run', '--allow-net=127.0.0.1', '--node-modules-dir=manual', '--no-prompt'];
    const outcome = await runCli<ErrorReport | 'constructed'>(consumer, DENO, flags, { run: 'missing-option', baseUrl: api.url });
    expect(outcome).toMatchObject({ name: 'ValidationError', petStoreError: true, message: expect.stringContaining('apiKey') });
  });

  it('with env access to its own variables only, a missing option asks for no more on a terminal (Deno prompts there)', async () => {
    // The hint for a misspelt variable lists the environment, which needs all env access: on a
    // terminal Deno would stop the app to ask for it. Run as a developer would, on a pty.
    const flags = ['run', '--allow-net=127.0.0.1', '--allow-env=PETSTORE_API_KEY,PETSTORE_BASE_URL,PETSTORE_LOG', '--node-modules-dir=manual'];
    const request = JSON.stringify({ run: 'missing-option', baseUrl: api.url });
    const { stdout } = await consumer.run(programPath(PROGRAMS.python), [join(ROOT, 'test/runtimes/on_terminal.py'), DENO, ...flags, 'cli.mjs', request], {
      timeout: 60_000,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', PETSTORE_APIKEY: 'misspelt' },
    });
    expect(stdout).not.toMatch(/requests env access/);
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toMatchObject({ name: 'ValidationError', message: expect.stringContaining('apiKey is missing') });
  });

  it('without --allow-env, a client given apiKey and baseUrl is made without asking for env access on a terminal', async () => {
    // README: without --allow-env the client reads no environment variables. Reading one that
    // was not granted (PETSTORE_LOG, for the default logLevel) stops the app on a prompt.
    const flags = ['run', '--allow-net=127.0.0.1', '--node-modules-dir=manual'];
    const request = JSON.stringify({ run: 'missing-option', baseUrl: api.url, apiKey: SCENARIO.apiKey });
    const { stdout } = await consumer.run(programPath(PROGRAMS.python), [join(ROOT, 'test/runtimes/on_terminal.py'), DENO, ...flags, 'cli.mjs', request], {
      timeout: 60_000,
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', PETSTORE_LOG: 'debug' },
    });
    expect(stdout).not.toMatch(/requests env access/);
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toBe('constructed');
  });

  it('without --allow-net, a call fails at once with a PetStoreError saying so, not retried', async () => {
    const flags = ['run', '--allow-env', '--node-modules-dir=manual', '--no-prompt'];
    const outcome = await runCli<{ error: ErrorReport | 'resolved'; attempts: number }>(consumer, DENO, flags, { run: 'denied-network', baseUrl: api.url });
    expect(outcome.attempts).toBe(1);
    expect(error(outcome.error)).toMatchObject({ name: 'ConnectionError', petStoreError: true, message: expect.stringMatching(/--allow-net/) });
  });
});
