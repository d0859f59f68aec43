/**
 * `PetStoreClient`: the typed client of the Animal Store API.
 *
 * @module
 */
import ky, { type Options } from 'ky';
import type * as z from 'zod/mini';
import {
  check,
  ListPetsQuerySchema,
  NewPetSchema,
  OrderListSchema,
  PetIdSchema,
  PetListSchema,
  PetSchema,
  type ListPetsQuery,
  type NewPet,
  type Pet,
} from '../schemas/index.js';
import type { AcquireDecision, RateLimitStore } from './coordinator.js';
import { DeprecationReporter, GET_PET_NOTICE, noticeFromHeaders } from './deprecation.js';
import {
  AbortError,
  ApiError,
  ConnectionError,
  describeCall,
  PetStoreError,
  ResponseValidationError,
  ThrottledError,
  TimeoutError,
  ValidationError,
  type CallInfo,
} from './errors.js';
import { ClientEvents, type ClientEventMap } from './events.js';
import { observeResponse } from './headers.js';
import { checkRequestOptions, DEFAULTS, guarded, REQUEST_OPTIONS, resolveOptions, toHeaders, type ClientOptions, type LogLevel, type RequestOptions, type ResolvedOptions } from './options.js';
import { backoffMs, withRetries } from './retry.js';
import { clip, REDACTED } from '../redact.js';
import { isolated, isPermissionDenied, isThenable, orAbort, reportListenerError, sleep } from '../runtime.js';

/** A call's parsed result together with the HTTP response it came from. */
export interface ApiResponse<T> {
  /** The parsed, validated body: what the plain method resolves to. */
  data: T;
  /** The final response (after retries), for its `status` and `headers`. Its body is already read. */
  response: Response;
  /** The response's `X-Request-Id`, to quote when reporting a problem. */
  requestId: string | undefined;
}

/**
 * The client's operations, resolving to {@link ApiResponse} (data plus the raw `Response`)
 * instead of the data alone. Reached through {@link PetStoreClient.withResponse}.
 */
export interface WithResponse {
  /** {@link PetStoreClient.listPets}, with the response. */
  listPets(query?: ListPetsQuery, options?: RequestOptions): Promise<ApiResponse<Pet[]>>;
  /** {@link PetStoreClient.createPet}, with the response (status 201 and `Location`). */
  createPet(pet: NewPet, options?: RequestOptions): Promise<ApiResponse<Pet>>;
  /**
   * {@link PetStoreClient.getPet}, with the response.
   * @deprecated `GET /pets/{petId}` is removed on 2030-12-05. Keep the `id` `createPet` returns, or find the pet with `listPets`.
   */
  getPet(petId: number, options?: RequestOptions): Promise<ApiResponse<Pet>>;
  /** {@link PetStoreClient.listOrders}, with the response. */
  listOrders(options?: RequestOptions): Promise<ApiResponse<unknown>>;
}

/** One call: what to send and how to read the answer. */
interface Operation<T> {
  name: keyof WithResponse;
  method: 'GET' | 'POST';
  /** The URL, query included, built once per call. */
  url: string;
  /** The JSON text to send, if any. */
  body?: string;
  schema: z.ZodMiniType<T>;
}

/** What one call's attempts share: its options, read once, and what the attempts leave. */
interface CallState {
  call: CallInfo;
  signal: AbortSignal | undefined;
  /** Per attempt. */
  timeout: number;
  headers: Readonly<Record<string, string>>;
  /** The call's maxRetries: how many rate-limit waits it started with. */
  retries: number;
  /** How many rate-limit waits the call has left; each wait for a window spends one. */
  waits: number;
  /**
   * Whether the last attempt may have been acted on: its answer was a success, or an abort caught
   * it in flight. An abort that ends the call says so (p-retry rethrows only the signal's reason).
   */
  mayHaveSucceeded?: boolean;
  /** The block the last attempt's 429 set for every call (ms), as recorded: its retry's delay. */
  blockForMs?: number | undefined;
  /** The last attempt the gate let through: a later one was refused before it was sent. */
  sent?: number;
}

/** The reason an attempt's controller aborts with when its deadline passes. */
const DEADLINE = Symbol('deadline');
/** What `#send` throws when the `fetch` option resolved to something that is not a `Response`. */
class NotAResponse {
  constructor(readonly value: unknown) {}
}
/** The reason an attempt's controller aborts with when the body is too large. */
const TOO_LARGE = Symbol('too large');

const NOTHING_SENT = ' Nothing was sent.';

/** Why a call waits (or is refused) after probes of an unknown budget were lost: see AcquireDecision's `lost`. */
const LOST = 'the last requests probing the unknown rate-limit budget went unanswered';

/** Decodes whole bodies only (never `stream: true`), so one decoder, which keeps no state between them, serves every call. */
const UTF8 = new TextDecoder();

/** The kinds of decision that hold a call back (see AcquireDecision). */
const WAITS = ['blocked', 'spent', 'busy', 'lost'];

/** Checks a call's argument before anything is sent; `ValidationError` names the field. */
function argument<S extends z.ZodMiniType>(schema: S, input: unknown, what: string, operation: string): z.infer<S> {
  const checked = guarded(`${operation}: ${what}`, () => check(schema, input, what), NOTHING_SENT);
  if (!checked.success) {
    // An issue about the argument as a whole names it (petId, pet, query), as one in an object names its field.
    const issues = checked.issues.map((issue) => (issue.path.length ? issue : { ...issue, path: [what] }));
    throw new ValidationError({ issues, message: `${operation}: ${checked.message}.${NOTHING_SENT}` });
  }
  return checked.data;
}

/**
 * The JSON text `createPet` sends, and what is checked is what is sent: the pet as given (so
 * messages speak of what the caller wrote), then the text itself, which a `toJSON` may change.
 * Fields passed through as given may hold what JSON cannot carry (a BigInt, a cycle).
 */
