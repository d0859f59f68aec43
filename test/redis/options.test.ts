// createRedisCoordinator's slips from JavaScript, and a node-redis client the app never connected:
// none of these needs a Redis server.
import { createClient, createClientPool, createCluster, createSentinel } from 'redis';
import { describe, expect, it, vi } from 'vitest';
import { PetStoreClient, ValidationError } from '@animal-store/sdk';
import { createRedisCoordinator } from '@animal-store/sdk/redis';
import { createReferenceServer } from '@animal-store/sdk/server';
import { thrown } from '../client/harness.js';

const make = (options: unknown) => () => createRedisCoordinator(options as never);

describe('createRedisCoordinator: what it is given', () => {
  it('no options, a URL, or the client itself instead of { redis } is a ValidationError that shows how to pass a connected node-redis client', () => {
    const redis = createClient();
    expect(make(undefined)).toThrow(ValidationError);
    expect(thrown(make({ redis: 'redis://127.0.0.1:6379' }))).toMatchObject({ name: 'ValidationError', issues: [{ code: 'custom', path: ['redis'] }] });
    expect(make(undefined)).toThrow('createRedisCoordinator(): pass the options object: createRedisCoordinator({ redis: await createClient({ url }).connect() })');
    expect(make({})).toThrow('createRedisCoordinator(): redis must be a node-redis client; it is missing. Use createRedisCoordinator({ redis: await createClient({ url }).connect() })');
    expect(make({ redis: 'redis://127.0.0.1:6379' })).toThrow('redis must be a node-redis client; got a string: pass a client, not its URL.');
    expect(make(redis)).toThrow('createRedisCoordinator(): pass the client as the redis option: createRedisCoordinator({ redis }).');
    expect(make({ redis: { evalsha() {}, duplicate() {}, on() {} } })).toThrow('got what looks like an ioredis client, which is not supported');
  });

  it('a node-redis cluster or pool is a ValidationError that says to pass a client of one Redis, as the types say, not a coordinator that falls back at its first call', () => {
    // A cluster has every method the check looked for: it was taken, and each process then
    // coordinated alone, warning "Redis failed (connection.unref is not a function)".
    const cluster = createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:6379' }] });
    expect(thrown(make({ redis: cluster }))).toMatchObject({ name: 'ValidationError', issues: [{ path: ['redis'] }] });
    expect(make({ redis: cluster })).toThrow('createRedisCoordinator(): redis must be a node-redis client; got a cluster (createCluster()), which is not supported: pass a client of one Redis. Use createRedisCoordinator({ redis: await createClient({ url }).connect() })');
    expect(make({ redis: createClientPool() })).toThrow('redis must be a node-redis client; got a pool (createClientPool()), which is not supported: pass a client of one Redis. Use');
  });

  it('a node-redis sentinel client (createSentinel()) is a ValidationError that names it a sentinel client, not a pool, and says to pass a client of one Redis', () => {
    const sentinel = createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }] });
    expect(thrown(make({ redis: sentinel }))).toMatchObject({ name: 'ValidationError', issues: [{ path: ['redis'] }] });
    expect(make({ redis: sentinel })).toThrow('redis must be a node-redis client; got a sentinel client (createSentinel()), which is not supported: pass a client of one Redis. Use');
  });

  it('a misspelt option is a ValidationError that names the one meant, and options of the wrong type say what they must be', () => {
    const redis = createClient();
    expect(thrown(make({ redis, commandTimeout: 100 }))).toMatchObject({ name: 'ValidationError', issues: [{ path: ['commandTimeout'] }] });
    expect(thrown(make({ redis, prefix: 7 }))).toMatchObject({ name: 'ValidationError', issues: [{ path: ['prefix'] }] });
    expect(make({ redis, commandTimeout: 100 })).toThrow('createRedisCoordinator(): unknown option "commandTimeout" (did you mean "commandTimeoutMs"?).');
    expect(make({ redis, colour: 'red' })).toThrow('unknown option "colour". The options are redis, prefix, commandTimeoutMs, onWarning.');
    expect(make({ redis, commandTimeoutMs: '250' })).toThrow('commandTimeoutMs must be a number of milliseconds above 0, at most 2147483647.');
    expect(make({ redis, prefix: 7 })).toThrow('prefix must be a string.');
    expect(make({ redis, onWarning: 'console' })).toThrow('onWarning must be a function.');
    expect(make({ redis, prefix: undefined, commandTimeoutMs: undefined, onWarning: undefined })).not.toThrow();
  });

  it('a commandTimeoutMs that no timer can hold (above 2147483647 ms, or Infinity) is a ValidationError: a timer fired it after 1 ms, so decisions gave up on a healthy Redis, and Infinity left a call waiting on a Redis that is down for as long as it stayed down', () => {
    const redis = createClient();
    for (const commandTimeoutMs of [2 ** 31, Number.MAX_SAFE_INTEGER, Infinity]) {
      expect(thrown(make({ redis, commandTimeoutMs }))).toMatchObject({ name: 'ValidationError', issues: [{ path: ['commandTimeoutMs'] }] });
      expect(make({ redis, commandTimeoutMs })).toThrow('commandTimeoutMs must be a number of milliseconds above 0, at most 2147483647.');
    }
    expect(make({ redis, commandTimeoutMs: 2 ** 31 - 1 })).not.toThrow();
  });

  it('null in place of the options, or a redis that is neither an object nor a string, is a ValidationError that says what to pass, not a TypeError', () => {
    expect(thrown(make(null))).toMatchObject({ name: 'ValidationError' });
    expect(make(null)).toThrow('createRedisCoordinator(): pass the options object: createRedisCoordinator({ redis: await createClient({ url }).connect() })');
    expect(make({ redis: 6379 })).toThrow('redis must be a node-redis client; got a number without evalSha, eval, duplicate, on. Use');
    expect(make({ redis: {} })).toThrow('redis must be a node-redis client; got an object without evalSha, eval, duplicate, on. Use');
  });

  it('a commandTimeoutMs of 0 or below (or NaN) is a ValidationError: every decision would give up on Redis before its answer', () => {
    const redis = createClient();
    for (const commandTimeoutMs of [0, -1, Number.NaN]) {
      expect(thrown(make({ redis, commandTimeoutMs }))).toMatchObject({ name: 'ValidationError', issues: [{ path: ['commandTimeoutMs'] }] });
    }
    expect(make({ redis, commandTimeoutMs: 1 })).not.toThrow();
  });

  it('a coordinator closed before its node-redis client was ever connected says nothing at the calls made after: closed, it is quietly not used', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const warnings: string[] = [];
    const coordinator = createRedisCoordinator({ redis: createClient(), onWarning: (message) => void warnings.push(message) });
    await coordinator.close();
    const client = new PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.test/v1', fetch: (request) => server.fetch(request), coordinator });
    await client.listPets();
    expect(warnings).toEqual([]);
    expect(server.inspect().keys.k?.requests).toBe(1);
  });

  it('the coordinator used without a client to bind it is a ValidationError that says to pass it as the coordinator option', () => {
    const coordinator = createRedisCoordinator({ redis: createClient() });
    expect(() => coordinator.acquire({ throttle: true, leaseMs: 1_000 })).toThrow(ValidationError);
    expect(() => coordinator.changed()).toThrow("createRedisCoordinator(): pass it as the client's coordinator option; the client binds it to its API key.");
  });

  it('a node-redis client the app never connected is said once, and the client coordinates its own calls meanwhile', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const warnings: string[] = [];
    const coordinator = createRedisCoordinator({ redis: createClient(), onWarning: (message) => void warnings.push(message) });
    const client = new PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.test/v1', fetch: (request) => server.fetch(request), coordinator });
    await client.listPets();
    await client.listPets();
    expect(warnings).toEqual([
      '@animal-store/sdk: the node-redis client given to createRedisCoordinator() is not open (connect it: `await client.connect()`); until it is, rate limits are coordinated in this process only.',
    ]);
    expect(server.inspect().keys.k?.requests).toBe(2);
  });

  it('a node-redis client the app never connected: concurrent calls each go as soon as the one before is answered, none waits out its timeout (before: a slot released while another call was being refused woke nobody, and that call failed with ThrottledError after its timeout)', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'pro' } });
    const coordinator = createRedisCoordinator({ redis: createClient(), onWarning: () => {} });
    const client = new PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.test/v1', fetch: (request) => server.fetch(request), coordinator, timeout: 1_000, maxRetryDelay: 0 });
    await client.listPets();
    const started = performance.now();
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => client.listPets().then(() => 'ok', (error: Error) => error.name)));
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it("coordinator.close() takes its listeners off the app's node-redis client: coordinators made and closed one after another leave none behind (before: two each, which kept the coordinator and its state alive with the client)", async () => {
    const redis = createClient();
    const before = [redis.listenerCount('end'), redis.listenerCount('ready')];
    for (let i = 0; i < 20; i++) await createRedisCoordinator({ redis }).close();
    expect([redis.listenerCount('end'), redis.listenerCount('ready')]).toEqual(before);
  });

  it('bound without a warn of the client\'s and given no onWarning, the coordinator warns on the console', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const coordinator = createRedisCoordinator({ redis: createClient() }).bind({ apiKey: 'k', baseUrl: 'https://petstore.test/v1/' });
      expect(await coordinator.acquire({ throttle: true, leaseMs: 1_000 })).toMatchObject({ kind: 'granted' });
      expect(warn.mock.calls).toEqual([[expect.stringMatching(/^@animal-store\/sdk: the node-redis client given to createRedisCoordinator\(\) is not open/)]]);
    } finally {
      warn.mockRestore();
    }
  });

  it('a node-redis client closed after use (its end event) is quietly not used: no warning', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const warnings: string[] = [];
    // What the coordinator reads of node-redis: the app connected it, then closed it ('end').
    const ends: (() => void)[] = [];
    const redis = { isOpen: true, evalSha: async () => {}, eval: async () => {}, duplicate: () => { throw new Error('unused'); }, on: (_: 'end', listener: () => void) => void ends.push(listener) };
    const coordinator = createRedisCoordinator({ redis: redis as never, onWarning: (message) => void warnings.push(message) });
    const client = new PetStoreClient({ apiKey: 'k', baseUrl: 'https://petstore.test/v1', fetch: (request) => server.fetch(request), coordinator });
    redis.isOpen = false;
    for (const end of ends) end();
    await client.listPets();
    expect(warnings).toEqual([]);
    expect(server.inspect().keys.k?.requests).toBe(1);
  });
});
