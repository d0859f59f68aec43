/**
 * `PetStoreClient`: the typed client of the Animal Store API.
 *
 * @module
 */
import ky, { NetworkError as KyNetworkError, TimeoutError as KyTimeoutError } from 'ky';
import { AbortError } from 'p-retry';
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
import { DeprecationReporter, GET_PET_NOTICE, noticeFromHeaders } from './deprecation.js';
import { ApiError, ConnectionError, ResponseValidationError, TimeoutError, ValidationError } from './errors.js';
import { checkTuning, resolveOptions, type ClientOptions, type RequestOptions, type ResolvedOptions } from './options.js';
import { RateLimitGate, rateLimitWaitMs, type RateLimitStore, type WaitBudget } from './rate-limit.js';
import { withRetries } from './retry.js';

/** A call's parsed result together with the HTTP response it came from. */
export interface ApiResponse<T> {
  /** The parsed, validated body: what the plain method resolves to. */
  data: T;
  /** The final response (after retries), for its `status` and `headers`. Its body is already read. */
  response: Response;
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
   * @deprecated `GET /pets/{petId}` is removed on 2030-12-05. Use `listPets({ status })` instead.
   */
  getPet(petId: number, options?: RequestOptions): Promise<ApiResponse<Pet>>;
  /** {@link PetStoreClient.listOrders}, with the response. */
  listOrders(options?: RequestOptions): Promise<ApiResponse<unknown[]>>;
}

interface Operation<T> {
  name: keyof WithResponse;
  method: 'GET' | 'POST';
  path: string;
  searchParams?: Record<string, string | number | undefined>;
  json?: unknown;
  schema: z.ZodMiniType<T>;
}

const REDACTED = '[redacted]';

/** Checks a call's argument before anything is sent; `ValidationError` names the field. */
function argument<S extends z.ZodMiniType>(schema: S, input: unknown, what: string, operation: string): z.infer<S> {
  const checked = check(schema, input, what);
  if (!checked.success) {
    throw new ValidationError(checked.issues, `${operation}: ${checked.message}. Nothing was sent.`);
  }
  return checked.data;
}

/** The body as JSON when it parses, else the text itself. */
function parseBody(text: string): { json: unknown } | { text: string } {
  try {
    return { json: JSON.parse(text) };
  } catch {
    return { text };
  }
}

/**
 * The typed client of the Animal Store API: validated arguments and responses, one error
 * hierarchy, retries, and rate limiting coordinated across all calls of the client.
 *
 * @example
 * ```ts
 * import { PetStoreClient, RateLimitError } from '@animal-store/sdk';
 *
 * const client = new PetStoreClient({ apiKey: process.env.PETSTORE_API_KEY, baseUrl: 'https://petstore.example/v1' });
 * const pets = await client.listPets({ limit: 10, status: 'available' });
 * const rex = await client.createPet({ name: 'Rex', categoryId: 1 });
 * ```
 */
export class PetStoreClient {
  readonly #options: ResolvedOptions;
  readonly #gate: RateLimitGate;
  readonly #deprecations: DeprecationReporter;

  /**
   * The rate-limit state as the last response announced it, as an external store.
   *
   * @example
   * ```ts
   * const stop = client.rateLimit.subscribe((state) => console.log(state?.remaining));
   * // React: useSyncExternalStore(client.rateLimit.subscribe, client.rateLimit.getSnapshot)
   * ```
   */
  readonly rateLimit: RateLimitStore;

  /**
   * The same operations, resolving to `{ data, response }` so the status and headers can be read.
   *
   * @example
   * ```ts
   * const { data: pet, response } = await client.withResponse.createPet({ name: 'Rex', categoryId: 1 });
   * console.log(response.status, response.headers.get('Location'), pet.id);
   * ```
   */
  readonly withResponse: WithResponse;

