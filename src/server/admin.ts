/**
 * The admin API, off unless `admin: true` (`petstore-server --admin`): test suites in any language
 * reset the server, read its counters and journal, and move its clock over plain HTTP. It lives
 * under `/_admin/`, outside `/v1`, and needs no key: it is for a server on the test's own machine.
 *
 * @module
 */
import { clip } from '../redact.js';
import { allowList, error, json, readJson, type Incoming, type Reply } from './http.js';
import type { RequestRecord } from './journal.js';

/** The reference server's clock: the `now` option, moved by every `advance` and `set`. */
export interface ServerClock {
  /** The server's time now. */
  now(): Date;
  /**
   * Moves the clock forward by `ms` milliseconds, so a test skips a minute window, a ban or the
   * getPet sunset without waiting. Throws a `TypeError` unless `ms` is 0, which moves nothing
   * wherever the clock has run on to, or a finite number > 0 that keeps the clock at or before
   * 9998-12-31T23:59:59.999Z, the latest it may be moved to.
   */
  advance(ms: number): void;
  /**
   * Sets the clock to `date` (a `Date`, epoch milliseconds, or an ISO 8601 date-time with its
   * offset, such as `'2030-12-05T00:00:00Z'`), from 1970 to 9998-12-31T23:59:59.999Z; it runs on
   * from there as the `now` option does. Throws a `TypeError` for anything else: a date alone (`'2030-12-05'`), a
   * date-time without its offset, or a day or time that does not exist.
   */
  set(date: Date | string | number): void;
}

/** What the admin API acts on. */
export interface AdminTarget {
  reset(): void;
  /** Each key's counters, keys shown by label. */
  keys(): Record<string, unknown>;
  requests(): RequestRecord[];
  clearRequests(): void;
  clock: ServerClock;
}

/** The admin API's paths below `/_admin`, and their methods. */
const PATHS: Readonly<Record<string, readonly string[]>> = {
  '/reset': ['POST'],
  '/keys': ['GET'],
  '/requests': ['GET', 'DELETE'],
  '/clock': ['GET', 'POST'],
};

/**
 * The `Allow` list of an admin path (the methods its 405 names and its preflight allows), or
 * `undefined` when the admin API has no such path.
 */
export function adminAllow(path: string): string | undefined {
  return Object.hasOwn(PATHS, path) ? allowList(PATHS[path]!) : undefined;
}

