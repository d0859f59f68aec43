/**
 * A property over generated servers: whatever sequence of answers a server gives (valid,
 * malformed, delivered out of order, bare 429s, IETF headers, with or without a usable `Date`),
 * with the client's clock off by up to five minutes and up to 50 calls at once, the client sends
 * nothing inside a window a 429 told it to wait (judged on the server's clock), does not wait or
 * refuse for more than a second past what it was asked, fails only with PetStoreErrors, and never
 * shows its key.
 *
 * In-process (the `fetch` option) with fake time, so each run is fast and repeatable. A failure
 * prints fast-check's counterexample with the seed and path to replay it (`seed`, `path` below).
 */
import fc from 'fast-check';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryCoordinator, PetStoreClient, PetStoreError, ThrottledError, type RateLimitCoordinator } from '@animal-store/sdk';

/** Fixed, so a failure repeats; change it only to explore, and keep the one that found a bug. */
const SEED = 20261123;
const START = Date.UTC(2026, 5, 1, 0, 0, 10, 250);
const KEY = 'sk_live_PROPERTYk3y';
const SECOND = 1_000;
/**
 * The longest backoff a bare 429 blocks for: bare 429s back off exponentially per attempt, and
 * with `maxRetries: 3` the fourth attempt's full-jitter cap (0.5 s × 2³) is the largest.
 */
const BARE_429_BACKOFF_MS = 4_000;

/** A Retry-After as generated: valid seconds, a date some seconds ahead, or text as sent. */
type RetryAfter = { seconds: number } | { dateInS: number } | { raw: string };

/** One generated answer; times are relative to the request's arrival on the server's clock. */
type Script = {
  /** Real APIs send `Date`; proxies may drop it or mangle it. */
  date: 'server' | 'none' | 'garbage';
  /** Fake milliseconds before the answer is delivered: answers overtake each other. */
  delayMs: number;
} & (
  | { kind: 'ok'; remaining: number; resetInS: number }
  | { kind: 'ok-ietf'; remaining: number; resetInS: number; policy: boolean }
  | { kind: 'ok-bare' }
  | { kind: 'limited'; retryAfter: RetryAfter | undefined; resetInS: number | undefined; ietf: number | undefined }
  | { kind: 'garbage'; headers: Record<string, string> }
);

const retryAfterArb: fc.Arbitrary<RetryAfter> = fc.oneof(
  fc.integer({ min: 0, max: 30 }).map((seconds) => ({ seconds })),
  fc.constantFrom(0.2, 1.5, 2.999).map((seconds) => ({ seconds })),
  fc.integer({ min: 1, max: 30 }).map((dateInS) => ({ dateInS })),
  fc.constantFrom('-5', '5, 10', 'soon', '1e3', '1.5e3', '', '99999999999', '172800', '+3', '0x10', '3 s', 'Wed, 21 Oct 2026 07:28:00 +0000').map((raw) => ({ raw })),
);

const scriptArb: fc.Arbitrary<Script> = fc
  .tuple(
    fc.oneof(
      fc.record({ kind: fc.constant('ok' as const), remaining: fc.nat(5), resetInS: fc.integer({ min: 1, max: 90 }) }),
      fc.record({ kind: fc.constant('ok-ietf' as const), remaining: fc.nat(5), resetInS: fc.integer({ min: 1, max: 90 }), policy: fc.boolean() }),
      fc.constant({ kind: 'ok-bare' as const }),
      fc.record({
        kind: fc.constant('limited' as const),
        retryAfter: fc.option(retryAfterArb, { nil: undefined }),
        resetInS: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
        ietf: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
      }),
      fc.record({
        kind: fc.constant('garbage' as const),
        headers: fc.record({
          'X-RateLimit-Limit': fc.constantFrom('60', '-1', 'abc', '1e9'),
          'X-RateLimit-Remaining': fc.constantFrom('0', '5', 'NaN', ''),
          'X-RateLimit-Reset': fc.constantFrom(`${Math.ceil(START / 1000)}000`, '99999999999999999', '-3', '30', '1.5'),
          RateLimit: fc.constantFrom('"default";r=abc;t=3', 'r=0;t=5', '"default";r=0', '"default";r=0;t=99999999', ''),
        }),
      }),
    ),
    fc.constantFrom('server', 'server', 'server', 'none', 'garbage') as fc.Arbitrary<Script['date']>,
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_500 })),
  )
  .map(([body, date, delayMs]) => ({ ...body, date, delayMs }) as Script);

/** A window the server told the client to wait out, on the server's clock. */
interface Window {
  /** How many requests had arrived when the client learnt of it (read the answer). */
  toldAt: number;
  start: number;
  end: number;
}

