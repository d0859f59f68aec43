import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  InternalServerError,
  NotFoundError,
  PetStoreClient,
  PetStoreError,
  RateLimitError,
  ResponseValidationError,
  TimeoutError,
  ValidationError,
} from '@animal-store/sdk';
import { BASE_URL, failure, run, START, value, useReferenceServer } from './harness.js';

const { server, mock, client } = useReferenceServer();

/** Requests the server has seen from the test key. */
const sent = () => server.inspect().keys['key-pro']?.requests ?? 0;

describe('arguments are checked before anything is sent', () => {
  it('listPets: a limit outside 1–100 is a ValidationError naming limit (0.5 is told it is under 1, and nothing else), and nothing is sent', async () => {
    const error = await failure(client().listPets({ limit: 0 }), ValidationError);
    expect(error.issues[0]?.path).toEqual(['limit']);
    expect(error.message).toMatch(/limit must be at least 1/);
    expect(await run(client().listPets({ limit: 2.5 }))).toBeInstanceOf(ValidationError);
    expect((await failure(client().listPets({ limit: 0.5 }), ValidationError)).message).toBe('listPets: limit must be at least 1. Nothing was sent.');
    expect(sent()).toBe(0);
  });

  it('listPets: a limit past the safe integers is a ValidationError that says limit is at most 100, and nothing else (before: also "at most 9007199254740991")', async () => {
    const error = await failure(client().listPets({ limit: 1e20 }), ValidationError);
    expect(error.message).toBe('listPets: limit must be at most 100. Nothing was sent.');
    expect(error.issues).toHaveLength(1);
    expect(sent()).toBe(0);
  });

  it('listPets: a status outside the enum is a ValidationError listing the allowed values', async () => {
    const error = await failure(client().listPets({ status: 'lost' as 'sold' }), ValidationError);
    expect(error.message).toMatch(/status must be one of "available", "pending", "sold"/);
    expect(sent()).toBe(0);
  });

  it('createPet: a missing name, a name that is no string or a non-integer categoryId is a ValidationError saying what each must be, and no pet is created', async () => {
    const error = await failure(client().createPet({ categoryId: 1.5 } as never), ValidationError);
    expect(error.issues.map((i) => i.path.join('.'))).toEqual(['name', 'categoryId']);
    expect(error.message).toBe('createPet: name is required; categoryId must be an integer. Nothing was sent.');
    expect((await failure(client().createPet({ name: 5, categoryId: 1 } as never), ValidationError)).message).toBe('createPet: name must be a string. Nothing was sent.');
    expect(server.inspect().petCount).toBe(10);
    expect(sent()).toBe(0);
  });

  it('getPet: an id that is not a safe integer is a ValidationError, and nothing is sent', async () => {
    expect(await run(client().getPet(2 ** 53))).toBeInstanceOf(ValidationError);
    expect(await run(client().getPet(1.5))).toBeInstanceOf(ValidationError);
    expect(sent()).toBe(0);
  });

  it('getPet: a petId that is not an integer is a ValidationError whose issue names petId, as a field of an object argument is named', async () => {
    const error = await failure(client().getPet('7' as never), ValidationError);
    expect(error.issues.map((i) => i.path.join('.'))).toEqual(['petId']);
    expect(error.message).toBe('getPet: petId must be an integer. Nothing was sent.');
    const pet = await failure(client().createPet(null as never), ValidationError);
    expect(pet.issues.map((i) => i.path.join('.'))).toEqual(['pet']);
    expect(pet.message).toBe('createPet: pet must be an object. Nothing was sent.');
    const query = await failure(client().listPets('available' as never), ValidationError);
    expect(query.issues.map((i) => i.path.join('.'))).toEqual(['query']);
    expect(sent()).toBe(0);
  });

  it('getPet: an id of 0 or below is the spec\'s int64, so it is sent and the server answers', async () => {
    expect(await run(client().getPet(0))).toBeInstanceOf(NotFoundError);
    expect(await run(client().getPet(-5))).toMatchObject({ status: 404, code: 'not_found' });
    expect(sent()).toBe(2);
  });

  it('createPet: a field the spec does not name is sent as given, and the service decides (the reference server answers 400 naming it, three of them whole)', async () => {
    const error = await failure(client().createPet({ name: 'Rex', categoryId: 1, color: 'brown' } as never), BadRequestError);
    expect(error.message).toMatch(/unknown field "color"/);
    // Three are all named, a name of 40 characters whole.
    const three = await failure(client().createPet({ name: 'Rex', categoryId: 1, color: 'brown', size: 2, ['k'.repeat(40)]: 3 } as never), BadRequestError);
    expect(three.message).toContain(`Invalid NewPet: body has unknown fields "color", "size", "${'k'.repeat(40)}". (request id`);
    expect(sent()).toBe(2);
  });

  it('createPet: an id is a ValidationError, since the spec says clients do not send it, and nothing is sent', async () => {
    const error = await failure(client().createPet({ name: 'Rex', categoryId: 1, id: 7 } as never), ValidationError);
    expect(error.issues.map((i) => i.path.join('.'))).toEqual(['id']);
    expect(error.message).toMatch(/^createPet: id must be left out: the service assigns it/);
    expect(sent()).toBe(0);
  });

  it('createPet: a field that JSON cannot carry (a BigInt, a cycle) is a ValidationError with the encoder\'s error as cause, and nothing is sent', async () => {
    const cyclic: Record<string, unknown> = { name: 'Rex', categoryId: 1 };
    cyclic.self = cyclic;
    for (const pet of [{ name: 'Rex', categoryId: 1, weight: 10n }, cyclic]) {
      const error = await failure(client().createPet(pet as never), ValidationError);
      expect(error.message).toBe('createPet: pet could not be encoded as JSON; see the error\'s cause. Nothing was sent.');
      expect(error.cause).toBeInstanceOf(TypeError);
    }
    expect(sent()).toBe(0);
  });

  it('listPets: a query parameter the spec does not name is sent as given (the reference server ignores it)', async () => {
    const urls: string[] = [];
    const c = client({ fetch: (request: Request) => (urls.push(request.url), server.fetch(request)) });
    expect(await run(c.listPets({ limit: 2, page: 3, 'sort by': 'name', flag: true, skip: undefined } as never))).toHaveLength(2);
    expect(urls).toEqual([`${BASE_URL}/pets?limit=2&page=3&sort%20by=name&flag=true`]);
  });

  it('createPet: what is checked is what is sent, so a pet whose toJSON adds an id is a ValidationError, and nothing is sent', async () => {
    const pet = { name: 'Rex', categoryId: 1, toJSON: () => ({ id: 7, name: 'Rex', categoryId: 1 }) };
    const error = await failure(client().createPet(pet), ValidationError);
    expect(error.issues.map((i) => i.path.join('.'))).toEqual(['id']);
    expect(error.message).toMatch(/id must be left out: the service assigns it/);
    expect(sent()).toBe(0);
  });

  it('createPet: a pet whose toJSON gives nothing (undefined) is a ValidationError that names the pet, and nothing is sent', async () => {
    const error = await failure(client().createPet({ name: 'Rex', categoryId: 1, toJSON: () => undefined } as never), ValidationError);
    expect(error.issues.map((i) => i.path.join('.'))).toEqual(['pet']);
    expect(error.message).toMatch(/^createPet: /);
    expect(sent()).toBe(0);
  });

  it('createPet: a pet whose toJSON gives a valid pet creates that pet, as JSON.stringify would send it', async () => {
    const pet = { name: 'ignored', categoryId: 1, toJSON: () => ({ name: 'Rex', categoryId: 2 }) };
    expect(await run(client().createPet(pet))).toMatchObject({ name: 'Rex', categoryId: 2 });
  });

  it('listPets: a query value with a lone surrogate, which a URL cannot carry, is a ValidationError naming it, and nothing is sent', async () => {
    for (const query of [{ q: '\ud800' }, { ['\udc00']: 'x' }]) {
      const error = await failure(client().listPets(query as never), ValidationError);
      expect(error.message).toMatch(/^listPets: query\..* must be a string, number or boolean a query string can carry/);
    }
    expect(sent()).toBe(0);
  });

  it('listPets: a query value that a query string cannot carry (an object) is a ValidationError naming it, and nothing is sent', async () => {
    const error = await failure(client().listPets({ page: { n: 3 } } as never), ValidationError);
    expect(error.message).toMatch(/^listPets: query\.page must be a string, number or boolean a query string can carry/);
    expect(sent()).toBe(0);
  });

  it('listPets: a call\'s option passed in the query (from JavaScript: listPets({ limit, signal })) is a ValidationError that says to pass it second, and nothing is sent', async () => {
    const signal = new AbortController().signal;
    for (const [query, name] of [[{ limit: 1, signal }, 'signal'], [{ headers: { 'X-Trace': '1' } }, 'headers']] as const) {
      const error = await failure(client().listPets(query as never), ValidationError);
      expect(error.message).toBe(`listPets: query.${name} must be a string, number or boolean a query string can carry (whole characters, no lone surrogate); ${name} is an option of the call: pass it second, listPets(query, { ${name} }). Nothing was sent.`);
    }
    expect(sent()).toBe(0);
  });

  it('arguments and options whose getters or proxies throw are a ValidationError with what they threw as its cause, and nothing is sent', async () => {
    const boom = new RangeError('boom');
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const pet = { get name(): string { throw boom; }, categoryId: 1 };
    const outcomes = [
      await failure(client().createPet(pet), ValidationError),
      await failure(client().listPets(proxy), ValidationError),
      await failure(client().listPets({}, proxy), ValidationError),
      await failure(client().listPets({}, { get timeout(): number { throw boom; } }), ValidationError),
    ];
    expect(outcomes.map((e) => e.cause)).toEqual([boom, expect.any(TypeError), expect.any(TypeError), boom]);
    expect(outcomes[0]!.message).toBe('createPet: pet could not be read (a getter or proxy threw); see the error\'s cause. Nothing was sent.');
    expect(() => new PetStoreClient({ apiKey: 'key-pro', baseUrl: BASE_URL, get timeout(): number { throw boom; } })).toThrow(
      expect.objectContaining({ name: 'ValidationError', cause: boom }),
    );
    expect(sent()).toBe(0);
  });

  it('a GET with headers of its own sends no Content-Type, which only a body needs', async () => {
    const types: (string | null)[] = [];
    const fetch = (request: Request) => (types.push(request.headers.get('content-type')), server.fetch(request));
    expect(await value(client({ fetch }).listPets({ limit: 1 }, { headers: { 'X-Trace': '1' } }))).toHaveLength(1);
    expect(types).toEqual([null]);
  });

  it('a fetch option that resolves to something other than a Response fails the call with a PetStoreError saying so, not retried', async () => {
    let calls = 0;
    const fake = async () => ((calls++), { status: 200, ok: true }) as unknown as Response;
    const error = await failure(client({ fetch: fake }).listPets(), PetStoreError);
    expect(error.message).toBe('listPets (GET /pets): the fetch option resolved to something that is not a Response (object). Return a Response, such as new Response(body, init).');
    expect(calls).toBe(1);
  });

  it('a fetch option that resolves to null, or rejects with nothing (undefined, null), fails the call with a PetStoreError that says what it got', async () => {
    const nothing = await failure(client({ fetch: async () => null as unknown as Response }).listPets(), PetStoreError);
    expect(nothing.message).toBe('listPets (GET /pets): the fetch option resolved to something that is not a Response (null). Return a Response, such as new Response(body, init).');
    for (const reason of [undefined, null]) {
      const error = await failure(client({ fetch: () => Promise.reject(reason), maxRetries: 0 }).listPets(), ConnectionError);
      expect(error.message).toBe(`listPets (GET /pets): the request failed before a response arrived (${reason}). Check the network and baseUrl.`);
    }
  });

  it('a fetch option that rejects with a value that cannot be read (an object without toString, one whose getters throw, a proxy that throws) fails the call with a ConnectionError that says so', async () => {
    const getters = Object.defineProperty(new Error('x'), 'name', { get: () => { throw new Error('getter'); } });
    const proxy = new Proxy({}, { get: () => { throw new Error('trap'); }, getPrototypeOf: () => { throw new Error('trap'); } });
    const unread = 'a value that could not be read';
    // A getter or trap that throws is met by ky before the client reads the value: its error is told then.
    const cases = [[Object.create(null) as object, unread], [{ toString: () => { throw new Error('toString'); } }, unread], [getters, 'getter'], [proxy, 'trap']] as const;
    for (const [reason, told] of cases) {
      const error = await failure(client({ fetch: () => Promise.reject(reason), maxRetries: 0 }).listPets(), ConnectionError);
      expect(error.message).toBe(`listPets (GET /pets): the request failed before a response arrived (${told}). Check the network and baseUrl.`);
    }
  });

  it('a fetch option that times out on its own (a TimeoutError, as AbortSignal.timeout gives) fails the call with a TimeoutError', async () => {
    const fetch = () => Promise.reject(new DOMException('The operation timed out.', 'TimeoutError'));
    const error = await failure(client({ fetch, maxRetries: 0 }).listPets(), TimeoutError);
    expect(error.message).toBe('listPets (GET /pets): no complete response within 30000 ms (the timeout option). Raise timeout, or check the network.');
  });

  it('a body of exactly maxResponseBytes, its Content-Length saying so, is read', async () => {
    const json = JSON.stringify([{ id: 1, name: 'Rex', categoryId: 1 }]);
    const fetch = async () => new Response(json, { headers: { 'Content-Type': 'application/json', 'Content-Length': String(json.length) } });
    expect(await value(client({ fetch, maxResponseBytes: json.length }).listPets())).toEqual([{ id: 1, name: 'Rex', categoryId: 1 }]);
  });

  it('createPet: a name the server finds too long (its rule, not the spec\'s) is sent and answered with 400, whose message gives the longest', async () => {
    expect(await run(client().createPet({ name: 'x'.repeat(257), categoryId: 1 }))).toMatchObject({ name: 'BadRequestError', status: 400, message: expect.stringContaining('Invalid NewPet: name must be at most 256 characters long.') });
    expect(sent()).toBe(1);
  });
});

