/**
 * The client against servers other than our own: a node:http server scripted per test sends what
 * real APIs and proxies send (odd Retry-After values, resets in milliseconds, skewed clocks, no
 * rate-limit headers, endless or huge bodies, cut connections). Each test names, in its title or
 * a comment, what the client did before issue 8 (headers read strictly, times measured on the
 * server's clock, one controller per attempt).
 *
 * Time is fake (setTimeout, clearTimeout, Date, and performance, the clock the client's deadlines
 * are kept on) and driven by the test; sockets are real, and
 * `setImmediate` (left real) lets their I/O run between steps. Durations are judged on the
 * server's recorded arrival times, which move with the fake clock, never on wall time.
 */
import { setTimeout as realSleep } from 'node:timers/promises';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  AbortError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  PetStoreClient,
  PetStoreError,
  RateLimitError,
  ResponseValidationError,
  ThrottledError,
  TimeoutError,
  ValidationError,
  type ClientOptions,
} from '@animal-store/sdk';
import { createReferenceServer } from '@animal-store/sdk/server';
import { budget, fixedWindow, startHostile, type Answer, type Hostile } from './server.js';

/** 2026-06-01T00:00:10.250Z: off the second, where rounding shows. */
const START = Date.UTC(2026, 5, 1, 0, 0, 10, 250);
const KEY = 'sk_live_HOSTILEk3y';
const PET = '{"id":1,"name":"Rex","categoryId":1}';
const DAY = 86_400_000;

let server: Hostile | undefined;
beforeEach(() => void vi.useFakeTimers({ now: START, toFake: ['setTimeout', 'clearTimeout', 'Date', 'performance'] }));
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  await server?.close();
  server = undefined;
});

async function serve(script: (n: number, now: number) => Answer, options?: { skewMs?: number }) {
  server = await startHostile(script, options);
  return server;
}

const client = (options: ClientOptions = {}) => new PetStoreClient({ apiKey: KEY, baseUrl: server!.url, logLevel: 'off', ...options });

/** Moves fake time in steps, letting real socket I/O run between them, until `promise` settles. */
async function drive<T>(promise: Promise<T>, { stepMs = 50, maxMs = 600_000 } = {}): Promise<T | Error> {
  let done = false;
  let outcome: T | Error = new Error('unsettled');
  promise.then(
    (value) => ((done = true), (outcome = value)),
    (error: Error) => ((done = true), (outcome = error)),
  );
  for (let elapsed = 0; !done && elapsed <= maxMs; elapsed += stepMs) await step(stepMs);
  if (!done) throw new Error(`did not settle within ${maxMs} ms of fake time`);
  return outcome;
}

/** One step: real I/O first, then `ms` of fake time. */
async function step(ms: number) {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  await vi.advanceTimersByTimeAsync(ms);
}

/** Lets real I/O run (a few real milliseconds at a time, fake time still) until `ready()`, bounded. */
async function until(ready: () => boolean, what: string) {
  for (let i = 0; i < 400 && !ready(); i++) await realSleep(5);
  if (!ready()) throw new Error(`never happened: ${what}`);
}

/** Whether request `n`'s connection closes within `ms` of real time. */
const closesWithin = (n: number, ms: number) => Promise.race([server!.closed(n).then(() => true), realSleep(ms).then(() => false)]);

/** Arrivals after the first, relative to it (server clock). */
const after = (arrivals: number[]) => arrivals.slice(1).map((t) => t - arrivals[0]!);

/** `count` concurrent listPets calls of one client. */
const together = (c: PetStoreClient, count: number) => Promise.all(Array.from({ length: count }, () => c.listPets()));

