import { check, PET_STATUSES, PetSchema, type NewPet, type Pet } from '../schemas/index.js';
import { ServerNewPetSchema } from './rules.js';
import { FAULT_KINDS, type FaultKind, type FaultOptions, type ResolvedFaults } from './faults.js';
import { RATE_LIMIT_HEADERS, type RateLimitHeaders } from './http.js';
import type { BanEvent } from './server.js';
import { checkKnownOptions } from '../suggest.js';
import { MAX_TIMER_MS } from '../runtime.js';
import { LATEST_INSTANT } from './admin.js';

/** A quota: how many requests a key may send per minute and per day. */
export interface Quota {
  /** Requests allowed in each clock-aligned minute. */
  perMinute: number;
  /** Requests allowed in each UTC day. */
  perDay: number;
}

/** The plans of the spec's rate-limit table. Enterprise quotas are custom: give a {@link Quota}. */
export type PlanName = 'free' | 'pro' | 'business';

/** The quotas of the named plans (spec, section 8). */
export const PLANS: Readonly<Record<PlanName, Readonly<Quota>>> = /* @__PURE__ */ Object.freeze({
  free: /* @__PURE__ */ Object.freeze({ perMinute: 60, perDay: 1_000 }),
  pro: /* @__PURE__ */ Object.freeze({ perMinute: 300, perDay: 10_000 }),
  business: /* @__PURE__ */ Object.freeze({ perMinute: 1_000, perDay: 100_000 }),
});

// An app that imports only this constant from /server must bundle it alone, not the server's
// shared chunk and zod: the server's top-level values are PURE-marked calls or plain literals
// (`1_048_576`, not `1024 * 1024`), which bundlers can drop (the pack test checks it).
/** The API key accepted when no `apiKeys` option is given. It is on the Free plan. */
export const DEMO_API_KEY = 'petstore-demo-key';

/** A seed record: a new pet, optionally with the id it must have. */
export type SeedPet = NewPet & {
  /** The pet's id. Seeds without one get ids counting up from one past the largest id given. */
  id?: number | undefined;
};

/** Options of {@link createReferenceServer}. Every one is optional. */
export interface ReferenceServerOptions {
  /**
   * The accepted API keys, each mapped to a plan name or to a custom (Enterprise) quota.
   * @default { [DEMO_API_KEY]: 'free' }
   */
  apiKeys?: Record<string, PlanName | Quota> | undefined;
  /**
   * The pets the store holds at start and after `reset()`: seed records, or a count of generated
   * ones (deterministic names, categories 1–5, statuses in turn).
   * @default 0
   */
  pets?: number | readonly SeedPet[] | undefined;
  /**
   * The orders `GET /store/orders` lists. The spec shows nothing of an order, so they are opaque:
   * any JSON values, serialized once when the server is created (a BigInt or a cycle is a `TypeError`).
   * @default []
   */
  orders?: readonly unknown[] | undefined;
  /**
   * The clock, in milliseconds since the Unix epoch. It is read on every request, so tests can
   * move time (or use fake timers, which move `Date.now`). When it steps back, each announced
   * `Retry-After` window and ban keeps what was left of it, as with `clock.set`. It must read from
   * 1970 to the end of 9999: another reading is a `TypeError` when the server is created, and a 500
   * saying what it returned afterwards.
   * @default () => Date.now()
   */
  now?: (() => number) | undefined;
  /**
   * How many requests a key may send inside a `Retry-After` window it was given before it is
   * banned. The first 429 never counts: only requests sent while told to wait do.
   * @default 5
   */
  banThreshold?: number | undefined;
  /**
   * How long a ban lasts, in milliseconds: at most the span from the epoch to the end of 9999,
   * so that a ban begun as late as the clock may be moved (9998-12-31T23:59:59.999Z) still ends
   * on a date.
   * @default 900_000 (15 minutes)
   */
  banDurationMs?: number | undefined;
  /** Injected faults (latency, 5xx, dropped connections, truncated bodies), for robustness tests. Off by default. */
  faults?: FaultOptions | undefined;
  /**
   * Which rate-limit headers to send: `X-RateLimit-*` (what the spec names), the IETF draft's
   * `RateLimit` and `RateLimit-Policy`, or both, to test clients against a service that adopts
   * the standard.
   * @default 'x'
   */
  rateLimitHeaders?: RateLimitHeaders | undefined;
  /**
   * Serves the admin API under `/_admin/` (outside `/v1`, no key needed): `POST /_admin/reset`,
   * `GET /_admin/keys`, `GET` and `DELETE /_admin/requests`, `GET` and `POST /_admin/clock`. For
   * test suites in any language driving a server on their own machine; never expose it.
   * In-process, `server.reset()`, `server.inspect()`, `server.requests()` and `server.clock` do
   * the same whatever this says.
   * @default false
   */
  admin?: boolean | undefined;
  /**
   * Called when a key is banned and when its ban ends (the CLI logs both). A listener that throws
   * is reported (`reportError`, else rethrown in a microtask) and changes no answer.
   */
  onBan?: ((event: BanEvent) => void) | undefined;
}

