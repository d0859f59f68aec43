// The reference server's rate limits as a client sees them on the wire (the strike window, the
// Date header, the IETF headers) and its fetch as every runtime calls it (Firefox's Request,
// aborted requests).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReferenceServer, type ReferenceServer, type ReferenceServerOptions } from '@animal-store/sdk/server';

/** 2026-06-01T00:00:10.500Z: half a second off the second, where rounding shows. */
const START = Date.UTC(2026, 5, 1, 0, 0, 10, 500);
const MINUTE_END = Date.UTC(2026, 5, 1, 0, 1, 0);

function server(options: ReferenceServerOptions = {}) {
  let now = START;
  const api = createReferenceServer({ apiKeys: { k: { perMinute: 1, perDay: 100 } }, now: () => now, ...options });
  const get = (path = '/v1/pets') => api.fetch(new Request(`http://localhost${path}`, { headers: { Authorization: 'Bearer k' } }));
  return { api, get, setNow: (ms: number) => void (now = ms) };
}

describe('rate limits on the wire', () => {
  it('a client that waits exactly until the announced reset is never counted inside the Retry-After window', async () => {
    const { api, get, setNow } = server({ apiKeys: { k: { perMinute: 5, perDay: 100 } }, banThreshold: 4 });
    for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200);
    const refused = await get();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('X-RateLimit-Reset')) * 1000).toBe(MINUTE_END);
    expect(refused.headers.get('Retry-After')).toBe('50'); // 49.5 s, rounded up
    // Before: the strike window ran to now + 50 s = 00:01:00.5, past the reset it announced, so
    // these five requests at the reset itself were five strikes, and the key was banned.
    setNow(MINUTE_END);
    for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200);
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 0, bans: 0 });
  });

  it('a key that waited out Retry-After is not counted inside it after the server\'s clock is set back', async () => {
    // Before: the window still ended at 00:01:00 on a clock now reading 23:59, so the next five
    // requests, each served with a 200, were five strikes, and the key was banned.
    const { api, get, setNow } = server({ apiKeys: { k: { perMinute: 5, perDay: 100 } }, banThreshold: 4 });
    for (let i = 0; i < 5; i++) await get();
    expect((await get()).headers.get('Retry-After')).toBe('50');
    setNow(MINUTE_END); // waited as told
    api.clock.set(MINUTE_END - 120_000);
    for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200);
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 0, bans: 0 });
  });

  it('a key that sends inside Retry-After is still counted after the server\'s clock is set back, for what was left of the wait', async () => {
    const { api, get, setNow } = server({ apiKeys: { k: { perMinute: 5, perDay: 100 } } });
    for (let i = 0; i < 5; i++) await get();
    await get(); // 429, Retry-After 50
    setNow(START + 10_000);
    api.clock.set(START + 10_000 - 120_000);
    await get();
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 1 });
    api.clock.advance(40_000); // the 49.5 s announced have passed
    await get();
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 1, bans: 0 });
  });

  it('setting the server\'s clock forward leaves an announced Retry-After window where it ends: a request past it is not counted inside', async () => {
    const { api, get } = server();
    await get();
    expect((await get()).status).toBe(429); // the window ends at the minute's end
    api.clock.set(MINUTE_END + 60_000);
    expect((await get()).status).toBe(200);
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 0 });
  });

  it('the now option stepping back (fake timers set back) moves the Retry-After windows as clock.set does', async () => {
    const { api, get, setNow } = server({ apiKeys: { k: { perMinute: 5, perDay: 100 } }, banThreshold: 4 });
    for (let i = 0; i < 5; i++) await get();
    expect((await get()).headers.get('Retry-After')).toBe('50');
    setNow(START + 10_000);
    await get(); // inside: 39.5 s of the wait are left
    setNow(START + 10_000 - 120_000); // the now option steps two minutes back
    await get(); // still inside, for what was left of the wait
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 2 });
    setNow(START + 10_000 - 120_000 + 40_000); // the rest of the wait has passed
    for (let i = 0; i < 5; i++) await get();
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 2, bans: 0 });
  });

  it('a banned key that waited out the ban\'s Retry-After is served after the server\'s clock is set back', async () => {
    const bans: string[] = [];
    const { api, get, setNow } = server({ banThreshold: 1, banDurationMs: 60_000, onBan: (event) => void bans.push(`${event.state} ${event.until}`) });
    await get();
    await get(); // 429: the minute is spent
    await get(); // strike 1
    const banned = await get(); // strike 2: banned
    expect(banned.status).toBe(429);
    expect(banned.headers.get('Retry-After')).toBe('60');
    api.clock.set(START - 120_000);
    setNow(START + 60_000); // waited as told
    expect((await get()).status).toBe(200);
    expect(bans).toEqual([`banned ${new Date(START + 60_000).toISOString()}`, `ended ${new Date(START - 60_000).toISOString()}`]);
  });

  it('a banned key is told 0 requests remaining until the ban ends, once its minute has turned over too (before: the new minute\'s budget, on a 429)', async () => {
    const { get, setNow } = server({ banThreshold: 1, banDurationMs: 120_000 });
    await get();
    await get(); // 429: the minute is spent
    await get(); // strike 1
    const banEnd = String(Math.ceil((START + 120_000) / 1000));
    const banned = await get(); // strike 2: banned
    expect(banned.headers.get('Retry-After')).toBe('120');
    expect((await banned.json()).message).toBe('This API key is temporarily banned for sending requests while told to wait. Retry after 120 s, and honour Retry-After.');
    expect([banned.headers.get('X-RateLimit-Remaining'), banned.headers.get('X-RateLimit-Reset')]).toEqual(['0', banEnd]);
    setNow(MINUTE_END + 5_000);
    const still = await get();
    expect((await still.json()).code).toBe('api_key_banned');
    expect(still.headers.get('Retry-After')).toBe('66');
    expect([still.headers.get('X-RateLimit-Remaining'), still.headers.get('X-RateLimit-Reset')]).toEqual(['0', banEnd]);
  });

  it('a key that waits out a ban shorter than its spent window is not counted inside the window, nor banned again (before: a strike, and with banThreshold 0 a second ban)', async () => {
    const { api, get, setNow } = server({ banThreshold: 0, banDurationMs: 10_000 });
    await get();
    await get(); // 429: the minute is spent, Retry-After 50
    setNow(START + 1_000);
    const banned = await get(); // strike 1: banned
    expect((await banned.json()).code).toBe('api_key_banned');
    expect(banned.headers.get('Retry-After')).toBe('10');
    setNow(START + 11_000); // waited as told; the minute is still spent
    const after = await get();
    expect((await after.json()).code).toBe('rate_limited');
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 1, bans: 1 });
  });

  it('strikes count within one Retry-After window: a key that waited as told starts its next window with none, whatever it struck in the last', async () => {
    const { api, get, setNow } = server({ banThreshold: 2 });
    await get();
    await get(); // 429: the window opens
    await get();
    await get(); // 2 strikes, not more than banThreshold
    setNow(MINUTE_END); // waited as told
    expect((await get()).status).toBe(200);
    await get(); // 429: a new window opens, and it is a first one
    const strike = await get(); // this window's first strike, not the last window's third
    expect((await strike.json()).code).toBe('rate_limited');
    expect(api.inspect().keys.k).toMatchObject({ insideRetryAfter: 3, bans: 0 });
  });

  it('a key whose minute and day have as many requests left reports the day, whose reset is when more requests come back', async () => {
    const { get } = server({ apiKeys: { k: { perMinute: 5, perDay: 5 } }, rateLimitHeaders: 'both' });
    const response = await get();
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('4');
    expect(Number(response.headers.get('X-RateLimit-Reset')) * 1000).toBe(Date.UTC(2026, 5, 2));
    expect(response.headers.get('RateLimit-Policy')).toBe('"default";q=5;w=86400');
  });

  it('a 401 with rateLimitHeaders: "ietf" reports an untouched Free-plan minute: RateLimit-Policy says a 60 s window', async () => {
    const { api } = server({ rateLimitHeaders: 'ietf' });
    const response = await api.fetch(new Request('http://localhost/v1/pets'));
    expect(response.status).toBe(401);
    expect(response.headers.get('RateLimit-Policy')).toBe('"default";q=60;w=60');
    expect(response.headers.get('RateLimit')).toBe('"default";r=60;t=50');
  });

  it('insideRetryAfter counts every request inside an announced window, banned or not', async () => {
    const { api, get } = server({ banThreshold: 2 });
    await get();
    await get(); // 429: the window opens
    for (let i = 0; i < 20; i++) await get(); // 2 strikes, then a ban, then 17 more while banned
    expect(api.inspect().keys.k).toMatchObject({ requests: 22, insideRetryAfter: 20, bans: 1 });
  });

  it('every answer carries Date from the server\'s clock, in-process too, errors and preflights included', async () => {
    const { api, get } = server();
    const stamp = new Date(START).toUTCString();
    expect((await get()).headers.get('Date')).toBe(stamp);
    expect((await api.fetch(new Request('http://localhost/v1/pets'))).headers.get('Date')).toBe(stamp);
    expect((await api.fetch(new Request('http://localhost/v1/pets', { method: 'OPTIONS' }))).headers.get('Date')).toBe(stamp);
  });

  it('Date is on injected 503s too, and CORS exposes it, so a browser client can read the server\'s clock', async () => {
    const api = createReferenceServer({ apiKeys: { k: 'pro' }, now: () => START, faults: { rate: 1, kinds: ['error'] } });
    const response = await api.fetch(new Request('http://localhost/v1/pets', { headers: { Authorization: 'Bearer k' } }));
    expect(response.status).toBe(503);
    expect(response.headers.get('Date')).toBe(new Date(START).toUTCString());
    expect(response.headers.get('Access-Control-Expose-Headers')?.split(/,\s*/)).toContain('Date');
  });

  it('an injected 503 carries the rate-limit headers of an untouched minute, as a forced one does, touches no counter, and answers a HEAD without a body', async () => {
    const api = createReferenceServer({ apiKeys: { k: 'pro' }, now: () => START, faults: { rate: 1, kinds: ['error'] } });
    for (const method of ['GET', 'HEAD']) {
      const response = await api.fetch(new Request('http://localhost/v1/pets', { method, headers: { Authorization: 'Bearer k' } }));
      expect(response.status).toBe(503);
      expect(response.headers.get('X-RateLimit-Limit'), method).toBe('60');
      expect(response.headers.get('X-RateLimit-Remaining'), method).toBe('60');
      expect(response.headers.get('X-RateLimit-Reset'), method).toBe(String(MINUTE_END / 1000));
      if (method === 'HEAD') expect(response.body).toBeNull();
      else expect(await response.json()).toMatchObject({ code: 'service_unavailable', status: 503 });
    }
    expect(api.inspect().keys).toEqual({});
  });

  it('rateLimitHeaders: "ietf" sends RateLimit and RateLimit-Policy instead of X-RateLimit-*, "both" sends both', async () => {
    const ietf = await server({ rateLimitHeaders: 'ietf' }).get();
    expect(ietf.headers.get('RateLimit-Policy')).toBe('"default";q=1;w=60');
    expect(ietf.headers.get('RateLimit')).toBe('"default";r=0;t=50');
    expect(ietf.headers.get('X-RateLimit-Limit')).toBeNull();
    const both = await server({ rateLimitHeaders: 'both' }).get();
    expect(both.headers.get('RateLimit')).toBe('"default";r=0;t=50');
    expect(both.headers.get('X-RateLimit-Remaining')).toBe('0');
    expect(() => createReferenceServer({ rateLimitHeaders: 'y' as 'x' })).toThrow(/rateLimitHeaders must be "x", "ietf" or "both"/);
  });

  it('by default, and with rateLimitHeaders: "x", only the spec\'s X-RateLimit-* headers are sent, no RateLimit or RateLimit-Policy', async () => {
    for (const options of [{}, { rateLimitHeaders: 'x' }] as const) {
      const response = await server(options).get();
      expect(response.headers.get('X-RateLimit-Remaining')).toBe('0');
      expect(response.headers.get('RateLimit')).toBeNull();
      expect(response.headers.get('RateLimit-Policy')).toBeNull();
    }
  });

  it('a request an injected latency holds past the minute counts in the minute it is acted on, and the new minute keeps its count (before: it wiped it)', async () => {
    vi.useFakeTimers();
    try {
      // At rate 0.5, seed 9 holds the first request and none of the three after it.
      const { get, setNow } = server({ apiKeys: { k: { perMinute: 3, perDay: 100 } }, faults: { rate: 0.5, kinds: ['latency'], latencyMs: 1_000, seed: 9 } });
      setNow(MINUTE_END - 500);
      const held = get();
      setNow(MINUTE_END);
      expect((await get()).headers.get('X-RateLimit-Remaining')).toBe('2');
      await vi.advanceTimersByTimeAsync(1_000);
      // Acted on in the new minute, as its second request. Before: counted in the minute gone,
      // which reset the key's window, so the new minute forgot the request before it.
      expect((await held).headers.get('X-RateLimit-Remaining')).toBe('1');
      expect((await get()).headers.get('X-RateLimit-Remaining')).toBe('0');
      expect((await get()).status).toBe(429);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a fault latency longer than a timer can wait (2^31 - 1 ms) is refused when the server is created, not fired at once', () => {
    expect(() => createReferenceServer({ faults: { rate: 1, kinds: ['latency'], latencyMs: 2 ** 31 } })).toThrow(/faults.latencyMs must be .* at most 2147483647/);
    expect(() => createReferenceServer({ faults: { rate: 1, kinds: ['latency'], latencyMs: 2 ** 31 - 1 } })).not.toThrow();
  });
});