describe('Retry-After is whole seconds or an IMF-fixdate, nothing else', () => {
  it('"1.5" rounds up to 2 s, and 10 concurrent calls send nothing inside it (before: 30 requests in 80 ms)', async () => {
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429, headers: { 'Retry-After': '1.5' } } : { status: 200 }));
    expect(await drive(together(client(), 10))).toHaveLength(10);
    expect(arrivals).toHaveLength(11);
    // 2 s, not 1.5 s: a fraction rounds up.
    expect(Math.min(...after(arrivals))).toBeGreaterThanOrEqual(2_000);
  });

  it.each([
    '-5',
    '5, soon',
    '1.5e3',
    'soon',
    'Wed, 21 Oct 2026 07:28:00 +0000',
    '2026-06-01T00:00:30Z',
    new Date(START + 2 * DAY).toUTCString(),
  ])(
    // Before, "-5" and a date not in GMT parsed (Date.parse) as dates in the past: no wait at all.
    'Retry-After %j is absent: the client falls back to X-RateLimit-Reset',
    async (value) => {
      const { arrivals } = await serve((n, now) =>
        n === 0 ? { status: 429, headers: { 'Retry-After': value, ...budget(60, 0, now + 20_000) } } : { status: 200 },
      );
      // throttle off: only what the 429 itself said holds the retry back.
      expect(await drive(client({ throttle: false }).listPets())).toEqual([]);
      // The reset is the next whole second past now + 20 s (00:00:31), 20.75 s after the 429;
      // the retry goes no sooner, and within a second of it.
      expect(after(arrivals)[0]).toBeGreaterThanOrEqual(20_750);
      expect(after(arrivals)[0]).toBeLessThanOrEqual(21_750);
    },
  );

  it.each([
    ['seconds', () => '2, 5'],
    ['IMF-fixdates', (now: number) => `${new Date(Math.floor(now / 1000) * 1000 + 5_000).toUTCString()}, ${new Date(Math.floor(now / 1000) * 1000 + 2_000).toUTCString()}`],
  ])('Retry-After sent twice in %s (a gateway\'s and the API\'s, joined by fetch): the longer wait binds every call (before: both ignored, and the calls went after the backoff, inside both windows)', async (_, value) => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { arrivals } = await serve((n, now) => (n === 0 ? { status: 429, headers: { 'Retry-After': value(now) } } : { status: 200 }));
    expect(await drive(together(client(), 3))).toHaveLength(3);
    expect(arrivals).toHaveLength(4);
    expect(Math.min(...after(arrivals))).toBeGreaterThanOrEqual(4_750);
    expect(Math.max(...after(arrivals))).toBeLessThanOrEqual(6_000);
  });

  it('a malformed Retry-After without a budget falls back to backoff, and the call still succeeds', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429, headers: { 'Retry-After': '-5' } } : { status: 200 }));
    expect(await drive(client().listPets())).toEqual([]);
    // The first backoff with Math.random() = 0.5: 250 ms.
    expect(after(arrivals)[0]).toBeGreaterThanOrEqual(250);
    expect(after(arrivals)[0]).toBeLessThan(1_000);
  });

  it.each([
    ['2 minutes behind', 120_000],
    ['2 minutes ahead', -120_000],
    ['5 minutes behind', 300_000],
    ['5 minutes ahead', -300_000],
  ])('an IMF-fixdate Retry-After is measured on the server\'s clock, with the client %s', async (_, skewMs) => {
    // Before: compared with the client's clock, 2 minutes behind waited 2 minutes too long (or
    // was refused), 2 minutes ahead did not wait at all.
    const { arrivals } = await serve(
      (n, now) => (n === 0 ? { status: 429, headers: { 'Retry-After': new Date(Math.floor(now / 1000) * 1000 + 5_000).toUTCString() } } : { status: 200 }),
      { skewMs },
    );
    expect(await drive(client().listPets())).toEqual([]);
    const asked = Math.floor(arrivals[0]! / 1000) * 1000 + 5_000;
    expect(arrivals[1]).toBeGreaterThanOrEqual(asked);
    expect(arrivals[1]).toBeLessThanOrEqual(asked + 1_000);
  });

  it.each([
    ['an X-RateLimit-Reset 10 s in the past', (now: number) => budget(60, 0, now - 10_000)],
    ['an IETF RateLimit with t=0', () => ({ RateLimit: '"default";r=0;t=0' })],
    ['Retry-After: 0', () => ({ 'Retry-After': '0' })],
    ['a Retry-After date 10 s in the past', (now: number) => ({ 'Retry-After': new Date(now - 10_000).toUTCString() })],
  ])('a 429 that names no wait (%s) backs off exponentially (before: both retries went at once, with no wait; for Retry-After, into the window the 429 was about)', async (_, headers) => {
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    const { arrivals } = await serve((n, now) => (n < 2 ? { status: 429, headers: headers(now) } : { status: 200 }));
    expect(await drive(client().listPets())).toEqual([]);
    expect(arrivals).toHaveLength(3);
    // The backoff of each retry with Math.random() = 0.99: 495 ms, then 990 ms.
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(495);
    expect(arrivals[2]! - arrivals[1]!).toBeGreaterThanOrEqual(990);
  });

  it('a bare 429 blocks every call of the client for the backoff, not only the call that got it', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429 } : { status: 200 }));
    expect(await drive(together(client(), 5))).toHaveLength(5);
    // Backoff of the first retry with Math.random() = 0.99: 495 ms. Before, the other calls went at once.
    expect(Math.min(...after(arrivals))).toBeGreaterThanOrEqual(495);
  });
});

