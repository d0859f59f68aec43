import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { AbortError, ApiError, NotFoundError, PetStoreError, ValidationError, type Logger } from '@animal-store/sdk';
import { run, settle, START, thrown, useReferenceServer } from './harness.js';

const { server, client } = useReferenceServer();

/** A logger that keeps each line with its level. */
function recorder() {
  const lines: { level: string; text: string }[] = [];
  const logger = Object.fromEntries(
    (['debug', 'info', 'warn', 'error'] as const).map((level) => [level, (text: string) => void lines.push({ level, text })]),
  ) as unknown as Logger;
  return { lines, logger };
}

/** The reference server's answers, with an `X-Request-Id` on each. */
const withRequestIds = async (request: Request) => {
  const response = await server.fetch(request);
  const headers = new Headers(response.headers);
  headers.set('X-Request-Id', 'req-123');
  return new Response(response.body, { status: response.status, headers });
};

afterEach(() => vi.unstubAllEnvs());

describe('logs', () => {
  it('logLevel debug: one line per attempt with operation, method, URL, status, duration and attempt number', async () => {
    const { lines, logger } = recorder();
    await run(client({ logLevel: 'debug', logger }).listPets({ limit: 2 }));
    expect(lines).toEqual([
      { level: 'debug', text: expect.stringMatching(/^listPets GET https:\/\/petstore\.test\/v1\/pets\?limit=2 → 200 in \d+\.\d ms \(attempt 1, request id [0-9a-f]{16}\)$/) },
    ]);
  });

  it('logLevel debug: a rate-limit wait is logged with why, how long and until when; info logs the retry', async () => {
    const { lines, logger } = recorder();
    const ent = client({ apiKey: 'key-ent', logLevel: 'debug', logger, throttle: false });
    for (let i = 0; i < 6; i++) await run(ent.listPets({ limit: 1 }));
    expect(lines.filter((l) => l.level === 'info').map((l) => l.text)).toEqual([
      expect.stringMatching(/^listPets \(GET \/pets\): retry 1 of 2 in \d+ ms after RateLimitError: /),
    ]);
    expect(lines.find((l) => l.text.includes('waiting'))?.text).toMatch(/^listPets \(GET \/pets\): waiting \d+ ms until 2026-06-01T00:01:00\.\d+Z \(a 429 asked every client to wait\)\.$/);
  });

  it('logLevel debug: a wait for a spent budget\'s reset is logged as such, not as a 429\'s', async () => {
    const { lines, logger } = recorder();
    const ent = client({ apiKey: 'key-ent', logLevel: 'debug', logger });
    for (let i = 0; i < 6; i++) await run(ent.listPets({ limit: 1 }));
    expect(lines.filter((l) => l.text.includes('waiting')).map((l) => l.text)).toEqual([
      expect.stringMatching(/^listPets \(GET \/pets\): waiting \d+ ms until 2026-06-01T00:01:00\.\d+Z \(the rate-limit budget is spent until its reset\)\.$/),
    ]);
  });

  // Math.random is fixed: a full-jitter backoff drawn as 0 ms (one draw in 500) has no "in … ms".
  it.each([
    [0.5, 'retry 1 of 2 in 250 ms after'],
    [0, 'retry 1 of 2 after'],
  ])('a retry\'s info line names the call once, then says what failed, and its delay when it has one (Math.random %s)', async (random, says) => {
    const { lines, logger } = recorder();
    const spy = vi.spyOn(Math, 'random').mockReturnValue(random);
    onTestFinished(() => spy.mockRestore());
    let sent = 0;
    const fetch = async (request: Request) =>
      ++sent === 1 ? Response.json({ code: 'service_unavailable', message: 'Down for a moment.', status: 503 }, { status: 503 }) : server.fetch(request);
    await run(client({ fetch, logLevel: 'info', logger }).listPets({ limit: 1 }));
    expect(lines).toEqual([{ level: 'info', text: `listPets (GET /pets): ${says} InternalServerError: Down for a moment.` }]);
  });

  it('logLevel debug: an attempt that fails without a response has no line of its own; its retry\'s info line tells of it, the next attempt\'s debug line follows', async () => {
    const { lines, logger } = recorder();
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5); // a retry 250 ms on: the probe's backoff has 250 ms left
    onTestFinished(() => random.mockRestore());
    let sent = 0;
    const fetch = async (request: Request) => {
      if (++sent === 1) throw new TypeError('fetch failed');
      return server.fetch(request);
    };
    await run(client({ fetch, logLevel: 'debug', logger }).listPets({ limit: 1 }));
    expect(lines).toEqual([
      { level: 'info', text: expect.stringMatching(/^listPets \(GET \/pets\): retry 1 of 2 in 250 ms after ConnectionError: .*fetch failed/) },
      // The failed probe may have reached the service unanswered: the next one waits half a second.
      // (Told before as a wait of up to 60 s for requests in flight.)
      { level: 'debug', text: expect.stringMatching(/^listPets \(GET \/pets\): waiting 250 ms until \S+Z \(the last requests probing the unknown rate-limit budget went unanswered: the next probe is held back\)\.$/) },
      { level: 'debug', text: expect.stringMatching(/^listPets GET \S+ → 200 in \d+\.\d ms \(attempt 2, /) },
    ]);
  });

  it('the default level is warn: a successful call logs nothing', async () => {
    const { lines, logger } = recorder();
    await run(client({ logger }).listPets());
    expect(lines).toEqual([]);
  });

  it('PETSTORE_LOG sets the level where there is an environment, in any case (DEBUG is debug)', async () => {
    for (const value of ['debug', 'DEBUG', ' Debug ']) {
      const { lines, logger } = recorder();
      vi.stubEnv('PETSTORE_LOG', value);
      await run(client({ logger }).listPets());
      expect(lines).toEqual([{ level: 'debug', text: expect.stringMatching(/^listPets GET .* → 200/) }]);
    }
  });

  it('a PETSTORE_LOG that is no level is warned about and the default level is used: a variable for logging does not stop the app (before: a ValidationError from the constructor)', async () => {
    const { lines, logger } = recorder();
    vi.stubEnv('PETSTORE_LOG', 'loud');
    await run(client({ logger }).listPets());
    expect(lines).toEqual([
      { level: 'warn', text: 'The PETSTORE_LOG environment variable is "loud", which is not one of off, error, warn, info, debug: logging at warn, the default.' },
    ]);
    // The option itself, set in code, is still checked.
    expect(() => client({ logger, logLevel: 'loud' as never })).toThrow(/logLevel must be one of "off", "error", "warn", "info", "debug"/);
  });

  it('a PETSTORE_LOG of thousands of characters is quoted cut short in its warning', async () => {
    const { lines, logger } = recorder();
    vi.stubEnv('PETSTORE_LOG', 'x'.repeat(5_000));
    await run(client({ logger }).listPets());
    expect(lines).toEqual([{ level: 'warn', text: `The PETSTORE_LOG environment variable is "${'x'.repeat(40)}…", which is not one of off, error, warn, info, debug: logging at warn, the default.` }]);
  });

  it('a logLevel set in code leaves PETSTORE_LOG unread: one that is no level is not warned about', async () => {
    const { lines, logger } = recorder();
    vi.stubEnv('PETSTORE_LOG', 'loud');
    await run(client({ logger, logLevel: 'info' }).listPets());
    expect(lines).toEqual([]);
  });

  it.each(['warn', 'error', 'off'] as const)('logLevel %s logs nothing below it: a retry after a 503 makes no line', async (logLevel) => {
    const { lines, logger } = recorder();
    let sent = 0;
    const fetch = async (request: Request) =>
      ++sent === 1 ? Response.json({ code: 'service_unavailable', message: 'Down for a moment.', status: 503 }, { status: 503 }) : server.fetch(request);
    expect(await run(client({ fetch, logLevel, logger }).listPets({ limit: 1 }))).toHaveLength(1);
    expect(sent).toBe(2);
    expect(lines).toEqual([]);
  });

  it('a deprecation reaches a logger of the user\'s own at warn, in addition to the warning', async () => {
    const { lines, logger } = recorder();
    const onDeprecation = vi.fn();
    await run(client({ logger, onDeprecation }).getPet(1));
    expect(onDeprecation).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([{ level: 'warn', text: expect.stringMatching(/getPet\(\) is deprecated/) }]);
  });
  it('a fetch of the user\'s own that fails quoting the key: the retry\'s log line, its event and the error message show [redacted], never the key', async () => {
    const { lines, logger } = recorder();
    const fetch = async (request: Request) => {
      throw new TypeError(`proxy refused ${request.headers.get('Authorization')}`);
    };
    const c = client({ fetch, logger, logLevel: 'debug', maxRetries: 1 });
    const retried: string[] = [];
    c.on('retry', ({ error }) => void retried.push(error.message));
    const error = (await run(c.listPets())) as Error;
    expect(error.message).toContain('proxy refused Bearer [redacted]');
    expect(retried).toEqual([expect.stringContaining('proxy refused Bearer [redacted]')]);
    expect(JSON.stringify(lines)).toContain('[redacted]');
    expect(JSON.stringify([lines, retried, error.message])).not.toContain('key-pro');
  });

  it('a logger that throws is reported and fails no call: createPet resolves, and the pet is created once', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    const logger = { ...recorder().logger, debug: () => { throw new Error('logger bug'); } };
    try {
      expect(await run(client({ logger, logLevel: 'debug' }).createPet({ name: 'Rex', categoryId: 1 }))).toMatchObject({ name: 'Rex' });
    } finally {
      vi.unstubAllGlobals();
    }
    expect(reported).toEqual([new Error('logger bug')]);
    expect(server.inspect().petCount).toBe(11);
  });

  it('a logger method that rejects (async) is reported like one that throws, never an unhandled rejection, and fails no call', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    const logger = { ...recorder().logger, debug: async () => { throw new Error('async logger bug'); } };
    try {
      expect(await run(client({ logger, logLevel: 'debug' }).createPet({ name: 'Rex', categoryId: 1 }))).toMatchObject({ name: 'Rex' });
      await vi.advanceTimersByTimeAsync(0);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(reported).toEqual([new Error('async logger bug')]);
    expect(server.inspect().petCount).toBe(11);
  });
});