function petBody(pet: unknown): string {
  argument(NewPetSchema, pet, 'pet', 'createPet');
  const text: string | undefined = guarded('createPet: pet', () => JSON.stringify(pet), NOTHING_SENT, 'could not be encoded as JSON');
  argument(NewPetSchema, JSON.parse(text ?? 'null'), 'pet', 'createPet');
  return text!;
}

/**
 * The query string of `listPets`: the spec's parameters, then any other as given (the service
 * decides on those). A value a query string cannot carry is a `ValidationError`, which shows an
 * API key used as the parameter's name as `[redacted]`.
 */
function listQuery({ limit, status, ...rest }: ListPetsQuery & Record<string, unknown>, redact: (text: string) => string): string {
  // Both spec values are validated: an integer and a member of the status enum need no escaping.
  const search = [limit === undefined ? '' : `limit=${limit}`, status === undefined ? '' : `status=${status}`];
  for (const [name, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    let pair: string | undefined;
    try {
      // encodeURIComponent throws a URIError for a lone surrogate, in the name or the value.
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') pair = `${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
    } catch {}
    if (pair === undefined) {
      const shown = redact(name);
      // From JavaScript, a call's option is easily passed in the query: say where it goes.
      const option = REQUEST_OPTIONS.includes(name) ? `; ${name} is an option of the call: pass it second, listPets(query, { ${name} })` : '';
      const message = `listPets: query.${clip(shown, 40)} must be a string, number or boolean a query string can carry (whole characters, no lone surrogate)${option}.${NOTHING_SENT}`;
      // An array or object may hold the key anywhere: it is not quoted (as zod's issues quote no input).
      const input = typeof value === 'string' ? redact(value) : typeof value === 'object' || typeof value === 'function' ? undefined : value;
      throw new ValidationError({ issues: [{ code: 'custom', path: [shown], message, input }], message });
    }
    search.push(pair);
  }
  return search.filter(Boolean).join('&');
}

/** The body as JSON when it parses, else the text itself. */
function parseBody(text: string): { json: unknown } | { text: string } {
  try {
    return { json: JSON.parse(text) };
  } catch {
    return { text };
  }
}

/** A fetch failure that happened before the request left: nothing can have been acted on. */
function neverSent(cause: unknown): boolean {
  const code = (cause as { cause?: { code?: string } } | undefined)?.cause?.code ?? (cause as { code?: string } | undefined)?.code;
  return ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'].includes(code ?? '') || isPermissionDenied(cause);
}

/**
 * A body the runtime could not decode (bytes that are not the gzip, br or zstd their
 * Content-Encoding names), told apart from a cut connection where the runtime says so: undici's
 * cause has zlib's code (Z_DATA_ERROR, ERR__ERROR… for brotli, ZSTD_error…), Bun's error a code
 * of its own (ZlibError, BrotliDecompressionError…), Deno's only a message (Invalid gzip header,
 * brotli error). Chromium tells neither apart (a TypeError, network error).
 */
function undecodable(error: unknown): boolean {
  const { code, message, cause } = (error ?? {}) as { code?: unknown; message?: unknown; cause?: { code?: unknown } };
  return /^(z_|err__)|zlib|brotli|zstd|gzip/i.test(`${cause?.code ?? code ?? message}`);
}

/** A duration as the user gave it: whole seconds as seconds (60000 reads "60 s"), else milliseconds (1500 reads "1500 ms"). */
const duration = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/**
 * Why a wait is not taken: `waiting 120 s would exceed maxRetryDelay (5 s)`, or `waiting without
 * end` for one past the dates a Date holds. The gate's refusal and an error not retried say it alike.
 */
const exceedsMaxRetryDelay = (waitMs: number, maxRetryDelay: number, endless = false) =>
  `waiting ${endless ? 'without end' : `${Math.ceil(waitMs / 1000)} s`} would exceed maxRetryDelay (${duration(maxRetryDelay)})`;

/**
 * How long a call waits for the answers of requests in flight (which may use up the budget, or
 * probe an unknown one): as long as it would wait for its own answer, or `maxRetryDelay` when
 * that is longer. Not `maxRetryDelay` alone: 0 there would refuse every call of a burst but the
 * probe, whose answer is a round trip away, not a rate-limit window.
 */
const busyLimit = (timeout: number, maxRetryDelay: number) => Math.max(timeout, maxRetryDelay);

/**
 * A coordinator of the user's own that failed (threw, rejected, or answered what is not a
 * decision): nothing may be sent without its decision. (An abort is an AbortError either way:
 * #call makes it one.)
 */
const coordinatorFailed = (call: CallInfo, error: unknown) =>
  new PetStoreError({ message: `${describeCall(call)}: not sent: the rate-limit coordinator failed; ${error === undefined ? 'it threw undefined' : "see the error's cause"}.`, cause: error });

/**
 * The error of a call the gate did not send: what it would have waited for, and why it did not
 * (the wait exceeds maxRetryDelay, or the call has no rate-limit waits left). `leaseMs` bounds how
 * long a request in flight holds its slot.
 */
function throttled(decision: Exclude<AcquireDecision, { kind: 'granted' }>, { call, waits, retries, timeout }: CallState, maxRetryDelay: number, leaseMs: number): ThrottledError {
  const where = `${describeCall(call)}: not sent: `;
  // What bounds a call's waits for answers (busy, lost): the longer of the two, and which it is.
  const answersLimit = duration(busyLimit(timeout, maxRetryDelay));
  const binding = timeout >= maxRetryDelay ? "the call's timeout" : 'maxRetryDelay';
  if (decision.kind === 'busy') {
    return new ThrottledError({
      message: decision.reason
        ? `${where}${decision.reason}; that went on for ${answersLimit} (${binding}). Retry later.`
        : `${where}requests in flight may use up the rate-limit budget (or are probing it), and none of them answered within ${answersLimit} (${binding}). Retry later, or check that the service answers.`,
      code: 'budget_spent',
      retryAfterMs: leaseMs,
      call,
    });
  }
  const { waitMs, kind } = decision;
  const code = kind === 'blocked' ? (decision.banned ? 'api_key_banned' : 'rate_limited') : 'budget_spent';
  // A lost probe's backoff takes no wait of the call's (it is no window): only its length refuses it.
  const noWaits = kind !== 'lost' && waits <= 0;
  // An endless wait, or one past the dates a Date holds (a coordinator of the user's own can
  // answer either), has no date to show: toISOString would throw a RangeError.
  const until = new Date(Date.now() + waitMs);
  const endless = Number.isNaN(until.getTime());
  // maxRetries: 0 allows no wait at all: the call did not wait for any window.
  const why = noWaits
    ? retries > 0 ? 'the call already waited for as many rate-limit windows as maxRetries allows' : 'maxRetries: 0 lets the call wait for none'
    : kind === 'lost'
      ? `waiting ${duration(waitMs)} would exceed the ${answersLimit} a call waits for answers in all (${binding})`
      : exceedsMaxRetryDelay(waitMs, maxRetryDelay, endless);
  const what = kind === 'lost' ? `${LOST} (timed out or dropped), so the next probe waits` : code === 'api_key_banned' ? 'the API key is banned' : code === 'budget_spent' ? 'the rate-limit budget is spent' : 'a 429 asked every client to wait';
  const advice = kind === 'lost' ? 'or check that the service answers within the timeout' : `raise ${noWaits ? 'maxRetries' : 'maxRetryDelay'}${code === 'api_key_banned' ? '' : ', or use a plan with a higher limit'}`;
  return new ThrottledError({
    message: `${where}${what}${endless ? '' : ` until ${until.toISOString()}`}, and ${why}. Retry later, ${advice}.`,
    code,
    retryAfterMs: waitMs,
    call,
  });
}

/**
 * Whether the service may have acted on a request it answered with this status: a success, or a
 * 5xx (the service failed part way, or a gateway answered for it: the errors guide says a
 * `createPet` is not resent after one, as the pet may exist). A 4xx says it did not.
 */
const mayHaveActed = (response: Response) => response.ok || response.status >= 500;

/**
 * A coordinator's pending decision, or the caller's abort, whichever comes first: a coordinator of
 * the user's own may not heed `request.signal` (or never answer). A slot it grants after the abort
 * goes back unspent.
 */
async function decided(pending: PromiseLike<AcquireDecision>, signal: AbortSignal | undefined): Promise<AcquireDecision> {
  const decision = Promise.resolve(pending);
  try {
    return await orAbort(decision, signal);
  } catch (error) {
    if (signal?.aborted) {
      decision.then(
        (late) => late?.kind === 'granted' && isolated(() => late.release(false)),
        () => {},
      );
    }
    throw error;
  }
}

/**
 * Adds `sentence` to the error's message, first ending its last sentence where it does not end
 * (a service's own message may lack the period, or end with the request id).
 */
function addSentence(error: PetStoreError, sentence: string): void {
  error.message += `${/[.!?…]$/.test(error.message) ? '' : '.'} ${sentence}`;
}

/** The sentence a failed `createPet` that may have been acted on ends with. */
function mayHaveCreated(call: CallInfo, mayHaveSucceeded: boolean): string {
  return call.method === 'POST' && mayHaveSucceeded ? ' The pet may have been created: list pets to check before creating it again.' : '';
}

/**
 * The caller's signal, followed by one of ours: any object with AbortSignal's methods passes the
 * option check, and its getters and methods run here, once, where one that throws is a
 * ValidationError, not an error of its own from deep inside a call. `unfollow` ends the call's
 * listener (one that throws then has nothing left to stop).
 */
function follow(given: AbortSignal | undefined): { signal: AbortSignal | undefined; unfollow?: () => void } {
  if (!given) return { signal: given };
  const controller = new AbortController();
  const abort = () => controller.abort(given.reason);
  if (given.aborted) abort();
  else given.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    unfollow: () => {
      try {
        given.removeEventListener('abort', abort);
      } catch {}
    },
  };
}

