/**
 * What the server remembers of the requests it received: a bounded journal, read through
 * `server.requests()` and `GET /_admin/requests`, and the source of the CLI's log lines.
 *
 * @module
 */
import type { FaultKind } from './faults.js';

/** One request as it ended, answered or not, as `server.requests()` and `GET /_admin/requests` list it. It never holds an API key. */
export interface RequestRecord {
  /** When it arrived, on the server's clock (ISO 8601). */
  time: string;
  /**
   * The method as sent; `?` for what never became a request (HTTP node:http could not parse up to
   * its method, or whose request line came in an earlier packet than node:http's failure).
   */
  method: string;
  /**
   * Path and query string; an API key in them (a configured one, or whatever `Authorization`
   * presented) shows as `[redacted]`. One too long to serve (414) shows its first 100 characters and `…`
   * (over node:http, `?` when the headers after it did not come with it, so the key they present is unknown);
   * `?` for what never became a request, for a target no URL can be made of (`ftp://x/v1/pets`,
   * or a CONNECT's `host:port`, over node:http; journalled with its method), and for what node:http
   * refused after its method (headers past its limit, a 431; a header line that is no header), whose
   * headers, and so the key they present, never came whole (journalled with its method).
   */
  path: string;
  /**
   * The status answered, or 0 when no answer reached the client: an injected fault dropped the
   * connection, or the client went away first (a connection reset, a `signal` aborted in-process).
   */
  status: number;
  /** The Error record's `code`, for error answers that reached the client. */
  code: string | undefined;
  /** The `X-Request-Id` the answer carried. */
  requestId: string;
  /** The API key's label (its first characters, never the key; `my-k…#2` for a second key with the same label); `null` when no known key was checked (none, an unknown one, or a forced answer). */
  key: string | null;
  /** Whether the request came inside a `Retry-After` window announced to its key. */
  insideRetryAfter: boolean;
  /** The fault injected into this request, if any. */
  fault?: FaultKind;
  /** The status was forced with `Prefer: code=…`. */
  forced?: boolean;
}

/** How many requests the journal keeps; older ones are forgotten first. */
export const JOURNAL_SIZE = 1_000;

/**
 * How many forgotten exchanges are dropped at once: dropped one by one, every request moved the
 * whole journal down a place.
 */
const DROP_BATCH = 100;

/**
 * A request while it is being answered: a {@link RequestRecord} with its time as a number, and
 * `seq`, its place in the order requests arrived at the server.
 */
export type Exchange = Omit<RequestRecord, 'time'> & { at: number; seq: number };

/**
 * The last {@link JOURNAL_SIZE} exchanges to arrive, in the order they arrived. Each is added as
 * it ends, and requests do not end in the order they came (a body still arriving, an injected
 * latency, pipelined requests behind them answered at once): a late one goes back to its place.
 */
export class Journal {
  #entries: Exchange[] = [];
  /** The last arrival a clear forgot: one still being answered then ends after it, and is not added. */
  #clearedThrough = 0;

  add(entry: Exchange): void {
    if (entry.seq <= this.#clearedThrough) return;
    const entries = this.#entries;
    let at = entries.length;
    while (at > 0 && entries[at - 1]!.seq > entry.seq) at--;
    if (at === entries.length) entries.push(entry);
    else entries.splice(at, 0, entry);
    // The oldest to arrive are forgotten, even the one just added (1,000 came after it): they are
    // no longer listed, and dropped once there are DROP_BATCH of them.
    if (entries.length >= JOURNAL_SIZE + DROP_BATCH) entries.splice(0, DROP_BATCH);
  }

  list(): RequestRecord[] {
    return this.#entries.slice(-JOURNAL_SIZE).map(recorded);
  }

  /** Forgets every exchange that arrived up to `through` (a `seq`), those still being answered included. */
  clear(through: number): void {
    this.#entries = [];
    this.#clearedThrough = through;
  }
}

/** The public form of an exchange. */
export function recorded({ at, seq: _, ...rest }: Exchange): RequestRecord {
  return { time: new Date(at).toISOString(), ...rest };
}

/**
 * A key as logs and the admin API show it: its first four characters and `…`, never more than
 * half the key, so a short key is never shown whole.
 */
export function keyLabel(key: string): string {
  return `${key.slice(0, Math.min(4, Math.floor(key.length / 2)))}…`;
}
