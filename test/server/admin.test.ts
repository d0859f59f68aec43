/**
 * The reference server as a fixture for any language: the admin API over plain HTTP (node:http
 * on port 0), request ids, the journal, the clock and forced answers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startReferenceServer, type RunningReferenceServer } from '@animal-store/sdk/node';
import { createReferenceServer, type BanEvent, type ReferenceServerOptions } from '@animal-store/sdk/server';

/** 2027-01-01T00:00:00Z: a clock-aligned minute and day start, before getPet's sunset. */
const T0 = Date.UTC(2027, 0, 1);
const KEY = 'admin-test-key-1';

/**
 * A server on T0 (or `now`) whose keys (`ban-me-please` unless told) are each banned for 2 minutes
 * by their fourth request in a minute, the ban events it told, and `ban(key)` that sends those four.
 */
function bannable(keys: readonly string[] = ['ban-me-please'], now: () => number = () => T0) {
  const events: BanEvent[] = [];
  const server = createReferenceServer({
    apiKeys: Object.fromEntries(keys.map((key) => [key, { perMinute: 1, perDay: 100 }])),
    now,
    banThreshold: 1,
    banDurationMs: 120_000,
    onBan: (event) => events.push(event),
  });
  const ban = async (key = keys[0]!) => {
    for (let i = 0; i < 4; i++) await server.fetch(new Request('http://a.test/v1/pets', { headers: { Authorization: `Bearer ${key}` } }));
  };
  return { events, server, ban };
}