/** The caller's signal ended the call: our error, with the signal's reason as its cause. */
function aborted(call: CallInfo, signal: AbortSignal, mayHaveSucceeded: boolean): AbortError {
  return new AbortError({
    message: `${describeCall(call)}: aborted by the caller's signal; its reason is the error's cause.${mayHaveCreated(call, mayHaveSucceeded)}`,
    cause: signal.reason,
    call,
    mayHaveSucceeded,
  });
}

/**
 * What a fetch failure says, with its cause's reason: undici's `fetch failed` alone hides whether
 * the connection was refused, the host unknown or the certificate rejected
 * (`fetch failed: connect ECONNREFUSED 127.0.0.1:4010`).
 */
function describeFailure(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  const inner = (cause as { cause?: unknown } | undefined)?.cause;
  if (!(inner instanceof Error)) return message;
  const code = (inner as { code?: unknown }).code;
  // Several addresses tried (localhost as ::1 and 127.0.0.1) fail as an AggregateError with no
  // message; TLS spoken to a plain-http server fails as a line of OpenSSL internals.
  const detail = code === 'ERR_SSL_WRONG_VERSION_NUMBER' ? 'the server does not speak TLS: is it http, where baseUrl says https?' : inner.message.trim() || code;
  return typeof detail === 'string' && detail && detail !== message ? `${message}: ${detail}` : message;
}

/**
 * A fetch failure as it was thrown or, when its text holds the key (Deno's fetch quotes the URL,
 * which may hold it; a fetch of the user's own may quote the Authorization header), a copy of the
 * same class (an Error or any object) whose own fields (message, stack, code…) show [redacted],
 * its cause likewise.
 */
