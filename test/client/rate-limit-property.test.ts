/**
 * A property over schedules of calls against the reference server: whatever mix of calls (list
 * and create, from three clients sharing one coordinator, with their own `maxRetries`), answers
 * held in transit and out of order (a wrapper `fetch` and the server's latency fault), plans
 * whose daily quota binds before the minute's, a server clock that is ahead or behind and jumps
 * ahead, and this machine's clock stepping forward, the server never answers a 429, never counts
 * a request inside a Retry-After window, never bans the key, every call settles and every
 * failure is a PetStoreError. Every answer reaches the client here (timeouts outlast every
 * delay): an answer lost to a timeout or an abort can hide a 429 the client could not know of.
 *
 * Fake time and a fixed seed (the client's backoff jitter aside), so a run is fast; a failure
 * prints fast-check's counterexample with the seed and path to replay it.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryCoordinator, PetStoreClient, PetStoreError } from '@animal-store/sdk';
import { createReferenceServer } from '@animal-store/sdk/server';
import { settle } from './harness.js';

/** Fixed, so a failure repeats; change it only to explore, and keep one that found a bug. */
const SEED = 20261124;
const START = Date.UTC(2026, 5, 1, 0, 0, 0);

/** One call: when it starts, on which client, and how long its requests and answers are held in transit. */
interface Call {
  atMs: number;
  client: number;
  op: 'list' | 'create';
  maxRetries?: number;
  requestDelayMs?: number;
  answerDelayMs?: number;
}

const callArb: fc.Arbitrary<Call> = fc.record(
  {
    atMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 150_000 })),
    client: fc.integer({ min: 0, max: 2 }),
    op: fc.constantFrom('list' as const, 'list' as const, 'create' as const),
    maxRetries: fc.integer({ min: 0, max: 4 }),
    requestDelayMs: fc.integer({ min: 0, max: 4_000 }),
    answerDelayMs: fc.integer({ min: 0, max: 4_000 }),
  },
  { requiredKeys: ['atMs', 'client', 'op'] },
);

/**
 * A clock moving ahead by `ms` after `atMs` of the run; often by nearly a minute, which brings a
 * window of the server's to end within seconds of one the client knows.
 */
const jumpArb = fc.record({ atMs: fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 2_000 })), ms: fc.oneof(fc.integer({ min: 1_000, max: 120_000 }), fc.integer({ min: 56_000, max: 60_000 })) });

describe('a property over schedules against the reference server', () => {
  beforeEach(() => void vi.useFakeTimers({ now: START }));
  afterEach(() => void vi.useRealTimers());

  it('clients sharing a coordinator with throttle on never meet a 429, never send inside a Retry-After window, are never banned, and every call settles with data or a PetStoreError', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          calls: fc.array(callArb, { minLength: 1, maxLength: 40 }),
          perMinute: fc.integer({ min: 1, max: 8 }),
          perDay: fc.integer({ min: 3, max: 40 }),
          intoMinuteMs: fc.integer({ min: 0, max: 59_999 }),
          skewMs: fc.integer({ min: -300_000, max: 300_000 }),
          steps: fc.array(jumpArb, { maxLength: 2 }),
          serverJumps: fc.array(jumpArb, { maxLength: 2 }),
          latency: fc.boolean(),
          rateLimitHeaders: fc.constantFrom('x' as const, 'ietf' as const),
          maxRetryDelays: fc.tuple(fc.constant(60_000), fc.constantFrom(0, 5_000, 60_000), fc.constantFrom(0, 5_000, 60_000)),
        }),
        async ({ calls, perMinute, perDay, intoMinuteMs, skewMs, steps, serverJumps, latency, rateLimitHeaders, maxRetryDelays }) => {
          vi.clearAllTimers();
          vi.setSystemTime(START + intoMinuteMs);
          const server = createReferenceServer({
            apiKeys: { k: { perMinute, perDay } },
            now: () => Date.now() + skewMs,
            rateLimitHeaders,
            ...(latency ? { faults: { rate: 0.3, kinds: ['latency'], latencyMs: 2_500, seed: 3 } } : {}),
          });
          const hold = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));
          const coordinator = createMemoryCoordinator();
          const clients = maxRetryDelays.map(
            (maxRetryDelay) =>
              new PetStoreClient({
                apiKey: 'k',
                baseUrl: 'https://petstore.test/v1',
                coordinator,
                maxRetryDelay,
                timeout: 30_000,
                logLevel: 'off',
                fetch: async (request: Request) => {
                  const call = calls[Number(request.headers.get('x-call'))];
                  await hold(call?.requestDelayMs);
                  const response = await server.fetch(request);
                  await hold(call?.answerDelayMs);
                  return response;
                },
              }),
          );
          for (const { atMs, ms } of steps) setTimeout(() => vi.setSystemTime(Date.now() + ms), atMs);
          for (const { atMs, ms } of serverJumps) setTimeout(() => server.clock.advance(ms), atMs);
          const settled = Promise.allSettled(
            calls.map(async (call, n) => {
              await hold(call.atMs);
              const options = { maxRetries: call.maxRetries, headers: { 'x-call': String(n) } };
              const client = clients[call.client]!;
              return call.op === 'list' ? client.listPets({ limit: 1 }, options) : client.createPet({ name: 'Rex', categoryId: 1 }, options);
            }),
          );
          const outcome = await settle(settled, { stepMs: 200, maxSteps: 3_000 });
          if (outcome.status !== 'fulfilled') throw new Error('allSettled rejected');
          for (const result of outcome.value) if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(PetStoreError);
          const stats = server.inspect().keys.k;
          expect(stats ?? { rateLimited: 0, insideRetryAfter: 0, bans: 0 }).toMatchObject({ rateLimited: 0, insideRetryAfter: 0, bans: 0 });
        },
      ),
      { numRuns: 200, seed: SEED },
    );
  }, 120_000);
});
