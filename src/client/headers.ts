/**
 * Reading what a response says about the rate limit, strictly: header values come from servers
 * and proxies the client does not control, so each is parsed by its grammar and bounded, and
 * anything else counts as absent. Absolute times are turned into durations on the server's own
 * clock (its `Date` header), so a client whose clock is off behaves as one whose clock is right.
 *
 * @internal
 * @module
 */
import type { RateLimitObservation } from './coordinator.js';

/** The API's longest window: a wait or reset further ahead than this is not believed. */
export const MAX_WINDOW_MS = 86_400_000;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
// RFC 9110 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`, nothing else.
const IMF_FIXDATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;

/** The last date parsed: a server's `Date` changes once a second, and every response carries one. */
let last: { value: string | null; ms: number | undefined } = { value: null, ms: undefined };

/** An IMF-fixdate in milliseconds since the epoch, or `undefined` for anything else. */
export function parseHttpDate(value: string | null): number | undefined {
  if (value === last.value) return last.ms;
  const ms = parseFixdate(value);
  last = { value, ms };
  return ms;
}

function parseFixdate(value: string | null): number | undefined {
  const match = value === null ? null : IMF_FIXDATE.exec(value.trim());
  if (!match) return undefined;
  const [, day, month, year, hour, minute, second] = match;
  const ms = Date.UTC(Number(year), MONTHS.indexOf(month!), Number(day), Number(hour), Number(minute), Number(second));
  // Date.UTC rolls 31 Feb over into March: only a date that reads back the same is real. An hour
  // past 23 (at most 99) rolls into another day, so only minutes and seconds need a check.
  return new Date(ms).getUTCDate() === Number(day) && Number(minute) < 60 && Number(second) < 61 ? ms : undefined;
}

/** A non-negative decimal integer no longer than `digits`, or `undefined`. */
function count(value: string | null | undefined, digits = 15): number | undefined {
  const text = value?.trim();
  return text && text.length <= digits && /^\d+$/.test(text) ? Number(text) : undefined;
}

/** A duration in milliseconds, `undefined` when it is negative or past the longest window. */
function bounded(ms: number): number | undefined {
  return ms >= 0 && ms <= MAX_WINDOW_MS ? ms : undefined;
}

/**
 * Milliseconds to wait as `Retry-After` says: whole seconds (a fraction rounds up) or an
 * IMF-fixdate, measured against the server's clock `serverNow`. Sent twice (a gateway's above
 * the API's), which fetch joins with ", ", the longest wait binds, as the fewest requests left do
 * among `X-RateLimit-*`: either one ignored let a retry go inside the other's window. Anything
 * else in any member, a negative value, or a wait past one day reads as absent, and so does a wait
 * of 0 (`0`, a date now or past): it names none, as openai-node reads it.
 */
export function retryAfterMs(headers: Headers, serverNow: number): number | undefined {
  let longest: number | undefined;
  // An IMF-fixdate holds a comma of its own, after the day's name.
  for (const member of headers.get('Retry-After')?.match(/\s*(Mon|Tue|Wed|Thu|Fri|Sat|Sun),[^,]*|[^,]+/g) ?? []) {
    const value = member.trim();
    if (!value) continue;
    // bounded(NaN), for what is no date, is undefined.
    const ms = bounded(/^\d{1,9}(\.\d+)?$/.test(value) ? Math.ceil(Number(value)) * 1000 : Math.max(0, (parseHttpDate(value) ?? NaN) - serverNow));
    if (ms === undefined) return undefined;
    longest = Math.max(longest ?? 0, ms);
  }
  return longest || undefined;
}

