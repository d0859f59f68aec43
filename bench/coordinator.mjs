/**
 * Coordinator latency: what sharing the rate limit through Redis adds to a call. The same client
 * calls (in-process reference server, so only the client and the coordinator are measured)
 * one at a time, with the default in-memory coordinator and with the Redis coordinator on a
 * redis-server on loopback. Target: at most 1 ms added per call, median.
 */
import { spawn } from 'node:child_process';
import { createClient } from 'redis';
import { freePort } from '../test/support/ports.ts';
import { PROGRAMS, programPath } from '../test/support/programs.ts';
import { printTable, round, saveResult, verdict } from './lib.mjs';

const { PetStoreClient } = await import('../dist/index.js');
const { createReferenceServer } = await import('../dist/server.js');
const { createRedisCoordinator } = await import('../dist/redis.js');

const CALLS = 2_000;
const ROUNDS = 5;
const TARGET_MS = 1;
const KEY = 'bench-enterprise';

/** Median milliseconds per call of `client`, one call at a time. */
async function perCall(client) {
  const times = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await client.listPets({ limit: 1 });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

export async function run() {
  const port = await freePort();
  const redisServer = spawn(programPath(PROGRAMS.redis), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  try {
    let redis;
    for (let attempt = 0; !redis && attempt < 50; attempt++) {
      redis = await createClient({ url: `redis://127.0.0.1:${port}` }).on('error', () => {}).connect().catch(() => new Promise((resolve) => setTimeout(() => resolve(undefined), 100)));
    }
    const server = createReferenceServer({ apiKeys: { [KEY]: { perMinute: 1e12, perDay: 1e12 } }, pets: 10 });
    const base = { apiKey: KEY, baseUrl: 'http://bench.test/v1', fetch: (request) => server.fetch(request) };
    const memory = new PetStoreClient(base);
    const shared = new PetStoreClient({ ...base, coordinator: createRedisCoordinator({ redis, prefix: `bench-${port}` }) });
    await perCall(memory);
    await perCall(shared);
    const added = [];
    let memoryMs = 0;
    let redisMs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      memoryMs = await perCall(memory);
      redisMs = await perCall(shared);
      added.push(redisMs - memoryMs);
    }
    added.sort((a, b) => a - b);
    const median = added[added.length >> 1];
    printTable(`Coordinator latency: listPets({ limit: 1 }) one at a time, in-process server, ${ROUNDS}×${CALLS} calls`, [
      { coordinator: 'in-memory (default)', 'median ms/call': round(memoryMs) },
      { coordinator: 'Redis, loopback', 'median ms/call': round(redisMs) },
    ], [verdict(`Redis adds ≤ ${TARGET_MS} ms per call (median)`, `${round(median)} ms`, median <= TARGET_MS)]);
    await redis.close();
    return saveResult('coordinator', { memoryMs, redisMs, addedMs: median, targetMs: TARGET_MS, pass: median <= TARGET_MS });
  } finally {
    redisServer.kill('SIGKILL');
  }
}