describe('responses', () => {
  it('listPets: returns the parsed pets, filtered by status', async () => {
    const pets = await value(client().listPets({ status: 'sold', limit: 100 }));
    expect(pets).toEqual(expect.arrayContaining([expect.objectContaining({ status: 'sold' })]));
    expect(pets.every((p) => p.status === 'sold')).toBe(true);
  });

  it('createPet: returns the created pet with its assigned id', async () => {
    const pet = await run(client().createPet({ name: 'Rex', categoryId: 3, status: 'available' }));
    expect(pet).toEqual({ id: 11, name: 'Rex', categoryId: 3, status: 'available' });
    expect(server.inspect().petCount).toBe(11);
  });

  it('listOrders: returns the orders array', async () => {
    expect(await run(client().listOrders())).toEqual([]);
  });

  it('listOrders: returns whatever JSON the service answers, since the spec shows nothing of the listing', async () => {
    const listing = { orders: [{ id: 'o-1' }], next: null };
    mock.use(http.get(`${BASE_URL}/store/orders`, () => HttpResponse.json(listing)));
    expect(await run(client().listOrders())).toEqual(listing);
  });

  it('withResponse: gives the status and headers along with the data', async () => {
    const { data, response } = await value(client().withResponse.createPet({ name: 'Rex', categoryId: 1 }));
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe(`${BASE_URL}/pets/${data.id}`);
    expect(response.headers.get('X-RateLimit-Remaining')).toBe('299');
  });

  it('an id beyond 2^53 is a ResponseValidationError with the raw body, never a rounded id', async () => {
    const body = '[{"id":9007199254740993,"name":"Big","categoryId":1}]';
    mock.use(http.get(`${BASE_URL}/pets`, () => new HttpResponse(body, { headers: { 'Content-Type': 'application/json' } })));
    const error = await failure(client({ logLevel: 'off' }).listPets(), ResponseValidationError);
    expect(error.issues[0]?.path).toEqual([0, 'id']);
    expect(error.message).toMatch(/0\.id must be at most 9007199254740991/);
    expect(error.body).toEqual(JSON.parse(body));
  });

  it('listPets: a JSON answer that is no list (an object, as a wrapped page) is a ResponseValidationError saying the response must be an array', async () => {
    mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.json({ pets: [] })));
    const error = await failure(client({ logLevel: 'off' }).listPets(), ResponseValidationError);
    expect(error.message).toBe("listPets (GET /pets): the response does not match the API's schema: response must be an array.");
  });

  it('a body that is not JSON, or none at all, is a ResponseValidationError holding the text, with no issues, that says to check baseUrl', async () => {
    for (const body of ['<html>oops</html>', null]) {
      const fetch = async () => new Response(body, { status: 200 });
      const error = await failure(client({ fetch, logLevel: 'off' }).listOrders(), ResponseValidationError);
      expect(error).toMatchObject({
        message: 'listOrders (GET /store/orders): the response (HTTP 200) is not JSON. Check that baseUrl points at the Animal Store API.',
        body: body ?? '',
        issues: [],
      });
    }
  });

  it('a body that arrives in several chunks is read whole', async () => {
    const json = JSON.stringify([{ id: 1, name: 'Rex', categoryId: 1 }]);
    const bytes = new TextEncoder().encode(json);
    const fetch = async () =>
      new Response(
        new ReadableStream({
          start(controller) {
            for (let at = 0; at < bytes.length; at += 7) controller.enqueue(bytes.slice(at, at + 7));
            controller.close();
          },
        }),
        { headers: { 'Content-Type': 'application/json' } },
      );
    expect(await value(client({ fetch }).listPets())).toEqual([{ id: 1, name: 'Rex', categoryId: 1 }]);
  });
});

