/**
 * The rate-limit coordinator on Redis: every process that uses the same Redis, API key and base
 * URL acts as one client. One `blockedUntil` after a 429 seen anywhere, one budget with the
 * requests in flight in every process, waiters woken through pub/sub, and the shared state in
 * `client.rateLimit` everywhere. Node-only; `redis` (node-redis 5 or newer) is an optional peer
 * dependency.
 *
 * @module @animal-store/sdk/redis
 */
import { createHash } from 'node:crypto';
import type {
  AcquireDecision,
  AcquireRequest,
  CoordinatorScope,
  RateLimitCoordinator,
  RateLimitObservation,
  RateLimitState,
} from './client/coordinator.js';
import { createMemoryCoordinator, SAME_WINDOW_MS } from './client/memory-coordinator.js';
import { notify, Signal } from './client/runtime.js';

/** What the coordinator needs of a node-redis client (`createClient()` from `redis`, connected). */
export interface RedisClient {
  /** Runs a loaded script by its SHA-1. */
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** Loads a script; resolves to its SHA-1. */
  scriptLoad(script: string): Promise<string>;
  /** A new client with the same options, for pub/sub. */
  duplicate(): RedisSubscriber;
  /** node-redis's events; the coordinator listens for `end`, when the app closes its client. */
  on(event: 'end', listener: () => void): unknown;
}

/** The pub/sub connection the coordinator makes with `duplicate()`. */
export interface RedisSubscriber {
  /** Opens the connection. */
  connect(): Promise<unknown>;
  /** Subscribes `listener` to `channel`. */
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  /** Lets the process exit while the connection is open. */
  unref(): void;
  /** Closes the connection at once. */
  destroy(): void;
  /** node-redis's events; errors are swallowed, the coordinator falls back instead. */
  on(event: 'error', listener: (error: unknown) => void): unknown;
}

/** Options of {@link createRedisCoordinator}. */
export interface RedisCoordinatorOptions {
  /** A connected node-redis client: `await createClient({ url }).connect()`. */
  redis: RedisClient;
  /**
   * The prefix of every Redis key the coordinator writes. Keys then hold a SHA-256 of the base
   * URL and API key, never the key itself.
   * @default 'animal-store:rl'
   */
  prefix?: string | undefined;
  /**
   * The longest a decision may wait on Redis, in milliseconds; past it (or when Redis fails) the
   * client falls back to its in-process coordinator until Redis answers again.
   * @default 250
   */
  commandTimeoutMs?: number | undefined;
  /**
   * Told once when Redis fails and the client falls back, and once when it rejoins.
   * @default console.warn
   */
  onWarning?: ((message: string) => void) | undefined;
}

/** A coordinator on Redis that each client binds to its own key: what {@link createRedisCoordinator} returns. */
export interface RedisCoordinator extends RateLimitCoordinator {
  /** The coordinator of one API key and base URL; the client calls it once, with its own. */
  bind(scope: CoordinatorScope): RateLimitCoordinator;
  /** Closes the pub/sub connection. It also closes when the app's Redis client closes. */
  close(): Promise<void>;
}

/** How long Redis keeps a key's state after its last write: longer than the API's longest window. */
const STATE_TTL_MS = 25 * 60 * 60 * 1000;
/** After a failure, how long before Redis is tried again. */
const REJOIN_AFTER_MS = 1_000;