describe('admin API over HTTP', () => {
  let running: RunningReferenceServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  const start = async (options: ReferenceServerOptions = {}) => {
    let now = T0;
    running = await startReferenceServer({
      apiKeys: { [KEY]: { perMinute: 2, perDay: 100 }, 'other-key': 'free' },
      pets: 3,
      now: () => now,
      admin: true,
      ...options,
    });
    const origin = new URL(running.url).origin;
    return {
      /** Plain HTTP, as a test in any language would send it. */
      http: (path: string, init: RequestInit = {}) => fetch(`${origin}${path}`, init),
      api: (path: string, init: RequestInit = {}) =>
        fetch(`${origin}/v1${path}`, { ...init, headers: { Authorization: `Bearer ${KEY}`, ...init.headers } }),
      tick: (ms: number) => void (now += ms),
    };
  };
  const postJson = (body: unknown): RequestInit => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

  it('is off unless asked for: /_admin/ paths answer a 404 that says how to turn it on, and nothing is reset', async () => {
    const { http, api } = await start({ admin: undefined });
    await api('/pets', postJson({ name: 'Extra', categoryId: 1 }));
    const response = await http('/_admin/reset', { method: 'POST' });
    expect(response.status).toBe(404);
    const body = await response.json();
    expect(body).toMatchObject({ code: 'not_found', status: 404 });
    expect(body.message).toContain('--admin');
    expect(running!.server.inspect().petCount).toBe(4);
  });

  it('POST /_admin/reset restores the seed pets and forgets every window, counter and recorded request', async () => {
    const { http, api } = await start();
    await api('/pets', postJson({ name: 'Extra', categoryId: 1 }));
    await api('/pets');
    expect((await api('/pets')).status).toBe(429);
    const reset = await http('/_admin/reset', { method: 'POST' });
    expect(reset.status).toBe(200);
    expect(await reset.json()).toEqual({ reset: true });
    expect(reset.headers.get('X-Request-Id')).toMatch(/^[0-9a-f]{16}$/);
    expect(running!.server.inspect()).toEqual({ petCount: 3, keys: {} });
    expect(await (await http('/_admin/keys')).json()).toEqual({ keys: {} });
    expect(await (await http('/_admin/requests')).json()).toEqual({ requests: [] });
    expect((await api('/pets')).status).toBe(200);
  });

  it('GET /_admin/keys gives each key\'s counters as inspect() does, keys shown by a label that never holds the key', async () => {
    const { http, api } = await start();
    for (let i = 0; i < 4; i++) await api('/pets');
    const body = await (await http('/_admin/keys')).json();
    const labels = Object.keys(body.keys);
    expect(labels).toHaveLength(1);
    expect(labels[0]).toBe('admi…');
    expect(body.keys[labels[0]!]).toEqual(running!.server.inspect().keys[KEY]);
    expect(body.keys[labels[0]!]).toEqual({ requests: 4, rateLimited: 2, insideRetryAfter: 1, bans: 0 });
    expect(JSON.stringify(body)).not.toContain(KEY);
  });

  it('GET /_admin/requests lists time, method, path, status, request id, key label and the Retry-After flag; DELETE clears it', async () => {
    const { http, api } = await start();
    const answers = [await api('/pets?limit=1'), await api('/pets'), await api('/pets'), await http('/v1/pets')];
    const { requests: journal } = await (await http('/_admin/requests')).json();
    expect(journal).toHaveLength(4);
    expect(journal.map((r: { status: number }) => r.status)).toEqual([200, 200, 429, 401]);
    expect(journal[0]).toEqual({
      time: new Date(T0).toISOString(),
      method: 'GET',
      path: '/v1/pets?limit=1',
      status: 200,
      requestId: answers[0]!.headers.get('X-Request-Id'),
      key: 'admi…',
      insideRetryAfter: false,
    });
    expect(journal[2]).toMatchObject({ code: 'rate_limited', insideRetryAfter: false });
    expect(journal[3]).toMatchObject({ code: 'missing_api_key', insideRetryAfter: false });
    expect(journal[3].key).toBeNull();
    expect(journal.map((r: { requestId: string }) => r.requestId)).toEqual(answers.map((a) => a.headers.get('X-Request-Id')));
    expect(JSON.stringify(journal)).not.toContain(KEY);
    // Admin calls are not recorded.
    expect((await (await http('/_admin/requests')).json()).requests).toHaveLength(4);
    const cleared = await http('/_admin/requests', { method: 'DELETE' });
    expect(await cleared.json()).toEqual({ cleared: true });
    expect(await (await http('/_admin/requests')).json()).toEqual({ requests: [] });
  });

  it('a request inside an announced Retry-After window is flagged in the journal', async () => {
    const { http, api } = await start();
    await api('/pets');
    await api('/pets');
    await api('/pets'); // 429: the window opens
    await api('/pets'); // inside it
    const { requests } = await (await http('/_admin/requests')).json();
    expect(requests.map((r: { insideRetryAfter: boolean }) => r.insideRetryAfter)).toEqual([false, false, false, true]);
  });

  it('POST /_admin/clock {"advanceMs"} skips the minute window without waiting', async () => {
    const { http, api } = await start();
    await api('/pets');
    await api('/pets');
    expect((await api('/pets')).status).toBe(429);
    const moved = await http('/_admin/clock', postJson({ advanceMs: 60_000 }));
    expect(moved.status).toBe(200);
    expect(await moved.json()).toEqual({ now: new Date(T0 + 60_000).toISOString() });
    const after = await api('/pets');
    expect(after.status).toBe(200);
    expect(after.headers.get('Date')).toBe(new Date(T0 + 60_000).toUTCString());
  });

  it('POST /_admin/clock {"set"} moves the clock to a date, and it runs on from there with the now option', async () => {
    const { http, api, tick } = await start();
    expect((await http('/_admin/clock', postJson({ set: '2030-12-05T00:00:00Z' }))).status).toBe(200);
    const gone = await api('/pets/1');
    expect(gone.status).toBe(410);
    expect((await gone.json()).code).toBe('gone');
    tick(1_500);
    expect(await (await http('/_admin/clock')).json()).toEqual({ now: '2030-12-05T00:00:01.500Z' });
    expect((await http('/_admin/clock', postJson({ set: '2030-12-04T23:59:59+00:00' }))).status).toBe(200);
    expect((await api('/pets/1')).status).toBe(200);
  });

  it('POST /_admin/clock answers the rate-limit headers of the clock it set, as its Date does (before: X-RateLimit-Reset was the old clock\'s minute, years from its Date)', async () => {
    const { http } = await start({ rateLimitHeaders: 'both' });
    for (const set of ['2030-12-05T00:00:30Z', '2027-01-01T00:00:10Z', '2026-06-01T12:00:00Z']) {
      const moved = await http('/_admin/clock', postJson({ set }));
      expect(moved.headers.get('Date')).toBe(new Date(set).toUTCString());
      // The untouched Free-plan minute of the new time: it resets at the end of that minute.
      const minuteEnd = Math.ceil((Date.parse(set) + 1) / 60_000) * 60;
      expect(moved.headers.get('X-RateLimit-Reset')).toBe(String(minuteEnd));
      expect(moved.headers.get('RateLimit')).toBe(`"default";r=60;t=${minuteEnd - Date.parse(set) / 1000}`);
    }
    const advanced = await http('/_admin/clock', postJson({ advanceMs: 86_400_000 }));
    expect(advanced.headers.get('X-RateLimit-Reset')).toBe(String(Date.parse('2026-06-02T12:01:00Z') / 1000));
  });

  it('POST /_admin/clock moves the clock no further than 9998-12-31T23:59:59.999Z, a 400 naming that instant past it, so a year is left for it to run on with HTTP dates (before: set to 9999-12-31T23:59:59.5Z, a second later Date read 01 Jan 10000)', async () => {
    const { http, api, tick } = await start();
    const latest = '9998-12-31T23:59:59.999Z';
    for (const body of [{ set: '9999-12-31T23:59:59.5Z' }, { set: '9999-01-01T00:00:00Z' }, { advanceMs: Date.parse(latest) - T0 + 1 }]) {
      const refused = await http('/_admin/clock', postJson(body));
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(await refused.json(), JSON.stringify(body)).toMatchObject({ code: 'invalid_body', message: expect.stringContaining(latest) });
      expect(await (await http('/_admin/clock')).json()).toEqual({ now: new Date(T0).toISOString() });
    }
    expect(() => running!.server.clock.set('9999-06-01T00:00:00Z')).toThrow(new RegExp(latest.replaceAll('.', '\\.')));
    expect(await (await http('/_admin/clock', postJson({ set: latest }))).json()).toEqual({ now: latest });
    expect((await http('/_admin/clock', postJson({ advanceMs: 1 }))).status).toBe(400);
    expect((await http('/_admin/clock', postJson({ advanceMs: 0 }))).status).toBe(200);
    // A year of the clock running on from the latest instant: its dates are still dates of 9999.
    tick(365 * 86_400_000);
    const answer = await api('/pets');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('Date')).toBe('Fri, 31 Dec 9999 23:59:59 GMT');
    expect(answer.headers.get('X-RateLimit-Reset')).toBe(String(Date.UTC(10000, 0, 1) / 1000));
    const { requests } = await (await http('/_admin/requests')).json();
    expect(requests.map((r: { time: string }) => r.time)).toEqual(['9999-12-31T23:59:59.999Z']);
  });

  it.each([
    ['not JSON', '{"advanceMs":', 'invalid_json'],
    ['an empty body', '', 'invalid_json'],
    ['an array', [], 'invalid_body'],
    ['an empty object', {}, 'invalid_body'],
    ['both fields', { advanceMs: 1, set: '2026-12-01T00:00:00Z' }, 'invalid_body'],
    ['an unknown field', { advance: 1 }, 'invalid_body'],
    ['a negative advance', { advanceMs: -1 }, 'invalid_body'],
    ['an advance as a string', { advanceMs: '60000' }, 'invalid_body'],
    ['an advance of true', { advanceMs: true }, 'invalid_body'],
    ['a date without its offset', { set: '2026-12-01T00:00:00' }, 'invalid_body'],
    ['a date that is not one', { set: '2026-13-45T00:00:00Z' }, 'invalid_body'],
    ['a date Date.parse would guess', { set: 'Dec 1 2026' }, 'invalid_body'],
    ['a day the month does not have', { set: '2026-02-31T00:00Z' }, 'invalid_body'],
    ['the hour 24', { set: '2026-01-01T24:00Z' }, 'invalid_body'],
    ['the 29th of February in a common year', { set: '2027-02-29T00:00:00Z' }, 'invalid_body'],
    ['a leap second', { set: '2026-12-31T23:59:60Z' }, 'invalid_body'],
    ['an offset of 24 hours', { set: '2026-12-01T00:00:00+24:00' }, 'invalid_body'],
    ['a number as the date', { set: 1_790_000_000_000 }, 'invalid_body'],
  ])('POST /_admin/clock with %s answers a 400 Error record and leaves the clock alone', async (_what, body, code) => {
    const { http } = await start();
    const response = await http('/_admin/clock', postJson(body));
    expect(response.status).toBe(400);
    const record = await response.json();
    expect(record).toEqual({ code, message: expect.stringContaining('advanceMs'), status: 400 });
    expect(await (await http('/_admin/clock')).json()).toEqual({ now: new Date(T0).toISOString() });
  });

  it('POST /_admin/clock with a compressed body answers 415 and leaves the clock alone', async () => {
    const { http } = await start();
    const response = await http('/_admin/clock', { method: 'POST', headers: { 'Content-Encoding': 'gzip' }, body: '{"advanceMs":60000}' });
    expect(await response.json()).toMatchObject({ code: 'unsupported_media_type', status: 415 });
    expect(await (await http('/_admin/clock')).json()).toEqual({ now: new Date(T0).toISOString() });
  });

  it('a preflight to an admin path allows that path\'s own methods, so a page can DELETE /_admin/requests', async () => {
    const { http } = await start();
    const preflight = (path: string, method: string) =>
      http(path, { method: 'OPTIONS', headers: { Origin: 'http://app.test', 'Access-Control-Request-Method': method } });
    for (const [path, method, allow] of [
      ['/_admin/requests', 'DELETE', 'GET, DELETE, HEAD, OPTIONS'],
      ['/_admin/reset', 'POST', 'POST, OPTIONS'],
      ['/_admin/keys', 'GET', 'GET, HEAD, OPTIONS'],
      ['/_admin/clock/', 'POST', 'GET, POST, HEAD, OPTIONS'],
    ] as const) {
      const response = await preflight(path, method);
      expect(response.status, path).toBe(204);
      expect(response.headers.get('Access-Control-Allow-Methods'), path).toBe(allow);
      expect(response.headers.get('Allow'), path).toBe(allow);
      // What the 405 for another method there says is allowed.
      const wrong = await http(path, { method: 'PUT' });
      expect(wrong.headers.get('Allow'), path).toBe(allow);
    }
  });

  it('an unknown admin path answers 404 listing the admin paths, a wrong method 405 with Allow', async () => {
    const { http } = await start();
    const unknown = await http('/_admin/nothing');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).message).toBe('No admin path /_admin/nothing. The admin API has /_admin/reset, /_admin/keys, /_admin/requests, /_admin/clock.');
    const wrong = await http('/_admin/keys', { method: 'DELETE' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('Allow')).toBe('GET, HEAD, OPTIONS');
    expect(await wrong.json()).toMatchObject({ code: 'method_not_allowed', status: 405, message: 'DELETE is not allowed on /_admin/keys. Allowed: GET, HEAD, OPTIONS.' });
  });

  it('a preflight to an unknown admin path answers the 404 every other method gets there, listing the admin paths (before: a 204 that allowed the API\'s methods)', async () => {
    const { http } = await start();
    for (const path of ['/_admin/nope', '/_admin/', '/_admin/reset/more']) {
      const preflight = await http(path, { method: 'OPTIONS', headers: { Origin: 'http://app.test', 'Access-Control-Request-Method': 'POST' } });
      expect(preflight.status, path).toBe(404);
      expect(preflight.headers.get('Access-Control-Allow-Methods'), path).toBeNull();
      expect(await preflight.json(), path).toEqual(await (await http(path, { method: 'POST' })).json());
    }
  });

  it('HEAD on POST /_admin/reset is the 405 its GET gets, as every HEAD is its GET: Allow names the path\'s own methods (POST, OPTIONS), and Content-Length is the GET\'s, whose message names GET', async () => {
    const { http, api } = await start();
    await api('/pets', postJson({ name: 'Kept', categoryId: 1 }));
    const [head, get] = [await http('/_admin/reset', { method: 'HEAD' }), await http('/_admin/reset')];
    expect([head.status, get.status]).toEqual([405, 405]);
    expect(head.headers.get('Allow')).toBe('POST, OPTIONS');
    expect(get.headers.get('Allow')).toBe('POST, OPTIONS');
    expect(await head.text()).toBe('');
    const record = await get.text();
    expect(JSON.parse(record).message).toBe('GET is not allowed on /_admin/reset. Allowed: POST, OPTIONS.');
    expect(head.headers.get('Content-Length')).toBe(String(Buffer.byteLength(record)));
    expect(running!.server.inspect().petCount).toBe(4); // nothing was reset
  });

  it('an admin 404 or 405 quotes at most the start of what the client sent: 100 characters of a path, 20 of a method', async () => {
    const server = createReferenceServer({ admin: true });
    const path = `/${'x'.repeat(300)}`;
    const unknown = await (await server.fetch(new Request(`http://a.test/_admin${path}`))).json();
    expect(unknown.message).toContain(`/_admin${path.slice(0, 100)}…. The admin API has`);
    const wrong = await (await server.fetch(new Request('http://a.test/_admin/keys', { method: 'M'.repeat(30) }))).json();
    expect(wrong.message).toBe(`${'M'.repeat(20)}… is not allowed on /_admin/keys. Allowed: GET, HEAD, OPTIONS.`);
  });

  it('POST /_admin/clock with null, or with one unknown field, answers 400 saying the body holds exactly one of advanceMs and set (before any reading of it as an object)', async () => {
    const server = createReferenceServer({ admin: true, now: () => T0 });
    for (const body of ['null', '{"advance":1}']) {
      const response = await server.fetch(new Request('http://a.test/_admin/clock', { method: 'POST', body }));
      expect(response.status, body).toBe(400);
      expect((await response.json()).message, body).toMatch(/^The body must hold exactly one of advanceMs and set\. /);
    }
    expect(server.clock.now().getTime()).toBe(T0);
  });

  it('POST /_admin/clock {"advanceMs": 0} moves nothing and answers 200 once the clock has run on past 9998-12-31T23:59:59.999Z, where it was moved, as clock.advance(0) returns (before: a 400 saying it would take the clock past that instant, a millisecond after the clock was set to it)', async () => {
    const { http, tick } = await start();
    const latest = '9998-12-31T23:59:59.999Z';
    expect((await http('/_admin/clock', postJson({ set: latest }))).status).toBe(200);
    tick(1_000);
    const still = await http('/_admin/clock', postJson({ advanceMs: 0 }));
    expect(still.status).toBe(200);
    expect(await still.json()).toEqual({ now: '9999-01-01T00:00:00.999Z' });
    expect(() => running!.server.clock.advance(0)).not.toThrow();
    expect((await http('/_admin/clock', postJson({ advanceMs: 1 }))).status).toBe(400);
    expect(running!.server.clock.now().toISOString()).toBe('9999-01-01T00:00:00.999Z');
  });
});