describe('errors', () => {
  it('401: AuthenticationError with the Error record and the WWW-Authenticate header', async () => {
    const error = await failure(client({ apiKey: 'nope' }).listPets(), AuthenticationError);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ name: 'AuthenticationError', status: 401, code: 'invalid_api_key' });
    expect(error.headers.get('WWW-Authenticate')).toMatch(/^Bearer/);
    expect(error.body).toMatchObject({ code: 'invalid_api_key', status: 401 });
  });

  it('404: getPet of an unknown id is a NotFoundError', async () => {
    const error = await failure(client({ onDeprecation: () => {} }).getPet(999), NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('400: a body the server rejects is a BadRequestError with the server\'s message', async () => {
    // The client checks NewPet itself, so the 400 is provoked by sending the server an empty body.
    mock.use(
      http.post(`${BASE_URL}/pets`, ({ request }) =>
        server.fetch(new Request(request.url, { method: 'POST', headers: request.headers, body: '{}' })),
      ),
    );
    const error = await failure(client().createPet({ name: 'Rex', categoryId: 1 }), BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_body', message: expect.stringMatching(/name is required/) });
  });

  it('a bare 429 from a proxy, without an Error record, is still a RateLimitError', async () => {
    mock.use(http.get(`${BASE_URL}/pets`, () => new HttpResponse(null, { status: 429 })));
    const error = await failure(client({ maxRetries: 0 }).listPets(), RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', body: '' });
  });

  it('a bare 429 or 401 without an Error record says what to do: wait the Retry-After, check the API key', async () => {
    mock.use(http.get(`${BASE_URL}/pets`, () => new HttpResponse(null, { status: 429, headers: { 'Retry-After': '30' } })));
    const limited = await failure(client({ maxRetries: 0 }).listPets(), RateLimitError);
    expect(limited.message).toBe('listPets (GET /pets): The service answered HTTP 429 without an Error record: the rate limit is exceeded. Retry after 30 s; sending sooner may get the key banned.');
    mock.use(http.get(`${BASE_URL}/pets`, () => new HttpResponse(null, { status: 429 })));
    expect((await failure(client({ maxRetries: 0 }).listPets(), RateLimitError)).message).toMatch(/the rate limit is exceeded\. Wait before sending again; sending sooner may get the key banned\.$/);
    mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.html('<h1>Unauthorized</h1>', { status: 401 })));
    expect((await failure(client().listPets(), AuthenticationError)).message).toBe('listPets (GET /pets): The service answered HTTP 401 without an Error record: the API key is missing or invalid. Check the key.');
  });

  it('a 429 whose Retry-After names no wait (0, or 0 sent twice) has no retryAfterMs, as the client itself reads it (before: 0, so code that waited it retried at once into the window)', async () => {
    for (const retryAfter of ['0', '0, 0']) {
      mock.use(http.get(`${BASE_URL}/pets`, () => new HttpResponse(null, { status: 429, headers: { 'Retry-After': retryAfter } })));
      const error = await failure(client({ maxRetries: 0 }).listPets(), RateLimitError);
      expect(error.retryAfterMs).toBeUndefined();
      expect(error.message).toMatch(/Wait before sending again/);
    }
  });

  it('a Retry-After date that does not exist (31 September, hour 24, minute 60, second 61) names no wait, though Date.UTC would roll it into one that does', async () => {
    const limited = (retryAfter: string) => {
      const headers = { Date: 'Wed, 30 Sep 2026 12:00:00 GMT', 'Retry-After': retryAfter };
      mock.use(http.get(`${BASE_URL}/pets`, () => new HttpResponse(null, { status: 429, headers })));
      return failure(client({ maxRetries: 0 }).listPets(), RateLimitError);
    };
    expect((await limited('Wed, 30 Sep 2026 12:01:00 GMT')).retryAfterMs).toBe(60_000);
    for (const impossible of ['Thu, 31 Sep 2026 00:00:00 GMT', 'Wed, 30 Sep 2026 24:00:00 GMT', 'Wed, 30 Sep 2026 12:60:00 GMT', 'Wed, 30 Sep 2026 12:00:61 GMT']) {
      expect((await limited(impossible)).retryAfterMs, impossible).toBeUndefined();
    }
  });

  it('a 500 that carries rate-limit headers is not read as the key\'s budget, as no 5xx is: rateLimit still shows none', async () => {
    const headers = { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '59', 'X-RateLimit-Reset': String((START + 50_000) / 1000) };
    mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.json({ code: 'internal_error', message: 'boom', status: 500 }, { status: 500, headers })));
    const c = client({ maxRetries: 0 });
    await failure(c.listPets(), InternalServerError);
    expect(c.rateLimit.getSnapshot()).toBeUndefined();
  });

  it('an IETF RateLimit item with a parameter the client does not use (a partition key) is still read', async () => {
    const headers = { RateLimit: '"default";r=0;t=3;pk=:YWJj:', 'RateLimit-Policy': '"default";q=5;w=60' };
    mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.json([], { headers })));
    const c = client();
    await value(c.listPets());
    expect(c.rateLimit.getSnapshot()).toMatchObject({ limit: 5, remaining: 0, resetAt: new Date(START + 3_000) });
  });

  it('among several IETF RateLimit policies the one with the fewest requests left binds, whichever comes first, with its own quota; a RateLimit-Policy member that is malformed is skipped', async () => {
    for (const rateLimit of ['"a";r=1;t=5, "b";r=9;t=30', '"b";r=9;t=30, "a";r=1;t=5']) {
      const headers = { RateLimit: rateLimit, 'RateLimit-Policy': 'bad policy, "b";q=100;w=60, "a";q=10;w=5' };
      mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.json([], { headers })));
      const c = client();
      const at = Date.now();
      await value(c.listPets());
      expect(c.rateLimit.getSnapshot(), rateLimit).toMatchObject({ limit: 10, remaining: 1, resetAt: new Date(at + 5_000) });
    }
  });

  it('X-RateLimit-* sent twice (a gateway\'s above the API\'s): the member with the fewest requests left binds, in either order', async () => {
    const reset = (START + 50_000) / 1000;
    for (const [limit, remaining] of [['60, 1000', '1, 900'], ['1000, 60', '900, 1']]) {
      const headers = { 'X-RateLimit-Limit': limit!, 'X-RateLimit-Remaining': remaining!, 'X-RateLimit-Reset': `${reset}, ${reset}` };
      mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.json([], { headers })));
      const c = client();
      await value(c.listPets());
      expect(c.rateLimit.getSnapshot(), remaining).toMatchObject({ limit: 60, remaining: 1 });
    }
  });

  it('a Retry-After with an empty member ("5, ") reads as its other member, and one with a member of 0 beside another ("0, 5") as the other: 5 s either way', async () => {
    for (const retryAfter of ['5, ', '0, 5']) {
      mock.use(http.get(`${BASE_URL}/pets`, () => new HttpResponse(null, { status: 429, headers: { 'Retry-After': retryAfter } })));
      expect((await failure(client({ maxRetries: 0 }).listPets(), RateLimitError)).retryAfterMs, retryAfter).toBe(5_000);
    }
  });

  it('an X-RateLimit-* value that is not a plain decimal count (abc, -1, 1.5, 1e3, 16 digits) makes the budget absent: rateLimit shows none', async () => {
    for (const remaining of ['abc', '-1', '1.5', '1e3', '1234567890123456']) {
      const headers = { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': remaining, 'X-RateLimit-Reset': String((START + 50_000) / 1000) };
      mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.json([], { headers })));
      const c = client();
      await value(c.listPets());
      expect(c.rateLimit.getSnapshot(), remaining).toBeUndefined();
    }
  });

  it('a bare 502 with an HTML body is an InternalServerError', async () => {
    mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.html('<h1>Bad Gateway</h1>', { status: 502 })));
    const error = await failure(client({ maxRetries: 0 }).listPets(), InternalServerError);
    expect(error).toMatchObject({ status: 502, code: 'http_502', body: '<h1>Bad Gateway</h1>' });
  });

  it('a 404 without an Error record (a baseUrl that points elsewhere) names the URL without its query and says to check baseUrl', async () => {
    mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.html('<h1>Not Found</h1>', { status: 404 })));
    const error = await failure(client({ maxRetries: 0 }).listPets({ limit: 5 }), NotFoundError);
    expect(error.message).toContain(`Nothing answers ${BASE_URL}/pets: check that baseUrl points at the Animal Store API.`);
  });

  it('an answer without an Error record gets the code its status implies: 400 bad_request, 401 invalid_api_key, 404 not_found', async () => {
    const bare = (status: number) => () => HttpResponse.html('<h1>Proxy</h1>', { status });
    mock.use(http.post(`${BASE_URL}/pets`, bare(400)), http.get(`${BASE_URL}/pets`, bare(401)), http.get(`${BASE_URL}/pets/1`, bare(404)));
    expect(await failure(client().createPet({ name: 'Rex', categoryId: 1 }), BadRequestError)).toMatchObject({ status: 400, code: 'bad_request' });
    expect(await failure(client().listPets(), AuthenticationError)).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(await failure(client().getPet(1), NotFoundError)).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('errors built without a call, as a test double is, name none: an ApiError says only what was answered, a ConnectionError has no method or url, and a PetStoreError serializes to its name and message', () => {
    const teapot = ApiError.generate({ status: 418, headers: new Headers(), body: '' });
    expect(teapot.message).toBe('The service answered HTTP 418 without an Error record.');
    const dropped = new ConnectionError({ message: 'dropped', mayHaveSucceeded: false });
    expect(dropped).toMatchObject({ name: 'ConnectionError', method: undefined, url: undefined });
    const plain = new PetStoreError({ message: 'boom' });
    expect(plain.toJSON()).toStrictEqual({ name: 'PetStoreError', message: 'boom' });
    expect('cause' in plain).toBe(false);
  });

  it('ApiError.generate picks the class for each status', () => {
    const make = (status: number) => ApiError.generate({ status, headers: new Headers(), body: undefined });
    expect([400, 401, 404, 429, 500, 503, 418].map((s) => make(s).name)).toEqual([
      'BadRequestError',
      'AuthenticationError',
      'NotFoundError',
      'RateLimitError',
      'InternalServerError',
      'InternalServerError',
      'ApiError',
    ]);
  });
});