describe('no single response poisons the client', () => {
  it('an X-RateLimit-Reset sent in milliseconds is not stored (before: every later call refused, "56,940 years")', async () => {
    const { arrivals } = await serve((_, now) => ({ status: 200, headers: { ...budget(60, 0, 0), 'X-RateLimit-Reset': String(now) } }));
    const c = client({ maxRetryDelay: 0 });
    expect(await drive(c.listPets())).toEqual([]);
    expect(await drive(c.listPets())).toEqual([]);
    expect(arrivals).toHaveLength(2);
    expect(c.rateLimit.getSnapshot()).toBeUndefined();
  });

  it('values past the Date range are malformed, not a RangeError (before: a raw RangeError from toISOString)', async () => {
    const { arrivals } = await serve(() => ({ status: 200, headers: { ...budget(60, 0, 0), 'X-RateLimit-Reset': '99999999999999999' } }));
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    expect(await drive(c.listPets())).toEqual([]);
    expect(arrivals).toHaveLength(2);
    await server!.close();
    server = await startHostile(() => ({ status: 429, headers: { 'Retry-After': '99999999999999', ...budget(60, 0, 0), 'X-RateLimit-Reset': '99999999999999999' } }));
    const error = await drive(client({ maxRetries: 0 }).listPets());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfterMs: undefined });
  });

  it('a Retry-After further ahead than a day is ignored', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429, headers: { 'Retry-After': '172800' } } : { status: 200 }));
    expect(await drive(client().listPets())).toEqual([]);
    expect(after(arrivals)[0]).toBeLessThan(1_000);
  });

  it('an X-RateLimit-Reset further ahead than a day is not stored: later calls are sent, and a 429 with it falls back to backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { arrivals } = await serve((n, now) => ({ status: n === 1 ? 429 : 200, headers: budget(60, 0, now + 2 * DAY) }));
    const c = client({ maxRetryDelay: 0 });
    expect(await drive(c.listPets())).toEqual([]);
    expect(c.rateLimit.getSnapshot()).toBeUndefined();
    // Sent (not refused for two days), answered 429, retried after the backoff (0 with random 0).
    expect(await drive(c.listPets())).toEqual([]);
    expect(arrivals).toHaveLength(3);
    expect(arrivals[2]! - arrivals[1]!).toBeLessThan(1_000);
  });

  it('without a Date header, X-RateLimit-Reset is measured on the client\'s own clock', async () => {
    const { arrivals } = await serve((n, now) => (n === 0 ? { status: 200, date: false, headers: budget(60, 0, now + 5_000) } : { status: 200 }));
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    expect(await drive(c.listPets())).toEqual([]);
    // The reset is the next whole second past now + 5 s (00:00:16), 5.75 s after the first answer.
    expect(after(arrivals)[0]).toBeGreaterThanOrEqual(5_750);
    expect(after(arrivals)[0]).toBeLessThanOrEqual(6_750);
  });

  /**
   * Answers carry these `X-RateLimit-Limit`, `-Remaining` and `-Reset` values (each a header, or a
   * list sent as that many headers), which must read as 5 with none left: the throttle then holds
   * back 10 calls that may not wait.
   */
  async function spentBudgetHoldsBack(values: (now: number) => (string | string[])[]) {
    const { arrivals } = await serve((_, now) => (res) => {
      res.sendDate = false;
      res.setHeader('Date', new Date(now).toUTCString());
      const [limit, remaining, reset] = values(now);
      res.setHeader('X-RateLimit-Limit', limit!);
      res.setHeader('X-RateLimit-Remaining', remaining!);
      res.setHeader('X-RateLimit-Reset', reset!);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
    });
    const c = client({ maxRetryDelay: 0 });
    expect(await drive(c.listPets())).toEqual([]);
    expect(c.rateLimit.getSnapshot()).toMatchObject({ limit: 5, remaining: 0 });
    const refused = await drive(Promise.allSettled(Array.from({ length: 10 }, () => c.listPets())));
    expect((refused as PromiseSettledResult<unknown>[]).map((r) => r.status === 'rejected' && r.reason)).toEqual(Array(10).fill(expect.objectContaining({ name: 'ThrottledError', code: 'budget_spent' })));
    expect(arrivals).toHaveLength(1);
  }

  it.each([
    ['the same values twice', ['5', '5'], ['0', '0'], [30_000, 30_000]],
    ['a gateway\'s above the API\'s', ['60', '5'], ['59', '0'], [60_000, 30_000]],
  ])('X-RateLimit-* sent twice (%s, joined by fetch as "a, b"): the member with the fewest requests left binds, and the throttle holds back (before: read as absent, the throttle stepped aside and 10 calls went into a spent budget)', async (_, limits, remainings, resetsIn) => {
    await spentBudgetHoldsBack((now) => [limits, remainings, resetsIn.map((ms) => String(Math.ceil((now + ms) / 1000)))]);
  });

  it('X-RateLimit-* sent twice with a member missing or malformed is absent as a whole, as one malformed header is', async () => {
    await serve((_, now) => (res) => {
      res.setHeader('X-RateLimit-Limit', ['60', '60']);
      res.setHeader('X-RateLimit-Remaining', ['0', 'soon']);
      res.setHeader('X-RateLimit-Reset', String(Math.ceil((now + 30_000) / 1000)));
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
    });
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    expect(c.rateLimit.getSnapshot()).toBeUndefined();
  });

  it.each([
    ['a trailing comma', (value: string): string | string[] => `${value},`],
    ['a second header that is empty', (value: string): string | string[] => [value, '']],
  ])('X-RateLimit-* with an empty member (%s), which RFC 9110 (section 5.6.1) has recipients ignore, are read without it, and the throttle holds back (before: read as absent, the throttle stepped aside and 10 calls went into a spent budget)', async (_, withEmpty) => {
    await spentBudgetHoldsBack((now) => ['5', '0', String(Math.ceil((now + 30_000) / 1000))].map(withEmpty));
  });

  it('answers delivered out of order within a window: the lowest remaining holds, and the next call waits for the reset', async () => {
    const held: (() => void)[] = [];
    const { arrivals } = await serve((n, now) => {
      if (n === 0) return { status: 200, headers: budget(4, 3, now + 30_000) };
      if (n >= 4) return { status: 200, headers: budget(4, 3, now + 30_000) };
      // Requests 1-3 spend the budget (remaining 2, 1, 0); their answers are held, then sent last first.
      return (res) => void held.push(() => res.writeHead(200, { 'Content-Type': 'application/json', Date: new Date(now).toUTCString(), ...budget(4, 3 - n, now + 30_000) }).end('[]'));
    });
    const c = client();
    let read = 0;
    const calls = Promise.all(Array.from({ length: 5 }, () => c.listPets().finally(() => read++)));
    await until(() => held.length === 3 && read === 1, 'three requests spend the budget');
    // Each answer is read before the next is sent.
    for (const [i, answer] of held.reverse().entries()) {
      answer();
      await until(() => read === 2 + i, `answer ${i + 1} is read`);
    }
    expect(await drive(calls)).toHaveLength(5);
    // The fifth call waits for the reset (00:00:41) instead of following the last answer (remaining 2).
    expect(arrivals).toHaveLength(5);
    expect(arrivals[4]).toBeGreaterThanOrEqual(Math.ceil((arrivals[0]! + 30_000) / 1000) * 1000);
  });
});

