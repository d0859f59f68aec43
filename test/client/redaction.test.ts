/**
 * The API key never shows in what the client emits, wherever the user put it: in the
 * `Authorization` header (always), in a query parameter of `listPets`, or in `baseUrl` (a proxy
 * that takes the key as a path segment), as written or percent-encoded. Searched in error
 * messages and properties (`String`, `JSON.stringify`, `util.inspect` with its cause), log lines
 * at every level, events, `client.toString()` and deprecation notices.
 */
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectionError, NotFoundError, PetStoreClient, ValidationError, type ClientOptions, type DeprecationNotice, type Logger } from '@animal-store/sdk';
import { createReferenceServer } from '@animal-store/sdk/server';
import { run, START } from './harness.js';

/**
 * A plain key, one holding what URLs and base64 hold (`+`, `/`, `=`, `%` and `~`), one with `\`
 * (no real key has it), which JSON escapes and a URL parser turns into `/` in a path, and one
 * without a letter or a digit.
 */
const KEYS = ['sk_live_LEAKCANARY123', 'sk+live/LEAK=CANARY%2F~x', 'sk\\live\\LEAKCANARY', "!$*~'!$*"];

beforeEach(() => void vi.useFakeTimers({ now: START }));
afterEach(() => vi.useRealTimers());

/** Everything a program could print of what the client gave it. */
const shown = (...values: unknown[]) => values.map((value) => `${String(value)} ${JSON.stringify(value)} ${inspect(value, { depth: 10, showHidden: true })}`).join('\n');

/** Whether `text` holds `key`, as written or percent-encoded (`%2F` or `%2f`). */
const holds = (text: string, key: string) => text.includes(key) || text.toLowerCase().includes(encodeURIComponent(key).toLowerCase());

/** `key` percent-encoded with lower-case hex digits (`%2f`), as some proxies and URL builders write it. */
const lowerEncoded = (key: string) => encodeURIComponent(key).replace(/%[\dA-F]{2}/g, (escape) => escape.toLowerCase());

/** A client of `key` with every log line and event kept. */
function recorded(key: string, options: ClientOptions) {
  const lines: string[] = [];
  const logger = Object.fromEntries((['debug', 'info', 'warn', 'error'] as const).map((level) => [level, (text: string) => void lines.push(`${level} ${text}`)])) as unknown as Logger;
  const client = new PetStoreClient({ apiKey: key, logger, logLevel: 'debug', ...options });
  const events: unknown[] = [];
  for (const event of ['request', 'response', 'retry', 'wait'] as const) client.on(event, (payload) => void events.push({ event, ...payload }));
  return { client, lines, events };
}

