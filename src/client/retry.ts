/**
 * The client's one retry layer: p-retry around single ky attempts (ky's own retry is off).
 *
 * Rules: a 429 is retried on any operation (the server did not act on it) after `Retry-After`,
 * else `X-RateLimit-Reset`, else backoff. 408, 5xx, network errors and timeouts are retried for
 * GET only, with full-jitter exponential backoff (0.5 s base, 8 s cap) or `Retry-After`, because a
 * POST that may have reached the server must never be sent twice. A wait longer than
 * `maxRetryDelay` is not waited: the error is thrown at once.
 *
 * @module
 */
import pRetry from 'p-retry';
import { ApiError, ConnectionError, RateLimitError } from './errors.js';
import { retryAfterMs } from './rate-limit.js';
import { sleep } from './runtime.js';

/** Backoff base and cap, in milliseconds. */
export const BACKOFF = Object.freeze({ baseMs: 500, capMs: 8_000 });

/** Full jitter: a random wait between 0 and `min(cap, base * 2^(retry - 1))`. */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(BACKOFF.capMs, BACKOFF.baseMs * 2 ** (retry - 1)));
}

/**
 * How long to wait before retrying after `error`, in milliseconds, or `undefined` when the error
 * must not be retried. `retry` counts from 1.
 */
export function retryDelayMs(error: unknown, method: string, retry: number): number | undefined {
  if (error instanceof RateLimitError) return error.retryAfterMs ?? backoffMs(retry);
  if (method !== 'GET') return undefined;
  if (error instanceof ApiError && (error.status === 408 || error.status >= 500)) {
    return retryAfterMs(error.headers) ?? backoffMs(retry);
  }
  if (error instanceof ConnectionError) return backoffMs(retry);
  return undefined;
}

/** What {@link withRetries} needs to know about the call. */
export interface RetryOptions {
  method: string;
  retries: number;
  maxRetryDelay: number;
  signal: AbortSignal | undefined;
}

/**
 * Runs `attempt` and retries it by the rules above. Waits use `setTimeout` and end early with the
 * signal's reason when it aborts. An error wrapped in p-retry's `AbortError` is thrown unwrapped,
 * never retried.
 */
export function withRetries<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  return pRetry(attempt, {
    retries: options.retries,
    // p-retry has no custom delay: its own is 0, and the server-chosen wait happens in shouldRetry.
    minTimeout: 0,
    signal: options.signal,
    shouldRetry: async ({ error, retriesConsumed }) => {
      const wait = retryDelayMs(error, options.method, retriesConsumed + 1);
      if (wait === undefined || wait > options.maxRetryDelay) return false;
      await sleep(wait, options.signal);
      return true;
    },
  });
}