describe('clock skew: the server\'s window is judged on the server\'s clock', () => {
  it.each([
    ['2 minutes behind', 120_000],
    ['2 minutes ahead', -120_000],
    ['5 minutes behind', 300_000],
    ['5 minutes ahead', -300_000],
    ['60 s ahead', -60_000],
  ])('a client %s serves 12 calls from a 5-per-30-s server with no 429 and nothing inside a window', async (_, skewMs) => {
    // Before: 2 minutes behind refused calls the server would take ("waiting 138 s"); 60 s ahead
    // sent 15 requests into a window the server announced as 30 s.
    const limiter = fixedWindow(5, 30_000);
    const { arrivals } = await serve(limiter.script, { skewMs });
    expect(await drive(together(client(), 12))).toHaveLength(12);
    expect(limiter.stats).toEqual({ served: 12, limited: 0, inside: 0 });
    // The first call of the second window goes within a second of its start, no later.
    const second = Math.floor(arrivals[0]! / 30_000) * 30_000 + 30_000;
    expect(arrivals[5]).toBeGreaterThanOrEqual(second);
    expect(arrivals[5]).toBeLessThanOrEqual(second + 1_000);
  });
});

describe('this machine\'s clock stepping back (NTP, a user) keeps what was left of each window', () => {
  const HOUR = 3_600_000;

  it('after a 429 with Retry-After 2, a step back of an hour: the next call waits out the 2 s, not an hour more (before: refused, "until" an hour ahead)', async () => {
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429, headers: { 'Retry-After': '2' } } : { status: 200 }));
    const c = client();
    expect(await drive(c.listPets(undefined, { maxRetries: 0 }))).toBeInstanceOf(RateLimitError);
    vi.setSystemTime(Date.now() - HOUR);
    expect(await drive(c.listPets())).toEqual([]);
    // Both clocks stepped back: the time that passed between the two requests is the gap plus the hour.
    const waited = arrivals[1]! - arrivals[0]! + HOUR;
    expect(waited).toBeGreaterThanOrEqual(2_000);
    expect(waited).toBeLessThanOrEqual(3_000);
  });

  it('with the budget spent until a reset 10 s away, a step back of an hour: the next call waits out the 10 s, not an hour more (before: refused)', async () => {
    const { arrivals } = await serve((n, now) => ({ status: 200, headers: budget(60, n === 0 ? 0 : 59, now + 10_000) }));
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    vi.setSystemTime(Date.now() - HOUR);
    expect(await drive(c.listPets())).toEqual([]);
    // The reset is the next whole second past now + 10 s (00:00:21), 10.75 s after the first answer.
    const waited = arrivals[1]! - arrivals[0]! + HOUR;
    expect(waited).toBeGreaterThanOrEqual(10_750);
    expect(waited).toBeLessThanOrEqual(11_750);
  });
});

