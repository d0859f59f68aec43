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
import { announcesNoBudget, MemoryCoordinator, PROBE_BACKOFF, SAME_WINDOW_MS } from './client/memory-coordinator.js';
import { hasMethods, MAX_TIMER_MS, notify, Signal } from './runtime.js';
import { checkKnownOptions } from './suggest.js';
import { configError } from './client/options.js';

/** What the coordinator needs of a node-redis client (`createClient()` from `redis`, connected). */
export interface RedisClient {
  /** Runs a loaded script by its SHA-1. */
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** Runs a script from its source (and caches it for `evalSha`). */
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** A new client with the same options, for pub/sub. */
  duplicate(): RedisSubscriber;
  /**
   * node-redis's events; the coordinator listens for `end`, when the app closes its client, and
   * `ready`, when it is connected (again, after a restart or a failover of Redis).
   */
  on(event: 'end' | 'ready', listener: () => void): unknown;
  /** Removes a listener added with `on` (node-redis's): `close()` takes the coordinator's off. */
  off?(event: 'end' | 'ready', listener: () => void): unknown;
  /** Whether the app has the client open (node-redis): closed, it is not used; connected again, it is. */
  readonly isOpen?: boolean | undefined;
  /** node-redis's options: the `database` the client selects, whose processes share a key's state. */
  readonly options?: { readonly database?: number | undefined } | undefined;
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
  /** A connected node-redis client of one Redis: `await createClient({ url }).connect()` (not a cluster, a pool or a sentinel client). */
  redis: RedisClient;
  /**
   * The prefix of every Redis key the coordinator writes. Keys then hold a SHA-256 of the base
   * URL and API key, never the key itself.
   * @default 'animal-store:rl'
   */
  prefix?: string | undefined;
  /**
   * The longest a decision may wait on Redis, in milliseconds (at most 2147483647, the longest
   * timer); past it (or when Redis fails) the client falls back to its in-process coordinator until
   * Redis answers again.
   * @default 250
   */
  commandTimeoutMs?: number | undefined;
  /**
   * Told once when Redis fails (or lost the key's state, or part of it) and the client
   * falls back, and once when it rejoins; told once too, at the first call, when the node-redis
   * client was never connected.
   * @default the `logger` of each client bound to the key, at warn level (so its `logLevel` applies), else console.warn
   */
  onWarning?: ((message: string) => void) | undefined;
}

/** A coordinator on Redis that each client binds to its own key: what {@link createRedisCoordinator} returns. */
export interface RedisCoordinator extends RateLimitCoordinator {
  /** The coordinator of one API key and base URL; the client calls it once, with its own. */
  bind(scope: CoordinatorScope): RateLimitCoordinator;
  /** Closes the pub/sub connection and takes the coordinator's listeners off the app's client. It also closes when the app's Redis client closes. */
  close(): Promise<void>;
}

/** How long Redis keeps a key's state after its last write: longer than the API's longest window. */
const STATE_TTL_MS = 25 * 60 * 60 * 1000;
/** After a failure, how long before Redis is tried again. */
const REJOIN_AFTER_MS = 1_000;
/**
 * How long a process counts among those sharing a key after its last decision: the API's
 * shortest window, in which a process that decided may still send while falling back.
 */
const PROCESS_TTL_MS = 60_000;

// Redis' own clock (TIME) is the one clock every process shares. Replies carry it, so each
// process converts the shared times to its own clock.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// A command the client gave up on (Redis was slow, or down and node-redis queued it until it came
// back) may still run. Scripts get a deadline on Redis' clock and do nothing past it: a late
// acquire would hold a slot nobody releases until its lease ends, and a late observation, its
// reset counted from when it ran, would pass for a newer window with an old, higher remaining.
const LATE = (deadline: string, answer: string) => `if tonumber(${deadline}) > 0 and now > tonumber(${deadline}) then return ${answer} end`;

/**
 * The shared state as scripts return and publish it: `limit,remaining,resetAt,blockedUntil,bannedUntil,epoch,seq,now`,
 * on Redis' clock, `remaining` without the requests released unanswered. `bannedUntil` is when
 * the ban a 429 announced ends, kept apart from the block ({@link OBSERVE}). `epoch` is when Redis
 * started the key's state (microseconds); one a process has not seen before (earlier ones
 * included) means Redis lost the state (FLUSHALL, a restart without persistence, an eviction),
 * and the slots in flight with it. `seq` counts the scripts run on the state ({@link SEQ}).
 */
const STATE = `limit .. ',' .. math.max(0, remaining - unanswered) .. ',' .. resetAt .. ',' .. blockedUntil .. ',' .. bannedUntil .. ',' .. epoch .. ',' .. seq .. ',' .. now`;

/**
 * Numbers each script run on the state: a reply numbered no higher than a state this process saw
 * of the same epoch before sending means Redis went back to an older copy of it (a restart from
 * an older snapshot, a failover to a replica that was behind), which keeps the epoch.
 */
const SEQ = (state: string) => `redis.call('HINCRBY', ${state}, 'seq', 1)`;

/** Starts the state's epoch when it has none (`epoch` holds the field as read): the first script on a new or lost state. */
const EPOCH = (state: string) => `if not epoch then
  -- Digits, not a number: Lua would print one this large in exponent notation.
  epoch = t[1] .. string.format('%06d', tonumber(t[2]))
  redis.call('HSET', ${state}, 'epoch', epoch)
  redis.call('PEXPIRE', ${state}, ${STATE_TTL_MS})
end`;

// A set scored by when each entry ends lives as long as its last: a shorter lease (or another
// format's presence) must not cut the others short.
const SET_TTL = (set: string) => `local last = redis.call('ZRANGE', ${set}, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', ${set}, tonumber(last[2]) + 1000)`;

/**
 * Notes in the state when the last slot in flight ends (`slotsUntil`), after the slots changed,
 * if their set was there before (`slots`, 1: else it stays as it was, for {@link SLOTS_LOST}).
 */
const SLOTS_UNTIL = (state: string, slots: string) => `if slots == 1 then
  local last = redis.call('ZRANGE', ${slots}, -1, -1, 'WITHSCORES')
  redis.call('HSET', ${state}, 'slotsUntil', last[2] or 0)
end`;

/**
 * The set of slots missing (`slots`, 0) while one of them should still be in flight: Redis
 * evicted it and kept the state (maxmemory-policy volatile-ttl takes the key that expires first,
 * the slots'). They are lost as with a FLUSHALL, so the state takes a new epoch (`lost`): every
 * process then gives back the slots it holds ({@link Shared.#lost}).
 */
const SLOTS_LOST = (state: string) => `local lost = epoch and slots == 0 and (tonumber(redis.call('HGET', ${state}, 'slotsUntil')) or 0) > now
if lost then
  epoch = nil
  redis.call('HSET', ${state}, 'slotsUntil', 0)
end`;

/**
 * The format of the key's state and messages. It names this version's keys and channel
 * (`<prefix>:<hash>:v1:state`), so that no version reads another's as its own: bump it (to the
 * next integer) with any change another version would misread. What every format keeps, this
 * one and those to come: at each decision, the script adds its format to
 * `<prefix>:<hash>:formats`, a sorted set scored by the Redis time until which it counts (60 s
 * on), and its process to `<prefix>:<hash>:processes` (not under `v1`), scored the same way.
 * During a rolling deploy (or a rollback) the newer version adapts: while an older format is
 * present, a version speaks it (its keys, scripts and messages), and when it switches between
 * formats it carries what it knows over, in one script. A process of an older format that has not
 * decided for 60 s is still there while it stays subscribed to its format's channel (from its
 * first decision until its Redis client closes): `PUBSUB NUMSUB` counts them before a newer version
 * leaves the older format. So this version, of the first format,
 * keeps its own whatever newer format it finds there: the processes of both versions then
 * coordinate as one on one state. Standing aside instead (each process deciding alone while
 * another format was present) cannot be made safe: 10 + 10 fresh processes of two formats on a
 * budget of 20 sent 29–30 requests, 9–10 429s and got the key banned; one format alone sends 20.
 */
