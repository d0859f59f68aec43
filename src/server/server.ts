import { createFaultPlanner, InjectedFault, type FaultPlan } from './faults.js';
import { empty, error, fromRequest, toResponse, withRateLimit, type ErrorCode, type Incoming, type Reply } from './http.js';
import { PLANS, resolveServerOptions, type ReferenceServerOptions } from './options.js';
import { RateLimiter, type Admission, type KeyStats } from './rate-limiter.js';
import { allowed, API_PATHS, apiPath, dispatch, matchRoute } from './routes.js';
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
  /** Restores the seed pets and forgets every rate-limit window, ban and counter. */
  reset(): void;
  /** The store's size and per-key counters, for tests that check a client's manners. */
  inspect(): ServerInspection;
}

/**
 * What a preflight allows when it does not say what it will send: the key, JSON bodies, the SDK's
 * identification header (browsers cannot set User-Agent) and a request id.
 */
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Animal-Store-Client, X-Request-Id';

/**
 * The server below `fetch`: what the node:http adapter drives directly, and what
 * {@link createReferenceServer} wraps with `fetch`. Internal.
 */
export interface ServerCore extends Omit<ReferenceServer, 'fetch'> {
  /**
   * Answers a request with a reply, not a `Response`: the node:http adapter writes it straight
   * to the socket, as Hono's node-server does with its lightweight responses. Synchronous
   * unless the request has a body to read or a fault delays it. Throws only an
   * {@link InjectedFault} (a dropped connection).
   */
  serve(request: Incoming): Reply | Promise<Reply>;
  /**
   * The answer to a request that never became one (HTTP the transport could not parse): an Error
   * record with the rate-limit headers of an anonymous request, as for a 401.
   */
  refuse(status: number, code: ErrorCode, message: string): Reply;
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!signal) return void setTimeout(resolve, ms);
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
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
  return withFetch(createServerCore(options));
}