describe('server.fetch as every runtime calls it', () => {
  /** A createPet whose body begins and never ends, sent with `signal`. */
  const postEndless = (api: ReferenceServer, signal: AbortSignal) =>
    api.fetch(
      new Request('http://localhost/v1/pets', {
        method: 'POST',
        headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
        body: new ReadableStream<Uint8Array>({ start: (stream) => stream.enqueue(new TextEncoder().encode('{"name":')) }),
        duplex: 'half',
        signal,
      } as RequestInit),
    );

  it('reads a POST body from a Request that has no body property, as in Firefox', async () => {
    const api = createReferenceServer({ apiKeys: { k: 'pro' } });
    const real = new Request('http://localhost/v1/pets', {
      method: 'POST',
      headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    // Firefox's Request: `'body' in Request.prototype` is false, and reading it gives undefined.
    const firefoxLike = new Proxy(real, {
      has: (target, key) => key !== 'body' && key in target,
      get: (target, key) => {
        if (key === 'body') return undefined;
        const value = Reflect.get(target, key, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const response = await api.fetch(firefoxLike);
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ name: 'Rex', categoryId: 1 });
  });

  it('an aborted request rejects at once with the signal\'s reason, even while an injected latency holds the answer', async () => {
    const api = createReferenceServer({ apiKeys: { k: 'pro' }, faults: { rate: 1, kinds: ['latency'], latencyMs: 60_000 } });
    const controller = new AbortController();
    const pending = api.fetch(new Request('http://localhost/v1/pets', { headers: { Authorization: 'Bearer k' }, signal: controller.signal }));
    controller.abort(new Error('gave up'));
    await expect(pending).rejects.toThrow('gave up');
    const aborted = new AbortController();
    aborted.abort(new Error('already'));
    await expect(api.fetch(new Request('http://localhost/v1/pets', { signal: aborted.signal }))).rejects.toThrow('already');
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('an abort during an injected latency acts on nothing: the pet is never created', async () => {
    vi.useFakeTimers();
    const api = createReferenceServer({ apiKeys: { k: 'pro' }, faults: { rate: 1, kinds: ['latency'], latencyMs: 1_000 } });
    const controller = new AbortController();
    const pending = api.fetch(
      new Request('http://localhost/v1/pets', {
        method: 'POST',
        headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
        signal: controller.signal,
      }),
    );
    controller.abort(new Error('gave up'));
    await expect(pending).rejects.toThrow('gave up');
    await vi.advanceTimersByTimeAsync(5_000);
    expect(api.inspect().petCount).toBe(0);
  });

  it('a request aborted before its answer is journalled once, with status 0: no answer reached the caller (before: not at all, or as answered)', async () => {
    vi.useFakeTimers();
    const api = createReferenceServer({ apiKeys: { k: 'pro' }, faults: { rate: 1, kinds: ['latency'], latencyMs: 1_000 } });
    const held = new AbortController();
    const pending = api.fetch(new Request('http://localhost/v1/pets', { headers: { Authorization: 'Bearer k' }, signal: held.signal }));
    held.abort(new Error('gave up'));
    await expect(pending).rejects.toThrow('gave up');
    await vi.advanceTimersByTimeAsync(1_000);
    const plain = createReferenceServer({ apiKeys: { k: 'pro' } });
    const waiting = new AbortController();
    const reading = postEndless(plain, waiting.signal);
    waiting.abort(new Error('stopped waiting'));
    await expect(reading).rejects.toThrow('stopped waiting');
    await vi.advanceTimersByTimeAsync(0);
    for (const server of [api, plain]) {
      expect(server.requests()).toEqual([expect.objectContaining({ path: '/v1/pets', status: 0, code: undefined })]);
    }
    expect(api.requests()[0]!.fault).toBe('latency');
  });

  it('a reset during an injected latency wins: the request is answered as the server stood when it arrived, and nothing of it reaches the fresh state', async () => {
    vi.useFakeTimers();
    const api = createReferenceServer({ apiKeys: { k: 'pro' }, pets: 2, faults: { rate: 1, kinds: ['latency'], latencyMs: 1_000 } });
    const pending = api.fetch(
      new Request('http://localhost/v1/pets', {
        method: 'POST',
        headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Stray', categoryId: 1 }),
      }),
    );
    api.reset();
    await vi.advanceTimersByTimeAsync(1_000);
    expect((await pending).status).toBe(201);
    // Before: the request was acted on after the reset, so the fresh store held its pet and the
    // fresh counters and journal the request.
    expect(api.inspect()).toEqual({ petCount: 2, keys: {} });
    expect(api.requests()).toEqual([]);
  });

  it('an abort while the server waits on a body that never ends rejects at once with the reason', async () => {
    const api = createReferenceServer({ apiKeys: { k: 'pro' } });
    const controller = new AbortController();
    const pending = postEndless(api, controller.signal);
    controller.abort(new Error('stopped waiting'));
    await expect(pending).rejects.toThrow('stopped waiting');
    expect(api.inspect().petCount).toBe(0);
  });
});
