/**
 * Rate-limit state and the per-client gate every request passes before it is sent.
 *
 * The gate is what keeps a client from getting its key banned: after a 429 no request is sent
 * before `blockedUntil`, and with `throttle` on no more requests are in flight than the budget the
 * server last announced (one, while the budget is unknown).
 *
 * @module
 */
import { RateLimitError } from './errors.js';
import { sleep } from './runtime.js';

/** The rate-limit budget as the last response announced it. Snapshots are frozen. */
export interface RateLimitState {
  /** The request limit of the binding window (`X-RateLimit-Limit`). */
  readonly limit: number;
  /** Requests left in that window (`X-RateLimit-Remaining`). */
  readonly remaining: number;
  /** When that window resets (`X-RateLimit-Reset`). */
  readonly resetAt: Date;
  /** Until when the server asked the client to send nothing (after a 429's `Retry-After`). */
  readonly blockedUntil?: Date;
}

/**
 * The client's rate-limit state as an external store: `getSnapshot` returns the same frozen object
 * until something changes, and both methods work unbound, so
 * `useSyncExternalStore(client.rateLimit.subscribe, client.rateLimit.getSnapshot)` works in React.
 */
export interface RateLimitStore {
  /** The current state, or `undefined` before any response carried rate-limit headers. */
  readonly getSnapshot: () => RateLimitState | undefined;
  /** Calls `listener` with the new state on each change; returns the function that unsubscribes. */
  readonly subscribe: (listener: (state: RateLimitState | undefined) => void) => () => void;
}

/** How many window waits one call has left; each wait for a reset spends one. */
export interface WaitBudget {
  waits: number;
}

/** Milliseconds to wait as a response's `Retry-After` says (seconds or an HTTP-date), if it does. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('Retry-After')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The `X-RateLimit-*` headers of a response, or `undefined` when any is missing or malformed. */
function readHeaders(headers: Headers): { limit: number; remaining: number; resetAt: number } | undefined {
  const [limit, remaining, reset] = ['Limit', 'Remaining', 'Reset'].map((name) => {
    const text = headers.get(`X-RateLimit-${name}`)?.trim();
    return text && /^\d+$/.test(text) ? Number(text) : undefined;
  });
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return { limit, remaining, resetAt: reset * 1000 };
}

/** Milliseconds until the window of a 429 resets: `Retry-After`, else `X-RateLimit-Reset`. */
export function rateLimitWaitMs(headers: Headers, now = Date.now()): number | undefined {
  const reset = readHeaders(headers)?.resetAt;
  return retryAfterMs(headers, now) ?? (reset === undefined ? undefined : Math.max(0, reset - now));
}

/** The per-client gate and store of rate-limit state. Internal: users see it as {@link RateLimitStore}. */
export class RateLimitGate implements RateLimitStore {
  #state: RateLimitState | undefined;
  #listeners = new Set<(state: RateLimitState | undefined) => void>();
  #inFlight = 0;
  /** Kept apart from the state: a bare 429 (no `X-RateLimit-*`) still blocks. */
  #blockedUntil = 0;
  /** Callers waiting for a response or a released slot; each re-checks the gate when woken. */
  #wakers = new Set<() => void>();

  constructor(
    private readonly throttle: boolean,
    private readonly maxRetryDelay: number,
  ) {}

  readonly getSnapshot = (): RateLimitState | undefined => this.#state;

  readonly subscribe = (listener: (state: RateLimitState | undefined) => void): (() => void) => {
    const entry = (state: RateLimitState | undefined) => listener(state);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  };

  /**
   * Waits until a request may be sent and takes a slot; returns the function that gives it back.
   * Throws `RateLimitError` without waiting when the wait would exceed `maxRetryDelay` or the
   * call has no waits left, and `signal.reason` when the signal aborts.
   */
  async acquire(signal: AbortSignal | undefined, budget: WaitBudget): Promise<() => void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = Date.now();
      const state = this.#state;
      let until: number | undefined;
      if (this.#blockedUntil > now) {
        until = this.#blockedUntil;
      } else if (this.throttle) {
        const known = state !== undefined && state.resetAt.getTime() > now;
        // Unknown budget (none yet, or its window has reset): one request probes it, the rest
        // wait for its answer. Sending them all would turn into a burst of 429s and a ban.
        if (!known) {
          if (this.#inFlight === 0) break;
          await this.#nextChange(signal);
          continue;
        }
        if (state.remaining - this.#inFlight > 0) break;
        if (this.#inFlight > 0) {
          await this.#nextChange(signal);
          continue;
        }
        until = state.resetAt.getTime();
      } else {
        break;
      }
      const wait = until - now;
      if (wait > this.maxRetryDelay || budget.waits <= 0) throw this.#refusal(until, wait, budget.waits <= 0);
      budget.waits--;
      await sleep(wait, signal);
    }
    this.#inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
      this.#wake();
    };
  }

  /** Updates the state from a response's headers; a 429 also blocks every request until its window ends. */
  observe(status: number, headers: Headers, now = Date.now()): void {
    const read = readHeaders(headers);
    const current = this.#state;
    let next: Omit<RateLimitState, 'resetAt' | 'blockedUntil'> & { resetAt: number } | undefined = current && {
      limit: current.limit,
      remaining: current.remaining,
      resetAt: current.resetAt.getTime(),
    };
    if (read) {
      if (!next || read.resetAt > next.resetAt) next = read;
      // Responses can arrive out of order: within one window, the lowest remaining is the truth.
      else if (read.resetAt === next.resetAt) next = { ...next, limit: read.limit, remaining: Math.min(next.remaining, read.remaining) };
    }
    if (status === 429) {
      const wait = rateLimitWaitMs(headers, now);
      if (wait !== undefined) this.#blockedUntil = Math.max(this.#blockedUntil, now + wait);
    }
    this.#set(next && { ...next, blockedUntil: this.#blockedUntil > now ? this.#blockedUntil : undefined });
    this.#wake();
  }

  #set(next: { limit: number; remaining: number; resetAt: number; blockedUntil?: number } | undefined): void {
    const current = this.#state;
    if (
      next === undefined ||
      (current &&
        current.limit === next.limit &&
        current.remaining === next.remaining &&
        current.resetAt.getTime() === next.resetAt &&
        current.blockedUntil?.getTime() === next.blockedUntil)
    ) {
      return;
    }
    const state: RateLimitState = Object.freeze({
      limit: next.limit,
      remaining: next.remaining,
      resetAt: new Date(next.resetAt),
      ...(next.blockedUntil === undefined ? {} : { blockedUntil: new Date(next.blockedUntil) }),
    });
    this.#state = state;
    for (const listener of [...this.#listeners]) listener(state);
  }

  #wake(): void {
    const wakers = [...this.#wakers];
    this.#wakers.clear();
    for (const wake of wakers) wake();
  }

  #nextChange(signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#wakers.delete(wake);
        reject(signal!.reason);
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#wakers.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #refusal(until: number, wait: number, outOfWaits: boolean): RateLimitError {
    const seconds = Math.ceil(wait / 1000);
    const why = outOfWaits
      ? `the call already waited for as many rate-limit windows as maxRetries allows`
      : `waiting ${seconds} s would exceed maxRetryDelay (${Math.round(this.maxRetryDelay / 1000)} s)`;
    return new RateLimitError(
      'rate_limited',
      `Not sent: the rate limit is spent until ${new Date(until).toISOString()}, and ${why}. Retry later, raise maxRetryDelay, or use a plan with a higher limit.`,
      new Headers(),
      undefined,
      wait,
    );
  }
}
