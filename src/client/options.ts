/**
 * The client's options: their defaults, in one place, and the one function that resolves them.
 *
 * @module
 */
import * as z from 'zod/mini';
import { check } from '../schemas/index.js';
import type { DeprecationNotice } from './deprecation.js';
import { ValidationError } from './errors.js';
import { hostProcess } from './runtime.js';

/** A `fetch` implementation: the global one, or a test's (`server.fetch` of the reference server). */
export type Fetch = (input: Request, init?: RequestInit) => Promise<Response>;

/** Options of {@link PetStoreClient}. Every one is optional. */
export interface ClientOptions {
  /**
   * The API key, sent as `Authorization: Bearer <key>`. It never appears in errors or logs.
   * @default process.env.PETSTORE_API_KEY
   */
  apiKey?: string;
  /**
   * The service's base URL, ending in `/v1` (production and staging are both just base URLs).
   * @default process.env.PETSTORE_BASE_URL
   */
  baseUrl?: string;
  /**
   * How many times a failed call is retried: 429s on any operation; 408, 5xx, network errors
   * and timeouts on GET only.
   * @default 2
   */
  maxRetries?: number;
  /**
   * How long one attempt may take before it fails with `TimeoutError`, in milliseconds.
   * @default 30_000
   */
  timeout?: number;
  /**
   * The longest the client waits before a retry or for a rate-limit window, in milliseconds.
   * A longer wait throws `RateLimitError` at once instead.
   * @default 60_000
   */
  maxRetryDelay?: number;
  /**
   * Whether to hold requests back once the known rate-limit budget is spent, instead of
   * spending requests on 429s.
   * @default true
   */
  throttle?: boolean;
  /**
   * The `fetch` to send requests with.
   * @default globalThis.fetch
   */
  fetch?: Fetch;
  /**
   * Extra headers sent with every request. `Authorization` is always set from `apiKey`.
   * @default {}
   */
  headers?: HeadersInit;
  /**
   * Called once per client and operation when an operation is deprecated, instead of the
   * default warning (`process.emitWarning` in Node, else `console.warn`).
   * @default undefined
   */
  onDeprecation?: (notice: DeprecationNotice) => void;
}

/** Options of one call; each overrides the client's option of the same name. */
export interface RequestOptions {
  /** Cancels the call, its waits and the request in flight; the call rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Per-attempt timeout in milliseconds. @default the client's `timeout` */
  timeout?: number;
  /** How many retries this call may make. @default the client's `maxRetries` */
  maxRetries?: number;
  /** Extra headers for this call, merged over the client's. */
  headers?: HeadersInit;
}

/** The defaults of {@link ClientOptions}; no default is repeated elsewhere. */
export const DEFAULTS = Object.freeze({
  /** Retries per call. */
  maxRetries: 2,
  /** Per-attempt timeout: 30 s. */
  timeout: 30_000,
  /** The longest single wait before a retry or for a rate-limit window: 60 s. */
  maxRetryDelay: 60_000,
  /** Hold requests back once the known budget is spent. */
  throttle: true,
});

/** Options after defaults and environment variables are applied and every value is checked. */
export interface ResolvedOptions {
  apiKey: string;
  /** The base URL with a trailing slash, so paths resolve below `/v1/`. */
  baseUrl: URL;
  maxRetries: number;
  timeout: number;
  maxRetryDelay: number;
  throttle: boolean;
  fetch: Fetch | undefined;
  headers: Headers;
  onDeprecation: ((notice: DeprecationNotice) => void) | undefined;
}

const Milliseconds = z.number().check(z.minimum(0), z.maximum(2 ** 31 - 1));

/** Schema of the numeric options, shared by the client and by each call. */
const TuningSchema = z.object({
  maxRetries: z.optional(z.int().check(z.minimum(0), z.maximum(100))),
  timeout: z.optional(z.number().check(z.positive(), z.maximum(2 ** 31 - 1))),
  maxRetryDelay: z.optional(Milliseconds),
});

/** Checks `maxRetries`, `timeout` and `maxRetryDelay`, throwing `ValidationError` that names the field. */
export function checkTuning(options: Pick<ClientOptions, 'maxRetries' | 'timeout' | 'maxRetryDelay'>, what: string): void {
  const checked = check(TuningSchema, options, what);
  if (!checked.success) throw new ValidationError(checked.issues, `${what}: ${checked.message}.`);
}

function configError(message: string, path: string): ValidationError {
  return new ValidationError([{ code: 'custom', path: [path], message, input: undefined }], message);
}

/**
 * Applies defaults and environment variables (`PETSTORE_API_KEY`, `PETSTORE_BASE_URL`, where
 * `process.env` exists) and checks every option once, throwing `ValidationError` that says what to fix.
 */
export function resolveOptions(options: ClientOptions = {}): ResolvedOptions {
  const env = hostProcess()?.env ?? {};
  const apiKey = options.apiKey ?? env.PETSTORE_API_KEY;
  if (!apiKey) {
    throw configError('apiKey is missing. Pass new PetStoreClient({ apiKey }) or set the PETSTORE_API_KEY environment variable.', 'apiKey');
  }
  const rawBase = options.baseUrl ?? env.PETSTORE_BASE_URL;
  if (!rawBase) {
    throw configError(
      'baseUrl is missing. Pass new PetStoreClient({ baseUrl: "https://<host>/v1" }) or set the PETSTORE_BASE_URL environment variable.',
      'baseUrl',
    );
  }
  let baseUrl: URL;
  try {
    baseUrl = new URL(rawBase);
  } catch {
    throw configError(`baseUrl "${rawBase}" is not an absolute URL. Use one such as "https://<host>/v1".`, 'baseUrl');
  }
  const path = baseUrl.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/v1') || baseUrl.search || baseUrl.hash) {
    throw configError(`baseUrl "${rawBase}" must end in the version segment /v1, such as "https://<host>/v1".`, 'baseUrl');
  }
  baseUrl.pathname = `${path}/`;
  checkTuning(options, 'PetStoreClient options');
  return {
    apiKey,
    baseUrl,
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    timeout: options.timeout ?? DEFAULTS.timeout,
    maxRetryDelay: options.maxRetryDelay ?? DEFAULTS.maxRetryDelay,
    throttle: options.throttle ?? DEFAULTS.throttle,
    fetch: options.fetch,
    headers: new Headers(options.headers),
    onDeprecation: options.onDeprecation,
  };
}
