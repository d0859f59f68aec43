/**
 * The client's options: their defaults, in one place, and the one function that resolves them.
 *
 * @module
 */
import * as z from 'zod/mini';
import { check } from '../schemas/index.js';
import type { CoordinatorScope, RateLimitCoordinator } from './coordinator.js';
import type { DeprecationNotice } from './deprecation.js';
import { PetStoreError, ValidationError } from './errors.js';
import { createMemoryCoordinator } from './memory-coordinator.js';
import { clip, redactor } from '../redact.js';
import { unknownOption } from '../suggest.js';
import { env, envGranted, hasMethods, hostProcess, isolated, MAX_TIMER_MS, pageUrl, runtimeName, SDK_ID } from '../runtime.js';

/** A `fetch` implementation: the global one, or a test's (`server.fetch` of the reference server). */
export type Fetch = (input: Request, init?: RequestInit) => Promise<Response>;

/** How much the client logs: each level includes the ones before it. */
export type LogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

const LOG_LEVELS = ['off', 'error', 'warn', 'info', 'debug'] as const satisfies readonly LogLevel[];

/** Where log lines go: anything with console's methods (console itself, pino, winston). */
export interface Logger {
  /** Each attempt that got a response, and each wait. */
  debug(message: string, ...args: unknown[]): void;
  /** Retries. */
  info(message: string, ...args: unknown[]): void;
  /**
   * Deprecations (to a logger you pass, besides the once-per-process `process.emitWarning`, which
   * `onDeprecation` replaces; with the default console, that warning alone), and the
   * Redis coordinator's warnings unless it was given an `onWarning` of its own.
   */
  warn(message: string, ...args: unknown[]): void;
  /** Responses that break the API's schema (`ResponseValidationError`). A failed call is its error, not a log line. */
  error(message: string, ...args: unknown[]): void;
}

/**
 * Options of {@link PetStoreClient}. `apiKey` and `baseUrl` are required unless the environment
 * variables `PETSTORE_API_KEY` and `PETSTORE_BASE_URL` give them; every other option has a
 * default. Each accepts `undefined`, which means the default (as `null` does, from JavaScript).
 */
export interface ClientOptions {
  /**
   * The API key, sent as `Authorization: Bearer <key>`: visible ASCII, no spaces. It never
   * appears in errors, logs or events. Required unless `PETSTORE_API_KEY` is set.
   * @default process.env.PETSTORE_API_KEY
   */
  apiKey?: string | undefined;
  /**
   * The service's base URL, ending in `/v1` (production and staging are both just base URLs).
   * In a browser it may be relative (`'/api/v1'`), resolved against the page's address. Required
   * unless `PETSTORE_BASE_URL` is set. A `URL` object serves as well as a string. A proxy's URL
   * may hold the API key (`https://proxy.example/KEY/v1`): errors, logs and events show it as `[redacted]`.
   * @default process.env.PETSTORE_BASE_URL
   */
  baseUrl?: string | URL | undefined;
  /**
   * How many times a failed call is retried: 429s on any operation; 408, 5xx, network errors
   * and timeouts on GET only.
   * @default 2
   */
  maxRetries?: number | undefined;
  /**
   * How long one attempt may take, body included, before it fails with `TimeoutError`, in milliseconds.
   * @default 30_000
   */
  timeout?: number | undefined;
  /**
   * The longest the client waits before a retry or for a rate-limit window, in milliseconds
   * (the backoff before a GET's retry is drawn below it). A longer wait the service or the
   * rate-limit state asks for is not waited: the call fails at once, with `ThrottledError` when nothing was
   * sent, else with the error of the attempt it would have retried (`RateLimitError` after a 429,
   * `InternalServerError` after a 503 whose `Retry-After` is longer).
   * @default 60_000
   */
  maxRetryDelay?: number | undefined;
  /**
   * Whether to hold requests back once the announced rate-limit budget is spent, instead of
   * spending requests on 429s.
   * @default true
   */
  throttle?: boolean | undefined;
  /**
   * Where the rate-limit state lives: by default in memory, shared by this client's calls. Pass
   * `createRedisCoordinator()` from `@animal-store/sdk/redis` to share it with every process
   * that uses the same key, or `createMemoryCoordinator()` to share it between clients. One of
   * your own that serves several keys may be `bind` alone: the client uses what it returns.
   * @default createMemoryCoordinator()
   */
  coordinator?: RateLimitCoordinator | Required<Pick<RateLimitCoordinator, 'bind'>> | undefined;
  /**
   * The largest response body the client reads, in bytes; a larger one fails the attempt.
   * @default 10_485_760 (10 MiB)
   */
  maxResponseBytes?: number | undefined;
  /**
   * How much to log: `debug` logs each attempt that got a response and each wait, `info` each retry, `warn` deprecations.
   * @default process.env.PETSTORE_LOG, else 'warn'
   */
  logLevel?: LogLevel | undefined;
  /**
   * Where log lines go. The API key never appears in them.
   * @default console
   */
  logger?: Logger | undefined;
  /**
   * The `fetch` to send requests with.
   * @default globalThis.fetch
   */
  fetch?: Fetch | undefined;
  /**
   * Extra headers sent with every request: `Headers`, a record, or a list of name-value pairs
   * (a readonly one too: they are only read). They win over the SDK's `Accept` and `User-Agent`.
   * Not `Authorization` (a `ValidationError`): it is always set from `apiKey`.
   * @default {}
   */
  // DOM's HeadersInit spelt out: a Node project's types (lib without DOM, as @tsconfig/node22)
  // have Headers but no HeadersInit.
  headers?: Headers | Record<string, string> | readonly (readonly [string, string])[] | undefined;
  /**
   * Called once per client and operation when an operation is deprecated, instead of the
   * default warning (`process.emitWarning` in Node, else `console.warn`).
   * @default undefined
   */
  onDeprecation?: ((notice: DeprecationNotice) => void) | undefined;
}