describe.each(KEYS)('the key %j', (key) => {
  it('in a listPets query (?token=KEY): the debug line, every event and the error show [redacted] where it was (before: the whole URL, key included)', async () => {
    const server = createReferenceServer({ apiKeys: { [key]: 'pro' } });
    // A 503 first (retried, an event), then a 404 without an Error record (its message quotes the URL).
    let n = 0;
    const fetch = async (request: Request) => (++n === 1 ? new Response('', { status: 503 }) : n === 2 ? new Response('nope', { status: 404 }) : server.fetch(request));
    const { client, lines, events } = recorded(key, { baseUrl: 'https://proxy.test/v1', fetch, maxRetries: 1 });
    const error = await run(client.listPets({ limit: 2, token: key } as never));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).url).toBe('https://proxy.test/v1/pets?limit=2&token=[redacted]');
    expect(lines).toContainEqual(expect.stringContaining('GET https://proxy.test/v1/pets?limit=2&token=[redacted] → 503'));
    expect(events).toContainEqual(expect.objectContaining({ event: 'request', url: 'https://proxy.test/v1/pets?limit=2&token=[redacted]' }));
    expect(shown(error, lines, events)).not.toSatisfy((text: string) => holds(text, key));
    // A successful call's log line and events too.
    const ok = recorded(key, { baseUrl: 'https://proxy.test/v1', fetch: server.fetch });
    await run(ok.client.listPets({ token: key } as never));
    expect(ok.lines).toEqual([expect.stringContaining('GET https://proxy.test/v1/pets?token=[redacted] → 200')]);
    expect(shown(ok.lines, ok.events)).not.toSatisfy((text: string) => holds(text, key));
  });

  it('in baseUrl as a path segment (a proxy\'s /KEY/v1), as written or percent-encoded in upper or lower case: the debug line, events, the error\'s url and message, and String(client) show [redacted] (before: the key in each)', async () => {
    const server = createReferenceServer({ apiKeys: { [key]: 'pro' } });
    const fetch = async (request: Request) => (request.url.endsWith('/store/orders') ? new Response('nope', { status: 404 }) : server.fetch(request));
    for (const baseUrl of [`https://proxy.test/${encodeURIComponent(key)}/v1`, `https://proxy.test/${lowerEncoded(key)}/v1`, `https://proxy.test/${key}/v1`]) {
      const { client, lines, events } = recorded(key, { baseUrl, fetch });
      expect(await run(client.listPets())).toHaveLength(0);
      const error = await run(client.listOrders());
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).message).toContain('Nothing answers https://proxy.test/[redacted]/v1/store/orders');
      expect(lines[0]).toContain('GET https://proxy.test/[redacted]/v1/pets → 200');
      expect(String(client)).toContain('"baseUrl":"https://proxy.test/[redacted]/v1"');
      expect(shown(error, lines, events, client)).not.toSatisfy((text: string) => holds(text, key));
    }
  });

  it('in a baseUrl refused at construction (not ending in /v1, holding a query, not a URL): the ValidationError shows [redacted] (before: it quoted the baseUrl, key included)', () => {
    for (const baseUrl of [`https://proxy.test/${encodeURIComponent(key)}/v2`, `https://proxy.test/v1?token=${encodeURIComponent(key)}`, `https://proxy.test/v1?token=${key}`, `not a url/${key}/v1`]) {
      let thrown: unknown;
      try {
        new PetStoreClient({ apiKey: key, baseUrl });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ValidationError);
      expect((thrown as Error).message).toContain('[redacted]');
      expect(shown(thrown)).not.toSatisfy((text: string) => holds(text, key));
    }
  });

  it('pasted as a name (an unknown option of the client or of a call, a listPets query parameter a query string cannot carry): the ValidationError shows [redacted] (before: it quoted the name, key included)', async () => {
    const server = createReferenceServer({ apiKeys: { [key]: 'pro' } });
    const thrown: unknown[] = [];
    try {
      new PetStoreClient({ apiKey: key, baseUrl: 'https://proxy.test/v1', [key]: true } as ClientOptions);
    } catch (error) {
      thrown.push(error);
    }
    const client = new PetStoreClient({ apiKey: key, baseUrl: 'https://proxy.test/v1', fetch: server.fetch });
    thrown.push(await run(client.listPets({}, { [key]: 1 } as never)));
    thrown.push(await run(client.listPets({ [key]: { nested: true } } as never)));
    thrown.push(await run(client.listPets({ [key]: `${key}\ud800` } as never)));
    expect(thrown).toHaveLength(4);
    for (const error of thrown) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).message).toContain('[redacted]');
      expect((error as ValidationError).issues[0]!.path).toEqual(['[redacted]']);
    }
    expect(shown(...thrown)).not.toSatisfy((text: string) => holds(text, key));
    expect(server.inspect().keys[key]?.requests ?? 0).toBe(0);
  });

  it('in a listPets query value a query string cannot carry (an array or an object holding it): the ValidationError and its issues do not hold it (before: the issue\'s input was the value as given, key included)', async () => {
    const server = createReferenceServer({ apiKeys: { [key]: 'pro' } });
    const client = new PetStoreClient({ apiKey: key, baseUrl: 'https://proxy.test/v1', fetch: server.fetch });
    const thrown = [await run(client.listPets({ token: [key] } as never)), await run(client.listPets({ auth: { key } } as never))];
    for (const error of thrown) expect(error).toBeInstanceOf(ValidationError);
    expect(shown(...thrown)).not.toSatisfy((text: string) => holds(text, key));
    expect(server.inspect().keys[key]?.requests ?? 0).toBe(0);
  });

  it('quoted by a fetch that fails with the request\'s URL (Deno: "error sending request for url (…)"): the message and the error\'s cause show [redacted], the cause keeps its class and code (before: the cause was the fetch\'s error as thrown, key included)', async () => {
    const fetch = async (request: Request) => {
      const cause = Object.assign(new Error(`connect refused for ${request.url}`), { code: 'ECONNREFUSED', url: request.url });
      throw new TypeError(`error sending request for url (${request.url})`, { cause });
    };
    const { client, lines, events } = recorded(key, { baseUrl: `https://proxy.test/${encodeURIComponent(key)}/v1`, fetch, maxRetries: 1 });
    const error = (await run(client.listPets({ token: key } as never))) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain('error sending request for url (https://proxy.test/[redacted]/v1/pets?token=[redacted])');
    expect(error.cause).toBeInstanceOf(TypeError);
    expect((error.cause as Error).message).toBe('error sending request for url (https://proxy.test/[redacted]/v1/pets?token=[redacted])');
    expect((error.cause as Error).cause).toMatchObject({ code: 'ECONNREFUSED', url: 'https://proxy.test/[redacted]/v1/pets?token=[redacted]' });
    expect(shown(error, lines, events)).not.toSatisfy((text: string) => holds(text, key));
  });

  it('echoed by a proxy after "=" or "/" (a debug page quoting "GET /v1/pets?api_key=KEY"): the error\'s message and body show [redacted] (before: only a key standing between spaces was found)', async () => {
    const body = JSON.stringify({ code: 'bad_gateway', message: `upstream refused GET /v1/pets?api_key=${encodeURIComponent(key)} and /keys/${key}/check`, status: 502 });
    const { client } = recorded(key, { baseUrl: 'https://proxy.test/v1', fetch: async () => new Response(body, { status: 502 }), maxRetries: 0 });
    const error = await run(client.listPets());
    expect((error as Error).message).toContain('upstream refused GET /v1/pets?api_key=[redacted] and /keys/[redacted]/check');
    expect(shown(error)).not.toSatisfy((text: string) => holds(text, key));
  });

  it('echoed in X-Request-Id (a proxy that names requests by their token): the debug line and the response event show [redacted], as the error\'s requestId does (before: the key)', async () => {
    const server = createReferenceServer({ apiKeys: { [key]: 'pro' } });
    const fetch = async (request: Request) => {
      const response = await server.fetch(request);
      const headers = new Headers(response.headers);
      headers.set('X-Request-Id', `req ${request.headers.get('Authorization')}`);
      return new Response(response.body, { status: response.status, headers });
    };
    const { client, lines, events } = recorded(key, { baseUrl: 'https://proxy.test/v1', fetch });
    await run(client.listPets());
    const error = await run(client.getPet(999_999));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).requestId).toBe('req Bearer [redacted]');
    expect(lines).toContainEqual(expect.stringContaining('request id req Bearer [redacted])'));
    expect(events).toContainEqual(expect.objectContaining({ event: 'response', status: 200, requestId: 'req Bearer [redacted]' }));
    expect(shown(error, lines, events)).not.toSatisfy((text: string) => holds(text, key));
  });

  it('in a deprecation notice whose Link quotes baseUrl: onDeprecation and the logger get [redacted] (before: the Link as sent, key included)', async () => {
    const server = createReferenceServer({ apiKeys: { [key]: 'pro' } });
    const baseUrl = `https://proxy.test/${encodeURIComponent(key)}/v1`;
    const fetch = async (request: Request) => {
      const response = await server.fetch(request);
      const headers = new Headers(response.headers);
      headers.set('Deprecation', '@1767225600');
      headers.set('Link', `<${baseUrl}/pets/search?token=${encodeURIComponent(key)}>; rel="successor-version"`);
      return new Response(response.body, { status: response.status, headers });
    };
    const notices: DeprecationNotice[] = [];
    const { client, lines } = recorded(key, { baseUrl, fetch, onDeprecation: (notice) => void notices.push(notice) });
    await run(client.listPets());
    expect(notices).toEqual([expect.objectContaining({ operation: 'listPets', link: '<https://proxy.test/[redacted]/v1/pets/search?token=[redacted]>; rel="successor-version"' })]);
    expect(notices[0]!.message).toContain('Successor: <https://proxy.test/[redacted]/v1/pets/search?token=[redacted]>');
    expect(shown(notices, lines)).not.toSatisfy((text: string) => holds(text, key));
  });
});