function withoutKey(error: unknown, redact: (text: string) => string, depth = 0): unknown {
  if (typeof error === 'string') return redact(error);
  // An Error or any other object (a fetch may reject with a plain one): its own strings are redacted.
  if (!error || typeof error !== 'object') return error;
  // A chain deeper than runtimes nest (undici's: 2), or a cycle, is cut there: kept, its rest showed the key.
  if (depth > 4) return undefined;
  const copy = Object.create(Object.getPrototypeOf(error) as object | null) as object;
  let changed = false;
  for (const name of Object.getOwnPropertyNames(error)) {
    // Read, not copied as described: V8's stack is an accessor of the original's internals.
    const value: unknown = Reflect.get(error, name);
    const safe = name === 'cause' ? withoutKey(value, redact, depth + 1) : typeof value === 'string' ? redact(value) : value;
    changed ||= safe !== value;
    Object.defineProperty(copy, name, { value: safe, enumerable: Object.prototype.propertyIsEnumerable.call(error, name), writable: true, configurable: true });
  }
  return changed ? copy : error;
}

/**
 * The typed client of the Animal Store API: validated arguments and responses, one error
 * hierarchy, retries, and rate limiting coordinated across all calls of the client (or, with a
 * shared `coordinator`, across processes).
 *
 * @example
 * ```ts
 * import { PetStoreClient } from '@animal-store/sdk';
 *
 * const client = new PetStoreClient({ apiKey: process.env.PETSTORE_API_KEY, baseUrl: 'https://petstore.example/v1' });
 * const pets = await client.listPets({ limit: 10, status: 'available' });
 * const rex = await client.createPet({ name: 'Rex', categoryId: 1 });
 * ```
 */
export class PetStoreClient {
  readonly #options: ResolvedOptions;
  readonly #deprecations: DeprecationReporter;
  readonly #events = new ClientEvents();

  // `rateLimit` and `withResponse` are `declare`d: the constructor assigns them (see errors.ts).

  /**
   * The rate-limit state as the last response announced it (shared with every client of the
   * same key and base URL that shares this client's coordinator), as an external store.
   *
   * @example
   * ```ts
   * const stop = client.rateLimit.subscribe((state) => console.log(state?.remaining));
   * // React: useSyncExternalStore(client.rateLimit.subscribe, client.rateLimit.getSnapshot)
   * ```
   */
  declare readonly rateLimit: RateLimitStore;

  /**
   * The same operations, resolving to `{ data, response, requestId }` so the status and headers can be read.
   *
   * @example
   * ```ts
   * const { data: pet, response } = await client.withResponse.createPet({ name: 'Rex', categoryId: 1 });
   * console.log(response.status, response.headers.get('Location'), pet.id);
   * ```
   */
  declare readonly withResponse: WithResponse;

  /**
   * Creates a client. `apiKey` and `baseUrl` fall back to `PETSTORE_API_KEY` and
   * `PETSTORE_BASE_URL` where an environment exists.
   *
   * @throws ValidationError when the key is missing or malformed, the base URL is not an http(s)
   * URL ending in `/v1` (or holds credentials), or an option is invalid. The message never
   * holds the key.
   */
  constructor(options: ClientOptions = {}) {
    this.#options = guarded('PetStoreClient options', () => resolveOptions(options));
    // What `util.inspect` and `console.log` show in Node: the settings, with the key redacted.
    // Set here, not as a `[Symbol.for(…)]()` method: esbuild keeps a class with a computed key
    // in every bundle, and the client with it, ky and p-retry, for an app that imports a schema.
    Object.defineProperty(this, Symbol.for('nodejs.util.inspect.custom'), { value: this.toString });
    const log = this.#options.log;
    // Deprecations already reach the console through the default warning; a logger of the
    // user's own gets them too.
    this.#deprecations = new DeprecationReporter(this.#options.onDeprecation, options.logger ? (notice) => log.warn(notice.message) : () => {});
    // Bound: a coordinator of the user's own may be a class with these methods on its prototype.
    const { coordinator } = this.#options;
    this.rateLimit = { getSnapshot: coordinator.getSnapshot.bind(coordinator), subscribe: coordinator.subscribe.bind(coordinator) };
    // The base URL ends in a slash and was checked once: joining strings is all a path needs.
    const url = (path: string) => this.#options.baseUrl.href + path;
    this.withResponse = Object.freeze({
      listPets: async (query?: ListPetsQuery, options?: RequestOptions) => {
        const search = listQuery(argument(ListPetsQuerySchema, query ?? {}, 'query', 'listPets'), this.#options.redact);
        return this.#call({ name: 'listPets', method: 'GET', url: url(search ? `pets?${search}` : 'pets'), schema: PetListSchema }, options);
      },
      createPet: async (pet: NewPet, options?: RequestOptions) =>
        this.#call(
          { name: 'createPet', method: 'POST', url: url('pets'), body: petBody(pet), schema: PetSchema },
          options,
        ),
      getPet: async (petId: number, options?: RequestOptions) => {
        const id = argument(PetIdSchema, petId, 'petId', 'getPet');
        this.#deprecations.report(GET_PET_NOTICE);
        return this.#call({ name: 'getPet', method: 'GET', url: url(`pets/${id}`), schema: PetSchema }, options);
      },
      listOrders: async (options?: RequestOptions) =>
        this.#call({ name: 'listOrders', method: 'GET', url: url('store/orders'), schema: OrderListSchema }, options),
    });
  }

  /**
   * Lists pets, at most `limit` (1–100, default 20 on the server), optionally only those with `status`.
   *
   * @example
   * ```ts
   * const available = await client.listPets({ status: 'available', limit: 50 });
   * ```
   */
  async listPets(query?: ListPetsQuery, options?: RequestOptions): Promise<Pet[]> {
    return (await this.withResponse.listPets(query, options)).data;
  }