/** Options of one call; each overrides the client's option of the same name. */
export interface RequestOptions {
  /** Cancels the call, its waits and the request in flight; the call rejects with an `AbortError` whose `cause` is `signal.reason`. */
  signal?: AbortSignal | undefined;
  /** Per-attempt timeout in milliseconds. @default the client's `timeout` */
  timeout?: number | undefined;
  /** How many retries this call may make. @default the client's `maxRetries` */
  maxRetries?: number | undefined;
  /** Extra headers for this call, merged over the client's (as {@link ClientOptions.headers} takes them). */
  headers?: ClientOptions['headers'];
}

// Typed as the options are, not as literals (`Object.freeze` keeps `2`, `true`): a value a user
// starts from a default (`useState(DEFAULTS.timeout)`) can change.
/** The defaults of {@link ClientOptions}; no default is repeated elsewhere. */
export const DEFAULTS = Object.freeze({
  /** Retries per call: 2. */
  maxRetries: 2 as number,
  /** Per-attempt timeout: 30 s. */
  timeout: 30_000 as number,
  /** The longest single wait before a retry or for a rate-limit window: 60 s. */
  maxRetryDelay: 60_000 as number,
  /** Hold requests back once the known budget is spent: `true`. */
  throttle: true as boolean,
  /** The largest response body read: 10 MiB. */
  maxResponseBytes: 10 * 1024 * 1024,
  /** Log warnings (deprecations) and errors only. */
  logLevel: 'warn' as LogLevel,
});

/** Options after defaults and environment variables are applied and every value is checked. */
export interface ResolvedOptions {
  apiKey: string;
  /** A text with the API key shown as `[redacted]` (see redact.ts): for whatever errors, logs and events show. */
  redact: (text: string) => string;
  /** The base URL with a trailing slash, so paths resolve below `/v1/`. */
  baseUrl: URL;
  maxRetries: number;
  timeout: number;
  maxRetryDelay: number;
  throttle: boolean;
  coordinator: RateLimitCoordinator;
  maxResponseBytes: number;
  logLevel: LogLevel;
  /** The logger, with the methods below the level replaced by no-ops. */
  log: Logger;
  /** Whether debug lines are logged (so the hot path skips building them). */
  debug: boolean;
  fetch: Fetch | undefined;
  /**
   * The headers of every request: the client's, then Accept, the SDK's name and Authorization. A
   * record, not `Headers`: ky copies a `Headers` into another before it merges it, twice the work.
   */
  headers: Readonly<Record<string, string>>;
  onDeprecation: ((notice: DeprecationNotice) => void) | undefined;
}