describe('events', () => {
  it('request, response, retry and wait events carry plain objects without the key', async () => {
    const ent = client({ apiKey: 'key-ent', throttle: false });
    const seen: [string, unknown][] = [];
    for (const event of ['request', 'response', 'retry', 'wait'] as const) ent.on(event, (payload) => void seen.push([event, payload]));
    for (let i = 0; i < 6; i++) await run(ent.listPets({ limit: 1 }));
    const names = seen.map(([event]) => event);
    expect(names.slice(0, 2)).toEqual(['request', 'response']);
    expect(names).toEqual(expect.arrayContaining(['retry', 'wait']));
    expect(seen[1]![1]).toEqual({
      operation: 'listPets',
      method: 'GET',
      url: 'https://petstore.test/v1/pets?limit=1',
      attempt: 1,
      status: 200,
      durationMs: expect.any(Number),
      requestId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(seen.find(([event]) => event === 'wait')![1]).toMatchObject({ reason: 'blocked', waitMs: expect.any(Number), until: expect.any(Date) });
    expect(JSON.stringify(seen)).not.toContain('key-ent');
  });

  // A bare 429 whose Error record announces a ban is observed twice (its head, then its body),
  // each drawing a backoff (Math.random 0.8, then 0.2): the longer one, the first, binds.
  it.each([
    ['', '{}', [0.5, 0.5], 250],
    [' whose Error record announces a ban', '{"code":"api_key_banned","message":"banned","status":429}', [0.8, 0.2], 400],
  ])('after a bare 429 (no Retry-After)%s, the retry event\'s delayMs is the backoff every call then waits, as its wait event says (before: 0)', async (_, body, draws, delayMs) => {
    let sent = 0;
    const fetch = async (request: Request) => (sent++ === 0 ? new Response(body, { status: 429 }) : server.fetch(request));
    const c = client({ fetch });
    const seen: [string, number][] = [];
    c.on('retry', ({ delayMs }) => void seen.push(['retry', delayMs]));
    c.on('wait', ({ waitMs }) => void seen.push(['wait', waitMs]));
    vi.spyOn(Math, 'random').mockReturnValueOnce(draws[0]!).mockReturnValueOnce(draws[1]!).mockReturnValue(0.5);
    try {
      expect(await run(c.listPets({ limit: 1 }))).toHaveLength(1);
    } finally {
      vi.restoreAllMocks();
    }
    expect(seen).toEqual([
      ['retry', delayMs],
      ['wait', delayMs],
    ]);
  });

  it('calls held back behind the probe of an unknown budget emit a busy wait event and log it at debug', async () => {
    const { lines, logger } = recorder();
    const c = client({ logger, logLevel: 'debug', timeout: 10_000, maxRetryDelay: 0 });
    const waits: unknown[] = [];
    c.on('wait', (payload) => void waits.push(payload));
    await run(Promise.all([c.listPets({ limit: 1 }), c.listPets({ limit: 2 })]));
    expect(waits).toEqual([
      expect.objectContaining({ operation: 'listPets', url: expect.stringMatching(/limit=2$/), reason: 'busy', waitMs: 10_000, until: new Date(START + 10_000) }),
    ]);
    expect(lines).toContainEqual({ level: 'debug', text: expect.stringMatching(/^listPets \(GET \/pets\): waiting up to 10000 ms for the answers of requests in flight \(they may use up the rate-limit budget, or are probing it\)\.$/) });
  });

  it('an event the client does not emit (a misspelt one, from JavaScript) or a listener that is not a function is a ValidationError whose issue names the argument', () => {
    const c = client();
    expect(() => c.on('responses' as never, () => {})).toThrow(ValidationError);
    expect(() => c.on('responses' as never, () => {})).toThrow(
      expect.objectContaining({
        message: 'client.on(): unknown event "responses" (did you mean "response"?). The events are request, response, retry, wait.',
        issues: [expect.objectContaining({ path: ['event'] })],
      }),
    );
    expect(() => c.on('error' as never, () => {})).toThrow(expect.objectContaining({ message: 'client.on(): unknown event "error". The events are request, response, retry, wait.' }));
    // A name pasted from elsewhere is quoted cut to 40 characters, marked as cut.
    expect(() => c.on('x'.repeat(1000) as never, () => {})).toThrow(expect.objectContaining({ message: `client.on(): unknown event "${'x'.repeat(40)}…". The events are request, response, retry, wait.` }));
    // The API key pasted as the event's name is not quoted back, whole or cut.
    const long = `sk-${'a1'.repeat(30)}`;
    for (const key of ['key-pro', long]) {
      const error = thrown(() => client({ apiKey: key }).on(key as never, () => {}));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe('client.on(): unknown event "[redacted]". The events are request, response, retry, wait.');
    }
    // From JavaScript, a name that is no string: an object without a prototype cannot even be turned into text.
    for (const [event, type] of [[Object.create(null), 'object'], [5, 'number'], [Symbol('retry'), 'symbol']] as const) {
      const error = thrown(() => c.on(event as never, () => {}));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe(`client.on(): unknown event (not a string: ${type}). The events are request, response, retry, wait.`);
    }
    expect(() => c.on('response', 'log' as never)).toThrow(
      expect.objectContaining({ message: 'client.on("response"): the listener must be a function.', issues: [expect.objectContaining({ path: ['listener'] })] }),
    );
  });

  it('a listener that throws is reported and changes nothing; the listener after it still runs; off() stops it', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    const c = client();
    const later = vi.fn();
    const off = c.on('response', () => {
      throw new Error('listener bug');
    });
    c.on('response', later);
    expect(await run(c.listPets({ limit: 1 }))).toHaveLength(1);
    expect(later).toHaveBeenCalledTimes(1);
    expect(reported).toEqual([new Error('listener bug')]);
    off();
    await run(c.listPets({ limit: 1 }));
    expect(reported).toHaveLength(1);
    vi.unstubAllGlobals();
  });

  it('in Node, which has no reportError, a listener that throws is rethrown in a microtask, as an uncaught error is, and the call still succeeds', async () => {
    expect(globalThis.reportError).toBeUndefined();
    const rethrown: unknown[] = [];
    const queue = globalThis.queueMicrotask;
    vi.stubGlobal('queueMicrotask', (task: () => void) =>
      queue(() => {
        try {
          task();
        } catch (error) {
          rethrown.push(error);
        }
      }),
    );
    try {
      const c = client();
      c.on('response', () => {
        throw new Error('listener bug');
      });
      expect(await run(c.listPets({ limit: 1 }))).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(0);
      expect(rethrown).toEqual([new Error('listener bug')]);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('an async listener or subscriber that rejects is reported like one that throws, never an unhandled rejection', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    try {
      const c = client();
      c.on('response', async () => {
        throw new Error('async listener bug');
      });
      c.rateLimit.subscribe(async () => {
        throw new Error('async view bug');
      });
      expect(await run(c.createPet({ name: 'Rex', categoryId: 1 }))).toMatchObject({ name: 'Rex' });
      await vi.advanceTimersByTimeAsync(0);
      expect(reported).toEqual(expect.arrayContaining([new Error('async listener bug'), new Error('async view bug')]));
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('a rateLimit.subscribe listener that throws does not fail createPet, and later listeners still run', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    const c = client();
    c.rateLimit.subscribe(() => {
      throw new Error('view bug');
    });
    const later = vi.fn();
    c.rateLimit.subscribe(later);
    expect(await run(c.createPet({ name: 'Rex', categoryId: 1 }))).toMatchObject({ name: 'Rex' });
    expect(later).toHaveBeenCalled();
    expect(reported[0]).toEqual(new Error('view bug'));
    expect(server.inspect().petCount).toBe(11);
    vi.unstubAllGlobals();
  });
});

describe('request ids and messages', () => {
  it('an ApiError names the call and carries method, url and the request id, also in its message', async () => {
    const error = await run(client({ fetch: withRequestIds }).getPet(999, {}));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ method: 'GET', url: 'https://petstore.test/v1/pets/999', requestId: 'req-123', status: 404 });
    expect((error as Error).message).toMatch(/^getPet \(GET \/pets\/999\): No pet has id 999\. \(request id req-123\)$/);
  });

  it('withResponse results carry the request id', async () => {
    const { requestId } = (await run(client({ fetch: withRequestIds }).withResponse.listPets())) as { requestId: string };
    expect(requestId).toBe('req-123');
  });

  it('JSON.stringify(error) shows name, message, code and status', async () => {
    const error = (await run(client({ apiKey: 'not-a-key' }).listPets())) as ApiError;
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'AuthenticationError',
      message: error.message,
      code: 'invalid_api_key',
      status: 401,
    });
  });

  it('a ValidationError made without a message (by code of the user\'s own) builds one from its issues: each names its field, one at the top names the value, joined by "; "', () => {
    const issues = [
      { code: 'custom' as const, path: ['name'], message: 'is required', input: undefined },
      { code: 'custom' as const, path: [], message: 'must be an object', input: undefined },
    ];
    expect(new ValidationError({ issues }).message).toBe('name is required; value must be an object');
  });

  it('every request names the SDK and its version (package.json\'s) in User-Agent (Node), and accepts JSON', async () => {
    const seen: (string | null)[] = [];
    await run(client({ fetch: (request) => (seen.push(request.headers.get('User-Agent'), request.headers.get('Accept')), server.fetch(request)) }).listPets());
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(seen[0]).toBe(`@animal-store/sdk/${version} (node/${process.versions.node})`);
    expect(seen[1]).toBe('application/json');
  });

  it("a User-Agent or Accept in the client's headers option is sent as given, as a call's is (before: the SDK's own replaced it without a word)", async () => {
    const seen: [string | null, string | null][] = [];
    const headers = { 'User-Agent': 'my-app/1.0', Accept: 'application/json, */*' };
    const named = client({ headers, fetch: (request) => (seen.push([request.headers.get('User-Agent'), request.headers.get('Accept')]), server.fetch(request)) });
    await run(named.listPets());
    await run(named.listPets(undefined, { headers: { 'User-Agent': 'my-app/1.0 (call)' } }));
    expect(seen).toEqual([
      ['my-app/1.0', 'application/json, */*'],
      ['my-app/1.0 (call)', 'application/json, */*'],
    ]);
  });

  it('in workerd, whose process claims a Node version, the User-Agent names workerd', async () => {
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    try {
      const seen: (string | null)[] = [];
      await run(client({ fetch: (request) => (seen.push(request.headers.get('User-Agent')), server.fetch(request)) }).listPets());
      expect(seen[0]).toMatch(/^@animal-store\/sdk\/\S+ \(workerd\)$/);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe('aborts and deadlines', () => {
  it('an abort takes effect at once even when the fetch ignores the signal (an in-process server)', async () => {
    const never = () => new Promise<Response>(() => {});
    const controller = new AbortController();
    const call = client({ fetch: never }).listPets(undefined, { signal: controller.signal });
    const reason = new Error('user gave up');
    setTimeout(() => controller.abort(reason), 50);
    const outcome = await settle(call, { stepMs: 10 });
    expect(outcome).toEqual({ status: 'rejected', reason: expect.any(AbortError) });
    expect((outcome as { reason: AbortError }).reason.cause).toBe(reason);
    expect(Date.now() - START).toBe(50);
  });

  it('a fetch that never answers ends in TimeoutError at the attempt\'s deadline, and only PetStoreErrors leave the client', async () => {
    const never = () => new Promise<Response>(() => {});
    const error = await run(client({ fetch: never, timeout: 1_000, maxRetries: 0 }).createPet({ name: 'Rex', categoryId: 1 }));
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ name: 'TimeoutError', mayHaveSucceeded: true });
    expect((error as Error).message).toMatch(/The pet may have been created/);
    expect(Date.now() - START).toBe(1_000);
  });
});