/** The in-memory server, without `fetch`: options resolved, state, routing, limits and faults. Internal. */
export function createServerCore(options: ReferenceServerOptions = {}): ServerCore {
  const config = resolveServerOptions(options);
  const store = new PetStore(config.pets);
  const limiter = new RateLimiter(config.apiKeys, config.banThreshold, config.banDurationMs);
  const planFault = createFaultPlanner(config.faults);
  const keys = [...config.apiKeys.keys()];
  /** Sets the rate-limit headers the server is configured to send, and `Date`. */
  const limited = (reply: Reply, admission: Admission, now: number) => withRateLimit(reply, admission, config.rateLimitHeaders, now);
  /** What a request without a (valid) key is told: an untouched Free-plan minute. */
  const anonymous = (now: number) => RateLimiter.anonymous(now, PLANS.free.perMinute);

  const findKey = (token: string): string | undefined => {
    let found: string | undefined;
    for (const key of keys) if (constantTimeEqual(token, key)) found = key;
    return found;
  };

  /**
   * Answers synchronously where it can: only reading a body waits (see bench/server-throughput.mjs).
   * `method` is upper-case, with HEAD already dispatched as GET.
   */
  function handle(request: Incoming, method: string): Reply | Promise<Reply> {
    const now = config.now();
    const path = apiPath(request.url.pathname);
    const match = path === undefined ? undefined : matchRoute(path);

    if (method === 'OPTIONS') {
      const allow = allowed(match?.route);
      return limited(
        empty(204, {
          Allow: allow,
          'Access-Control-Allow-Methods': allow,
          'Access-Control-Allow-Headers': request.header('Access-Control-Request-Headers') ?? ALLOWED_HEADERS,
          'Access-Control-Max-Age': '600',
        }),
        anonymous(now),
        now,
      );
    }

    // Outside /v1 there is no API to authenticate for: say where it is instead of asking for a key.
    if (path === undefined) {
      const where = request.url.pathname.slice(0, 100);
      return limited(error(404, 'not_found', `${where} is not part of the API. Its paths are under /v1: ${API_PATHS}.`), anonymous(now), now);
    }

    let admission: Admission;
    if (match?.route.public) {
      admission = anonymous(now);
    } else {
      const authorization = request.header('Authorization');
      const bearer = authorization?.match(/^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i);
      const key = bearer ? findKey(bearer[1]!) : undefined;
      if (!key) {
        const [code, message] = !authorization
          ? (['missing_api_key', 'No API key was sent. Send it as "Authorization: Bearer <API_KEY>".'] as const)
          : !bearer
            ? (['invalid_api_key', 'The Authorization header is malformed. Send "Authorization: Bearer <API_KEY>".'] as const)
            : (['invalid_api_key', 'The API key is not valid. Check the key, or ask for a new one.'] as const);
        return limited(error(401, code, message, { 'WWW-Authenticate': 'Bearer realm="petstore"' }), anonymous(now), now);
      }
      admission = limiter.admit(key, now);
      if (admission.refused === 'api_key_banned') {
        return limited(
          error(429, 'api_key_banned', `This API key is temporarily banned for sending requests while told to wait. Retry after ${admission.retryAfter} s, and honour Retry-After.`),
          admission,
          now,
        );
      }
      if (admission.refused) {
        return limited(
          error(429, 'rate_limited', `Rate limit of ${admission.limit} requests exceeded. Retry after ${admission.retryAfter} s; sending sooner may get the key banned.`),
          admission,
          now,
        );
      }
    }

    if (!match) {
      return limited(error(404, 'not_found', `No route ${request.url.pathname}. The API's paths are ${API_PATHS}.`), admission, now);
    }
    const reply = dispatch(match, method, request, now, { store, orders: config.orders });
    if (!reply) {
      const allow = allowed(match.route);
      return limited(error(405, 'method_not_allowed', `${method.slice(0, 20)} is not allowed on ${match.path}. Allowed: ${allow}.`, { Allow: allow }), admission, now);
    }
    return reply instanceof Promise ? reply.then((r) => limited(r, admission, now)) : limited(reply, admission, now);
  }

  /** The one place HEAD is handled: dispatched as GET, its body dropped (RFC 9110 9.3.2), errors included. */
  function answer(request: Incoming): Reply | Promise<Reply> {
    const method = request.method.toUpperCase();
    const head = method === 'HEAD';
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
      reply = handle(request, head ? 'GET' : method);
    } catch {
      return failed();
    }
    return reply instanceof Promise ? reply.then(finish, failed) : finish(reply);
  }

  /** Every answer, faults and safety nets included, carries `Date` from the server's clock. */
  const stamp = (reply: Reply): Reply => {
    reply.headers.Date = new Date(config.now()).toUTCString();
    return reply;
  };

  /** Answers one request, with a fault drawn first when faults are injected. */
  function serve(request: Incoming): Reply | Promise<Reply> {
    const fault = request.method === 'OPTIONS' || /\/openapi\.json$/.test(request.url.pathname) ? undefined : planFault();
    if (!fault) {
      const reply = answer(request);
      return reply instanceof Promise ? reply.then(stamp) : stamp(reply);
    }
    return faulty(request, fault).then(stamp);
  }

  async function faulty(request: Incoming, fault: FaultPlan): Promise<Reply> {
    switch (fault.kind) {
      case 'latency':
        await delay(fault.latencyMs, request.signal);
        return answer(request);
      case 'error':
        return error(503, 'service_unavailable', 'Injected fault: the service is unavailable. Retry later.');
      case 'drop':
        if (fault.afterHandling) await answer(request);
        throw new InjectedFault('drop');
      case 'truncate':
        return { ...(await answer(request)), truncated: true };
    }
  }

  return {
    serve,
    refuse: (status, code, message) => {
      const now = config.now();
      return stamp(limited(error(status, code, message), anonymous(now), now));
    },
    reset() {
      store.reset(config.pets);
      limiter.reset();
      planFault.reset();
    },
    inspect() {
      return { petCount: store.size, keys: limiter.stats() };
    },
  };
}

/** A {@link ReferenceServer}: the core, answering web `Request`s with `Response`s. Internal. */
export function withFetch(core: ServerCore): ReferenceServer {
  const { serve, reset, inspect } = core;
  return {
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
    reset,
    inspect,
  };
}