// Its own words: the shared ones read every number of the API as an int64 ("must be an integer").
const number = () => z.number({ error: (issue) => (issue.code === 'invalid_type' ? 'must be a number' : undefined) });
const Milliseconds = number().check(z.minimum(0), z.maximum(MAX_TIMER_MS));

const isFunction = (value: unknown) => typeof value === 'function';
const COORDINATOR_METHODS = ['acquire', 'observe', 'changed', 'getSnapshot', 'subscribe'];

/**
 * What each option that is not a number must be, for callers without a type checker: a number
 * where a URL belongs is a `ValidationError` naming the option, not a `TypeError` from deep inside.
 * Plain predicates, not zod: its custom and boolean schemas would add 0.3 KB gzip to a browser bundle.
 */
const KINDS: Record<string, [(value: unknown) => boolean, string]> = {
  // A URL from another realm (an iframe's) is a URL too.
  baseUrl: [(value) => typeof value === 'string' || Object.prototype.toString.call(value) === '[object URL]', 'must be a string or a URL'],
  throttle: [(value) => typeof value === 'boolean', 'must be a boolean'],
  // The likeliest non-function is a reference server itself, passed in place of its fetch.
  fetch: [isFunction, "must be a function, such as a reference server's: fetch: (request) => server.fetch(request)"],
  onDeprecation: [isFunction, 'must be a function'],
  logger: [(value) => hasMethods(value, ['error', 'warn', 'info', 'debug']), 'must have the methods error, warn, info and debug (console has them)'],
  // A function's own bind is no coordinator's: createRedisCoordinator passed uncalled is refused here.
  coordinator: [
    (value) => hasMethods(value, COORDINATOR_METHODS) || (hasMethods(value, ['bind']) && (value as Function).bind !== Function.prototype.bind),
    `must have the methods ${COORDINATOR_METHODS.join(', ')} (or bind), as what createMemoryCoordinator() or createRedisCoordinator({ redis }) returns`,
  ],
  signal: [(value) => hasMethods(value, ['throwIfAborted', 'addEventListener', 'removeEventListener']), 'must be an AbortSignal'],
};

/** The numeric options' ranges, and the log level. */
const TuningSchema = z.object({
  maxRetries: z.optional(z.int().check(z.minimum(0), z.maximum(100))),
  timeout: z.optional(number().check(z.positive(), z.maximum(MAX_TIMER_MS))),
  maxRetryDelay: z.optional(Milliseconds),
  maxResponseBytes: z.optional(z.int().check(z.positive())),
  logLevel: z.optional(z.enum(LOG_LEVELS)),
});

/** Checks the options' types and ranges, throwing `ValidationError` that names the field. */
function checkOptions(options: object, what: string): void {
  for (const name in KINDS) {
    const [holds, rule] = KINDS[name]!;
    const value = (options as Record<string, unknown>)[name];
    // null from JavaScript means the default, as undefined does.
    if (value != null && !holds(value)) throw configError(`${what}: ${name} ${rule}.`, name);
  }
  // null from JavaScript means the default here too, read as undefined (z.nullable would add
  // bytes to every browser bundle for the same).
  const tuning: Record<string, unknown> = {};
  for (const name in TuningSchema.shape) tuning[name] = (options as Record<string, unknown>)[name] ?? undefined;
  const checked = check(TuningSchema, tuning, what);
  if (!checked.success) throw new ValidationError({ issues: checked.issues, message: `${what}: ${checked.message}.` });
}

/**
 * Runs `read` over what the caller passed: a getter or a proxy that throws becomes a
 * `ValidationError` whose cause is what it threw, never an error of its own escaping the client.
 */
export function guarded<T>(what: string, read: () => T, tail = '', problem = 'could not be read (a getter or proxy threw)'): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof PetStoreError) throw error;
    throw new ValidationError({ issues: [], message: `${what} ${problem}; see the error's cause.${tail}`, cause: error });
  }
}

/**
 * A required option that is missing: how to give it, and a variable set under another spelling
 * (`PETSTORE_APIKEY`), as an unknown option names the one meant. Names only, never a value. One
 * given as `''` (an app's unset variable) is said to be: it does not fall back to `variable`.
 */
