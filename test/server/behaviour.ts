/**
 * The reference server's behaviour suite. Each transport file (server.fetch, msw, node:http) runs
 * it, so every behaviour is checked the same way over each path a user can take. The volume
 * suite (thousands of requests) runs once, in-process: what it checks does not depend on the path.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReferenceServer, ReferenceServerOptions } from '@animal-store/sdk/server';
import type { Send, Transport } from './transports.js';

/** 2027-01-01T00:00:00Z: a clock-aligned minute and day start, well before getPet's sunset. */
export const T0 = Date.UTC(2027, 0, 1);

const KEYS = {
  free: 'key-free',
  pro: 'key-pro',
  business: 'key-business',
  ent: 'key-ent',
} as const;

/**
 * Registers the behaviour suite over `transport`. `volume: true` adds the tests that send
 * thousands of requests (whole plans and days); one transport runs them.
 */
export function behaviourSuite(transport: Transport, { volume = false } = {}): void {
  let now = T0;
  let server: ReferenceServer;
  let baseUrl: string;
  let sendRequest: Send;
  let stop: (() => Promise<void>) | undefined;
  const close = async () => {
    const closing = stop;
    stop = undefined;
    await closing?.();
  };

  const start = async (options: ReferenceServerOptions = {}) => {
    await close();
    ({ server, baseUrl, send: sendRequest, close: stop } = await transport.start({
      apiKeys: { [KEYS.free]: 'free', [KEYS.pro]: 'pro', [KEYS.business]: 'business', [KEYS.ent]: { perMinute: 5, perDay: 8 } },
      pets: 30,
      now: () => now,
      ...options,
    }));
  };
  const send = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key = KEYS.pro, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null && !headers.has('Authorization')) headers.set('Authorization', `Bearer ${key}`);
    return sendRequest(new Request(`${baseUrl}${path}`, { ...rest, headers }));
  };
  const post = (body: unknown, init: RequestInit & { key?: string | null } = {}) =>
    send('/pets', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...init,
    });
  /** Asserts an Error record with the HTTP status in its body, and returns it. */
  const errorOf = async (response: Response, status: number) => {
    expect(response.status).toBe(status);
    expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
    const body = await response.json();
    expect(body).toEqual({ code: expect.any(String), message: expect.any(String), status });
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
    return body as { code: string; message: string; status: number };
  };
  const rateLimitHeaders = (response: Response) => ({
    limit: Number(response.headers.get('X-RateLimit-Limit')),
    remaining: Number(response.headers.get('X-RateLimit-Remaining')),
    reset: Number(response.headers.get('X-RateLimit-Reset')),
  });

  describe(`reference server over ${transport.name}`, () => {
    beforeEach(async () => {
      now = T0;
      await start();
    });
    afterEach(async () => {
      await close();
    });

    describe('routes', () => {
      it('GET /pets answers 200 with a JSON array of pets', async () => {
        const response = await send('/pets');
        expect(response.status).toBe(200);
        const pets = await response.json();
        expect(pets).toHaveLength(20);
        expect(pets[0]).toEqual({ id: 1, name: expect.any(String), categoryId: expect.any(Number), status: 'available' });
      });

      it('GET /store/orders answers an empty JSON array unless seeded', async () => {
        expect(await (await send('/store/orders')).json()).toEqual([]);
        await start({ orders: [{ id: 7, petId: 1 }] });
        expect(await (await send('/store/orders')).json()).toEqual([{ id: 7, petId: 1 }]);
      });

      it('an unknown path answers 404 with an Error record that names the API\'s paths', async () => {
        const body = await errorOf(await send('/animals'), 404);
        expect(body.code).toBe('not_found');
        expect(body.message).toContain('/v1/pets, /v1/pets/{petId} and /v1/store/orders');
      });

      it('a route\'s path with more before or after it is no route: 404, and /openapi.json.bak needs a key', async () => {
        for (const path of ['/x/pets', '/x/pets/1', '/x/store/orders', '/store/orders/x', '/openapi.json.bak']) {
          expect((await errorOf(await send(path), 404)).code, path).toBe('not_found');
        }
        expect((await errorOf(await send('/openapi.json.bak', { key: null }), 401)).code).toBe('missing_api_key');
      });

      it('a known path with the wrong method answers 405 with Allow', async () => {
        const response = await send('/pets', { method: 'DELETE' });
        expect((await errorOf(response, 405)).message).toBe('DELETE is not allowed on /pets. Allowed: GET, POST, HEAD, OPTIONS.');
        expect(response.headers.get('Allow')).toBe('GET, POST, HEAD, OPTIONS');
        const single = await send('/pets/1', { method: 'PUT', body: '{}' });
        await errorOf(single, 405);
        expect(single.headers.get('Allow')).toBe('GET, HEAD, OPTIONS');
      });

      it('a request target (path and query) longer than 8,000 characters answers 414 uri_too_long and counts against no key (before: served in-process and over msw, 200)', async () => {
        const query = `?status=available&filler=${'a'.repeat(8_000)}`;
        const response = await send(`/pets${query}`);
        const body = await errorOf(response, 414);
        expect(body.code).toBe('uri_too_long');
        expect(body.message).toContain('8000');
        expect(rateLimitHeaders(response)).toMatchObject({ limit: 60, remaining: 60 });
        expect(server.inspect().keys).toEqual({});
        const [record] = server.requests();
        expect(record).toMatchObject({ method: 'GET', status: 414, code: 'uri_too_long', key: null });
        expect(record!.path).toBe(`${new URL(baseUrl).pathname}/pets${query}`.slice(0, 100) + '…');
        // At the limit itself the request is served.
        const start = new URL(`${baseUrl}/pets?status=available&filler=`);
        const fits = `/pets${start.search}${'a'.repeat(8_000 - start.pathname.length - start.search.length)}`;
        expect((await send(fits)).status).toBe(200);
        expect(server.requests().at(-1)!.path).toBe(`${new URL(baseUrl).pathname}${fits}`); // kept whole
      });

      it('HEAD answers the Content-Length its GET\'s body has, errors included, and no body (before: none, or 0 under Bun.serve and Deno.serve)', async () => {
        for (const [path, key] of [['/pets?limit=7', KEYS.pro], ['/pets', null], ['/animals', KEYS.pro]] as const) {
          const body = await (await send(path, { key })).text();
          const head = await send(path, { method: 'HEAD', key });
          expect(head.headers.get('Content-Length'), `HEAD ${path}`).toBe(String(new TextEncoder().encode(body).length));
          expect(await head.text()).toBe('');
        }
      });

      it('a trailing slash reaches the same route', async () => {
        expect((await send('/pets/')).status).toBe(200);
      });

      it('GET /openapi.json serves an OpenAPI 3.1 document generated from the schemas, without a key', async () => {
        const response = await send('/openapi.json', { key: null });
        expect(response.status).toBe(200);
        const doc = await response.json();
        expect(doc.openapi).toBe('3.1.0');
        expect(Object.keys(doc.paths)).toEqual(['/pets', '/pets/{petId}', '/store/orders']);
        expect(doc.paths['/pets/{petId}'].get.deprecated).toBe(true);
        expect(doc.components.schemas.NewPet.required).toEqual(['name', 'categoryId']);
        expect(doc.components.schemas.Pet.properties.status.enum).toEqual(['available', 'pending', 'sold']);
      });

      it('GET /openapi.json gives every int64 of the spec format int64, as petId has it, so generated clients do not read ids as 32-bit (before: Pet.id and the categoryIds had none)', async () => {
        const doc = await (await send('/openapi.json', { key: null })).json();
        const { Pet, NewPet } = doc.components.schemas;
        const petId = doc.paths['/pets/{petId}'].get.parameters[0].schema;
        for (const field of [Pet.properties.id, Pet.properties.categoryId, NewPet.properties.categoryId, petId]) {
          expect(field).toMatchObject({ type: 'integer', format: 'int64' });
        }
        const created = await (await post({ name: 'Big', categoryId: 2 ** 31 })).json();
        expect(created.categoryId).toBe(2 ** 31);
      });

      it('GET /openapi.json refers every Animal record to the one Pet schema, the list items too, so a generated client has one Pet type (before: listPets repeated it inline)', async () => {
        const doc = await (await send('/openapi.json', { key: null })).json();
        const body = (operation: { responses: Record<string, { content: Record<string, { schema: unknown }> }> }, status: number) => operation.responses[status]!.content['application/json']!.schema;
        const pet = { $ref: '#/components/schemas/Pet' };
        expect(body(doc.paths['/pets'].get, 200)).toEqual({ type: 'array', items: pet });
        expect(body(doc.paths['/pets'].post, 201)).toEqual(pet);
        expect(body(doc.paths['/pets/{petId}'].get, 200)).toEqual(pet);
      });

      it('GET /openapi.json leaves the Pet and Error records open, as the spec does, so a generated client does not reject a field the service adds (before: additionalProperties: false on both)', async () => {
        const doc = await (await send('/openapi.json', { key: null })).json();
        for (const name of ['Pet', 'Error']) {
          expect(doc.components.schemas[name]).toMatchObject({ type: 'object', required: expect.any(Array) });
          expect(doc.components.schemas[name]).not.toHaveProperty('additionalProperties');
        }
      });

      it('GET /openapi.json describes the orders listing as any JSON, as the client reads it, since the spec shows nothing of its payload (before: an array)', async () => {
        const doc = await (await send('/openapi.json', { key: null })).json();
        expect(doc.paths['/store/orders'].get.responses[200].content['application/json'].schema).toEqual({});
      });

      it('GET /openapi.json publishes the name rule the server enforces: 1 to 256 characters', async () => {
        const doc = await (await send('/openapi.json', { key: null })).json();
        const { minLength, maxLength } = doc.components.schemas.NewPet.properties.name;
        expect([minLength, maxLength]).toEqual([1, 256]);
        for (const [length, status] of [[minLength - 1, 400], [minLength, 201], [maxLength, 201], [maxLength + 1, 400]]) {
          expect((await post({ name: 'x'.repeat(length), categoryId: 1 })).status).toBe(status);
        }
      });
    });

    describe('authentication', () => {
      it('a request without Authorization answers 401 with WWW-Authenticate: Bearer', async () => {
        const response = await send('/pets', { key: null });
        expect((await errorOf(response, 401)).code).toBe('missing_api_key');
        expect(response.headers.get('WWW-Authenticate')).toMatch(/^Bearer/);
      });

      it('a malformed Authorization header answers 401', async () => {
        const response = await send('/pets', { key: null, headers: { Authorization: `Basic ${btoa('a:b')}` } });
        expect((await errorOf(response, 401)).code).toBe('invalid_api_key');
        expect(response.headers.get('WWW-Authenticate')).toMatch(/^Bearer/);
      });

      it('an unknown key answers 401 on every route, and its message does not echo the key', async () => {
        for (const path of ['/pets', '/pets/1', '/store/orders', '/nowhere']) {
          const body = await errorOf(await send(path, { key: 'not-a-key' }), 401);
          expect(body.message).not.toContain('not-a-key');
        }
        await errorOf(await post({ name: 'x', categoryId: 1 }, { key: 'key-pr' }), 401);
      });

      it('a key of any visible ASCII the apiKeys option accepts authenticates, as the client sends it', async () => {
        const key = 'k!$%&*()[]{}:;<>?@^`|\\"\',';
        await start({ apiKeys: { [key]: 'free' } });
        expect((await send('/pets', { key })).status).toBe(200);
        expect((await errorOf(await send('/pets', { key: `${key}x` }), 401)).code).toBe('invalid_api_key');
      });

      it('Bearer and the key may be apart by more than one space (RFC 6750: 1*SP), but anything after the key is a malformed header', async () => {
        expect((await send('/pets', { key: null, headers: { Authorization: `Bearer   ${KEYS.pro}` } })).status).toBe(200);
        const body = await errorOf(await send('/pets', { key: null, headers: { Authorization: `Bearer ${KEYS.pro} extra` } }), 401);
        expect(body).toMatchObject({ code: 'invalid_api_key', message: expect.stringContaining('malformed') });
      });

      it('the Bearer scheme is case-insensitive', async () => {
        expect((await send('/pets', { key: null, headers: { Authorization: `bearer ${KEYS.pro}` } })).status).toBe(200);
      });

      it('with no apiKeys option, the documented demo key works', async () => {
        const { DEMO_API_KEY } = await import('@animal-store/sdk/server');
        await start({ apiKeys: undefined });
        expect((await send('/pets', { key: DEMO_API_KEY })).status).toBe(200);
        expect(rateLimitHeaders(await send('/pets', { key: DEMO_API_KEY })).limit).toBe(60);
      });
    });

    describe('listPets', () => {
      it('limit defaults to 20 and caps the page; results come in ascending id order', async () => {
        expect(await (await send('/pets')).json()).toHaveLength(20);
        const page = await (await send('/pets?limit=7')).json();
        expect(page.map((p: { id: number }) => p.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
        expect(await (await send('/pets?limit=100')).json()).toHaveLength(30);
      });

      it('status keeps only pets with that status', async () => {
        const sold = await (await send('/pets?status=sold&limit=100')).json();
        expect(sold).toHaveLength(10);
        expect(sold.every((p: { status: string }) => p.status === 'sold')).toBe(true);
        expect(sold.map((p: { id: number }) => p.id)).toEqual([...sold.map((p: { id: number }) => p.id)].sort((a, b) => a - b));
      });

      it.each(['0', '101', '1.5', '1.0', '1.9999999999999999', '5.', 'abc', '', '-3', '1e2', '0x10'])('limit=%j answers 400 naming limit', async (limit) => {
        const body = await errorOf(await send(`/pets?limit=${limit}`), 400);
        expect(body.code).toBe('invalid_query');
        expect(body.message).toMatch(/^limit /);
      });

      it('a limit past the safe integers answers 400 saying only that limit is at most 100 (before: also "at most 9007199254740991")', async () => {
        const body = await errorOf(await send('/pets?limit=99999999999999999999'), 400);
        expect(body.message).toMatch(/^limit must be at most 100\. /);
        expect(body.message).not.toContain('9007199254740991');
      });

      it('an unknown status answers 400 that lists the allowed ones', async () => {
        const body = await errorOf(await send('/pets?status=adopted'), 400);
        expect(body.message).toContain('status must be one of "available", "pending", "sold"');
        expect(body.message).toMatch(/; status is one of available, pending, sold\.$/);
      });

      it('a parameter given twice answers 400 invalid_query naming it and saying to give it once', async () => {
        const body = await errorOf(await send('/pets?limit=2&limit=3'), 400);
        expect(body).toMatchObject({ code: 'invalid_query', message: 'The query parameter limit is given 2 times; give it once.' });
      });
    });

    describe('createPet', () => {
      it('a valid NewPet answers 201 with the pet, a new id and a Location header', async () => {
        const response = await post({ name: 'Rex', categoryId: 3, status: 'pending' });
        expect(response.status).toBe(201);
        const pet = await response.json();
        expect(pet).toEqual({ id: 31, name: 'Rex', categoryId: 3, status: 'pending' });
        expect(response.headers.get('Location')).toBe(`${baseUrl}/pets/31`);
        const fetched = await (await send('/pets/31')).json();
        expect(fetched).toEqual(pet);
        expect(await (await post({ name: 'Tom', categoryId: 3 })).json()).toEqual({ id: 32, name: 'Tom', categoryId: 3 });
      });

      it('a POST to /pets/ with a trailing slash answers a Location that reaches the pet', async () => {
        const response = await send('/pets/', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Rex","categoryId":1}' });
        expect(response.status).toBe(201);
        expect(response.headers.get('Location')).toBe(`${baseUrl}/pets/31`);
        expect((await sendRequest(new Request(response.headers.get('Location')!, { headers: { Authorization: `Bearer ${KEYS.pro}` } }))).status).toBe(200);
      });

      it.each([
        [{ categoryId: 1 }, 'name is required'],
        [{ name: '', categoryId: 1 }, 'name must be at least 1 character long'],
        [{ name: 'Rex' }, 'categoryId is required'],
        [{ name: 'Rex', categoryId: '1' }, 'categoryId must be an integer'],
        [{ name: 'Rex', categoryId: 1.5 }, 'categoryId must be an integer'],
        [{ name: 'Rex', categoryId: 2 ** 53 }, 'categoryId must be'],
        [{ name: 'Rex', categoryId: 1, status: 'lost' }, 'status must be one of'],
        [{ name: 'Rex', categoryId: 1, id: 5 }, 'unknown field "id"'],
        [[], 'body must be an object'],
        [null, 'body must be an object'],
      ])('%j answers 400 with a message naming the field', async (body, words) => {
        const record = await errorOf(await post(body), 400);
        expect(record.code).toBe('invalid_body');
        expect(record.message).toContain(words);
        expect(server.inspect().petCount).toBe(30);
      });

      it('malformed JSON answers 400 invalid_json saying what to send', async () => {
        const body = await errorOf(await post('{"name": "Rex",'), 400);
        expect(body.code).toBe('invalid_json');
        expect(body.message).toContain('Send a NewPet object such as {"name":"Rex","categoryId":1}.');
      });

      it('an empty body answers 400, not a crash', async () => {
        expect((await errorOf(await post(''), 400)).code).toBe('invalid_json');
      });

      it('a content type other than JSON answers 415 quoting it (at most 100 characters), or saying it is missing', async () => {
        const response = await send('/pets', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"name":"a","categoryId":1}' });
        const record = await errorOf(response, 415);
        expect(record.code).toBe('unsupported_media_type');
        expect(record.message).toBe('The body must be JSON, sent with Content-Type: application/json; got "text/plain".');
        const none = await send('/pets', { method: 'POST', body: new Uint8Array([123, 125]) });
        expect((await errorOf(none, 415)).message).toBe('The body must be JSON, sent with Content-Type: application/json, which is missing.');
        const long = `text/plain; x=${'a'.repeat(300)}`;
        const cut = await send('/pets', { method: 'POST', headers: { 'Content-Type': long }, body: '{}' });
        expect((await errorOf(cut, 415)).message).toContain(`got "${long.slice(0, 100)}…".`);
        const sequence = await post({ name: 'x', categoryId: 1 }, { headers: { 'Content-Type': 'application/geo+json-seq' } });
        expect((await errorOf(sequence, 415)).code).toBe('unsupported_media_type');
      });

      it('a JSON content type with a charset or a +json suffix is accepted', async () => {
        for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json', 'application/json ; charset=utf-8']) {
          expect((await post({ name: 'x', categoryId: 1 }, { headers: { 'Content-Type': type } })).status).toBe(201);
        }
      });

      it.each(['gzip', 'br', 'deflate', 'GZIP', 'identity, gzip'])('a body with Content-Encoding: %s answers 415 naming what is supported, and stores nothing', async (coding) => {
        const response = await post({ name: 'x', categoryId: 1 }, { headers: { 'Content-Type': 'application/json', 'Content-Encoding': coding } });
        const record = await errorOf(response, 415);
        expect(record.code).toBe('unsupported_media_type');
        expect(record.message).toContain(`Content-Encoding "${coding}"`);
        expect(record.message).toContain('uncompressed');
        expect(response.headers.get('Accept-Encoding')).toBe('identity');
        expect(server.inspect().petCount).toBe(30);
      });

      it.each(['utf-16', 'iso-8859-1', '"latin1"', 'ascii'])('a JSON body in charset %s answers 415 naming UTF-8, and stores nothing', async (charset) => {
        const response = await post({ name: 'x', categoryId: 1 }, { headers: { 'Content-Type': `application/json; charset=${charset}` } });
        const record = await errorOf(response, 415);
        expect(record.code).toBe('unsupported_media_type');
        expect(record.message).toContain(`charset "${charset.replaceAll('"', '')}"`);
        expect(record.message).toContain('UTF-8');
        expect(server.inspect().petCount).toBe(30);
      });

      it('Content-Encoding: identity and a charset of UTF-8 in any spelling are accepted', async () => {
        for (const headers of [
          { 'Content-Type': 'application/json', 'Content-Encoding': 'identity' } as Record<string, string>,
          { 'Content-Type': 'application/json; charset=UTF-8' },
          { 'Content-Type': 'application/json;charset="utf-8"' },
          { 'Content-Type': 'application/json; charset=utf8' },
          { 'Content-Type': 'application/json', 'Content-Encoding': '' },
          { 'Content-Type': 'application/json', 'Content-Encoding': 'identity, ' },
        ]) {
          expect((await post({ name: 'x', categoryId: 1 }, { headers })).status).toBe(201);
        }
      });

      it('a charset is read without a space after the semicolon, and one that only holds utf-8 or utf8 is no UTF-8: each answers 415', async () => {
        for (const type of ['application/json;charset=iso-8859-1', 'application/json; charset=utf8mb4', 'application/json; charset=x-utf-8']) {
          const record = await errorOf(await post({ name: 'x', categoryId: 1 }, { headers: { 'Content-Type': type } }), 415);
          expect(record.message, type).toContain(`charset "${type.split('=')[1]}"`);
        }
        expect(server.inspect().petCount).toBe(30);
      });

      it('a 415 quotes at most 40 characters of the Content-Encoding or charset it refuses', async () => {
        const long = `x${'a'.repeat(100)}`;
        const coding = await errorOf(await post({ name: 'x', categoryId: 1 }, { headers: { 'Content-Type': 'application/json', 'Content-Encoding': long } }), 415);
        expect(coding.message).toContain(`Content-Encoding "${long.slice(0, 40)}…" is not`);
        const charset = await errorOf(await post({ name: 'x', categoryId: 1 }, { headers: { 'Content-Type': `application/json; charset=${long}` } }), 415);
        expect(charset.message).toContain(`charset "${long.slice(0, 40)}…" is not`);
      });

      it('a body that is not valid UTF-8 answers 400 invalid_body saying to send UTF-8, not a pet named with U+FFFD', async () => {
        const bytes = new TextEncoder().encode('{"name":"R?x","categoryId":1}');
        bytes[10] = 0xff;
        const record = await errorOf(await send('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: bytes }), 400);
        expect(record).toEqual({ code: 'invalid_body', message: 'The request body could not be read as UTF-8 text. Send UTF-8 encoded JSON.', status: 400 });
        expect(server.inspect().petCount).toBe(30);
      });

      it('a body of exactly 1 MiB is read (a name too long is a 400), one byte more answers 413 saying the limit, and neither stores anything', async () => {
        const of = (bytes: number) => `{"categoryId":1,"name":"${'x'.repeat(bytes - 26)}"}`;
        expect(of(1_048_576)).toHaveLength(1_048_576);
        expect((await errorOf(await post(of(1_048_576)), 400)).code).toBe('invalid_body');
        expect(await errorOf(await post(of(1_048_577)), 413)).toEqual({
          code: 'payload_too_large',
          message: 'The request body is larger than 1048576 bytes (1 MiB). Send a smaller body.',
          status: 413,
        });
        expect(server.inspect().petCount).toBe(30);
      });

      it('ids are never reused: each create gets the next id', async () => {
        const ids = [];
        for (let i = 0; i < 5; i++) ids.push((await (await post({ name: `p${i}`, categoryId: 1 })).json()).id);
        expect(ids).toEqual([31, 32, 33, 34, 35]);
      });
    });

    describe('getPet (deprecated)', () => {
      const expectDeprecationHeaders = (response: Response) => {
        expect(response.headers.get('Deprecation')).toBe('@1767225600'); // 2026-01-01, as decisions.md says
        expect(response.headers.get('Sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
        expect(response.headers.get('Link')).toBe(`<${baseUrl}/pets>; rel="successor-version"`);
      };

      it('answers the pet with Deprecation, Sunset and Link headers', async () => {
        const response = await send('/pets/4');
        expect(response.status).toBe(200);
        expect((await response.json()).id).toBe(4);
        expectDeprecationHeaders(response);
      });

      it('with a trailing slash, Link still names the list of pets', async () => {
        expectDeprecationHeaders(await send('/pets/4/'));
      });

      it('an unknown id answers 404, still with the deprecation headers', async () => {
        const response = await send('/pets/999');
        expect((await errorOf(response, 404)).code).toBe('not_found');
        expectDeprecationHeaders(response);
        await errorOf(await send('/pets/9223372036854775807'), 404);
      });

      it('a percent-encoded petId is read decoded, as RFC 3986 reads it: %35 is 5', async () => {
        const response = await send('/pets/%35');
        expect(response.status).toBe(200);
        expect((await response.json()).id).toBe(5);
        expect((await errorOf(await send('/pets/%2D5'), 404)).message).toBe('No pet has id -5.');
      });

      it('a petId still invalid once decoded answers 400 showing the decoded value it checked', async () => {
        expect((await errorOf(await send('/pets/%31%2E5'), 400)).message).toMatch(/; got "1\.5"\.$/);
        expect((await errorOf(await send('/pets/%ZZ'), 400)).message).toMatch(/; got "%ZZ"\.$/);
        expect((await errorOf(await send(`/pets/${'9'.repeat(100)}`), 400)).message).toMatch(new RegExp(`; got "${'9'.repeat(40)}…"\\.$`));
      });

      it.each(['0', '-1', '-9223372036854775808'])('petId %j is an int64 like any other: no pet has it, so it answers 404', async (id) => {
        const response = await send(`/pets/${id}`);
        expect((await errorOf(response, 404)).code).toBe('not_found');
        expectDeprecationHeaders(response);
      });

      it('a v1 segment after a petId is read as the petId, not as a base: /pets/v1 answers 400 invalid_pet_id', async () => {
        expect((await errorOf(await send('/pets/v1'), 400)).code).toBe('invalid_pet_id');
      });

      it.each(['abc', '1.5', '01', '-0', '+1', '9223372036854775808', '-9223372036854775809', '%F0%9F%90%B6'])('petId %j answers 400', async (id) => {
        const response = await send(`/pets/${id}`);
        expect((await errorOf(response, 400)).code).toBe('invalid_pet_id');
        expectDeprecationHeaders(response);
      });

      it('after the sunset date it answers 410 Gone', async () => {
        now = Date.UTC(2030, 11, 5);
        const response = await send('/pets/1');
        const gone = await errorOf(response, 410);
        expect(gone.code).toBe('gone');
        expect(gone.message).toBe('GET /pets/{petId} was removed on Thu, 05 Dec 2030 00:00:00 GMT. Use GET /pets with the status filter.');
        expectDeprecationHeaders(response);
        now = Date.UTC(2030, 11, 5) - 1;
        expect((await send('/pets/1')).status).toBe(200);
      });

      it('GET /openapi.json declares the Deprecation, Sunset and Link headers on each getPet status that carries them (before: only the rate-limit headers)', async () => {
        const { responses } = (await (await send('/openapi.json', { key: null })).json()).paths['/pets/{petId}'].get;
        const answers: [number, Response][] = [[200, await send('/pets/1')], [400, await send('/pets/abc')], [404, await send('/pets/999')]];
        now = Date.UTC(2030, 11, 5);
        answers.push([410, await send('/pets/1')]);
        for (const [status, response] of answers) {
          expect(response.status).toBe(status);
          expectDeprecationHeaders(response);
          for (const name of ['Deprecation', 'Sunset', 'Link']) expect(responses[status].headers[name], `${status} ${name}`).toMatchObject({ required: true });
        }
      });
    });

    describe('rate limits', () => {
      it('every response carries the X-RateLimit headers, errors and 401s included', async () => {
        const responses = [
          await send('/pets'),
          await send('/pets?limit=0'),
          await send('/pets/999'),
          await send('/pets', { key: null }),
          await send('/pets', { key: 'wrong' }),
          await send('/nowhere'),
          await send('/pets', { method: 'OPTIONS', key: null }),
        ];
        for (const response of responses) {
          const h = rateLimitHeaders(response);
          expect(Number.isInteger(h.limit) && h.limit > 0).toBe(true);
          expect(Number.isInteger(h.remaining) && h.remaining >= 0).toBe(true);
          expect(h.reset).toBe(T0 / 1000 + 60);
        }
      });

      it('Remaining counts down per key and Reset is the end of the minute in Unix seconds', async () => {
        const first = rateLimitHeaders(await send('/pets', { key: KEYS.free }));
        const second = rateLimitHeaders(await send('/pets', { key: KEYS.free }));
        expect(first).toEqual({ limit: 60, remaining: 59, reset: T0 / 1000 + 60 });
        expect(second.remaining).toBe(58);
        expect(rateLimitHeaders(await send('/pets', { key: KEYS.pro })).remaining).toBe(299);
      });

      it('the per-day window binds too, and the headers then describe it', async () => {
        // key-ent: 5 a minute, 8 a day.
        for (let i = 0; i < 5; i++) expect((await send('/pets', { key: KEYS.ent })).status).toBe(200);
        now = T0 + 60_000;
        const third = [];
        for (let i = 0; i < 3; i++) third.push(rateLimitHeaders(await send('/pets', { key: KEYS.ent })));
        expect(third.at(-1)).toEqual({ limit: 8, remaining: 0, reset: T0 / 1000 + 86_400 });
        const refused = await send('/pets', { key: KEYS.ent });
        expect((await errorOf(refused, 429)).code).toBe('rate_limited');
        expect(Number(refused.headers.get('Retry-After'))).toBe(86_400 - 60);
        now = T0 + 86_400_000;
        expect((await send('/pets', { key: KEYS.ent })).status).toBe(200);
      });

      if (volume) {
        it.each([
          ['free', 60],
          ['pro', 300],
          ['business', 1000],
        ] as const)('the %s plan allows %d requests a minute, then answers 429 rate_limited', async (plan, perMinute) => {
          now = T0 + 30_000;
          for (let i = 0; i < perMinute; i++) expect((await send('/store/orders', { key: KEYS[plan] })).status).toBe(200);
          const refused = await send('/store/orders', { key: KEYS[plan] });
          expect((await errorOf(refused, 429)).code).toBe('rate_limited');
          expect(refused.headers.get('Retry-After')).toBe('30');
          expect(rateLimitHeaders(refused)).toEqual({ limit: perMinute, remaining: 0, reset: T0 / 1000 + 60 });
          now = T0 + 60_000;
          expect((await send('/store/orders', { key: KEYS[plan] })).status).toBe(200);
        });

        it('the free plan enforces 1,000 requests a day across minutes', async () => {
          let sent = 0;
          while (sent < 1000) {
            for (let i = 0; i < 60 && sent < 1000; i++, sent++) expect((await send('/store/orders', { key: KEYS.free })).status).toBe(200);
            now += 60_000;
          }
          const refused = await send('/store/orders', { key: KEYS.free });
          expect((await errorOf(refused, 429)).code).toBe('rate_limited');
          expect(rateLimitHeaders(refused).limit).toBe(1000);
        });
      }

      it('a 429 rate_limited message names the limit and its window: per minute, per day, and "1 request" in the singular', async () => {
        await start({ apiKeys: { one: { perMinute: 1, perDay: 100 }, [KEYS.ent]: { perMinute: 5, perDay: 8 } } });
        now = T0 + 30_000;
        await send('/pets', { key: 'one' });
        expect((await errorOf(await send('/pets', { key: 'one' }), 429)).message).toBe(
          'Rate limit of 1 request per minute exceeded. Retry after 30 s; sending sooner may get the key banned.',
        );
        for (let i = 0; i < 5; i++) await send('/pets', { key: KEYS.ent });
        expect((await errorOf(await send('/pets', { key: KEYS.ent }), 429)).message).toMatch(/^Rate limit of 5 requests per minute exceeded\./);
        now = T0 + 60_000;
        for (let i = 0; i < 3; i++) await send('/pets', { key: KEYS.ent });
        expect((await errorOf(await send('/pets', { key: KEYS.ent }), 429)).message).toMatch(/^Rate limit of 8 requests per day exceeded\./);
      });

      it('a key that keeps sending inside Retry-After past the threshold is banned for the duration', async () => {
        await start({ banThreshold: 2, banDurationMs: 600_000 });
        for (let i = 0; i < 5; i++) await send('/pets', { key: KEYS.ent });
        expect((await send('/pets', { key: KEYS.ent })).status).toBe(429); // told to wait: not a strike
        expect((await errorOf(await send('/pets', { key: KEYS.ent }), 429)).code).toBe('rate_limited'); // strike 1
        expect((await errorOf(await send('/pets', { key: KEYS.ent }), 429)).code).toBe('rate_limited'); // strike 2
        const banned = await send('/pets', { key: KEYS.ent }); // strike 3 > threshold 2
        expect((await errorOf(banned, 429)).code).toBe('api_key_banned');
        expect(banned.headers.get('Retry-After')).toBe('600');
        expect(server.inspect().keys[KEYS.ent]).toEqual({ requests: 9, rateLimited: 4, insideRetryAfter: 3, bans: 1 });
        now = T0 + 599_000;
        const still = await send('/pets', { key: KEYS.ent });
        expect((await errorOf(still, 429)).code).toBe('api_key_banned');
        expect(still.headers.get('Retry-After')).toBe('1');
        now = T0 + 600_000;
        expect((await send('/pets', { key: KEYS.ent })).status).toBe(200);
        // Other keys are not affected by the ban.
        expect((await send('/pets', { key: KEYS.free })).status).toBe(200);
      });

      it('a key that waits out Retry-After is never banned', async () => {
        await start({ banThreshold: 0, apiKeys: { [KEYS.ent]: { perMinute: 5, perDay: 100 } } });
        for (let round = 0; round < 3; round++) {
          for (let i = 0; i < 5; i++) await send('/pets', { key: KEYS.ent });
          const refused = await send('/pets', { key: KEYS.ent });
          expect(refused.status).toBe(429);
          now += Number(refused.headers.get('Retry-After')) * 1000;
        }
        expect(server.inspect().keys[KEYS.ent]).toMatchObject({ insideRetryAfter: 0, bans: 0 });
      });
    });

    describe('CORS', () => {
      it('a preflight OPTIONS is answered without auth, allowing the headers asked for', async () => {
        const response = await send('/pets', {
          method: 'OPTIONS',
          key: null,
          headers: { Origin: 'http://app.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization,content-type' },
        });
        expect(response.status).toBe(204);
        expect(response.headers.get('Access-Control-Allow-Origin')).toBe('*');
        expect(response.headers.get('Access-Control-Allow-Methods')).toContain('POST');
        expect(response.headers.get('Access-Control-Allow-Headers')?.toLowerCase()).toContain('authorization');
      });

      it('every response exposes the rate-limit, Retry-After, deprecation, Location, Date and request-id headers', async () => {
        for (const response of [await send('/pets/1'), await send('/pets', { key: null })]) {
          const exposed = response.headers.get('Access-Control-Expose-Headers')?.split(/,\s*/) ?? [];
          for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Deprecation', 'Sunset', 'Link', 'Location', 'Date', 'X-Request-Id']) {
            expect(exposed).toContain(name);
          }
          expect(response.headers.get('Access-Control-Allow-Origin')).toBe('*');
        }
      });
    });

    describe('state', () => {
      it('reset() restores the seed pets and forgets rate-limit windows and counters', async () => {
        await post({ name: 'Extra', categoryId: 1 });
        for (let i = 0; i < 6; i++) await send('/pets', { key: KEYS.ent });
        server.reset();
        expect(server.inspect()).toEqual({ petCount: 30, keys: {} });
        expect((await send('/pets', { key: KEYS.ent })).status).toBe(200);
        expect((await (await post({ name: 'Again', categoryId: 1 })).json()).id).toBe(31);
      });

      it('a reset while a createPet body is still arriving wins: the pet never reaches the fresh store, nor the request its journal (before: the pet from before the reset was stored after it)', async () => {
        const encoder = new TextEncoder();
        let stream!: ReadableStreamDefaultController<Uint8Array>;
        const body = new ReadableStream<Uint8Array>({ start: (controller) => void (stream = controller) });
        stream.enqueue(encoder.encode('{"name":"Stray",'));
        const answer = post('', { body, duplex: 'half' } as RequestInit);
        // The request has arrived once its key is counted; its body has not ended yet.
        await expect.poll(() => server.inspect().keys[KEYS.pro]?.requests).toBe(1);
        server.reset();
        stream.enqueue(encoder.encode('"categoryId":1}'));
        stream.close();
        // Answered as the server stood when the request arrived: the pet was made there, and went with the reset.
        const response = await answer;
        expect(response.status).toBe(201);
        expect(server.inspect().petCount).toBe(30);
        const pets: { name: string }[] = await (await send('/pets?limit=100')).json();
        expect(pets.map((pet) => pet.name)).not.toContain('Stray');
        expect(server.requests().map(({ method, path }) => `${method} ${path}`)).toEqual([`GET ${new URL(baseUrl).pathname}/pets?limit=100`]);
        expect((await (await post({ name: 'Fresh', categoryId: 1 })).json()).id).toBe(31);
      });

      it('seed records keep their ids and new pets continue after the largest', async () => {
        await start({ pets: [{ id: 10, name: 'Ten', categoryId: 1 }, { name: 'Auto', categoryId: 2, status: 'sold' }] });
        expect(await (await send('/pets')).json()).toEqual([
          { id: 10, name: 'Ten', categoryId: 1 },
          { id: 11, name: 'Auto', categoryId: 2, status: 'sold' },
        ]);
        expect((await (await post({ name: 'New', categoryId: 1 })).json()).id).toBe(12);
      });
    });
  });
}