/** Options after defaults are applied and inputs are checked. */
interface ResolvedServerOptions {
  apiKeys: ReadonlyMap<string, Readonly<Quota>>;
  pets: readonly Pet[];
  /** The orders as JSON text, serialized once: `GET /store/orders` answers it as is. */
  orders: string;
  now: () => number;
  /** `now`'s reading when the server was created, checked. */
  created: number;
  banThreshold: number;
  banDurationMs: number;
  faults: ResolvedFaults | undefined;
  rateLimitHeaders: RateLimitHeaders;
  admin: boolean;
  onBan: ((event: BanEvent) => void) | undefined;
}

// Typed as the options are, not as literals (`5`, `false`): a value started from one can change.
/** The defaults of {@link ReferenceServerOptions}; no default is repeated elsewhere. */
export const DEFAULTS = /* @__PURE__ */ Object.freeze({
  /** The demo key, on the Free plan. */
  apiKeys: /* @__PURE__ */ Object.freeze(/* @__PURE__ */ Object.fromEntries([[DEMO_API_KEY, 'free']])) as Record<string, PlanName | Quota>,
  /** No seed pets. */
  pets: 0 as number,
  /** No orders. */
  orders: /* @__PURE__ */ Object.freeze([]) as readonly unknown[],
  /** The real clock, read on every request (so fake timers that move `Date.now` move it too). */
  now: () => Date.now(),
  /** Requests sent while told to wait before a key is banned: 5. */
  banThreshold: 5 as number,
  /** How long a ban lasts: 15 minutes. */
  banDurationMs: 900_000 as number,
  /** The spec's `X-RateLimit-*` headers. */
  rateLimitHeaders: 'x' as RateLimitHeaders,
  /** No admin API. */
  admin: false as boolean,
  /** Fault injection, once `faults` is given: every kind, 200 ms of latency, seed 1. */
  faults: /* @__PURE__ */ Object.freeze({ kinds: FAULT_KINDS, latencyMs: 200, seed: 1 }) as Readonly<{
    /** Every kind of fault. */
    kinds: readonly FaultKind[];
    /** A `latency` fault's delay, in milliseconds. */
    latencyMs: number;
    /** The seed of the draw. */
    seed: number;
  }>,
});

const NAMES = ['Rex', 'Whiskers', 'Bubbles', 'Nibbles', 'Luna', 'Milo', 'Coco', 'Pepper', 'Ziggy', 'Hazel'];

/** Generates `count` deterministic pets with ids 1…count. */
function generatePets(count: number): Pet[] {
  const pets: Pet[] = new Array(count);
  for (let i = 0; i < count; i++) {
    pets[i] = {
      id: i + 1,
      name: `${NAMES[i % NAMES.length]} ${Math.floor(i / NAMES.length) + 1}`,
      categoryId: (i % 5) + 1,
      status: PET_STATUSES[i % PET_STATUSES.length],
    };
  }
  return pets;
}

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

function resolveQuota(plan: PlanName | Quota): Quota {
  if (typeof plan === 'string') {
    const name = plan.toLowerCase();
    // Own plans only: `PLANS.constructor` is a function, and a key given it had no limit at all.
    if (Object.hasOwn(PLANS, name)) return PLANS[name as PlanName];
    throw new TypeError(
      `apiKeys: plan "${plan}" of a key is unknown. Use ${Object.keys(PLANS).map((p) => `"${p}"`).join(', ')}, or { perMinute, perDay } for a custom Enterprise quota.`,
    );
  }
  if (plan && isCount(plan.perMinute) && isCount(plan.perDay) && plan.perMinute > 0 && plan.perDay > 0) {
    return Object.freeze({ perMinute: plan.perMinute, perDay: plan.perDay });
  }
  throw new TypeError("apiKeys: a custom quota must be { perMinute, perDay } with positive integers.");
}

