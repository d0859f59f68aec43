/**
 * The client against servers other than our own: a node:http server scripted per test sends what
 * real APIs and proxies send (odd Retry-After values, resets in milliseconds, skewed clocks, no
 * rate-limit headers, endless or huge bodies, cut connections). Each test names what the client
 * did before it read headers strictly and measured times on the server's clock.
 *
 * Time is fake (setTimeout, clearTimeout, Date) and driven by the test; sockets are real, and
 * `setImmediate` (left real) lets their I/O run between steps.
 */
import { setInterval as realSetInterval, clearInterval as realClearInterval } from 'node:timers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionError, PetStoreClient, PetStoreError, TimeoutError, type ClientOptions } from '@animal-store/sdk';
import { budget, startHostile, type Answer, type Hostile } from './server.js';

/** 2026-06-01T00:00:10.250Z: off the second, where rounding shows. */
const START = Date.UTC(2026, 5, 1, 0, 0, 10, 250);
const KEY = 'sk_live_HOSTILEk3y';
const PET = '{"id":1,"name":"Rex","categoryId":1}';

let server: Hostile | undefined;
beforeEach(() => void vi.useFakeTimers({ now: START, toFake: ['setTimeout', 'clearTimeout', 'Date'] }));
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
});

async function serve(script: (n: number, now: number) => Answer, options?: { skewMs?: number }) {
  server = await startHostile(script, options);
  return server;
}

const client = (options: ClientOptions = {}) => new PetStoreClient({ apiKey: KEY, baseUrl: server!.url, ...options });

/** Moves fake time in steps, letting real socket I/O run between them, until `promise` settles. */
async function drive<T>(promise: Promise<T>, { stepMs = 50, maxMs = 600_000 } = {}): Promise<T | Error> {
  let done = false;
  let outcome: T | Error = new Error('unsettled');
  promise.then(
    (value) => ((done = true), (outcome = value)),
    (error: Error) => ((done = true), (outcome = error)),
  );
  for (let elapsed = 0; !done && elapsed <= maxMs; elapsed += stepMs) {
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    await vi.advanceTimersByTimeAsync(stepMs);
  }
  if (!done) throw new Error(`did not settle within ${maxMs} ms of fake time`);
  return outcome;
}

/** Arrivals after the first, relative to it. */
const after = (arrivals: number[]) => arrivals.slice(1).map((t) => t - arrivals[0]!);

describe('Retry-After is whole seconds or an IMF-fixdate, nothing else', () => {
  it('"1.5" rounds up to 2 s, and 10 concurrent calls send nothing inside it (before: 30 requests in 80 ms)', async () => {
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429, headers: { 'Retry-After': '1.5' } } : { status: 200, body: '[]' }));
    const outcomes = await drive((() => { const c = client(); return Promise.all(Array.from({ length: 10 }, () => c.listPets())); })());
    expect(outcomes).toHaveLength(10);
    expect(arrivals).toHaveLength(11);
    expect(Math.min(...after(arrivals))).toBeGreaterThanOrEqual(2_000);
  });

  it.each(['-5', '5, 10', '1.5e3', 'soon', 'Wed, 21 Oct 2026 07:28:00 +0000', '2026-06-01T00:00:30Z'])(
    // Before, "-5", "5, 10" and a date not in GMT parsed as dates in the past: no wait at all.
    'Retry-After %j is ignored: the client falls back to X-RateLimit-Reset',
    async (value) => {
      const { arrivals } = await serve((n, now) =>
        n === 0 ? { status: 429, headers: { 'Retry-After': value, ...budget(60, 0, now + 20_000) } } : { status: 200 },
      );
      // throttle off: only what the 429 itself said holds the retry back.
      expect(await drive(client({ throttle: false }).listPets())).toEqual([]);
      // The reset is at the next whole second past now + 20 s: 19.75 s after the 429.
      expect(Math.min(...after(arrivals))).toBeGreaterThanOrEqual(19_750);
    },
  );

  it('an IMF-fixdate is measured on the server\'s clock', async () => {
    const { arrivals } = await serve(
      (n, now) => (n === 0 ? { status: 429, headers: { 'Retry-After': new Date(Math.floor(now / 1000) * 1000 + 5_000).toUTCString() } } : { status: 200 }),
      { skewMs: 120_000 },
    );
    expect(await drive(client().listPets())).toEqual([]);
    expect(after(arrivals)[0]).toBeGreaterThanOrEqual(4_750);
    expect(after(arrivals)[0]).toBeLessThan(5_750);
  });

  it('a bare 429 blocks every call of the client for the backoff, not only the call that got it', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.99);
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429 } : { status: 200 }));
    expect(await drive((() => { const c = client(); return Promise.all(Array.from({ length: 5 }, () => c.listPets())); })())).toHaveLength(5);
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
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ name: 'RateLimitError', retryAfterMs: undefined });
  });

  it('a Retry-After further ahead than a day is ignored', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { arrivals } = await serve((n) => (n === 0 ? { status: 429, headers: { 'Retry-After': '172800' } } : { status: 200 }));
    expect(await drive(client().listPets())).toEqual([]);
    expect(after(arrivals)[0]).toBeLessThan(1_000);
  });

  it('ids of 0 and negative int64 are valid Pets (a mock generated from an OpenAPI description sends them)', async () => {
    await serve(() => ({ status: 200, body: '[{"id":0,"name":"Zero","categoryId":-1},{"id":-9007199254740991,"name":"Min","categoryId":0}]' }));
    expect(await drive(client().listPets())).toHaveLength(2);
  });
});

