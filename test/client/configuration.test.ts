import { getEventListeners } from 'node:events';
import { inspect } from 'node:util';
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthenticationError, ConnectionError, createMemoryCoordinator, DEFAULTS, PetStoreClient, ValidationError, type AcquireRequest, type RateLimitObservation, type RateLimitState } from '@animal-store/sdk';
import { createHandlers } from '@animal-store/sdk/msw';
import { createReferenceServer } from '@animal-store/sdk/server';
import { BASE_URL, run, thrown, useReferenceServer } from './harness.js';

const { server, mock, client } = useReferenceServer();

/** A client made from options as JavaScript may pass them, untyped: for the errors its constructor throws. */
const make = (options: object) => () => new PetStoreClient({ apiKey: 'k', baseUrl: BASE_URL, ...options });

afterEach(() => {
  vi.unstubAllEnvs();
});

/** A fetch that records each request's headers, then lets msw answer it. */
function recordingFetch() {
  const seen: Headers[] = [];
  const fetch = (request: Request) => {
    seen.push(new Headers(request.headers));
    return globalThis.fetch(request);
  };
  return { seen, fetch };
}

describe('configuration', () => {
  it('the documented defaults are 2 retries, 30 s per attempt, 60 s max retry delay, throttle on, 10 MiB bodies and warn logs', () => {
    expect(DEFAULTS).toEqual({ maxRetries: 2, timeout: 30_000, maxRetryDelay: 60_000, throttle: true, maxResponseBytes: 10 * 1024 * 1024, logLevel: 'warn' });
    expect(client().toJSON()).toMatchObject(DEFAULTS);
  });

  it('toJSON() and toString() show exactly the settings, in a fixed order, given ones and defaults alike, the key redacted', () => {
    const c = new PetStoreClient({ apiKey: 'k-settings', baseUrl: `${BASE_URL}/`, maxRetries: 5, throttle: false, logLevel: 'error', fetch: (request) => globalThis.fetch(request), headers: { 'X-Team': 'a' }, coordinator: createMemoryCoordinator() });
    expect(Object.keys(c.toJSON())).toEqual(['apiKey', 'baseUrl', 'maxRetries', 'timeout', 'maxRetryDelay', 'throttle', 'maxResponseBytes', 'logLevel']);
    expect(String(c)).toBe(
      `PetStoreClient {"apiKey":"[redacted]","baseUrl":"${BASE_URL}","maxRetries":5,"timeout":30000,"maxRetryDelay":60000,"throttle":false,"maxResponseBytes":10485760,"logLevel":"error"}`,
    );
  });

  it('a missing API key throws ValidationError at construction, saying to pass apiKey or set PETSTORE_API_KEY', () => {
    vi.stubEnv('PETSTORE_API_KEY', '');
    expect(() => new PetStoreClient({ baseUrl: BASE_URL })).toThrow(ValidationError);
    expect(() => new PetStoreClient({ baseUrl: BASE_URL })).toThrow(/PETSTORE_API_KEY/);
  });

  it('a base URL whose path does not end in /v1 throws ValidationError that quotes it as given and shows the expected form', () => {
    expect(() => new PetStoreClient({ apiKey: 'key-pro', baseUrl: 'https://petstore.test/v2' })).toThrow(ValidationError);
    expect(() => new PetStoreClient({ apiKey: 'key-pro', baseUrl: 'https://petstore.test' })).toThrow(
      'baseUrl "https://petstore.test" must end in the version segment /v1, such as "https://<host>/v1".',
    );
    expect(() => new PetStoreClient({ apiKey: 'key-pro', baseUrl: 'petstore.test/v1' })).toThrow(/is not a URL/);
  });

  it('a relative baseUrl resolves against the page\'s address where there is one (a browser app behind its own proxy)', async () => {
    expect(() => client({ baseUrl: '/api/v1' })).toThrow('is not a URL. Use an absolute one such as "https://<host>/v1" (or, in a browser, a path such as "/api/v1").');
    vi.stubGlobal('location', { href: 'https://petstore.test/app/page.html' });
    try {
      const seen: string[] = [];
      const proxied = client({ baseUrl: '/v1', fetch: (request) => (seen.push(request.url), server.fetch(request)) });
      expect(await run(proxied.listPets({ limit: 1 }))).toHaveLength(1);
      expect(seen).toEqual(['https://petstore.test/v1/pets?limit=1']);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('an API key with a line break, a NUL, a space or non-ASCII is a ValidationError that does not quote it', () => {
    for (const apiKey of ['sk_live_SECRETKEY\n', 'sk_live_SECRET\r\nX-Evil: 1', 'sk_live_SECRET\0', 'sk live SECRET', 'sk_live_SÉCRET']) {
      let error: unknown;
      try {
        client({ apiKey });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ValidationError);
      expect(JSON.stringify(error) + String(error)).not.toMatch(/SECRET|SÉCRET/);
    }
  });

  it('an apiKey that is not a string, or that starts with "Bearer ", is a ValidationError that says what to pass and does not quote it', () => {
    expect(() => client({ apiKey: 12345 as never })).toThrow('apiKey must be a string; got a number.');
    expect(() => client({ apiKey: { key: 'sk_live_SECRET' } as never })).toThrow('apiKey must be a string; got an object.');
    expect(() => client({ apiKey: ['sk_live_SECRET'] as never })).toThrow('apiKey must be a string; got an array.');
    for (const apiKey of ['Bearer sk_live_SECRET', 'bearer  sk_live_SECRET']) {
      expect(() => client({ apiKey })).toThrow('apiKey must be the key alone, without "Bearer ": the client sends "Authorization: Bearer <apiKey>" itself.');
      expect(() => client({ apiKey })).not.toThrow(/SECRET/);
    }
  });

  it('a baseUrl written as a host without its scheme is a ValidationError that shows the URL meant: http on the loopback, https elsewhere', () => {
    expect(() => client({ baseUrl: 'localhost:4010/v1' })).toThrow('got the scheme "localhost:". Did you mean "http://localhost:4010/v1"?');
    expect(() => client({ baseUrl: '127.0.0.1:4010/v1' })).toThrow('is not a URL. Did you mean "http://127.0.0.1:4010/v1"?');
    expect(() => client({ baseUrl: 'petstore.example/v1' })).toThrow('is not a URL. Did you mean "https://petstore.example/v1"?');
    expect(() => client({ baseUrl: 'localhost:4010' })).toThrow('got the scheme "localhost:". Did you mean "http://localhost:4010"?');
    // Nothing that looks like a host: no guess.
    expect(() => client({ baseUrl: 'mailto:x' })).toThrow(/got the scheme "mailto:"\.$/);
    expect(() => client({ baseUrl: 'api/v1' })).toThrow('is not a URL. Use an absolute one such as');
  });

  it('a baseUrl with credentials or a scheme other than http(s) is refused without echoing the password', () => {
    expect(() => client({ baseUrl: 'https://user:hunter2@petstore.test/v1' })).toThrow(/must not hold credentials/);
    expect(() => client({ baseUrl: 'https://user:hunter2@petstore.test/v1' })).not.toThrow(/hunter2/);
    // A user name alone (a key put there) is a credential too.
    expect(() => client({ baseUrl: 'https://sk_live_SECRET@petstore.test/v1' })).toThrow(/must not hold credentials/);
    expect(() => client({ baseUrl: 'https://sk_live_SECRET@petstore.test/v1' })).not.toThrow(/SECRET/);
    expect(() => client({ baseUrl: 'ftp://petstore.test/v1' })).toThrow(/must be an http or https URL/);
    expect(() => client({ baseUrl: 'javascript:alert(1)//v1' })).toThrow(ValidationError);
  });

  it('an invalid numeric option throws ValidationError that names it; a wait is at most 2^31 − 1 ms, the longest setTimeout honours', () => {
    expect(() => client({ maxRetries: -1 })).toThrow(/maxRetries must be at least 0/);
    expect(() => client({ timeout: 0 })).toThrow(/timeout must be greater than 0/);
    // setTimeout fires a longer wait after 1 ms.
    expect(client({ timeout: 2 ** 31 - 1, maxRetryDelay: 2 ** 31 - 1 }).toJSON()).toMatchObject({ timeout: 2 ** 31 - 1, maxRetryDelay: 2 ** 31 - 1 });
    expect(() => client({ timeout: 2 ** 31 })).toThrow('PetStoreClient options: timeout must be at most 2147483647.');
  });

  it('an option of the wrong type (JavaScript has no type check) is a ValidationError naming it and what it must be', async () => {
    expect(make({ baseUrl: 123 })).toThrow('PetStoreClient options: baseUrl must be a string or a URL.');
    expect(make({ throttle: 'no' })).toThrow('PetStoreClient options: throttle must be a boolean.');
    expect(make({ fetch: 1 })).toThrow("PetStoreClient options: fetch must be a function, such as a reference server's: fetch: (request) => server.fetch(request).");
    expect(make({ fetch: createReferenceServer() })).toThrow('fetch: (request) => server.fetch(request).');
    expect(make({ onDeprecation: 'warn' })).toThrow('PetStoreClient options: onDeprecation must be a function.');
    // A fraction of a millisecond is a timeout too: not "must be an integer" (before).
    expect(make({ timeout: '5000' })).toThrow('PetStoreClient options: timeout must be a number.');
    expect(make({ maxRetryDelay: '1000' })).toThrow('PetStoreClient options: maxRetryDelay must be a number.');
    expect(make({ maxRetries: '2' })).toThrow('PetStoreClient options: maxRetries must be an integer.');
    for (const logger of [{}, { error() {}, warn() {}, info() {} }]) expect(make({ logger })).toThrow('PetStoreClient options: logger must have the methods error, warn, info and debug (console has them).');
    const coordinatorRule = 'PetStoreClient options: coordinator must have the methods acquire, observe, changed, getSnapshot, subscribe (or bind), as what createMemoryCoordinator() or createRedisCoordinator({ redis }) returns.';
    expect(make({ coordinator: {} })).toThrow(coordinatorRule);
    // The factory passed uncalled: a function's own bind made it "coordinator.bind() must return a coordinator".
    expect(make({ coordinator: createMemoryCoordinator })).toThrow(coordinatorRule);
    for (const returned of [undefined, null, 1, { bind() {} }]) {
      expect(make({ coordinator: { bind: () => returned } })).toThrow('PetStoreClient options: coordinator.bind() must return a coordinator (with acquire, observe, changed, getSnapshot, subscribe).');
    }
    const signal = await run(client().listPets({}, { signal: {} as AbortSignal }));
    expect(signal).toBeInstanceOf(ValidationError);
    expect((signal as Error).message).toBe('listPets options: signal must be an AbortSignal.');
    expect(server.inspect().keys['key-pro']).toBeUndefined();
  });

  it('a signal that looks like an AbortSignal but throws when used (its aborted getter, addEventListener) is a ValidationError with what it threw as its cause, and nothing is sent; one whose removeEventListener throws still serves the call', async () => {
    const bug = new Error('signal bug');
    const fails = (what: string) => () => {
      throw Object.assign(bug, { what });
    };
    const base = { throwIfAborted() {}, addEventListener() {}, removeEventListener() {} };
    for (const signal of [
      Object.defineProperty({ ...base }, 'aborted', { get: fails('aborted') }),
      { ...base, addEventListener: fails('addEventListener') },
    ]) {
      const error = await run(client().listPets({}, { signal: signal as unknown as AbortSignal }));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe('listPets options could not be read (a getter or proxy threw); see the error\'s cause. Nothing was sent.');
      expect((error as Error).cause).toBe(bug);
    }
    expect(server.inspect().keys['key-pro']).toBeUndefined();
    // A call refused for another option leaves no listener on a signal the app keeps.
    const kept = new AbortController().signal;
    expect(await run(client().listPets({}, { signal: kept, headers: { 'X-Trace': 'a\nb' } }))).toBeInstanceOf(ValidationError);
    expect(getEventListeners(kept, 'abort')).toHaveLength(0);
    // Called as the call ends, it has nothing left to stop.
    const page = await client().listPets({}, { signal: { ...base, removeEventListener: fails('removeEventListener') } as unknown as AbortSignal });
    expect(Array.isArray(page)).toBe(true);
  });

  it('options whose getter throws are a ValidationError that says so, with what it threw as its cause', () => {
    const bug = new Error('getter bug');
    const error = thrown(() => new PetStoreClient({ get apiKey(): string { throw bug; } })) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toBe('PetStoreClient options could not be read (a getter or proxy threw); see the error\'s cause.');
    expect(error.cause).toBe(bug);
  });

  it('a coordinator whose bind throws is a ValidationError that says so, with what it threw as its cause', () => {
    const bug = new Error('bind bug');
    const coordinator = { bind: () => { throw bug; } } as never;
    const error = thrown(() => client({ coordinator })) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.message).toBe('PetStoreClient options: coordinator.bind() threw; see the error\'s cause.');
    expect(error.cause).toBe(bug);
  });

  it('baseUrl may be a URL object, like a string, one from another realm (an iframe) too', async () => {
    expect(await run(client({ baseUrl: new URL(BASE_URL) }).listPets({ limit: 1 }))).toHaveLength(1);
    const foreign = { [Symbol.toStringTag]: 'URL', toString: () => BASE_URL };
    expect(await run(client({ baseUrl: foreign as unknown as URL }).listPets({ limit: 1 }))).toHaveLength(1);
  });

  it('null from JavaScript means the default, as undefined does', async () => {
    const nulls = { logger: null, coordinator: null, throttle: null, onDeprecation: null, fetch: null, timeout: undefined };
    expect(await run(client(nulls as never).listPets({ limit: 1 }))).toHaveLength(1);
  });

  it('null from JavaScript means the default for the numbers, logLevel and headers too, in the constructor and per call (before: a ValidationError, though throttle: null was the default)', async () => {
    vi.stubEnv('PETSTORE_LOG', 'debug');
    const nulls = { maxRetries: null, timeout: null, maxRetryDelay: null, maxResponseBytes: null, logLevel: null, headers: null, logger: { error() {}, warn() {}, info() {}, debug() {} } };
    const c = client(nulls as never);
    expect(c.toJSON()).toMatchObject({ ...DEFAULTS, logLevel: 'debug' });
    expect(await run(c.listPets({ limit: 1 }, { timeout: null, maxRetries: null, headers: null, signal: null } as never))).toHaveLength(1);
  });

  it('a logger may be a function with the four methods, and a coordinator a class with its methods on the prototype', async () => {
    const lines: string[] = [];
    const logger = Object.assign(() => {}, { error() {}, warn() {}, info() {}, debug: (line: string) => void lines.push(line) });
    class Own {
      readonly #inner = createMemoryCoordinator();
      acquire(request: AcquireRequest) { return this.#inner.acquire(request); }
      observe(observation: RateLimitObservation) { return this.#inner.observe(observation); }
      changed(signal?: AbortSignal) { return this.#inner.changed(signal); }
      getSnapshot() { return this.#inner.getSnapshot(); }
      subscribe(listener: (state: RateLimitState | undefined) => void) { return this.#inner.subscribe(listener); }
    }
    const c = client({ logger, logLevel: 'debug', coordinator: new Own() });
    const heard: unknown[] = [];
    c.rateLimit.subscribe((state) => void heard.push(state));
    expect(await run(c.listPets({ limit: 1 }))).toHaveLength(1);
    expect(c.rateLimit.getSnapshot()).toMatchObject({ limit: 300 });
    expect(heard).toHaveLength(1);
    expect(lines).toEqual([expect.stringMatching(/^listPets GET .* → 200/)]);
  });

  it('a misspelt option (JavaScript has no type check) is a ValidationError that names it and suggests the right one', () => {
    expect(make({ retries: 5 })).toThrow(ValidationError);
    expect(make({ retries: 5 })).toThrow('PetStoreClient options: unknown option "retries" (did you mean "maxRetries"?)');
    expect(make({ baseURL: 'x' })).toThrow('unknown option "baseURL" (did you mean "baseUrl"?)');
    expect(make({ colour: 'red' })).toThrow(/unknown option "colour"\. The options are apiKey, baseUrl, .*onDeprecation\./);
  });

  it('an option written in another case or style, in the singular, or with a slip of the keyboard, names the one meant (max_retries, maxRetry, api_key, timout)', () => {
    expect(make({ max_retries: 1 })).toThrow('unknown option "max_retries" (did you mean "maxRetries"?)');
    expect(make({ maxRetry: 1 })).toThrow('unknown option "maxRetry" (did you mean "maxRetries"?)');
    expect(make({ base_url: BASE_URL })).toThrow('unknown option "base_url" (did you mean "baseUrl"?)');
    expect(make({ timout: 1 })).toThrow('unknown option "timout" (did you mean "timeout"?)');
    expect(make({ loglevel: 'debug' })).toThrow('unknown option "loglevel" (did you mean "logLevel"?)');
  });

  it('an option is named where the name is its end (url: baseUrl) or a slip away, two slips from six letters on (fetcher, loggin); a name of two letters, or further from each (logr, bearer), gets the list, and one of thousands of characters is quoted cut to 40, marked "…" and never inside an emoji', () => {
    expect(make({ url: BASE_URL })).toThrow('unknown option "url" (did you mean "baseUrl"?)');
    expect(make({ fetcher: fetch })).toThrow('unknown option "fetcher" (did you mean "fetch"?)');
    expect(make({ loggin: console })).toThrow('unknown option "loggin" (did you mean "logger"?)');
    for (const name of ['on', 'logr', 'bearer']) expect(make({ [name]: 1 })).toThrow(`unknown option "${name}". The options are apiKey, baseUrl,`);
    expect(make({ ['x'.repeat(5_000)]: 1 })).toThrow(`unknown option "${'x'.repeat(40)}…". The options are apiKey, baseUrl,`);
    // Never cut between the two halves of a character outside the BMP: the emoji goes whole.
    expect(make({ [`${'x'.repeat(39)}🐕${'x'.repeat(10)}`]: 1 })).toThrow(`unknown option "${'x'.repeat(39)}…". The options are apiKey, baseUrl,`);
    expect(make({ [`${'x'.repeat(38)}🐕${'x'.repeat(10)}`]: 1 })).toThrow(`unknown option "${'x'.repeat(38)}🐕…". The options are apiKey, baseUrl,`);
  });

  it('options that are not an object (null from JavaScript) are a ValidationError, in the constructor and per call', async () => {
    expect(() => new PetStoreClient(null as never)).toThrow(ValidationError);
    expect(() => new PetStoreClient(null as never)).toThrow('PetStoreClient options must be an object');
    const error = await run(client().listPets({}, null as never));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe('listPets options must be an object, such as { signal, timeout, maxRetries, headers }.');
    expect(server.inspect().keys['key-pro']).toBeUndefined();
  });

  it('the API key passed in place of the options is a ValidationError saying they must be an object, which does not quote it', () => {
    expect(() => new PetStoreClient('sk_live_SECRET' as never)).toThrow('PetStoreClient options must be an object, such as { apiKey, baseUrl, maxRetries, timeout }.');
    expect(() => new PetStoreClient('sk_live_SECRET' as never)).not.toThrow(/SECRET/);
  });

  it('a ValidationError of the options names the one at fault in its issue\'s path', async () => {
    const cases: [() => unknown, string][] = [
      [() => new PetStoreClient(null as never), 'options'],
      [() => client({ apiKey: 12345 as never }), 'apiKey'],
      [() => client({ apiKey: 'Bearer key-pro' }), 'apiKey'],
      [() => client({ apiKey: 'key pro' }), 'apiKey'],
      [() => client({ baseUrl: 'petstore.test/v1' }), 'baseUrl'],
      [() => client({ baseUrl: 'https://user:pw@petstore.test/v1' }), 'baseUrl'],
      [() => client({ baseUrl: 'ftp://petstore.test/v1' }), 'baseUrl'],
      [() => client({ baseUrl: 'https://petstore.test/v2' }), 'baseUrl'],
      [() => client({ throttle: 'no' as never }), 'throttle'],
      [() => client({ headers: { 'X Trace': 'a' } }), 'headers'],
      [() => client({ headers: { Authorization: 'Bearer key-pro' } }), 'headers'],
      [() => client({ coordinator: { bind: () => 1 } as never }), 'coordinator'],
    ];
    for (const [construct, path] of cases) {
      const error = thrown(construct);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).issues).toEqual([{ code: 'custom', path: [path], message: (error as Error).message, input: undefined }]);
    }
  });

  it('a baseUrl of thousands of characters is quoted cut short in its ValidationError, marked as cut', () => {
    const long = 'a'.repeat(5_000);
    for (const baseUrl of [`petstore.example/${long}/v1`, `localhost:4010/${long}/v1`, `${long}:x/v1`, `https://petstore.example/${long}/v2`]) {
      expect(() => client({ baseUrl })).toThrow(ValidationError);
      expect(() => client({ baseUrl })).not.toThrow(/a{250}/);
      expect(() => client({ baseUrl })).toThrow(/a…"/);
    }
  });

  it('a baseUrl with trailing slashes after /v1 is the same base URL', async () => {
    const seen: string[] = [];
    const c = client({ baseUrl: `${BASE_URL}//`, fetch: (request) => (seen.push(request.url), server.fetch(request)) });
    expect(await run(c.listPets({ limit: 1 }))).toHaveLength(1);
    expect(seen).toEqual([`${BASE_URL}/pets?limit=1`]);
  });

  it("a call's numeric options are checked when headers come with them: { headers, timeout: -1 } is a ValidationError, and nothing is sent", async () => {
    const error = await run(client().listPets({}, { headers: { 'X-Trace': 'a' }, timeout: -1 }));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/^listPets options: timeout must be greater than 0/);
    expect(server.inspect().keys['key-pro']).toBeUndefined();
  });

  it('a misspelt per-call option is a ValidationError before anything is sent', async () => {
    const c = client();
    const error = await run(c.listPets({}, { retries: 1 } as object));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe('listPets options: unknown option "retries" (did you mean "maxRetries"?).');
    expect(server.inspect().keys['key-pro']).toBeUndefined();
  });

  it('apiKey and baseUrl fall back to PETSTORE_API_KEY and PETSTORE_BASE_URL', async () => {
    vi.stubEnv('PETSTORE_API_KEY', 'key-pro');
    vi.stubEnv('PETSTORE_BASE_URL', BASE_URL);
    const pets = await run(new PetStoreClient().listPets({ limit: 2 }));
    expect(pets).toHaveLength(2);
  });

  it('on Deno Deploy, whose Deno.permissions has no querySync, apiKey and baseUrl are read from PETSTORE_API_KEY and PETSTORE_BASE_URL, and a missing one is the ValidationError naming it (before: the variables read as unset, and a TypeError, querySync is not a function)', async () => {
    vi.stubGlobal('Deno', { version: { deno: '2.9.6' }, permissions: {} });
    try {
      vi.stubEnv('PETSTORE_API_KEY', 'key-pro');
      vi.stubEnv('PETSTORE_BASE_URL', BASE_URL);
      expect(await run(new PetStoreClient().listPets({ limit: 2 }))).toHaveLength(2);
      vi.stubEnv('PETSTORE_API_KEY', '');
      expect(thrown(() => new PetStoreClient())).toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/^apiKey is missing\. /) });
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('in Deno, a PETSTORE_ variable is read only once a permission query for it says granted, and other spellings are looked for only with all of the environment granted (a query never asks; a read may stop the app on a prompt)', () => {
    const asked: unknown[] = [];
    const granted = new Set(['PETSTORE_BASE_URL']);
    const querySync = (descriptor: { name: string; variable?: string }) => (asked.push(descriptor), { state: granted.has(descriptor.variable ?? '*') ? 'granted' : 'prompt' });
    vi.stubGlobal('Deno', { version: { deno: '2.9.6' }, permissions: { querySync } });
    try {
      vi.stubEnv('PETSTORE_API_KEY', 'key-pro');
      vi.stubEnv('PETSTORE_BASE_URL', BASE_URL);
      vi.stubEnv('PETSTORE_APIKEY', 'key-pro');
      expect(thrown(() => new PetStoreClient())).toMatchObject({ name: 'ValidationError', message: 'apiKey is missing. Pass new PetStoreClient({ apiKey }) or set the PETSTORE_API_KEY environment variable.' });
      expect(asked).toEqual([{ name: 'env', variable: 'PETSTORE_API_KEY' }, { name: 'env', variable: undefined }]);
      granted.add('*');
      expect(thrown(() => new PetStoreClient())).toMatchObject({ message: expect.stringMatching(/\(PETSTORE_APIKEY is set: did you mean PETSTORE_API_KEY\?\)\.$/) });
      granted.add('PETSTORE_API_KEY');
      expect(new PetStoreClient().toJSON()).toMatchObject({ baseUrl: BASE_URL });
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('a missing apiKey or baseUrl names a PETSTORE_ variable set under another spelling (PETSTORE_APIKEY), never its value', () => {
    vi.stubEnv('PETSTORE_API_KEY', '');
    vi.stubEnv('PETSTORE_APIKEY', 'sk_live_secret');
    expect(() => new PetStoreClient({ baseUrl: BASE_URL })).toThrow(
      expect.objectContaining({
        name: 'ValidationError',
        message: 'apiKey is missing. Pass new PetStoreClient({ apiKey }) or set the PETSTORE_API_KEY environment variable (PETSTORE_APIKEY is set: did you mean PETSTORE_API_KEY?).',
      }),
    );
    vi.stubEnv('PETSTORE_BASE_URL', '');
    vi.stubEnv('petstore_baseurl', BASE_URL);
    expect(() => new PetStoreClient({ apiKey: 'key-pro' })).toThrow(/\(petstore_baseurl is set: did you mean PETSTORE_BASE_URL\?\)\.$/);
    vi.unstubAllEnvs();
    vi.stubEnv('PETSTORE_API_KEY', '');
    expect(() => new PetStoreClient({ baseUrl: BASE_URL })).toThrow(/environment variable\.$/);
  });

  it('an apiKey or baseUrl given as an empty string (an unset variable of the app) says so, not to set the PETSTORE_ variable that is set', () => {
    vi.stubEnv('PETSTORE_API_KEY', 'key-pro');
    vi.stubEnv('PETSTORE_BASE_URL', BASE_URL);
    expect(() => new PetStoreClient({ apiKey: '' })).toThrow(
      expect.objectContaining({
        name: 'ValidationError',
        message: 'apiKey was given as an empty string. Pass new PetStoreClient({ apiKey }) or leave apiKey out to read the PETSTORE_API_KEY environment variable.',
      }),
    );
    expect(() => new PetStoreClient({ baseUrl: '' })).toThrow(
      'baseUrl was given as an empty string. Pass new PetStoreClient({ baseUrl: "https://<host>/v1" }) or leave baseUrl out to read the PETSTORE_BASE_URL environment variable.',
    );
  });

  it('a bad value read from PETSTORE_API_KEY or PETSTORE_BASE_URL is a ValidationError that names the environment variable', () => {
    vi.stubEnv('PETSTORE_API_KEY', 'key-pro\n');
    expect(() => new PetStoreClient({ baseUrl: BASE_URL })).toThrow(/PETSTORE_API_KEY/);
    vi.stubEnv('PETSTORE_API_KEY', 'Bearer key-pro');
    expect(() => new PetStoreClient({ baseUrl: BASE_URL })).toThrow('apiKey (read from the PETSTORE_API_KEY environment variable) must be the key alone');
    vi.stubEnv('PETSTORE_API_KEY', 'key-pro');
    vi.stubEnv('PETSTORE_BASE_URL', 'https://petstore.test');
    expect(() => new PetStoreClient()).toThrow(ValidationError);
    expect(() => new PetStoreClient()).toThrow(/PETSTORE_BASE_URL/);
    // A value passed in code is blamed on the option, not on the environment.
    expect(() => new PetStoreClient({ baseUrl: 'https://petstore.test' })).not.toThrow(/PETSTORE_BASE_URL/);
  });

  it('a baseUrl ending in an empty query or fragment ("…/v1?", "…/v1#") sends each call to /v1/pets, not to /v1/?pets (before: every call missed its path)', async () => {
    for (const baseUrl of [`${BASE_URL}?`, `${BASE_URL}#`, `${BASE_URL}/?#`]) {
      const seen: string[] = [];
      const c = client({ baseUrl, fetch: (request) => (seen.push(request.url), server.fetch(request)) });
      expect(await run(c.listPets({ limit: 1 }))).toHaveLength(1);
      expect(seen).toEqual([`${BASE_URL}/pets?limit=1`]);
      expect(c.toJSON().baseUrl).toBe(BASE_URL);
    }
  });

  it('staging is just another base URL', async () => {
    const staging = 'https://staging.petstore.test/v1';
    mock.use(...createHandlers(server, { baseUrl: staging }));
    const pets = await run(client({ baseUrl: `${staging}/` }).listPets({ limit: 1 }));
    expect(pets).toHaveLength(1);
  });

  it('every request carries Authorization: Bearer <key>; an Authorization in the headers option, the client\'s or a call\'s, is a ValidationError that says apiKey sets it, quotes no value, and sends nothing (before: it was dropped without a word)', async () => {
    const { seen, fetch } = recordingFetch();
    const c = client({ fetch, headers: { 'X-Trace': 'a' } });
    await run(c.listPets());
    await run(c.listOrders({ headers: { 'X-Trace': 'b' } }));
    expect(seen.map((h) => h.get('Authorization'))).toEqual(['Bearer key-pro', 'Bearer key-pro']);
    expect(seen.map((h) => h.get('X-Trace'))).toEqual(['a', 'b']);
    const refused: unknown[] = [];
    try {
      client({ fetch, headers: { authorization: 'Bearer sk_other_secret' } });
    } catch (error) {
      refused.push(error);
    }
    refused.push(await run(c.listPets(undefined, { headers: [['Authorization', 'Bearer sk_other_secret']] })));
    expect(refused).toHaveLength(2);
    for (const error of refused) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(/headers must not hold Authorization.*Pass the key as apiKey/);
      expect(JSON.stringify(error) + String(error)).not.toContain('sk_other_secret');
    }
    expect(seen).toHaveLength(2);
  });

  it("a call's headers are merged over the client's: both sets are sent, and a name given in both takes the call's value", async () => {
    const { seen, fetch } = recordingFetch();
    const c = client({ fetch, headers: { 'X-Tenant': 'acme', 'X-Trace': 'client' } });
    await run(c.listPets(undefined, { headers: { 'x-trace': 'call', 'X-Feature': 'on' } }));
    await run(c.listPets());
    expect(seen.map((h) => [h.get('X-Tenant'), h.get('X-Trace'), h.get('X-Feature')])).toEqual([
      ['acme', 'call', 'on'],
      ['acme', 'client', null],
    ]);
  });
});

describe('the API key never leaks', () => {
  const secret = 'key-pro';

  it('JSON.stringify, String and util.inspect of the client redact the key', () => {
    const c = client();
    for (const text of [JSON.stringify(c), String(c), `${c}`, inspect(c, { depth: 10, showHidden: true })]) {
      expect(text).not.toContain(secret);
      expect(text).toContain('[redacted]');
    }
  });

  it('an API error holds neither the key nor the request: message, JSON and inspect are clean', async () => {
    const error = await run(client({ apiKey: 'key-wrong' }).listPets());
    expect(error).toBeInstanceOf(AuthenticationError);
    for (const text of [(error as Error).message, JSON.stringify(error), inspect(error, { depth: 10, showHidden: true })]) {
      expect(text).not.toContain('key-wrong');
    }
  });

  it('a header value fetch refuses throws ValidationError, at construction or before the call sends anything, without echoing the value', async () => {
    const secret = 'sk_live_SECRETk3y\r\nX-Injected: 1';
    expect(() => client({ headers: { 'X-Trace': secret } })).toThrow(ValidationError);
    expect(() => client({ headers: { 'X-Trace': secret } })).toThrow('PetStoreClient options: headers must be names and values fetch accepts');
    const { seen, fetch } = recordingFetch();
    const error = await run(client({ fetch }).listPets({}, { headers: { 'X-Trace': secret } }));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/listPets options: headers/);
    expect((error as Error).message).not.toContain('sk_live');
    expect(seen).toHaveLength(0);
  });

  it('a connection error keeps only the transport cause, not ky\'s request with its headers', async () => {
    mock.use(http.get(`${BASE_URL}/pets`, () => HttpResponse.error()));
    const error = await run(client({ maxRetries: 0 }).listPets());
    expect(error).toBeInstanceOf(ConnectionError);
    expect(inspect(error, { depth: 10, showHidden: true })).not.toContain(secret);
    expect(JSON.stringify(error)).not.toContain(secret);
  });
});
