import { runInNewContext } from 'node:vm';
import { describe, expect, it, vi } from 'vitest';
import { AbortError, createMemoryCoordinator, PetStoreError, ThrottledError, type AcquireDecision, type RateLimitCoordinator, type RateLimitState } from '@animal-store/sdk';
import { createReferenceServer } from '@animal-store/sdk/server';
import { failure, run, settle, START, useReferenceServer } from './harness.js';
import { answering429s } from '../support/answers.js';

const { server, client } = useReferenceServer();

/** A user-written coordinator: the in-memory one, with some methods replaced. */
function memoryWith(overrides: Partial<RateLimitCoordinator>): RateLimitCoordinator {
  const memory = createMemoryCoordinator();
  return {
    getSnapshot: memory.getSnapshot,
    subscribe: memory.subscribe,
    acquire: (request) => memory.acquire(request),
    observe: (observation) => memory.observe(observation),
    changed: (signal) => memory.changed(signal),
    ...overrides,
  };
}

/** Grants and releases unanswered `count` probes of the unknown budget in a row, each after the wait the last one set. */
async function loseProbes(coordinator: RateLimitCoordinator, count: number) {
  for (let lost = 0; lost < count; lost++) {
    const decision = await coordinator.acquire({ throttle: true, leaseMs: 5_000 });
    if (decision.kind !== 'granted') throw new Error(`probe ${lost} not granted: ${decision.kind}`);
    decision.release(true);
    if (lost < count - 1) await vi.advanceTimersByTimeAsync(500 * 2 ** lost);
  }
}

/**
 * 50 calls (a createPet in four) from two clients sharing a coordinator, on a key of `perMinute`,
 * where 40% of answers come after 3 s and the calls' timeout is 1 s; returns the server, settled.
 */
async function slowStorm(perMinute: number) {
  const slow = createReferenceServer({ apiKeys: { 'key-ent': { perMinute, perDay: 1_000 } }, faults: { rate: 0.4, kinds: ['latency'], latencyMs: 3_000, seed: 1 } });
  const coordinator = createMemoryCoordinator();
  const [a, b] = [0, 1].map(() => client({ apiKey: 'key-ent', timeout: 1_000, maxRetries: 3, coordinator, fetch: (request) => slow.fetch(request) }));
  const calls = Array.from({ length: 50 }, (_, i) => {
    const c = i % 2 ? b! : a!;
    return i % 4 === 0 ? c.createPet({ name: `pet-${i}`, categoryId: 1 }) : c.listPets({ limit: 1 });
  });
  const outcomes = await settle(Promise.allSettled(calls), { stepMs: 500, maxSteps: 2_000 });
  if (outcomes.status !== 'fulfilled') throw new Error('the storm did not settle');
  return slow;
}