/** One member of a structured-field list: `"default";r=50;t=30` → `{ r: 50, t: 30 }`. */
function parameters(member: string): Record<string, number> | undefined {
  const [name, ...params] = member.split(';').map((part) => part.trim());
  if (!name || !/^("[^"]*"|[A-Za-z*][\w:.*/-]*)$/.test(name)) return undefined;
  const out: Record<string, number> = {};
  for (const param of params) {
    const match = /^([a-z*][a-z0-9_.*-]*)=(\d{1,15})$/.exec(param);
    if (match) out[match[1]!] = Number(match[2]);
    else if (!/^[a-z*][a-z0-9_.*-]*(=.*)?$/.test(param)) return undefined;
  }
  return out;
}

/**
 * The budget of draft-ietf-httpapi-ratelimit-headers: `RateLimit: "default";r=50;t=30` (remaining,
 * and seconds until more quota: relative, so skew-free), with the quota from the
 * `RateLimit-Policy` of the same name when there is one. Malformed fields are ignored, and so is
 * an item without `t` (optional in draft-11): it names no time to hold requests for.
 */
function ietfBudget(headers: Headers): RateLimitObservation['budget'] {
  const field = headers.get('RateLimit');
  if (!field) return undefined;
  let best: { name: string; r: number; t: number } | undefined;
  for (const member of field.split(',')) {
    const params = parameters(member);
    if (!params || params.r === undefined || params.t === undefined) continue;
    const resetInMs = bounded(params.t * 1000);
    if (resetInMs === undefined) continue;
    // Several policies: the one with the fewest requests left binds.
    if (!best || params.r < best.r) best = { name: member.split(';')[0]!.trim(), r: params.r, t: params.t };
  }
  if (!best) return undefined;
  let limit = best.r;
  for (const member of headers.get('RateLimit-Policy')?.split(',') ?? []) {
    const params = parameters(member);
    if (params?.q !== undefined && member.split(';')[0]!.trim() === best.name) limit = Math.max(params.q, best.r);
  }
  return { limit, remaining: best.r, resetInMs: best.t * 1000 };
}

/**
 * The `X-RateLimit-*` budget, its Unix-seconds reset measured against the server's clock. Each
 * header may come twice (a gateway adds its own above the API's), which fetch joins with ", ":
 * the three are read member by member, and, as among IETF policies, the one with the fewest
 * requests left binds. Read as absent, a doubled budget made the throttle step aside, and a
 * burst went into a budget announced as spent. A member missing or malformed makes it all absent.
 */
function xBudget(headers: Headers, serverNow: number): RateLimitObservation['budget'] {
  const limits = members(headers.get('X-RateLimit-Limit'));
  const remainings = members(headers.get('X-RateLimit-Remaining'));
  const resets = members(headers.get('X-RateLimit-Reset'));
  if (limits.length !== remainings.length || resets.length !== remainings.length) return undefined;
  let best: RateLimitObservation['budget'];
  for (let i = 0; i < remainings.length; i++) {
    const limit = count(limits[i]);
    const remaining = count(remainings[i]);
    const reset = count(resets[i], 12);
    if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
    // A reset already past (or a relative number of seconds) means the window is over; one sent in
    // milliseconds lies far beyond a day, and is not believed.
    const resetInMs = bounded(Math.max(0, reset * 1000 - serverNow));
    if (resetInMs === undefined) return undefined;
    if (!best || remaining < best.remaining) best = { limit, remaining, resetInMs };
  }
  return best;
}

/**
 * A list header's members: empty ones (a trailing comma, a header sent empty) are none (RFC 9110,
 * section 5.6.1). One member, as nearly every answer has, is not split.
 */
function members(value: string | null): string[] {
  if (value === null) return [];
  return value.includes(',') ? value.split(',').filter((member) => member.trim()) : value.trim() ? [value] : [];
}

/** {@link retryAfterMs} of an answer as of now, measured against its `Date`: what an error or a retry reads. */
export function retryAfterNow(headers: Headers): number | undefined {
  return retryAfterMs(headers, serverNow(headers, Date.now()));
}

/** The server's clock when it answered (`Date`), else this machine's. */
export function serverNow(headers: Headers, now: number): number {
  return parseHttpDate(headers.get('Date')) ?? now;
}

/**
 * What a response says about the rate limit. `backoffMs` is the wait a bare 429 (no usable
 * `Retry-After`, no budget) blocks every request of the client for.
 */
export function observeResponse(status: number, headers: Headers, now: number, banned: boolean, backoffMs: () => number): RateLimitObservation {
  const serverTime = serverNow(headers, now);
  // A 5xx's budget is not the key's: the service answered before acting on the request (the
  // reference server's injected 503 announces an untouched Free-plan minute), or a gateway did.
  // Believed as the first answer, it let every waiting call out at once into a smaller budget.
  const budget = status >= 500 ? undefined : (ietfBudget(headers) ?? xBudget(headers, serverTime));
  let blockForMs: number | undefined;
  if (status === 429) {
    // Retry-After wins; then the budget's reset, when it is spent and still ahead; then backoff.
    // A reset now or past names no wait (nor does a Retry-After of 0): without backoff every
    // retry went at once, into the window the 429 was about.
    blockForMs = retryAfterMs(headers, serverTime) || (budget && budget.remaining === 0 && budget.resetInMs) || backoffMs();
  }
  return { status, budget, blockForMs, banned };
}
