import { describe, expect, it, vi } from 'vitest';
import { createReferenceServer, isInjectedFault } from '@animal-store/sdk/server';
import { behaviourSuite, T0 } from './behaviour.js';
import { inProcess } from './transports.js';

// In-process, the fastest path, so the volume tests run here only.
behaviourSuite(inProcess, { volume: true });

describe('createReferenceServer', () => {
  const get = (server: ReturnType<typeof createReferenceServer>, url: string) =>
    server.fetch(new Request(url, { headers: { Authorization: 'Bearer k' } }));

  it('routes under /v1 on any host and below any prefix', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 1, now: () => T0 });
    for (const url of ['http://a.test/v1/pets', 'https://b.example:8443/v1/pets', 'http://c.test/api/v1/pets']) {
      expect((await get(server, url)).status).toBe(200);
    }
    expect((await get(server, 'http://a.test/v2/pets')).status).toBe(404);
  });

  it('GET /openapi.json names as its server the base path it was fetched under, so tools reading it from /api/v1 call /api/v1 (before: always /v1)', async () => {
    const server = createReferenceServer();
    for (const [path, base] of [['/v1/openapi.json', '/v1'], ['/api/v1/openapi.json', '/api/v1'], ['/v1/proxy/v1/openapi.json', '/v1/proxy/v1']]) {
      const doc = await (await server.fetch(new Request(`http://a.test${path}`))).json();
      expect(doc.servers).toEqual([{ url: base }]);
    }
  });

  it('a prefix before /v1 with an empty segment is not the API: //evil.example/v1/pets answers the 404 outside /v1', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 1 });
    for (const path of ['//evil.example/v1/pets', '//v1/pets', '/api//v1/pets']) {
      const response = await get(server, `http://a.test${path}`);
      expect(response.status).toBe(404);
      expect((await response.json()).message).toContain(`${path} is not part of the API`);
    }
    expect(server.inspect().keys).toEqual({});
  });

  it('GET / and any path outside /v1 answer a 404 Error record pointing at /v1, with or without a key', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    for (const url of ['http://a.test/', 'http://a.test/pets', 'http://a.test/v2/pets']) {
      for (const headers of [{}, { Authorization: 'Bearer k' }, { Authorization: 'Bearer wrong' }] as Record<string, string>[]) {
        const response = await server.fetch(new Request(url, { headers }));
        expect(response.status).toBe(404);
        const body = await response.json();
        expect(body).toMatchObject({ code: 'not_found', status: 404 });
        expect(body.message).toContain('under /v1');
        expect(response.headers.get('X-RateLimit-Limit')).toBe('60');
      }
    }
    // Nothing outside /v1 counts against a key.
    expect(server.inspect().keys).toEqual({});
  });

  it('OPTIONS outside /v1 answers the same 404 Error record as GET there, while preflights under /v1 and to a served admin API answer 204', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const options = (target: ReturnType<typeof createReferenceServer>, url: string) =>
      target.fetch(new Request(url, { method: 'OPTIONS', headers: { Origin: 'http://app.test', 'Access-Control-Request-Method': 'GET' } }));
    for (const url of ['http://a.test/', 'http://a.test/pets', 'http://a.test/v2/pets', 'http://a.test/_admin/reset']) {
      const [preflight, get] = [await options(server, url), await server.fetch(new Request(url))];
      expect(preflight.status).toBe(404);
      expect(preflight.headers.get('Allow')).toBeNull();
      expect(preflight.headers.get('Access-Control-Allow-Origin')).toBe('*');
      expect(preflight.headers.get('X-RateLimit-Limit')).toBe('60');
      expect(await preflight.json()).toEqual(await get.json());
    }
    for (const url of ['http://a.test/v1/pets', 'http://a.test/v1/nowhere', 'http://a.test/api/v1/store/orders']) {
      expect((await options(server, url)).status).toBe(204);
    }
    // An unknown path under /v1 allows the API's methods, so the request itself gets its readable 401 or 404.
    expect((await options(server, 'http://a.test/v1/nowhere')).headers.get('Access-Control-Allow-Methods')).toBe('GET, POST, HEAD, OPTIONS');
    const admin = createReferenceServer({ admin: true });
    expect((await options(admin, 'http://a.test/_admin/clock')).status).toBe(204);
    expect(server.inspect().keys).toEqual({});
  });

  it('a preflight that names no headers allows the key, JSON, the SDK\'s identification header, a request id and Prefer', async () => {
    const server = createReferenceServer();
    const response = await server.fetch(new Request('http://a.test/v1/pets', { method: 'OPTIONS', headers: { Origin: 'http://app.test' } }));
    expect(response.status).toBe(204);
    const allowed = response.headers.get('Access-Control-Allow-Headers')?.split(/,\s*/) ?? [];
    expect(allowed).toEqual(['Authorization', 'Content-Type', 'X-Animal-Store-Client', 'X-Request-Id', 'Prefer']);
    expect(response.headers.get('Access-Control-Max-Age')).toBe('600');
  });

  it('a 404 or 405 quotes at most the start of what the client sent: 100 characters of a path, 20 of a method', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const long = 'x'.repeat(300);
    for (const path of [`/${long}`, `/v1/${long}`]) {
      const { message } = await (await get(server, `http://a.test${path}`)).json();
      expect(message, path).toContain(path.slice(0, 100));
      expect(message, path).not.toContain(path.slice(0, 101));
    }
    const method = 'M'.repeat(30);
    const response = await server.fetch(new Request('http://a.test/v1/pets', { method, headers: { Authorization: 'Bearer k' } }));
    expect((await response.json()).message).toBe(`${'M'.repeat(20)}… is not allowed on /pets. Allowed: GET, POST, HEAD, OPTIONS.`);
  });

  it('with the admin API off, an /_admin/ path is an ordinary 404 that says how to turn it on, and is journalled; other paths outside /v1 do not mention it', async () => {
    const server = createReferenceServer();
    const admin = await (await server.fetch(new Request('http://a.test/_admin/keys'))).json();
    expect(admin).toMatchObject({ code: 'not_found', message: expect.stringMatching(/ The admin API is off: start the server with --admin \(admin: true\) to use it\.$/) });
    const other = await (await server.fetch(new Request('http://a.test/v2/pets'))).json();
    expect(other.message).toMatch(/\/v1\/store\/orders\.$/);
    expect(server.requests().map(({ path, status }) => `${path} ${status}`)).toEqual(['/_admin/keys 404', '/v2/pets 404']);
  });

  it('rejects a plan named after an Object.prototype member instead of giving the key no limit', () => {
    for (const plan of ['constructor', 'toString', '__proto__']) {
      expect(() => createReferenceServer({ apiKeys: { k: plan as 'free' } })).toThrow(`plan "${plan}" of a key is unknown`);
    }
  });

  it('takes 200,000 seed records as it takes a count of 200,000', () => {
    const pets = Array.from({ length: 200_000 }, (_, i) => ({ name: `p${i}`, categoryId: 1 }));
    expect(createReferenceServer({ pets }).inspect().petCount).toBe(200_000);
  });

  it('createPet never assigns an id past 2^53 − 1: once the largest safe id is taken it answers 409 ids_exhausted and stores nothing', async () => {
    // A seed with a large id is a fixture worth having (a client must carry it exactly), so it is accepted.
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: [{ id: Number.MAX_SAFE_INTEGER - 1, name: 'Big', categoryId: 1 }] });
    const post = () =>
      server.fetch(
        new Request('http://a.test/v1/pets', {
          method: 'POST',
          headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
        }),
      );
    const created = await post();
    expect(created.status).toBe(201);
    expect((await created.json()).id).toBe(Number.MAX_SAFE_INTEGER);
    for (let i = 0; i < 2; i++) {
      const refused = await post();
      expect(refused.status).toBe(409);
      expect(refused.headers.get('Location')).toBeNull();
      const body = await refused.json();
      expect(body).toMatchObject({ code: 'ids_exhausted', status: 409 });
      expect(body.message).toContain(String(Number.MAX_SAFE_INTEGER));
    }
    expect(server.inspect().petCount).toBe(2);
    const ids = (await (await get(server, 'http://a.test/v1/pets')).json()).map((pet: { id: number }) => pet.id);
    expect(ids).toEqual([Number.MAX_SAFE_INTEGER - 1, Number.MAX_SAFE_INTEGER]);
  });

  it('getPet: a seed pet with id 0 or a negative id is answered like any other, since petId is an int64', async () => {
    const server = createReferenceServer({
      apiKeys: { k: 'free' },
      pets: [{ id: 0, name: 'Zero', categoryId: 1 }, { id: -5, name: 'Minus', categoryId: 2 }],
    });
    expect(await (await get(server, 'http://a.test/v1/pets/0')).json()).toEqual({ id: 0, name: 'Zero', categoryId: 1 });
    expect(await (await get(server, 'http://a.test/v1/pets/-5')).json()).toEqual({ id: -5, name: 'Minus', categoryId: 2 });
    expect((await get(server, 'http://a.test/v1/pets/-6')).status).toBe(404);
  });

  it('createPet: a body with 50,000 unknown fields gets a short 400 naming the first few and counting the rest', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const post = async (body: Record<string, unknown>) => {
      const response = await server.fetch(
        new Request('http://a.test/v1/pets', {
          method: 'POST',
          headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'Rex', categoryId: 1, ...body }),
        }),
      );
      expect(response.status).toBe(400);
      return (await response.json()).message as string;
    };
    const many = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]));
    expect(await post(many)).toBe('Invalid NewPet: body has unknown fields "k0", "k1", "k2" and 49997 more.');
    expect(await post({ ['x'.repeat(100_000)]: 1 })).toBe(`Invalid NewPet: body has unknown field "${'x'.repeat(40)}…".`);
    expect(await post({ id: 1, tag: 'a' })).toBe('Invalid NewPet: body has unknown fields "id", "tag".');
  });

  it('createPet: a streamed body past 1 MiB is refused with 413 once the limit is passed, not read whole first (before: buffered to its end, however long)', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const chunk = new Uint8Array(64 * 1024).fill(32);
    let pulled = 0;
    // 64 MiB in all, without a Content-Length (Deno.serve, Bun.serve and workerd hand such a body over as a stream).
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (++pulled > 1024) controller.close();
        else controller.enqueue(chunk);
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request('http://a.test/v1/pets', { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    const response = await server.fetch(request);
    expect(response.status).toBe(413);
    expect((await response.json()).code).toBe('payload_too_large');
    expect(pulled).toBeLessThan(32);
    // The upload is cancelled, so its sender stops too.
    expect(cancelled).toBe(true);
  });

  it('createPet: a streamed body that breaks off answers 400 bad_request saying to send the whole body, not invalid_body nor invalid_json', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":"Rex",'));
        controller.error(new Error('connection reset'));
      },
    });
    const request = new Request('http://a.test/v1/pets', { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body, duplex: 'half' } as RequestInit);
    const response = await server.fetch(request);
    expect([response.status, await response.json()]).toEqual([
      400,
      { code: 'bad_request', message: 'The request body could not be read to its end. Send the whole body.', status: 400 },
    ]);
    expect(server.inspect().petCount).toBe(0);
  });

  it('createPet: a name\'s length is counted in characters (code points), not UTF-16 code units', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' } });
    const post = (name: string) =>
      server.fetch(
        new Request('http://a.test/v1/pets', {
          method: 'POST',
          headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
          body: JSON.stringify({ name, categoryId: 1 }),
        }),
      );
    expect((await post('🐶'.repeat(256))).status).toBe(201); // 512 code units
    expect((await post('🐶'.repeat(257))).status).toBe(400);
  });

  it('rejects options it cannot honour with a TypeError that says what to fix', () => {
    expect(() => createReferenceServer({ apiKeys: { k: 'gold' as 'free' } })).toThrow(/plan "gold".*"free", "pro", "business"/);
    for (const quota of [{ perMinute: 0, perDay: 1 }, { perMinute: 1, perDay: 0 }, { perMinute: 1.5, perDay: 10 }, { perMinute: 1, perDay: 2.5 }, { perMinute: '1', perDay: 1 }, null]) {
      expect(() => createReferenceServer({ apiKeys: { k: quota as never } }), JSON.stringify(quota)).toThrow('apiKeys: a custom quota must be { perMinute, perDay } with positive integers.');
    }
    for (const key of ['has space', '', 'k\u00e9']) expect(() => createReferenceServer({ apiKeys: { [key]: 'free' } }), key).toThrow(/printable ASCII/);
    expect(() => createReferenceServer({ pets: -1 })).toThrow(/pets: expected a count/);
    expect(() => createReferenceServer({ pets: [{ name: '', categoryId: 1 }] })).toThrow(/pets\[0\]: name must be at least 1 character/);
    expect(() => createReferenceServer({ pets: [{ id: 1, name: 'a', categoryId: 1 }, { id: 1, name: 'b', categoryId: 1 }] })).toThrow(/id 1 is used twice/);
    expect(() => createReferenceServer({ banThreshold: -1 })).toThrow(/banThreshold/);
  });

  it('options that are not an object (from JavaScript) are a TypeError that shows what the options look like, not a default server', () => {
    for (const options of [null, 5, 'pets']) {
      expect(() => createReferenceServer(options as never), String(options)).toThrow(
        new TypeError('createReferenceServer(): the options must be an object, such as { apiKeys, pets, orders }.'),
      );
    }
  });

  it('pets that are neither a count nor a list of seed records (from JavaScript) say what pets takes, not what failed inside', () => {
    expect(() => createReferenceServer({ pets: '5' as never })).toThrow('pets: expected a count (a non-negative integer) or seed records, got "5".');
    expect(() => createReferenceServer({ pets: -1 })).toThrow('pets: expected a count (a non-negative integer) or seed records, got -1.');
    expect(() => createReferenceServer({ pets: [null] as never })).toThrow('pets[0]: expected a seed record such as { name: "Rex", categoryId: 1 }, got null.');
    expect(() => createReferenceServer({ pets: [5] as never })).toThrow('pets[0]: expected a seed record such as { name: "Rex", categoryId: 1 }, got 5.');
  });

  it('a seed record with an unknown field or an id that is no safe integer is a TypeError naming that seed (before: a bad id was blamed on a seed without one before it)', () => {
    const seed = (extra: object) => () => createReferenceServer({ pets: [{ name: 'a', categoryId: 1 }, { name: 'b', categoryId: 1, ...extra }] });
    expect(seed({ tag: 'x' })).toThrow(new TypeError('pets[1]: the record has unknown field "tag".'));
    expect(seed({ id: 1.5 })).toThrow(new TypeError('pets[1]: id must be an integer.'));
    expect(seed({ id: 2 ** 53 })).toThrow(new TypeError('pets[1]: id must be at most 9007199254740991.'));
  });

  it('a seed record without an id after one with the largest safe id is told that no id is left, not that its id is too large', () => {
    const seeds = [{ id: Number.MAX_SAFE_INTEGER, name: 'a', categoryId: 1 }, { name: 'b', categoryId: 1 }];
    expect(() => createReferenceServer({ pets: seeds })).toThrow(
      new TypeError('pets[1]: no id is left after 9007199254740991 for a seed record without one; give it an id.'),
    );
  });

  it('seed records are listed by id whatever their order, and those without an id count up from one past the largest given', async () => {
    const server = createReferenceServer({
      apiKeys: { k: 'free' },
      pets: [{ id: 7, name: 'g', categoryId: 1 }, { name: 'x', categoryId: 2 }, { id: 3, name: 'c', categoryId: 1 }, { name: 'y', categoryId: 3 }],
    });
    const pets = await (await get(server, 'http://a/v1/pets')).json();
    expect(pets.map((p: { id: number; name: string }) => [p.id, p.name])).toEqual([[3, 'c'], [7, 'g'], [8, 'x'], [9, 'y']]);
  });

  it('listPets with a status no pet has answers an empty array', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: [{ name: 'a', categoryId: 1, status: 'available' }, { name: 'b', categoryId: 1 }] });
    for (const status of ['sold', 'pending']) expect(await (await get(server, `http://a/v1/pets?status=${status}`)).json()).toEqual([]);
  });

  it('pets: a count generates named pets (Rex 1 … Hazel 1, then Rex 2), in categories 1 to 5 and the statuses in turn', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 12 });
    const pets = await (await get(server, 'http://a/v1/pets')).json();
    expect(pets.map((p: { name: string }) => p.name)).toEqual(['Rex 1', 'Whiskers 1', 'Bubbles 1', 'Nibbles 1', 'Luna 1', 'Milo 1', 'Coco 1', 'Pepper 1', 'Ziggy 1', 'Hazel 1', 'Rex 2', 'Whiskers 2']);
    expect(pets.slice(0, 7)).toEqual([
      { id: 1, name: 'Rex 1', categoryId: 1, status: 'available' },
      { id: 2, name: 'Whiskers 1', categoryId: 2, status: 'pending' },
      { id: 3, name: 'Bubbles 1', categoryId: 3, status: 'sold' },
      { id: 4, name: 'Nibbles 1', categoryId: 4, status: 'available' },
      { id: 5, name: 'Luna 1', categoryId: 5, status: 'pending' },
      { id: 6, name: 'Milo 1', categoryId: 1, status: 'sold' },
      { id: 7, name: 'Coco 1', categoryId: 2, status: 'available' },
    ]);
  });

  it('orders that are not a list JSON can hold (a BigInt id, a cycle) are a TypeError when the server is created (before: GET /store/orders answered 500)', async () => {
    expect(() => createReferenceServer({ orders: [{ id: 1n }] })).toThrow(/orders: expected a list of JSON values/);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => createReferenceServer({ orders: [cycle] })).toThrow(/orders: expected a list of JSON values/);
    expect(() => createReferenceServer({ orders: { id: 1 } as never })).toThrow(/orders: expected a list of JSON values/);
    const server = createReferenceServer({ apiKeys: { k: 'free' }, orders: [{ id: 7, petId: 1 }] });
    const response = await get(server, 'http://a/v1/store/orders');
    expect([response.status, await response.json()]).toEqual([200, [{ id: 7, petId: 1 }]]);
  });

  it('a misspelt option (JavaScript has no type check) is a TypeError naming the one meant, not a server with the demo key only', () => {
    expect(() => createReferenceServer({ apikeys: { k: 'free' } } as never)).toThrow(TypeError);
    expect(() => createReferenceServer({ apikeys: { k: 'free' } } as never)).toThrow('createReferenceServer(): unknown option "apikeys" (did you mean "apiKeys"?).');
    expect(() => createReferenceServer({ seed: 3 } as never)).toThrow(/^createReferenceServer\(\): unknown option "seed"\. The options are apiKeys, pets, orders, .*onBan\.$/);
    expect(() => createReferenceServer({ apiKeys: undefined, pets: undefined })).not.toThrow();
  });

  it('the clock is read per request, so moving it moves the windows', async () => {
    let now = T0;
    const server = createReferenceServer({ apiKeys: { k: { perMinute: 1, perDay: 10 } }, now: () => now });
    expect((await get(server, 'http://a/v1/pets')).status).toBe(200);
    expect((await get(server, 'http://a/v1/pets')).status).toBe(429);
    now += 60_000;
    expect((await get(server, 'http://a/v1/pets')).status).toBe(200);
  });

  it('HEAD on a GET route answers the headers with no body', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 2 });
    const response = await server.fetch(new Request('http://a/v1/pets', { method: 'HEAD', headers: { Authorization: 'Bearer k' } }));
    expect(response.status).toBe(200);
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('59');
    expect(await response.text()).toBe('');
  });

  it('faults: a dropped connection comes before the request is acted on or, as often, after it: some dropped createPets made their pet, some did not', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'business' }, pets: 0, faults: { rate: 1, kinds: ['drop'], seed: 3 } });
    const post = () =>
      server.fetch(new Request('http://a/v1/pets', { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' }));
    for (let i = 0; i < 20; i++) await expect(post()).rejects.toThrow(TypeError);
    expect(server.inspect().petCount).toBeGreaterThan(0);
    expect(server.inspect().petCount).toBeLessThan(20);
  });

  it('faults: the OpenAPI document never gets one, with a trailing slash too, while a path that only ends in /openapi.json draws like any request (before: the other way round)', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 1, kinds: ['error'] } });
    for (const path of ['/v1/openapi.json', '/v1/openapi.json/', '/api/v1/openapi.json/']) {
      expect((await server.fetch(new Request(`http://a${path}`))).status, path).toBe(200);
    }
    for (const path of ['/v1/pets/openapi.json', '/openapi.json']) {
      expect((await get(server, `http://a${path}`)).status, path).toBe(503);
    }
  });

  it('faults: a drop rejects like a failed fetch, an error is a 503 Error record, and the draw repeats per seed', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 1, kinds: ['drop'], seed: 3 } });
    const dropped = await get(server, 'http://a/v1/pets').catch((error: unknown) => error);
    expect(dropped).toBeInstanceOf(TypeError);
    expect(isInjectedFault(dropped)).toBe(true);
    expect(dropped).toMatchObject({ name: 'InjectedFault', kind: 'drop', message: 'fetch failed: connection dropped by injected fault' });
    const failing = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 1, kinds: ['error'] } });
    const response = await get(failing, 'http://a/v1/pets');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ code: 'service_unavailable', message: 'Injected fault: the service is unavailable. Retry later.', status: 503 });
    const draws = async (seed = 42) => {
      const s = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 0.5, kinds: ['error'], seed } });
      const out = [];
      for (let i = 0; i < 20; i++) out.push((await get(s, 'http://a/v1/store/orders')).status);
      return out;
    };
    const first = await draws();
    expect(first).toEqual(await draws());
    expect(first).toContain(503);
    expect(first).toContain(200);
    // Every seed petstore-server takes (up to 2^53 - 1) picks its own draw: past 2^32, 42 + 2^32
    // drew what 42 draws (before: only the low 32 bits counted).
    expect(await draws(42 + 2 ** 32)).not.toEqual(first);
    expect(await draws(Number.MAX_SAFE_INTEGER)).not.toEqual(await draws(2 ** 32 - 1));
  });

  it('isInjectedFault is true of an injected drop only, not of other network errors nor of lookalikes that are no Error', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 1, kinds: ['drop'] } });
    expect(isInjectedFault(await get(server, 'http://a/v1/pets').catch((error: unknown) => error))).toBe(true);
    for (const other of [new TypeError('fetch failed'), { name: 'InjectedFault', kind: 'drop' }, null, 'InjectedFault']) {
      expect(isInjectedFault(other), String(other)).toBe(false);
    }
  });

  it('faults: a seed fixes the draw, drops before and after acting included: seed 1 over eight createPets gives the same outcomes every run', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 0.75, kinds: ['drop', 'error'], seed: 1 } });
    const outcomes: string[] = [];
    for (let i = 0; i < 8; i++) {
      const before = server.inspect().petCount;
      const post = new Request('http://a/v1/pets', { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' });
      const status = await server.fetch(post).then((r) => String(r.status), () => 'drop');
      outcomes.push(status === 'drop' ? (server.inspect().petCount > before ? 'drop after' : 'drop before') : status);
    }
    expect(outcomes).toEqual(['drop before', '201', '201', '503', '503', 'drop after', 'drop after', 'drop before']);
  });

  it('faults: a truncated body fails when read, after the request was acted on', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 1, kinds: ['truncate'] } });
    const response = await server.fetch(
      new Request('http://a/v1/pets', { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body: '{"name":"a","categoryId":1}' }),
    );
    expect(response.status).toBe(201);
    await expect(response.text()).rejects.toThrow();
    expect(server.inspect().petCount).toBe(1);
  });

  it('faults: a truncated body announces its whole length and hands over its first half before it breaks off, as over node:http (before: no length, and the error came before any byte)', async () => {
    const server = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 1, kinds: ['truncate'] } });
    const response = await server.fetch(
      new Request('http://a/v1/pets', { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' }),
    );
    const whole = '{"id":1,"name":"Rex","categoryId":1}';
    expect(response.headers.get('Content-Length')).toBe(String(whole.length));
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe(whole.slice(0, whole.length / 2));
    await expect(reader.read()).rejects.toMatchObject({ name: 'InjectedFault', kind: 'drop', message: 'fetch failed: connection dropped by injected fault' });
  });

  it('rejects a fault rate outside 0 to 1 and a kind of fault it does not know; a rate of 0 injects nothing', async () => {
    expect(() => createReferenceServer({ faults: { rate: 2 } })).toThrow(/faults.rate/);
    expect(() => createReferenceServer({ faults: { rate: -0.1 } })).toThrow('faults.rate must be a number from 0 to 1, got -0.1.');
    expect(() => createReferenceServer({ faults: { rate: 1, kinds: ['drop', 'boom' as 'drop'] } })).toThrow('faults.kinds: "boom" is not one of latency, error, drop, truncate.');
    const server = createReferenceServer({ apiKeys: { k: 'free' }, faults: { rate: 0 } });
    expect((await get(server, 'http://a/v1/pets')).status).toBe(200);
  });

  it('faults without kinds draw from every kind: latency, error, drop and truncate', async () => {
    vi.useFakeTimers();
    try {
      const server = createReferenceServer({ apiKeys: { k: 'business' }, faults: { rate: 1, latencyMs: 5 } });
      for (let i = 0; i < 40; i++) {
        const answer = get(server, 'http://a/v1/pets').then((response) => response.text()).catch(() => undefined);
        await vi.advanceTimersByTimeAsync(5);
        await answer;
      }
      expect(new Set(server.requests().map((r) => r.fault))).toEqual(new Set(['latency', 'error', 'drop', 'truncate']));
    } finally {
      vi.useRealTimers();
    }
  });
});