describe('request ids, the journal and the clock in-process', () => {
  const get = (server: ReturnType<typeof createReferenceServer>, path: string, headers: Record<string, string> = { Authorization: 'Bearer k' }) =>
    server.fetch(new Request(`http://a.test${path}`, { headers }));
  /** A createPet with key `k` whose body arrives when `finish()` is called. */
  const slowPost = (server: ReturnType<typeof createReferenceServer>) => {
    let finish!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start: (stream) =>
        void (finish = () => {
          stream.enqueue(new TextEncoder().encode('{"name":"Late","categoryId":1}'));
          stream.close();
        }),
    });
    const init = { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body, duplex: 'half' };
    return { answer: server.fetch(new Request('http://a.test/v1/pets', init as RequestInit)), finish };
  };

  it('every answer carries a distinct X-Request-Id, errors, preflights and injected 503s included', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const faulty = createReferenceServer({ apiKeys: { k: 'free' }, faults: { rate: 1, kinds: ['error'] } });
    const answers = [
      await get(server, '/v1/pets'),
      await get(server, '/v1/pets', {}),
      await get(server, '/'),
      await server.fetch(new Request('http://a.test/v1/pets', { method: 'OPTIONS' })),
      await get(faulty, '/v1/pets'),
    ];
    const ids = answers.map((r) => r.headers.get('X-Request-Id'));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(answers[0]!.headers.get('Access-Control-Expose-Headers')?.split(/,\s*/)).toContain('X-Request-Id');
  });

  it('server.requests() records what was answered and clearRequests() forgets it; the journal keeps the last 1,000', async () => {
    const server = createReferenceServer({ apiKeys: { k: { perMinute: 5_000, perDay: 5_000 } } });
    for (let i = 0; i < 1_005; i++) await get(server, `/v1/store/orders?i=${i}`);
    const journal = server.requests();
    expect(journal).toHaveLength(1_000);
    expect(journal[0]!.path).toBe('/v1/store/orders?i=5');
    expect(journal.at(-1)!.path).toBe('/v1/store/orders?i=1004');
    server.clearRequests();
    expect(server.requests()).toEqual([]);
  });

  it('the journal lists requests in the order they arrived: a createPet whose body was still arriving comes before what was answered meanwhile, and once 1,000 arrived after it, it is the one forgotten (before: listed as answered)', async () => {
    const server = createReferenceServer({ apiKeys: { k: { perMinute: 5_000, perDay: 5_000 } } });
    const early = slowPost(server);
    await get(server, '/v1/store/orders?i=0');
    early.finish();
    expect((await early.answer).status).toBe(201);
    expect(server.requests().map(({ method, path, status }) => `${method} ${path} ${status}`)).toEqual(['POST /v1/pets 201', 'GET /v1/store/orders?i=0 200']);

    server.clearRequests();
    const late = slowPost(server);
    for (let i = 0; i < 1_000; i++) await get(server, `/v1/store/orders?i=${i}`);
    late.finish();
    expect((await late.answer).status).toBe(201);
    const journal = server.requests();
    expect(journal).toHaveLength(1_000);
    expect(journal[0]!.path).toBe('/v1/store/orders?i=0');
    expect(journal.filter(({ method }) => method === 'POST')).toEqual([]);
  });

  it('DELETE /_admin/requests forgets a request that arrived before it, even one answered after it, and keeps those that came later (before: the straggler showed in the cleared journal)', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, admin: true });
    const straggler = slowPost(server);
    expect((await server.fetch(new Request('http://a.test/_admin/requests', { method: 'DELETE' }))).status).toBe(200);
    await get(server, '/v1/store/orders');
    straggler.finish();
    expect((await straggler.answer).status).toBe(201);
    expect(server.requests().map(({ method, path }) => `${method} ${path}`)).toEqual(['GET /v1/store/orders']);
  });

  it('a createPet whose body arrives seconds later is counted and headed in the window it arrived in, with the Date of its answer and the RateLimit t counted from that Date, so Reset − Date and t agree (before: t counted from its arrival, up to a minute more)', async () => {
    let now = T0;
    const server = createReferenceServer({ apiKeys: { k: { perMinute: 5, perDay: 100 } }, now: () => now, rateLimitHeaders: 'both' });
    // Arrives 10 s into the minute; its body comes 30 s later, then one whose body comes after the minute ended.
    for (const [arrival, wait, t] of [[10_000, 30_000, 20], [70_000, 65_000, 0]] as const) {
      now = T0 + arrival;
      const slow = slowPost(server);
      now += wait;
      slow.finish();
      const answer = await slow.answer;
      expect(answer.status).toBe(201);
      const minuteEnd = Math.ceil((T0 + arrival + 1) / 60_000) * 60;
      expect(answer.headers.get('X-RateLimit-Reset')).toBe(String(minuteEnd));
      expect(answer.headers.get('X-RateLimit-Remaining')).toBe('4');
      expect(answer.headers.get('Date')).toBe(new Date(now).toUTCString());
      expect(answer.headers.get('RateLimit')).toBe(`"default";r=4;t=${t}`);
      expect(server.requests().at(-1)!.time).toBe(new Date(T0 + arrival).toISOString());
    }
  });

  it('every answer takes its Date and its RateLimit t from one reading of the clock, so Date + t is X-RateLimit-Reset even when each reading moves the clock (before: two readings, a second apart across a second boundary)', async () => {
    let now = T0 + 10_000;
    // Each reading moves the clock 700 ms (and all of them stay inside the first minute): two readings of one answer fall in different seconds.
    const server = createReferenceServer({ apiKeys: { k: { perMinute: 100, perDay: 1_000 } }, now: () => (now += 700), rateLimitHeaders: 'both', admin: true });
    const slow = slowPost(server);
    slow.finish();
    const answers = [await get(server, '/v1/pets'), await get(server, '/v1/nowhere'), await get(server, '/v1/pets', {}), await slow.answer];
    answers.push(await server.fetch(new Request('http://a.test/_admin/clock')), await get(server, '/v1/pets', { Authorization: 'Bearer k', Prefer: 'code=503' }));
    for (const answer of answers) {
      const t = Number(/;t=(\d+)$/.exec(answer.headers.get('RateLimit')!)![1]);
      expect(Date.parse(answer.headers.get('Date')!) / 1000 + t).toBe(Number(answer.headers.get('X-RateLimit-Reset')));
    }
  });

  it('server.clearRequests() forgets a request still being answered that arrived just before it, the last to arrive', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const straggler = slowPost(server);
    server.clearRequests();
    straggler.finish();
    expect((await straggler.answer).status).toBe(201);
    expect(server.requests()).toEqual([]);
  });

  it.each(['sk_live_LEAKCANARY123', 'sk+live/LEAK=CANARY%2F~x'])('the journal and /_admin/requests show [redacted] where the path or query held a key (%j), a configured one or the one presented, raw or percent-encoded (before: the path as sent, key included)', async (key) => {
    const unknown = `${key}-revoked`;
    // Another key configured first: a path is searched for each key, not only for texts that hold them all.
    const server = createReferenceServer({ apiKeys: { sk_test_OTHER0KEY: 'pro', [key]: 'free' }, admin: true });
    const encoded = encodeURIComponent(key);
    const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
    await get(server, `/v1/pets?token=${encoded}&limit=1`, auth(key));
    await get(server, `/${encoded}/v1/pets`, auth(key));
    await get(server, `/v1/pets?api_key=${encoded}`, {});
    const refused = await get(server, `/v1/pets?token=${encodeURIComponent(unknown)}`, auth(unknown));
    expect(server.requests().map(({ path, status, key: label }) => ({ path, status, key: label }))).toEqual([
      { path: '/v1/pets?token=[redacted]&limit=1', status: 200, key: `${key.slice(0, 4)}…` },
      { path: '/[redacted]/v1/pets', status: 200, key: `${key.slice(0, 4)}…` },
      { path: '/v1/pets?api_key=[redacted]', status: 401, key: null },
      { path: '/v1/pets?token=[redacted]', status: 401, key: null },
    ]);
    // A key the server does not know is not echoed in its 401 either.
    expect(await refused.json()).toEqual({ code: 'invalid_api_key', message: 'The API key is not valid. Check the key, or ask for a new one.', status: 401 });
    const listed = await (await get(server, '/_admin/requests', {})).text();
    for (const secret of [key, encoded, unknown, encodeURIComponent(unknown)]) expect(listed).not.toContain(secret);
  });

  it('server.clock.advance and set move the windows and compose with the now option', async () => {
    let now = T0;
    const server = createReferenceServer({ apiKeys: { k: { perMinute: 1, perDay: 10 } }, now: () => now });
    expect((await get(server, '/v1/pets')).status).toBe(200);
    expect((await get(server, '/v1/pets')).status).toBe(429);
    server.clock.advance(60_000);
    expect(server.clock.now().getTime()).toBe(T0 + 60_000);
    expect((await get(server, '/v1/pets')).status).toBe(200);
    now += 1_000; // the now option keeps moving the clock, the offset stays
    expect(server.clock.now().getTime()).toBe(T0 + 61_000);
    server.clock.set(new Date(Date.UTC(2031, 0, 1)));
    expect((await get(server, '/v1/pets/1')).status).toBe(410);
    expect(() => server.clock.advance(-1)).toThrow(/^clock\.advance: expected a number of milliseconds, 0 or more, .*; got -1\.$/);
    expect(() => server.clock.advance(true as unknown as number)).toThrow(TypeError);
    expect(() => server.clock.advance(0)).not.toThrow();
    expect(() => server.clock.set('tomorrow')).toThrow(/ISO 8601/);
  });

  it('POST /_admin/clock {"advanceMs"} to the last instant the clock may be moved to answers 200 or 400, never a 500, though the real clock ticks between its reads', async () => {
    // The now option ticks a millisecond at every read, as a real clock may between two of them.
    let real = T0;
    const server = createReferenceServer({ now: () => real++, admin: true });
    const last = Date.UTC(9998, 11, 31, 23, 59, 59, 999);
    const statuses: number[] = [];
    for (let early = 0; early < 30; early++) {
      server.clock.set(new Date(last - 60_000));
      const advanceMs = last - server.clock.now().getTime() - early;
      const response = await server.fetch(new Request('http://a.test/_admin/clock', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ advanceMs }) }));
      statuses.push(response.status);
    }
    // Aimed at the last instant from further and further back: refused while a tick pushes it past, then taken.
    expect(new Set(statuses)).toEqual(new Set([400, 200]));
  });

  it('server.clock.set takes an ISO 8601 date-time with its offset only: a date alone or a local date-time is a TypeError, and the clock stays', () => {
    const server = createReferenceServer({ now: () => T0 });
    for (const date of ['2030-12-05', '2030-12-05T00:00:00', '2030-12-05T00:00']) {
      expect(() => server.clock.set(date)).toThrow(TypeError);
    }
    expect(server.clock.now().getTime()).toBe(T0);
    server.clock.set('2030-12-05T00:00:00Z');
    expect(server.clock.now().toISOString()).toBe('2030-12-05T00:00:00.000Z');
    expect(() => server.clock.advance(Date.UTC(10000, 0, 1))).toThrow(TypeError); // past 9999
  });

  it('server.clock.set refuses a date whose fields do not exist, with a TypeError, instead of rolling it over', () => {
    const server = createReferenceServer({ now: () => T0 });
    for (const date of ['2026-02-31T00:00:00Z', '2026-01-01T24:00Z', '2026-04-31T12:00+02:00', '2026-01-01T00:60Z']) {
      expect(() => server.clock.set(date)).toThrow(TypeError);
    }
    expect(server.clock.now().getTime()).toBe(T0);
    server.clock.set('2028-02-29T23:59:59.999-05:00'); // a leap day, with an offset: it exists
    expect(server.clock.now().toISOString()).toBe('2028-03-01T04:59:59.999Z');
  });

  it('server.clock.set takes every date-time from 1970 on, with or without seconds, at any offset up to 23:59, and quotes at most 60 characters of what it refuses', () => {
    const server = createReferenceServer({ now: () => T0 });
    server.clock.set(0);
    expect(server.clock.now().getTime()).toBe(0);
    expect(() => server.clock.set(-1)).toThrow(TypeError);
    server.clock.set('2026-12-01T00:00Z');
    expect(server.clock.now().toISOString()).toBe('2026-12-01T00:00:00.000Z');
    server.clock.set('2026-12-01T23:59:00+23:59');
    expect(server.clock.now().toISOString()).toBe('2026-12-01T00:00:00.000Z');
    expect(() => server.clock.set('x'.repeat(100))).toThrow(new RegExp(`; got "${'x'.repeat(59)}…\\.$`));
  });

  it('onBan tells when a key is banned and when the ban ends, by label, on the server\'s clock', async () => {
    const { events, server } = bannable();
    const send = () => get(server, '/v1/pets', { Authorization: 'Bearer ban-me-please' });
    for (let i = 0; i < 4; i++) await send(); // 200, 429, strike 1, strike 2 > 1: banned
    expect(events).toEqual([
      { state: 'banned', key: 'ban-…', time: new Date(T0).toISOString(), until: new Date(T0 + 120_000).toISOString() },
    ]);
    server.clock.advance(119_000);
    expect(events).toHaveLength(1);
    server.clock.advance(1_000);
    expect(events[1]).toEqual({ state: 'ended', key: events[0]!.key, time: new Date(T0 + 120_000).toISOString(), until: new Date(T0 + 120_000).toISOString() });
    expect(JSON.stringify(events)).not.toContain('ban-me-please');
  });

  it('onBan works where setTimeout returns a number, as in browsers and Deno: the ban\'s 429 and its end are told (its timer has no unref there)', async () => {
    const realSetTimeout = globalThis.setTimeout;
    vi.stubGlobal('setTimeout', (callback: () => void, ms: number) => Number(realSetTimeout(callback, ms)));
    try {
      const { events, server, ban } = bannable();
      await ban();
      expect((await get(server, '/v1/pets', { Authorization: 'Bearer ban-me-please' })).status).toBe(429);
      server.clock.advance(120_000);
      expect(events.map(({ state }) => state)).toEqual(['banned', 'ended']);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('after the clock is set back, onBan tells a ban\'s end when its timer fires, at the end moved with the clock', async () => {
    vi.useFakeTimers({ now: T0 });
    try {
      const { events, server, ban } = bannable(undefined, () => Date.now());
      await ban();
      vi.advanceTimersByTime(30_000);
      server.clock.set(T0); // 30 s back: 90 s of the ban are left, ending at T0 + 90 s on the server's clock
      vi.advanceTimersByTime(89_999);
      expect(events.map(({ state }) => state)).toEqual(['banned']);
      vi.advanceTimersByTime(1);
      const end = new Date(T0 + 90_000).toISOString();
      expect(events.map(({ state, time, until }) => [state, time, until])).toEqual([
        ['banned', new Date(T0).toISOString(), new Date(T0 + 120_000).toISOString()],
        ['ended', end, end],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('onBan tells the end of each key\'s ban, even when two banned keys share a label', async () => {
    const events: BanEvent[] = [];
    const server = createReferenceServer({
      apiKeys: { 'same-one': { perMinute: 1, perDay: 100 }, 'same-two': { perMinute: 1, perDay: 100 } },
      now: () => T0,
      banThreshold: 1,
      banDurationMs: 120_000,
      onBan: (event) => events.push(event),
    });
    const ban = async (key: string) => {
      for (let i = 0; i < 4; i++) await get(server, '/v1/pets', { Authorization: `Bearer ${key}` });
    };
    await ban('same-one');
    server.clock.advance(60_000);
    await ban('same-two');
    server.clock.advance(120_000);
    const at = (ms: number) => new Date(T0 + ms).toISOString();
    expect(events.map(({ state, time }) => [state, time])).toEqual([
      ['banned', at(0)],
      ['banned', at(60_000)],
      ['ended', at(120_000)],
      ['ended', at(180_000)],
    ]);
  });

  it('when the now option steps back (as fake timers can), a ban keeps what was left of it, as with clock.set', async () => {
    let now = T0 + 60_000;
    const { events, server, ban } = bannable(['first-banned', 'second-banned'], () => now);
    await ban('first-banned'); // until T0 + 180 s
    now = T0; // the clock the now option reads steps 60 s back: the first ban now ends at T0 + 120 s
    await ban('second-banned'); // until T0 + 120 s as well
    server.clock.advance(200_000); // both ends pass in one sweep
    const [first, second] = events;
    const at = (ms: number) => new Date(T0 + ms).toISOString();
    expect(events.map(({ state, key, time }) => [state, key, time])).toEqual([
      ['banned', first!.key, at(60_000)],
      ['banned', second!.key, at(0)],
      ['ended', first!.key, at(120_000)],
      ['ended', second!.key, at(120_000)],
    ]);
    expect(first!.key).not.toBe(second!.key);
  });

  it('a reset lifts every ban and onBan tells so at once, on the server\'s clock', async () => {
    const { events, server } = bannable();
    for (let i = 0; i < 4; i++) await get(server, '/v1/pets', { Authorization: 'Bearer ban-me-please' });
    server.clock.advance(30_000);
    server.reset();
    const at = new Date(T0 + 30_000).toISOString();
    expect(events.map(({ state, time, until }) => [state, time, until])).toEqual([
      ['banned', new Date(T0).toISOString(), new Date(T0 + 120_000).toISOString()],
      ['ended', at, at],
    ]);
    server.clock.advance(120_000);
    expect(events).toHaveLength(2);
    expect((await get(server, '/v1/pets', { Authorization: 'Bearer ban-me-please' })).status).toBe(200);
  });

  it('a ban that a request held from before a reset earns, once the fresh server knows the key, ends at once on the server\'s clock (before: onBan told it ended on 1970-01-01)', async () => {
    vi.useFakeTimers();
    try {
      const events: BanEvent[] = [];
      // Seed 5 draws no fault, no fault, then a latency: the third request is held, and after the
      // reset, which restarts the draw, the first one is not.
      const server = createReferenceServer({
        apiKeys: { 'held-key': { perMinute: 1, perDay: 100 } },
        now: () => T0,
        banThreshold: 0,
        onBan: (event) => events.push(event),
        faults: { rate: 0.5, kinds: ['latency'], latencyMs: 1_000, seed: 5 },
      });
      const send = () => get(server, '/v1/pets', { Authorization: 'Bearer held-key' });
      expect((await send()).status).toBe(200);
      expect((await send()).status).toBe(429);
      const held = send(); // inside the 429's window: a strike, past banThreshold 0
      await vi.advanceTimersByTimeAsync(10);
      server.reset();
      expect((await send()).status).toBe(200);
      await vi.advanceTimersByTimeAsync(1_000);
      expect((await held).status).toBe(429);
      const at = new Date(T0).toISOString();
      expect(events.map(({ state, time, until }) => [state, time, until])).toEqual([
        ['banned', at, new Date(T0 + 15 * 60_000).toISOString()],
        ['ended', at, at],
      ]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('an onBan that throws is reported and never changes an answer: the ban\'s 429, the request that ends it, the clock, its timer and a reset', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    vi.useFakeTimers({ now: T0 });
    try {
      const told: string[] = [];
      const server = createReferenceServer({
        apiKeys: { 'ban-me-please': { perMinute: 1, perDay: 100 } },
        now: () => Date.now(),
        banThreshold: 1,
        banDurationMs: 120_000,
        onBan: (event) => {
          told.push(event.state);
          throw new Error(`onBan bug: ${event.state}`);
        },
      });
      const send = () => get(server, '/v1/pets', { Authorization: 'Bearer ban-me-please' });
      const ban = async () => {
        for (let i = 0; i < 4; i++) await send();
      };
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await send()).status);
      expect(statuses).toEqual([200, 429, 429, 429]);
      expect(reported).toEqual([new Error('onBan bug: banned')]);
      vi.setSystemTime(T0 + 120_000); // the ban is over, no timer fired: the next request finds it so
      expect((await send()).status).toBe(200);
      await ban();
      expect(() => server.clock.advance(120_000)).not.toThrow(); // moving the clock ends it
      await ban();
      vi.advanceTimersByTime(120_000); // its timer ends it
      await ban();
      expect(() => server.reset()).not.toThrow(); // a reset ends it
      expect(told).toEqual(['banned', 'ended', 'banned', 'ended', 'banned', 'ended', 'banned', 'ended']);
      expect(reported).toEqual(told.map((state) => new Error(`onBan bug: ${state}`)));
    } finally {
      vi.useRealTimers();
      vi.unstubAllGlobals();
    }
  });

  it('a banDurationMs whose end no date can hold is refused when the server is created (before: the request that earned the ban answered 500)', async () => {
    const options = { apiKeys: { 'ban-me-please': { perMinute: 1, perDay: 100 } }, now: () => T0, banThreshold: 0, onBan: () => {} };
    expect(() => createReferenceServer({ ...options, banDurationMs: Number.MAX_SAFE_INTEGER })).toThrow(/banDurationMs must be .* at most/);
    // The longest accepted ban still ends on a date, even from the last instant the clock may be moved to.
    const server = createReferenceServer({ ...options, banDurationMs: Date.UTC(9999, 11, 31, 23, 59, 59, 999) });
    server.clock.set('9998-12-31T23:59:59.999Z');
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(server, '/v1/pets', { Authorization: 'Bearer ban-me-please' })).status);
    expect(statuses).toEqual([200, 429, 429]);
  });

  it('a now option that is not a function, or does not read epoch milliseconds from 1970 to the end of 9999, is refused when the server is created (before: NaN sent "Date: Invalid Date", a Date made the clock a string)', () => {
    const create = (now: unknown) => () => createReferenceServer({ now } as ReferenceServerOptions);
    expect(create(Date.now())).toThrow(new TypeError('now must be a function returning epoch milliseconds, such as () => Date.now(); got number.'));
    const range = 'from 1970 to the end of 9999 (0 to 253402300799999), as Date.now() does';
    expect(create(() => NaN)).toThrow(new TypeError(`now must return epoch milliseconds ${range}; it returned NaN.`));
    expect(create(() => new Date(T0))).toThrow(new TypeError(`now must return epoch milliseconds ${range}; it returned a Date (return its getTime()).`));
    expect(create(() => String(T0))).toThrow(/it returned a string\.$/);
    expect(create(() => undefined)).toThrow(/it returned undefined\.$/);
    expect(create(() => -1)).toThrow(/it returned -1\.$/);
    expect(create(() => Date.UTC(10000, 0, 1))).toThrow(/it returned 253402300800000\.$/);
    expect(create(() => 0)).not.toThrow();
    expect(create(() => Date.UTC(9999, 11, 31, 23, 59, 59, 999))).not.toThrow();
  });

  it('a now option that reads wrong later is answered 500 saying what it returned, and the server serves again once it reads right', async () => {
    let now: unknown = T0;
    const server = createReferenceServer({ apiKeys: { k: 'free' }, now: () => now as number });
    now = NaN;
    const broken = await get(server, '/v1/pets');
    expect(broken.status).toBe(500);
    expect(await broken.json()).toEqual({ status: 500, code: 'internal_error', message: expect.stringMatching(/^now must return epoch milliseconds .* it returned NaN\.$/) });
    expect(broken.headers.get('Date')).toBe('Fri, 01 Jan 2027 00:00:00 GMT'); // the last good reading
    expect(server.requests().map((r) => r.status)).toEqual([500]);
    now = T0 + 1_000;
    const served = await get(server, '/v1/pets');
    expect(served.status).toBe(200);
    expect(served.headers.get('Date')).toBe('Fri, 01 Jan 2027 00:00:01 GMT');
  });

  it('a now option that runs on past 9999 from the latest clock move is answered 500 until clock.set moves the clock back', async () => {
    let now = T0;
    const server = createReferenceServer({ apiKeys: { k: 'free' }, now: () => now });
    server.clock.set('9998-12-31T23:59:59.999Z');
    now += 366 * 86_400_000;
    const broken = await get(server, '/v1/pets');
    expect(broken.status).toBe(500);
    expect((await broken.json()).message).toMatch(/^The reference server's clock must read from 1970 to the end of 9999 .*: now\(\) returned \d+, which clock\.advance and clock\.set moved by \d+ ms, to 253402387199999\.$/);
    server.clock.set('2027-06-01T00:00:00Z');
    const served = await get(server, '/v1/pets');
    expect(served.status).toBe(200);
    expect(served.headers.get('Date')).toBe('Tue, 01 Jun 2027 00:00:00 GMT');
  });

  it('keys are labelled by at most half their characters, and keys that share a label are told apart', async () => {
    const server = createReferenceServer({ apiKeys: { abc: 'free', 'same-one': 'free', 'same-two': 'free', 'same-six': 'free' }, admin: true });
    for (const key of ['abc', 'same-one', 'same-two', 'same-six']) await server.fetch(new Request('http://a.test/v1/pets', { headers: { Authorization: `Bearer ${key}` } }));
    const { keys } = await (await server.fetch(new Request('http://a.test/_admin/keys'))).json();
    expect(Object.keys(keys)).toEqual(['a…', 'same…', 'same…#2', 'same…#3']);
  });

  it('a key named __proto__ has its counters in inspect() and GET /_admin/keys like any other (before: they were set as the prototype, and the key was missing)', async () => {
    const server = createReferenceServer({ apiKeys: JSON.parse('{"__proto__": "pro", "constructor": "free"}'), admin: true });
    for (const key of ['__proto__', '__proto__', 'constructor']) await server.fetch(new Request('http://a.test/v1/pets', { headers: { Authorization: `Bearer ${key}` } }));
    const counters = (requests: number) => ({ requests, rateLimited: 0, insideRetryAfter: 0, bans: 0 });
    const { keys } = server.inspect();
    expect(Object.keys(keys)).toEqual(['__proto__', 'constructor']);
    expect(Object.getOwnPropertyDescriptor(keys, '__proto__')?.value).toEqual(counters(2));
    const admin = await (await server.fetch(new Request('http://a.test/_admin/keys'))).json();
    expect(admin).toEqual({ keys: { '__pr…': counters(2), 'cons…': counters(1) } });
  });

  it('keys that share a label have one label each, the same in GET /_admin/keys, the journal and onBan, numbered in the order the keys were given (before: the journal showed both as same…, and /_admin/keys numbered them in the order they first sent)', async () => {
    const events: BanEvent[] = [];
    const server = createReferenceServer({
      apiKeys: { 'same-one': 'free', 'same-two': { perMinute: 1, perDay: 100 } },
      now: () => T0,
      banThreshold: 0,
      onBan: (event) => events.push(event),
      admin: true,
    });
    for (const key of ['same-two', 'same-one', 'same-two', 'same-two']) await get(server, '/v1/pets', { Authorization: `Bearer ${key}` });
    const { keys } = await (await server.fetch(new Request('http://a.test/_admin/keys'))).json();
    expect(keys).toEqual({
      'same…': { requests: 1, rateLimited: 0, insideRetryAfter: 0, bans: 0 },
      'same…#2': { requests: 3, rateLimited: 2, insideRetryAfter: 1, bans: 1 },
    });
    const { requests } = await (await server.fetch(new Request('http://a.test/_admin/requests'))).json();
    expect(requests.map((r: { key: string; status: number; code?: string }) => [r.key, r.status, r.code])).toEqual([
      ['same…#2', 200, undefined],
      ['same…', 200, undefined],
      ['same…#2', 429, 'rate_limited'],
      ['same…#2', 429, 'api_key_banned'],
    ]);
    expect(events.map(({ state, key }) => [state, key])).toEqual([['banned', 'same…#2']]);
  });
});

describe('forced answers: Prefer: code=…', () => {
  it.each([
    [401, 'invalid_api_key'],
    [404, 'not_found'],
    [429, 'rate_limited'],
    [500, 'internal_error'],
    [503, 'service_unavailable'],
  ] as const)('Prefer: code=%d answers that status with an Error record (%s) and changes nothing', async (status, code) => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 2, now: () => T0 + 15_000 });
    const response = await server.fetch(
      new Request('http://a.test/v1/pets', {
        method: 'POST',
        headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json', Prefer: `code=${status}` },
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      }),
    );
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ code, message: expect.stringContaining('Prefer'), status });
    expect(response.headers.get('Preference-Applied')).toBe(`code=${status}`);
    expect(response.headers.get('X-RateLimit-Limit')).toBe('60');
    expect(response.headers.get('X-Request-Id')).toMatch(/^[0-9a-f]{16}$/);
    // Only a 429 says the minute is spent, and only a 401 asks for credentials.
    expect([response.headers.get('Retry-After'), response.headers.get('X-RateLimit-Remaining')]).toEqual(status === 429 ? ['45', '0'] : [null, '60']);
    expect(response.headers.get('WWW-Authenticate')).toEqual(status === 401 ? expect.stringMatching(/^Bearer/) : null);
    expect(server.inspect()).toEqual({ petCount: 2, keys: {} });
    expect(server.requests()[0]).toMatchObject({ status, code, forced: true });
  });

  /** A server whose requests draw faults (half of them a 503), with the admin API served. */
  const faulty = () =>
    createReferenceServer({ admin: true, apiKeys: { k: { perMinute: 5_000, perDay: 5_000 } }, faults: { rate: 0.5, kinds: ['error'], seed: 7 } });
  const sendPets = (server: ReturnType<typeof createReferenceServer>, prefer?: string) =>
    server.fetch(new Request('http://a.test/v1/pets', { headers: { Authorization: 'Bearer k', ...(prefer ? { Prefer: prefer } : {}) } }));
  /** The statuses of 20 `GET /v1/pets`, `before` run ahead of each: what the draw gave them. */
  const drawn = async (server: ReturnType<typeof createReferenceServer>, before: () => Promise<unknown> = async () => {}) => {
    const statuses = [];
    for (let i = 0; i < 20; i++) {
      await before();
      statuses.push((await sendPets(server)).status);
    }
    return statuses;
  };

  it('with faults injected, a forced answer is still the one asked for and takes no draw: the other requests get the faults they would get without it (before: some forced requests got a 503, and each moved the draw)', async () => {
    const expected = await drawn(faulty());
    expect(expected).toContain(503);

    const mixed = faulty();
    expect(await drawn(mixed, async () => expect((await sendPets(mixed, 'code=404')).status).toBe(404))).toEqual(expected);
    expect(mixed.requests().filter(({ forced }) => forced).map(({ fault }) => fault)).toEqual(Array(20).fill(undefined));
  });

  it('with faults injected, the admin API never gets a fault and takes no draw, and a reset starts the draw over', async () => {
    const expected = await drawn(faulty());
    expect(expected).toContain(503);

    const mixed = faulty();
    expect(await drawn(mixed, async () => expect((await mixed.fetch(new Request('http://a.test/_admin/keys'))).status).toBe(200))).toEqual(expected);
    expect((await mixed.fetch(new Request('http://a.test/_admin/reset', { method: 'POST' }))).status).toBe(200);
    expect(await drawn(mixed)).toEqual(expected);
  });

  it('a preflight (OPTIONS) is answered as one, Prefer: code=… or not: 204 with the allowed methods, nothing forced', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const response = await server.fetch(new Request('http://a.test/v1/pets', { method: 'OPTIONS', headers: { Prefer: 'code=503' } }));
    expect(response.status).toBe(204);
    expect(response.headers.get('Allow')).toContain('POST');
    expect(response.headers.get('Preference-Applied')).toBeNull();
    expect(server.requests()[0]).toMatchObject({ method: 'OPTIONS', status: 204 });
    expect(server.requests()[0]!.forced).toBeUndefined();
  });

  it('a preference for any other status, or none, is ignored as RFC 7240 asks', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    for (const prefer of ['code=418', 'code=200', 'respond-async', 'code=4299', 'xcode=429']) {
      const response = await server.fetch(new Request('http://a.test/v1/pets', { headers: { Authorization: 'Bearer k', Prefer: prefer } }));
      expect(response.status, prefer).toBe(200);
      expect(response.headers.get('Preference-Applied')).toBeNull();
    }
    const listed = await server.fetch(new Request('http://a.test/v1/pets', { headers: { Prefer: 'return=minimal, code=429' } }));
    expect(listed.status).toBe(429);
  });

  it('Prefer: code = 429, with the whitespace RFC 7240 allows around "=", is forced too', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const response = await server.fetch(new Request('http://a.test/v1/pets', { headers: { Authorization: 'Bearer k', Prefer: 'code = 429' } }));
    expect(response.status).toBe(429);
    expect(response.headers.get('Preference-Applied')).toBe('code=429');
  });

  it('Prefer outside /v1 forces nothing: the path answers the 404 that points at /v1, as without it', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    for (const url of ['http://a.test/', 'http://a.test/pets']) {
      const response = await server.fetch(new Request(url, { headers: { Authorization: 'Bearer k', Prefer: 'code=500' } }));
      expect(response.status, url).toBe(404);
      expect(response.headers.get('Preference-Applied')).toBeNull();
      expect((await response.json()).message).toContain('The API is under /v1');
    }
  });
});