describe('clock skew: times are the server\'s', () => {
  it.each([
    ['2 minutes behind', 120_000],
    ['2 minutes ahead', -120_000],
    ['5 minutes behind', 300_000],
    ['5 minutes ahead', -300_000],
  ])('a client %s waits for the reset the server announced, no sooner and no more than a second later', async (_, skewMs) => {
    // Before: 2 minutes behind refused the call ("waiting 138 s"); 60 s ahead sent into the window.
    const { arrivals } = await serve((n, now) => ({ status: 200, headers: budget(60, n === 0 ? 0 : 59, now + 30_000) }), { skewMs });
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    expect(await drive(c.listPets())).toEqual([]);
    const reset = Math.ceil((arrivals[0]! + 30_000) / 1000) * 1000;
    expect(arrivals[1]).toBeGreaterThanOrEqual(reset);
    expect(arrivals[1]).toBeLessThanOrEqual(reset + 1_000);
  });
});

describe('an unannounced budget is not a budget of one', () => {
  it('without rate-limit headers, 50 calls go out together after the first answer (before: one at a time, 1.1 s)', async () => {
    const held: (() => void)[] = [];
    const { maxInFlight, arrivals } = await serve((n) => (res) => {
      const answer = () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('[]');
      if (n === 0) return answer();
      held.push(answer);
      // Answer only once everyone is in: a client that sends one at a time never gets here.
      if (held.length === 49) for (const release of held) release();
    });
    const c = client();
    expect(await drive(Promise.all(Array.from({ length: 50 }, () => c.listPets())), { maxMs: 10_000 })).toHaveLength(50);
    expect(arrivals).toHaveLength(50);
    expect(maxInFlight()).toBe(49);
  });

  it('the IETF draft\'s RateLimit header is read: remaining 0 with t=3 holds the next call 3 s', async () => {
    const { arrivals } = await serve((n) => ({ status: 200, headers: { RateLimit: `"default";r=${n === 0 ? 0 : 9};t=3`, 'RateLimit-Policy': '"default";q=10;w=60' } }));
    const c = client();
    expect(await drive(c.listPets())).toEqual([]);
    expect(c.rateLimit.getSnapshot()).toMatchObject({ limit: 10, remaining: 0 });
    expect(await drive(c.listPets())).toEqual([]);
    expect(after(arrivals)[0]).toBeGreaterThanOrEqual(3_000);
  });
});