/**
 * The client's own coordinator, watched: which windows it had been told of (observed) when it
 * granted each request, and when (server clock) it granted it. Requests granted before a 429 was
 * observed may legitimately arrive after it; this judges each send by what the client knew.
 * Observations come in the order answers were delivered (each goes through the same steps).
 */
function watched(serverNow: () => number) {
  const inner = createMemoryCoordinator();
  const delivered: (Omit<Window, 'toldAt'> | undefined)[] = [];
  const known: Omit<Window, 'toldAt'>[] = [];
  const grants: { at: number; inside: Omit<Window, 'toldAt'>[] }[] = [];
  const coordinator: RateLimitCoordinator = {
    getSnapshot: inner.getSnapshot,
    subscribe: inner.subscribe,
    changed: (signal) => inner.changed(signal),
    observe(observation) {
      const window = delivered.shift();
      if (window) known.push(window);
      return inner.observe(observation);
    },
    acquire(request) {
      const decision = inner.acquire(request);
      if (decision instanceof Promise) throw new Error('the memory coordinator decides at once');
      if (decision.kind === 'granted') {
        const at = serverNow();
        grants.push({ at, inside: known.filter((w) => at >= w.start && at < w.end) });
      }
      return decision;
    },
  };
  return { coordinator, delivered, grants };
}

/** What one told answer asks of the client at most, on the server's clock: wait until `until`. */
interface Ask {
  toldAt: number;
  until: number;
}

function runScenario(scripts: Script[], skewMs: number, concurrency: number) {
  const arrivals: number[] = [];
  const windows: Window[] = [];
  const asks: Ask[] = [];
  const serverNow = () => Date.now() + skewMs;
  const { coordinator, delivered, grants } = watched(serverNow);
  const fetch = async (request: Request): Promise<Response> => {
    const now = serverNow();
    const n = arrivals.push(now) - 1;
    expect(request.headers.get('Authorization')).toBe(`Bearer ${KEY}`);
    const script = scripts[n] ?? ({ kind: 'ok-bare', date: 'server', delayMs: 0 } as const);
    // Without a usable Date, absolute times cannot be judged by a skewed client: such an answer
    // carries only relative ones (what a well-behaved server without Date would send).
    const dated = script.date === 'server';
    const headers = new Headers({ 'Content-Type': 'application/json' });
    if (script.date === 'server') headers.set('Date', new Date(now).toUTCString());
    if (script.date === 'garbage') headers.set('Date', 'yesterday');
    const reset = (inS: number) => Math.ceil((now + inS * SECOND) / SECOND);
    let status = 200;
    /** The window as the server means it, from its own clock at arrival; `relative` ones run from delivery for the upper bound. */
    let asked: { end: number; relativeMs?: number } | undefined;
    /**
     * The announced budget's reset: the throttle may hold the client until then once the budget
     * is spent (by this answer or, in the same window, by another one).
     */
    let spent: { end: number; relativeMs?: number } | undefined;
    const xBudget = (remaining: number, inS: number) => {
      if (!dated) return;
      headers.set('X-RateLimit-Limit', '60');
      headers.set('X-RateLimit-Remaining', String(remaining));
      headers.set('X-RateLimit-Reset', String(reset(inS)));
      spent = { end: reset(inS) * SECOND };
    };
    switch (script.kind) {
      case 'ok':
        xBudget(script.remaining, script.resetInS);
        break;
      case 'ok-ietf':
        headers.set('RateLimit', `"default";r=${script.remaining};t=${script.resetInS}`);
        if (script.policy) headers.set('RateLimit-Policy', '"default";q=60;w=60');
        spent = { end: now + script.resetInS * SECOND, relativeMs: script.resetInS * SECOND };
        break;
      case 'ok-bare':
        break;
      case 'garbage':
        for (const [name, value] of Object.entries(script.headers)) if (value) headers.set(name, value);
        break;
      case 'limited': {
        status = 429;
        if (script.resetInS !== undefined) xBudget(0, script.resetInS);
        if (script.ietf !== undefined) {
          headers.set('RateLimit', `"default";r=0;t=${script.ietf}`);
          // The IETF budget is read first: it is the one the client keeps.
          spent = { end: now + script.ietf * SECOND, relativeMs: script.ietf * SECOND };
        }
        const { retryAfter } = script;
        if (retryAfter && 'dateInS' in retryAfter && dated) {
          const at = (Math.floor(now / SECOND) + retryAfter.dateInS) * SECOND;
          headers.set('Retry-After', new Date(at).toUTCString());
          asked = { end: at };
        } else if (retryAfter && 'dateInS' in retryAfter) {
          headers.set('Retry-After', String(retryAfter.dateInS));
          asked = { end: now + retryAfter.dateInS * SECOND, relativeMs: retryAfter.dateInS * SECOND };
        } else if (retryAfter && 'seconds' in retryAfter) {
          headers.set('Retry-After', String(retryAfter.seconds));
          // RFC 9110 has whole seconds only; a fraction asks for at least that long.
          asked = { end: now + retryAfter.seconds * SECOND, relativeMs: Math.ceil(retryAfter.seconds) * SECOND };
        } else if (retryAfter) {
          headers.set('Retry-After', retryAfter.raw);
          // Two values joined (sent twice): the longer wait binds.
          if (retryAfter.raw === '5, 10') asked = { end: now + 10 * SECOND, relativeMs: 10 * SECOND };
        }
        // No valid Retry-After: the spent budget's reset is the window, else a bare 429 (backoff).
        asked ??= spent ?? { end: now, relativeMs: BARE_429_BACKOFF_MS };
      }
    }
    if (script.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
    delivered.push(asked && asked.end > now ? { start: now, end: asked.end } : undefined);
    const body = status === 200 ? '[]' : '{"code":"rate_limited","message":"slow down","status":429}';
    // The client has learnt of the answer once it reads the body.
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const toldAt = arrivals.length;
          const delivered = serverNow();
          if (asked && asked.end > now) windows.push({ toldAt, start: now, end: asked.end });
          for (const ask of [asked, spent]) {
            // The client cannot see how long an answer took to reach it: an absolute time asks
            // for as long again, from when it arrived (and Date is truncated to the second).
            if (ask) asks.push({ toldAt, until: ask.relativeMs === undefined ? ask.end + (delivered - now) : delivered + ask.relativeMs });
          }
          controller.enqueue(new TextEncoder().encode(body));
          controller.close();
        },
      },
      { highWaterMark: 0 }, // pulled only when the client reads, not when the answer is made
    );
    return new Response(stream, { status, headers });
  };
  const client = new PetStoreClient({ apiKey: KEY, baseUrl: 'https://hostile.test/v1', fetch, coordinator, maxRetries: 3, logLevel: 'off' });
  const calls = Array.from({ length: concurrency }, () => client.listPets());
  return { arrivals, windows, asks, grants, calls };
}