const FORMAT = '1';

/**
 * KEYS: state, slots, processes, formats. ARGV: throttle (0/1), leaseMs, slot id, deadline (0: none),
 * process id, process TTL, channel, format. Marks the process (it counts among the key's, of
 * every format, until its TTL ends) and the format ({@link FORMAT}) present. A grant publishes
 * `slots,<epoch>,<seq>,<in flight>,<processes>`, so that a process which falls back counts the
 * slots taken after its own last decision.
 * Returns { kind, waitMs, banned (1: a ban runs), state, processes, slots in flight (after this decision),
 * and for a grant whether it probes an unknown budget (1) }:
 * kind 0 granted, 1 blocked, 2 spent, 3 busy, 4 late (Redis' time in place of waitMs), 5 lost (a lost probe's backoff).
 */
const ACQUIRE = `${NOW}
${LATE('ARGV[4]', "{4, now, 0, '', 0, 0}")}
local counted = redis.call('EXISTS', KEYS[3])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[6]), ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
${SET_TTL('KEYS[3]')}
local processes = redis.call('ZCARD', KEYS[3])
redis.call('ZADD', KEYS[4], now + tonumber(ARGV[6]), ARGV[8])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
${SET_TTL('KEYS[4]')}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local slots = redis.call('EXISTS', KEYS[2])
local s = redis.call('HMGET', KEYS[1], 'announced', 'limit', 'remaining', 'resetAt', 'blockedUntil', 'bannedUntil', 'epoch', 'unanswered', 'probeAt', 'processesUntil')
local announced = tonumber(s[1]) or 0
local limit = tonumber(s[2]) or 0
local remaining = tonumber(s[3]) or 0
local resetAt = tonumber(s[4]) or 0
local blockedUntil = tonumber(s[5]) or 0
local bannedUntil = tonumber(s[6]) or 0
local epoch = s[7]
local unanswered = tonumber(s[8]) or 0
${SLOTS_LOST('KEYS[1]')}
-- The processes set missing while its last entry should still count: evicted with the state kept.
-- The processes counted before still count themselves in it, beside the ranks it hands out again:
-- a new epoch tells them they are counted no more.
if epoch and counted == 0 and (tonumber(s[10]) or 0) > now then
  lost = true
  epoch = nil
end
${EPOCH('KEYS[1]')}
redis.call('HSET', KEYS[1], 'processesUntil', now + tonumber(ARGV[6]))
local seq = ${SEQ('KEYS[1]')}
local state = ${STATE}
if lost then redis.call('PUBLISH', ARGV[7], state) end
local inFlight = redis.call('ZCARD', KEYS[2])
if blockedUntil > now then return {1, blockedUntil - now, bannedUntil > now and 1 or 0, state, processes, inFlight} end
local gated = ARGV[1] == '1' and announced ~= 2
-- A probe of an unknown budget (none yet, or its window has reset), which the throttle waits for.
local probe = gated and (announced == 0 or resetAt <= now)
if gated then
  local busy = false
  if probe then
    busy = inFlight > 0
    -- Probes lost in a row: the next waits (see probeBackoffMs).
    local probeAt = tonumber(s[9]) or 0
    if not busy and probeAt > now then return {5, probeAt - now, 0, state, processes, 0} end
  elseif remaining - unanswered - inFlight <= 0 then
    if inFlight == 0 then return {2, resetAt - now, 0, state, processes, 0} end
    busy = true
  end
  if busy then
    local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
    return {3, tonumber(first[2]) - now, 0, state, processes, inFlight}
  end
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
${SET_TTL('KEYS[2]')}
slots = 1
${SLOTS_UNTIL('KEYS[1]', 'KEYS[2]')}
redis.call('PUBLISH', ARGV[7], 'slots,' .. epoch .. ',' .. seq .. ',' .. (inFlight + 1) .. ',' .. processes)
return {0, 0, 0, state, processes, inFlight + 1, probe and 1 or 0}`;

/**
 * KEYS: slots, state. ARGV: slot id, channel, unanswered (1: the request may have reached the
 * service with no answer, and the service may count it still, after answers that did not count
 * it yet). Such a request is kept apart from `remaining`, which the lowest announced count
 * replaces: `unanswered` of a running window is taken from every count of it, and
 * `unansweredUnannounced` (released while no window ran: probes of an unknown budget) joins the
 * window announced next (OBSERVE). Publishes `released,<epoch>,<seq>,<slots in flight>` (epoch 0:
 * Redis lost the state, and no script has started another yet), after the state when it took one
 * from the remaining: the fallback of every process learns it at once, as from an answer (else a
 * process falling back before its next decision sent on a remaining that did not hold the request).
 * ARGV[4] (1: the slot was a probe of an unknown budget): lost, it holds the next probe back, for
 * longer after each lost in a row (`lostProbes`, `probeAt`; see probeBackoffMs); any answer ends it.
 */
const RELEASE = `${NOW}
local slots = redis.call('EXISTS', KEYS[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local s = redis.call('HMGET', KEYS[2], 'announced', 'resetAt', 'remaining', 'unanswered', 'epoch', 'limit', 'blockedUntil', 'bannedUntil')
local epoch = s[5]
if epoch then ${SLOTS_UNTIL('KEYS[2]', 'KEYS[1]')} end
local seq = epoch and ${SEQ('KEYS[2]')} or 0
if ARGV[3] == '1' and epoch then
  local announced = tonumber(s[1]) or 0
  local resetAt = tonumber(s[2]) or 0
  local remaining = tonumber(s[3]) or 0
  local unanswered = tonumber(s[4]) or 0
  if announced == 1 and resetAt > now and remaining > unanswered then
    unanswered = redis.call('HINCRBY', KEYS[2], 'unanswered', 1)
    local limit, blockedUntil, bannedUntil = tonumber(s[6]) or 0, tonumber(s[7]) or 0, tonumber(s[8]) or 0
    redis.call('PUBLISH', ARGV[2], ${STATE})
  elseif announced ~= 2 and resetAt <= now then
    redis.call('HINCRBY', KEYS[2], 'unansweredUnannounced', 1)
    if ARGV[4] == '1' then
      local lost = redis.call('HINCRBY', KEYS[2], 'lostProbes', 1)
      redis.call('HSET', KEYS[2], 'probeAt', now + math.min(${PROBE_BACKOFF.maxMs}, ${PROBE_BACKOFF.firstMs} * 2 ^ (lost - 1)))
    end
  end
end
redis.call('PUBLISH', ARGV[2], 'released,' .. (epoch or 0) .. ',' .. seq .. ',' .. redis.call('ZCARD', KEYS[1]))
return 1`;

/**
 * KEYS: state, slots. ARGV: hasBudget (1; 0: none, the throttle steps aside; 2: none, and the answer
 * says nothing of it), limit, remaining, resetInMs, blockForMs (-1: none), banned,
 * channel, ttl, sentAt and deadline (0: unknown), an epoch found rolled back (0: none), answered
 * (1: the service answered; 0: a process checks the state or gives back what it knows), then any
 * slots to restore (id, lease left in ms). Starts the state's epoch if it has none, or a new one
 * if it still has the one found rolled back (dropping the copy's slots in flight, released since):
 * every process then finds the state lost and gives back what it knows, as after a FLUSHALL. Publishes and returns the state.
 * Past its deadline, an observation's budget only lowers the remaining of the window Redis knows
 * (it never starts one); its block is kept, counted from when it was sent: blocking for the time
 * the service said is safe however late it comes.
 */
