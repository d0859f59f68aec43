import type { Quota } from './options.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** What the rate limiter decided for one request. */
export interface Admission {
  /** `undefined` when the request may proceed; else the Error record code of the 429. */
  refused?: 'rate_limited' | 'api_key_banned' | undefined;
  /** Whole seconds to announce in `Retry-After` when refused. */
  retryAfter?: number;
  /** The binding window, for the `X-RateLimit-*` headers; when refused, 0 remain until the refusal ends. */
  limit: number;
  remaining: number;
  /** Unix seconds at which the binding window resets; when refused, at which the refusal ends (a ban's end). */
  reset: number;
  /** The binding window's length in seconds (60 or 86,400), for `RateLimit-Policy`. */
  window: number;
  /** The request came inside a `Retry-After` window announced to its key. */
  insideRetryAfter?: boolean;
  /** When this very request got its key banned: the end of the ban (ms). */
  bannedUntil?: number;
}

/** Counters the reference server keeps per key, for tests that check a client's manners. */
export interface KeyStats {
  /** Requests received with this key. */
  requests: number;
  /** 429 answers given to this key (rate limited or banned). */
  rateLimited: number;
  /** Requests received while a `Retry-After` window announced to this key was still open. */
  insideRetryAfter: number;
  /** Times this key was banned. */
  bans: number;
}

interface KeyState {
  quota: Quota;
  minuteStart: number;
  minuteCount: number;
  dayStart: number;
  dayCount: number;
  /** End of the last `Retry-After` window announced to this key (ms), whether or not an earlier one ends later. */
  waitUntil: number;
  /** Requests received inside the current `Retry-After` window. */
  strikes: number;
  bannedUntil: number;
  stats: KeyStats;
}

/**
 * Fixed per-minute and per-day windows per key, aligned to the clock, and the temporary ban for
 * keys that keep sending after being told to wait.
 */
export class RateLimiter {
  #keys = new Map<string, KeyState>();

  constructor(
    private readonly quotas: ReadonlyMap<string, Quota>,
    private readonly banThreshold: number,
    private readonly banDurationMs: number,
  ) {}

  /**
   * The clock was set back by `ms`: each announced `Retry-After` window keeps what was left of it.
   * Its end on the old clock would lie minutes ahead on the new one, and a key that waited as told
   * would be counted inside it (and banned) for requests the server serves. A ban is such a
   * window too: it keeps what was left of it, not its end on the old clock.
   */
  clockSetBack(ms: number): void {
    for (const state of this.#keys.values()) {
      state.waitUntil -= ms;
      state.bannedUntil -= ms;
    }
  }

  /**
   * When the last ban of `key` ends (ms), whether it still runs or not: the one copy of that end,
   * which {@link clockSetBack} moves. `undefined` for a key the limiter never banned (never seen,
   * forgotten by {@link reset}, or seen by a fresh limiter after a request held from before a
   * server reset earned the ban in the old one).
   */
  banEnd(key: string): number | undefined {
    // 0 is "never banned": read as an end, it told onBan a ban ended on 1970-01-01.
    return this.#keys.get(key)?.bannedUntil || undefined;
  }

  /** The headers for a caller with no known key: an untouched Free-plan minute. */
  static anonymous(now: number, perMinute: number): Admission {
    return { limit: perMinute, remaining: perMinute, reset: Math.ceil((Math.floor(now / MINUTE) + 1) * MINUTE / 1000), window: MINUTE / 1000 };
  }

  stats(): Record<string, KeyStats> {
    // Defined, not assigned: a key named `__proto__` is a key like any other, not a prototype to set.
    return Object.fromEntries([...this.#keys].map(([key, state]) => [key, { ...state.stats }]));
  }

  #state(key: string, now: number): KeyState {
    let state = this.#keys.get(key);
    if (!state) {
      state = {
        quota: this.quotas.get(key)!,
        minuteStart: 0,
        minuteCount: 0,
        dayStart: 0,
        dayCount: 0,
        waitUntil: 0,
        strikes: 0,
        bannedUntil: 0,
        stats: { requests: 0, rateLimited: 0, insideRetryAfter: 0, bans: 0 },
      };
      this.#keys.set(key, state);
    }
    const minuteStart = Math.floor(now / MINUTE) * MINUTE;
    if (minuteStart !== state.minuteStart) Object.assign(state, { minuteStart, minuteCount: 0 });
    const dayStart = Math.floor(now / DAY) * DAY;
    if (dayStart !== state.dayStart) Object.assign(state, { dayStart, dayCount: 0 });
    return state;
  }

  /** The binding window: the one with fewer requests left; on a tie, the one that resets later. */
  #binding(state: KeyState, insideRetryAfter: boolean): Admission {
    const minute = { limit: state.quota.perMinute, remaining: state.quota.perMinute - state.minuteCount, resetMs: state.minuteStart + MINUTE, window: MINUTE };
    const day = { limit: state.quota.perDay, remaining: state.quota.perDay - state.dayCount, resetMs: state.dayStart + DAY, window: DAY };
    const w = day.remaining <= minute.remaining ? day : minute;
    return { limit: w.limit, remaining: Math.max(0, w.remaining), reset: Math.ceil(w.resetMs / 1000), window: w.window / 1000, insideRetryAfter };
  }

  /** Counts one request of `key` at `now` and says whether it may proceed. */
  admit(key: string, now: number): Admission {
    const state = this.#state(key, now);
    state.stats.requests++;
    const refuse = (refused: Admission['refused'], untilMs: number): Admission => {
      state.stats.rateLimited++;
      // Retry-After is whole seconds, rounded up; the window a request counts as a strike in ends
      // where the wait really ends (the window's reset), never up to a second past it, so a
      // client that waits exactly until the announced reset is not punished.
      const retryAfter = Math.max(1, Math.ceil((untilMs - now) / 1000));
      // The wait is the one announced last, even when shorter than the one before it (a ban that
      // ends before the spent window does): a key that waits as told is then never counted inside.
      state.waitUntil = untilMs;
      // Nothing is left until `untilMs`, which the headers say: for a spent window that is its own
      // reset, and a ban binds past its window's (whose new budget it does not grant).
      return { ...this.#binding(state, inside), remaining: 0, reset: Math.ceil(untilMs / 1000), refused, retryAfter };
    };

    const inside = now < state.waitUntil;
    // Every request inside an announced window counts, whether the key is banned or not.
    if (inside) state.stats.insideRetryAfter++;
    if (now < state.bannedUntil) return refuse('api_key_banned', state.bannedUntil);
    if (inside) {
      if (++state.strikes > this.banThreshold) {
        state.stats.bans++;
        state.strikes = 0;
        state.bannedUntil = now + this.banDurationMs;
        return { ...refuse('api_key_banned', state.bannedUntil), bannedUntil: state.bannedUntil };
      }
    } else {
      state.strikes = 0;
    }
    const minuteFull = state.minuteCount >= state.quota.perMinute;
    const dayFull = state.dayCount >= state.quota.perDay;
    if (minuteFull || dayFull) {
      return refuse('rate_limited', dayFull ? state.dayStart + DAY : state.minuteStart + MINUTE);
    }
    state.minuteCount++;
    state.dayCount++;
    return this.#binding(state, inside);
  }
}