describe('coordinated rate limiting', () => {
  it('every answer arriving after the calls\' timeout: the unanswered probes of the unknown budget back off, so the key is not banned though its budget is never learned (before: a probe per timeout and retry, 15 requests in the minute of a 5-a-minute key, a ban)', async () => {
    const slow = createReferenceServer({ apiKeys: { 'key-ent': { perMinute: 5, perDay: 1_000 } }, faults: { rate: 1, kinds: ['latency'], latencyMs: 1_200 } });
    const lost = client({ apiKey: 'key-ent', timeout: 1_000, fetch: (request) => slow.fetch(request) });
    const outcomes = await settle(Promise.allSettled(Array.from({ length: 5 }, () => lost.listPets({ limit: 1 }))), { stepMs: 250, maxSteps: 2_000 });
    if (outcomes.status !== 'fulfilled') throw new Error('the calls did not settle');
    for (const r of outcomes.value) expect(r.status === 'rejected' && r.reason).toBeInstanceOf(PetStoreError);
    const stats = slow.inspect().keys['key-ent']!;
    expect(stats.bans).toBe(0);
    // The first minute holds 7 probes (0, 1.5, 3.5, 6.5, 11.5, 20.5 and 37.5 s): the sixth is a 429, the seventh comes inside its window.
    expect(stats.insideRetryAfter).toBeLessThanOrEqual(1);
  });

  it('only probes lost in a row hold the next probe back: requests of a known window that time out after its reset do not, and any answer ends the wait (before: 8 timeouts across a minute boundary pushed the next probe a minute away)', () => {
    const coordinator = createMemoryCoordinator();
    const request = { throttle: true, leaseMs: 5_000 };
    const grant = () => {
      const decision = coordinator.acquire(request);
      if (!('kind' in decision) || decision.kind !== 'granted') throw new Error(`not granted: ${JSON.stringify(decision)}`);
      return decision;
    };
    coordinator.observe({ status: 200, budget: { limit: 60, remaining: 50, resetInMs: 100 }, blockForMs: undefined, banned: false });
    const sent = Array.from({ length: 8 }, grant);
    vi.advanceTimersByTime(200); // the window resets while they are in flight
    for (const slot of sent) slot.release(true);
    // The next request is a probe, and goes at once.
    const probe = grant();
    probe.release(true);
    expect(coordinator.acquire(request)).toEqual({ kind: 'lost', waitMs: 500 });
    vi.advanceTimersByTime(500);
    grant().release(true);
    expect(coordinator.acquire(request)).toEqual({ kind: 'lost', waitMs: 1_000 });
    // An answer of any kind (a bare 503 here) says answers come: the next probe goes at once.
    coordinator.observe({ status: 503, budget: undefined, blockForMs: undefined, banned: false });
    expect(grant()).toMatchObject({ kind: 'granted' });
  });

  it('storm: 200 concurrent calls on a Free-plan key all settle, none is sent inside a Retry-After window, and the key is not banned', async () => {
    const free = client({ apiKey: 'key-free' });
    const calls = Array.from({ length: 200 }, () => free.listPets({ limit: 1 }));
    const outcomes = await settle(Promise.allSettled(calls), { stepMs: 1_000, maxSteps: 600 });
    if (outcomes.status !== 'fulfilled') throw new Error('the storm did not settle');
    const results = outcomes.value;
    const served = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    // 60 per minute: one window now and two more reached within maxRetries (2) waits of at most
    // maxRetryDelay (60 s) each; the rest are refused without being sent.
    expect(served).toHaveLength(180);
    expect(refused).toHaveLength(20);
    for (const r of refused) expect(r.reason).toBeInstanceOf(ThrottledError);
    const stats = server.inspect().keys['key-free']!;
    expect(stats).toEqual({ requests: 180, rateLimited: 0, insideRetryAfter: 0, bans: 0 });
  });

  it.each([
    ['5 s ahead', 5_000],
    ['30 s ahead', 30_000],
    ['30 s back', -30_000],
  ])('the server\'s clock jumping %s mid-window: a storm afterwards keeps to the budget the server counts, and the key is not banned', async (_, jumpMs) => {
    // Before: an answer whose window ends sooner than the one already known was ignored as a late
    // answer of an old window, so the known remaining was spent again and again (110 requests,
    // 49 of them inside a Retry-After window, a ban).
    const free = client({ apiKey: 'key-free' });
    await settle(Promise.all(Array.from({ length: 10 }, () => free.listPets({ limit: 1 }))));
    if (jumpMs > 0) server.clock.advance(jumpMs);
    else server.clock.set(Date.now() + jumpMs);
    const outcomes = await settle(Promise.allSettled(Array.from({ length: 200 }, () => free.listPets({ limit: 1 }))), { stepMs: 1_000, maxSteps: 600 });
    server.clock.set(Date.now()); // reset() leaves the clock where a test put it
    if (outcomes.status !== 'fulfilled') throw new Error('the storm did not settle');
    for (const r of outcomes.value) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ThrottledError);
    expect(server.inspect().keys['key-free']).toMatchObject({ insideRetryAfter: 0, bans: 0 });
  });

  it('the server\'s clock jumping 58 s ahead while a call waits for the reset: the window its next answer announces, ending less than 2 s after the one that ended, is read as a new window, and its spent budget holds the next call back (before: taken for a late answer of the ended window, so the next call probed into a 429)', async () => {
    const one = createReferenceServer({ apiKeys: { 'key-one': { perMinute: 1, perDay: 100 } }, pets: 3 });
    const single = client({ apiKey: 'key-one', fetch: (request) => one.fetch(request) });
    expect(await run(single.listPets({ limit: 1 }))).toHaveLength(1);
    // The client waits for the reset at 0:01:00; meanwhile the server's clock moves 58 s ahead, so
    // at that reset it reads 0:01:58, and its answer announces a spent minute ending at 0:02:00.
    one.clock.advance(58_000);
    const outcomes = await settle(Promise.allSettled([single.listPets({ limit: 1 }), single.listPets({ limit: 1 })]), { stepMs: 1_000, maxSteps: 600 });
    if (outcomes.status !== 'fulfilled') throw new Error('the calls did not settle');
    expect(outcomes.value.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(one.inspect().keys['key-one']).toEqual({ requests: 3, rateLimited: 0, insideRetryAfter: 0, bans: 0 });
  });

  it('a ban that ends 1.5 s before a minute does: the minute the next answer announces is read as the new window, and once its budget is spent the next call waits for its reset (before: taken for a late answer of the ban\'s window, and the third call met a 429)', async () => {
    // Banned at the first strike, at 0:00:10, until 0:01:58.5.
    const strict = createReferenceServer({ apiKeys: { 'key-two': { perMinute: 2, perDay: 100 } }, pets: 3, banThreshold: 0, banDurationMs: 108_500 });
    const coordinator = createMemoryCoordinator();
    const fetch = (request: Request) => strict.fetch(request);
    const careless = client({ apiKey: 'key-two', throttle: false, maxRetries: 0, coordinator, fetch });
    await settle(Promise.allSettled(Array.from({ length: 4 }, () => careless.listPets({ limit: 1 }))));
    expect(strict.inspect().keys['key-two']).toEqual({ requests: 4, rateLimited: 2, insideRetryAfter: 1, bans: 1 });
    const patient = client({ apiKey: 'key-two', maxRetryDelay: 120_000, coordinator, fetch });
    const outcomes = await settle(Promise.allSettled(Array.from({ length: 3 }, () => patient.listPets({ limit: 1 }))), { stepMs: 500, maxSteps: 1_000 });
    if (outcomes.status !== 'fulfilled') throw new Error('the calls did not settle');
    expect(outcomes.value.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(strict.inspect().keys['key-two']).toEqual({ requests: 7, rateLimited: 2, insideRetryAfter: 1, bans: 1 });
  });

  it('a 503 without rate-limit headers as the first answer (an injected fault) does not let a storm loose: the key is not banned', async () => {
    // Before: a header-less answer of any status made the throttle step aside, so the 199 calls
    // waiting for the probe went out at once (132 429s, 131 inside a Retry-After window, a ban).
    const faulty = createReferenceServer({ apiKeys: { 'key-free': 'free' }, faults: { rate: 0.05, kinds: ['error'], seed: 7 } });
    const free = client({ apiKey: 'key-free', fetch: (request) => faulty.fetch(request) });
    const outcomes = await settle(Promise.allSettled(Array.from({ length: 200 }, () => free.listPets({ limit: 1 }))), { stepMs: 1_000, maxSteps: 600 });
    if (outcomes.status !== 'fulfilled') throw new Error('the storm did not settle');
    expect(faulty.requests()[0]).toMatchObject({ status: 503 });
    expect(faulty.inspect().keys['key-free']).toMatchObject({ insideRetryAfter: 0, bans: 0 });
  });

  it.each([408, 429, 500])('a bare %i (a proxy\'s, a load balancer\'s) as the first answer does not make the throttle step aside: ten calls on a 5-per-minute key keep to the budget, and none meets a 429', async (status) => {
    let answered = 0;
    // Answers take 100 ms, so calls that a throttle stepping aside let out would all be in flight at once.
    const fetch = async (request: Request) => {
      if (answered++ === 0) return new Response(null, { status });
      await new Promise((resolve) => setTimeout(resolve, 100));
      return server.fetch(request);
    };
    const ent = client({ apiKey: 'key-ent', fetch });
    const outcomes = await settle(Promise.allSettled(Array.from({ length: 10 }, () => ent.listPets({ limit: 1 }))), { stepMs: 1_000, maxSteps: 600 });
    expect(outcomes.status === 'fulfilled' && outcomes.value.map((outcome) => outcome.status)).toEqual(Array(10).fill('fulfilled'));
    expect(server.inspect().keys['key-ent']).toMatchObject({ requests: 10, rateLimited: 0 });
  });

  it('requests that time out while the server still counts them spend the budget even after faster answers that did not count them yet: two clients sharing a coordinator are not banned', async () => {
    // Before: a timed-out request took one from the known remaining, but the next answer (of a
    // request sent later, handled before the slow one) replaced it with the server's count, which
    // did not hold the slow one yet; the budget was spent again (17 429s, 16 inside a Retry-After
    // window, a ban).
    const slow = await slowStorm(60);
    expect(slow.requests().filter((r) => r.fault === 'latency').length).toBeGreaterThan(0);
    expect(slow.inspect().keys['key-ent']).toMatchObject({ rateLimited: 0, insideRetryAfter: 0, bans: 0 });
  });

  it('probes that time out before a new window\'s budget is known are counted in that window once it is announced: windows resetting mid-storm send nothing into a 429', async () => {
    // Before: a probe released unanswered while no window ran took nothing from any budget; two
    // probes timed out at 2:00 and 2:01, the third announced the window at 2:02, its remaining
    // was sent in full, and the two slow probes, counted on arrival, got 429s (one a strike).
    const slow = await slowStorm(5);
    expect(new Set(slow.requests().map((r) => r.time.slice(0, 16))).size, 'the storm spans several windows').toBeGreaterThan(2);
    expect(slow.inspect().keys['key-ent']).toMatchObject({ rateLimited: 0, insideRetryAfter: 0, bans: 0 });
  });

  it('an injected 503 that announces an untouched Free-plan minute (60 left) as the first answer on a 5-per-minute key does not let a storm loose: the key is not banned', async () => {
    // Before: the 503's rate-limit headers (an untouched Free-plan minute: the server had not acted
    // on the request) were taken as the key's budget, so the calls waiting for the probe went out
    // at once into a 5-per-minute key (24 429s, 23 inside a Retry-After window, a ban).
    const faulty = createReferenceServer({ apiKeys: { 'key-ent': { perMinute: 5, perDay: 100 } }, faults: { rate: 0.1, kinds: ['error'], seed: 7 } });
    const ent = client({ apiKey: 'key-ent', fetch: (request) => faulty.fetch(request) });
    const outcomes = await settle(Promise.allSettled(Array.from({ length: 40 }, () => ent.listPets({ limit: 1 }))), { stepMs: 1_000, maxSteps: 600 });
    if (outcomes.status !== 'fulfilled') throw new Error('the storm did not settle');
    expect(faulty.requests()[0]).toMatchObject({ status: 503 });
    expect(faulty.inspect().keys['key-ent']).toMatchObject({ rateLimited: 0, insideRetryAfter: 0, bans: 0 });
  });

  it('requests that time out while the server still counts them (answers slower than the timeout) spend the budget: a storm is not banned', async () => {
    // Before: a timed-out request gave its slot back as if it had never been sent, so the calls
    // after it spent the same budget again; the server, counting the slow ones late, answered
    // them 429 inside the window (7 strikes, a ban).
    const slow = createReferenceServer({ apiKeys: { 'key-ent': { perMinute: 20, perDay: 1_000 } }, faults: { rate: 0.3, kinds: ['latency'], latencyMs: 1_500, seed: 2 } });
    const ent = client({ apiKey: 'key-ent', timeout: 1_000, fetch: (request) => slow.fetch(request) });
    const outcomes = await settle(Promise.allSettled(Array.from({ length: 80 }, () => ent.listPets({ limit: 1 }))), { stepMs: 250, maxSteps: 3_000 });
    if (outcomes.status !== 'fulfilled') throw new Error('the storm did not settle');
    expect(slow.requests().filter((r) => r.fault === 'latency').length).toBeGreaterThan(0);
    expect(slow.inspect().keys['key-ent']).toMatchObject({ insideRetryAfter: 0, bans: 0 });
  });

  it('clients of different API keys sharing one createMemoryCoordinator() keep a budget each: one key spending its budget neither refuses the other\'s calls nor shows in its rateLimit (before: the Pro key was refused, budget_spent, on the 5-per-minute key\'s window)', async () => {
    const coordinator = createMemoryCoordinator();
    const ent = client({ apiKey: 'key-ent', coordinator, maxRetryDelay: 0 });
    const pro = client({ apiKey: 'key-pro', coordinator, maxRetryDelay: 0 });
    for (let i = 0; i < 5; i++) expect(await run(ent.listPets({ limit: 1 }))).toHaveLength(1);
    expect(await run(pro.listPets({ limit: 1 }))).toHaveLength(1);
    expect(pro.rateLimit.getSnapshot()).toMatchObject({ limit: 300, remaining: 299 });
    expect(ent.rateLimit.getSnapshot()).toMatchObject({ limit: 5, remaining: 0 });
    expect(await run(ent.listPets({ limit: 1 }))).toMatchObject({ name: 'ThrottledError', code: 'budget_spent' });
    // Clients of the same key still share it, the coordinator read directly included.
    const ent2 = client({ apiKey: 'key-ent', coordinator, maxRetryDelay: 0 });
    expect(await run(ent2.listPets({ limit: 1 }))).toMatchObject({ name: 'ThrottledError', code: 'budget_spent' });
    expect(coordinator.getSnapshot()).toBe(ent.rateLimit.getSnapshot());
    expect(server.inspect().keys['key-ent']).toMatchObject({ requests: 5, rateLimited: 0 });
  });

  it('throttle off: a burst of 12 calls on a budget of 5 left gets the key banned (5 served, one 429, 6 more inside its window), as the retries guide warns', async () => {
    const ent = client({ apiKey: 'key-ent', throttle: false });
    await settle(Promise.allSettled(Array.from({ length: 12 }, () => ent.listPets({ limit: 1 }))), { stepMs: 1_000, maxSteps: 600 });
    expect(server.inspect().keys['key-ent']).toEqual({ requests: 12, rateLimited: 7, insideRetryAfter: 6, bans: 1 });
  });

  it('after a 429, every call of the client, new or retrying, waits out the same Retry-After window (throttle off)', async () => {
    const ent = client({ apiKey: 'key-ent', throttle: false });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    const retrying = ent.listPets({ limit: 1 });
    await vi.advanceTimersByTimeAsync(0);
    expect(server.inspect().keys['key-ent']!.rateLimited).toBe(1);
    expect(ent.rateLimit.getSnapshot()?.blockedUntil?.getTime()).toBeGreaterThanOrEqual(START - 10_000 + 60_000);
    const fresh = Array.from({ length: 10 }, () => ent.listPets({ limit: 1 }));
    const outcome = await settle(Promise.allSettled([retrying, ...fresh]), { stepMs: 1_000, maxSteps: 200 });
    if (outcome.status !== 'fulfilled') throw new Error('did not settle');
    expect(outcome.value.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(5);
    expect(server.inspect().keys['key-ent']).toMatchObject({ insideRetryAfter: 0, bans: 0 });
  });

  it('a plain 429 whose window ends after a running ban\'s leaves the ban\'s flag until the ban ends: refusals say api_key_banned, then rate_limited (before: rate_limited at once)', async () => {
    // Two requests in flight (throttle off): the ban's answer comes first, a plain 429 that ends later after it.
    const { fetch, sent } = answering429s(
      [
        { code: 'api_key_banned', retryAfter: '600' },
        { code: 'rate_limited', retryAfter: '900' },
      ],
      10,
    );
    const c = client({ fetch, throttle: false });
    const first = await settle(Promise.allSettled([c.listPets(), c.listPets()]));
    expect(first.status === 'fulfilled' && first.value.map((r) => r.status === 'rejected' && (r.reason as { code: string }).code)).toEqual(['api_key_banned', 'rate_limited']);
    const banned = await run(c.listPets());
    expect(banned).toMatchObject({ name: 'ThrottledError', code: 'api_key_banned' });
    // A higher plan does not lift a ban: the refusal does not suggest one.
    expect((banned as Error).message).toMatch(/the API key is banned until .*Retry later, raise maxRetryDelay\.$/);
    await vi.advanceTimersByTimeAsync(600_000);
    const limited = await run(c.listPets());
    expect(limited).toMatchObject({ name: 'ThrottledError', code: 'rate_limited' });
    expect((limited as Error).message).toMatch(/Retry later, raise maxRetryDelay, or use a plan with a higher limit\.$/);
    expect(sent()).toBe(2);
  });

  it('throttle: once the budget is spent, a call waits for the reset instead of spending a request on a 429', async () => {
    const ent = client({ apiKey: 'key-ent' });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    expect(ent.rateLimit.getSnapshot()?.remaining).toBe(0);
    const outcome = await settle(ent.listPets({ limit: 1 }));
    expect(outcome.status).toBe('fulfilled');
    expect(Date.now()).toBeGreaterThanOrEqual(START - 10_000 + 60_000);
    expect(server.inspect().keys['key-ent']).toMatchObject({ requests: 6, rateLimited: 0 });
  });

  it('throttle: a wait for the reset longer than maxRetryDelay throws ThrottledError without sending', async () => {
    const ent = client({ apiKey: 'key-ent', maxRetryDelay: 10_000 });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    const outcome = await settle(ent.listPets({ limit: 1 }));
    expect(outcome.status === 'rejected' && outcome.reason).toBeInstanceOf(ThrottledError);
    expect((outcome as { reason: ThrottledError }).reason.code).toBe('budget_spent');
    expect('status' in (outcome as { reason: ThrottledError }).reason).toBe(false);
    expect((outcome as { reason: ThrottledError }).reason.retryAfterMs).toBeGreaterThan(45_000);
    expect(server.inspect().keys['key-ent']!.requests).toBe(5);
  });

  it("a ThrottledError's retryAt is the instant the spent window resets, on this machine's clock", async () => {
    const ent = client({ apiKey: 'key-ent', maxRetryDelay: 10_000 });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    const error = await failure(ent.listPets({ limit: 1 }), ThrottledError);
    // The minute START falls in ends 50 s after it.
    expect(error.retryAt).toEqual(new Date(START + 50_000));
  });

  it('a ThrottledError states maxRetryDelay as given (1500 ms, not "2 s"), and when the call has no waits left it says to raise maxRetries', async () => {
    const patient = client({ apiKey: 'key-ent', maxRetryDelay: 1_500 });
    for (let i = 0; i < 5; i++) await settle(patient.listPets({ limit: 1 }));
    const tooLong = await settle(patient.listPets({ limit: 1 }));
    expect(tooLong.status === 'rejected' && tooLong.reason).toBeInstanceOf(ThrottledError);
    expect((tooLong as { reason: Error }).reason.message).toMatch(/would exceed maxRetryDelay \(1500 ms\)/);
    server.reset();
    const waiting = client({ apiKey: 'key-ent' });
    for (let i = 0; i < 5; i++) await settle(waiting.listPets({ limit: 1 }));
    const noWaits = await settle(waiting.listPets({ limit: 1 }, { maxRetries: 0 }));
    expect(noWaits.status === 'rejected' && noWaits.reason).toBeInstanceOf(ThrottledError);
    expect((noWaits as { reason: Error }).reason.message).toMatch(/raise maxRetries/);
    expect((noWaits as { reason: Error }).reason.message).not.toMatch(/raise maxRetryDelay/);
  });

  it('a call with maxRetries: 0 that a 429 holds back is refused saying maxRetries: 0 lets it wait for none, not that it already waited', async () => {
    const ent = client({ apiKey: 'key-ent' });
    await settle(ent.listPets({}, { headers: { Prefer: 'code=429' }, maxRetries: 0 }));
    const error = await failure(ent.listOrders({ maxRetries: 0 }), ThrottledError);
    expect(error.code).toBe('rate_limited');
    expect(error.message).toMatch(/a 429 asked every client to wait until .*, and maxRetries: 0 lets the call wait for none\. Retry later, raise maxRetries/);
    expect(error.message).not.toMatch(/already waited/);
    // Only the forced 429 reached the server: listOrders was not sent.
    expect(server.requests().map((request) => request.path)).toEqual(['/v1/pets']);
  });

  it('throttle: a reset time in the past never blocks', async () => {
    const ent = client({ apiKey: 'key-ent', maxRetryDelay: 0 });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    // Time passes (a step of the clock alone would not end the window: see the clock's tests below).
    await vi.advanceTimersByTimeAsync(START + 60_000 - Date.now());
    const outcome = await settle(ent.listPets({ limit: 1 }));
    expect(outcome.status).toBe('fulfilled');
  });

  it('a call waiting behind a request in flight waits at most its timeout (or maxRetryDelay when longer), then is a ThrottledError without sending', async () => {
    let sent = 0;
    const never = () => ((sent++), new Promise<Response>(() => {}));
    // The request in flight has a longer timeout of its own than the call waiting behind it.
    const slow = client({ fetch: never, timeout: 2_000, maxRetryDelay: 1_000 });
    void slow.listPets({}, { timeout: 30_000 }).catch(() => {});
    const outcome = await settle(slow.listPets(), { stepMs: 100 });
    expect(outcome).toEqual({ status: 'rejected', reason: expect.any(ThrottledError) });
    const error = (outcome as { reason: ThrottledError }).reason;
    expect(error).toMatchObject({ code: 'budget_spent' });
    expect(error.message).toMatch(/requests in flight .* none of them answered within 2 s \(the call's timeout\)/);
    expect(error.retryAfterMs).toBeGreaterThan(0);
    expect(Date.now() - START).toBe(2_000);
    expect(sent).toBe(1);
    const patient = client({ fetch: never, timeout: 1_000, maxRetryDelay: 3_000 });
    void patient.listPets({}, { timeout: 30_000 }).catch(() => {});
    const start = Date.now();
    expect(await settle(patient.listPets(), { stepMs: 100 })).toEqual({ status: 'rejected', reason: expect.any(ThrottledError) });
    expect(Date.now() - start).toBe(3_000);
  });

  it('after probes of the unknown budget went unanswered, a call whose next probe waits longer than it may wait for answers (its timeout, or maxRetryDelay when longer) fails at once, without sending, with a ThrottledError that says the probes went unanswered (before: it waited maxRetryDelay out, then blamed requests in flight)', async () => {
    const coordinator = createMemoryCoordinator();
    await loseProbes(coordinator, 4); // the next probe waits 4 s
    let sent = 0;
    const impatient = client({ coordinator, timeout: 1_000, maxRetryDelay: 2_000, fetch: (request) => ((sent++), server.fetch(request)) });
    const waits: unknown[] = [];
    impatient.on('wait', (event) => void waits.push(event));
    // Settled without fake time passing: refused at once.
    const outcome = await settle(impatient.listPets({ limit: 1 }), { stepMs: 0, maxSteps: 100 });
    expect(outcome).toEqual({ status: 'rejected', reason: expect.any(ThrottledError) });
    const error = (outcome as { reason: ThrottledError }).reason;
    expect(error).toMatchObject({ code: 'budget_spent', retryAfterMs: 4_000 });
    expect(error.message).toMatch(/^listPets \(GET \/pets\): not sent: the last requests probing the unknown rate-limit budget went unanswered \(timed out or dropped\), so the next probe waits until \S+Z, and waiting 4 s would exceed the 2 s a call waits for answers in all \(maxRetryDelay\)\. /);
    expect(error.message).toContain(`until ${new Date(Date.now() + 4_000).toISOString()},`);
    expect([sent, waits]).toEqual([0, []]);
  });

  it('after probes of the unknown budget went unanswered, a call whose next probe waits exactly as long as it may wait for answers waits it out, then probes and succeeds', async () => {
    const coordinator = createMemoryCoordinator();
    await loseProbes(coordinator, 4); // the next probe waits 4 s
    const start = Date.now();
    expect(await settle(client({ coordinator, timeout: 1_000, maxRetryDelay: 4_000 }).listPets({ limit: 1 }), { stepMs: 50 })).toMatchObject({ status: 'fulfilled' });
    expect(Date.now() - start).toBe(4_000);
  });

  it('after a probe of the unknown budget went unanswered, the next call waits out the probe\'s backoff, logged and emitted as a "lost" wait of that length, then probes and succeeds', async () => {
    const coordinator = createMemoryCoordinator();
    await loseProbes(coordinator, 1); // the next probe waits 0.5 s
    const lines: string[] = [];
    const logger = { error: () => {}, warn: () => {}, info: () => {}, debug: (line: string) => void lines.push(line) };
    const patient = client({ coordinator, logLevel: 'debug', logger });
    const waits: unknown[] = [];
    patient.on('wait', (event) => void waits.push(event));
    const start = Date.now();
    expect(await settle(patient.listPets({ limit: 1 }), { stepMs: 50 })).toMatchObject({ status: 'fulfilled' });
    expect(Date.now() - start).toBe(500);
    expect(waits).toEqual([expect.objectContaining({ operation: 'listPets', reason: 'lost', waitMs: 500, until: new Date(start + 500) })]);
    expect(lines[0]).toMatch(/^listPets \(GET \/pets\): waiting 500 ms until \S+Z \(the last requests probing the unknown rate-limit budget went unanswered: the next probe is held back\)\.$/);
  });

  it('with maxRetryDelay 0, a GET whose probe timed out is retried after the probe\'s half-second backoff, which is no rate-limit window (not refused as a ThrottledError in place of its TimeoutError)', async () => {
    let sent = 0;
    const hangFirst = (request: Request) => (++sent === 1 ? new Promise<Response>(() => {}) : server.fetch(request));
    const impatient = client({ fetch: hangFirst, timeout: 1_000, maxRetryDelay: 0 });
    expect(await settle(impatient.listPets({ limit: 1 }), { stepMs: 50 })).toMatchObject({ status: 'fulfilled' });
    expect(sent).toBe(2);
  });

  it('probes lost over and over (every request dropped) keep each call\'s waits for answers within its limit in all: 20 calls on default options all settle within a few minutes (not the last after 53 minutes)', async () => {
    let sent = 0;
    const dropped = async () => ((sent++), Promise.reject(new TypeError('fetch failed')));
    const c = client({ fetch: dropped });
    const outcome = await settle(Promise.allSettled(Array.from({ length: 20 }, () => c.listPets())), { stepMs: 1_000, maxSteps: 4_000 });
    expect(outcome.status).toBe('fulfilled');
    for (const r of (outcome as { value: PromiseSettledResult<unknown>[] }).value) expect(r.status === 'rejected' && r.reason).toBeInstanceOf(PetStoreError);
    // Three admissions a call (maxRetries 2), each waiting at most 60 s for answers.
    expect(Date.now() - START).toBeLessThanOrEqual(200_000);
    expect(sent).toBeLessThanOrEqual(60);
  });

  it('with maxRetryDelay 0, parallel first calls still wait for the probe\'s answer, and all succeed', async () => {
    const urls: string[] = [];
    // Answers take 200 ms: the calls after the first wait for its answer, which is no rate-limit window.
    const slowly = async (request: Request) => (urls.push(request.url), await new Promise((r) => setTimeout(r, 200)), server.fetch(request));
    const impatient = client({ fetch: slowly, maxRetryDelay: 0 });
    const outcome = await settle(Promise.all([impatient.listPets({ limit: 1 }), impatient.listPets({ limit: 1 }), impatient.listPets({ limit: 1 })]), { stepMs: 50 });
    expect(outcome).toEqual({ status: 'fulfilled', value: [expect.any(Array), expect.any(Array), expect.any(Array)] });
    expect(urls).toHaveLength(3);
    expect(Date.now() - START).toBe(400);
  });

  it('a coordinator of the user\'s own that answers an endless or NaN wait ends the call in a ThrottledError, never a RangeError or a hang', async () => {
    let sent = 0;
    const counting = (request: Request) => ((sent++), server.fetch(request));
    const endless = client({ fetch: counting, coordinator: memoryWith({ acquire: () => ({ kind: 'spent', waitMs: Infinity }) }) });
    expect(await run(endless.listPets())).toBeInstanceOf(ThrottledError);
    const nan = client({ fetch: counting, maxRetryDelay: 1_000, timeout: 1_000, coordinator: memoryWith({ acquire: () => ({ kind: 'busy', waitMs: Number.NaN }) }) });
    const outcome = await settle(nan.listPets(), { stepMs: 100, maxSteps: 50 });
    expect(outcome).toEqual({ status: 'rejected', reason: expect.any(ThrottledError) });
    expect(sent).toBe(0);
  });

  it('a coordinator of the user\'s own that holds calls back for a cause of its own says so in a busy decision\'s reason: the debug log and the ThrottledError tell it instead of requests in flight, the API key hidden', async () => {
    let sent = 0;
    const lines: string[] = [];
    const logger = { error: () => {}, warn: () => {}, info: () => {}, debug: (line: string) => void lines.push(line) };
    const reason = 'the lock service at https://locks.test/?token=key-pro does not answer';
    const held = client({
      fetch: (request) => (sent++, server.fetch(request)),
      logLevel: 'debug',
      logger,
      timeout: 1_000,
      maxRetryDelay: 0,
      coordinator: memoryWith({ acquire: () => ({ kind: 'busy', waitMs: 500, reason }) }),
    });
    const outcome = await settle(held.listPets({ limit: 1 }), { stepMs: 100, maxSteps: 50 });
    expect(outcome).toEqual({ status: 'rejected', reason: expect.any(ThrottledError) });
    const said = 'the lock service at https://locks.test/?token=[redacted] does not answer';
    expect((outcome as { reason: ThrottledError }).reason).toMatchObject({
      code: 'budget_spent',
      message: `listPets (GET /pets): not sent: ${said}; that went on for 1 s (the call's timeout). Retry later.`,
    });
    expect(lines).toEqual([`listPets (GET /pets): waiting up to 1000 ms (${said}).`]);
    expect(sent).toBe(0);
  });

  it('a call that waits behind requests in flight, then out a spent window, then behind requests in flight again, gets a new wait for the second (before: refused at once, its limit counted from the first)', async () => {
    const decisions = [{ kind: 'busy', waitMs: 4_000 }, { kind: 'spent', waitMs: 4_000 }, { kind: 'busy', waitMs: 1_000 }] as const;
    let asked = 0;
    const memory = createMemoryCoordinator();
    const scripted = memoryWith({ acquire: (request) => decisions[asked++] ?? memory.acquire(request) });
    const c = client({ coordinator: scripted, timeout: 1_000, maxRetryDelay: 5_000 });
    const waits: string[] = [];
    c.on('wait', ({ reason }) => void waits.push(reason));
    const outcome = await settle(c.listPets({ limit: 1 }), { stepMs: 100, maxSteps: 200 });
    expect(outcome).toEqual({ status: 'fulfilled', value: expect.any(Array) });
    expect(waits).toEqual(['busy', 'spent', 'busy']);
  });

  it.each([
    ['lost', [{ kind: 'lost', waitMs: 0 }, { kind: 'lost', waitMs: 1_000 }, { kind: 'lost', waitMs: 1_000 }], [['lost', 1_000]]],
    ['busy', [{ kind: 'busy', waitMs: 1_000 }, { kind: 'busy', waitMs: 1_000 }], [['busy', 5_000]]],
  ] satisfies [string, AcquireDecision[], [string, number][]][])('a call woken by a change within the same %s wait, and held back again, tells of the wait once (and of a lost wait of 0 ms not at all)', async (_, decisions, told) => {
    let asked = 0;
    const memory = createMemoryCoordinator();
    // Every question of the gate is answered at once: a change woke it.
    const scripted = memoryWith({ acquire: (request) => decisions[asked++] ?? memory.acquire(request), changed: () => Promise.resolve() });
    const c = client({ coordinator: scripted, timeout: 1_000, maxRetryDelay: 5_000 });
    const waits: [string, number][] = [];
    c.on('wait', ({ reason, waitMs }) => void waits.push([reason, waitMs]));
    const outcome = await settle(c.listPets({ limit: 1 }), { stepMs: 100, maxSteps: 200 });
    expect(outcome).toEqual({ status: 'fulfilled', value: expect.any(Array) });
    expect([asked, waits]).toEqual([decisions.length + 1, told]);
  });

  it('a call that waits out a lost probe\'s backoff, then behind requests in flight, tells of both waits, the second with what is left of its limit (before: the busy wait was not told)', async () => {
    const decisions = [{ kind: 'lost', waitMs: 400 }, { kind: 'busy', waitMs: 300 }] as const;
    let asked = 0;
    const memory = createMemoryCoordinator();
    const scripted = memoryWith({ acquire: (request) => decisions[asked++] ?? memory.acquire(request) });
    const c = client({ coordinator: scripted, timeout: 1_000, maxRetryDelay: 0 });
    const waits: unknown[] = [];
    c.on('wait', ({ reason, waitMs }) => void waits.push({ reason, waitMs }));
    expect(await settle(c.listPets({ limit: 1 }), { stepMs: 100, maxSteps: 200 })).toEqual({ status: 'fulfilled', value: expect.any(Array) });
    expect(waits).toEqual([{ reason: 'lost', waitMs: 400 }, { reason: 'busy', waitMs: 600 }]);
  });

  it('the signal cancels a wait in the gate: the call rejects with an AbortError carrying its reason, and nothing more is sent', async () => {
    const ent = client({ apiKey: 'key-ent' });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    const controller = new AbortController();
    const call = settle(ent.listPets({ limit: 1 }, { signal: controller.signal }), { stepMs: 1_000, maxSteps: 5 }).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(2_000);
    const reason = new Error('user gave up');
    controller.abort(reason);
    const outcome = await settle(call as Promise<unknown>);
    expect(outcome).toEqual({ status: 'fulfilled', value: { status: 'rejected', reason: expect.any(AbortError) } });
    expect((outcome as { value: { reason: AbortError } }).value.reason).toMatchObject({ cause: reason, mayHaveSucceeded: false });
    expect(server.inspect().keys['key-ent']!.requests).toBe(5);
  });

  // The abort lands after the coordinator decided: in a decision it answers as a promise, or
  // at once, before the attempt listens to the signal.
  it.each([
    ['as a promise', async (decision: AcquireDecision) => decision],
    ['at once', (decision: AcquireDecision) => decision],
  ])('a signal aborted while the coordinator grants the slot (%s) sends nothing, and the slot is released', async (_, answer) => {
    let sent = 0;
    const counting = (request: Request) => ((sent++), server.fetch(request));
    const controller = new AbortController();
    const released: (boolean | undefined)[] = [];
    const memory = createMemoryCoordinator();
    const coordinator = memoryWith({
      acquire: (request) => {
        const decision = memory.acquire(request) as AcquireDecision;
        if (decision.kind !== 'granted') return decision;
        controller.abort(new Error('user gave up'));
        return answer({ kind: 'granted', release: (unanswered) => (released.push(unanswered), decision.release(unanswered)) });
      },
    });
    const error = await run(client({ fetch: counting, coordinator }).listPets({ limit: 1 }, { signal: controller.signal }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ mayHaveSucceeded: false });
    expect(sent).toBe(0);
    expect(released).toEqual([false]);
  });

  it('a coordinator of the user\'s own whose observe never settles holds a call no longer than its timeout: the call resolves with its data', async () => {
    const coordinator = memoryWith({ observe: () => new Promise<void>(() => {}) });
    const outcome = await settle(client({ coordinator, timeout: 1_000 }).listPets({ limit: 1 }), { stepMs: 100, maxSteps: 50 });
    expect(outcome).toEqual({ status: 'fulfilled', value: [expect.objectContaining({ id: expect.any(Number) })] });
  });

  it.each([
    ['Python\'s json.dumps', '{"code": "api_key_banned", "message": "banned", "status": 429}'],
    ['a space on both sides of the colon', '{"code" : "api_key_banned", "message": "banned", "status": 429}'],
  ])('a 429 whose Error record is written with spaces (%s) is read as a ban: the next call is refused with api_key_banned', async (_, body) => {
    const fetch = async () => new Response(body, { status: 429, headers: { 'Content-Type': 'application/json', 'Retry-After': '600' } });
    const c = client({ fetch });
    expect(await run(c.listPets())).toMatchObject({ name: 'RateLimitError', code: 'api_key_banned' });
    expect(await run(c.listPets())).toMatchObject({ name: 'ThrottledError', code: 'api_key_banned' });
  });

  it('an answer of the running window that arrives 2.5 s late (its reset, measured from its arrival, looks later) does not raise the remaining budget: the lowest is kept, and no call meets a 429 (before: the late count replaced the lower one)', async () => {
    let n = 0;
    // The second request's answer is held in transit after the server counted it.
    const fetch = async (request: Request) => {
      const late = ++n === 2;
      const response = await server.fetch(request);
      if (late) await new Promise((resolve) => setTimeout(resolve, 2_500));
      return response;
    };
    const ent = client({ apiKey: 'key-ent', fetch, maxRetries: 0, maxRetryDelay: 0 });
    await run(ent.listPets({ limit: 1 }));
    const seen: (number | undefined)[] = [];
    ent.rateLimit.subscribe((state) => seen.push(state?.remaining));
    await settle(Promise.all([ent.listPets({ limit: 1 }), ent.listPets({ limit: 1 })]));
    expect(seen).toEqual([2]);
    expect(ent.rateLimit.getSnapshot()?.remaining).toBe(2);
    const outcomes = await settle(Promise.allSettled([1, 2, 3].map(() => ent.listPets({ limit: 1 }))));
    expect(outcomes.status === 'fulfilled' && outcomes.value.map((o) => o.status === 'rejected' && (o.reason as Error).name)).toEqual([false, false, 'ThrottledError']);
    expect(server.inspect().keys['key-ent']).toMatchObject({ requests: 5, rateLimited: 0 });
  });

  it('an answer of the running window whose reset is more than 2 s sooner (the server\'s clock moved back, or another instance answered) moves the reset there, and its count binds', async () => {
    const answers = [
      { remaining: '3', reset: (START + 50_000) / 1000 },
      { remaining: '2', reset: (START + 40_000) / 1000 },
    ];
    const fetch = async () => {
      const { remaining, reset } = answers.shift()!;
      return Response.json([], { headers: { 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': remaining, 'X-RateLimit-Reset': String(reset) } });
    };
    const ent = client({ fetch });
    await run(ent.listPets());
    await run(ent.listPets());
    expect(ent.rateLimit.getSnapshot()).toMatchObject({ remaining: 2, resetAt: new Date(START + 40_000) });
  });

  it('rateLimit.getSnapshot returns the same frozen object until a response changes it', async () => {
    const pro = client();
    expect(pro.rateLimit.getSnapshot()).toBeUndefined();
    await settle(pro.listPets());
    const first = pro.rateLimit.getSnapshot();
    expect(first).toEqual({ limit: 300, remaining: 299, resetAt: new Date(START - 10_000 + 60_000) });
    expect(Object.isFrozen(first)).toBe(true);
    expect(pro.rateLimit.getSnapshot()).toBe(first);
    await settle(pro.listPets());
    expect(pro.rateLimit.getSnapshot()).not.toBe(first);
    expect(pro.rateLimit.getSnapshot()?.remaining).toBe(298);
  });

  it('a snapshot\'s Date that a reader changes (resetAt.setTime(0)) decides nothing: a spent budget still holds the next call back unsent, and the next response\'s snapshot shows the true reset', async () => {
    const ent = client({ apiKey: 'key-ent', maxRetryDelay: 10_000 });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    const spent = ent.rateLimit.getSnapshot()!;
    spent.resetAt.setTime(0);
    expect(await run(ent.listPets({ limit: 1 }))).toMatchObject({ name: 'ThrottledError', code: 'budget_spent' });
    expect(server.inspect().keys['key-ent']!.requests).toBe(5);
    await vi.advanceTimersByTimeAsync(START - 10_000 + 60_000 - Date.now());
    expect(await run(ent.listPets({ limit: 1 }))).toHaveLength(1);
    expect(ent.rateLimit.getSnapshot()).toEqual({ limit: 5, remaining: 4, resetAt: new Date(START - 10_000 + 120_000) });
  });

  it('rateLimit.subscribe works unbound, calls the listener on each change, and its return value unsubscribes', async () => {
    const pro = client();
    const { subscribe, getSnapshot } = pro.rateLimit;
    const seen: (RateLimitState | undefined)[] = [];
    const stop = subscribe((state) => seen.push(state));
    await settle(pro.listPets());
    await settle(pro.listPets());
    stop();
    await settle(pro.listPets());
    expect(seen.map((s) => s?.remaining)).toEqual([299, 298]);
    expect(getSnapshot()?.remaining).toBe(297);
  });

  it('a coordinator whose acquire throws fails the call with a PetStoreError that names the call, and nothing is sent', async () => {
    const failure = new Error('store unreachable');
    const coordinator = memoryWith({ acquire: () => { throw failure; } });
    const before = server.inspect().keys['key-pro']?.requests ?? 0;
    const error = await run(client({ coordinator }).listPets({ limit: 1 }));
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ message: expect.stringMatching(/^listPets \(GET \/pets[^)]*\): not sent: the rate-limit coordinator failed/), cause: failure });
    const rejecting = memoryWith({ acquire: () => Promise.reject(failure) });
    expect(await run(client({ coordinator: rejecting }).listPets({ limit: 1 }))).toBeInstanceOf(PetStoreError);
    expect(server.inspect().keys['key-pro']?.requests ?? 0).toBe(before);
  });

  it.each([
    ['acquire answers undefined', { acquire: () => undefined as never }],
    ['acquire answers a kind it does not know', { acquire: () => ({ kind: 'maybe' }) as never }],
    ['acquire grants without a release function', { acquire: () => ({ kind: 'granted' }) as never }],
    ['changed throws', { acquire: () => ({ kind: 'busy', waitMs: 100 }), changed: () => { throw new Error('store unreachable'); } }],
    ['changed returns no promise', { acquire: () => ({ kind: 'busy', waitMs: 100 }), changed: () => undefined as never }],
    ['acquire answers a wait past the dates a Date can hold', { acquire: () => ({ kind: 'spent', waitMs: 1e17 }) }],
  ] satisfies [string, Partial<RateLimitCoordinator>][])('a coordinator of the user\'s own whose %s fails the call with a PetStoreError, nothing sent (before: a raw TypeError or RangeError left the client)', async (_, overrides) => {
    let sent = 0;
    const counting = (request: Request) => ((sent++), server.fetch(request));
    const error = await run(client({ fetch: counting, coordinator: memoryWith(overrides), maxRetryDelay: 0, timeout: 1_000 }).listPets({ limit: 1 }));
    expect(error).toBeInstanceOf(PetStoreError);
    expect((error as Error).message).toMatch(/^listPets \(GET \/pets[^)]*\): not sent: /);
    expect(sent).toBe(0);
  });

  it('a coordinator of the user\'s own whose changed throws undefined fails the call at once with a PetStoreError, nothing sent (before: the wait took it for a change and asked again at once, in a loop)', async () => {
    let sent = 0;
    let asked = 0;
    const counting = (request: Request) => ((sent++), server.fetch(request));
    // Bounded, so that the loop it made before ends: the 50th question throws an Error.
    const changed = () => {
      if (++asked >= 50) throw new Error('asked 50 times');
      throw undefined;
    };
    const coordinator = memoryWith({ acquire: () => ({ kind: 'busy', waitMs: Infinity }), changed });
    const outcome = await settle(client({ fetch: counting, coordinator, timeout: 1_000 }).listPets({ limit: 1 }), { stepMs: 100, maxSteps: 20 });
    expect(outcome).toEqual({ status: 'rejected', reason: expect.any(PetStoreError) });
    const error = (outcome as { reason: PetStoreError }).reason;
    expect(error.message).toMatch(/^listPets \(GET \/pets[^)]*\): not sent: the rate-limit coordinator failed; it threw undefined\.$/);
    expect(error.cause).toBeUndefined();
    expect([asked, sent]).toEqual([1, 0]);
  });

  it('a coordinator of the user\'s own whose changed rejects (with undefined or an error) leaves each wait to its waitMs: the call asks again at that pace and, past its bound, is a ThrottledError, nothing sent', async () => {
    for (const reason of [undefined, new Error('no news')]) {
      let sent = 0;
      let asked = 0;
      const counting = (request: Request) => ((sent++), server.fetch(request));
      const coordinator = memoryWith({ acquire: () => ({ kind: 'busy', waitMs: 250 }), changed: () => ((asked++), Promise.reject(reason)) });
      const started = Date.now();
      const outcome = await settle(client({ fetch: counting, coordinator, timeout: 1_000, maxRetryDelay: 0 }).listPets({ limit: 1 }), { stepMs: 50 });
      expect(outcome).toEqual({ status: 'rejected', reason: expect.any(ThrottledError) });
      expect([asked, sent, Date.now() - started]).toEqual([4, 0, 1_000]);
    }
  });

  it('a coordinator whose release throws is reported, and createPet still resolves to the pet it created (before: it rejected with the release\'s error, and a retry made a second pet)', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    const failure = new Error('cannot release');
    const memory = createMemoryCoordinator();
    const coordinator = memoryWith({
      acquire: (request) => {
        const decision = memory.acquire(request) as Exclude<ReturnType<RateLimitCoordinator['acquire']>, Promise<unknown>>;
        return decision.kind === 'granted' ? { kind: 'granted', release: (unanswered) => (decision.release(unanswered), (() => { throw failure; })()) } : decision;
      },
    });
    const before = server.inspect().petCount;
    expect(await run(client({ coordinator }).createPet({ name: 'Rex', categoryId: 1 }))).toMatchObject({ name: 'Rex' });
    expect(server.inspect().petCount).toBe(before + 1);
    expect(reported).toEqual([failure]);
    vi.unstubAllGlobals();
  });

  it('a coordinator from another realm (a vm context), whose async methods answer that realm\'s promises, serves: its decision is awaited, and the call settles once its observe has recorded the answer (before: every call failed, "acquire() answered no decision")', async () => {
    const memory = createMemoryCoordinator();
    const make = runInNewContext(`(inner, later) => ({
      getSnapshot: inner.getSnapshot,
      subscribe: inner.subscribe,
      acquire: async (request) => inner.acquire(request),
      observe: async (observation) => { await later(50); inner.observe(observation); },
      changed: (signal) => inner.changed(signal),
    })`) as (inner: RateLimitCoordinator, later: (ms: number) => Promise<void>) => RateLimitCoordinator;
    const coordinator = make(memory, (ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    let recorded: RateLimitState | undefined;
    const call = client({ coordinator }).listPets({ limit: 1 }).then((pets) => ((recorded = memory.getSnapshot()), pets));
    expect(await run(call)).toHaveLength(1);
    expect(recorded).toMatchObject({ limit: 300, remaining: 299 });
  });

  it("the caller's signal ends a call whose coordinator has not decided yet, with an AbortError, and a slot it grants later goes back unspent (before: the call waited for the decision, forever for one that never came)", async () => {
    const released: unknown[] = [];
    let grant: (() => void) | undefined;
    const coordinator = memoryWith({
      acquire: () => new Promise((resolve) => void (grant = () => resolve({ kind: 'granted', release: (unanswered) => void released.push(unanswered) }))),
    });
    const controller = new AbortController();
    const call = client({ coordinator }).listPets({ limit: 1 }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('gave up')), 1_000);
    const error = await run(call);
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ mayHaveSucceeded: false, cause: new Error('gave up') });
    grant!();
    await vi.advanceTimersByTimeAsync(0);
    expect(released).toEqual([false]);
  });

  it('a coordinator whose observe throws is reported, and the call still returns its data', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    const failure = new Error('cannot record');
    const coordinator = memoryWith({ observe: () => { throw failure; } });
    expect(await run(client({ coordinator }).listPets({ limit: 1 }))).toHaveLength(1);
    expect(reported).toEqual([failure]);
    vi.unstubAllGlobals();
  });

  it('answers without rate-limit headers, a step of the clock between them too, leave rateLimit empty: getSnapshot() stays undefined and no listener is called', async () => {
    const bare = client({ fetch: async () => Response.json([]) });
    const seen: (RateLimitState | undefined)[] = [];
    bare.rateLimit.subscribe((state) => seen.push(state));
    expect(await run(bare.listPets())).toEqual([]);
    vi.setSystemTime(Date.now() + 3_600_000);
    expect(await run(bare.listPets())).toEqual([]);
    expect(bare.rateLimit.getSnapshot()).toBeUndefined();
    expect(seen).toEqual([]);
  });

  it('a request of the running window that times out shows in rateLimit at once: the remaining budget drops by one', async () => {
    let n = 0;
    const ent = client({ apiKey: 'key-ent', timeout: 1_000, maxRetries: 0, fetch: (request) => (n++ === 0 ? server.fetch(request) : new Promise<Response>(() => {})) });
    await run(ent.listPets({ limit: 1 }));
    expect(ent.rateLimit.getSnapshot()?.remaining).toBe(4);
    expect(await run(ent.listPets({ limit: 1 }))).toMatchObject({ name: 'TimeoutError' });
    expect(ent.rateLimit.getSnapshot()?.remaining).toBe(3);
  });
});