const OBSERVE = `${NOW}
local sentAt = tonumber(ARGV[9])
local timely = tonumber(ARGV[10]) == 0 or now <= tonumber(ARGV[10])
local s = redis.call('HMGET', KEYS[1], 'limit', 'remaining', 'resetAt', 'blockedUntil', 'bannedUntil', 'epoch', 'unanswered', 'unansweredUnannounced', 'probeAt')
local limit = tonumber(s[1]) or 0
local remaining = tonumber(s[2]) or 0
local resetAt = tonumber(s[3]) or 0
local blockedUntil = tonumber(s[4]) or 0
local bannedUntil = tonumber(s[5]) or 0
local epoch = s[6]
local unanswered = tonumber(s[7]) or 0
local unannounced = tonumber(s[8]) or 0
local slots = redis.call('EXISTS', KEYS[2])
-- An answer came: answers are not lost, and the next probe needs no wait (see probeBackoffMs).
-- Written only when a wait was set (with the count of lost probes), not on every answer. A check
-- or a restore is no answer: it leaves the wait (a reconnection ended a minute's at once).
if ARGV[12] == '1' and (tonumber(s[9]) or 0) ~= 0 then redis.call('HSET', KEYS[1], 'lostProbes', 0, 'probeAt', 0) end
${SLOTS_LOST('KEYS[1]')}
if epoch == ARGV[11] then
  -- The copy's slots were in flight when it was taken, and released since: those still held are
  -- restored by their processes once they hear of the new epoch, as after a FLUSHALL.
  epoch = nil
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[1], 'slotsUntil', 0)
end
${EPOCH('KEYS[1]')}
local seq = ${SEQ('KEYS[1]')}
if #ARGV > 12 then
  for i = 13, #ARGV, 2 do redis.call('ZADD', KEYS[2], now + tonumber(ARGV[i + 1]), ARGV[i]) end
  ${SET_TTL('KEYS[2]')}
  slots = 1
  ${SLOTS_UNTIL('KEYS[1]', 'KEYS[2]')}
end
if not timely then
  -- Its reset counted from when it ran would pass for a later window's; counted from when it was
  -- sent, it may still lower the remaining of the window Redis knows (requests sent meanwhile).
  if ARGV[1] == '1' and resetAt > now then
    local reset = sentAt + tonumber(ARGV[4])
    if reset >= resetAt - ${SAME_WINDOW_MS} and reset <= resetAt + ${SAME_WINDOW_MS} and tonumber(ARGV[3]) < remaining then
      remaining = tonumber(ARGV[3])
      redis.call('HSET', KEYS[1], 'remaining', remaining)
    end
  end
elseif ARGV[1] == '1' then
  local reset = now + tonumber(ARGV[4])
  -- A later reset with more left, while the known window runs, is a late answer of it; once it
  -- is over, a window still running is the new one (see MemoryCoordinator.observe).
  local later = reset > resetAt + ${SAME_WINDOW_MS}
  if resetAt <= now then later = later or reset > now else later = later and tonumber(ARGV[3]) <= remaining end
  if later then
    limit = tonumber(ARGV[2]) remaining = tonumber(ARGV[3]) resetAt = reset
    unanswered = math.min(unannounced, remaining) unannounced = 0
  elseif reset >= resetAt - ${SAME_WINDOW_MS} or reset > now then
    -- One window (answers arrive out of order), or one that ends sooner and still runs (the
    -- server's clock moved): the lowest remaining binds, until the sooner reset.
    limit = tonumber(ARGV[2]) remaining = math.min(remaining, tonumber(ARGV[3]))
    if reset < resetAt - ${SAME_WINDOW_MS} then resetAt = reset end
  end
  redis.call('HSET', KEYS[1], 'announced', 1, 'limit', limit, 'remaining', remaining, 'resetAt', resetAt, 'unanswered', unanswered, 'unansweredUnannounced', unannounced)
elseif ARGV[1] == '0' and resetAt <= now then
  redis.call('HSET', KEYS[1], 'announced', 2)
end
local blockFor = tonumber(ARGV[5])
local from = timely and now or sentAt
if blockFor >= 0 and from + blockFor > now then
  -- A later block extends the wait; a ban still running keeps its end (a plain 429 that ends
  -- later took the ban's flag, and refusals said rate_limited during the ban).
  blockedUntil = math.max(blockedUntil, from + blockFor)
  if ARGV[6] == '1' then bannedUntil = math.max(bannedUntil, from + blockFor) end
  redis.call('HSET', KEYS[1], 'blockedUntil', blockedUntil, 'bannedUntil', bannedUntil)
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[8]))
local state = ${STATE}
redis.call('PUBLISH', ARGV[7], state)
return state`;

/**
 * Runs a script by its SHA-1: one round trip a decision. When Redis does not know it (first use,
 * a restart, SCRIPT FLUSH), once more with its source, which EVAL caches for the next time. Only
 * then: NOSCRIPT says the script did not run, any other failure (a reply lost with its connection)
 * may come after it ran, and sent again, a release given back unanswered took two from the budget.
 */
function script(redis: RedisClient, source: string) {
  const sha = createHash('sha1').update(source).digest('hex');
  return async (keys: string[], args: string[]): Promise<unknown> => {
    try {
      return await redis.evalSha(sha, { keys, arguments: args });
    } catch (error) {
      if (!String((error as Error)?.message).includes('NOSCRIPT')) throw error;
      return redis.eval(source, { keys, arguments: args });
    }
  };
}

/** Why a falling-back process holds its calls back with budget left, told in its log and refusals. */
const HELD_FOR_OTHERS = "Redis does not answer, and what is left of the rate-limit budget is kept for the key's other processes until it does (check that Redis runs)";

/** Why {@link bounded} gave up: Redis did not answer in time. */
class SlowRedis extends Error {}

/** Why a process falls back while Redis answers: Redis lost the key's state ({@link Shared.#lost}). */
class LostState extends Error {}

/** Rejects after `ms` (never for `Infinity`), or when `signal` aborts: no decision waits on Redis longer. */
function bounded<T>(promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    // The verdict waits for the I/O of the loop turn in which the timer fires: a process that was
    // busy (or descheduled) past `ms` reads the reply that came in meanwhile before calling Redis slow.
    const late = () => setImmediate(() => reject(new SlowRedis(`no answer within the ${ms} ms of commandTimeoutMs`)));
    const timer = Number.isFinite(ms) ? setTimeout(late, ms) : undefined;
    const onAbort = () => reject(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    });
  });
}

// Every option's name, to catch a misspelt one from JavaScript (`commandTimeout`), which would
// otherwise keep its default without a word; `satisfies` keeps the list the same as the interface.
const OPTIONS = Object.keys({ redis: 0, prefix: 0, commandTimeoutMs: 0, onWarning: 0 } satisfies Record<keyof RedisCoordinatorOptions, 0>);
const CLIENT_METHODS = ['evalSha', 'eval', 'duplicate', 'on'] as const;
const HOW = 'createRedisCoordinator({ redis: await createClient({ url }).connect() }), with createClient from the redis package (node-redis 5 or newer)';

/**
 * Checks the options, from JavaScript too: each `ValidationError` says what to pass. Not a
 * `TypeError`: only PetStoreErrors leave the client's side, its setup included.
 */
