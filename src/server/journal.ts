/**
 * What the server remembers of the requests it answered: a bounded journal, read through
 * `server.requests()` and `GET /_admin/requests`, and the source of the CLI's log lines.
 *
 * @module
 */
import type { FaultKind } from './faults.js';

/** One answered request, as `server.requests()` and `GET /_admin/requests` list it. It never holds an API key. */
export interface RecordedRequest {
  /** When it arrived, on the server's clock (ISO 8601). */
  time: string;
  /** The method as sent. */
  method: string;
  /** Path and query string. */
  path: string;
  /** The status answered, or 0 when an injected fault dropped the connection. */
  status: number;
  /** The Error record's `code` when the answer was an error. */
  code?: string;
  /** The `X-Request-Id` the answer carried. */
  requestId: string;
  /** The API key's label (its first characters and a hash, never the key), when a known key was sent. */
  key?: string;
  /** Whether the request came inside a `Retry-After` window announced to its key. */
  insideRetryAfter: boolean;
  /** The fault injected into this request, if any. */
  fault?: FaultKind;
  /** The status was forced with `Prefer: code=…`. */
  forced?: boolean;
}

/** How many requests the journal keeps; older ones are forgotten first. */
export const JOURNAL_SIZE = 1_000;

/** A request while it is being answered: a {@link RecordedRequest} with its time as a number. */
export type Exchange = Omit<RecordedRequest, 'time'> & { at: number };

/** The last {@link JOURNAL_SIZE} exchanges, oldest first. */
export class Journal {
  #entries: Exchange[] = [];
  #next = 0;

  add(entry: Exchange): void {
    if (this.#entries.length < JOURNAL_SIZE) this.#entries.push(entry);
    else this.#entries[this.#next] = entry;
    this.#next = (this.#next + 1) % JOURNAL_SIZE;
  }

  list(): RecordedRequest[] {
    const full = this.#entries.length === JOURNAL_SIZE;
    const ordered = full ? [...this.#entries.slice(this.#next), ...this.#entries.slice(0, this.#next)] : this.#entries;
    return ordered.map(recorded);
  }

  clear(): void {
    this.#entries = [];
    this.#next = 0;
  }
}

/** The public form of an exchange. */
export function recorded({ at, ...rest }: Exchange): RecordedRequest {
  return { time: new Date(at).toISOString(), ...rest };
}

/**
 * A key as logs and the admin API show it: up to four first characters (never more than half the
 * key) and six hex digits of its FNV-1a hash, so two keys with the same start stay apart.
 */
export function keyLabel(key: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  const shown = key.slice(0, Math.min(4, Math.floor(key.length / 2)));
  return `${shown}…${(hash >>> 0).toString(16).padStart(8, '0').slice(0, 6)}`;
}
