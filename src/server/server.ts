import {
  check,
  GET_PET_SUNSET,
  LIST_LIMIT,
  ListPetsQuerySchema,
  PET_STATUSES,
} from '../schemas/index.js';
import { createFaultPlanner, InjectedFault, type FaultPlan } from './faults.js';
import { admin, createClock, forcedReply, forcedStatus, JOURNAL_SIZE, keyLabel, newRequestId, type AdminTarget, type RequestRecord, type ServerClock } from './fixture.js';
import { empty, error, fromRequest, json, jsonText, readText, toResponse, withRateLimit, type ErrorCode, type Incoming, type Reply } from './http.js';
import { openApiDocument } from './openapi.js';
import { PLANS, resolveServerOptions, type ReferenceServerOptions } from './options.js';
import { RateLimiter, type Admission, type KeyStats } from './rate-limiter.js';
import { ServerNewPetSchema } from './rules.js';
import { PetStore } from './store.js';

/** What {@link ReferenceServer.inspect} reports: the store's size and each key's counters. */
export interface ServerInspection {
  /** How many pets the store holds. */
  petCount: number;
  /** Counters per API key that sent at least one authenticated request. */
  keys: Record<string, KeyStats>;
}

/** An in-memory implementation of the whole Animal Store API, as a web-standard `fetch` handler. */
export interface ReferenceServer {
  /** Answers one request. It never throws and never answers 5xx, unless faults are injected. */
  fetch(request: Request): Promise<Response>;
  /** Restores the seed pets, forgets every rate-limit window, ban and counter, and clears the journal. The clock stays. */
  reset(): void;
  /** The store's size and per-key counters, for tests that check a client's manners. */
  inspect(): ServerInspection;
  /** The server's clock: move it to skip a minute window, a ban or the getPet sunset without waiting. */
  readonly clock: ServerClock;
  /** The journal: the newest requests answered (at most 1,000), oldest first. */
  requests(): RequestRecord[];
  /** Empties the journal. */
  clearRequests(): void;
}

/** Per request: what the journal and the logs learn while it is answered. Internal. */
export interface Meta {
  key?: string;
  inside: boolean;
  bannedUntil?: number;
}

/** `Deprecation` (RFC 9745) date of `GET /pets/{petId}`: when API version 1.0.0 marked it. */
export const GET_PET_DEPRECATED_AT = new Date(Date.UTC(2026, 0, 1));

const SUNSET_HTTP_DATE = GET_PET_SUNSET.toUTCString();
// The SDK names itself in browsers with X-Animal-Store-Client; clients may send Prefer to force answers.
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Animal-Store-Client, Prefer';

type Handler = (ctx: Context) => Reply | Promise<Reply>;
interface Context {
  request: Incoming;
  url: URL;
  /** The path below `/v1`, e.g. `/pets/3`. */
  base: string;
  params: string[];
  now: number;
}
interface Route {
  pattern: RegExp;
  methods: Record<string, Handler>;
  /** Answered without an API key. */
  public?: boolean;
}

/** The server below `fetch`, for the node:http adapter. Internal. */
export interface ServerCore {
  /**
   * Answers a request with a reply, not a `Response`: the node:http adapter writes it straight
   * to the socket, as Hono's node-server does with its lightweight responses. Synchronous
   * unless the request has a body to read or a fault delays it.
   */
  serve(request: Incoming, meta?: Meta): Reply | Promise<Reply>;
  /**
   * The answer to a request that never became one (HTTP the transport could not parse): an Error
   * record with the rate-limit headers of an anonymous request, as for a 401.
   */
  refuse(status: number, code: ErrorCode, message: string): Reply;
}

const cores = new WeakMap<ReferenceServer, ServerCore>();

/** The core of a server made by {@link createReferenceServer}. Internal. */
export function coreOf(server: ReferenceServer): ServerCore | undefined {
  return cores.get(server);
}

