/**
 * The Redis coordinator against a real redis-server: clients with their own Redis connections
 * (as separate processes have) share one rate-limit state for one key. Windows are short and
 * waits are refusals (`maxRetryDelay: 0`) wherever a test can, because Redis keeps real time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PetStoreClient, ThrottledError, type ClientOptions } from '@animal-store/sdk';
import { createRedisCoordinator } from '@animal-store/sdk/redis';
import { createReferenceServer, type ReferenceServer } from '@animal-store/sdk/server';
import { connect, startRedis, type RedisProcess } from './support.js';

const KEY = 'sk_live_REDISSHAREDk3y';
const BASE_URL = 'https://petstore.test/v1';

let redis: RedisProcess;
const connections: Awaited<ReturnType<typeof connect>>[] = [];
beforeAll(async () => void (redis = await startRedis()));
afterAll(async () => {
  for (const c of connections) c.destroy();
  await redis?.stop();
});

let prefixes = 0;
/** A "process": its own Redis connection and coordinator, and a client on the shared server. */
async function processOf(server: ReferenceServer, prefix: string, options: ClientOptions = {}, warnings: string[] = []) {
  const connection = await connect(redis.url);
  connections.push(connection);
  const coordinator = createRedisCoordinator({ redis: connection, prefix, onWarning: (m) => void warnings.push(m) });
  return new PetStoreClient({ apiKey: KEY, baseUrl: BASE_URL, fetch: (request) => server.fetch(request), coordinator, logLevel: 'off', ...options });
}

const fresh = () => `test${++prefixes}`;
const until = async (check: () => boolean, ms = 3_000) => {
  for (const end = Date.now() + ms; !check() && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 10));
  return check();
};