describe('an unannounced budget is not a budget of one', () => {
  it('before the first answer one request probes the budget and the others wait for it', async () => {
    let answerFirst: (() => void) | undefined;
    const { arrivals } = await serve((n, now) =>
      n === 0 ? (res) => void (answerFirst = () => res.writeHead(200, { 'Content-Type': 'application/json', ...budget(60, 59, now + 30_000) }).end('[]')) : { status: 200, headers: budget(60, 50, now + 30_000) },
    );
    const calls = together(client(), 5);
    await until(() => answerFirst !== undefined, 'the probe arrived');
    for (let i = 0; i < 10; i++) await step(100);
    expect(arrivals).toHaveLength(1);
    answerFirst!();
    expect(await drive(calls)).toHaveLength(5);
    expect(arrivals).toHaveLength(5);
  });

  it('without rate-limit headers, 50 calls go out together after the first answer (before: one at a time, 50 calls in 1.1 s instead of 0.13 s)', async () => {
    const held: (() => void)[] = [];
    const { maxInFlight, arrivals } = await serve((n) => (res) => {
      const answer = () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
      if (n === 0) return answer();
      held.push(answer);
      // Answer only once everyone is in: a client that sends one at a time never gets here.
      if (held.length === 49) for (const release of held) release();
    });
    expect(await drive(together(client(), 50), { maxMs: 10_000 })).toHaveLength(50);
    expect(arrivals).toHaveLength(50);
    expect(maxInFlight()).toBe(49);
  });

  it('without rate-limit headers a 429 still blocks every call for its Retry-After', async () => {
    const { arrivals } = await serve((n) => (n === 1 ? { status: 429, headers: { 'Retry-After': '3' } } : { status: 200 }));
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    let told = false;
    c.on('retry', () => void (told = true));
    const limited = c.listPets();
    await until(() => told, 'the 429 arrived');
    expect(await drive(Promise.all([limited, together(c, 5)]))).toHaveLength(2);
    expect(arrivals).toHaveLength(8);
    expect(Math.min(...arrivals.slice(2))).toBeGreaterThanOrEqual(arrivals[1]! + 3_000);
  });

  it('one answer without rate-limit headers (a proxy\'s 502) inside a spent window does not make the throttle forget the budget', async () => {
    let late: (() => void) | undefined;
    const { arrivals } = await serve((n, now) => {
      if (n === 0) return { status: 200, headers: budget(60, 2, now + 30_000) };
      if (n === 1) return { status: 200, headers: budget(60, 0, now + 30_000) };
      // The proxy in front of the API answers this one itself, without the API's headers.
      if (n === 2) return (res) => void (late = () => res.writeHead(502, { 'Content-Type': 'text/plain' }).end('Bad Gateway'));
      return { status: 200, headers: budget(60, 59, now + 30_000) };
    });
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    const spending = Promise.allSettled([c.listPets(undefined, { maxRetries: 0 }), c.listPets(undefined, { maxRetries: 0 })]);
    await until(() => late !== undefined && c.rateLimit.getSnapshot()?.remaining === 0, 'both requests sent, and the one that spends the budget answered');
    late!();
    await drive(spending);
    expect(c.rateLimit.getSnapshot()).toMatchObject({ remaining: 0 });
    // The server said nothing is left until 00:00:41; a call sent before then is a 429 (a strike).
    expect(await drive(c.listPets())).toEqual([]);
    expect(arrivals[3]).toBeGreaterThanOrEqual(Math.ceil((arrivals[1]! + 30_000) / 1000) * 1000);
  });

  it('the IETF draft\'s RateLimit header is read: remaining 0 with t=3 holds the next call 3 s, with the quota from RateLimit-Policy', async () => {
    const { arrivals } = await serve((n) => ({ status: 200, headers: { RateLimit: `"default";r=${n === 0 ? 0 : 9};t=3`, 'RateLimit-Policy': '"default";q=10;w=60' } }));
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    expect(c.rateLimit.getSnapshot()).toMatchObject({ limit: 10, remaining: 0 });
    expect(await drive(c.listPets())).toEqual([]);
    expect(after(arrivals)[0]).toBeGreaterThanOrEqual(3_000);
    expect(after(arrivals)[0]).toBeLessThanOrEqual(4_000);
  });

  it('a 429 with only the IETF RateLimit header blocks until its t', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429, headers: { RateLimit: '"default";r=0;t=4' } } : { status: 200 }));
    expect(await drive(client({ throttle: false }).listPets())).toEqual([]);
    expect(after(arrivals)[0]).toBeGreaterThanOrEqual(4_000);
    expect(after(arrivals)[0]).toBeLessThanOrEqual(5_000);
  });

  it('a RateLimit item without t (optional in draft-11) gives no time to wait by: the items that have one are read', async () => {
    await serve(() => ({ status: 200, headers: { RateLimit: '"daily";r=0, "burst";r=7;t=30', 'RateLimit-Policy': '"burst";q=10;w=60' } }));
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    expect(c.rateLimit.getSnapshot()).toMatchObject({ limit: 10, remaining: 7, resetAt: new Date(START + 30_000) });
  });

  it('a RateLimit field whose items all lack t falls back to the X-RateLimit headers', async () => {
    await serve((_, now) => ({ status: 200, headers: { RateLimit: '"default";r=0', ...budget(60, 4, now + 20_000) } }));
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    expect(c.rateLimit.getSnapshot()).toMatchObject({ limit: 60, remaining: 4 });
  });

  it('Retry-After wins over the IETF RateLimit header on a 429', async () => {
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429, headers: { 'Retry-After': '2', RateLimit: '"default";r=0;t=10' } } : { status: 200 }));
    expect(await drive(client({ throttle: false }).listPets())).toEqual([]);
    expect(after(arrivals)[0]).toBeGreaterThanOrEqual(2_000);
    expect(after(arrivals)[0]).toBeLessThan(3_000);
  });
});

describe('one deadline and one abort per attempt, body included', () => {
  it('a body that trickles forever ends in TimeoutError and the server sees the connection closed (before: 16.8 MB more over 6 s)', async () => {
    await serve(() => ({ status: 200, stream: { kind: 'endless' } }));
    const error = await drive(client({ timeout: 1_000, maxRetries: 0 }).listPets());
    expect(error).toBeInstanceOf(TimeoutError);
    expect(await closesWithin(0, 2_000)).toBe(true);
    expect(server!.requests[0]!.closedEarly).toBe(true);
  });

  it('the caller\'s signal during the body read rejects with an AbortError carrying its reason and closes the connection', async () => {
    await serve(() => ({ status: 200, stream: { kind: 'endless' } }));
    const controller = new AbortController();
    const call = client({ maxRetries: 0 }).listPets(undefined, { signal: controller.signal });
    call.catch(() => {});
    await until(() => (server!.requests[0]?.written ?? 0) > 4_096, 'the body is flowing');
    const reason = new Error('user gave up');
    controller.abort(reason);
    const error = await drive(call);
    expect(error).toBeInstanceOf(AbortError);
    // The 200's head had arrived: whatever it was, the service acted on the request.
    expect(error).toMatchObject({ cause: reason, mayHaveSucceeded: true });
    expect(await closesWithin(0, 2_000)).toBe(true);
    expect(server!.requests).toHaveLength(1);
  });

  it('a body larger than maxResponseBytes is cut off with a ConnectionError (before: 100 MiB buffered, RSS 75 → 426 MB)', async () => {
    await serve(() => ({ status: 200, stream: { kind: 'huge', totalBytes: 100 * 1024 * 1024 } }));
    const error = await drive(client({ maxRetries: 0 }).listPets(), { stepMs: 1 });
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/larger than maxResponseBytes \(10485760 bytes\)/);
    expect(await closesWithin(0, 2_000)).toBe(true);
    expect(server!.requests[0]!.written).toBeLessThan(30 * 1024 * 1024);
  });

  it('a Content-Length above maxResponseBytes is refused from the head, without waiting for the body', async () => {
    // The head promises 20 MiB, then the body trickles: only the head can tell in time.
    await serve(() => ({ status: 200, headers: { 'Content-Length': String(20 * 1024 * 1024) }, stream: { kind: 'endless', chunkBytes: 1, everyMs: 50 } }));
    const error = await drive(client({ maxRetries: 0, timeout: 5_000, maxResponseBytes: 1024 * 1024 }).listPets());
    expect(error).not.toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/larger than maxResponseBytes \(1048576 bytes\)/);
    expect(await closesWithin(0, 2_000)).toBe(true);
  });
});