function constantTimeEqual(a: string, b: string): boolean {
  // Compare every code unit of the longer input so the time taken says nothing about the key.
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/**
 * Creates an in-memory reference server: the whole Animal Store API behind one
 * `fetch(Request): Promise<Response>`, with no Node-only imports, so it runs in Node, in a
 * browser and inside msw alike.
 *
 * @example
 * ```ts
 * import { createReferenceServer } from '@animal-store/sdk/server';
 *
 * const server = createReferenceServer({ apiKeys: { 'my-key': 'pro' }, pets: 3 });
 * const response = await server.fetch(
 *   new Request('http://localhost/v1/pets?limit=2', { headers: { Authorization: 'Bearer my-key' } }),
 * );
 * console.log(response.status, await response.json());
 * ```
 */
export function createReferenceServer(options: ReferenceServerOptions = {}): ReferenceServer {
  const config = resolveServerOptions(options);
  const store = new PetStore(config.pets);
  const limiter = new RateLimiter(config.apiKeys, config.banThreshold, config.banDurationMs);
  const planFault = createFaultPlanner(config.faults);
  const keys = [...config.apiKeys.keys()];
  /** Sets the rate-limit headers the server is configured to send, and `Date`. */
  const clock = createClock(config.now);
  const journal: RequestRecord[] = [];
  const limited = (reply: Reply, admission: Admission) => withRateLimit(reply, admission, config.rateLimitHeaders, clock.ms());
  /** What a request without a (valid) key is told: an untouched Free-plan minute. */
  const anonymous = (now: number) => RateLimiter.anonymous(now, PLANS.free.perMinute);

  const findKey = (token: string): string | undefined => {
    let found: string | undefined;
    for (const key of keys) if (constantTimeEqual(token, key)) found = key;
    return found;
  };

  const routes: Route[] = [
    { pattern: /^\/pets$/, methods: { GET: listPets, POST: createPet } },
    { pattern: /^\/pets\/([^/]*)$/, methods: { GET: getPet } },
    { pattern: /^\/store\/orders$/, methods: { GET: () => json(config.orders) } },
    { pattern: /^\/openapi\.json$/, methods: { GET: () => json(openApiDocument()) }, public: true },
  ];

  function listPets({ url }: Context): Reply {
    const raw: Record<string, unknown> = {};
    for (const name of ['limit', 'status'] as const) {
      const values = url.searchParams.getAll(name);
      if (values.length > 1) return error(400, 'invalid_query', `The query parameter ${name} is given ${values.length} times; give it once.`);
      if (values.length === 1) raw[name] = values[0];
    }
    if (raw.limit !== undefined) {
      const text = String(raw.limit);
      // Plain decimals only: `0x10`, `1e2` and ` 5` are not page sizes anyone meant.
      raw.limit = /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
    }
    const query = check(ListPetsQuerySchema, raw, 'query');
    if (!query.success) {
      return error(
        400,
        'invalid_query',
        `${query.message}. limit is an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}; status is one of ${PET_STATUSES.join(', ')}.`,
      );
    }
    return jsonText(store.listJson(query.data.limit ?? LIST_LIMIT.default, query.data.status));
  }

  async function createPet({ request, url }: Context): Promise<Reply> {
    const type = request.header('Content-Type');
    const mediaType = type?.split(';')[0]?.trim().toLowerCase() ?? '';
    if (mediaType !== 'application/json' && !/^application\/[^/]+\+json$/.test(mediaType)) {
      return error(
        415,
        'unsupported_media_type',
        `The body must be JSON, sent with Content-Type: application/json${type ? `; got "${type.slice(0, 100)}"` : ', which is missing'}.`,
      );
    }
    const read = await readText(request);
    if ('error' in read) return read.error;
    let body: unknown;
    try {
      body = JSON.parse(read.text);
    } catch {
      return error(400, 'invalid_json', 'The request body is not valid JSON. Send a NewPet object such as {"name":"Rex","categoryId":1}.');
    }
    const pet = check(ServerNewPetSchema, body, 'body');
    if (!pet.success) return error(400, 'invalid_body', `Invalid NewPet: ${pet.message}.`);
    const created = store.add(pet.data);
    return json(created, 201, { Location: new URL(`${created.id}`, `${url.origin}${url.pathname}/`).href });
  }

  function getPet({ params, url, now, base }: Context): Reply {
    const prefix = url.pathname.slice(0, url.pathname.length - base.length);
    const headers = {
      Deprecation: `@${Math.floor(GET_PET_DEPRECATED_AT.getTime() / 1000)}`,
      Sunset: SUNSET_HTTP_DATE,
      Link: `<${url.origin}${prefix}/pets>; rel="successor-version"`,
    };
    if (now >= GET_PET_SUNSET.getTime()) {
      return error(410, 'gone', `GET /pets/{petId} was removed on ${SUNSET_HTTP_DATE}. Use GET /pets with the status filter.`, headers);
    }
    const raw = params[0] ?? '';
    // int64 ids: 1 to 2^63 - 1. Only safe integers can exist in this store.
    if (!/^[1-9]\d{0,18}$/.test(raw) || BigInt(raw) > 9223372036854775807n) {
      return error(400, 'invalid_pet_id', `petId must be a positive integer; got "${decodeSafe(raw).slice(0, 40)}".`, headers);
    }
    const pet = Number.isSafeInteger(Number(raw)) ? store.get(Number(raw)) : undefined;
    if (!pet) return error(404, 'not_found', `No pet has id ${raw}.`, headers);
    return json(pet, 200, headers);
  }

  /** Answers synchronously where it can: only reading a body waits (see bench/server-throughput.mjs). */
  function handle(request: Incoming, meta: Meta): Reply | Promise<Reply> {
    const now = clock.ms();
    const { url } = request;
    const method = request.method.toUpperCase();
    const segments = url.pathname.split('/');
    const v1 = segments.indexOf('v1');
    const base = v1 < 0 ? undefined : '/' + segments.slice(v1 + 1).join('/');
    const path = base && base.length > 1 && base.endsWith('/') ? base.slice(0, -1) : base;
    const route = path === undefined ? undefined : routes.find((r) => r.pattern.test(path));

    if (method === 'OPTIONS') {
      const allow = route ? [...Object.keys(route.methods), 'HEAD', 'OPTIONS'].join(', ') : 'GET, HEAD, POST, OPTIONS';
      return limited(
        empty(204, {
          Allow: allow,
          'Access-Control-Allow-Methods': allow,
          'Access-Control-Allow-Headers': request.header('Access-Control-Request-Headers') ?? ALLOWED_HEADERS,
          'Access-Control-Max-Age': '600',
        }),
        anonymous(now),
      );
    }

    // Outside /v1 there is no API to authenticate for: say where it is.
    if (path === undefined) {
      return limited(error(404, 'not_found', `No route ${url.pathname.slice(0, 200)}. The API is under /v1: /v1/pets, /v1/pets/{petId} and /v1/store/orders.`), anonymous(now));
    }

    let admission: Admission;
    if (route?.public) {
      admission = anonymous(now);
    } else {
      const authorization = request.header('Authorization');
      const match = authorization?.match(/^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i);
      const key = match ? findKey(match[1]!) : undefined;
      if (!key) {
        const [code, message] = !authorization
          ? (['missing_api_key', 'No API key was sent. Send it as "Authorization: Bearer <API_KEY>".'] as const)
          : !match
            ? (['invalid_api_key', 'The Authorization header is malformed. Send "Authorization: Bearer <API_KEY>".'] as const)
            : (['invalid_api_key', 'The API key is not valid. Check the key, or ask for a new one.'] as const);
        return limited(error(401, code, message, { 'WWW-Authenticate': 'Bearer realm="petstore"' }), anonymous(now));
      }
      meta.key = key;
      admission = limiter.admit(key, now);
      meta.inside = admission.inside ?? false;
      if (admission.bannedNow) meta.bannedUntil = limiter.bannedUntil(key);
      if (admission.refused === 'api_key_banned') {
        return limited(
          error(429, 'api_key_banned', `This API key is temporarily banned for sending requests while told to wait. Retry after ${admission.retryAfter} s, and honour Retry-After.`),
          admission,
        );
      }
      if (admission.refused) {
        return limited(
          error(429, 'rate_limited', `Rate limit of ${admission.limit} requests exceeded. Retry after ${admission.retryAfter} s; sending sooner may get the key banned.`),
          admission,
        );
      }
    }

    if (!route || path === undefined) {
      return limited(error(404, 'not_found', `No route ${url.pathname}. The API's paths are /v1/pets, /v1/pets/{petId} and /v1/store/orders.`), admission);
    }
    const handler = route.methods[method === 'HEAD' ? 'GET' : method];
    if (!handler || (method === 'HEAD' && !route.methods.GET)) {
      const allow = [...Object.keys(route.methods), ...(route.methods.GET ? ['HEAD'] : []), 'OPTIONS'].join(', ');
      return limited(error(405, 'method_not_allowed', `${method.slice(0, 20)} is not allowed on ${path}. Allowed: ${allow}.`, { Allow: allow }), admission);
    }
    const reply = handler({ request, url, base: path, params: path.match(route.pattern)!.slice(1), now });
    return reply instanceof Promise ? reply.then((r) => limited(r, admission)) : limited(reply, admission);
  }

  function answer(request: Incoming, meta: Meta): Reply | Promise<Reply> {
    // HEAD never has content (RFC 9110 9.3.2), errors included: in-process and through msw no
    // network layer drops it for us, as node:http does.
    const head = request.method.toUpperCase() === 'HEAD';
    const finish = (reply: Reply) => {
      if (head) reply.body = null;
      return reply;
    };
    // A safety net only: no known input reaches it (the fuzz suite checks), and a 500 is still
    // a valid Error record rather than a thrown exception.
    const failed = () =>
      finish(error(500, 'internal_error', 'The reference server failed unexpectedly. Please report this with the request that caused it.'));
    let reply: Reply | Promise<Reply>;
    try {
      reply = handle(request, meta);
    } catch {
      return failed();
    }
    return reply instanceof Promise ? reply.then(finish, failed) : finish(reply);
  }

  /** Answers one request, with a fault drawn first when faults are injected. */
  /**
   * Answers one request, with a fault drawn first when faults are injected: the admin API when it
   * is on, a forced answer (`Prefer: code=N`), or the API. Every answer gets a request id, and
   * every answer of the API a line in the journal.
   */
  function serve(request: Incoming, meta: Meta = { inside: false }): Reply | Promise<Reply> {
    const id = newRequestId();
    const stamp = (reply: Reply) => {
      reply.headers['X-Request-Id'] = id;
      return reply;
    };
    if (config.admin && request.url.pathname.startsWith('/_admin/')) return admin(request, adminTarget).then(stamp);
    const record = (reply: Reply) => {
      if (journal.push({
        time: new Date(clock.ms()).toISOString(),
        method: request.method,
        path: request.url.pathname + request.url.search,
        status: reply.status,
        code: reply.code,
        requestId: id,
        key: meta.key === undefined ? null : keyLabel(meta.key),
        insideRetryAfter: meta.inside,
      }) > JOURNAL_SIZE) journal.shift();
      return stamp(reply);
    };
    const forced = forcedStatus(request);
    if (forced !== undefined && request.method !== 'OPTIONS') return record(forcedAnswer(forced));
    const fault = request.method === 'OPTIONS' || /\/openapi\.json$/.test(request.url.pathname) ? undefined : planFault();
    const reply = fault ? faulty(request, fault, meta) : answer(request, meta);
    return reply instanceof Promise ? reply.then(record) : record(reply);
  }

  /** `Prefer: code=N`: that status, with the headers it carries, counting and changing nothing. */
  function forcedAnswer(status: number): Reply {
    const now = clock.ms();
    const window = anonymous(now);
    if (status !== 429) return limited(forcedReply(status), window);
    return limited(forcedReply(429), { ...window, remaining: 0, retryAfter: Math.max(1, window.reset - Math.floor(now / 1000)) });
  }

  async function faulty(request: Incoming, fault: FaultPlan, meta: Meta): Promise<Reply> {
    switch (fault.kind) {
      case 'latency': {
        const ms = config.faults?.latencyMs ?? 200;
        await new Promise((resolve) => setTimeout(resolve, ms));
        return answer(request, meta);
      }
      case 'error':
        return error(503, 'service_unavailable', 'Injected fault: the service is unavailable. Retry later.');
      case 'drop':
        if (fault.afterHandling) await answer(request, meta);
        throw new InjectedFault('drop');
      case 'truncate':
        return { ...(await answer(request, meta)), truncated: true };
    }
  }

  const adminTarget: AdminTarget = {
    reset: () => server.reset(),
    keys: () => {
      const out: Record<string, KeyStats> = {};
      for (const [key, stats] of Object.entries(limiter.stats())) {
        let label = keyLabel(key);
        for (let n = 2; label in out; n++) label = `${keyLabel(key)}#${n}`;
        out[label] = stats;
      }
      return out;
    },
    requests: () => server.requests(),
    clearRequests: () => server.clearRequests(),
    clock,
  };

  const server: ReferenceServer = {
    async fetch(request: Request): Promise<Response> {
      // An aborted request rejects at once with its reason, as a real fetch would, whatever the
      // server is waiting for (a body, an injected latency).
      const { signal } = request;
      signal?.throwIfAborted();
      const reply = serve(fromRequest(request));
      if (!(reply instanceof Promise)) return toResponse(reply);
      if (!signal) return toResponse(await reply);
      return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        reply.then((ready) => resolve(toResponse(ready)), reject).finally(() => signal.removeEventListener('abort', onAbort));
      });
    },
    reset() {
      store.reset(config.pets);
      limiter.reset();
      planFault.reset();
      journal.length = 0;
    },
    clock,
    requests: () => journal.map((entry) => ({ ...entry })),
    clearRequests: () => void (journal.length = 0),
    inspect() {
      return { petCount: store.size, keys: limiter.stats() };
    },
  };
  cores.set(server, {
    serve,
    refuse: (status, code, message) => {
      const reply = limited(error(status, code, message), anonymous(clock.ms()));
      reply.headers['X-Request-Id'] = newRequestId();
      return reply;
    },
  });
  return server;
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