function resolveSeeds(pets: number | readonly SeedPet[]): Pet[] {
  // From JavaScript, anything can arrive: what is not a list of seeds must be a count.
  if (!Array.isArray(pets)) {
    if (!isCount(pets)) throw new TypeError(`pets: expected a count (a non-negative integer) or seed records, got ${typeof pets === 'string' ? `"${pets}"` : String(pets)}.`);
    return generatePets(pets);
  }
  const seeded: Pet[] = [];
  const used = new Set<number>();
  // A loop, not Math.max(...ids): spreading a few hundred thousand seeds overflows the stack. Only
  // ids a pet can have count: past an id of 1.5 or 2^53, a seed without one was blamed for it.
  let nextId = pets.reduce((max, p) => (Number.isSafeInteger(p?.id) && p.id! > max ? p.id! : max), 0) + 1;
  for (const [index, seed] of pets.entries()) {
    if (typeof seed !== 'object' || seed === null) throw new TypeError(`pets[${index}]: expected a seed record such as { name: "Rex", categoryId: 1 }, got ${String(seed)}.`);
    const { id, ...rest } = seed;
    const checked = check(ServerNewPetSchema, rest, 'the record');
    if (!checked.success) throw new TypeError(`pets[${index}]: ${checked.message}.`);
    if (id === undefined && !Number.isSafeInteger(nextId)) {
      throw new TypeError(`pets[${index}]: no id is left after ${Number.MAX_SAFE_INTEGER} for a seed record without one; give it an id.`);
    }
    const pet = { id: id ?? nextId++, ...checked.data };
    const valid = check(PetSchema, pet, 'the record');
    if (!valid.success) throw new TypeError(`pets[${index}]: ${valid.message}.`);
    if (used.has(pet.id)) throw new TypeError(`pets[${index}]: id ${pet.id} is used twice; ids must be unique.`);
    used.add(pet.id);
    seeded.push(valid.data);
  }
  return seeded.sort((a, b) => a.id - b.id);
}

/**
 * The orders as the JSON text `GET /store/orders` answers, checked once: what JSON cannot hold (a
 * BigInt, a cycle) or what is no list made that answer a 500 on every request.
 */
function resolveOrders(orders: readonly unknown[]): string {
  let text: string | undefined;
  try {
    text = Array.isArray(orders) ? JSON.stringify(orders) : undefined;
  } catch {
    text = undefined;
  }
  if (text === undefined) throw new TypeError('orders: expected a list of JSON values (no BigInt, no cycles), such as [{ "id": 1 }].');
  return text;
}

/** Checks the `apiKeys` option (the CLI's `--key` flags too) and resolves each plan to its quota. */
export function resolveApiKeys(apiKeys: Record<string, PlanName | Quota>): Map<string, Quota> {
  const resolved = new Map<string, Quota>();
  for (const [key, plan] of Object.entries(apiKeys)) {
    if (!/^[\x21-\x7e]+$/.test(key)) {
      throw new TypeError('apiKeys: every key must be a non-empty string of printable ASCII without spaces.');
    }
    resolved.set(key, resolveQuota(plan));
  }
  return resolved;
}

/**
 * What is wrong with a host to listen on, as the end of a sentence, or `undefined`: an empty one
 * names no interface, and node:http would listen on every one, the admin API included.
 */
export function listenHostProblem(host: unknown): string | undefined {
  return typeof host === 'string' && host.trim() ? undefined : `must name an interface, such as 127.0.0.1, ::1 or localhost; got ${JSON.stringify(host) ?? String(host)}`;
}

// Every option's name, to catch a misspelt one from JavaScript (`apikeys`), which would otherwise
// keep its default without a word (the demo key only, and every test key a 401); `satisfies`
// keeps the list the same as the interface.
export const SERVER_OPTIONS = /* @__PURE__ */ Object.keys({
  apiKeys: 0, pets: 0, orders: 0, now: 0, banThreshold: 0, banDurationMs: 0, faults: 0, rateLimitHeaders: 0, admin: 0, onBan: 0,
} satisfies Record<keyof ReferenceServerOptions, 0>);