describe('a property over generated servers', () => {
  beforeEach(() => void vi.useFakeTimers({ now: START }));
  afterEach(() => void vi.useRealTimers());

  it('nothing is sent inside a window a 429 announced, no wait or refusal overshoots by more than a second, every failure is a PetStoreError, and the key never shows', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(scriptArb, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: -300_000, max: 300_000 }),
        fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 50 })),
        async (scripts, skewMs, concurrency) => {
          vi.setSystemTime(START);
          const { arrivals, windows, asks, grants, calls } = runScenario(scripts, skewMs, concurrency);
          const settled = Promise.allSettled(calls);
          let done = false;
          void settled.then(() => (done = true));
          for (let step = 0; !done && step < 4_000; step++) await vi.advanceTimersByTimeAsync(100);
          expect(done, 'every call settles').toBe(true);
          /** The latest time anything told so far asked the client to wait until (server clock). */
          const askedUntil = (told: number) => Math.max(0, ...asks.filter((a) => a.toldAt <= told).map((a) => a.until));
          for (const result of await settled) {
            if (result.status === 'fulfilled') continue;
            const error: unknown = result.reason;
            expect(error).toBeInstanceOf(PetStoreError);
            const text = `${String(error)} ${JSON.stringify(error)} ${inspect(error, { depth: 6 })}`;
            expect(text).not.toContain(KEY);
            if (error instanceof ThrottledError) {
              // Refused unsent: only for a wait the server asked for, and no longer.
              expect(error.retryAt.getTime() + skewMs, 'a refusal names a wait the server asked for').toBeLessThanOrEqual(askedUntil(arrivals.length) + SECOND);
            }
          }
          // Every request went through the gate, and none was let through inside a window it knew of.
          expect(grants.length, 'every request sent was granted by the coordinator').toBe(arrivals.length);
          for (const grant of grants) {
            expect(grant.inside, `sent at ${new Date(grant.at).toISOString()} inside a window it was told of`).toEqual([]);
          }
          // One call at a time: after a 429, its retry goes out within a second of the latest wait
          // anything told so far asked for.
          if (concurrency === 1) {
            for (const window of windows) {
              const next = arrivals[window.toldAt];
              if (next !== undefined) expect(next, 'the retry waits no more than a second past what was asked').toBeLessThanOrEqual(askedUntil(window.toldAt) + SECOND);
            }
          }
        },
      ),
      { numRuns: 150, seed: SEED },
    );
  }, 120_000);
});