  /**
   * Creates a client. `apiKey` and `baseUrl` fall back to `PETSTORE_API_KEY` and
   * `PETSTORE_BASE_URL` where `process.env` exists.
   *
   * @throws ValidationError when the key is missing, the base URL does not end in `/v1`, or an option is invalid.
   */
  constructor(options: ClientOptions = {}) {
    this.#options = resolveOptions(options);
    this.#gate = new RateLimitGate(this.#options.throttle, this.#options.maxRetryDelay);
    this.#deprecations = new DeprecationReporter(this.#options.onDeprecation);
    this.rateLimit = { getSnapshot: this.#gate.getSnapshot, subscribe: this.#gate.subscribe };
    this.withResponse = Object.freeze({
      listPets: async (query?: ListPetsQuery, options?: RequestOptions) =>
        this.#call(
          {
            name: 'listPets',
            method: 'GET',
            path: 'pets',
            searchParams: argument(ListPetsQuerySchema, query ?? {}, 'query', 'listPets'),
            schema: PetListSchema,
          },
          options,
        ),
      createPet: async (pet: NewPet, options?: RequestOptions) =>
        this.#call(
          { name: 'createPet', method: 'POST', path: 'pets', json: argument(NewPetSchema, pet, 'pet', 'createPet'), schema: PetSchema },
          options,
        ),
      getPet: async (petId: number, options?: RequestOptions) => {
        const id = argument(PetIdSchema, petId, 'petId', 'getPet');
        this.#deprecations.report(GET_PET_NOTICE);
        return this.#call({ name: 'getPet', method: 'GET', path: `pets/${id}`, schema: PetSchema }, options);
      },
      listOrders: async (options?: RequestOptions) =>
        this.#call({ name: 'listOrders', method: 'GET', path: 'store/orders', schema: OrderListSchema }, options),
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
   * a timeout or a network error it is never sent again, so no duplicate pet is created.
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
   * @deprecated `GET /pets/{petId}` is removed on 2030-12-05. Use `listPets({ status })` instead.
   * @example
   * ```ts
   * const pet = await client.getPet(42);
   * ```
   */
  async getPet(petId: number, options?: RequestOptions): Promise<Pet> {
    return (await this.withResponse.getPet(petId, options)).data;
  }

  /**
   * Lists the store's orders. The API shows nothing of an order, so each is `unknown`.
   *
   * @example
   * ```ts
   * const orders = await client.listOrders();
   * ```
   */
  async listOrders(options?: RequestOptions): Promise<unknown[]> {
    return (await this.withResponse.listOrders(options)).data;
  }

  /** The client's settings for logs, with the API key redacted. */
  toJSON(): Record<string, unknown> {
    const { apiKey: _key, baseUrl, fetch, onDeprecation, headers, ...rest } = this.#options;
    return { apiKey: REDACTED, baseUrl: baseUrl.href.replace(/\/$/, ''), ...rest };
  }

  /** A one-line description for logs, with the API key redacted. */
  toString(): string {
    return `PetStoreClient ${JSON.stringify(this.toJSON())}`;
  }

  /** What `util.inspect` and `console.log` show in Node: the settings, with the API key redacted. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  async #call<T>(operation: Operation<T>, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    checkTuning(options, `${operation.name} options`);
    const { signal } = options;
    signal?.throwIfAborted();
    const retries = options.maxRetries ?? this.#options.maxRetries;
    // Window waits in the gate are shared by all attempts of the call, like its retries.
    const budget = { waits: retries };
    try {
      return await withRetries(() => this.#attempt(operation, options, budget), {
        method: operation.method,
        retries,
        maxRetryDelay: this.#options.maxRetryDelay,
        signal,
      });
    } catch (error) {
      throw signal?.aborted ? signal.reason : error;
    }
  }

  /** One attempt: pass the gate, send once, read the body, and turn the outcome into data or our error. */
  async #attempt<T>(operation: Operation<T>, options: RequestOptions, budget: WaitBudget): Promise<ApiResponse<T>> {
    const { signal } = options;
    let release: () => void;
    try {
      release = await this.#gate.acquire(signal, budget);
    } catch (error) {
      // Refused by the gate: nothing was sent, and waiting longer is exactly what was ruled out.
      throw new AbortError(error as Error);
    }
    let response: Response;
    let text: string;
    try {
      const timeout = options.timeout ?? this.#options.timeout;
      const deadline = Date.now() + timeout;
      response = await this.#send(operation, options, timeout);
      this.#gate.observe(response.status, response.headers);
      this.#deprecations.report(noticeFromHeaders(operation.name, response.headers));
      text = await this.#readBody(operation, response, deadline - Date.now(), timeout, signal);
    } finally {
      release();
    }
    const body = parseBody(text);
    const value = 'json' in body ? body.json : body.text;
    if (!response.ok) {
      throw ApiError.generate({
        status: response.status,
        headers: response.headers,
        body: value,
        retryAfterMs: response.status === 429 ? rateLimitWaitMs(response.headers) : undefined,
      });
    }
    if (!('json' in body)) {
      throw new ResponseValidationError(
        `${this.#describe(operation)}: the response (HTTP ${response.status}) is not JSON. Check that baseUrl points at the Animal Store API.`,
        [],
        value,
        response.status,
      );
    }
    const checked = check(operation.schema, body.json, 'response');
    if (!checked.success) {
      throw new ResponseValidationError(
        `${this.#describe(operation)}: the response does not match the API's schema: ${checked.message}.`,
        checked.issues,
        value,
        response.status,
      );
    }
    return { data: checked.data, response };
  }

  /** Sends one request through ky (its retry off), wrapping ky's errors in ours at the boundary. */
  async #send(operation: Operation<unknown>, options: RequestOptions, timeout: number): Promise<Response> {
    const headers = new Headers(this.#options.headers);
    for (const [name, value] of new Headers(options.headers)) headers.set(name, value);
    headers.set('Accept', 'application/json');
    headers.set('Authorization', `Bearer ${this.#options.apiKey}`);
    try {
      return await ky(new URL(operation.path, this.#options.baseUrl), {
        method: operation.method,
        headers,
        json: operation.json,
        searchParams: operation.searchParams,
        timeout,
        retry: 0,
        throwHttpErrors: false,
        signal: options.signal,
        // ky always calls fetch with a Request, which is all our Fetch type promises to accept.
        fetch: this.#options.fetch as ((input: unknown, init?: RequestInit) => Promise<Response>) | undefined,
      });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (error instanceof KyTimeoutError) {
        throw this.#timeoutError(operation, timeout);
      }
      // ky's error holds the request, and with it the Authorization header: keep only its cause.
      const cause = error instanceof KyNetworkError ? error.cause : error;
      throw new ConnectionError(
        `${this.#describe(operation)}: the request failed before a response arrived (${cause instanceof Error ? cause.message : String(cause)}). Check the network and baseUrl.`,
        { cause },
      );
    }
  }

  /**
   * Reads the body within what is left of the attempt's timeout: ky's timeout ends when the
   * headers arrive, and a body that stalls must not hang the call.
   */
  #readBody(operation: Operation<unknown>, response: Response, ms: number, timeout: number, signal: AbortSignal | undefined): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        void response.body?.cancel().catch(() => {});
        reject(this.#timeoutError(operation, timeout));
      }, Math.max(0, ms));
      response.text().then(resolve, (cause: unknown) => {
        reject(
          signal?.aborted
            ? signal.reason
            : new ConnectionError(`${this.#describe(operation)}: the connection was cut while reading the response body. Check the network.`, { cause }),
        );
      }).finally(() => clearTimeout(timer));
    });
  }

  #timeoutError(operation: Operation<unknown>, timeout: number): TimeoutError {
    return new TimeoutError(`${this.#describe(operation)}: no complete response within ${timeout} ms (the timeout option). Raise timeout, or check the network.`);
  }

  #describe(operation: Operation<unknown>): string {
    return `${operation.name} (${operation.method} /${operation.path})`;
  }
}