// Redis' own clock (TIME) is the one clock every process shares. Replies carry it, so each
// process converts the shared times to its own clock.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS: state, slots. ARGV: throttle (0/1), leaseMs, slot id, channel.
 * Returns { kind, waitMs, banned, now }: kind 0 granted, 1 blocked, 2 spent, 3 busy.
 */
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local s = redis.call('HMGET', KEYS[1], 'announced', 'remaining', 'resetAt', 'blockedUntil', 'banned')
local announced = tonumber(s[1]) or 0
local remaining = tonumber(s[2]) or 0
local resetAt = tonumber(s[3]) or 0
local blockedUntil = tonumber(s[4]) or 0
local inFlight = redis.call('ZCARD', KEYS[2])
if blockedUntil > now then return {1, blockedUntil - now, tonumber(s[5]) or 0, now} end
if ARGV[1] == '1' and announced ~= 2 then
  local busy = false
  if announced == 0 or resetAt <= now then
    busy = inFlight > 0
  elseif remaining - inFlight <= 0 then
    if inFlight == 0 then return {2, resetAt - now, 0, now} end
    busy = true
  end
  if busy then
    local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    return {3, tonumber(first[2]) - now, 0, now}
  end
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) + 1000)
return {0, 0, 0, now}`;

/** KEYS: slots. ARGV: slot id, channel. */
const RELEASE = `redis.call('ZREM', KEYS[1], ARGV[1]) redis.call('PUBLISH', ARGV[2], 'released') return 1`;

/**
 * KEYS: state. ARGV: hasBudget, limit, remaining, resetInMs, blockForMs (-1: none), banned,
 * channel, ttl. Publishes and returns { limit, remaining, resetAt, blockedUntil, now }.
 */
const OBSERVE = `${NOW}
local s = redis.call('HMGET', KEYS[1], 'limit', 'remaining', 'resetAt', 'blockedUntil')
local limit = tonumber(s[1]) or 0
local remaining = tonumber(s[2]) or 0
local resetAt = tonumber(s[3]) or 0
local blockedUntil = tonumber(s[4]) or 0
if ARGV[1] == '1' then
  local reset = now + tonumber(ARGV[4])
  if resetAt == 0 or reset > resetAt + ${SAME_WINDOW_MS} then
    limit = tonumber(ARGV[2]) remaining = tonumber(ARGV[3]) resetAt = reset
  elseif reset >= resetAt - ${SAME_WINDOW_MS} then
    limit = tonumber(ARGV[2]) remaining = math.min(remaining, tonumber(ARGV[3]))
  end
  redis.call('HSET', KEYS[1], 'announced', 1, 'limit', limit, 'remaining', remaining, 'resetAt', resetAt)
elseif resetAt <= now then
  redis.call('HSET', KEYS[1], 'announced', 2)