  /**
   * Adds a pet and resolves to it with its assigned `id`. Retried after a 429 only: after a 5xx,
   * a timeout or a network error it is never sent again, so no duplicate pet is created; the
   * error's `mayHaveSucceeded` then says whether the pet may exist.
   *
   * @example
   * ```ts
   * const pet = await client.createPet({ name: 'Rex', categoryId: 1, status: 'available' });
   * ```
   */
  async createPet(pet: NewPet, options?: RequestOptions): Promise<Pet> {
    return (await this.withResponse.createPet(pet, options)).data;
  }

  /**
   * Fetches one pet by id. The first call warns once (see `onDeprecation`).
   *
   * @deprecated `GET /pets/{petId}` is removed on 2030-12-05. Keep the `id` `createPet` returns, or find the pet with `listPets`.
   * @example
   * ```ts
   * const pet = await client.getPet(42);
   * ```
   */
  async getPet(petId: number, options?: RequestOptions): Promise<Pet> {
    return (await this.withResponse.getPet(petId, options)).data;
  }

  /**
   * Lists the store's orders: the JSON the service answers, as it is. The API shows nothing of
   * this listing's payload (not even that it is an array), so it is `unknown`: narrow it before use.
   *
   * @example
   * ```ts
   * const orders = await client.listOrders();
   * ```
   */
  async listOrders(options?: RequestOptions): Promise<unknown> {
    return (await this.withResponse.listOrders(options)).data;
  }

  /**
   * Listens to what the client does: each `request` sent, each `response` received, each
   * `retry` and each rate-limit `wait`. Listeners get plain objects without the API key; one that
   * throws is reported and changes nothing. Returns the function that stops listening.
   *
   * @throws ValidationError for an event the client does not emit (a misspelt one, from
   * JavaScript, would never be called) or a listener that is not a function.
   * @example
   * ```ts
   * const stop = client.on('retry', ({ operation, retry, delayMs, error }) =>
   *   console.log(`${operation}: retry ${retry} in ${delayMs} ms after ${error.name}`),
   * );
   * ```
   */
  on<E extends keyof ClientEventMap>(event: E, listener: (payload: ClientEventMap[E]) => void): () => void {
    return this.#events.on(event, listener, this.#options.redact);
  }

  /** The client's settings for logs, with the API key redacted. */
  toJSON(): {
    apiKey: string;
    baseUrl: string;
    maxRetries: number;
    timeout: number;
    maxRetryDelay: number;
    throttle: boolean;
    maxResponseBytes: number;
    logLevel: LogLevel;
  } {
    const options = this.#options;
    const json: Record<string, unknown> = { apiKey: REDACTED, baseUrl: options.redact(options.baseUrl.href.replace(/\/$/, '')) };
    for (const name in DEFAULTS) json[name] = options[name as keyof typeof DEFAULTS];
    return json as ReturnType<PetStoreClient['toJSON']>;
  }

  /** A one-line description for logs, with the API key redacted. */
  toString(): string {
    return `PetStoreClient ${JSON.stringify(this.toJSON())}`;
  }

