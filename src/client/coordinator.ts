/**
 * The rate-limit coordinator: the one place that decides whether a request may be sent now.
 *
 * A client asks its coordinator before every attempt and tells it what every response said. The
 * default coordinator (`createMemoryCoordinator()`) is shared by the calls of one client; a
 * shared store (`createRedisCoordinator()` from `@animal-store/sdk/redis`) makes every process
 * that uses the same store and key act as one client. Any other store can implement this
 * interface.
 *
 * Times cross this interface as durations, never as dates: each process's clock may be off, and
 * the client has already turned the server's absolute times into durations with the response's
 * `Date` header.
 *
 * @module
 */

/**
 * The rate-limit budget as the last response announced it. Snapshots are frozen and shared by
 * every reader; `Object.freeze` does not reach into a `Date`, so treat `resetAt` and
 * `blockedUntil` as read-only too (copy one to change it: `new Date(state.resetAt)`).
 */
export interface RateLimitState {
  /** The request limit of the binding window (`X-RateLimit-Limit`, or `RateLimit-Policy`'s `q`, else the `r` of the IETF `RateLimit`). */
  readonly limit: number;
  /** Requests left in that window (`X-RateLimit-Remaining`, or the IETF `r`). */
  readonly remaining: number;
  /** When that window resets, on this machine's clock. */
  readonly resetAt: Date;
  /** Until when the server asked every client of the key to send nothing (after a 429), on this machine's clock. */
  readonly blockedUntil?: Date | undefined;
}

/**
 * The client's rate-limit state as an external store: `getSnapshot` returns the same frozen object
 * until something changes, and both methods work unbound, so
 * `useSyncExternalStore(client.rateLimit.subscribe, client.rateLimit.getSnapshot)` works in React.
 */
export interface RateLimitStore {
  /** The current state, or `undefined` before any response carried rate-limit headers. */
  readonly getSnapshot: () => RateLimitState | undefined;
  /**
   * Calls `listener` with the new state on each change; returns the function that unsubscribes.
   * A listener that throws (or rejects) is reported (`reportError`, else rethrown in a microtask) and changes
   * no call's outcome.
   */
  readonly subscribe: (listener: (state: RateLimitState | undefined) => void) => () => void;
}

/** Whose rate limit a coordinator keeps: a budget and a ban belong to one key at one service. */
export interface CoordinatorScope {
  /** The API key. A shared store must not write it anywhere (hash it). */
  readonly apiKey: string;
  /** The base URL, ending in `/v1/`. */
  readonly baseUrl: string;
  /**
   * The client's logger at warn level (silent below it), for a coordinator's own warnings when
   * it was given no place of its own for them.
   */
  readonly warn?: ((message: string) => void) | undefined;
}

/** What the client asks before an attempt. */
export interface AcquireRequest {
  /**
   * Whether to hold the request back when the announced budget is spent (the client's `throttle`
   * option). A window a 429 announced is honoured either way.
   */
  readonly throttle: boolean;
  /**
   * How long the slot may be held before a shared store may give it back on its own (the
   * attempt's timeout plus a margin), so a process that dies holding it does not leak it.
   */
  readonly leaseMs: number;
  /**
   * Aborts when the call is aborted; a store should stop waiting on its backend then. The call
   * does not wait for a decision past the abort either: it ends with an `AbortError`, and a slot
   * granted after it is released at once, unspent.
   */
  readonly signal?: AbortSignal | undefined;
}

/**
 * The answer to {@link AcquireRequest}: a slot, or how long to wait before asking again.
 *
 * - `granted`: send now, and call `release()` once the response has arrived (or the attempt failed;
 *   `release(true)` when the request may have reached the service unanswered).
 * - `blocked`: a 429 told every client to wait; nothing may be sent for `waitMs`.
 * - `spent`: the announced budget is used up until its window resets in `waitMs`.
 * - `busy`: requests in flight may use up the budget (or are probing an unknown one); ask again
 *   when the state changes, or after `waitMs` at the latest. A coordinator that holds calls back
 *   for another cause says it in `reason`.
 * - `lost`: the last requests probing the unknown budget went unanswered (timed out, dropped), so
 *   the next probe is held back for `waitMs`, or until the state changes (any answer ends it). The
 *   SDK's coordinators hold it back 0.5 s after the first lost, doubling up to 60 s.
 */