function missing(option: string, example: string, variable: string, given: unknown): ValidationError {
  let near: string | undefined;
  // Listing the environment needs all of Deno's env access: only when it was granted.
  if (envGranted()) {
    const plain = variable.replace(/_/g, '');
    near = Object.keys(hostProcess()?.env ?? {}).find((name) => name !== variable && name.replace(/_/g, '').toUpperCase() === plain);
  }
  const hint = near ? ` (${near} is set: did you mean ${variable}?)` : '';
  const empty = given === '';
  return configError(`${option} ${empty ? 'was given as an empty string' : 'is missing'}. Pass new PetStoreClient({ ${example} }) or ${empty ? `leave ${option} out to read` : 'set'} the ${variable} environment variable${hint}.`, option);
}

/** A `ValidationError` about one option (or argument), named by `path`: also `client.on()`'s and the Redis coordinator's. @internal */
export function configError(message: string, path: string): ValidationError {
  return new ValidationError({ issues: [{ code: 'custom', path: [path], message, input: undefined }], message });
}

// Every option's name, to catch a misspelt one (JavaScript has no type check); `satisfies` keeps
// each list the same as its interface.
const CLIENT_OPTIONS = Object.keys({
  apiKey: 0, baseUrl: 0, maxRetries: 0, timeout: 0, maxRetryDelay: 0, throttle: 0, coordinator: 0,
  maxResponseBytes: 0, logLevel: 0, logger: 0, fetch: 0, headers: 0, onDeprecation: 0,
} satisfies Record<keyof ClientOptions, 0>);
/** The names of a call's options ({@link RequestOptions}). @internal */
export const REQUEST_OPTIONS = Object.keys({ signal: 0, timeout: 0, maxRetries: 0, headers: 0 } satisfies Record<keyof RequestOptions, 0>);

/**
 * Throws `ValidationError` for an option the client does not know (`retries`, `baseURL`), naming
 * the one most likely meant: a misspelt option would otherwise be ignored without a word. A name
 * that is the API key (pasted as a name) shows as `[redacted]`.
 */
function checkKnown(options: object, known: readonly string[], what: string, redact: (text: string) => string): void {
  // From JavaScript, `null` (or a string) can arrive where the types say an object.
  if (typeof options !== 'object' || options === null) {
    throw configError(`${what} must be an object, such as { ${known.slice(0, 4).join(', ')} }.`, 'options');
  }
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const shown = redact(name);
    throw configError(`${what}: ${unknownOption(name, known, shown)}`, shown);
  }
}

/** Checks a call's options: known names, and numbers in range. */
export function checkRequestOptions(options: RequestOptions, what: string, redact: (text: string) => string): void {
  checkKnown(options, REQUEST_OPTIONS, what, redact);
  // Most calls pass no options, or headers only (checked where they are read): nothing to check.
  if (Object.keys(options).some((name) => name !== 'headers')) checkOptions(options, what);
}

/**
 * `init` as `Headers`, or a `ValidationError` when fetch would refuse it (a line break in a value,
 * a space in a name). The message never echoes the value: it may hold a credential.
 */
export function toHeaders(init: RequestOptions['headers'], what: string): Headers {
  let headers: Headers;
  try {
    // Headers only reads the pairs: a readonly list is one its type does not name. null means none.
    headers = new Headers((init ?? undefined) as HeadersInit | undefined);
  } catch {
    throw configError(`${what}: headers must be names and values fetch accepts (a name is a token, a value has no line breaks).`, 'headers');
  }
  // Kept, it would be dropped without a word: the key in it would never be sent.
  if (headers.has('authorization')) throw configError(`${what}: headers must not hold Authorization: the client sends "Authorization: Bearer <apiKey>" itself. Pass the key as apiKey.`, 'headers');
  return headers;
}

const NO_LOG = () => {};

/**
 * The logger with every method above `level` silenced. A logger that throws (or rejects) is reported like a
 * listener that throws: a log line must not fail the call it is about (a created pet included).
 */
function levelled(logger: Logger, level: LogLevel): Logger {
  // One per logger and level, so a coordinator warning through several clients' loggers can
  // tell two clients of one logger apart from two loggers, and says it once to each logger.
  const known = LEVELLED.get(logger) ?? {};
  LEVELLED.set(logger, known);
  return (known[level] ??= makeLevelled(logger, level));
}
const LEVELLED = new WeakMap<Logger, Partial<Record<LogLevel, Logger>>>();