describe('createPet after a failure that may have reached the server says so (before: 26 of 65 failed creates were stored, nothing told the user)', () => {
  it('a 201 cut mid-body: ConnectionError with mayHaveSucceeded, status 201 and Location, sent once', async () => {
    await serve(() => ({
      status: 201,
      headers: { 'Content-Length': String(PET.length), Location: 'http://x/v1/pets/1' },
      body: PET,
      stream: { kind: 'cut', afterBytes: 10 },
    }));
    const error = await drive(client().createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ mayHaveSucceeded: true, status: 201 });
    expect((error as ConnectionError).headers?.get('Location')).toBe('http://x/v1/pets/1');
    expect((error as Error).message).toMatch(/The pet may have been created/);
    expect(server!.arrivals).toHaveLength(1);
  });

  it.each([
    [502, true],
    [500, true],
    [400, false],
  ])('a %i cut mid-body: ConnectionError with mayHaveSucceeded %s, as a 5xx (a gateway\'s, or the service failing part way) may come after the pet was stored and a 4xx says it was not, sent once (before: false after a 5xx)', async (status, may) => {
    const record = `{"code":"x","message":"failed","status":${status}}`;
    await serve(() => ({ status, headers: { 'Content-Length': String(record.length) }, body: record, stream: { kind: 'cut', afterBytes: 10 } }));
    const error = await drive(client().createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ mayHaveSucceeded: may, status });
    expect((error as Error).message.includes('The pet may have been created')).toBe(may);
    expect(server!.arrivals).toHaveLength(1);
  });

  it.each([
    ['no body', ''],
    ['a body that is not a Pet', '{"name":"Rex"}'],
  ])('a 201 with %s: ResponseValidationError whose message says the pet may have been created, sent once (before: it only said to check baseUrl)', async (_, body) => {
    await serve(() => ({ status: 201, body }));
    const error = await drive(client().createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(ResponseValidationError);
    expect(error).toMatchObject({ status: 201 });
    expect((error as Error).message).toMatch(/The pet may have been created/);
    expect(server!.arrivals).toHaveLength(1);
  });

  it('a connection dropped after the request arrived: ConnectionError with mayHaveSucceeded, no status, sent once', async () => {
    await serve(() => 'drop');
    const error = await drive(client().createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).not.toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ mayHaveSucceeded: true, status: undefined });
    expect((error as Error).message).toMatch(/The pet may have been created/);
    expect(server!.requests.map((r) => JSON.parse(r.body) as unknown)).toEqual([{ name: 'Rex', categoryId: 1 }]);
  });

  it('a timeout with no answer: TimeoutError with mayHaveSucceeded, the connection closed, sent once', async () => {
    await serve(() => 'hold');
    const error = await drive(client({ timeout: 2_000 }).createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ mayHaveSucceeded: true });
    expect((error as Error).message).toMatch(/The pet may have been created/);
    expect(await closesWithin(0, 2_000)).toBe(true);
    expect(server!.arrivals).toHaveLength(1);
  });

  it('a refused connection never reached the server: mayHaveSucceeded is false and the message says nothing of a created pet', async () => {
    const closed = await serve(() => ({ status: 201, body: PET }));
    await closed.close();
    const error = await drive(client().createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ mayHaveSucceeded: false });
    expect((error as Error).message).not.toMatch(/may have been created/);
  });
});

describe('a call refused unsent is a ThrottledError', () => {
  it('a spent budget whose reset is past maxRetryDelay: code budget_spent, retryAfterMs, no status or headers, nothing sent', async () => {
    const { arrivals } = await serve((_, now) => ({ status: 200, headers: budget(60, 0, now + 30_000) }));
    const c = client({ maxRetryDelay: 10_000 });
    expect(await drive(c.listPets())).toEqual([]);
    const error = await drive(c.listPets());
    expect(error).toBeInstanceOf(ThrottledError);
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ code: 'budget_spent' });
    // The reset (00:00:41) is 30.75 s after the answer, on the server's clock.
    expect((error as ThrottledError).retryAfterMs).toBeGreaterThanOrEqual(30_000);
    expect((error as ThrottledError).retryAfterMs).toBeLessThanOrEqual(31_750);
    expect('status' in (error as object) || 'headers' in (error as object)).toBe(false);
    expect(arrivals).toHaveLength(1);
  });

  it('a 429 window past maxRetryDelay: the call that got it throws RateLimitError, the next is refused unsent with code rate_limited', async () => {
    const { arrivals } = await serve(() => ({ status: 429, headers: { 'Retry-After': '120' } }));
    const c = client();
    expect(await drive(c.listPets())).toBeInstanceOf(RateLimitError);
    const error = await drive(c.listPets());
    expect(error).toBeInstanceOf(ThrottledError);
    expect(error).toMatchObject({ code: 'rate_limited' });
    expect((error as ThrottledError).retryAfterMs).toBeGreaterThan(119_000);
    expect((error as ThrottledError).retryAfterMs).toBeLessThanOrEqual(120_000);
    expect(arrivals).toHaveLength(1);
  });

  it('while a ban the server announced lasts, a refused call says api_key_banned (before: rate_limited)', async () => {
    const { arrivals } = await serve(() => ({
      status: 429,
      headers: { 'Retry-After': '900' },
      body: '{"code":"api_key_banned","message":"banned","status":429}',
    }));
    const c = client();
    expect(await drive(c.listPets())).toMatchObject({ name: 'RateLimitError', code: 'api_key_banned' });
    expect(await drive(c.listPets())).toMatchObject({ name: 'ThrottledError', code: 'api_key_banned', retryAfterMs: expect.any(Number) });
    expect(arrivals).toHaveLength(1);
  });
});

