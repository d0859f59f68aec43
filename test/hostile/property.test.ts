/**
 * A property over generated servers: whatever sequence of answers a server gives (valid,
 * malformed, out of order, bare 429s, IETF headers), with the client's clock off by up to five
 * minutes and up to 50 calls at once, the client sends nothing inside a window a 429 told it to
 * wait (judged on the server's clock), does not wait more than a second past what it was asked,
 * fails only with PetStoreErrors, and never shows its key.
 *
 * In-process (the `fetch` option) with fake time, so each run is fast and repeatable.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PetStoreClient, PetStoreError } from '@animal-store/sdk';

const START = Date.UTC(2026, 5, 1, 0, 0, 10, 250);
const KEY = 'sk_live_PROPERTYk3y';
const SECOND = 1_000;

/** One generated answer; times are relative to the request's arrival on the server's clock. */
type Script =
  | { kind: 'ok'; remaining: number; resetInS: number }
  | { kind: 'ok-ietf'; remaining: number; resetInS: number }
  | { kind: 'ok-bare' }
  | { kind: 'limited'; retryAfter: string | { dateInS: number } | undefined; resetInS: number | undefined }
  | { kind: 'garbage'; headers: Record<string, string> };

const scriptArb: fc.Arbitrary<Script> = fc.oneof(
  fc.record({ kind: fc.constant('ok' as const), remaining: fc.nat(5), resetInS: fc.integer({ min: 1, max: 90 }) }),
  fc.record({ kind: fc.constant('ok-ietf' as const), remaining: fc.nat(5), resetInS: fc.integer({ min: 1, max: 90 }) }),
  fc.constant({ kind: 'ok-bare' as const }),
  fc.record({
    kind: fc.constant('limited' as const),
    retryAfter: fc.option(
      fc.oneof(
        fc.integer({ min: 0, max: 30 }).map(String),
        fc.constantFrom('1.5', '0.2', '-5', '5, 10', 'soon', '1e3', '', '99999999999'),
        fc.record({ dateInS: fc.integer({ min: 1, max: 30 }) }),
      ),
      { nil: undefined },
    ),
    resetInS: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
  }),
  fc.record({
    kind: fc.constant('garbage' as const),
    headers: fc.record({
      'X-RateLimit-Limit': fc.constantFrom('60', '-1', 'abc', '1e9'),
      'X-RateLimit-Remaining': fc.constantFrom('0', '5', 'NaN', ''),
      'X-RateLimit-Reset': fc.constantFrom(String(Math.ceil(START / 1000)) + '000', '99999999999999999', '-3', '30'),
    }),
  }),
);

/** A window the server told the client to wait out, on the server's clock. */
interface Window {
  /** How many requests had arrived when the client learnt of it (read the answer). */
  toldAt: number;
  start: number;
  end: number;
}