export type AcquireDecision =
  | {
      readonly kind: 'granted';
      /**
       * Gives the slot back; called once the response has arrived or the attempt failed.
       * `unanswered` is `true` when the request may have reached the service but no response came
       * (a timeout, a dropped connection): the service may count it still, so it spends one of the
       * remaining budget.
       */
      readonly release: (unanswered?: boolean) => void;
    }
  | {
      readonly kind: 'blocked';
      readonly waitMs: number;
      /**
       * A ban a 429 announced (`api_key_banned`) is still running. A plain 429 whose window ends
       * later extends the block but does not hide the ban; the rest of the block, after it, is not one.
       */
      readonly banned: boolean;
    }
  | {
      readonly kind: 'busy';
      readonly waitMs: number;
      /**
       * Why calls are held back, in words, where it is not requests in flight: the client's log
       * and the `ThrottledError` of a call held back too long say it instead. The Redis
       * coordinator's fallback says that it keeps what is left of the budget for the key's other
       * processes until Redis answers.
       */
      readonly reason?: string | undefined;
    }
  | { readonly kind: 'spent' | 'lost'; readonly waitMs: number };

/** What one response said about the rate limit, in durations from when it arrived. */
export interface RateLimitObservation {
  /** The HTTP status. */
  readonly status: number;
  /**
   * The budget the response announced, or `undefined` when it carried no usable rate-limit
   * headers (a proxy stripped them, CORS hid them): the throttle then steps aside until they
   * appear again, except after a 5xx, 408 or 429 without them, whose error page says nothing of
   * the budget. A 408's or 429's budget is read like any other; a 5xx's is always `undefined`:
   * what its headers announce is not the key's budget.
   */
  readonly budget: { readonly limit: number; readonly remaining: number; readonly resetInMs: number } | undefined;
  /**
   * For a 429: how long nobody may send (from `Retry-After`, else the budget's reset, else the
   * client's backoff). `undefined` for other statuses.
   */
  readonly blockForMs: number | undefined;
  /** For a 429: whether its Error record said the key is banned (`api_key_banned`). */
  readonly banned: boolean;
}

/**
 * Decides, for every client that shares it, whether a request may be sent now. Implement it to
 * coordinate clients through a store of your own; the SDK ships an in-memory one (the default)
 * and a Redis one (`@animal-store/sdk/redis`).
 *
 * Rules every implementation keeps:
 * - after an observation with `blockForMs`, no slot is granted before it ends (`blocked`);
 * - with `throttle`, the slots in flight never exceed the announced `remaining` (`spent` or `busy`);
 * - before any response, one request at a time probes the unknown budget (`busy`);
 * - after a response without a budget, once no announced window is running, the throttle steps
 *   aside (only `blocked` still applies); not after a 5xx, 408 or 429 without one, which says
 *   nothing of the budget.
 *
 * When `acquire` throws, rejects or answers something that is not a decision, or `changed`
 * throws (`undefined` too) or returns no promise, the call fails with a `PetStoreError` (the
 * failure as its `cause`) and nothing is sent. A `changed` that rejects only wakes nobody: each
 * wait then lasts the decision's `waitMs`, within the call's bounds. When `observe` or a slot's
 * `release` throws, the failure is reported (`reportError`) and the call still returns its response.
 */
export interface RateLimitCoordinator extends RateLimitStore {
  /**
   * For a coordinator that serves several keys (the Redis one, the in-memory one): the coordinator
   * of this client's key and base URL. The client calls it once, at construction, when it is there.
   */
  bind?(scope: CoordinatorScope): RateLimitCoordinator;
  /** Takes a slot if one may be sent now, else says how long to wait. One atomic decision. */
  acquire(request: AcquireRequest): AcquireDecision | Promise<AcquireDecision>;
  /**
   * Records what a response said, for every client that shares the coordinator. A promise it
   * returns is awaited before the call settles (so `rateLimit` shows the response at once), up to
   * the attempt's `timeout`: bound it, as the Redis coordinator does with `commandTimeoutMs`.
   */
  observe(observation: RateLimitObservation): void | Promise<void>;
  /**
   * Resolves when the shared state may have changed (a response, a released slot), so a waiter
   * asks again; rejects with the signal's reason when it aborts.
   */
  changed(signal?: AbortSignal): Promise<void>;
  /** Frees what the coordinator holds (connections, subscriptions). Optional. */
  close?(): Promise<void>;
}