  async #call<T>(operation: Operation<T>, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const what = `${operation.name} options`;
    // What errors, logs and events say of the call: a key the URL holds (a query value, a proxy's
    // path segment) shows as [redacted]. The request itself goes to operation.url.
    const call: CallInfo = { operation: operation.name, method: operation.method, url: this.#options.redact(operation.url) };
    // Read once: a getter or proxy that throws is a ValidationError, and no attempt reads them again.
    const { retries, unfollow, ...read } = guarded(
      what,
      () => {
        checkRequestOptions(options, what, this.#options.redact);
        // null from JavaScript means the client's value, as undefined does (a default in the pattern takes undefined only).
        const { signal, timeout, maxRetries, headers } = options;
        // The signal is followed last, once nothing else can refuse the call: a refused call would leave its listener.
        return { timeout: timeout ?? this.#options.timeout, retries: maxRetries ?? this.#options.maxRetries, headers: this.#headersFor(operation, headers), ...follow(signal) };
      },
      NOTHING_SENT,
    );
    const { signal } = read;
    if (signal?.aborted) throw aborted(call, signal, false);
    // Rate-limit waits are shared by all attempts of the call, like its retries.
    const state: CallState = { call, ...read, retries, waits: retries };
    let attempt = 0;
    // Set when retries were left but the wait the last error asked for exceeds maxRetryDelay.
    let tooLongMs: number | undefined;
    try {
      return await withRetries(() => this.#attempt(operation, state, ++attempt), {
        method: operation.method,
        retries,
        maxRetryDelay: this.#options.maxRetryDelay,
        signal,
        blockForMs: () => state.blockForMs,
        onRetry: (error, retry, delayMs) => {
          // The error's message starts with the call's description, which the line already has.
          const where = `${describeCall(call)}: `;
          this.#options.log.info(`${where}retry ${retry} of ${retries}${delayMs ? ` in ${delayMs} ms` : ''} after ${error.name}: ${error.message.replace(where, '')}`);
          this.#events.emit('retry', { ...call, retry, delayMs, error });
        },
        onWaitTooLong: (delayMs) => (tooLongMs = delayMs),
      });
    } catch (error) {
      // Aborted in a wait, nothing was in flight: an earlier attempt that may have been acted on
      // would not have been retried. Aborted once a successful answer had arrived (p-retry checks
      // the signal after the attempt), the service acted on it.
      if (signal?.aborted) throw aborted(call, signal, state.mayHaveSucceeded === true);
      // Retried, it says so: ECONNREFUSED after a second and a half of backoff reads as a mystery
      // otherwise. An attempt the gate refused (a ThrottledError) was never sent: it ends the call.
      if (error instanceof PetStoreError) {
        // Not retried with retries left, it says why: "HTTP 503" alone reads as if none were allowed.
        if (tooLongMs !== undefined) addSentence(error, `Not retried: ${exceedsMaxRetryDelay(tooLongMs, this.#options.maxRetryDelay)}.`);
        if (attempt > 1) addSentence(error, state.sent === attempt ? `This was attempt ${attempt} of ${retries + 1}.` : `The call was refused before its attempt ${attempt} of ${retries + 1}.`);
      }
      throw error;
    } finally {
      unfollow?.();
    }
  }

  /**
   * Waits until the coordinator grants a slot. Throws `ThrottledError` without waiting when the
   * wait would exceed `maxRetryDelay` or the call has no waits left.
   */
  async #admit(state: CallState): Promise<(unanswered?: boolean) => void> {
    const { call, timeout, signal } = state;
    const { coordinator, throttle, maxRetryDelay, log } = this.#options;
    const request = { throttle, leaseMs: timeout + 5_000, signal };
    let busySince: number | undefined;
    let busyTold = false;
    /** When the lost probe's backoff last told of ends (performance.now()). */
    let lostUntil = 0;
    for (;;) {
      let decision: AcquireDecision | PromiseLike<AcquireDecision>;
      try {
        decision = coordinator.acquire(request);
        if (isThenable(decision)) decision = await decided(decision, signal);
        // Read here, where a TypeError is the coordinator's failure, not one that leaves the client.
        if (!(decision.kind === 'granted' ? typeof decision.release === 'function' : WAITS.includes(decision.kind))) throw new TypeError('acquire() answered no decision');
      } catch (error) {
        throw coordinatorFailed(call, error);
      }
      if (decision.kind === 'granted') {
        const { release } = decision;
        // A release that throws is reported like a listener: the response is the call's answer
        // (a created pet included), and a rejection would invite a retry that creates another.
        return (unanswered) => {
          try {
            release(unanswered);
          } catch (error) {
            reportListenerError(error);
          }
        };
      }
      const { kind } = decision;
      // Said in the log and the refusal; a coordinator of the user's own may say anything, so the key is hidden as everywhere.
      const reason = kind === 'busy' && typeof decision.reason === 'string' && decision.reason ? this.#options.redact(decision.reason) : undefined;
      // A coordinator of the user's own may answer NaN or less than 0: NaN reads as "until
      // something changes" (bounded like every wait), below 0 as none.
      const waitMs = Number.isNaN(decision.waitMs) ? Infinity : Math.max(0, decision.waitMs);
      // Measured on the clock that does not step: on Date, a step back of an hour held the call an hour.
      const now = performance.now();
      const limit = busyLimit(timeout, maxRetryDelay);
      const tell = (why: string) => {
        log.debug(`${describeCall(call)}: waiting ${waitMs} ms until ${new Date(Date.now() + waitMs).toISOString()} (${why}).`);
        this.#events.emit('wait', { ...call, reason: kind, waitMs, until: new Date(Date.now() + waitMs) });
      };
      if (kind === 'busy' || kind === 'lost') {
        // Waits for answers, bounded by busyLimit in all, and ended by any change (a slot
        // released, a response, from another call or process):
        // - busy: slots in flight may use up the budget (or are probing an unknown one), so ask
        //   again when one is released or a response arrives; calls do not queue for a whole
        //   timeout each behind a server that does not answer.
        // - lost: a lost probe's backoff is a wait for answers, not a window. It takes none of the
        //   call's waits (bounded by maxRetryDelay alone, it refused every retry with maxRetryDelay
        //   0, and with the defaults nothing bounded a call that waited through probe after lost
        //   probe), and is refused when longer than what is left.
        busySince ??= now;
        const left = busySince + limit - now;
        if (kind === 'busy' ? left > 0 : waitMs <= left) {
          if (kind === 'lost') {
            // Told once, not again on each wake-up within the same backoff.
            if (waitMs > 0 && now >= lostUntil) tell(`${LOST}: the next probe is held back`);
            lostUntil = now + waitMs;
          } else if (!busyTold) {
            // Told once, with what is left of the limit (less than all of it after a lost probe's wait).
            busyTold = true;
            log.debug(`${describeCall(call)}: waiting up to ${left} ms ${reason ? `(${reason})` : 'for the answers of requests in flight (they may use up the rate-limit budget, or are probing it)'}.`);
            this.#events.emit('wait', { ...call, reason: kind, waitMs: left, until: new Date(Date.now() + left) });
          }
          await sleep(Math.min(waitMs, left), signal, (done) => coordinator.changed(done)).catch((error: unknown) => {
            throw coordinatorFailed(call, error);
          });
          continue;
        }
      } else if (waitMs <= maxRetryDelay && state.waits > 0) {
        state.waits--;
        tell(kind === 'blocked' ? 'a 429 asked every client to wait' : 'the rate-limit budget is spent until its reset');
        await sleep(waitMs, signal);
        // Requests in flight found after the window are a new wait, with its own limit.
        busySince = undefined;
        busyTold = false;
        continue;
      }
      throw throttled(kind === 'busy' ? { kind, waitMs, reason } : { ...decision, waitMs }, state, maxRetryDelay, request.leaseMs);
    }
  }