end
local blockFor = tonumber(ARGV[5])
if blockFor >= 0 and now + blockFor >= blockedUntil then
  blockedUntil = now + blockFor
  redis.call('HSET', KEYS[1], 'blockedUntil', blockedUntil, 'banned', ARGV[6])
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[8]))
local state = limit .. ',' .. remaining .. ',' .. resetAt .. ',' .. blockedUntil .. ',' .. now
redis.call('PUBLISH', ARGV[7], state)
return state`;

/** Loads a script once and runs it by SHA-1 (one round trip a decision), reloading after a flush. */
function script(redis: RedisClient, source: string) {
  let sha: Promise<string> | undefined;
  return async (keys: string[], args: string[]): Promise<unknown> => {
    sha ??= redis.scriptLoad(source);
    try {
      return await redis.evalSha(await sha, { keys, arguments: args });
    } catch (error) {
      sha = undefined;
      if (!String((error as Error)?.message).includes('NOSCRIPT')) throw error;
      sha = redis.scriptLoad(source);
      return redis.evalSha(await sha, { keys, arguments: args });
    }
  };
}

/** Rejects after `ms`, or when `signal` aborts: no decision waits on Redis longer. */
function bounded<T>(promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
    const onAbort = () => reject(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}

/**
 * Creates the Redis coordinator. Pass it as the client's `coordinator`: each client binds it to
 * its own API key and base URL, and every client of the same key on the same Redis, in any
 * process, then shares one rate-limit state.
 *
 * @example
 * ```ts
 * import { createClient } from 'redis';
 * import { PetStoreClient } from '@animal-store/sdk';
 * import { createRedisCoordinator } from '@animal-store/sdk/redis';
 *
 * const redis = await createClient({ url: process.env.REDIS_URL }).connect();
 * const client = new PetStoreClient({ apiKey, baseUrl, coordinator: createRedisCoordinator({ redis }) });
 * ```
 */
export function createRedisCoordinator(options: RedisCoordinatorOptions): RedisCoordinator {
  const { redis } = options;
  const prefix = options.prefix ?? 'animal-store:rl';
  const timeoutMs = options.commandTimeoutMs ?? 250;
  const warn = options.onWarning ?? ((message: string) => console.warn(message));
  const run = { acquire: script(redis, ACQUIRE), release: script(redis, RELEASE), observe: script(redis, OBSERVE) };
  const bound = new Map<string, Shared>();
  const channels = new Map<string, (message: string) => void>();
  let subscriber: RedisSubscriber | undefined;
  let closed = false;

  /** One pub/sub connection for every key; it never keeps the process alive. */
  const subscribe = async (channel: string, listener: (message: string) => void) => {
    channels.set(channel, listener);
    if (!subscriber) {
      subscriber = redis.duplicate();
      subscriber.on('error', () => {});
      await subscriber.connect();
      subscriber.unref();
    }
    await subscriber.subscribe(channel, listener);
  };

  const close = async () => {
    closed = true;
    subscriber?.destroy();
    subscriber = undefined;
  };
  // A worker that finishes and closes its Redis client exits: the subscriber goes with it.
  redis.on('end', () => void close());

  const bind = (scope: CoordinatorScope): RateLimitCoordinator => {
    const id = createHash('sha256').update(`${scope.baseUrl}\n${scope.apiKey}`).digest('hex').slice(0, 32);
    let shared = bound.get(id);
    if (!shared) {
      shared = new Shared(`${prefix}:${id}`, run, timeoutMs, warn, subscribe, () => closed);
      bound.set(id, shared);
    }
    return shared;
  };

  const unbound = (): never => {
    throw new TypeError('createRedisCoordinator(): pass it as the client\'s coordinator option; the client binds it to its API key.');
  };
  return {
    bind,
    close,
    getSnapshot: () => undefined,
    subscribe: () => () => {},
    acquire: unbound,
    observe: unbound,
    changed: unbound,
  };
}

/** Two times on this machine's clock, converted from Redis' through a measured offset, that are the same. */
const near = (a: number | undefined, b: number | undefined) => a === b || (a !== undefined && b !== undefined && Math.abs(a - b) < 50);

type Scripts = Record<'acquire' | 'release' | 'observe', (keys: string[], args: string[]) => Promise<unknown>>;

/** The coordinator of one key on Redis, with its in-process fallback. */
class Shared implements RateLimitCoordinator {
  readonly #keys: { state: string; slots: string; channel: string };
  readonly #fallback = createMemoryCoordinator();
  readonly #changes = new Signal();
  readonly #listeners = new Set<(state: RateLimitState | undefined) => void>();
  #snapshot: RateLimitState | undefined;
  /** When Redis last failed (this machine's clock), or 0 while it answers. */
  #failedAt = 0;
  #subscribed: Promise<void> | undefined;

  constructor(
    key: string,
    private readonly run: Scripts,
    private readonly timeoutMs: number,
    private readonly warn: (message: string) => void,
    private readonly listen: (channel: string, listener: (message: string) => void) => Promise<void>,
    private readonly closed: () => boolean,
  ) {
    this.#keys = { state: `${key}:state`, slots: `${key}:slots`, channel: `${key}:changed` };
    this.#fallback.subscribe((state) => {
      if (this.#failedAt) this.#publish(state);
    });
  }

  readonly getSnapshot = (): RateLimitState | undefined => this.#snapshot;

  readonly subscribe = (listener: (state: RateLimitState | undefined) => void): (() => void) => {
    const entry = (state: RateLimitState | undefined) => listener(state);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  };

  async acquire(request: AcquireRequest): Promise<AcquireDecision> {
    const redis = await this.#redis(request.signal);
    if (!redis) return this.#fallback.acquire(request);
    const slot = String(Math.floor(Math.random() * Number.MAX_SAFE_INTEGER));
    const { state, slots, channel } = this.#keys;
    try {
      const [kind, waitMs, banned] = (await bounded(
        this.run.acquire([state, slots], [request.throttle ? '1' : '0', String(Math.ceil(request.leaseMs)), slot, channel]),
        this.timeoutMs,
        request.signal,
      )) as number[];
      if (kind === 0) {
        return {
          kind: 'granted',
          release: () => void this.run.release([slots], [slot, channel]).catch(() => {}),
        };
      }
      const wait = Math.max(0, waitMs ?? 0);
      return kind === 1 ? { kind: 'blocked', waitMs: wait, banned: banned === 1 } : { kind: kind === 2 ? 'spent' : 'busy', waitMs: wait };
    } catch (error) {
      request.signal?.throwIfAborted();
      this.#fail(error);
      return this.#fallback.acquire(request);
    }
  }

  async observe(observation: RateLimitObservation): Promise<void> {
    // The fallback always learns too, so that a fall back starts from what is known.
    this.#fallback.observe(observation);
    const redis = await this.#redis();
    if (!redis) return;
    const { budget, blockForMs, banned } = observation;
    try {
      const state = (await bounded(
        this.run.observe(
          [this.#keys.state],
          [
            budget ? '1' : '0',
            String(budget?.limit ?? 0),
            String(budget?.remaining ?? 0),
            String(budget?.resetInMs ?? 0),
            String(blockForMs ?? -1),
            banned ? '1' : '0',
            this.#keys.channel,
            String(STATE_TTL_MS),
          ],
        ),
        this.timeoutMs,
      )) as string;
      this.#receive(state);
    } catch (error) {
      this.#fail(error);
    }
  }

  changed(signal?: AbortSignal): Promise<void> {
    return Promise.race([this.#changes.next(signal), this.#fallback.changed(signal)]);
  }

  /** Whether to use Redis now: yes while it answers; after a failure, again once a second has passed. */
  async #redis(signal?: AbortSignal): Promise<boolean> {
    if (this.closed()) return false;
    if (this.#failedAt && Date.now() - this.#failedAt < REJOIN_AFTER_MS) return false;
    try {
      this.#subscribed ??= this.listen(this.#keys.channel, (message) => this.#receive(message));
      await bounded(this.#subscribed, this.timeoutMs, signal);
    } catch (error) {
      signal?.throwIfAborted();
      this.#subscribed = undefined;
      this.#fail(error);
      return false;
    }
    if (this.#failedAt) {
      this.#failedAt = 0;
      this.warn('@animal-store/sdk: Redis answers again; rate limits are coordinated across processes again.');
    }
    return true;
  }

  #fail(error: unknown): void {
    if (!this.#failedAt) {
      this.warn(
        `@animal-store/sdk: Redis failed (${error instanceof Error ? error.message : String(error)}); rate limits are coordinated in this process only until it answers again.`,
      );
    }
    this.#failedAt = Date.now();
  }

  /** A state published by any process (or returned to this one): `limit,remaining,resetAt,blockedUntil,now` on Redis' clock. */
  #receive(message: string): void {
    const numbers = message.split(',').map(Number);
    if (numbers.length === 5 && numbers.every(Number.isFinite)) {
      const [limit, remaining, resetAt, blockedUntil, redisNow] = numbers as [number, number, number, number, number];
      const offset = Date.now() - redisNow;
      if (resetAt > 0) {
        const current = this.#snapshot;
        const local = { resetAt: resetAt + offset, blockedUntil: blockedUntil > redisNow ? blockedUntil + offset : undefined };
        if (
          !current ||
          current.limit !== limit ||
          current.remaining !== remaining ||
          !near(current.resetAt.getTime(), local.resetAt) ||
          !near(current.blockedUntil?.getTime(), local.blockedUntil)
        ) {
          this.#publish(
            Object.freeze({
              limit,
              remaining,
              resetAt: new Date(local.resetAt),
              ...(local.blockedUntil === undefined ? {} : { blockedUntil: new Date(local.blockedUntil) }),
            }),
          );
        }
      }
    }
    this.#changes.fire();
  }

  #publish(state: RateLimitState | undefined): void {
    this.#snapshot = state;
    notify(this.#listeners, state);
  }
}