function makeLevelled(logger: Logger, level: LogLevel): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const at = (name: Exclude<LogLevel, 'off'>): Logger[typeof name] => {
    if (LOG_LEVELS.indexOf(name) > rank) return NO_LOG;
    return (message, ...args) => isolated(() => logger[name](message, ...args));
  };
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

/**
 * The URL meant by a base URL written as a host without its scheme (`localhost:4010/v1`,
 * `petstore.example/v1`): http for the loopback, https elsewhere; `undefined` for anything else.
 */
function schemeless(raw: string): string | undefined {
  const host = /^([a-z\d-]+(?:\.[a-z\d-]+)*)(?::\d{1,5})?(?:\/|$)/i.exec(raw)?.[1];
  if (!host || (!host.includes('.') && host.toLowerCase() !== 'localhost')) return undefined;
  return `${/^(localhost|127\.\d+\.\d+\.\d+)$/i.test(host) ? 'http' : 'https'}://${raw}`;
}

/**
 * The base URL, resolved against the page's address where there is one (a relative `'/api/v1'`
 * in a browser), checked: http(s), no credentials, ending in `/v1`. Messages never echo a
 * password, nor the API key (a proxy's base URL may hold it: `https://proxy.example/KEY/v1`).
 */
function resolveBaseUrl(raw: string | URL, source: string, redact: (text: string) => string): URL {
  // A URL is quoted cut short: a base URL of thousands of characters made a message as long.
  const quote = (text: string) => `"${clip(redact(text), 200)}"`;
  let url: URL;
  try {
    url = new URL(raw, pageUrl());
  } catch {
    const meant = schemeless(String(raw));
    const hint = meant ? `Did you mean ${quote(meant)}?` : 'Use an absolute one such as "https://<host>/v1" (or, in a browser, a path such as "/api/v1").';
    throw configError(`baseUrl ${quote(String(raw))}${source} is not a URL. ${hint}`, 'baseUrl');
  }
  if (url.username || url.password) {
    throw configError(`baseUrl${source} must not hold credentials (user:password@). The client authenticates with apiKey; pass the URL without them.`, 'baseUrl');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    // `localhost:4010/v1` parses, with `localhost:` for its scheme: a host whose scheme was left out.
    const meant = schemeless(String(raw));
    const hint = meant ? ` Did you mean ${quote(meant)}?` : '';
    throw configError(`baseUrl${source} must be an http or https URL; got the scheme "${clip(url.protocol, 20)}".${hint}`, 'baseUrl');
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/v1') || url.search || url.hash) {
    throw configError(`baseUrl ${quote(String(raw))}${source} must end in the version segment /v1, such as "https://<host>/v1".`, 'baseUrl');
  }
  url.pathname = `${path}/`;
  // An empty query or fragment (`…/v1?`) reads as none above, but stays in href, which every
  // call's path is appended to: `…/v1/?pets` went to /v1/.
  url.search = '';
  url.hash = '';
  return url;
}

/** The coordinator of this client's key: the one given, bound to it when it serves several. */
function bound(coordinator: ClientOptions['coordinator'], scope: CoordinatorScope): RateLimitCoordinator {
  if (!coordinator) return createMemoryCoordinator();
  if (!coordinator.bind) return coordinator as RateLimitCoordinator;
  const own = guarded('PetStoreClient options: coordinator.bind()', () => coordinator.bind!(scope), '', 'threw');
  // The client calls bind once: what it returns must be the coordinator itself, not another binder.
  if (!hasMethods(own, COORDINATOR_METHODS)) throw configError(`PetStoreClient options: coordinator.bind() must return a coordinator (with ${COORDINATOR_METHODS.join(', ')}).`, 'coordinator');
  return own;
}

/**
 * Applies defaults and environment variables (`PETSTORE_API_KEY`, `PETSTORE_BASE_URL`,
 * `PETSTORE_LOG`, where an environment exists) and checks every option once, throwing
 * `ValidationError` that says what to fix.
 */