describe('one deadline and one abort per attempt, body included', () => {
  it('a body that trickles forever ends in TimeoutError and the download stops (before: 16.8 MB more over 6 s)', async () => {
    let timer: ReturnType<typeof realSetInterval> | undefined;
    let written = 0;
    await serve(() => (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('[');
      timer = realSetInterval(() => {
        if (!res.destroyed) written += res.write(' '.repeat(1024)) ? 1024 : 0;
      }, 5);
    });
    const closed = server!.closed();
    const error = await drive(client({ timeout: 1_000, maxRetries: 0 }).listPets());
    expect(error).toBeInstanceOf(TimeoutError);
    await closed;
    const atClose = written;
    await new Promise((resolve) => setImmediate(resolve));
    realClearInterval(timer);
    expect(written).toBe(atClose);
  });

  it('a body larger than maxResponseBytes is cut off with a ConnectionError (before: 100 MiB buffered, RSS 75 → 426 MB)', async () => {
    let sent = 0;
    await serve(() => (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 32);
      const pump = () => {
        while (!res.destroyed && sent < 100 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
    const closed = server!.closed();
    const error = await drive(client({ maxRetries: 0 }).listPets(), { stepMs: 1 });
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(/larger than maxResponseBytes \(10485760 bytes\)/);
    await closed;
    expect(sent).toBeLessThan(30 * 1024 * 1024);
  });

  it('createPet whose 201 is cut mid-body says the pet may have been created and carries status and Location (before: 26 of 65 such creates stored, nothing said)', async () => {
    await serve(() => (res) => {
      res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': String(PET.length), Location: 'http://x/v1/pets/1' });
      res.write(PET.slice(0, 10), () => res.destroy());
    });
    const error = await drive(client().createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ mayHaveSucceeded: true, status: 201 });
    expect((error as ConnectionError).headers?.get('Location')).toBe('http://x/v1/pets/1');
    expect((error as Error).message).toMatch(/The pet may have been created/);
    expect(server!.arrivals).toHaveLength(1);
  });

  it('no message of these failures holds the key', async () => {
    await serve(() => (res) => res.destroy());
    const error = await drive(client({ maxRetries: 1 }).listPets());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(`${String(error)} ${JSON.stringify(error)} ${(error as Error).stack}`).not.toContain(KEY);
  });
});

describe('every failure is a PetStoreError, says what happened, and leaks nothing', () => {
  it('a rateLimit.subscribe listener that throws is reported, createPet still resolves, and later listeners run (before: createPet rejected with the listener\'s error although the pet was stored)', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    await serve((_, now) => ({ status: 201, headers: budget(60, 59, now + 30_000), body: PET }));
    const c = client();
    c.rateLimit.subscribe(() => {
      throw new Error('listener bug');
    });
    const later = vi.fn();
    c.rateLimit.subscribe(later);
    expect(await drive(c.createPet({ name: 'Rex', categoryId: 1 }))).toEqual(JSON.parse(PET));
    expect(later).toHaveBeenCalledTimes(1);
    expect(reported).toEqual([new Error('listener bug')]);
    vi.unstubAllGlobals();
  });

  it.each(['\r', '\n', '\0', 'é'])('an API key with %j is a ValidationError at construction that never echoes the key (before: a raw TypeError holding it)', async (bad) => {
    await serve(() => ({ status: 200 }));
    const thrown = (() => {
      try {
        client({ apiKey: `${KEY}${bad}x` });
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toMatchObject({ name: 'ValidationError' });
    expect(`${String(thrown)} ${JSON.stringify(thrown)}`).not.toContain(KEY);
    expect(server!.arrivals).toHaveLength(0);
  });

  it('a baseUrl with credentials is refused at construction without echoing the password (before: accepted, every call failed, the password in errors and String(client))', async () => {
    await serve(() => ({ status: 200 }));
    const withPassword = server!.url.replace('http://', 'http://user:hunter2@');
    expect(() => new PetStoreClient({ apiKey: KEY, baseUrl: withPassword })).toThrow(/must not hold credentials/);
    expect(() => new PetStoreClient({ apiKey: KEY, baseUrl: withPassword })).not.toThrow(/hunter2/);
    expect(() => new PetStoreClient({ apiKey: KEY, baseUrl: server!.url.replace('http:', 'ftp:') })).toThrow(/http or https/);
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
