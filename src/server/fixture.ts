/**
 * What makes the reference server a fixture for test suites in any language: a clock tests can
 * move, a journal of the requests it answered, forced answers (`Prefer: code=429`), request ids,
 * and the admin API under `/_admin/` that exposes them over plain HTTP.
 *
 * @module
 */
import { error, json, readText, type ErrorCode, type Incoming, type Reply } from './http.js';

/** The server's clock: the `now` option, moved by tests. */
export interface ServerClock {
  /** The server's time now. */
  now(): Date;
  /** Moves the clock forward by `ms` milliseconds (a minute window, a ban, the getPet sunset). */
  advance(ms: number): void;
  /** Sets the clock to `date`; it runs on from there. */
  set(date: Date | string | number): void;
}

/** One request the server answered, as the journal keeps it. */
export interface RequestRecord {
  /** When it arrived, on the server's clock (ISO 8601). */
  time: string;
  /** The HTTP method. */
  method: string;
  /** The path and query string. */
  path: string;
  /** The status answered. */
  status: number;
  /** The Error record's code, for error answers. */
  code: string | undefined;
  /** The `X-Request-Id` the answer carried. */
  requestId: string;
  /** The API key's label (its first four characters), never the key; `null` without a valid key. */
  key: string | null;
  /** Whether it arrived inside a `Retry-After` window announced to its key. */
  insideRetryAfter: boolean;
}

/** How many requests the journal keeps: the newest. */
export const JOURNAL_SIZE = 1_000;

/** A key as logs and the admin API show it: its first four characters. */
export const keyLabel = (key: string): string => `${key.slice(0, 4)}…`;

/** A new request id: 16 hex digits. */
export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  let id = '';
  for (const byte of bytes) id += byte.toString(16).padStart(2, '0');
  return id;
}

/** The clock over the `now` option, with the offset tests move it by. */
export function createClock(base: () => number): ServerClock & { ms(): number } {
  let offset = 0;
  const ms = () => base() + offset;
  return {
    ms,
    now: () => new Date(ms()),
    advance(by) {
      if (!Number.isFinite(by) || by < 0) throw new TypeError(`clock.advance: ms must be a non-negative number; got ${by}.`);
      offset += by;
    },
    set(date) {
      const target = new Date(date).getTime();
      if (Number.isNaN(target)) throw new TypeError(`clock.set: "${String(date)}" is not a date.`);
      offset = target - base();
    },
  };
}

/** The statuses `Prefer: code=N` can force, with the code and words of each. */
const FORCED: Record<number, [ErrorCode, string]> = {
  401: ['invalid_api_key', 'The API key is not valid.'],
  404: ['not_found', 'The requested resource could not be found.'],
  429: ['rate_limited', 'Rate limit exceeded.'],
  500: ['internal_error', 'The service failed.'],
  503: ['service_unavailable', 'The service is unavailable. Retry later.'],
};

/** The status a request's `Prefer: code=N` forces, when it is one the server can force. */
export function forcedStatus(request: Incoming): number | undefined {
  const match = request.header('Prefer')?.match(/(?:^|[,;\s])code=(\d{3})(?:$|[,;\s])/);
  const status = match ? Number(match[1]) : undefined;
  return status !== undefined && status in FORCED ? status : undefined;
}

/** The forced answer: the status's Error record, saying it was forced. */
export function forcedReply(status: number): Reply {
  const [code, message] = FORCED[status]!;
  return error(status, code, `${message} (Forced by Prefer: code=${status}; nothing was changed.)`, status === 401 ? { 'WWW-Authenticate': 'Bearer realm="petstore"' } : undefined);
}

/** What the admin API acts on. */
export interface AdminTarget {
  reset(): void;
  keys(): Record<string, unknown>;
  requests(): RequestRecord[];
  clearRequests(): void;
  clock: ServerClock;
}

const ADMIN_PATHS = 'POST /_admin/reset, GET /_admin/keys, GET|DELETE /_admin/requests, POST /_admin/clock';

/** Answers a request under `/_admin/`. */
export async function admin(request: Incoming, target: AdminTarget): Promise<Reply> {
  const method = request.method.toUpperCase();
  const route = `${method} ${request.url.pathname.replace(/\/+$/, '')}`;
  switch (route) {
    case 'POST /_admin/reset':
      target.reset();
      return json({ reset: true });
    case 'GET /_admin/keys':
      return json({ keys: target.keys() });
    case 'GET /_admin/requests':
      return json({ requests: target.requests() });
    case 'DELETE /_admin/requests':
      target.clearRequests();
      return json({ cleared: true });
    case 'POST /_admin/clock': {
      const read = await readText(request);
      if ('error' in read) return read.error;
      let body: { advanceMs?: unknown; set?: unknown };
      try {
        body = JSON.parse(read.text || '{}') as typeof body;
      } catch {
        return error(400, 'invalid_json', 'The body is not valid JSON. Send {"advanceMs": 60000} or {"set": "2026-12-01T00:00:00Z"}.');
      }
      try {
        if (typeof body?.advanceMs === 'number' && body.set === undefined) target.clock.advance(body.advanceMs);
        else if (typeof body?.set === 'string' && body.advanceMs === undefined) target.clock.set(body.set);
        else throw new TypeError('Send exactly one of {"advanceMs": <non-negative number>} or {"set": "<ISO date>"}.');
      } catch (problem) {
        return error(400, 'invalid_body', (problem as Error).message);
      }
      return json({ now: target.clock.now().toISOString() });
    }
    default:
      return error(404, 'not_found', `No admin route ${route.slice(0, 80)}. The admin API: ${ADMIN_PATHS}.`);
  }
}