export function resolveOptions(options: ClientOptions = {}): ResolvedOptions {
  // A value read from the environment is blamed on its variable: the code does not show it.
  const from = (name: string, given: unknown) => (given == null ? ` (read from the ${name} environment variable)` : '');
  const apiKey = (options as ClientOptions | null)?.apiKey ?? env('PETSTORE_API_KEY');
  // Made before the key is checked: an unknown option's name may be the key, pasted by mistake.
  const redact = redactor(typeof apiKey === 'string' ? [apiKey] : []);
  checkKnown(options, CLIENT_OPTIONS, 'PetStoreClient options', redact);
  checkOptions(options, 'PetStoreClient options');
  if (!apiKey) throw missing('apiKey', 'apiKey', 'PETSTORE_API_KEY', options.apiKey);
  // Neither message quotes the key: a wrong type or a pasted header may still hold a real one.
  if (typeof apiKey !== 'string') {
    const kind = Array.isArray(apiKey) ? 'an array' : typeof apiKey === 'object' ? 'an object' : `a ${typeof apiKey}`;
    throw configError(`apiKey must be a string; got ${kind}.`, 'apiKey');
  }
  if (/^bearer\s/i.test(apiKey)) {
    throw configError(`apiKey${from('PETSTORE_API_KEY', options.apiKey)} must be the key alone, without "Bearer ": the client sends "Authorization: Bearer <apiKey>" itself.`, 'apiKey');
  }
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    // The key itself is never part of the message: it may be a real key with a stray newline.
    throw configError(
      `apiKey${from('PETSTORE_API_KEY', options.apiKey)} must be visible ASCII characters with no spaces, tabs or line breaks (check for a trailing newline).`,
      'apiKey',
    );
  }
  const rawBase = options.baseUrl ?? env('PETSTORE_BASE_URL');
  if (!rawBase) throw missing('baseUrl', 'baseUrl: "https://<host>/v1"', 'PETSTORE_BASE_URL', options.baseUrl);
  const baseUrl = resolveBaseUrl(rawBase, from('PETSTORE_BASE_URL', options.baseUrl), redact);
  // An empty PETSTORE_LOG means the default, like an empty PETSTORE_API_KEY means none. Read in
  // any case; one that is no level is warned about below, not thrown: a variable for logging
  // must not stop an app (openai-node's OPENAI_LOG is read so too).
  const envLog = (options.logLevel == null && env('PETSTORE_LOG')?.trim().toLowerCase()) || undefined;
  const envLevel = LOG_LEVELS.find((level) => level === envLog);
  const logLevel = options.logLevel ?? envLevel ?? DEFAULTS.logLevel;
  const headers = toHeaders(options.headers, 'PetStoreClient options');
  // Defaults only: the caller's own headers win, as a call's do.
  const fallback = (name: string, value: string) => headers.has(name) || headers.set(name, value);
  fallback('Accept', 'application/json');
  // Browsers refuse to let a page set User-Agent; the X- header names the SDK there.
  if (hostProcess() === undefined) fallback('X-Animal-Store-Client', SDK_ID);
  else fallback('User-Agent', `${SDK_ID} (${runtimeName()})`);
  headers.set('Authorization', `Bearer ${apiKey}`);
  const log = levelled(options.logger ?? console, logLevel);
  if (envLog && !envLevel) {
    log.warn(`The PETSTORE_LOG environment variable is "${clip(redact(envLog), 40)}", which is not one of ${LOG_LEVELS.join(', ')}: logging at ${logLevel}, the default.`);
  }
  // Each default applied the one way, in DEFAULTS' order (toJSON shows them so); logLevel, which
  // PETSTORE_LOG may give, is the one resolved above.
  const tuned = {} as Record<string, unknown>;
  for (const name in DEFAULTS) tuned[name] = options[name as keyof typeof DEFAULTS] ?? DEFAULTS[name as keyof typeof DEFAULTS];
  return {
    apiKey,
    redact,
    baseUrl,
    ...(tuned as typeof DEFAULTS),
    logLevel,
    coordinator: bound(options.coordinator, { apiKey, baseUrl: baseUrl.href, warn: log.warn }),
    log,
    debug: logLevel === 'debug',
    fetch: options.fetch,
    headers: Object.freeze(Object.fromEntries(headers)),
    onDeprecation: options.onDeprecation,
  };
}