/** The path below `/_admin` when `pathname` is an admin path, else `undefined`. */
export function adminPath(pathname: string): string | undefined {
  if (!pathname.startsWith('/_admin/')) return undefined;
  const path = pathname.slice('/_admin'.length);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/**
 * The instant of an ISO 8601 date-time with its offset, or `NaN`. Its fields must exist: `Date.parse`
 * rolls `2026-02-31` over to 3 March and takes `T24:00` as the next day, so the date and time are
 * read back from the instant they make and must come out the same; an offset is at most 23:59.
 */
function isoInstant(text: string): number {
  const match = ISO_DATE.exec(text);
  if (!match) return NaN;
  // Seconds and the offset are optional (`Z`): absent, they are 0.
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = match.slice(1).map((field) => Number(field ?? 0)) as number[] as [
    number, number, number, number, number, number, number, number,
  ];
  const local = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  const exists =
    local.getUTCFullYear() === year &&
    local.getUTCMonth() === month - 1 &&
    local.getUTCDate() === day &&
    local.getUTCHours() === hour &&
    local.getUTCMinutes() === minute &&
    local.getUTCSeconds() === second;
  return exists && offsetHours <= 23 && offsetMinutes <= 59 ? Date.parse(text) : NaN;
}

/**
 * The end of the year 9999, the longest a ban may last (`banDurationMs`): one begun as late as the
 * clock may be moved ({@link LATEST_MOVE}) still ends on a date. The clock itself runs on past it.
 */
export const LATEST_INSTANT = /* @__PURE__ */ Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The latest instant the clock may be set or advanced to, and what messages say of it. The clock
 * runs on from where it is moved, so the year 9999 is left for it to run in, and for windows and
 * bans begun then to end in: moved to the end of 9999, a second later its `Date` read `01 Jan 10000`.
 */
export const LATEST_MOVE = '9998-12-31T23:59:59.999Z';

/** Whether the clock may be moved to `ms`: from 1970 to {@link LATEST_MOVE}. */
export const isClockInstant = (ms: number): boolean => Number.isFinite(ms) && ms >= 0 && ms <= Date.parse(LATEST_MOVE);

/** Reads an instant strictly: a valid `Date`, epoch milliseconds, or an ISO 8601 date-time with its offset, from 1970 to {@link LATEST_MOVE}. */
export function toInstant(date: Date | string | number): number {
  const ms = date instanceof Date ? date.getTime() : typeof date === 'number' ? date : isoInstant(date);
  if (!isClockInstant(ms)) {
    throw new TypeError(
      `clock.set: expected a Date, epoch milliseconds or an ISO 8601 date-time with its offset, on a day and at a time that exist, from 1970 to ${LATEST_MOVE}, such as "2026-12-01T00:00:00Z"; got ${clip(JSON.stringify(String(date)), 60)}.`,
    );
  }
  return ms;
}

const CLOCK_BODY = 'Send {"advanceMs": 60000} or {"set": "2026-12-01T00:00:00Z"}.';

/** Answers one admin request; `method` is upper-case, HEAD already dispatched as GET. */
export async function answerAdmin(request: Incoming, method: string, path: string, target: AdminTarget): Promise<Reply> {
  const allow = adminAllow(path);
  if (allow === undefined) {
    return error(404, 'not_found', `No admin path /_admin${clip(path, 100)}. The admin API has ${Object.keys(PATHS).map((p) => `/_admin${p}`).join(', ')}.`);
  }
  if (!PATHS[path]!.includes(method)) {
    return error(405, 'method_not_allowed', `${clip(method, 20)} is not allowed on /_admin${path}. Allowed: ${allow}.`, { Allow: allow });
  }
  switch (`${method} ${path}`) {
    case 'POST /reset':
      target.reset();
      return json({ reset: true });
    case 'GET /keys':
      return json({ keys: target.keys() });
    case 'GET /requests':
      return json({ requests: target.requests() });
    case 'DELETE /requests':
      target.clearRequests();
      return json({ cleared: true });
    case 'POST /clock':
      return moveClock(request, target.clock);
    default:
      return json({ now: target.clock.now().toISOString() });
  }
}

async function moveClock(request: Incoming, clock: ServerClock): Promise<Reply> {
  const read = await readJson(request, CLOCK_BODY);
  if ('error' in read) return read.error;
  const { body } = read;
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
  if (fields.length !== 1 || (fields[0] !== 'advanceMs' && fields[0] !== 'set')) {
    return error(400, 'invalid_body', `The body must hold exactly one of advanceMs and set. ${CLOCK_BODY}`);
  }
  const { advanceMs, set } = body as { advanceMs?: unknown; set?: unknown };
  if (fields[0] === 'advanceMs') {
    // Checked where it moves, on the same reading of the clock: a check of its own read the clock
    // before, and a tick between the two made the advance throw (a 500) for the last instant.
    try {
      clock.advance(advanceMs as number);
    } catch (thrown) {
      if (!(thrown instanceof TypeError)) throw thrown;
      return error(400, 'invalid_body', `advanceMs must be a number of milliseconds, 0 or more, that keeps the clock at or before ${LATEST_MOVE}, the latest it may be moved to. ${CLOCK_BODY}`);
    }
  } else {
    if (typeof set !== 'string' || !isClockInstant(isoInstant(set))) {
      return error(400, 'invalid_body', `set must be an ISO 8601 date-time with its offset, on a day and at a time that exist, from 1970 to ${LATEST_MOVE}, such as "2026-12-01T00:00:00Z". ${CLOCK_BODY}`);
    }
    clock.set(set);
  }
  return json({ now: clock.now().toISOString() });
}