describe('createRedisCoordinator: every process of one key acts as one client', () => {
  it('after a 429 seen by one process, another sends nothing before the window ends', async () => {
    const server = createReferenceServer({ apiKeys: { [KEY]: { perMinute: 1, perDay: 100 } } });
    const prefix = fresh();
    const a = await processOf(server, prefix, { throttle: false, maxRetries: 0 });
    const b = await processOf(server, prefix, { maxRetryDelay: 0 });
    await a.listPets();
    await expect(a.listPets()).rejects.toMatchObject({ name: 'RateLimitError' });
    await expect(b.listPets()).rejects.toMatchObject({ name: 'ThrottledError', code: 'rate_limited' });
    expect(server.inspect().keys[KEY]).toMatchObject({ requests: 2, insideRetryAfter: 0 });
  });

  it('one budget: requests in flight in every process never exceed what is left, so no 429 comes back', async () => {
    const server = createReferenceServer({ apiKeys: { [KEY]: { perMinute: 5, perDay: 100 } } });
    const prefix = fresh();
    const [a, b] = [await processOf(server, prefix, { maxRetryDelay: 0 }), await processOf(server, prefix, { maxRetryDelay: 0 })];
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).listPets()));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ThrottledError);
    expect(server.inspect().keys[KEY]).toMatchObject({ requests: 5, rateLimited: 0 });
  });

  it('a response in one process reaches rateLimit subscribers in the others', async () => {
    const server = createReferenceServer({ apiKeys: { [KEY]: 'pro' } });
    const prefix = fresh();
    const [a, b] = [await processOf(server, prefix), await processOf(server, prefix)];
    await b.listPets(); // b has subscribed
    const seen: (number | undefined)[] = [];
    b.rateLimit.subscribe((state) => seen.push(state?.remaining));
    await a.listPets();
    expect(await until(() => seen.includes(298))).toBe(true);
    expect(b.rateLimit.getSnapshot()).toMatchObject({ limit: 300, remaining: 298 });
  });

  it('a slot held by a process that died is free again within its lease', async () => {
    const prefix = fresh();
    const scope = { apiKey: KEY, baseUrl: `${BASE_URL}/` };
    const dead = createRedisCoordinator({ redis: await connect(redis.url), prefix }).bind(scope);
    const alive = createRedisCoordinator({ redis: await connect(redis.url), prefix }).bind(scope);
    // Before any response one request probes; the dead process holds that slot and never gives it back.
    expect(await dead.acquire({ throttle: true, leaseMs: 300 })).toMatchObject({ kind: 'granted' });
    const waiting = await alive.acquire({ throttle: true, leaseMs: 300 });
    expect(waiting.kind).toBe('busy');
    expect((waiting as { waitMs: number }).waitMs).toBeLessThanOrEqual(300);
    await new Promise((resolve) => setTimeout(resolve, (waiting as { waitMs: number }).waitMs + 20));
    expect(await alive.acquire({ throttle: true, leaseMs: 300 })).toMatchObject({ kind: 'granted' });
  });

  it('a waiter wakes when another process releases its slot (pub/sub), long before the lease ends', async () => {
    const server = createReferenceServer({ apiKeys: { [KEY]: 'pro' } });
    const prefix = fresh();
    const holder = createRedisCoordinator({ redis: await connect(redis.url), prefix }).bind({ apiKey: KEY, baseUrl: `${BASE_URL}/` });
    const b = await processOf(server, prefix);
    const held = await holder.acquire({ throttle: true, leaseMs: 60_000 });
    expect(held.kind).toBe('granted');
    let done = false;
    const call = b.listPets().then(() => void (done = true));
    expect(await until(() => done, 300)).toBe(false);
    (held as { release: () => void }).release();
    expect(await until(() => done, 5_000)).toBe(true);
    await call;
  });

  it('nothing in Redis names the key: keys are hashes under the prefix, values are numbers, and every entry expires', async () => {
    const server = createReferenceServer({ apiKeys: { [KEY]: { perMinute: 2, perDay: 100 } } });
    const prefix = fresh();
    const a = await processOf(server, prefix, { throttle: false, maxRetries: 0 });
    await Promise.allSettled([a.listPets(), a.listPets(), a.listPets()]);
    const inspector = await connect(redis.url);
    const keys = await inspector.keys(`${prefix}:*`);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) {
      expect(key).not.toContain(KEY);
      expect(key).toMatch(new RegExp(`^${prefix}:[0-9a-f]{32}:(state|slots)$`));
      expect(await inspector.pTTL(key)).toBeGreaterThan(0);
      const values = key.endsWith(':state') ? Object.values(await inspector.hGetAll(key)) : await inspector.zRange(key, 0, -1);
      for (const value of values) expect(String(value)).toMatch(/^-?\d+$/);
    }
    inspector.destroy();
  });

  it('Redis down: calls still settle, one warning says so; Redis back: coordination resumes, and says so', async () => {
    const server = createReferenceServer({ apiKeys: { [KEY]: { perMinute: 1, perDay: 100 } } });
    const prefix = fresh();
    const warnings: string[] = [];
    const a = await processOf(server, prefix, { maxRetryDelay: 0, throttle: false, maxRetries: 0 }, warnings);
    const b = await processOf(server, prefix, { maxRetryDelay: 0 });
    await redis.stop();
    try {
      expect(await a.listPets()).toEqual([]);
      await expect(a.listPets()).rejects.toMatchObject({ name: 'RateLimitError' });
      expect(warnings).toEqual([expect.stringMatching(/Redis failed .*coordinated in this process only/)]);
    } finally {
      await redis.start();
    }
    server.reset();
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await a.listPets();
    await expect(a.listPets()).rejects.toMatchObject({ name: 'RateLimitError' });
    expect(warnings).toEqual([expect.stringMatching(/Redis failed/), expect.stringMatching(/Redis answers again/)]);
    // Shared again: b learns of a's 429 through Redis and sends nothing.
    await expect(b.listPets()).rejects.toMatchObject({ name: 'ThrottledError' });
    expect(server.inspect().keys[KEY]!.requests).toBe(2);
  }, 30_000);
});
