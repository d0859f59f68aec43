import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PetStoreClient } from '@animal-store/sdk';
import { createHandlers } from '@animal-store/sdk/msw';
import { createReferenceServer } from '@animal-store/sdk/server';
import { behaviourSuite } from './behaviour.js';
import { throughMsw } from './transports.js';

const baseUrl = 'https://petstore.test/v1';

behaviourSuite(throughMsw);

describe('createHandlers', () => {
  let mock: ReturnType<typeof setupServer> | undefined;
  afterEach(() => {
    mock?.close();
    mock = undefined;
  });

  it('no options, a misspelt one, or the options in place of the server is a TypeError that shows the call', () => {
    const server = createReferenceServer();
    expect(() => createHandlers(server, undefined as never)).toThrow('createHandlers: give the base URL the client uses: createHandlers(server, { baseUrl: "https://petstore.test/v1" }).');
    expect(() => createHandlers(server, 5 as never)).toThrow(new TypeError('createHandlers: the options must be an object, such as { baseUrl }.'));
    expect(() => createHandlers(server, { baseURL: baseUrl } as never)).toThrow('createHandlers: unknown option "baseURL" (did you mean "baseUrl"?).');
    expect(() => createHandlers({ baseUrl } as never, { baseUrl })).toThrow('createHandlers: pass the reference server first, then the options');
  });

  it('answers only under its base URL', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    // What the reference server's handlers do not take falls through to this one.
    mock = setupServer(...createHandlers(server, { baseUrl: 'https://a.test/v1/' }), http.all('*', () => new HttpResponse(null, { status: 418 })));
    mock.listen({ onUnhandledFrame: 'error' });
    const headers = { Authorization: 'Bearer k' };
    expect((await fetch('https://a.test/v1/pets', { headers })).status).toBe(200);
    expect((await fetch('https://a.test/v1', { headers })).status).toBe(404);
    for (const foreign of ['https://other.test/v1/pets', 'http://a.test/v1/pets', 'https://a.test/v1x/pets', 'https://a.test/pets']) {
      expect((await fetch(foreign, { headers })).status).toBe(418);
    }
  });

  it('answers only under its base URL whatever its path holds: a ":" or "*" in it is no msw pattern (before: /api:v2/v1 also answered /apiX/v1, and /x*/v1 /xyz/v1)', async () => {
    const headers = { Authorization: 'Bearer k' };
    for (const [base, own, foreign] of [
      ['https://a.test/api:v2/v1', 'https://a.test/api:v2/v1/pets', 'https://a.test/apiX/v1/pets'],
      ['https://a.test/x*/v1', 'https://a.test/x*/v1/pets', 'https://a.test/xyz/v1/pets'],
    ] as const) {
      const server = createReferenceServer({ apiKeys: { k: 'free' } });
      // What the reference server's handlers do not take falls through to this one.
      mock = setupServer(...createHandlers(server, { baseUrl: base }), http.all('*', () => new HttpResponse(null, { status: 418 })));
      mock.listen({ onUnhandledFrame: 'error' });
      expect((await fetch(own, { headers })).status).toBe(200);
      expect((await fetch(foreign, { headers })).status).toBe(418);
      mock.close();
      mock = undefined;
    }
  });

  it('serves the API at a base URL whose path holds /v1 twice (a proxy mounted under another /v1), Location included', async () => {
    const base = 'https://x.example/v1/proxy/v1';
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 1 });
    mock = setupServer(...createHandlers(server, { baseUrl: base }));
    mock.listen({ onUnhandledFrame: 'error' });
    const client = new PetStoreClient({ apiKey: 'k', baseUrl: base, logLevel: 'off' });
    expect(await client.listPets()).toHaveLength(1);
    const created = await fetch(`${base}/pets`, {
      method: 'POST',
      headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('Location')).toBe(`${base}/pets/2`);
    expect((await client.getPet(2)).name).toBe('Rex');
    // A path below the API's /v1 that is no route is still a 404, and a petId "v1" still a 400.
    expect((await fetch(`${base}/nope`, { headers: { Authorization: 'Bearer k' } })).status).toBe(404);
    const notAnId = await fetch(`${base}/pets/v1`, { headers: { Authorization: 'Bearer k' } });
    expect([notAnId.status, (await notAnId.json()).code]).toEqual([400, 'invalid_pet_id']);
  });

  it('takes the base URL as a URL object too, as the client does', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 1 });
    mock = setupServer(...createHandlers(server, { baseUrl: new URL(baseUrl) }));
    mock.listen({ onUnhandledFrame: 'error' });
    expect(await new PetStoreClient({ apiKey: 'k', baseUrl: new URL(baseUrl) }).listPets()).toHaveLength(1);
  });

  it('turns an injected dropped connection into a network error', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, faults: { rate: 1, kinds: ['drop'] } });
    mock = setupServer(...createHandlers(server, { baseUrl }));
    mock.listen({ onUnhandledFrame: 'error' });
    await expect(fetch(`${baseUrl}/pets`, { headers: { Authorization: 'Bearer k' } })).rejects.toThrow(TypeError);
  });

  it('a request its client aborts while the server waits (an injected latency) ends quietly, not as an unhandled exception msw reports', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, faults: { rate: 1, kinds: ['latency'], latencyMs: 60_000 } });
    mock = setupServer(...createHandlers(server, { baseUrl }));
    mock.listen({ onUnhandledFrame: 'error' });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const controller = new AbortController();
      // Aborted once msw has handed the request to the server, which then waits on the latency.
      mock.events.on('request:start', () => void setTimeout(() => controller.abort(new Error('gave up'))));
      // msw hears of the abort after the client does: the handler's answer is matched, or its
      // exception reported.
      let matched = false;
      mock.events.on('request:match', () => void (matched = true));
      const pending = fetch(`${baseUrl}/pets`, { headers: { Authorization: 'Bearer k' }, signal: controller.signal });
      await expect(pending).rejects.toThrow('gave up');
      await expect.poll(() => matched || errors.mock.calls.length > 0, { message: 'the handler has answered or thrown' }).toBe(true);
      expect(errors.mock.calls.flat().join(' ')).not.toContain('unhandled exception');
    } finally {
      errors.mockRestore();
    }
  });

  it('in a page, takes the same relative base URL as the client (/api/v1), resolved against the page\'s address', async () => {
    vi.stubGlobal('location', { href: 'https://app.test/shop/index.html' });
    try {
      const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 2 });
      mock = setupServer(...createHandlers(server, { baseUrl: '/api/v1' }));
      mock.listen({ onUnhandledFrame: 'error' });
      const client = new PetStoreClient({ apiKey: 'k', baseUrl: '/api/v1' });
      expect(await client.listPets()).toHaveLength(2);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('rejects a base URL that is not absolute', () => {
    const server = createReferenceServer();
    expect(() => createHandlers(server, { baseUrl: '/v1' })).toThrow(/absolute URL/);
  });
});