/** Applies defaults and checks every option once, throwing a `TypeError` that says what to fix. */
export function resolveServerOptions(options: ReferenceServerOptions = {}): ResolvedServerOptions {
  checkKnownOptions(options, SERVER_OPTIONS, 'createReferenceServer()');
  const apiKeys = resolveApiKeys(options.apiKeys ?? DEFAULTS.apiKeys);
  if (options.rateLimitHeaders !== undefined && !RATE_LIMIT_HEADERS.includes(options.rateLimitHeaders)) {
    throw new TypeError(`rateLimitHeaders must be "x", "ietf" or "both"; got "${String(options.rateLimitHeaders)}".`);
  }
  const banThreshold = options.banThreshold ?? DEFAULTS.banThreshold;
  const banDurationMs = options.banDurationMs ?? DEFAULTS.banDurationMs;
  if (!isCount(banThreshold)) throw new TypeError('banThreshold must be a non-negative integer.');
  // Its end is told as a date (onBan, the CLI's log): past what a Date holds, the ban's request answered 500.
  if (!isCount(banDurationMs) || banDurationMs > LATEST_INSTANT) {
    throw new TypeError(`banDurationMs must be a non-negative integer of milliseconds, at most ${LATEST_INSTANT} (the span from 1970 to the end of 9999).`);
  }
  const now = options.now ?? DEFAULTS.now;
  if (typeof now !== 'function') throw new TypeError(`now must be a function returning epoch milliseconds, such as () => Date.now(); got ${typeof now}.`);
  const created = now();
  const problem = readingProblem(created);
  if (problem) throw new TypeError(problem);
  return {
    apiKeys,
    pets: resolveSeeds(options.pets ?? DEFAULTS.pets),
    orders: resolveOrders(options.orders ?? DEFAULTS.orders),
    now,
    created,
    banThreshold,
    banDurationMs,
    faults: resolveFaults(options.faults),
    rateLimitHeaders: options.rateLimitHeaders ?? DEFAULTS.rateLimitHeaders,
    admin: options.admin ?? DEFAULTS.admin,
    onBan: options.onBan,
  };
}

/**
 * What is wrong with a reading of the clock, the `now` option's `read` moved by `offset`: it must be
 * epoch milliseconds from 1970 to the end of 9999, so that `Date` is a valid HTTP date and a ban's
 * end a date. `undefined` when nothing is.
 */
export function readingProblem(read: unknown, offset = 0): string | undefined {
  const at = (read as number) + offset;
  if (typeof read === 'number' && at >= 0 && at <= LATEST_INSTANT) return undefined;
  const range = `from 1970 to the end of 9999 (0 to ${LATEST_INSTANT})`;
  if (typeof read === 'number' && read >= 0 && read <= LATEST_INSTANT) {
    return `The reference server's clock must read ${range}: now() returned ${read}, which clock.advance and clock.set moved by ${offset} ms, to ${at}.`;
  }
  const got = typeof read === 'number' || read == null ? read : read instanceof Date ? 'a Date (return its getTime())' : `a ${typeof read}`;
  return `now must return epoch milliseconds ${range}, as Date.now() does; it returned ${got}.`;
}

function resolveFaults(faults: FaultOptions | undefined): ResolvedFaults | undefined {
  if (faults === undefined) return undefined;
  if (!(faults.rate >= 0 && faults.rate <= 1)) throw new TypeError(`faults.rate must be a number from 0 to 1, got ${faults.rate}.`);
  const kinds: readonly FaultKind[] = faults.kinds?.length ? faults.kinds : DEFAULTS.faults.kinds;
  for (const kind of kinds) {
    if (!FAULT_KINDS.includes(kind)) throw new TypeError(`faults.kinds: "${kind}" is not one of ${FAULT_KINDS.join(', ')}.`);
  }
  const latencyMs = faults.latencyMs ?? DEFAULTS.faults.latencyMs;
  // A timer cannot wait longer than 2^31 - 1 ms: it would fire at once instead.
  if (!isCount(latencyMs) || latencyMs > MAX_TIMER_MS) throw new TypeError(`faults.latencyMs must be a non-negative integer of milliseconds, at most ${MAX_TIMER_MS}.`);
  return { rate: faults.rate, kinds, latencyMs, seed: faults.seed ?? DEFAULTS.faults.seed };
}