function runScenario(scripts: Script[], skewMs: number, concurrency: number) {
  const arrivals: number[] = [];
  const windows: Window[] = [];
  const serverNow = () => Date.now() + skewMs;
  const fetch = async (request: Request): Promise<Response> => {
    const now = serverNow();
    const n = arrivals.push(now) - 1;
    expect(request.headers.get('Authorization')).toBe(`Bearer ${KEY}`);
    const script = scripts[n] ?? ({ kind: 'ok-bare' } as const);
    const headers = new Headers({ 'Content-Type': 'application/json', Date: new Date(now).toUTCString() });
    const reset = (inS: number) => Math.ceil((now + inS * SECOND) / SECOND);
    let status = 200;
    let window: { start: number; end: number } | undefined;
    switch (script.kind) {
      case 'ok':
        headers.set('X-RateLimit-Limit', '60');
        headers.set('X-RateLimit-Remaining', String(script.remaining));
        headers.set('X-RateLimit-Reset', String(reset(script.resetInS)));
        break;
      case 'ok-ietf':
        headers.set('RateLimit', `"default";r=${script.remaining};t=${script.resetInS}`);
        break;
      case 'ok-bare':
        break;
      case 'garbage':
        for (const [name, value] of Object.entries(script.headers)) headers.set(name, value);
        break;
      case 'limited': {
        status = 429;
        if (script.resetInS !== undefined) {
          headers.set('X-RateLimit-Limit', '60');
          headers.set('X-RateLimit-Remaining', '0');
          headers.set('X-RateLimit-Reset', String(reset(script.resetInS)));
        }
        const { retryAfter } = script;
        if (typeof retryAfter === 'object') {
          const at = (Math.floor(now / SECOND) + retryAfter.dateInS) * SECOND;
          headers.set('Retry-After', new Date(at).toUTCString());
          window = { start: now, end: at };
        } else if (retryAfter !== undefined) {
          headers.set('Retry-After', retryAfter);
          // What a valid value asks for (RFC 9110: whole seconds; the fraction is a courtesy).
          if (/^\d{1,5}(\.\d+)?$/.test(retryAfter)) window = { start: now, end: now + Number(retryAfter) * SECOND };
        }
        if (!window && script.resetInS !== undefined) window = { start: now, end: reset(script.resetInS) * SECOND };
      }
    }
    const body = status === 200 ? '[]' : '{"code":"rate_limited","message":"slow down","status":429}';
    // The client has learnt of the answer once it reads the body.
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (window) windows.push({ toldAt: arrivals.length, ...window });
        controller.enqueue(new TextEncoder().encode(body));
        controller.close();
      },
    }, { highWaterMark: 0 }); // pulled only when the client reads, not when the answer is made
    return new Response(stream, { status, headers });
  };
  const client = new PetStoreClient({ apiKey: KEY, baseUrl: 'https://hostile.test/v1', fetch, maxRetries: 3, logLevel: 'off' });
  const calls = Array.from({ length: concurrency }, () => client.listPets());
  return { arrivals, windows, calls };
}

describe('a property over generated servers', () => {
  beforeEach(() => void vi.useFakeTimers({ now: START }));
  afterEach(() => void vi.useRealTimers());

  it('nothing is sent inside a window a 429 announced, no wait overshoots by more than a second, every failure is a PetStoreError, and the key never shows', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(scriptArb, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: -300_000, max: 300_000 }),
        fc.integer({ min: 1, max: 50 }),
        async (scripts, skewMs, concurrency) => {
          const { arrivals, windows, calls } = runScenario(scripts, skewMs, concurrency);
          const settled = Promise.allSettled(calls);
          let done = false;
          void settled.then(() => (done = true));
          for (let step = 0; !done && step < 4_000; step++) await vi.advanceTimersByTimeAsync(100);
          expect(done, 'every call settles').toBe(true);
          for (const result of await settled) {
            if (result.status === 'fulfilled') continue;
            expect(result.reason).toBeInstanceOf(PetStoreError);
            const text = `${String(result.reason)} ${JSON.stringify(result.reason)} ${(result.reason as Error).stack}`;
            expect(text).not.toContain(KEY);
          }
          for (const window of windows) {
            const later = arrivals.slice(window.toldAt);
            const inside = later.filter((t) => t >= window.start && t < window.end);
            expect(inside, `sent inside a window told to wait until ${new Date(window.end).toISOString()}`).toEqual([]);
          }
          // One call at a time: after each told window, the retry goes out within a second of its end,
          // unless an announced budget (or a later 429) asks for more.
          if (concurrency === 1) {
            for (const window of windows) {
              const next = arrivals[window.toldAt];
              const stillWaiting = windows.some((w) => w !== window && w.toldAt <= window.toldAt && w.end > window.end);
              const spentBudget = scripts.slice(0, window.toldAt).some((s) => s.kind === 'ok' || s.kind === 'ok-ietf' || s.kind === 'garbage');
              if (next !== undefined && !stillWaiting && !spentBudget) expect(next).toBeLessThanOrEqual(Math.max(window.end, window.start) + 1_000);
            }
          }
        },
      ),
      { numRuns: 120, seed: 20261123, endOnFailure: true },
    );
  }, 120_000);
});
