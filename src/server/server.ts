// The client's own rule for listeners that throw, reused so both sides report them alike, and its
// one abortable wait. The module has no imports of its own and touches no host API until called:
// it costs the server bundle a few lines.
import { MAX_TIMER_MS, orAbort, reportListenerError, sleep } from '../runtime.js';
// The client's rule for finding a key in a text, so both sides hide it alike.
import { clip, redactor } from '../redact.js';
import { adminAllow, answerAdmin, adminPath, isClockInstant, LATEST_MOVE, toInstant, type ServerClock } from './admin.js';
import { createFaultPlanner, type FaultPlan } from './faults.js';
import { empty, error, fromRequest, httpDate, MAX_TARGET_LENGTH, TARGET_TOO_LONG, toResponse, withRateLimit, type ErrorCode, type Incoming, type Reply } from './http.js';
import { Journal, keyLabel, type Exchange, type RequestRecord } from './journal.js';
import { PLANS, readingProblem, resolveServerOptions, type ReferenceServerOptions } from './options.js';
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
  /**
   * Answers one request. It never throws and never answers 5xx, unless faults are injected,
   * one is asked for (`Prefer: code=500`), or the `now` option reads outside 1970 to 9999 (a 500
   * saying what it returned); it rejects at once with the reason when the request's `signal`
   * aborts.
   */
  fetch(request: Request): Promise<Response>;
  /**
   * Restores the seed pets, forgets every rate-limit window, ban, counter and recorded request,
   * and starts the fault draw over. The clock stays where it is. Requests still in flight are answered as the server stood when
   * they arrived; nothing of them reaches the fresh state.
   */
  reset(): void;
  /** The store's size and per-key counters, for tests that check a client's manners. */
  inspect(): ServerInspection;
  /**
   * The server's clock: the `now` option, moved by `advance` and `set`, so a test skips a minute
   * window, a ban or the getPet sunset without waiting.
   * @example
   * ```ts
   * server.clock.advance(60_000); // the next minute window
   * server.clock.set('2030-12-05T00:00:00Z'); // getPet is gone
   * ```
   */
  readonly clock: ServerClock;
  /**
   * The last 1,000 requests to arrive, in the order they arrived (not the order they were
   * answered), each as it ended (status 0: no answer reached its client); requests still being
   * answered and admin requests are not listed.
   */
  requests(): RequestRecord[];
  /** Forgets the requests that arrived so far, those still being answered included. */
  clearRequests(): void;
}

/** A key's ban starting or ending, for logs. */
export interface BanEvent {
  /** `banned` when the key is banned, `ended` once its ban is over. */
  state: 'banned' | 'ended';
  /** The key's label (its first characters and `…`, at most half the key), never the key. */
  key: string;
  /** When it happened (ISO 8601, on the server's clock). */
  time: string;
  /** When the ban ends (ISO 8601, on the server's clock). */
  until: string;
}

/**
 * What a preflight allows when it does not say what it will send: the key, JSON bodies, the SDK's
 * identification header (browsers cannot set User-Agent), a request id, and `Prefer` (forced answers).
 */
const ALLOWED_HEADERS = 'Authorization, Content-Type, X-Animal-Store-Client, X-Request-Id, Prefer';

/** The statuses `Prefer: code=…` can force, with the Error record code of each. */
const FORCEABLE: Readonly<Record<string, ErrorCode>> = {
  401: 'invalid_api_key',
  404: 'not_found',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'service_unavailable',
};

/**
 * The status a request under `/v1` asks for with `Prefer` (RFC 7240, as Prism reads it), when it
 * is one the server can force. Such a request is answered so, and draws no injected fault.
 */
function forcedCode(request: Incoming): number | undefined {
  const prefer = request.header('Prefer');
  if (prefer === null || apiPath(request.url.pathname) === undefined) return undefined;
  const match = /(?:^|[,;\s])code\s*=\s*"?(\d{3})"?(?=$|[,;\s])/i.exec(prefer);
  return match && Object.hasOwn(FORCEABLE, match[1]!) ? Number(match[1]) : undefined;
}

/**
 * A request as a transport hands it over, or only its method: what it parsed of a request no URL
 * could be made of (an `ftp://` target, a CONNECT's `host:port`), recorded with `?` for its path.
 */
export type Arrival = Incoming | Pick<Incoming, 'method'>;

/**
 * The server below `fetch`: what the node:http adapter drives directly, and what
 * {@link createReferenceServer} wraps with `fetch`. Internal.
 */
