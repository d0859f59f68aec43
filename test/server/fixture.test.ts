// The reference server as a fixture for test suites in any language: request ids, forced answers
// (Prefer: code=N), the request journal, the clock, and the admin API over plain HTTP.
import { afterEach, describe, expect, it } from 'vitest';
import { startReferenceServer, type RunningReferenceServer } from '@animal-store/sdk/node';
import { createReferenceServer } from '@animal-store/sdk/server';

const KEY = 'sk_test_FIXTUREk3y';
let running: RunningReferenceServer | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** 2026-06-01T00:00:10Z on the server's clock. */
const START = Date.UTC(2026, 5, 1, 0, 0, 10);

async function start(options: Parameters<typeof startReferenceServer>[0] = {}) {
  running = await startReferenceServer({ apiKeys: { [KEY]: { perMinute: 2, perDay: 100 } }, now: () => START, admin: true, pets: 3, ...options });
  const root = running.url.replace(/\/v1$/, '');
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${root}${path}`, { ...init, headers: { Authorization: `Bearer ${KEY}`, ...(init.headers as Record<string, string>) } });
  const adminCall = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${root}/_admin/${path}`, { method, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return { call, admin: adminCall };
}

describe('request ids', () => {
  it('every answer carries its own X-Request-Id, errors and preflights included, and the journal records it', async () => {
    const { call } = await start();
    const answers = [await call('/v1/pets'), await call('/v1/nope'), await call('/v1/pets', { method: 'OPTIONS' }), await call('/v1/pets', { headers: { Authorization: 'Bearer wrong' } })];
    const ids = answers.map((r) => r.headers.get('X-Request-Id'));
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(4);
    expect(running!.server.requests().map((r) => r.requestId)).toEqual(expect.arrayContaining([ids[0], ids[1], ids[3]]));
  });
});

describe('Prefer: code=N forces an answer and changes nothing', () => {
  it.each([
    [429, 'rate_limited'],
    [401, 'invalid_api_key'],
    [404, 'not_found'],
    [500, 'internal_error'],
    [503, 'service_unavailable'],
  ])('Prefer: code=%i answers %i with its Error record', async (status, code) => {
    const { call } = await start();
    const response = await call('/v1/pets', { method: 'POST', headers: { Prefer: `code=${status}`, 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' });
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ code, status });
    if (status === 429) expect(response.headers.get('Retry-After')).toBe('50');
    if (status === 401) expect(response.headers.get('WWW-Authenticate')).toMatch(/^Bearer/);
    expect(running!.server.inspect()).toEqual({ petCount: 3, keys: {} });
  });
});

describe('the admin API (admin: true, or --admin)', () => {
  it('GET /_admin/keys shows each key\'s counters under a label, never the key', async () => {
    const { call, admin } = await start();
    await call('/v1/pets');
    const { status, body } = await admin('GET', 'keys');
    expect(status).toBe(200);
    expect(body).toEqual({ keys: { 'sk_t…': { requests: 1, rateLimited: 0, insideRetryAfter: 0, bans: 0 } } });
    expect(JSON.stringify(body)).not.toContain(KEY);
  });

  it('GET /_admin/requests is the journal; DELETE clears it', async () => {
    const { call, admin } = await start();
    await call('/v1/pets');
    await call('/v1/pets');
    await call('/v1/pets');
    const { body } = await admin('GET', 'requests');
    expect(body.requests).toEqual([
      expect.objectContaining({ time: '2026-06-01T00:00:10.000Z', method: 'GET', path: '/v1/pets', status: 200, key: 'sk_t…', insideRetryAfter: false }),
      expect.objectContaining({ status: 200 }),
      expect.objectContaining({ status: 429, code: 'rate_limited', requestId: expect.stringMatching(/^[0-9a-f]{16}$/) }),
    ]);
    expect(JSON.stringify(body)).not.toContain(KEY);
    expect((await admin('DELETE', 'requests')).status).toBe(200);
    expect((await admin('GET', 'requests')).body).toEqual({ requests: [] });
  });

  it('POST /_admin/clock skips the minute window without waiting, and can set the date past the getPet sunset', async () => {
    const { call, admin } = await start();
    await call('/v1/pets');
    await call('/v1/pets');
    expect((await call('/v1/pets')).status).toBe(429);
    expect((await admin('POST', 'clock', { advanceMs: 60_000 })).body).toEqual({ now: '2026-06-01T00:01:10.000Z' });
    expect((await call('/v1/pets')).status).toBe(200);
    await admin('POST', 'clock', { set: '2031-01-01T00:00:00Z' });
    expect((await call('/v1/pets/1')).status).toBe(410);
  });

  it('POST /_admin/reset restores the seed pets and forgets the counters', async () => {
    const { call, admin } = await start();
    await call('/v1/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' });
    expect((await admin('POST', 'reset')).status).toBe(200);
    expect(running!.server.inspect()).toEqual({ petCount: 3, keys: {} });
  });

  it('bad admin requests get 400 or 404 Error records, and without admin: true there is no admin API', async () => {
    const { admin } = await start();
    expect(await admin('POST', 'clock', { advanceMs: -5 })).toMatchObject({ status: 400, body: { code: 'invalid_body' } });
    expect(await admin('POST', 'clock', { advanceMs: 1, set: '2026-01-01' })).toMatchObject({ status: 400 });
    expect(await admin('POST', 'clock', { set: 'someday' })).toMatchObject({ status: 400, body: { code: 'invalid_body' } });
    expect(await admin('GET', 'nothing')).toMatchObject({ status: 404, body: { code: 'not_found' } });
    await running!.close();
    const plain = await start({ admin: false });
    expect(await plain.admin('POST', 'reset')).toMatchObject({ status: 404, body: { code: 'not_found', message: expect.stringMatching(/under \/v1/) } });
  });
});

describe('in-process, the same as methods', () => {
  it('server.clock moves time; server.requests() is the journal', async () => {
    const server = createReferenceServer({ apiKeys: { [KEY]: { perMinute: 1, perDay: 100 } }, now: () => START });
    const get = () => server.fetch(new Request('http://localhost/v1/pets', { headers: { Authorization: `Bearer ${KEY}` } }));
    await get();
    expect((await get()).status).toBe(429);
    server.clock.advance(60_000);
    expect(server.clock.now().toISOString()).toBe('2026-06-01T00:01:10.000Z');
    expect((await get()).status).toBe(200);
    expect(server.requests().map((r) => r.status)).toEqual([200, 429, 200]);
    server.clearRequests();
    expect(server.requests()).toEqual([]);
  });

  it('GET / and anything outside /v1 answers a 404 pointing at /v1, not a 401', async () => {
    const server = createReferenceServer();
    const response = await server.fetch(new Request('http://localhost/'));
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 'not_found', message: expect.stringMatching(/The API is under \/v1/) });
  });
});
