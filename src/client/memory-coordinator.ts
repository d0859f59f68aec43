/**
 * The default coordinator: rate-limit state shared by the calls of one client, in memory.
 *
 * @module
 */
import type {
  AcquireDecision,
  AcquireRequest,
  CoordinatorScope,
  RateLimitCoordinator,
  RateLimitObservation,
  RateLimitState,
} from './coordinator.js';
import { notify, Signal } from '../runtime.js';

/**
 * Two announcements whose resets are this close describe the same window: resets are whole
 * seconds, and the `Date` header they are measured against is truncated to the second.
 */
export const SAME_WINDOW_MS = 2_000;

/**
 * Whether an answer without a budget tells that the service sends none (a proxy strips the
 * headers, CORS hides them), so the throttle may step aside: an answer of the API's own. A 5xx,
 * 408 or 429 without one (a load balancer's error page, an injected fault) says nothing of the
 * budget; stepping aside on it let every waiting call out at once, into 429s and a ban.
 * @internal
 */
export function announcesNoBudget({ status, budget }: RateLimitObservation): boolean {
  return budget === undefined && status < 500 && status !== 408 && status !== 429;
}

/**
 * The wait before the next probe of an unknown budget after `lost` probes in a row (no answer of
 * any kind between them) were released unanswered (timed out, dropped): their answers never came, so the budget stays unknown, and
 * probing again at once sent a request per timeout and retry, each counted by the service, into
 * 429s that never arrived and a ban. Doubling from half a second up to the shortest window (a
 * minute), it keeps to about one request a minute however long answers stay lost. @internal
 */
export function probeBackoffMs(lost: number): number {
  return Math.min(PROBE_BACKOFF.maxMs, PROBE_BACKOFF.firstMs * 2 ** (lost - 1));
}

/** {@link probeBackoffMs}'s numbers, which the Redis coordinator's scripts use too. @internal */
export const PROBE_BACKOFF = { firstMs: 500, maxMs: 60_000 };

/**
 * How far this machine's clock must move against the monotonic one to be a step (NTP, a user, a
 * VM resumed): less is the two clocks' coarseness (browsers round both), and the dates shown are
 * whole seconds at best (resets are).
 */
const STEP_MS = 1_000;

/** Whether the budget is known: before any response, the first request probes it alone. */
const enum Announced {
  Unknown,
  Yes,
  No,
}

/**
 * Creates the in-memory coordinator, which a client uses when no `coordinator` option is given.
 * Share one between several clients of the same key in one process to make them act as one.
 * Clients of another key or base URL that share it keep a budget of their own: a budget and a
 * ban belong to one key at one service. Read directly, it shows the first client's key.
 *
 * @example
 * ```ts
 * import { createMemoryCoordinator, PetStoreClient } from '@animal-store/sdk';
 *
 * const coordinator = createMemoryCoordinator();
 * const a = new PetStoreClient({ apiKey, baseUrl, coordinator });
 * const b = new PetStoreClient({ apiKey, baseUrl, coordinator });
 * ```
 */
export function createMemoryCoordinator(): RateLimitCoordinator {
  return new MemoryCoordinator();
}

/** The in-memory coordinator. Exported for the Redis coordinator's fallback only. @internal */
export class MemoryCoordinator implements RateLimitCoordinator {
  // The state, as numbers; the frozen snapshot is built only when one of them changes.
  #announced = Announced.Unknown;
  #limit = 0;
  #remaining = 0;
  /**
   * Requests of the running window released unanswered (timed out, dropped): the service may count
   * them still, after answers that did not count them yet, so they are kept apart from `#remaining`
   * (which the lowest announced count replaces) until a new window is announced.
   */
  #unanswered = 0;
  /**
   * Requests released unanswered while no window was running (probes of an unknown budget): the
   * service counts them in the window announced next, if they arrive late, so they join it.
   */
  #unansweredUnannounced = 0;
  /** When the announced window resets (ms, on {@link now}); 0 while none is known. */
  #resetAt = 0;
  #blockedUntil = 0;
  /** Probes of an unknown budget released unanswered since the last answer ({@link probeBackoffMs}). */
  #lostProbes = 0;
  /** When the next probe of an unknown budget may go (ms, on {@link now}), after probes lost in a row. */
  #probeAt = 0;
  /**
   * When the ban a 429 announced ends (ms, on {@link now}), kept apart from `#blockedUntil`: a
   * plain 429 whose window ends later extends the block, and the ban still runs within it.
   */
  #bannedUntil = 0;
  #inFlight = 0;
  /** `Date.now()` minus `performance.now()` as {@link now} reads it; `undefined` before its first reading. */
  #wall: number | undefined;
  #snapshot: RateLimitState | undefined;
  readonly #changes = new Signal();
  readonly #listeners = new Set<(state: RateLimitState | undefined) => void>();
  /**
   * The coordinators of the keys bound to this one: the first key bound is this one's, and every
   * other key (or base URL) gets its own, so clients of several keys sharing it mix no budgets.
   */
  #scopes: Map<string, MemoryCoordinator> | undefined;

