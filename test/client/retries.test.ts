import { http, HttpResponse } from 'msw';
import { describe, expect, it, vi } from 'vitest';
import { AbortError, ApiError, ConnectionError, InternalServerError, PetStoreError, RateLimitError, ThrottledError, TimeoutError } from '@animal-store/sdk';
import { BASE_URL, run, settle, useReferenceServer } from './harness.js';

const { server, mock, client } = useReferenceServer();

/**
 * A handler that answers with `fault` for the first `times` requests, then lets the server answer;
 * it counts the requests and keeps when each arrived (`at`, on the fake clock).
 */
function failing(method: 'get' | 'post', path: string, times: number, fault: (request: Request) => Response | Promise<Response>) {
  const calls = { count: 0, at: [] as number[] };
  mock.use(
    http[method](`${BASE_URL}${path}`, ({ request }) => {
      calls.count++;
      calls.at.push(Date.now());
      return calls.count <= times ? fault(request) : server.fetch(request);
    }),
  );
  return calls;
}

const serverError = () => HttpResponse.json({ code: 'internal_error', message: 'boom', status: 500 }, { status: 500 });

describe('retries', () => {
  it('listPets: a 503 is retried with backoff and the call succeeds', async () => {
    const calls = failing('get', '/pets', 1, () => new HttpResponse(null, { status: 503 }));
    const pets = await run(client().listPets({ limit: 1 }));
    expect(pets).toHaveLength(1);
    expect(calls.count).toBe(2);
  });

  it('listPets: 5xx is retried maxRetries times, then InternalServerError is thrown', async () => {
    const calls = failing('get', '/pets', 10, serverError);
    expect(await run(client({ maxRetries: 3 }).listPets())).toBeInstanceOf(InternalServerError);
    expect(calls.count).toBe(4);
  });

  it('the error of a call that was retried says which attempt failed last; one that was not says nothing of attempts', async () => {
    failing('get', '/pets', 10, () => HttpResponse.error());
    const retried = (await run(client({ maxRetries: 2 }).listPets())) as Error;
    expect(retried).toBeInstanceOf(ConnectionError);
    expect(retried.message).toMatch(/^listPets \(GET \/pets\): the request failed before a response arrived .*\. This was attempt 3 of 3\.$/);
    const once = (await run(client({ maxRetries: 0 }).listPets())) as Error;
    expect(once.message).not.toMatch(/attempt/);
  });

  it("a service message without a final period is ended with one before the client's own sentence is added (before: \"boom This was attempt 2 of 2.\")", async () => {
    failing('get', '/pets', 10, serverError);
    expect(await run(client({ maxRetries: 1 }).listPets())).toMatchObject({ message: 'listPets (GET /pets): boom. This was attempt 2 of 2.' });
  });

  it('a call whose retry the gate refused unsent says it was refused before that attempt, not that the attempt was made (before: "This was attempt 2 of 3.")', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    let answered = 0;
    // The call's first answer is a 503; during its backoff another call meets a 429 that blocks for two minutes.
    const calls = failing('get', '/pets', 2, () =>
      ++answered === 1 ? serverError() : HttpResponse.json({ code: 'rate_limited', message: 'slow down', status: 429 }, { status: 429, headers: { 'Retry-After': '120' } }),
    );
    const c = client();
    const retrying = run(c.listPets());
    await vi.advanceTimersByTimeAsync(0);
    expect(await run(c.listPets())).toBeInstanceOf(RateLimitError);
    const error = (await retrying) as ThrottledError;
    expect(error).toBeInstanceOf(ThrottledError);
    expect(error.message).toMatch(/^listPets \(GET \/pets\): not sent: a 429 asked every client to wait .* The call was refused before its attempt 2 of 3\.$/);
    expect(calls.count).toBe(2);
  });

  it('listPets: a 408 is retried, honouring Retry-After', async () => {
    const calls = failing('get', '/pets', 1, () => new HttpResponse(null, { status: 408, headers: { 'Retry-After': '5' } }));
    expect(await run(client().listPets({ limit: 1 }))).toHaveLength(1);
    expect(calls.count).toBe(2);
    expect(calls.at[1]! - calls.at[0]!).toBe(5_000);
  });

  it('listPets: a 503 whose Retry-After is 0 backs off as one without it (before: both retries went at once to a failing service)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const calls = failing('get', '/pets', 2, () => new HttpResponse(null, { status: 503, headers: { 'Retry-After': '0' } }));
    expect(await run(client().listPets({ limit: 1 }))).toHaveLength(1);
    expect(calls.count).toBe(3);
    // The backoffs with Math.random() = 0.999: 499 ms, then 999 ms.
    expect(calls.at.map((at) => at - calls.at[0]!)).toEqual([0, 499, 1_498]);
  });

  it('createPet: a 408 is an ApiError and is never retried, as the errors guide says', async () => {
    const calls = failing('post', '/pets', 10, () => new HttpResponse(null, { status: 408, headers: { 'Retry-After': '1' } }));
    const error = await run(client().createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 408, code: 'http_408' });
    expect(calls.count).toBe(1);
  });

  it.each([
    ['backoff uses full jitter from a 0.5 s base: with Math.random at 0.999 the first retry waits just under 0.5 s', {}, 499],
    [
      "a GET's backoff is drawn below maxRetryDelay when that is shorter: with maxRetryDelay 200 ms and Math.random at 0.999 a 5xx is retried after 199 ms (before: a draw past 200 ms failed the call at once, so whether it was retried was left to chance)",
      { maxRetryDelay: 200 },
      199,
    ],
  ] as const)('%s', async (_name, options, waitMs) => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const calls = failing('get', '/pets', 1, () => new HttpResponse(null, { status: 503 }));
    const call = client(options).listPets({ limit: 1 });
    await vi.advanceTimersByTimeAsync(waitMs - 1);
    expect(calls.count).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.count).toBe(2);
    expect(await run(call)).toHaveLength(1);
  });

  it('bare 429s (no Retry-After, no budget) back off exponentially: with Math.random at 0.999 the waits are just under 0.5, 1 and 2 s', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const calls = failing('get', '/pets', 3, () => new HttpResponse(null, { status: 429 }));
    const call = client({ maxRetries: 3 }).listPets({ limit: 1 });
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.count).toBe(1);
    const arrivals = [Date.now()];
    for (let step = 0; step < 40 && calls.count < 4; step++) {
      const before = calls.count;
      await vi.advanceTimersByTimeAsync(100);
      if (calls.count > before) arrivals.push(Date.now());
    }
    expect(await run(call)).toHaveLength(1);
    expect(calls.count).toBe(4);
    // Each gap is the previous one doubled (to the 100 ms step the test advances by).
    expect(arrivals.slice(1).map((at, i) => at - arrivals[i]!)).toEqual([500, 1_000, 2_000]);
  });

  it('listPets: a network error is retried, and ConnectionError is thrown when retries run out', async () => {
    const calls = failing('get', '/pets', 10, () => HttpResponse.error());
    expect(await run(client({ maxRetries: 1 }).listPets())).toBeInstanceOf(ConnectionError);
    expect(calls.count).toBe(2);
  });

  it('a fetch the runtime refuses (Deno without --allow-net: NotCapable, PermissionDenied before Deno 2) is a ConnectionError saying to grant network access, never retried, that knows nothing was sent', async () => {
    for (const name of ['NotCapable', 'PermissionDenied']) {
      let calls = 0;
      const fetch = async () => {
        calls++;
        throw Object.assign(new Error('Requires net access to "petstore.test:443", run again with the --allow-net flag'), { name });
      };
      const error = await run(client({ fetch, maxRetries: 2 }).listPets());
      expect(error).toBeInstanceOf(ConnectionError);
      expect(error).toMatchObject({ mayHaveSucceeded: false, message: `listPets (GET /pets): the runtime refused the request (${name}); grant network access (Deno: --allow-net). This is not retried.` });
      expect(calls).toBe(1);
    }
  });

  it('createPet: a 500 is never retried, so no duplicate pet is created', async () => {
    // The server acts on the request, then the answer is lost to a 500.
    const calls = failing('post', '/pets', 1, async (request) => {
      await server.fetch(request);
      return serverError();
    });
    expect(await run(client().createPet({ name: 'Rex', categoryId: 1 }))).toBeInstanceOf(InternalServerError);
    expect(calls.count).toBe(1);
    expect(server.inspect().petCount).toBe(11);
  });

  it('createPet: a network error after sending is never retried, so no duplicate pet is created', async () => {
    const calls = failing('post', '/pets', 1, async (request) => {
      await server.fetch(request);
      return HttpResponse.error();
    });
    expect(await run(client().createPet({ name: 'Rex', categoryId: 1 }))).toBeInstanceOf(ConnectionError);
    expect(calls.count).toBe(1);
    expect(server.inspect().petCount).toBe(11);
  });

  it('createPet: a 429 is retried after Retry-After, since the server did not act on it', async () => {
    const calls = failing('post', '/pets', 1, () => new HttpResponse(null, { status: 429, headers: { 'Retry-After': '2' } }));
    expect(await run(client().createPet({ name: 'Rex', categoryId: 1 }))).toMatchObject({ id: 11 });
    expect(calls.count).toBe(2);
    expect(calls.at[1]! - calls.at[0]!).toBe(2_000);
    expect(server.inspect().petCount).toBe(11);
  });

  it('a 429 whose Retry-After is an HTTP-date waits until that date', async () => {
    const until = new Date(Date.now() + 7_000).toUTCString();
    const calls = failing('get', '/pets', 1, () => new HttpResponse(null, { status: 429, headers: { 'Retry-After': until } }));
    expect(await run(client().listPets({ limit: 1 }))).toHaveLength(1);
    expect(calls.count).toBe(2);
    expect(calls.at[1]).toBe(Date.parse(until));
  });

  it('a 429 without Retry-After waits until X-RateLimit-Reset', async () => {
    const reset = Math.ceil(Date.now() / 1000) + 9;
    const calls = failing('get', '/pets', 1, () =>
      new HttpResponse(null, { status: 429, headers: { 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(reset) } }),
    );
    expect(await run(client().listPets({ limit: 1 }))).toHaveLength(1);
    expect(calls.count).toBe(2);
    expect(calls.at[1]).toBe(reset * 1000);
  });

  it('a 429 without Retry-After whose budget is not spent backs off instead of waiting for X-RateLimit-Reset', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999);
    const reset = Math.ceil(Date.now() / 1000) + 30;
    const calls = failing('get', '/pets', 1, () =>
      new HttpResponse(null, { status: 429, headers: { 'X-RateLimit-Limit': '5', 'X-RateLimit-Remaining': '2', 'X-RateLimit-Reset': String(reset) } }),
    );
    expect(await run(client().listPets({ limit: 1 }))).toHaveLength(1);
    expect(calls.count).toBe(2);
    // The first backoff with Math.random at 0.999: just under 0.5 s, far from the reset 30 s away.
    expect(calls.at[1]! - calls.at[0]!).toBe(499);
  });

  it('a 429 whose wait exceeds maxRetryDelay (a ban) throws RateLimitError at once, without waiting, saying why it was not retried', async () => {
    const calls = failing('get', '/pets', 10, () =>
      HttpResponse.json({ code: 'api_key_banned', message: 'banned', status: 429 }, { status: 429, headers: { 'Retry-After': '900' } }),
    );
    const started = Date.now();
    const error = await run(client().listPets());
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'api_key_banned', retryAfterMs: 900_000 });
    expect((error as Error).message).toBe('listPets (GET /pets): banned. Not retried: waiting 900 s would exceed maxRetryDelay (60 s).');
    expect(calls.count).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('a 503 whose Retry-After exceeds maxRetryDelay fails at once with its InternalServerError, not a ThrottledError, saying why it was not retried', async () => {
    const calls = failing('get', '/pets', 10, () => new HttpResponse(null, { status: 503, headers: { 'Retry-After': '120' } }));
    const started = Date.now();
    const error = await run(client().listPets());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 503, message: 'listPets (GET /pets): The service answered HTTP 503 without an Error record. Not retried: waiting 120 s would exceed maxRetryDelay (60 s).' });
    expect(calls.count).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('timeouts and cancellation', () => {
  const hang = () => new Promise<Response>(() => {});

  it('an attempt that takes longer than timeout fails with TimeoutError; GETs retry it', async () => {
    const calls = failing('get', '/pets', 1, hang);
    const started = Date.now();
    expect(await run(client({ timeout: 1_000 }).listPets({ limit: 1 }))).toHaveLength(1);
    expect(calls.count).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('TimeoutError is a ConnectionError, thrown when retries run out; the per-call timeout wins', async () => {
    failing('get', '/pets', 10, hang);
    const error = await run(client({ timeout: 60_000 }).listPets({}, { timeout: 500, maxRetries: 0 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(Date.now()).toBeLessThan(Date.UTC(2026, 5, 1, 0, 0, 12));
  });

  it('createPet: a timeout is never retried', async () => {
    const calls = failing('post', '/pets', 10, hang);
    expect(await run(client({ timeout: 1_000 }).createPet({ name: 'Rex', categoryId: 1 }))).toBeInstanceOf(TimeoutError);
    expect(calls.count).toBe(1);
  });

  it('aborting a request in flight rejects with an AbortError, a PetStoreError whose cause is the signal\'s reason', async () => {
    failing('get', '/pets', 10, hang);
    const controller = new AbortController();
    const call = settle(client().listPets({}, { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(100);
    const reason = new Error('navigated away');
    controller.abort(reason);
    const outcome = await call;
    const error = outcome.status === 'rejected' ? outcome.reason : undefined;
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ name: 'AbortError', cause: reason, mayHaveSucceeded: true, method: 'GET' });
    expect((error as Error).message).toMatch(/^listPets \(GET \/pets\): aborted by the caller's signal/);
  });

  it('aborting a createPet in flight says the pet may have been created', async () => {
    failing('post', '/pets', 10, hang);
    const controller = new AbortController();
    const call = settle(client().createPet({ name: 'Rex', categoryId: 1 }, { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    const outcome = await call;
    const error = outcome.status === 'rejected' ? outcome.reason : undefined;
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ mayHaveSucceeded: true, method: 'POST' });
    expect((error as Error).message).toContain('The pet may have been created');
    expect((error as AbortError).cause).toMatchObject({ name: 'AbortError' });
  });

  it('a signal aborted once the createPet answer has arrived (from a response listener) says the pet may have been created', async () => {
    const c = client();
    const controller = new AbortController();
    c.on('response', ({ operation }) => {
      if (operation === 'createPet') controller.abort(new Error('enough'));
    });
    const error = await run(c.createPet({ name: 'Rex', categoryId: 1 }, { signal: controller.signal }));
    expect(server.inspect().petCount).toBe(11);
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ mayHaveSucceeded: true, method: 'POST' });
    expect((error as Error).message).toContain('The pet may have been created');
  });

  it('aborting during a retry backoff rejects with the reason and sends nothing more', async () => {
    const calls = failing('get', '/pets', 10, () => new HttpResponse(null, { status: 503, headers: { 'Retry-After': '30' } }));
    const controller = new AbortController();
    const call = settle(client().listPets({}, { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(1_000);
    controller.abort();
    const outcome = await call;
    const error = outcome.status === 'rejected' ? outcome.reason : undefined;
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ name: 'AbortError', mayHaveSucceeded: false });
    expect(calls.count).toBe(1);
  });

  it('an already aborted signal sends nothing, and the AbortError carries its reason', async () => {
    const reason = new Error('too late');
    const error = await run(client().listPets({}, { signal: AbortSignal.abort(reason) }));
    expect(error).toBeInstanceOf(AbortError);
    expect(error).toMatchObject({ cause: reason, mayHaveSucceeded: false });
    expect(server.inspect().keys['key-pro']).toBeUndefined();
  });

  it('a body that stalls after the headers fails with TimeoutError once the attempt\'s timeout is spent', async () => {
    const stalled = () => new HttpResponse(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('[')) }), { headers: { 'Content-Type': 'application/json' } });
    // Through the fetch option, not msw: undici asserts when msw's mock socket closes a stream
    // that an abort already ended (msw 3 + Node 24), an error outside the client.
    let cancelled = false;
    const fetch = async () => {
      const response = stalled();
      const reader = response.body!.getReader();
      return new Response(new ReadableStream({ pull: async (c) => { const { value } = await reader.read(); if (value) c.enqueue(value); }, cancel: () => void (cancelled = true) }), response);
    };
    expect(await run(client({ timeout: 2_000, maxRetries: 0, fetch }).listPets())).toBeInstanceOf(TimeoutError);
    expect(cancelled).toBe(true);
  });

  it('withResponse: an invalid argument rejects the returned promise rather than throwing synchronously', async () => {
    const promise = client().withResponse.listPets({ limit: 1_000 });
    expect(promise).toBeInstanceOf(Promise);
    await expect(promise).rejects.toThrow(/limit must be at most 100/);
  });
});

describe('cut connections', () => {
  /** The server's answer, with its body cut off halfway, as a dropped connection does. */
  const truncated = async (request: Request) => {
    const response = await server.fetch(request);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(bytes.subarray(0, bytes.length >> 1));
        controller.error(new TypeError('terminated'));
      },
    });
    return new HttpResponse(body, { status: response.status, headers: response.headers });
  };

  it('listPets: a body cut off halfway is retried like a network error', async () => {
    const calls = failing('get', '/pets', 1, truncated);
    expect(await run(client().listPets({ limit: 2 }))).toHaveLength(2);
    expect(calls.count).toBe(2);
  });

  it('createPet: a body cut off halfway is a ConnectionError and is not retried, so no duplicate pet is created', async () => {
    const calls = failing('post', '/pets', 10, truncated);
    expect(await run(client().createPet({ name: 'Rex', categoryId: 1 }))).toBeInstanceOf(ConnectionError);
    expect(calls.count).toBe(1);
    expect(server.inspect().petCount).toBe(11);
  });
});
