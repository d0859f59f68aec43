/**
 * Real worker processes (examples/workers) sharing one key through a real redis-server: the
 * storm of the issue, a worker killed while it holds the only slot, and Redis stopped mid-storm.
 * Workers run the built package, as users do (npm test builds first).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startReferenceServer } from '@animal-store/sdk/node';
import { createReferenceServer, type ReferenceServer } from '@animal-store/sdk/server';
import { connect, startRedis, type RedisProcess } from './support.js';

const EXAMPLE = fileURLToPath(new URL('../../examples/workers/', import.meta.url));
const NODE = process.execPath;

interface WorkerResult {
  ok: number;
  throttled: number;
  rateLimited: number;
  other: string[];
  warnings: string[];
}

let redis: RedisProcess;
beforeAll(async () => void (redis = await startRedis()));
// A test that failed while Redis was stopped leaves it running for the next.
afterEach(async () => redis?.start());
afterAll(async () => redis?.stop());

/** Runs a node script; resolves to its exit code and stdout. */
async function node(script: string, args: string[], env: Record<string, string>) {
  const child = spawn(NODE, [script, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, exited, out: () => out, err: () => err };
}

const worker = (env: Record<string, string>) => node(`${EXAMPLE}worker.ts`, [], env);
const result = (out: string) => JSON.parse(out.trim().split('\n').at(-1)!) as WorkerResult;

/** Polls `condition` every 20 ms until it holds, for 10 s at the most. */
async function until(condition: () => boolean) {
  for (const end = Date.now() + 10_000; !condition() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
}

/**
 * `count` workers that start calling together, as main.ts starts them: each connects to Redis and
 * says it is ready, and once every one is, all are told to go.
 */
async function together(count: number, env: Record<string, string>) {
  const workers = await Promise.all(Array.from({ length: count }, () => worker({ ...env, BARRIER: '1' })));
  await until(() => workers.every((w) => w.out().startsWith('ready\n')));
  for (const w of workers) w.child.stdin!.end('go\n');
  return workers;
}

/**
 * The reference server `api` behind a node:http door, closed when the test ends. Until `open()`,
 * it holds the requests it gets (`requests()` counts every one): `open()` answers them, or
 * `open('drop')` leaves them unanswered, and lets every later one through.
 */
async function door(api: ReferenceServer) {
  let requests = 0;
  let held: (() => void)[] | undefined = [];
  const server = createServer((req, res) => {
    requests++;
    const pass = () =>
      void api.fetch(new Request(`http://${req.headers.host}${req.url}`, { headers: req.headers as Record<string, string> })).then(async (answer) => {
        res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(await answer.text());
      });
    if (held) held.push(pass);
    else pass();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
    open(what: 'answer' | 'drop' = 'answer') {
      const waiting = held ?? [];
      held = undefined;
      if (what === 'answer') for (const pass of waiting) pass();
    },
  };
}

/**
 * Runs `body` as an app of the package's users would (node-redis, the client and a reference
 * server in the same process as `options`, key `k` on the Free plan), from the package's folder
 * so that it imports the built package by its name. `onOutput` hears its stdout as it grows. A
 * process kept alive is killed 10 s after it last printed: counted from then, not from its start,
 * since on a starved machine starting it and loading the package took over 10 s.
 */
async function app(body: string, onOutput: (out: string, stdin: NodeJS.WritableStream) => void = () => {}) {
  const script = `
    import { createClient } from 'redis';
    import { PetStoreClient } from '@animal-store/sdk';
    import { createRedisCoordinator } from '@animal-store/sdk/redis';
    import { createReferenceServer } from '@animal-store/sdk/server';
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const options = { apiKey: 'k', baseUrl: 'https://petstore.test/v1', fetch: (request) => server.fetch(request) };
    ${body}`;
  const run = spawn(NODE, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../../', import.meta.url)), env: { ...process.env, REDIS_URL: redis.url }, stdio: ['pipe', 'pipe', 'inherit'] });
  onTestFinished(() => void run.kill('SIGKILL'));
  const exited = once(run, 'exit');
  let out = '';
  let kill: ReturnType<typeof setTimeout> | undefined;
  run.stdout.on('data', (chunk) => {
    out += chunk;
    clearTimeout(kill);
    kill = setTimeout(() => run.kill('SIGKILL'), 10_000);
    onOutput(out, run.stdin);
  });
  const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
  clearTimeout(kill);
  return { code, signal, out };
}

/**
 * Workers in the storm and its control. Eight, so that the control gets the key banned however the
 * machine schedules them: alone, a worker without the coordinator spends the minute's 60 exactly
 * (its probe, then the 59 it is told are left) and meets no 429; every other worker sends at least
 * its probe, so at least 7 requests are refused, and all but the first come inside the window it
 * announced: 6 strikes, past the ban threshold of 5. With 6 workers started late (a loaded
 * machine), the others' probes alone made 4 strikes and no ban.
 */
const WORKERS = 8;

describe('many processes, one key', () => {
  it('an app that unrefs its node-redis client exits once its calls are done: the coordinator\'s own pub/sub connection does not keep the process alive', async () => {
    const { code, out } = await app(`
      const redis = await createClient({ url: process.env.REDIS_URL }).connect();
      redis.unref();
      const client = new PetStoreClient({ ...options, coordinator: createRedisCoordinator({ redis }) });
      await client.listPets();
      console.log(JSON.stringify(client.rateLimit.getSnapshot()?.limit));`);
    expect(code).toBe(0);
    expect(out.trim()).toBe('60');
  }, 60_000);

  it.each([
    ['close()', 'void redis.close().catch(() => {});'],
    ['close(), then destroy()', 'void redis.close().catch(() => {}); redis.destroy();'],
  ])('an app that ends with %s while Redis is down exits: the coordinator\'s pub/sub connection stops reconnecting once the app\'s client is closed', async (_, end) => {
    const ended = await app(
      `
      const redis = await createClient({ url: process.env.REDIS_URL }).on('error', () => {}).connect();
      const client = new PetStoreClient({ ...options, coordinator: createRedisCoordinator({ redis, onWarning: () => {} }) });
      await client.listPets();
      console.log('called');
      // Told once Redis is stopped; then waits until node-redis has noticed.
      await new Promise((resolve) => process.stdin.once('data', resolve));
      process.stdin.destroy();
      while (redis.isReady) await new Promise((resolve) => setTimeout(resolve, 20));
      await client.listPets();
      ${end}
      console.log('closed');`,
      (out, stdin) => void (out === 'called\n' && redis.stop().then(() => stdin.end('go\n'))),
    );
    expect(ended).toEqual({ code: 0, signal: null, out: 'called\nclosed\n' });
  }, 60_000);

  it('storm: 8 workers × 100 calls on one Free-plan key: with Redis, no request inside a Retry-After window, no ban, every call settles', async () => {
    const run = await node(`${EXAMPLE}main.ts`, [String(WORKERS), '100'], { REDIS_URL: redis.url });
    expect(await run.exited, run.err()).toBe(0);
    const { workers, server } = JSON.parse(run.out().trim().split('\n').at(-1)!) as { workers: WorkerResult[]; server: Record<string, number> };
    expect(server).toMatchObject({ insideRetryAfter: 0, bans: 0 });
    expect(server.rateLimited).toBeLessThanOrEqual(1);
    expect(workers.reduce((n, w) => n + w.ok + w.throttled + w.rateLimited, 0)).toBe(WORKERS * 100);
    expect(workers.flatMap((w) => w.other)).toEqual([]);
    // After the storm, no Redis key or value holds the API key.
    const inspector = await connect(redis.url);
    const keys = await inspector.keys('*');
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      const type = await inspector.type(key);
      const values = type === 'hash' ? Object.entries(await inspector.hGetAll(key)).flat() : type === 'zset' ? await inspector.zRange(key, 0, -1) : [];
      expect([key, ...values].join(' ')).not.toContain('shared-key');
    }
    inspector.destroy();
  }, 60_000);

  it('the same storm without the coordinator gets the key banned (so the test above can fail)', async () => {
    const run = await node(`${EXAMPLE}main.ts`, [String(WORKERS), '100', '--no-redis'], {});
    expect(await run.exited, run.err()).toBe(0);
    const { server } = JSON.parse(run.out().trim().split('\n').at(-1)!) as { server: Record<string, number> };
    expect(server.bans, run.out()).toBeGreaterThanOrEqual(1);
    expect(server.insideRetryAfter).toBeGreaterThan(5);
  }, 60_000);

  it('a worker SIGKILLed while it holds the only slot (the probe) does not hold the others up past its lease', async () => {
    // The reference server behind a door that holds the very first request, and never answers it:
    // the first worker is killed while its probe, the only request allowed before the budget is
    // known, is in flight.
    const gate = await door(createReferenceServer({ apiKeys: { k: 'pro' } }));
    const env = { BASE_URL: gate.url, API_KEY: 'k', REDIS_URL: redis.url, CALLS: '5', TIMEOUT: '1000', MAX_RETRY_DELAY: '2000' };
    const doomed = await worker(env);
    await until(() => gate.requests() > 0);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    gate.open('drop');
    // Without leases the survivors would wait for the dead worker's slot until their limit for
    // a wait on answers (their maxRetryDelay, 2 s) and be refused; with them, the slot comes back
    // after its lease (timeout + 5 s) on Redis' clock, which the test moves past it instead of
    // waiting, and every call goes through. Moved back when the test ends, so that the tests
    // after it run on Redis' clock as it was, whatever their order.
    onTestFinished(() => redis.advanceClock(-6_000));
    redis.advanceClock(6_000);
    const survivors = await Promise.all([worker(env), worker(env)]);
    expect(await Promise.all(survivors.map((s) => s.exited))).toEqual([0, 0]);
    for (const s of survivors) expect(result(s.out())).toMatchObject({ ok: 5, other: [] });
  }, 60_000);

  it('Redis stopped mid-storm on a budget the storm outruns: the processes that fall back send nothing inside a Retry-After window and the key is not banned', async () => {
    // 3 workers × 15 calls, started together, on a key of 20 a minute. Until its budget is known,
    // Redis lets one request out, the probe: the door holds it until Redis is stopped, so that
    // every other call is decided once Redis is gone, by its process's fallback, which must go on
    // with its share only. The server's clock starts ten seconds into a minute, as in main.ts, so
    // that no fresh minute's budget comes halfway.
    const offset = 10_000 - (Date.now() % 60_000);
    const api = createReferenceServer({ apiKeys: { k: { perMinute: 20, perDay: 1_000 } }, now: () => Date.now() + offset });
    const gate = await door(api);
    const workers = await together(3, { BASE_URL: gate.url, API_KEY: 'k', REDIS_URL: redis.url, CALLS: '15' });
    await until(() => gate.requests() > 0);
    await redis.stop();
    gate.open();
    const codes = await Promise.all(workers.map((w) => w.exited));
    await redis.start();
    expect(codes).toEqual([0, 0, 0]);
    for (const w of workers) {
      const r = result(w.out());
      expect(r.ok + r.throttled + r.rateLimited).toBe(15);
      // Each process fell back (said once it did), rather than deciding every call on Redis first.
      expect(r, w.out()).toMatchObject({ other: [], warnings: expect.arrayContaining([expect.stringMatching(/Redis failed/)]) });
    }
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 0, bans: 0 });
  }, 90_000);

  it('Redis stopped mid-storm: every call still settles, with the warning; started again, coordination resumes', async () => {
    const api = await startReferenceServer({ port: 0, apiKeys: { k: 'pro' }, faults: { rate: 0.5, kinds: ['latency'], latencyMs: 500 } });
    const env = { BASE_URL: api.url, API_KEY: 'k', REDIS_URL: redis.url, CALLS: '30' };
    try {
      const workers = await Promise.all([worker(env), worker(env), worker(env)]);
      await until(() => (api.server.inspect().keys.k?.requests ?? 0) >= 2);
      await redis.stop();
      const codes = await Promise.all(workers.map((w) => w.exited));
      await redis.start();
      expect(codes).toEqual([0, 0, 0]);
      const results = workers.map((w) => result(w.out()));
      for (const r of results) expect(r.ok + r.throttled + r.rateLimited).toBe(30);
      expect(results.flatMap((r) => r.warnings)).toEqual(expect.arrayContaining([expect.stringMatching(/Redis failed/)]));
      // Back: a fresh storm on the same Redis is coordinated again (no 429 beyond a probe), every
      // decision made on Redis (no warning). Its workers wait on Redis up to 10 s, not 250 ms: on
      // a starved machine a decision (the first also connects for pub/sub) took longer than 250 ms,
      // and both workers fell back and warned with Redis up.
      api.server.reset();
      const fresh = { ...env, CALLS: '10', COMMAND_TIMEOUT: '10000' };
      const again = await Promise.all([worker(fresh), worker(fresh)]);
      expect(await Promise.all(again.map((w) => w.exited))).toEqual([0, 0]);
      expect(again.flatMap((w) => result(w.out()).warnings)).toEqual([]);
    } finally {
      await api.close();
    }
  }, 90_000);
});