it('a fetch failure that does not quote the key keeps its cause as thrown, the same object', async () => {
  const thrown = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4010'), { code: 'ECONNREFUSED' }) });
  const client = new PetStoreClient({ apiKey: KEYS[0], baseUrl: 'https://proxy.test/v1', logLevel: 'off', maxRetries: 0, fetch: async () => Promise.reject(thrown) });
  const error = (await run(client.listPets({ token: KEYS[0] } as never))) as ConnectionError;
  expect(error).toBeInstanceOf(ConnectionError);
  expect(error.cause).toBe(thrown);
});

it('a fetch failure thrown as a string, as a plain object, or as an error that is its own cause, holding the key: the cause shows [redacted], and the call still ends in a ConnectionError', async () => {
  const cyclic = new Error(`proxy refused Bearer ${KEYS[0]}`);
  cyclic.cause = cyclic;
  const plain = { message: `proxy refused Bearer ${KEYS[0]}`, cause: { message: `Bearer ${KEYS[0]}` } };
  for (const thrown of [`proxy refused Bearer ${KEYS[0]}`, cyclic, plain]) {
    const client = new PetStoreClient({ apiKey: KEYS[0], baseUrl: 'https://proxy.test/v1', logLevel: 'off', maxRetries: 0, fetch: async () => Promise.reject(thrown) });
    const error = (await run(client.listPets())) as ConnectionError;
    expect(error).toBeInstanceOf(ConnectionError);
    expect(inspect(error.cause, { depth: 8 })).toContain('proxy refused Bearer [redacted]');
    expect(inspect(error, { depth: 8 })).not.toContain(KEYS[0]);
  }
});

it('a key that stands inside a longer token is still left as it is, in URLs too (a key "k" leaves /v1/pets?kind=kk alone)', async () => {
  const client = new PetStoreClient({ apiKey: 'k', baseUrl: 'https://k.test/v1', logLevel: 'off', maxRetries: 0, fetch: async () => new Response('', { status: 404 }) });
  const error = (await run(client.listPets({ kind: 'kk', key: 'k' } as never))) as NotFoundError;
  expect(error.url).toBe('https://k.test/v1/pets?kind=kk&key=[redacted]');
});