function checkOptions(options: unknown): asserts options is RedisCoordinatorOptions {
  const fail = (problem: string, option = 'options'): never => {
    throw configError(`createRedisCoordinator(): ${problem}`, option);
  };
  if (hasMethods(options, CLIENT_METHODS)) fail(`pass the client as the redis option: createRedisCoordinator({ redis }).`);
  if (typeof options !== 'object' || options === null) fail(`pass the options object: ${HOW}.`);
  const given = options as Record<string, unknown>;
  checkKnownOptions(given, OPTIONS, 'createRedisCoordinator()', configError);
  const { redis, prefix, commandTimeoutMs, onWarning } = given;
  // A cluster, a pool and a sentinel client have a client's methods, but the coordinator's keys
  // lie in different slots of a cluster, and none's duplicate() is a connection that can unref.
  const several =
    hasMethods(redis, ['getMasters']) ? 'a cluster (createCluster())'
    : hasMethods(redis, ['getSentinelNode']) ? 'a sentinel client (createSentinel())'
    : hasMethods(redis, ['execute']) ? 'a pool (createClientPool())'
    : undefined;
  if (several || !hasMethods(redis, CLIENT_METHODS)) {
    const got =
      redis === undefined ? 'it is missing'
      : typeof redis === 'string' ? 'got a string: pass a client, not its URL'
      : several ? `got ${several}, which is not supported: pass a client of one Redis`
      : hasMethods(redis, ['evalsha', 'duplicate']) ? 'got what looks like an ioredis client, which is not supported'
      : `got ${typeof redis === 'object' ? 'an object' : `a ${typeof redis}`} without ${CLIENT_METHODS.join(', ')}`;
    fail(`redis must be a node-redis client; ${got}. Use ${HOW}.`, 'redis');
  }
  if (prefix !== undefined && typeof prefix !== 'string') fail('prefix must be a string.', 'prefix');
  if (commandTimeoutMs !== undefined && !(typeof commandTimeoutMs === 'number' && commandTimeoutMs > 0 && commandTimeoutMs <= MAX_TIMER_MS)) {
    fail(`commandTimeoutMs must be a number of milliseconds above 0, at most ${MAX_TIMER_MS}.`, 'commandTimeoutMs');
  }
  if (onWarning !== undefined && typeof onWarning !== 'function') fail('onWarning must be a function.', 'onWarning');
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
 * // Without an 'error' listener, node-redis ends the process when Redis goes away.
 * const redis = await createClient({ url: process.env.REDIS_URL }).on('error', () => {}).connect();
 * const client = new PetStoreClient({ apiKey, baseUrl, coordinator: createRedisCoordinator({ redis }) });
 * ```
 *
 * @throws ValidationError when `redis` is not a node-redis client (a URL, an ioredis client) or
 * an option is unknown or of the wrong type; the message says what to pass, `issues` which option.
 */
export function createRedisCoordinator(options: RedisCoordinatorOptions): RedisCoordinator {
  checkOptions(options);
  const { redis } = options;
  const prefix = options.prefix ?? 'animal-store:rl';
  const timeoutMs = options.commandTimeoutMs ?? 250;
  const run = { acquire: script(redis, ACQUIRE), release: script(redis, RELEASE), observe: script(redis, OBSERVE) };
  const bound = new Map<string, Shared>();
  let subscriber: RedisSubscriber | undefined;
  let closed = false;
  // node-redis is open from `connect()` on, reconnecting included, until it is closed.
  let opened = false;

  /** One pub/sub connection for every key; it never keeps the process alive. */
  const subscribe = async (channel: string, listener: (message: string) => void) => {
    // The connection this call uses: close() may drop the coordinator's while it connects.
    let connection = subscriber;
    if (!connection) {
      const own = (connection = subscriber = redis.duplicate());
      // Redis going away wakes every waiter of this process, to fall back rather than sleep out a
      // lease that nobody will release through Redis.
      own.on('error', () => {
        // node-redis says no 'end' for a client closed while it reconnects (Redis down at exit):
        // this connection, which retries on a timer that holds the process, stops with it.
        if (isClosed()) {
          if (own === subscriber) unsubscribe();
          else own.destroy();
        }
        for (const shared of bound.values()) shared.wake();
      });
      try {
        await connection.connect();
      } catch (error) {
        // Not kept: a decision on it would fail ("The client is closed") until the app's client
        // ended; the next decision (a second on) connects a new one. Destroyed, it holds nothing.
        if (connection === subscriber) subscriber = undefined;
        connection.destroy();
        throw error;
      }
      // close() (or the app's client ending) dropped it while it connected, and node-redis'
      // destroy() does not stop a connection on its way: it is closed here, or it stays open.
      if (connection !== subscriber) connection.destroy();
      connection.unref();
    }
    await connection.subscribe(channel, listener);
  };

  /** Closes the pub/sub connection; a key's next decision on Redis subscribes again. */
  const unsubscribe = () => {
    subscriber?.destroy();
    subscriber = undefined;
    for (const shared of bound.values()) shared.unsubscribed();
  };
  // A worker that finishes and closes its Redis client exits: the subscriber goes with it. The app
  // may connect the client again (a serverless function between invocations): Redis is used again.
  const onEnd = () => {
    opened = true;
    unsubscribe();
  };
  // Connected again after the connection dropped (a restart, a failover): Redis may be back on an
  // older copy of the state, or an empty one, which each process checks at once.
  const onReady = () => {
    for (const shared of bound.values()) shared.reconnected();
  };
  redis.on('end', onEnd);
  redis.on('ready', onReady);
  // Closed for good: the app's client, which may live on, no longer holds the coordinator.
  const close = async () => {
    closed = true;
    redis.off?.('end', onEnd);
    redis.off?.('ready', onReady);
    unsubscribe();
  };
  const isClosed = () => {
    if (redis.isOpen !== false) opened = true;
    return closed || redis.isOpen === false;
  };
  // A client the app never connected (`createClient()` without `connect()`) is a slip, not a
  // lifecycle: it is said once, where a client seen open and closed since is quietly not used.
  const neverConnected = () => !opened && !closed && redis.isOpen === false;

  const bind = (scope: CoordinatorScope): RateLimitCoordinator => {
    const id = createHash('sha256').update(`${scope.baseUrl}\n${scope.apiKey}`).digest('hex').slice(0, 32);
    let shared = bound.get(id);
    if (!shared) {
      // Keys belong to a database, pub/sub channels to the whole server: processes of the same key
      // in another database keep a state of their own, and must not hear this one's.
      const database = redis.options?.database ?? 0;
      const channel = `${prefix}:${id}:v${FORMAT}:changed${database ? `:db${database}` : ''}`;
      shared = new Shared(`${prefix}:${id}`, channel, run, timeoutMs, options.onWarning, subscribe, isClosed, neverConnected);
      bound.set(id, shared);
    }
    if (scope.warn) shared.loggers.add(scope.warn);
    return shared;
  };

  const unbound = (): never => {
    throw configError("createRedisCoordinator(): pass it as the client's coordinator option; the client binds it to its API key.", 'coordinator');
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

/**
 * `performance.now()`'s offset from Redis' clock (`kept`), given one more `measured` from a reply.
 * Each measure is late by the reply's trip and the event loop's lag, never early: keep the
 * smallest, let it rise by a millisecond a reply so it follows Redis' clock if that steps back.
 * A reply to this process's own command, read `tripMs` after it was sent, is late by no more than
 * that: measured higher still than the offset kept, Redis' clock stepped back, and the measure is
 * taken at once (at a millisecond a reply, an hour took millions of them).
 */
const measure = (kept: number | undefined, measured: number, tripMs = Infinity) =>
  kept === undefined || measured - tripMs > kept ? measured : Math.min(measured, kept + 1);

/** Two times on this machine's clock, converted from Redis' through a measured offset, that are the same. */
const near = (a: number | undefined, b: number | undefined) => a === b || (a !== undefined && b !== undefined && Math.abs(a - b) < 50);

type Scripts = Record<'acquire' | 'release' | 'observe', (keys: string[], args: string[]) => Promise<unknown>>;
/** A state's epoch and `seq` ({@link STATE}). */
type Seen = readonly [epoch: number, seq: number];

/**
 * The coordinator of one key on Redis, with its in-process fallback. Its own times (when Redis
 * failed, when the state was found lost, when a slot's lease ends, when the window its peers were
 * counted in ends) are kept on `performance.now()`, which does not step: this machine's clock
 * may step (NTP, a VM resumed, a user), and on `Date.now()` a step back kept the process off
 * Redis for as long as the step, a step forward made slots in flight look expired. The fallback's
 * clock ({@link MemoryCoordinator.now}) dates what is shown; Redis' clock decides on Redis.
 */
class Shared implements RateLimitCoordinator {
  readonly #keys: { state: string; slots: string; processes: string; formats: string; channel: string };
  /** This process's id among those sharing the key. */
  readonly #id = String(Math.floor(Math.random() * Number.MAX_SAFE_INTEGER));
  /**
   * What Redis last said of the processes sharing the key (a decision's reply, or a slot granted
   * or released anywhere, on pub/sub): how many, and the slots they held in the window known
   * then, which ends at `until` (on `performance.now()`).
   */
  #peers: { processes: number; inFlight: number; until: number } | undefined;
  /**
   * Until when Redis counts this process among the key's (on `performance.now()`): `PROCESS_TTL_MS`
   * from its last decision there, unless the state it decided in was lost since.
   */
  #countedUntil = -Infinity;
  readonly #fallback = new MemoryCoordinator();
  readonly #changes = new Signal();
  readonly #listeners = new Set<(state: RateLimitState | undefined) => void>();
  #snapshot: RateLimitState | undefined;
  /** When Redis last failed (on `performance.now()`), or `undefined` while it answers. */
  #failedAt: number | undefined;
  /** What is said once Redis is used again: what the warning of the fall back said went wrong is over. */
  #rejoined = 'Redis answers again';
  /** When this process last found that Redis lost the key's state ({@link Shared.#lost}), on `performance.now()`. */
  #lostAt = -Infinity;
  #subscribed: Promise<void> | undefined;
  /**
   * `performance.now()` minus Redis' clock, measured from replies ({@link measure}); `undefined`
   * before any. What a command's send time and deadline on Redis' clock are reckoned from, and the
   * shared state's times on this machine's. Measured on `Date.now()`, a step of this machine's
   * clock (NTP) between a reply and the next command dated that command minutes off (taken for one
   * Redis ran late), and a step forward showed resets minutes in the past.
   */
  #monotonic: number | undefined;
  /** The last shared state the fallback was told, without its time. */
  #shared = '';
  /** The epoch of the latest state Redis sent (0: none yet); see {@link STATE}. */
  #epoch = 0;
  /** The highest `seq` Redis sent of that epoch, in a reply or a message ({@link Shared.#current}). */
  #seq = 0;
  /** The epochs of states Redis has lost since this process knew them: what still comes of them is stale. */
  readonly #lostEpochs = new Set<number>();
  /** The slots this process holds on Redis, by id: when each lease ends (on `performance.now()`). */
  readonly #held = new Map<string, number>();
  /** Counts the messages received (states, released slots): a refusal is current while it is unchanged. */
  #generation = 0;
  /** Whether the app was told that its node-redis client was never connected (once). */
  #toldNotConnected = false;
  /** The wake-up {@link Shared.wake} has scheduled for the next turn, if any. */
  #waking: ReturnType<typeof setImmediate> | undefined;
  /**
   * The pub/sub listener, one function for the life of the key: a subscription that Redis was too
   * slow to confirm is asked for again, and node-redis keeps one listener per function.
   */
  readonly #onMessage = (message: string) => this.#receive(message);
  /** The decision this process is asking Redis for, which other waiters of this process queue behind. */
  #flight: Promise<{ throttle: boolean; decision: AcquireDecision | undefined }> | undefined;
  /**
   * The releases sent to Redis and not answered yet. One that Redis did not know the script of
   * (SCRIPT FLUSH, a restart) runs again by EVAL after its NOSCRIPT, behind a decision sent
   * meanwhile, which then found the slot still in flight.
   */
  #releasing = 0;
  /** The releases of the slots the fallback granted that are still held. */
  readonly #fallbackHeld = new Set<() => void>();
  /**
   * The warn of each client bound to the key, told when there is no `onWarning` (each logger
   * once: a client hands the same function for the same logger and level).
   */
  readonly loggers = new Set<(message: string) => void>();

  constructor(
    key: string,
    channel: string,
    private readonly run: Scripts,
    private readonly timeoutMs: number,
    private readonly onWarning: ((message: string) => void) | undefined,
    private readonly listen: (channel: string, listener: (message: string) => void) => Promise<void>,
    private readonly closed: () => boolean,
    private readonly neverConnected: () => boolean,
  ) {
    const own = `${key}:v${FORMAT}`;
    this.#keys = { state: `${own}:state`, slots: `${own}:slots`, processes: `${key}:processes`, formats: `${key}:formats`, channel };
    this.#fallback.subscribe((state) => {
      if (this.#failedAt !== undefined) this.#publish(state);
    });
  }

  readonly getSnapshot = (): RateLimitState | undefined => this.#snapshot;

  readonly subscribe = (listener: (state: RateLimitState | undefined) => void): (() => void) => {
    const entry = (state: RateLimitState | undefined) => listener(state);
    this.#listeners.add(entry);
    // A process that only watches (a dashboard) hears every process's responses from now on.
    void this.#redis();
    return () => void this.#listeners.delete(entry);
  };

  async acquire(request: AcquireRequest): Promise<AcquireDecision> {
    for (;;) {
      const redis = await this.#redis(request.signal);
      if (!redis) return this.#fallbackAcquire(request);
      // One decision on Redis at a time per process and key. When a change wakes every waiter of
      // this process, they would otherwise all ask at once (hundreds of scripts for one released
      // slot, which slowed Redis past the timeout in the storm); instead they queue, and a
      // refusal that nothing has changed since is everyone's answer.
      const flight = this.#flight;
      if (!flight) break;
      const since = this.#generation;
      // The flight's owner may abort; then this waiter asks for itself.
      const answer = await bounded(flight, Infinity, request.signal).catch((error: unknown) => {
        request.signal?.throwIfAborted();
        return { throttle: request.throttle, decision: undefined, error };
      });
      if (answer.decision && answer.decision.kind !== 'granted' && answer.throttle === request.throttle && this.#generation === since) {
        return answer.decision;
      }
    }
    const flight = this.#ask(request);
    this.#flight = flight;
    try {
      const { decision } = await flight;
      // A window this process was told of holds even when Redis has not run that observation yet
      // (its script reloaded after NOSCRIPT, behind this decision) or lost it with a connection.
      if (decision?.kind === 'granted') {
        const known = this.#fallback.blocked();
        if (known) {
          decision.release();
          return known;
        }
      }
      return decision ?? this.#fallbackAcquire(request);
    } finally {
      if (this.#flight === flight) this.#flight = undefined;
    }
  }

  /** One decision on Redis; no decision when Redis failed (the caller falls back). Never rejects but with an abort. */
  async #ask(request: AcquireRequest, remeasured = false): Promise<{ throttle: boolean; decision: AcquireDecision | undefined }> {
    const { throttle } = request;
    const since = this.#generation;
    const failedAt = this.#failedAt;
    const seen = this.#seen();
    const { take, hold, release } = this.#slot(throttle, request.leaseMs, this.#deadline());
    try {
      const sentAt = performance.now();
      const reply = await bounded(take(), this.timeoutMs, request.signal);
      const [kind, waitMs, banned, shared, processes, inFlight, probe] = reply as [number, number, number, string, number, number, number?];
      if (kind === 4) {
        // Back within the timeout, yet past its deadline by Redis' clock: that clock stepped ahead
        // of the offset measured (NTP, a failover), the decision was not late. Measured from this
        // reply, it is asked again, once (before: each decision read as late until an answer came).
        if (remeasured) throw new Error(`Redis ran the decision more than ${this.timeoutMs} ms late`);
        this.#monotonic = measure(this.#monotonic, performance.now() - waitMs);
        return this.#ask(request, true);
      }
      // Decided on a state that is not the one this process knows (Redis lost that, or this one
      // since, or went back to an older copy of it), or this process fell back meanwhile (a
      // message told it of a lost state, which other processes may not have restored yet): the
      // slot goes back, and it falls back.
      if (!this.#adopt(shared, seen, sentAt) || this.#failedAt !== failedAt) {
        release();
        return { throttle, decision: undefined };
      }
      this.#answered();
      this.#count(processes, inFlight);
      this.#countedUntil = sentAt + PROCESS_TTL_MS;
      if (kind === 0) {
        hold(probe === 1);
        return { throttle, decision: { kind: 'granted', release } };
      }
      const wait = Math.max(0, waitMs ?? 0);
      if (kind === 1) return { throttle, decision: { kind: 'blocked', waitMs: wait, banned: banned === 1 } };
      if (kind === 2) return { throttle, decision: { kind: 'spent', waitMs: wait } };
      // A slot released or a response observed while the script ran, or a release sent before it
      // and still to run: its "busy" (or "lost") may be out of date, and that change's wake-up
      // has already passed (or comes only with the release's message), so ask again at once.
      return { throttle, decision: { kind: kind === 5 ? 'lost' : 'busy', waitMs: this.#generation === since && this.#releasing === 0 ? wait : 0 } };
    } catch (error) {
      // Given up on, the script may still run before its deadline: the slot it would take is
      // given back by the next command on the same connection.
      release();
      request.signal?.throwIfAborted();
      this.#fail(error);
      return { throttle, decision: undefined };
    }
  }

  /**
   * A new slot on Redis: `take` runs the decision (ACQUIRE) that takes it, `hold` notes it held
   * once granted (to restore it if Redis loses it), `release` gives it back. This process's
   * waiters need no round trip through Redis to hear of a release; their next decision is sent
   * after it on the same connection. The release is sent once the take has settled: a take Redis
   * did not know the script of (SCRIPT FLUSH, a restart) runs again by EVAL after its NOSCRIPT
   * comes back, behind a release sent meanwhile, which would then give back nothing.
   */
  #slot(throttle: boolean, leaseMs: number, deadline: string) {
    const slot = String(Math.floor(Math.random() * Number.MAX_SAFE_INTEGER));
    const { state, slots, processes, formats, channel } = this.#keys;
    // The take while it has not settled: a release meanwhile waits for it.
    let taking: Promise<unknown> | undefined;
    const take = () =>
      (taking = this.run
        .acquire(
          [state, slots, processes, formats],
          [throttle ? '1' : '0', String(Math.ceil(leaseMs)), slot, deadline, this.#id, String(PROCESS_TTL_MS), channel, FORMAT],
        )
        .finally(() => (taking = undefined)));
    // Whether Redis granted it as a probe of an unknown budget: lost, it holds the next probe back.
    let probe = false;
    const hold = (asProbe = false) => {
      this.#held.set(slot, performance.now() + leaseMs);
      probe = asProbe;
    };
    // Given back once, as in-process: a second release unanswered took one more from the budget.
    let released = false;
    const release = (unanswered = false) => {
      if (released) return;
      released = true;
      this.#held.delete(slot);
      const send = () => {
        this.#releasing++;
        void this.run
          .release([slots, state], [slot, channel, unanswered ? '1' : '0', probe ? '1' : '0'])
          .catch(() => {})
          .finally(() => this.#releasing--);
      };
      if (taking) void taking.then(send, send);
      else send();
      this.wake();
    };
    return { take, hold, release };
  }

  /**
   * What Redis last said of the processes sharing the key and the slots in flight, for the window
   * known now: in a reply to this process's decision, or `heard` in another process's grant.
   */
  #count(processes: number, inFlight: number, heard = false): void {
    if (Number.isFinite(processes) && Number.isFinite(inFlight)) {
      // A count heard only raises this process's own; its decisions set it. A Redis restarted
      // empty counts the first process back alone: the others, which heard that before deciding
      // (or while they fell back), took 1, and each probed a reset window of 2 beside it.
      if (heard && this.#peers) processes = Math.max(processes, this.#peers.processes);
      // The fallback's window moves with a step of this machine's clock; what is left of it does not.
      const now = this.#fallback.now();
      const resetAt = this.#fallback.window()?.resetAt;
      this.#peers = { processes, inFlight, until: resetAt === undefined ? -Infinity : performance.now() + resetAt - now };
    }
  }

  /**
   * The in-process fallback while Redis fails. It cannot see what other processes send, so with
   * `throttle` it keeps one request in flight, and sends only while what it knows is left is more
   * than the other processes (as many as Redis last counted) and the slots in flight then: each
   * of them may still send one, every other request comes after an answer that says
   * what is left. The budget it learned before the fall is shared with processes that may be
   * spending it: sending it all at once, or one at a time in each of fifty processes, ends in a
   * burst of 429s and a ban.
   */
  #fallbackAcquire(request: AcquireRequest): AcquireDecision {
    const now = this.#fallback.now();
    // Redis' count of the processes may be short (one that has not been granted a slot yet is not
    // in it) or missing (Redis failed from the start, or refuses writes): whatever it says, half
    // of the limit is left to the others, so that ten or fifty processes falling back together
    // stay within it. Redis, once it answers, hands out the rest.
    const peers = this.#peers;
    // Counts heard once Redis counts this process no more (its last decision there a minute old,
    // or in a state lost since) leave it out: one back after a minute probed a reset window of 3
    // beside the three others it had heard of.
    const processes = peers ? peers.processes + (this.#countedUntil > performance.now() ? 0 : 1) : 1;
    const counted = peers ? processes - 1 + (peers.until > performance.now() ? peers.inFlight : 0) : 0;
    const reserve = Math.max(counted, Math.floor((this.#fallback.window()?.limit ?? 0) / 2));
    if (request.throttle && !this.#fallback.blocked(now)) {
      if (this.#fallbackHeld.size > 0) return { kind: 'busy', waitMs: Infinity };
      // Redis lost the key's state a moment ago: the counts heard since are short until every
      // process has restored its slots (one that fell back on them sent beside 29 requests in
      // flight, counting 9). Ask Redis again once they have.
      const lost = Math.ceil(this.#lostAt + REJOIN_AFTER_MS - performance.now());
      if (lost > 0) return { kind: 'busy', waitMs: lost };
      // The window known has reset: the new one's budget is unknown, and a probe from every
      // process could overspend a limit smaller than their number. Wait for Redis instead.
      if ((this.#fallback.lastLimit(now) ?? Infinity) < processes) return { kind: 'spent', waitMs: REJOIN_AFTER_MS };
    }
    const decision = this.#fallback.acquire(request, reserve);
    if (decision.kind === 'spent' && (this.#fallback.window()?.remaining ?? 0) > 0) {
      // Spent only for the share left to the other processes: Redis, once it answers, knows what
      // they sent. Ask it again each second (a busy wait, bounded as one behind requests in flight) rather than wait for the reset.
      return { kind: 'busy', waitMs: Math.min(decision.waitMs, REJOIN_AFTER_MS), reason: HELD_FOR_OTHERS };
    }
    if (decision.kind !== 'granted') return decision;
    // The slot is taken on Redis too, without a deadline or a throttle: it counts among the slots
    // in flight as soon as Redis runs the script (after a pause, or once node-redis reconnects),
    // so processes that decide there meanwhile leave room for it. Its release follows it on the
    // same connection. A grant the fallback made as a probe of an unknown budget is marked one,
    // so that lost, it holds the next probe back on Redis too (RELEASE checks that Redis knows no
    // window either); one the throttle stepped aside for (no rate-limit headers) is no probe.
    const onRedis = this.closed() ? undefined : this.#slot(false, request.leaseMs, '0');
    onRedis?.take().catch(() => {});
    onRedis?.hold(decision.probe);
    const release = (unanswered = false) => {
      this.#fallbackHeld.delete(release);
      decision.release(unanswered);
      // The slot's release on Redis wakes this process's waiters; without Redis, they are woken here.
      if (onRedis) onRedis.release(unanswered);
      else this.wake();
    };
    this.#fallbackHeld.add(release);
    return { kind: 'granted', release };
  }

  async observe(observation: RateLimitObservation): Promise<void> {
    // The fallback always learns too, so that a fall back starts from what is known.
    this.#fallback.observe(observation);
    // Sent even while this process falls back: a 429 it meets then must still reach the processes
    // that coordinate through Redis. A call waits for it at most commandTimeoutMs (below).
    if (this.closed()) return;
    const { blockForMs } = observation;
    const sent = this.#record(observation.budget ? '1' : announcesNoBudget(observation) ? '0' : '2', observation, { answered: true });
    // Falling back, calls do not wait for Redis to record what they met (it is queued for when
    // Redis is back), except a 429: a process that exits at once must not lose it, and Redis may
    // well answer again already. A 429 blocks the calls that would follow anyway.
    if (this.#failedAt !== undefined && blockForMs === undefined) return void sent.catch(() => {});
    try {
      await bounded(sent, this.timeoutMs);
    } catch (error) {
      // Slow is not failed here: the observation still runs, and acquire tells when Redis is too slow.
      if (!(error instanceof SlowRedis)) this.#fail(error);
    }
  }

  /**
   * Runs OBSERVE: what a response said (`hasBudget` as the script reads it, `answered` when the
   * service did answer), or what this process knows, and `slots` to restore (id, lease left in
   * ms) with the epoch found `rolledBack` (0: none). Resolves once the state it returns is adopted.
   */
  #record(hasBudget: '0' | '1' | '2', observation: Omit<RateLimitObservation, 'status'>, { answered = false, slots = [], rolledBack = 0 }: { answered?: boolean; slots?: string[]; rolledBack?: number } = {}, again = false): Promise<void> {
    const { budget, blockForMs, banned } = observation;
    const seen = this.#seen();
    const sentAt = performance.now();
    const [redisSentAt, deadline] = this.#sentAtAndDeadline();
    return this.run
      .observe(
        [this.#keys.state, this.#keys.slots],
        [
          hasBudget,
          String(budget?.limit ?? 0),
          String(budget?.remaining ?? 0),
          String(budget?.resetInMs ?? 0),
          String(blockForMs ?? -1),
          banned ? '1' : '0',
          this.#keys.channel,
          String(STATE_TTL_MS),
          redisSentAt,
          deadline,
          String(rolledBack),
          answered ? '1' : '0',
          ...slots,
        ],
      )
      .then((state) => {
        this.#receive(state as string, seen, sentAt);
        // Past its deadline by Redis' clock, yet answered within commandTimeoutMs: Redis' clock
        // stepped ahead (NTP, a failover), the observation was not late. Taken as late, its block
        // was dated by the old measure of that clock, and may have ended before it ran (a 429
        // dropped): sent again, once, on the measure this reply gave.
        const redisNow = Number((state as string).split(',')[7]);
        if (!again && deadline !== '0' && redisNow > Number(deadline) && performance.now() - sentAt <= this.timeoutMs) {
          return this.#record(hasBudget, observation, { answered, slots, rolledBack }, true);
        }
      });
  }

  /**
   * Redis lost the key's state (FLUSHALL, a restart without persistence, an eviction), and the
   * slots in flight with it: the first answer recorded after set the window again, and Redis
   * granted its remaining once more beside the requests still spending it (a storm wiped five
   * times sent 35 to 49 requests on a budget of 30, banned). So Redis gets back what this process
   * knows: the slots it holds, the window it last knew and its block, in one script (the lowest
   * remaining binds, as for any answer); the state that publishes tells the other processes,
   * which restore theirs. Meanwhile this process falls back for a second, sending nothing with
   * `throttle` ({@link Shared.#fallbackAcquire}).
   *
   * Redis went back to an older copy of the state (`rolledBack`, its epoch: a restart from an
   * older snapshot, a failover to a replica that was behind): it lost the newer state the same
   * way, with a higher remaining and perhaps no block, but kept the epoch, so no other process
   * can tell. The same script starts a new epoch then (unless another process's did already),
   * which tells them.
   */
  #lost(rolledBack = 0): void {
    const now = this.#fallback.now();
    const known = this.#fallback.window();
    const window = known && known.resetAt > now ? known : undefined;
    const blocked = this.#fallback.blocked(now);
    const monotonic = performance.now();
    const slots = [...this.#held].flatMap(([slot, until]) => (until > monotonic ? [slot, String(Math.ceil(until - monotonic))] : []));
    void this.#record(
      window ? '1' : '2',
      {
        budget: window && { limit: window.limit, remaining: window.remaining, resetInMs: window.resetAt - now },
        blockForMs: blocked?.waitMs,
        banned: blocked?.banned ?? false,
      },
      { slots, rolledBack },
    ).catch(() => {});
    this.#lostAt = monotonic;
    // Said as what happened, whichever it was: Redis answers, it did not fail.
    this.#fail(new LostState());
  }

  changed(signal?: AbortSignal): Promise<void> {
    return Promise.race([this.#changes.next(signal), this.#fallback.changed(signal)]);
  }

  /**
   * Whether to ask Redis now: yes while it answers; after a failure, again once a second has
   * passed (it is back only once a script answers).
   */
  async #redis(signal?: AbortSignal): Promise<boolean> {
    if (this.closed()) {
      if (!this.#toldNotConnected && this.neverConnected()) {
        this.#toldNotConnected = true;
        this.#warn('@animal-store/sdk: the node-redis client given to createRedisCoordinator() is not open (connect it: `await client.connect()`); until it is, rate limits are coordinated in this process only.');
      }
      return false;
    }
    if (this.#failedAt !== undefined && performance.now() - this.#failedAt < REJOIN_AFTER_MS) return false;
    try {
      this.#subscribed ??= this.listen(this.#keys.channel, this.#onMessage);
      await bounded(this.#subscribed, this.timeoutMs, signal);
    } catch (error) {
      signal?.throwIfAborted();
      this.#subscribed = undefined;
      this.#fail(error);
      return false;
    }
    return true;
  }

  /**
   * A decision came back in time: if Redis had failed, it is back (said once). Only decisions
   * count: an observation's answer may come however late, and would make the warnings flap.
   */
  #answered(): void {
    if (this.#failedAt === undefined) return;
    this.#failedAt = undefined;
    this.#warn(`@animal-store/sdk: ${this.#rejoined}; rate limits are coordinated across processes again.`);
  }

  /** Says `message` through `onWarning`, else every bound client's logger, else the console; one that throws is reported and decides nothing. */
  #warn(message: string): void {
    notify(this.onWarning ? [this.onWarning] : this.loggers.size ? this.loggers : [console.warn], message);
  }

  /**
   * Falls back: Redis failed with `error`, said once; or (`error` a {@link LostState}) it answers
   * but lost the key's state, which every process gives back meanwhile ({@link Shared.#lost}).
   */
  #fail(error: unknown): void {
    // Closed (the coordinator, or the app's client: a shutdown), the coordinator is not used, quietly.
    if (this.closed()) return;
    if (this.#failedAt === undefined) {
      const lost = error instanceof LostState;
      this.#warn(
        lost
          ? "@animal-store/sdk: Redis lost the key's rate-limit state, or part of it (FLUSHALL, an eviction under maxmemory, a restart, or a return to an older copy: an older snapshot, a replica that was behind); rate limits are coordinated in this process only for a second, while every process gives Redis back the slots it holds."
          : `@animal-store/sdk: Redis failed (${error instanceof Error ? error.message : String(error)}); rate limits are coordinated in this process only until it answers again.`,
      );
      // Redis answered all along when it lost the state: what is back is the state.
      this.#rejoined = lost ? "Redis holds the key's rate-limit state again" : 'Redis answers again';
    }
    this.#failedAt = performance.now();
  }

  /**
   * The Redis time past which a command sent now is late: a decision the client has given up on
   * by then. Twice the timeout, since the offset is measured from replies and runs a little early.
   */
  #deadline(): string {
    return this.#sentAtAndDeadline()[1];
  }

  /** Now and the deadline of a command sent now, on Redis' clock as this process estimates it; '0' before any reply. */
  #sentAtAndDeadline(): [string, string] {
    if (this.#monotonic === undefined) return ['0', '0'];
    const sentAt = Math.round(performance.now() - this.#monotonic);
    return [String(sentAt), String(sentAt + 2 * this.timeoutMs)];
  }

  /**
   * A message on the channel: a new state or a released slot (`released,<epoch>,<seq>,<in flight>`),
   * and waiters ask again; or a granted slot (`slots,<epoch>,<seq>,<in flight>,<processes>`), which
   * frees nothing. Counts are kept only from the state this process knows. Or the state a script
   * of this process returned, sent (at `sentAt`, on `performance.now()`) when this process had
   * `seen` what {@link Shared.#seen} says.
   */
  #receive(message: string, seen?: Seen, sentAt?: number): void {
    const [what, epoch, seq, inFlight, processes] = message.split(',');
    if (what === 'slots' || what === 'released') {
      if (this.#current(Number(epoch), Number(seq))) this.#count(Number(processes ?? this.#peers?.processes ?? 1), Number(inFlight), true);
      if (what === 'slots') return;
    } else this.#adopt(message, seen, sentAt);
    this.wake();
  }

  /** The epoch and highest `seq` this process has seen: taken when a script is sent, for its reply. */
  #seen(): Seen {
    return [this.#epoch, this.#seq];
  }

  /**
   * Whether what Redis sent with `epoch` is of the state this process knows. The epoch of a state
   * Redis has lost since is a message published before the loss and delivered after it (0: a
   * release after a loss, before any state). Any other epoch means Redis lost the state, which
   * matters while this process holds slots or knows a window or a block to give back
   * ({@link Shared.#lost}); after a day without use, the state expired and nothing is lost. An
   * epoch is told apart, not ordered: a Redis restarted on a clock that is behind starts an
   * earlier one, and taken for stale, every decision of that Redis was given back for good.
   *
   * A reply (`seen`: what this process had seen when it sent the script) of the epoch it had seen,
   * numbered no higher than the highest `seq` seen then, ran on an older copy of the state: the
   * script that numbered that `seq` had run before this one was sent, and every script numbers
   * one more. Redis lost what came after the copy as surely as with a FLUSHALL, so the same
   * follows, whatever this process knows: the others cannot tell until it starts a new epoch. So
   * does a reply of an epoch lost since, to a script sent once this process knew the later one:
   * Redis is back on a copy from before the loss (taken for stale, it went unnoticed, and a process
   * started afterwards sent on the copy). A message is not checked: pub/sub may deliver it after
   * the reply to a later script.
   */
  #current(epoch: number, seq: number, seen?: Seen): boolean {
    if (epoch === this.#epoch) {
      if (seen?.[0] === epoch && seq <= seen[1]) {
        this.#lost(epoch);
        return false;
      }
      this.#seq = Math.max(this.#seq, seq);
      return true;
    }
    if (!(epoch > 0)) return false;
    if (this.#lostEpochs.has(epoch)) {
      // A reply to a script sent once this process knew a later epoch ran on a copy of the
      // state from before its loss: a rollback, which only a new epoch tells the others of.
      if (seen && seen[0] !== epoch && seen[0] === this.#epoch) this.#lost(epoch);
      return false;
    }
    const known = this.#epoch;
    if (known > 0) this.#lostEpochs.add(known);
    this.#epoch = epoch;
    this.#seq = seq;
    // The processes counted in a lost state are lost with it.
    this.#countedUntil = -Infinity;
    const now = this.#fallback.now();
    if (known > 0 && (this.#held.size > 0 || this.#fallback.blocked(now) || (this.#fallback.window()?.resetAt ?? 0) > now)) {
      this.#lost();
      return false;
    }
    return true;
  }

  /** The pub/sub connection closed (the app closed its Redis client): the next decision on Redis subscribes again. */
  unsubscribed(): void {
    this.#subscribed = undefined;
  }

  /**
   * The client is connected to Redis again. A Redis back from a restart or a failover may hold an
   * older copy of the state (an older snapshot, a replica that was behind) or none, and a process
   * started since would decide on it: so a process that knew the state asks for it at once with
   * an observation that says nothing, whose reply finds the loss ({@link Shared.#current}) and
   * restores what it knows, instead of at its next call (idle, it might make none for long).
   */
  reconnected(): void {
    if (this.#epoch > 0 && !this.closed()) void this.#record('2', { budget: undefined, blockForMs: undefined, banned: false }).catch(() => {});
  }

  /**
   * Wakes this process's waiters to ask again; a refusal given before is out of date. They are
   * woken on the next turn of the event loop, not at once: a refusal reaches its call's wait a few
   * microtasks after it is made (acquire is async, and the client awaits it), and a slot released
   * in between (another call of this process ending) woke nobody, so that call waited out its
   * timeout and failed with a ThrottledError while the slot was free.
   */
  wake(): void {
    this.#generation++;
    this.#waking ??= setImmediate(() => {
      this.#waking = undefined;
      this.#changes.fire();
    });
  }

  /**
   * A state published by any process (or returned to this one, `seen` and `sentAt` as {@link Shared.#receive}
   * says): `limit,remaining,resetAt,blockedUntil,bannedUntil,epoch,seq,now` on Redis' clock. Whether it
   * is of the state this process knows ({@link Shared.#current}); its budget and block are learned
   * either way.
   */
  #adopt(message: string, seen?: Seen, sentAt?: number): boolean {
    const numbers = message.split(',').map(Number);
    let same = true;
    if (numbers.length === 8 && numbers.every(Number.isFinite)) {
      const [limit, remaining, resetAt, blockedUntil, bannedUntil, epoch, seq, redisNow] = numbers as [number, number, number, number, number, number, number, number];
      same = this.#current(epoch, seq, seen);
      const shared = numbers.slice(0, 6).join(',');
      if (shared !== this.#shared && (resetAt > 0 || blockedUntil > redisNow)) {
        // The fallback learns what every process saw, so that if Redis fails it starts from the
        // shared budget and block, not only from this process's answers. Told only on a change:
        // each telling wakes this process's waiters.
        this.#shared = shared;
        const block = Math.max(0, blockedUntil - redisNow);
        const ban = Math.max(0, bannedUntil - redisNow);
        // A ban that ends before the block is told apart, so that the fallback keeps it as Redis does.
        if (ban > 0 && ban < block) this.#fallback.observe({ status: 429, budget: undefined, blockForMs: ban, banned: true });
        this.#fallback.observe({
          status: 200,
          budget: resetAt > 0 ? { limit, remaining, resetInMs: resetAt - redisNow } : undefined,
          blockForMs: block > 0 ? block : undefined,
          banned: ban > 0 && ban >= block,
        });
      }
      const read = performance.now();
      const monotonic = (this.#monotonic = measure(this.#monotonic, read - redisNow, sentAt === undefined ? undefined : read - sentAt));
      if (resetAt > 0) {
        // Redis' times on the fallback's clock: this machine's, followed through its steps.
        const offset = monotonic + this.#fallback.now() - performance.now();
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
    return same;
  }

  #publish(state: RateLimitState | undefined): void {
    this.#snapshot = state;
    notify(this.#listeners, state);
  }
}