describe('every failure is a PetStoreError, says what happened, and leaks nothing', () => {
  it('a rateLimit.subscribe listener that throws is reported, createPet still resolves, and later listeners run (before: createPet rejected with the listener\'s error although the pet was stored)', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    const { arrivals } = await serve((_, now) => ({ status: 201, headers: budget(60, 59, now + 30_000), body: PET }));
    const c = client();
    c.rateLimit.subscribe(() => {
      throw new Error('listener bug');
    });
    const later = vi.fn();
    c.rateLimit.subscribe(later);
    expect(await drive(c.createPet({ name: 'Rex', categoryId: 1 }))).toEqual(JSON.parse(PET));
    expect(later).toHaveBeenCalledTimes(1);
    expect(reported).toEqual([new Error('listener bug')]);
    expect(arrivals).toHaveLength(1);
  });

  it('an answer that came through a redirect to another origin, which fetch sends no Authorization to, says so and where to point baseUrl (before: a bare "missing API key" 401 for a key that was given)', async () => {
    // The service's own address: the other origin (another port), which answers as the API does.
    const service = await startHostile((): Answer => (res, req) => {
      const status = req.headers.authorization ? 200 : 401;
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(status === 200 ? '[]' : '{"code":"missing_api_key","message":"An API key is required.","status":401}');
    });
    try {
      const { requests } = await serve(() => ({ status: 301, headers: { Location: `${service.url}/pets` }, body: '' }));
      const error = await drive(client().listPets());
      expect(error).toBeInstanceOf(AuthenticationError);
      expect((error as Error).message).toContain(`was redirected to ${new URL(service.url).origin}, which fetch sends no Authorization to: set baseUrl to the service's own address`);
      expect(requests).toHaveLength(1);
      expect(service.requests).toHaveLength(1);
    } finally {
      await service.close();
    }
  });

  it('an answer that came through a redirect within the service\'s own origin, which keeps the Authorization, does not speak of the redirect', async () => {
    const { requests } = await serve((n) =>
      n === 0
        ? { status: 301, headers: { Location: `${server!.url}/pets/moved` }, body: '' }
        : { status: 401, body: '{"code":"invalid_api_key","message":"The API key is not valid.","status":401}' },
    );
    const error = await drive(client().listPets());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).not.toMatch(/redirected/);
    expect(requests.map((request) => request.path)).toEqual(['/v1/pets', '/v1/pets/moved']);
  });

  it.each(['\r', '\n', '\0', 'é', '\u2028'])('an API key with %j is a ValidationError at construction that never echoes the key (before: a raw TypeError holding it)', async (bad) => {
    await serve(() => ({ status: 200 }));
    let thrown: unknown;
    try {
      client({ apiKey: `${KEY}${bad}x` });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect(`${String(thrown)} ${JSON.stringify(thrown)} ${inspect(thrown, { depth: 6 })}`).not.toContain(KEY);
    expect(server!.arrivals).toHaveLength(0);
  });

  it.each([
    ['credentials', (url: string) => url.replace('http://', 'http://user:hunter2@'), /must not hold credentials/],
    ['a password only', (url: string) => url.replace('http://', 'http://:hunter2@'), /must not hold credentials/],
    ['the ftp: scheme', (url: string) => url.replace('http:', 'ftp:'), /http or https/],
    ['the file: scheme', () => 'file:///etc/hunter2/v1', /http or https/],
  ])('a baseUrl with %s is refused at construction without echoing the password (before: accepted, every call failed, the password in errors and String(client))', async (_, make, message) => {
    await serve(() => ({ status: 200 }));
    let thrown: unknown;
    try {
      new PetStoreClient({ apiKey: KEY, baseUrl: make(server!.url) });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect((thrown as Error).message).toMatch(message);
    expect(`${String(thrown)} ${JSON.stringify(thrown)} ${inspect(thrown, { depth: 6 })}`).not.toContain('hunter2');
    expect(server!.arrivals).toHaveLength(0);
  });

  it.each([
    ['a 401 Error record that echoes the key', { status: 401, body: JSON.stringify({ code: 'invalid_api_key', message: `Invalid API key ${KEY}`, status: 401 }) }, 'AuthenticationError'],
    ['a proxy\'s 502 debug page that echoes the request', { status: 502, headers: { 'Content-Type': 'text/html' }, body: `<pre>Authorization: Bearer ${KEY}</pre>` }, 'InternalServerError'],
    ['a 200 that is not JSON and echoes the request', { status: 200, headers: { 'Content-Type': 'text/plain' }, body: `Authorization: Bearer ${KEY}` }, 'ResponseValidationError'],
    [
      'a 401 whose WWW-Authenticate quotes the key',
      { status: 401, headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="Invalid API key ${KEY}"` }, body: JSON.stringify({ code: 'invalid_api_key', message: 'Invalid API key', status: 401 }) },
      'AuthenticationError',
    ],
    ['a 503 whose debug header echoes the request', { status: 503, headers: { 'X-Debug-Authorization': `Bearer ${KEY}` }, body: '' }, 'InternalServerError'],
  ])('%s: the error never shows the key, in its message, String, JSON or inspect (before: "Invalid API key sk_live_…" in the message)', async (_, reply, name) => {
    await serve(() => reply);
    const error = await drive(client({ maxRetries: 0 }).listPets());
    expect(error).toMatchObject({ name });
    expect(`${String(error)} ${JSON.stringify(error)} ${inspect(error, { depth: 6 })}`).not.toContain(KEY);
    expect([...((error as { headers?: Headers }).headers ?? [])].join()).not.toContain(KEY);
    // Only the key is hidden: the rest of what the service said is kept.
    if (name === 'AuthenticationError' && reply.body.includes(KEY)) expect(error).toMatchObject({ code: 'invalid_api_key', message: expect.stringContaining('Invalid API key [redacted]') });
  });

  it.each(['k', 'sk+live.(1)$*[x]|y'])('a key (%j) is hidden only where it stands alone, whatever it holds, so the rest of the answer still reads', async (apiKey) => {
    await serve(() => ({ status: 401, body: JSON.stringify({ code: 'invalid_api_key', message: `Invalid API key ${apiKey}: check it`, status: 401 }) }));
    const error = await drive(client({ apiKey, maxRetries: 0 }).listPets());
    expect(error).toMatchObject({ code: 'invalid_api_key', message: expect.stringContaining('Invalid API key [redacted]: check it') });
  });

  it('a key that ends a sentence ("Incorrect API key provided: sk_…. You can find…") is hidden, and a longer token it begins is left as it is (before: the period read as part of a longer token, and the key showed)', async () => {
    await serve(() => ({ status: 401, body: JSON.stringify({ code: 'invalid_api_key', message: `Incorrect API key provided: ${KEY}. You can find yours in ${KEY}.old... or ${KEY}...`, status: 401 }) }));
    const error = await drive(client({ maxRetries: 0 }).listPets());
    expect(error).toMatchObject({ code: 'invalid_api_key', message: expect.stringContaining(`Incorrect API key provided: [redacted]. You can find yours in ${KEY}.old... or [redacted]...`) });
  });

  it.each([
    ['PHP\'s json_encode escapes "/"', 'Invalid API key abc\\/def+ghi=='],
    ['.NET\'s System.Text.Json escapes "+"', 'Invalid API key abc/def\\u002Bghi=='],
  ])('a base64 key echoed in an Error record whose JSON escapes its characters (%s) is hidden too (before: the text matched nothing, and the parsed message showed the key)', async (_, message) => {
    const apiKey = 'abc/def+ghi==';
    await serve(() => ({ status: 401, body: `{"code":"invalid_api_key","message":"${message}","status":401}` }));
    const error = await drive(client({ apiKey, maxRetries: 0 }).listPets());
    expect(error).toMatchObject({ name: 'AuthenticationError', code: 'invalid_api_key', message: expect.stringContaining('Invalid API key [redacted]') });
    expect(`${String(error)} ${JSON.stringify(error)} ${inspect(error, { depth: 6 })}`).not.toContain(apiKey);
  });

  it('String(client) and inspect(client) never show the key', async () => {
    await serve(() => ({ status: 200 }));
    const c = client();
    expect(`${String(c)} ${inspect(c)} ${JSON.stringify(c)}`).not.toContain(KEY);
  });

  it('no message of a failure on the wire holds the key', async () => {
    await serve(() => 'drop');
    const error = await drive(client({ maxRetries: 1 }).listPets());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(`${String(error)} ${JSON.stringify(error)} ${inspect(error, { depth: 6 })}`).not.toContain(KEY);
  });
});

describe('validation is the spec\'s, no stricter', () => {
  it('ids of 0 and negative int64 are valid Pets (a mock generated from an OpenAPI description sends them; before: ResponseValidationError)', async () => {
    await serve(() => ({ status: 200, body: '[{"id":0,"name":"Zero","categoryId":-1},{"id":-9007199254740991,"name":"Min","categoryId":0}]' }));
    expect(await drive(client().listPets())).toEqual([
      { id: 0, name: 'Zero', categoryId: -1 },
      { id: -9007199254740991, name: 'Min', categoryId: 0 },
    ]);
  });
  it('a 257-character name is sent, and the reference server answers 400 naming the field; 256 characters are created', async () => {
    const reference = createReferenceServer({ apiKeys: { [KEY]: 'pro' } });
    const c = new PetStoreClient({ apiKey: KEY, baseUrl: 'https://reference.test/v1', fetch: reference.fetch, logLevel: 'off' });
    const error = await drive(c.createPet({ name: 'x'.repeat(257), categoryId: 1 }));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error).toMatchObject({ status: 400 });
    expect((error as Error).message).toMatch(/name/);
    expect(reference.inspect().keys[KEY]!.requests).toBe(1);
    expect(await drive(c.createPet({ name: 'x'.repeat(256), categoryId: 1 }))).toMatchObject({ name: 'x'.repeat(256) });
  });
});