  /**
   * One attempt: pass the gate, send once, read the body, and turn the outcome into data or our
   * error. One controller and one deadline end it at whatever stage it is, body included.
   */
  async #attempt<T>(operation: Operation<T>, state: CallState, attempt: number): Promise<ApiResponse<T>> {
    const { call, signal, timeout, headers } = state;
    const release = await this.#admit(state);
    // Aborted while the slot was being granted (after the gate's last look at the signal): the
    // request has not left, so the slot goes back unspent.
    if (signal?.aborted) {
      release(false);
      throw aborted(call, signal, false);
    }
    state.sent = attempt;
    const controller = new AbortController();
    const abort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(() => controller.abort(DEADLINE), timeout);
    const started = performance.now();
    let response: Response | undefined;
    let text: string | undefined;
    /** The request may have reached the service, and no answer came: it may be counted still. */
    let unanswered = false;
    try {
      if (this.#events.has('request')) this.#events.emit('request', { ...call, attempt });
      response = await this.#send(operation, headers, controller.signal);
      // Observed as soon as the head arrives: a 429 blocks every call before its body is read.
      const recorded = [this.#observe(response, state, attempt, false)];
      this.#deprecations.report(noticeFromHeaders(operation.name, response.headers, this.#options.redact));
      text = await this.#read(response, controller);
      // A 429 whose Error record announces a ban is observed again, so refusals say so.
      if (response.status === 429 && /"code"\s*:\s*"api_key_banned"/.test(text)) recorded.push(this.#observe(response, state, attempt, true));
      // A shared store records asynchronously: the call settles once it has (within the attempt's
      // deadline), so rateLimit shows this response, and a process that exits at once loses no 429.
      if (recorded.some(Boolean)) await Promise.race([Promise.all(recorded), new Promise((done) => controller.signal.addEventListener('abort', done, { once: true }))]);
    } catch (error) {
      const fail = (thrown: unknown) => this.#failure(thrown, call, timeout, signal, response);
      let failure: unknown;
      // A value that cannot even be read (no toString, a getter or proxy that throws) fails as one.
      try {
        failure = fail(error);
      } catch {
        failure = fail(new TypeError('a value that could not be read'));
      }
      if (failure instanceof AbortError) state.mayHaveSucceeded = failure.mayHaveSucceeded;
      unanswered = response === undefined && (failure as { mayHaveSucceeded?: boolean }).mayHaveSucceeded === true;
      throw failure;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
      release(unanswered);
    }
    state.mayHaveSucceeded = response.ok;
    const requestId = response.headers.get('X-Request-Id') ?? undefined;
    const listened = this.#events.has('response');
    if (this.#options.debug || listened) {
      // What the log line and the event show, hidden like an error's (#hide): a proxy may name a
      // request by its token. The caller's ApiResponse gets the header as sent, like the data.
      const shownId = requestId && this.#options.redact(requestId);
      const durationMs = performance.now() - started;
      if (this.#options.debug) {
        this.#options.log.debug(
          `${operation.name} ${operation.method} ${call.url} → ${response.status} in ${durationMs.toFixed(1)} ms (attempt ${attempt}${shownId ? `, request id ${shownId}` : ''})`,
        );
      }
      if (listened) this.#events.emit('response', { ...call, attempt, status: response.status, durationMs, requestId: shownId });
    }
    let body = parseBody(text ?? '');
    const checked = response.ok && 'json' in body ? check(operation.schema, body.json, 'response') : undefined;
    if (checked?.success) return { data: checked.data, response, requestId };
    // The answer goes into an error, which is logged and shown: a key the service echoed
    // ("Invalid API key sk_…", a proxy's debug page of the request) is hidden there, and only it.
    // JSON is searched as JSON.stringify writes it: a server may escape a key's characters (PHP
    // writes "/" as \/, .NET "+" as \u002B), which the text then matched nowhere.
    body = parseBody(this.#options.redact('json' in body ? JSON.stringify(body.json) : body.text));
    const value = 'json' in body ? body.json : body.text;
    if (!response.ok) {
      const error = ApiError.generate({ status: response.status, headers: this.#hide(response.headers), body: value, call });
      // fetch follows a redirect, but sends no Authorization to another origin (http → https
      // included): what answered never saw the key, which a bare 401 would not tell.
      const to = response.redirected && new URL(response.url).origin;
      if (to && to !== this.#options.baseUrl.origin) error.message += ` The request was redirected to ${this.#options.redact(to)}, which fetch sends no Authorization to: set baseUrl to the service's own address.`;
      throw error;
    }
    // A success: the service acted, whatever came back.
    const error = new ResponseValidationError({
      message: `${describeCall(call)}: ${checked ? `the response does not match the API's schema: ${checked.message}.` : `the response (HTTP ${response.status}) is not JSON. Check that baseUrl points at the Animal Store API.`}${mayHaveCreated(call, true)}`,
      issues: checked?.issues ?? [],
      body: value,
      status: response.status,
      call,
    });
    this.#options.log.error(error.message);
    throw error;
  }

  /**
   * A response's headers for an error, which is logged and shown: where a value holds the key (a
   * `WWW-Authenticate` that quotes it, a proxy's debug header), a copy with it hidden.
   */
  #hide(headers: Headers): Headers {
    let hidden: Headers | undefined;
    for (const [name, value] of headers) {
      const safe = this.#options.redact(value);
      if (safe !== value) (hidden ??= new Headers(headers)).set(name, safe);
    }
    return hidden ?? headers;
  }

  /**
   * Tells the coordinator what a response said about the rate limit. A 429 that names no wait
   * blocks for the backoff of this call's `attempt`, so repeated ones back off exponentially.
   * Records the block in `state` (its retry waits it). Returns the recording when the
   * coordinator's is asynchronous (a shared store's), never rejecting.
   */
  #observe(response: Response, state: CallState, attempt: number, banned: boolean): Promise<void> | undefined {
    const observation = observeResponse(response.status, response.headers, Date.now(), banned, () => backoffMs(attempt));
    // A 429 observed again for its ban draws another backoff: the coordinator keeps the longer block.
    state.blockForMs = banned ? Math.max(state.blockForMs ?? 0, observation.blockForMs!) : observation.blockForMs;
    let observed: void | Promise<void>;
    try {
      observed = this.#options.coordinator.observe(observation);
    } catch (error) {
      // A coordinator of the user's own that fails to record is reported like a listener: the
      // response is still the call's answer (a created pet included).
      reportListenerError(error);
      return;
    }
    // Recorded or not, the response is the call's answer.
    return isThenable(observed) ? Promise.resolve(observed).catch(() => {}) : undefined;
  }

  /**
   * A call's headers, once for all its attempts: the client's, the call's own on top (never
   * Authorization: {@link toHeaders} refuses it), and the body's type when it has one and the call did not name it. The
   * client's own, uncopied, when nothing is added.
   */
  #headersFor(operation: Operation<unknown>, init: RequestOptions['headers']): Readonly<Record<string, string>> {
    if (!init && operation.body === undefined) return this.#options.headers;
    const headers = new Headers(this.#options.headers);
    if (init) for (const [name, value] of toHeaders(init, `${operation.name} options`)) headers.set(name, value);
    if (operation.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    return Object.fromEntries(headers);
  }

  /** Sends one request through ky (its retry and timeout off: ours are the only ones). */
  #send(operation: Operation<unknown>, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<Response> {
    const base = this.#options.fetch ?? ((request: Request, init?: RequestInit) => globalThis.fetch(request, init));
    const sent = ky(operation.url, {
      method: operation.method,
      headers,
      body: operation.body,
      timeout: false,
      retry: 0,
      throwHttpErrors: false,
      // The attempt's signal goes to fetch itself: handed to ky, it would be merged with ky's
      // own through AbortSignal.any on every request, a cost the attempt does not need.
      fetch: async (request: Request, init?: RequestInit) => {
        const response: unknown = await base(request, { ...init, signal });
        // A fetch of the user's own (a hand-written mock) may resolve to something else.
        if (typeof (response as Response | null)?.headers?.get !== 'function' || typeof (response as Response).status !== 'number') throw new NotAResponse(response);
        return response as Response;
      },
    } as Options);
    // A fetch that ignores the signal (an in-process server's) must not hold the attempt: the
    // abort takes effect at once either way.
    return orAbort(sent, signal);
  }

  /** Reads the body, cancelling the stream the moment the attempt's controller aborts or the size cap is passed. */
  async #read(response: Response, controller: AbortController): Promise<string> {
    const max = this.#options.maxResponseBytes;
    const declared = response.headers.get('Content-Length');
    if (declared !== null && Number(declared) > max) {
      controller.abort(TOO_LARGE);
      void response.body?.cancel().catch(() => {});
      throw TOO_LARGE;
    }
    if (!response.body) return '';
    const reader = response.body.getReader();
    const cancel = () => void reader.cancel().catch(() => {});
    controller.signal.addEventListener('abort', cancel, { once: true });
    try {
      // The bytes, decoded once at the end: text decoded chunk by chunk and joined is a rope that
      // JSON.parse first copies flat, a cost the floor's response.text() does not pay.
      const chunks: Uint8Array[] = [];
      let total = 0;
      for (;;) {
        const { done, value } = await reader.read();
        controller.signal.throwIfAborted();
        if (done) break;
        total += value.byteLength;
        if (total > max) {
          controller.abort(TOO_LARGE);
          throw TOO_LARGE;
        }
        chunks.push(value);
      }
      // Most bodies arrive as one chunk: copying it would cost more than decoding it.
      let bytes = chunks[0] ?? new Uint8Array();
      if (chunks.length > 1) {
        bytes = new Uint8Array(total);
        total = 0;
        for (const chunk of chunks) {
          bytes.set(chunk, total);
          total += chunk.byteLength;
        }
      }
      return UTF8.decode(bytes);
    } finally {
      controller.signal.removeEventListener('abort', cancel);
    }
  }

  /** Turns whatever ended an attempt into one of our errors. */
  #failure(error: unknown, call: CallInfo, timeout: number, signal: AbortSignal | undefined, response: Response | undefined): unknown {
    if (error instanceof ThrottledError) return error;
    if (error instanceof NotAResponse) {
      const what = error.value === null ? 'null' : typeof error.value;
      return new PetStoreError({ message: `${describeCall(call)}: the fetch option resolved to something that is not a Response (${what}). Return a Response, such as new Response(body, init).` });
    }
    // The request had left: whatever the answer, the service may have acted on it.
    if (signal?.aborted) return aborted(call, signal, response ? mayHaveActed(response) : true);
    const head = response ? { status: response.status, headers: this.#hide(response.headers) } : {};
    // ky's errors hold the request, and with it the Authorization header: keep only their cause.
    const cause = (error as { name?: string } | undefined)?.name === 'NetworkError' ? (error as Error).cause : error;
    // A POST that left may have been acted on; the API has no idempotency key to tell.
    const mayHaveSucceeded = response !== undefined ? mayHaveActed(response) : !neverSent(cause);
    const created = mayHaveCreated(call, mayHaveSucceeded);
    const where = `${describeCall(call)}: `;
    if (error === DEADLINE || (error as Error | undefined)?.name === 'TimeoutError') {
      return new TimeoutError({
        message: `${where}no complete response within ${timeout} ms (the timeout option). Raise timeout, or check the network.${created}`,
        call,
        mayHaveSucceeded,
        ...head,
      });
    }
    if (error === TOO_LARGE) {
      return new ConnectionError({
        message: `${where}the response body is larger than maxResponseBytes (${this.#options.maxResponseBytes} bytes); it was not read. Check that baseUrl points at the Animal Store API, or raise maxResponseBytes.${created}`,
        call,
        mayHaveSucceeded,
        ...head,
      });
    }
    const permission = isPermissionDenied(cause);
    const reason = permission
      ? `the runtime refused the request (${(cause as Error).name}); grant network access (Deno: --allow-net)`
      : response
        ? undecodable(cause)
          ? 'the response body could not be decoded: it is not in the compression its Content-Encoding names'
          : 'the connection was cut while reading the response body'
        : // A fetch of the user's own (a proxy's agent) may quote the request's Authorization.
          `the request failed before a response arrived (${this.#options.redact(describeFailure(cause))})`;
    return new ConnectionError({
      message: `${where}${reason}. ${permission ? 'This is not retried.' : 'Check the network and baseUrl.'}${created}`,
      cause: withoutKey(cause, this.#options.redact),
      call,
      mayHaveSucceeded,
      ...head,
    });
  }
}