export interface ServerCore extends Omit<ReferenceServer, 'fetch'> {
  /**
   * Answers a request with a reply, not a `Response`: the node:http adapter writes it straight
   * to the socket, as Hono's node-server does with its lightweight responses. Synchronous
   * unless the request has a body to read or a fault delays it. Every reply carries its
   * recorded `exchange`; a dropped connection is a reply with `dropped` set.
   */
  serve(request: Incoming): Reply | Promise<Reply>;
  /**
   * The answer to a request the server does not serve: HTTP the transport could not parse, or
   * refuses before serving (RFC 9112's Host rules). An Error record with the rate-limit headers of
   * an anonymous request, as for a 401, recorded with the request's method and path when there is
   * one to show (`?` otherwise): of a request whose method was parsed but no URL made of its
   * target (`{ method }` alone), the method, and `?` for the path.
   */
  refuse(status: number, code: ErrorCode, message: string, request?: Arrival): Reply;
  /**
   * Records that a reply never reached its client (it went away first): its exchange, in the
   * journal and the log, shows status 0 and no code, as a dropped connection does.
   */
  undelivered(reply: Reply): void;
}

/** A reply that is no answer: the connection is cut. */
const cut = (): Reply => ({ status: 0, headers: {}, body: null, dropped: true });

function constantTimeEqual(a: string, b: string): boolean {
  // Compare every code unit of the longer input so the time taken says nothing about the key.
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/**
 * What a reset replaces: the pets, the rate-limit state and the journal. A request acts on, and
 * is recorded in, the generation it arrived in, so a reset wins over the requests still in flight
 * (a body still arriving, an injected latency): they are answered as the server stood when they
 * arrived, and nothing of them reaches the fresh state.
 */
interface Generation {
  store: PetStore;
  limiter: RateLimiter;
  journal: Journal;
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
  const generation = (): Generation => ({
    store: new PetStore(config.pets),
    limiter: new RateLimiter(config.apiKeys, config.banThreshold, config.banDurationMs),
    journal: new Journal(),
  });
  /** The generation new requests arrive in; `reset()` starts the next. */
  let current = generation();
  const planFault = createFaultPlanner(config.faults);
  const keys = [...config.apiKeys.keys()];
  /**
   * Each key's label, made once: what logs, the journal, onBan and `/_admin/keys` show instead of
   * the key. Keys that share one are told apart in the order they were given (`my-k…#2`), the same
   * everywhere and after every reset.
   */
  const labelOf = (key: string) => labels.get(key)!;
  const labels = new Map<string, string>();
  const shared = new Map<string, number>();
  for (const key of keys) {
    const label = keyLabel(key);
    const n = (shared.get(label) ?? 0) + 1;
    shared.set(label, n);
    labels.set(key, n === 1 ? label : `${label}#${n}`);
  }
  /** The configured keys hidden in a text (see redact.ts). */
  const hideKeys = redactor(keys);
  /** What hides the keys a request's `Authorization` may hold: the configured ones, and a credential it presents that is no configured key. */
  const hiderFor = (authorization: string | null | undefined): ((text: string) => string) => {
    const token = authorization?.trim().split(/ +/).pop();
    if (!token || config.apiKeys.has(token) || !/^[\x21-\x7e]+$/.test(token)) return hideKeys;
    const hideToken = redactor([token]);
    return (text) => hideKeys(hideToken(text));
  };
  /** The last `Authorization` value seen, and its {@link hiderFor}: a client sends the same one again and again. */
  let presented: { authorization: string | null | undefined; hide: (text: string) => string } | undefined;
  /**
   * A request's path and query as the journal and the log show them: a client may put its key in
   * the URL (a query parameter, a proxy's path segment), and whatever key it is, configured or
   * presented in `Authorization` and unknown (a real key sent to the wrong server), it shows as
   * [redacted], like the key itself everywhere else.
   */
  const recordedPath = (path: string, authorization: string | null | undefined): string => {
    if (!presented || presented.authorization !== authorization) presented = { authorization, hide: hiderFor(authorization) };
    return presented.hide(path);
  };
  /** The clock: the `now` option plus an offset that `clock.advance` and `clock.set` move. */
  let offset = 0;
  /** The `now` option's last good reading: when it steps back (fake timers set back), windows move with it, as with `clock.set`. */
  let lastNow = 0;
  /** The clock's last good reading, and what was wrong with the reading after it, if anything. */
  let lastGood = config.created;
  let broken: string | undefined;
  /**
   * Reads the clock. A reading outside 1970 to 9999 (a `now` option that returned `NaN`, a `Date`)
   * is not used: the last good one is, and `serve` answers 500, saying what `now` returned.
   */
  const now = () => {
    const read = config.now();
    broken = readingProblem(read, offset);
    if (broken) return lastGood;
    if (read < lastNow) current.limiter.clockSetBack(lastNow - read);
    lastNow = read;
    return (lastGood = read + offset);
  };
  /**
   * Request ids, 16 hex digits: a random per-server prefix, so ids from two servers do not meet,
   * and a counter, taken as each request arrives, which also orders the journal.
   */
  const idPrefix = Math.floor(Math.random() * 0x1000000).toString(16).padStart(6, '0');
  let sequence = 0;
  /**
   * Keys whose ban `onBan` was told of and whose end it was not yet told of, by key, as the limiter
   * knows them. Each ban's end is the limiter's (`banEnd`), so a clock set back moves
   * the one copy; a key the limiter forgot (a reset) has its ban lifted now.
   */
  const banned = new Set<string>();
  let banTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * Tells `onBan` of an event. A listener that throws is reported (`reportError`, else rethrown in
   * a microtask) and changes nothing: not the answer, not the clock, not the events told after it.
   */
  const tell = (event: BanEvent) => {
    try {
      config.onBan?.(event);
    } catch (error) {
      reportListenerError(error);
    }
  };

  /** Sets the rate-limit headers the server is configured to send. */
  const limited = (reply: Reply, admission: Admission, at: number) => withRateLimit(reply, admission, config.rateLimitHeaders, at);
  /** What a request without a (valid) key is told: an untouched Free-plan minute. */
  const anonymous = (at: number) => RateLimiter.anonymous(at, PLANS.free.perMinute);

  const findKey = (token: string): string | undefined => {
    let found: string | undefined;
    for (const key of keys) if (constantTimeEqual(token, key)) found = key;
    return found;
  };

  /**
   * Tells `onBan` of bans that are over, in the order they ended (bans begun later can end sooner
   * when the `now` option steps back), and wakes up when the next one ends.
   */
  function endBans(): void {
    if (!config.onBan) return;
    const at = now();
    let next = Infinity;
    const over: { key: string; until: number }[] = [];
    for (const key of banned) {
      const until = current.limiter.banEnd(key) ?? at;
      if (until <= at) {
        banned.delete(key);
        over.push({ key, until });
      } else next = Math.min(next, until);
    }
    if (banTimer !== undefined) clearTimeout(banTimer);
    banTimer = undefined;
    if (next < Infinity) {
      banTimer = setTimeout(endBans, Math.min(next - at, MAX_TIMER_MS));
      // A pending ban end never keeps a process alive (Node's timers have unref; others do not need it).
      (banTimer as { unref?: () => void }).unref?.();
    }
    // A stable sort: bans that end together (a reset) keep the order they began in.
    for (const { key, until } of over.sort((a, b) => a.until - b.until)) {
      const end = new Date(until).toISOString();
      tell({ state: 'ended', key: labelOf(key), time: end, until: end });
    }
  }

  /** A forced answer (`Prefer: code=…`): the status, its headers and an Error record; no state changes. */
  function forced(status: number, at: number): Reply {
    const code = FORCEABLE[status]!;
    const admission = anonymous(at);
    const headers: Record<string, string> = { 'Preference-Applied': `code=${status}` };
    if (status === 401) headers['WWW-Authenticate'] = 'Bearer realm="petstore"';
    if (status === 429) {
      admission.remaining = 0;
      admission.retryAfter = Math.max(1, admission.reset - Math.floor(at / 1000));
    }
    return limited(error(status, code, `Forced by "Prefer: code=${status}": no request was acted on, nothing changed.`, headers), admission, at);
  }

  /**
   * Answers synchronously where it can: only reading a body waits (see bench/server-throughput.mjs).
   * `method` is upper-case, with HEAD already dispatched as GET; `at` is when the request is acted on.
   */
  function handle(request: Incoming, method: string, exchange: Exchange, { store, limiter }: Generation, at: number): Reply | Promise<Reply> {
    const pathname = request.url.pathname;
    const admin = adminPath(pathname);
    const adminServed = admin !== undefined && config.admin;
    // Preflights go to a known admin path's own methods below; an unknown one has nothing to allow,
    // so OPTIONS gets its 404 as every other method does.
    if (adminServed && (method !== 'OPTIONS' || adminAllow(admin) === undefined)) {
      // Headed on the clock as it stands after the call, as its Date is: a clock moved years away
      // left X-RateLimit-Reset on the minute it was called in.
      return answerAdmin(request, method, admin, core).then((reply) => {
        const after = now();
        return limited(reply, anonymous(after), after);
      });
    }
    const path = apiPath(pathname);
    const match = path === undefined ? undefined : matchRoute(path);

    // Outside /v1 there is no API to authenticate for, nor to preflight: say where it is instead of
    // asking for a key, to OPTIONS as to any method. A served admin API is still preflighted.
    if (path === undefined && !adminServed) {
      const where = clip(pathname, 100);
      const hint = admin !== undefined ? ' The admin API is off: start the server with --admin (admin: true) to use it.' : '';
      return limited(error(404, 'not_found', `${where} is not part of the API. The API is under /v1: ${API_PATHS}.${hint}`), anonymous(at), at);
    }

    if (method === 'OPTIONS') {
      // A served admin path allows its own methods (DELETE /_admin/requests among them: a page
      // that clears the journal is preflighted for DELETE); any other path the API's.
      const allow = (adminServed ? adminAllow(admin) : undefined) ?? allowed(match?.route);
      return limited(
        empty(204, {
          Allow: allow,
          'Access-Control-Allow-Methods': allow,
          'Access-Control-Allow-Headers': request.header('Access-Control-Request-Headers') ?? ALLOWED_HEADERS,
          'Access-Control-Max-Age': '600',
        }),
        anonymous(at),
        at,
      );
    }

    let admission: Admission;
    if (match?.route.public) {
      admission = anonymous(at);
    } else {
      const authorization = request.header('Authorization');
      // Any visible ASCII, as the apiKeys option and the client accept, not only RFC 6750's
      // b64token: a key the server was given must be one it can be sent.
      const bearer = authorization?.match(/^Bearer +([\x21-\x7e]+) *$/i);
      const key = bearer ? findKey(bearer[1]!) : undefined;
      if (!key) {
        const [code, message] = !authorization
          ? (['missing_api_key', 'No API key was sent. Send it as "Authorization: Bearer <API_KEY>".'] as const)
          : !bearer
            ? (['invalid_api_key', 'The Authorization header is malformed. Send "Authorization: Bearer <API_KEY>".'] as const)
            : (['invalid_api_key', 'The API key is not valid. Check the key, or ask for a new one.'] as const);
        return limited(error(401, code, message, { 'WWW-Authenticate': 'Bearer realm="petstore"' }), anonymous(at), at);
      }
      admission = limiter.admit(key, at);
      const label = labelOf(key);
      exchange.key = label;
      exchange.insideRetryAfter = admission.insideRetryAfter === true;
      if (admission.bannedUntil !== undefined && config.onBan) {
        banned.add(key);
        tell({ state: 'banned', key: label, time: new Date(at).toISOString(), until: new Date(admission.bannedUntil).toISOString() });
        endBans();
      }
      if (admission.refused === 'api_key_banned') {
        return limited(
          error(429, 'api_key_banned', `This API key is temporarily banned for sending requests while told to wait. Retry after ${admission.retryAfter} s, and honour Retry-After.`),
          admission,
          at,
        );
      }
      if (admission.refused) {
        return limited(
          error(429, 'rate_limited', `Rate limit of ${admission.limit} request${admission.limit === 1 ? '' : 's'} per ${admission.window === 86_400 ? 'day' : 'minute'} exceeded. Retry after ${admission.retryAfter} s; sending sooner may get the key banned.`),
          admission,
          at,
        );
      }
    }

    if (!match) {
      return limited(error(404, 'not_found', `No route ${clip(pathname, 100)}. The API's paths are ${API_PATHS}.`), admission, at);
    }
    const reply = dispatch(match, method, request, at, { store, orders: config.orders });
    if (!reply) {
      const allow = allowed(match.route);
      return limited(error(405, 'method_not_allowed', `${clip(method, 20)} is not allowed on ${match.path}. Allowed: ${allow}.`, { Allow: allow }), admission, at);
    }
    // Counted when it arrived, answered once its body has: `t` counts from the answer, as its Date does,
    // so the two agree with X-RateLimit-Reset (from the arrival, a slow body's t was that much too long).
    return reply instanceof Promise ? reply.then((r) => limited(r, admission, now())) : limited(reply, admission, at);
  }

  /**
   * Answers a request, HEAD dispatched as GET (its body is dropped in `close`, with every other
   * answer's), acting on it at `at`: when it arrived, unless something held it since.
   */
  function answer(request: Incoming, exchange: Exchange, generation: Generation, at = exchange.at): Reply | Promise<Reply> {
    const method = request.method.toUpperCase();
    // A safety net only: no known input reaches it (the fuzz suite checks), and a 500 is still
    // a valid Error record rather than a thrown exception.
    const failed = () => error(500, 'internal_error', 'The reference server failed unexpectedly. Please report this with the request that caused it.');
    let reply: Reply | Promise<Reply>;
    try {
      reply = handle(request, method === 'HEAD' ? 'GET' : method, exchange, generation, at);
    } catch {
      return failed();
    }
    return reply instanceof Promise ? reply.catch(failed) : reply;
  }

  /**
   * A new exchange for a request arriving now; `?` for the method and path of what never became a
   * request, and for the path of one with no URL (`{ method }` alone).
   */
  function open(request: Arrival | undefined): Exchange {
    if (banned.size > 0) endBans();
    const method = request?.method ?? '?';
    const parsed = request && 'url' in request ? request : undefined;
    const target = parsed ? parsed.url.pathname + parsed.url.search : '?';
    let path = parsed ? recordedPath(target, parsed.header('Authorization')) : '?';
    // A target too long to serve is kept by its start: a thousand of them must not hold megabytes.
    if (target.length > MAX_TARGET_LENGTH) path = clip(path, 100);
    const seq = ++sequence;
    return { at: now(), seq, method, path, status: 0, requestId: idPrefix + seq.toString(16).padStart(10, '0'), code: undefined, key: null, insideRetryAfter: false };
  }

  /** The journal a request arriving now is recorded in: none for a served admin API. */
  const journalFor = (request: Arrival | undefined) =>
    request && 'url' in request && config.admin && adminPath(request.url.pathname) !== undefined ? undefined : current.journal;

  /** Refuses a request before it is served (see {@link ServerCore.refuse}): nothing is counted, no fault drawn. */
  function refuse(status: number, code: ErrorCode, message: string, request?: Arrival): Reply {
    const exchange = open(request);
    return close(limited(error(status, code, message), anonymous(exchange.at), exchange.at), exchange, journalFor(request));
  }

  /**
   * Ends an exchange: every answer, faults and safety nets included, carries `Date` from the
   * server's clock and its `X-Request-Id`, and is recorded in `journal` (none for admin requests). The one place
   * a HEAD answer loses its body (RFC 9110 9.3.2), so an injected 503 or a safety net's 500 does too;
   * with no body, a truncate fault has nothing to cut, and the answer goes out (and is logged) whole.
   */
  function close(reply: Reply, exchange: Exchange, journal: Journal | undefined): Reply {
    if (exchange.method.toUpperCase() === 'HEAD') {
      // The length the GET's body has (RFC 9110, section 8.6), set here since no body is left to
      // measure: Bun.serve and Deno.serve would send 0 for a bodiless answer, node:http and workerd none.
      if (reply.body !== null) reply.headers['Content-Length'] = String(new TextEncoder().encode(reply.body).length);
      reply.body = null;
      delete reply.truncated;
    }
    // Most have it from their rate-limit headers' reading (see withRateLimit); the rest from now.
    reply.headers.Date ??= httpDate(now());
    reply.headers['X-Request-Id'] = exchange.requestId;
    exchange.status = reply.dropped ? 0 : reply.status;
    exchange.code = reply.code;
    reply.exchange = exchange;
    journal?.add(exchange);
    return reply;
  }

  /** Answers one request, with a fault drawn first when faults are injected. */
  function serve(request: Incoming): Reply | Promise<Reply> {
    const { pathname, search } = request.url;
    if (pathname.length + search.length > MAX_TARGET_LENGTH) return refuse(...TARGET_TOO_LONG, request);
    const exchange = open(request);
    const generation = current;
    const journal = journalFor(request);
    if (broken) return close(limited(error(500, 'internal_error', broken), anonymous(exchange.at), exchange.at), exchange, journal);
    // Preflights and a served admin API (no journal) are answered as they are: never forced, never faulted.
    const plain = request.method !== 'OPTIONS' && journal !== undefined;
    // A forced answer is what the test asked for, and changes nothing: not even the draw.
    const force = plain ? forcedCode(request) : undefined;
    if (force !== undefined) {
      exchange.forced = true;
      return close(forced(force, exchange.at), exchange, journal);
    }
    // The OpenAPI document is read by route, as it is served: `/v1/openapi.json/` is it too, `/v1/pets/openapi.json` a getPet.
    const fault = config.faults && plain && apiPath(pathname) !== '/openapi.json' ? planFault() : undefined;
    if (!fault) {
      const reply = answer(request, exchange, generation);
      return reply instanceof Promise ? reply.then((r) => close(r, exchange, journal)) : close(reply, exchange, journal);
    }
    exchange.fault = fault.kind;
    return faulty(request, fault, exchange, generation).then((r) => close(r, exchange, journal));
  }

  async function faulty(request: Incoming, fault: FaultPlan, exchange: Exchange, generation: Generation): Promise<Reply> {
    switch (fault.kind) {
      case 'latency':
        try {
          await sleep(fault.latencyMs, request.signal);
        } catch {
          // The caller gave up while the answer was held: nothing is acted on, and nobody is answered.
          return cut();
        }
        // Acted on now, not when it arrived: counted at its arrival, it fell in a window the key
        // may have left meanwhile, and the limiter's windows went back to it, forgetting the count
        // of the window the key is in.
        return answer(request, exchange, generation, now());
      case 'error':
        // Before the request is acted on, so no counter moves: the headers of an untouched minute,
        // as a forced 503 has, since every answer carries the rate-limit headers (spec, section 8).
        return limited(error(503, 'service_unavailable', 'Injected fault: the service is unavailable. Retry later.'), anonymous(exchange.at), exchange.at);
      case 'drop':
        if (fault.afterHandling) await answer(request, exchange, generation);
        return cut();
      case 'truncate':
        return { ...(await answer(request, exchange, generation)), truncated: true };
    }
  }

  const clock: ServerClock = {
    now: () => new Date(now()),
    advance(ms) {
      // 0 moves nothing: it holds wherever the clock has run on to, past the latest move too.
      if (typeof ms !== 'number' || !(ms >= 0) || (ms > 0 && !isClockInstant(now() + ms))) {
        throw new TypeError(`clock.advance: expected a number of milliseconds, 0 or more, that keeps the clock at or before ${LATEST_MOVE}; got ${String(ms)}.`);
      }
      offset += ms;
      endBans();
    },
    set(date) {
      const before = offset;
      // From the `now` option's last good reading when this one is not (NaN), which must not stick in the offset.
      const read = config.now();
      offset = toInstant(date) - (readingProblem(read) ? lastNow : read);
      if (offset < before) current.limiter.clockSetBack(before - offset);
      endBans();
    },
  };

  const core: ServerCore & { keys(): Record<string, KeyStats> } = {
    serve,
    refuse,
    undelivered({ exchange }) {
      if (!exchange) return;
      exchange.status = 0;
      exchange.code = undefined;
    },
    reset() {
      current = generation();
      planFault.reset();
      // Every ban is over now (the new limiter knows none): onBan is told so, as when one runs out.
      endBans();
    },
    inspect() {
      return { petCount: current.store.size, keys: current.limiter.stats() };
    },
    /** What `GET /_admin/keys` lists: each key's counters under its label (`my-k…#2` for a second key with the same label). */
    keys: () => Object.fromEntries(Object.entries(current.limiter.stats()).map(([key, stats]) => [labelOf(key), stats])),
    clock,
    requests: () => current.journal.list(),
    // Everything that arrived so far, a request still being answered included: it is not listed yet,
    // and listing it once it ends would show a request from before the clear.
    clearRequests: () => current.journal.clear(sequence),
  };
  return core;
}

/** A {@link ReferenceServer}: the core, answering web `Request`s with `Response`s. Internal. */
export function withFetch(core: ServerCore): ReferenceServer {
  const { serve } = core;
  return {
    async fetch(request: Request): Promise<Response> {
      // An aborted request rejects at once with its reason, as a real fetch would, whatever the
      // server is waiting for (a body, an injected latency).
      const { signal } = request;
      signal?.throwIfAborted();
      const reply = serve(fromRequest(request));
      if (!(reply instanceof Promise)) return toResponse(reply);
      // An answer that comes after the caller gave up reaches nobody, and the journal says so.
      if (signal) reply.then((ready) => signal.aborted && core.undelivered(ready), () => {});
      return toResponse(await orAbort(reply, signal));
    },
    reset: () => core.reset(),
    inspect: () => core.inspect(),
    clock: core.clock,
    requests: () => core.requests(),
    clearRequests: () => core.clearRequests(),
  };
}
