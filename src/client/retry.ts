/**
 * The client's one retry layer: p-retry around single attempts.
 *
 * Rules: a 429 is retried on any operation (the server did not act on it); its wait is the
 * coordinator's, which blocks every call of the key until the window ends. 408, 5xx, network
 * errors and timeouts are retried for GET only, with full-jitter exponential backoff (0.5 s base,
 * 8 s cap, drawn below `maxRetryDelay` when that is shorter) or `Retry-After`, because a POST that
 * may have reached the server must never be sent twice. A wait longer than
 * `maxRetryDelay` is not waited: the error is thrown at once, saying why. Errors
 * that cannot go away (a refused permission, a throttled call) are never retried.
 *
 * @internal
 * @module
 */
import pRetry from 'p-retry';
import { ApiError, ConnectionError, RateLimitError } from './errors.js';
import { retryAfterNow } from './headers.js';
import { isPermissionDenied, sleep } from '../runtime.js';

/** Backoff base and cap, in milliseconds. */
const BACKOFF = { baseMs: 500, capMs: 8_000 };

/**
 * Full jitter: a random wait between 0 and `min(cap, base * 2^(retry - 1), limitMs)`. `retry`
 * counts from 1; `limitMs` is the longest wait the caller allows.
 */
export function backoffMs(retry: number, limitMs = Infinity): number {
  return Math.floor(Math.random() * Math.min(BACKOFF.capMs, BACKOFF.baseMs * 2 ** (retry - 1), limitMs));
}

/**
 * How long to wait before retrying after `error`, in milliseconds, or `undefined` when the error
 * must not be retried. `retry` counts from 1.
 */
function retryDelayMs(error: unknown, options: RetryOptions, retry: number): number | undefined {
  const { method } = options;
  // The wait every call of the key now observes, as the 429 was recorded: Retry-After, else the
  // spent budget's reset, else the backoff the coordinator blocks for.
  if (error instanceof RateLimitError) return options.blockForMs() ?? 0;
  if (method !== 'GET') return undefined;
  if (error instanceof ApiError && (error.status === 408 || error.status >= 500)) {
    // The backoff is the client's own choice: drawn past maxRetryDelay, the retry was left to chance.
    return retryAfterNow(error.headers) ?? backoffMs(retry, options.maxRetryDelay);
  }
  if (error instanceof ConnectionError) {
    // A permission the runtime refused stays refused.
    return isPermissionDenied(error.cause) ? undefined : backoffMs(retry, options.maxRetryDelay);
  }
  return undefined;
}

/** What {@link withRetries} needs to know about the call. */
export interface RetryOptions {
  method: string;
  retries: number;
  maxRetryDelay: number;
  signal: AbortSignal | undefined;
  /** The block the last attempt's 429 set for every call, in milliseconds, as it was recorded. */
  blockForMs: () => number | undefined;
  /** Told of each retry before its wait, with the error retried (the only kinds retryDelayMs retries). */
  onRetry: (error: ApiError | ConnectionError, retry: number, delayMs: number) => void;
  /** Told when retries were left but the wait the error asked for exceeds `maxRetryDelay`: the error ends the call. */
  onWaitTooLong: (delayMs: number) => void;
}

/**
 * Runs `attempt` and retries it by the rules above. A 429's wait happens in the coordinator (the
 * next attempt waits there with every other call), so its retry here waits nothing; other waits
 * end early with the signal's reason when it aborts.
 */
export function withRetries<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  return pRetry(attempt, {
    retries: options.retries,
    // p-retry has no custom delay: its own is 0, and the chosen wait happens in shouldRetry.
    minTimeout: 0,
    signal: options.signal,
    shouldRetry: async ({ error, retriesConsumed }) => {
      const wait = retryDelayMs(error, options, retriesConsumed + 1);
      if (wait === undefined) return false;
      if (wait > options.maxRetryDelay) {
        options.onWaitTooLong(wait);
        return false;
      }
      options.onRetry(error as ApiError | ConnectionError, retriesConsumed + 1, wait);
      // A 429's window is waited in the coordinator, with every other call of the key.
      if (!(error instanceof RateLimitError)) await sleep(wait, options.signal);
      return true;
    },
  });
}