describe('this machine\'s clock stepping (NTP, a VM resumed, a user) ends no wait early and draws none out', () => {
  const HOUR = 3_600_000;
  /** When the minute of START ends, on the server's clock: the reset and every Retry-After below. */
  const RESET = START - 10_000 + 60_000;
  const STEPS = [
    ['two minutes', 2 * 60_000],
    ['an hour', HOUR],
  ] as const;

  /**
   * A reference server on a clock of its own, which time passing moves and this machine's clock
   * stepping does not (the service is elsewhere), with a 5-per-minute key.
   */
  function remoteServer() {
    const started = performance.now();
    return createReferenceServer({ apiKeys: { 'key-ent': { perMinute: 5, perDay: 1_000 } }, pets: 10, now: () => START + (performance.now() - started) });
  }

  /** When each request after the first `skip` arrived, on the server's clock. */
  const arrivals = (remote: ReturnType<typeof remoteServer>, skip: number) => remote.requests().slice(skip).map((r) => Date.parse(r.time));

  it.each(STEPS)('throttle on: a step forward of %s inside a 429\'s Retry-After window: the next call waits out the window, and nothing is sent inside it (before: sent at once, a strike)', async (_, stepMs) => {
    const remote = remoteServer();
    const fetch = (request: Request) => remote.fetch(request);
    // Another process of the key spends the minute; this client's probe meets the 429 (Retry-After 50 s).
    const other = client({ apiKey: 'key-ent', fetch });
    for (let i = 0; i < 5; i++) await settle(other.listPets({ limit: 1 }));
    const ent = client({ apiKey: 'key-ent', fetch });
    expect(await run(ent.listPets({ limit: 1 }, { maxRetries: 0 }))).toMatchObject({ name: 'RateLimitError' });
    await vi.advanceTimersByTimeAsync(5_000);
    vi.setSystemTime(Date.now() + stepMs);
    const next = ent.listPets({ limit: 1 });
    await vi.advanceTimersByTimeAsync(0);
    // What rateLimit shows moved with the clock: the block still ends some 45 s from now.
    const left = ent.rateLimit.getSnapshot()!.blockedUntil!.getTime() - Date.now();
    expect(left).toBeGreaterThan(44_000);
    expect(left).toBeLessThanOrEqual(45_000);
    expect(await run(next)).toHaveLength(1);
    expect(remote.inspect().keys['key-ent']).toEqual({ requests: 7, rateLimited: 1, insideRetryAfter: 0, bans: 0 });
    for (const at of arrivals(remote, 6)) expect(at).toBeGreaterThanOrEqual(RESET);
  });

  it.each(STEPS)('throttle off: a step forward of %s inside a 429\'s Retry-After window: ten calls wait out the window, none is sent inside it, and the key is not banned (before: all ten sent inside it, a ban)', async (_, stepMs) => {
    const remote = remoteServer();
    const ent = client({ apiKey: 'key-ent', throttle: false, fetch: (request) => remote.fetch(request) });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    expect(await run(ent.listPets({ limit: 1 }, { maxRetries: 0 }))).toMatchObject({ name: 'RateLimitError' });
    await vi.advanceTimersByTimeAsync(5_000);
    vi.setSystemTime(Date.now() + stepMs);
    const outcomes = await settle(Promise.allSettled(Array.from({ length: 10 }, () => ent.listPets({ limit: 1 }))), { stepMs: 1_000, maxSteps: 600 });
    if (outcomes.status !== 'fulfilled') throw new Error('the calls did not settle');
    expect(remote.inspect().keys['key-ent']).toMatchObject({ insideRetryAfter: 0, bans: 0 });
    for (const at of arrivals(remote, 6)) expect(at).toBeGreaterThanOrEqual(RESET);
    expect(outcomes.value.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(5);
  });

  it.each(STEPS)('throttle on: a step forward of %s with the budget spent: the next call waits for the server\'s reset instead of probing into a 429 (before: a 429)', async (_, stepMs) => {
    const remote = remoteServer();
    const ent = client({ apiKey: 'key-ent', fetch: (request) => remote.fetch(request) });
    for (let i = 0; i < 5; i++) await settle(ent.listPets({ limit: 1 }));
    expect(ent.rateLimit.getSnapshot()?.remaining).toBe(0);
    const left = RESET - Date.now();
    vi.setSystemTime(Date.now() + stepMs);
    const next = ent.listPets({ limit: 1 });
    await vi.advanceTimersByTimeAsync(0);
    // What rateLimit shows moved with the clock: the window still resets as long from now.
    expect(ent.rateLimit.getSnapshot()!.resetAt.getTime() - Date.now()).toBe(left);
    expect(await run(next)).toHaveLength(1);
    expect(remote.inspect().keys['key-ent']).toEqual({ requests: 6, rateLimited: 0, insideRetryAfter: 0, bans: 0 });
    expect(arrivals(remote, 5)[0]).toBeGreaterThanOrEqual(RESET);
  });

  it.each([
    ['back', -HOUR],
    ['forward', HOUR],
  ] as const)('a step %s of an hour after a probe of the unknown budget went unanswered: the next call waits out the half-second backoff, no more and no less, then succeeds', async (_, stepMs) => {
    const coordinator = createMemoryCoordinator();
    await loseProbes(coordinator, 1);
    vi.setSystemTime(Date.now() + stepMs);
    const started = performance.now();
    expect(await settle(client({ coordinator }).listPets({ limit: 1 }), { stepMs: 50 })).toMatchObject({ status: 'fulfilled' });
    expect(performance.now() - started).toBe(500);
  });

  it('a step forward of an hour while a ban the service announced runs: a call refused inside it still says api_key_banned', async () => {
    const banned = async () =>
      Response.json({ code: 'api_key_banned', message: 'banned', status: 429 }, { status: 429, headers: { 'Retry-After': '900' } });
    const c = client({ fetch: banned });
    expect(await run(c.listPets())).toMatchObject({ name: 'RateLimitError', code: 'api_key_banned' });
    vi.setSystemTime(Date.now() + HOUR);
    expect(await run(c.listPets())).toMatchObject({ name: 'ThrottledError', code: 'api_key_banned' });
  });

  it('a step back of an hour while a call waits behind a request in flight: the call still waits at most its timeout, then is a ThrottledError without sending (before: held 34 s, until the request in flight timed out)', async () => {
    let sent = 0;
    const never = () => ((sent++), new Promise<Response>(() => {}));
    const slow = client({ fetch: never, timeout: 2_000, maxRetryDelay: 1_000 });
    void slow.listPets({}, { timeout: 30_000 }).catch(() => {});
    const started = performance.now();
    const waiting = slow.listPets();
    await vi.advanceTimersByTimeAsync(1_000);
    vi.setSystemTime(Date.now() - HOUR);
    const outcome = await settle(waiting, { stepMs: 100 });
    expect(outcome).toEqual({ status: 'rejected', reason: expect.any(ThrottledError) });
    expect(performance.now() - started).toBe(2_000);
    expect(sent).toBe(1);
  });
});

describe('createMemoryCoordinator() driven directly, as a coordinator of the user\'s own that wraps it does', () => {
  const request = { throttle: true, leaseMs: 5_000 };
  const answer = (budget?: { limit: number; remaining: number; resetInMs: number }) => ({ status: 200, budget, blockForMs: undefined, banned: false });
  const kinds = (coordinator: RateLimitCoordinator, count: number) =>
    Array.from({ length: count }, () => (coordinator.acquire(request) as AcquireDecision).kind);

  it('requests that time out while the service announces no budget (the throttle steps aside) are not held against the window it announces next: all of that window can be spent', () => {
    const coordinator = createMemoryCoordinator();
    coordinator.observe(answer());
    const lost = [coordinator.acquire(request), coordinator.acquire(request)];
    for (const slot of lost) (slot as { release: (unanswered: boolean) => void }).release(true);
    coordinator.observe(answer({ limit: 60, remaining: 2, resetInMs: 60_000 }));
    expect(kinds(coordinator, 3)).toEqual(['granted', 'granted', 'busy']);
  });

  it('a slot released without an argument counts as answered, and a slot released twice counts once', () => {
    const coordinator = createMemoryCoordinator();
    coordinator.observe(answer({ limit: 5, remaining: 2, resetInMs: 60_000 }));
    const slot = coordinator.acquire(request) as Extract<AcquireDecision, { kind: 'granted' }>;
    slot.release();
    slot.release();
    expect(coordinator.getSnapshot()?.remaining).toBe(2);
    expect(kinds(coordinator, 3)).toEqual(['granted', 'granted', 'busy']);
  });

  it('an answer without rate-limit headers while an announced window runs leaves the throttle on; one after that window is over steps it aside', () => {
    const coordinator = createMemoryCoordinator();
    coordinator.observe(answer({ limit: 5, remaining: 0, resetInMs: 60_000 }));
    coordinator.observe(answer());
    expect(coordinator.acquire(request)).toEqual({ kind: 'spent', waitMs: 60_000 });
    vi.advanceTimersByTime(60_000);
    coordinator.observe(answer());
    expect(kinds(coordinator, 3)).toEqual(['granted', 'granted', 'granted']);
  });

  it('an answer whose window ends later with no more left than the running one (the day\'s quota spent) moves the reset there: calls wait for it, not for the minute\'s reset', () => {
    const coordinator = createMemoryCoordinator();
    coordinator.observe(answer({ limit: 5, remaining: 0, resetInMs: 30_000 }));
    coordinator.observe(answer({ limit: 100, remaining: 0, resetInMs: 3_600_000 }));
    expect(coordinator.acquire(request)).toEqual({ kind: 'spent', waitMs: 3_600_000 });
    expect(coordinator.getSnapshot()).toEqual({ limit: 100, remaining: 0, resetAt: new Date(START + 3_600_000) });
  });

  it('an answer whose reset has already passed, arriving while a spent window runs, is a late answer of an ended window: the running window still holds calls back until its reset', () => {
    const coordinator = createMemoryCoordinator();
    coordinator.observe(answer({ limit: 5, remaining: 0, resetInMs: 30_000 }));
    coordinator.observe(answer({ limit: 5, remaining: 5, resetInMs: 0 }));
    expect(coordinator.acquire(request)).toEqual({ kind: 'spent', waitMs: 30_000 });
  });

  it('an answer of the same window with another limit (the plan changed) shows the new limit, and the lowest remaining still binds', () => {
    const coordinator = createMemoryCoordinator();
    coordinator.observe(answer({ limit: 60, remaining: 5, resetInMs: 60_000 }));
    coordinator.observe(answer({ limit: 300, remaining: 7, resetInMs: 60_000 }));
    expect(coordinator.getSnapshot()).toMatchObject({ limit: 300, remaining: 5 });
  });
});