  bind({ apiKey, baseUrl }: CoordinatorScope): RateLimitCoordinator {
    const id = `${baseUrl}\n${apiKey}`;
    this.#scopes ??= new Map([[id, this]]);
    let own = this.#scopes.get(id);
    if (!own) this.#scopes.set(id, (own = new MemoryCoordinator()));
    return own;
  }

  readonly getSnapshot = (): RateLimitState | undefined => this.#snapshot;

  readonly subscribe = (listener: (state: RateLimitState | undefined) => void): (() => void) => {
    // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
    const entry = (state: RateLimitState | undefined) => listener(state);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  };

  /**
   * The clock of every deadline here, read nowhere else: `performance.now()`, which does not step,
   * counted from where this machine's clock (`Date.now()`) stood, so that the snapshot's dates are
   * dates of that clock. When that clock steps, either way (NTP, a user, a VM resumed), `now`
   * steps with it and so do the window's reset and the block's end: each keeps what was left of
   * it. Measured on `Date.now()` alone, a step back of an hour refused every call for an hour, and
   * a step forward ended a 429's block at once, so calls went into its Retry-After window.
   * The Redis fallback reads it here too, before it passes `now` to `blocked` or `lastLimit`.
   */
  now(): number {
    const monotonic = performance.now();
    const wall = Date.now() - monotonic;
    this.#wall ??= wall;
    // Whole milliseconds, so that deadlines stay whole and compare equal to the snapshot's dates.
    const step = Math.round(wall - this.#wall);
    if (Math.abs(step) < STEP_MS) return Math.floor(monotonic + this.#wall);
    this.#wall += step;
    if (this.#resetAt) this.#resetAt += step;
    if (this.#blockedUntil) this.#blockedUntil += step;
    if (this.#bannedUntil) this.#bannedUntil += step;
    if (this.#probeAt) this.#probeAt += step;
    const now = Math.floor(monotonic + this.#wall);
    this.#publish(now);
    return now;
  }

  /**
   * The window last announced, as numbers (`resetAt` on {@link now}), as the snapshot shows it;
   * `undefined` before any. For the Redis fallback, which decides on these: a reader may change
   * the snapshot's `Date`s (they are shared, see decisions.md), and the fallback's snapshot is
   * what readers get while Redis is down.
   */
  window(): { limit: number; remaining: number; resetAt: number } | undefined {
    return this.#resetAt === 0 ? undefined : { limit: this.#limit, remaining: this.#left(), resetAt: this.#resetAt };
  }

  /** The remaining budget as shown: the lowest count announced, less the requests released unanswered. */
  #left(): number {
    return Math.max(0, this.#remaining - this.#unanswered);
  }

  /** The limit of the last window announced, once it has reset (its successor's budget is unknown); else `undefined`. */
  lastLimit(now = this.now()): number | undefined {
    return this.#announced === Announced.Yes && this.#resetAt <= now ? this.#limit : undefined;
  }

  /** The block a 429 announced, while it lasts; `undefined` once it has ended. */
  blocked(now = this.now()): Extract<AcquireDecision, { kind: 'blocked' }> | undefined {
    return this.#blockedUntil > now ? { kind: 'blocked', waitMs: this.#blockedUntil - now, banned: this.#bannedUntil > now } : undefined;
  }

  /**
   * `reserve`: requests of the announced remaining budget to leave to others this coordinator
   * cannot see (the Redis fallback: the other processes of the key, and slots they hold).
   */
  acquire({ throttle }: AcquireRequest, reserve = 0): Exclude<AcquireDecision, { kind: 'granted' }> | (Extract<AcquireDecision, { kind: 'granted' }> & { readonly probe: boolean }) {
    const now = this.now();
    const blocked = this.blocked(now);
    if (blocked) return blocked;
    const gated = throttle && this.#announced !== Announced.No;
    // Unknown budget (none yet, or its window has reset): one request probes it, the rest wait
    // for its answer. Sending them all would turn into a burst of 429s and a ban.
    const probe = gated && (this.#announced === Announced.Unknown || this.#resetAt <= now);
    if (probe) {
      if (this.#inFlight > 0) return { kind: 'busy', waitMs: Infinity };
      if (this.#probeAt > now) return { kind: 'lost', waitMs: this.#probeAt - now };
    } else if (gated && this.#remaining - this.#unanswered - this.#inFlight <= reserve) {
      return this.#inFlight > 0 ? { kind: 'busy', waitMs: Infinity } : { kind: 'spent', waitMs: this.#resetAt - now };
    }
    this.#inFlight++;
    let released = false;
    return {
      kind: 'granted',
      // Whether it probes an unknown budget: the Redis fallback marks its slot on Redis the same.
      probe,
      release: (unanswered = false) => {
        if (released) return;
        released = true;
        this.#inFlight--;
        // Unanswered, it may be counted still (the service got it, the answer was lost or late):
        // sending another in its place would spend one request more than the budget.
        const now = this.now();
        if (unanswered && this.#announced === Announced.Yes && this.#resetAt > now && this.#remaining > this.#unanswered) {
          this.#unanswered++;
          this.#publish(now);
        } else if (unanswered && this.#announced !== Announced.No && this.#resetAt <= now) {
          this.#unansweredUnannounced++;
          if (probe) this.#probeAt = now + probeBackoffMs(++this.#lostProbes);
        }
        this.#changes.fire();
      },
    };
  }

  observe(observation: RateLimitObservation): void {
    const { budget, blockForMs, banned } = observation;
    const now = this.now();
    // An answer came: answers are not lost, and the next probe needs no wait.
    this.#lostProbes = this.#probeAt = 0;
    if (budget) {
      this.#announced = Announced.Yes;
      const resetAt = now + budget.resetInMs;
      // A later reset is a new window once the known one is over, or when it leaves no more than
      // the known one (a ban, the day's quota binding). While the known window runs, a later reset
      // with more left is a late answer of it, measured from its arrival: its count came earlier.
      // Once it is over, a window still running is the one to keep, however close their resets:
      // merged into the ended one, its spent budget was ignored and the next call met a 429.
      const later =
        this.#resetAt <= now ? resetAt > Math.min(now, this.#resetAt + SAME_WINDOW_MS) : resetAt > this.#resetAt + SAME_WINDOW_MS && budget.remaining <= this.#remaining;
      if (this.#resetAt === 0 || later) {
        [this.#limit, this.#remaining, this.#resetAt] = [budget.limit, budget.remaining, resetAt];
        [this.#unanswered, this.#unansweredUnannounced] = [Math.min(this.#unansweredUnannounced, budget.remaining), 0];
      } else if (resetAt >= this.#resetAt - SAME_WINDOW_MS || resetAt > now) {
        // Responses can arrive out of order: within one window, the lowest remaining is the truth.
        // A window that ends sooner but is still running is no late answer of an ended one: the
        // server's clock moved (or another instance answered), and its count binds until its reset.
        this.#limit = budget.limit;
        this.#remaining = Math.min(this.#remaining, budget.remaining);
        if (resetAt < this.#resetAt - SAME_WINDOW_MS) this.#resetAt = resetAt;
      }
    } else if (announcesNoBudget(observation) && (this.#announced !== Announced.Yes || this.#resetAt <= now)) {
      // No budget on the API's answers (stripped headers): the throttle steps aside, but not while
      // a window the service announced is still running.
      this.#announced = Announced.No;
    }
    if (blockForMs !== undefined) {
      this.#blockedUntil = Math.max(this.#blockedUntil, now + blockForMs);
      if (banned) this.#bannedUntil = Math.max(this.#bannedUntil, now + blockForMs);
    }
    this.#publish(now);
    this.#changes.fire();
  }

  changed(signal?: AbortSignal): Promise<void> {
    return this.#changes.next(signal);
  }

  #publish(now: number): void {
    if (this.#resetAt === 0) return;
    const blockedUntil = this.#blockedUntil > now ? this.#blockedUntil : undefined;
    const current = this.#snapshot;
    const remaining = this.#left();
    if (
      current &&
      current.limit === this.#limit &&
      current.remaining === remaining &&
      current.resetAt.getTime() === this.#resetAt &&
      current.blockedUntil?.getTime() === blockedUntil
    ) {
      return;
    }
    const state: RateLimitState = Object.freeze({
      limit: this.#limit,
      remaining,
      resetAt: new Date(this.#resetAt),
      ...(blockedUntil === undefined ? {} : { blockedUntil: new Date(blockedUntil) }),
    });
    this.#snapshot = state;
    notify(this.#listeners, state);
  }
}
