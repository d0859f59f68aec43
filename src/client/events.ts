/**
 * What the client tells programs that listen: each request, response, retry and rate-limit wait,
 * as plain objects that never hold the API key.
 *
 * @module
 */
import type { ApiError, CallInfo, ConnectionError } from './errors.js';
import { configError } from './options.js';
import { notify } from '../runtime.js';
import { clip } from '../redact.js';
import { closest } from '../suggest.js';

/** The payload of each event {@link PetStoreClient.on} can listen to. */
export interface ClientEventMap {
  /** An attempt is about to be sent. */
  request: CallInfo & {
    /** Which attempt of the call, counting from 1. */
    readonly attempt: number;
  };
  /** An attempt's response arrived and its body was read. */
  response: CallInfo & {
    /** Which attempt of the call, counting from 1. */
    readonly attempt: number;
    /** The response's HTTP status. */
    readonly status: number;
    /** Milliseconds from sending to the body being read. */
    readonly durationMs: number;
    /** The response's `X-Request-Id`, an API key in it shown as `[redacted]`. */
    readonly requestId: string | undefined;
  };
  /**
   * A failed attempt will be retried after `delayMs` (for a 429, the window every call waits out,
   * reported again as a `wait` event).
   */
  retry: CallInfo & {
    /** Which retry this is, counting from 1. */
    readonly retry: number;
    /** Milliseconds until the retry is sent. */
    readonly delayMs: number;
    /**
     * What failed the attempt: an {@link ApiError} (a `RateLimitError`, a 408 or a 5xx) or a
     * {@link ConnectionError} (a `TimeoutError` included), the only errors the client retries.
     */
    readonly error: ApiError | ConnectionError;
  };
  /** The call waits before sending. */
  wait: CallInfo & {
    /**
     * `blocked` (a 429 asked every client of the key to wait), `spent` (the announced budget is
     * used up until its reset), `busy` (requests in flight may use up the budget, or probe an
     * unknown one: the call waits for their answers, at most `waitMs`), or `lost` (the last
     * requests probing the unknown budget went unanswered: the next probe is held back, at most
     * `waitMs`, less if an answer comes).
     */
    readonly reason: 'blocked' | 'spent' | 'busy' | 'lost';
    /** How long the call waits, in milliseconds (for `busy`, the longest it waits). */
    readonly waitMs: number;
    /** When the wait ends, on this machine's clock. */
    readonly until: Date;
  };
}

// Every event's name, to catch a misspelt one from JavaScript (`responses`), which would
// otherwise never be called; `satisfies` keeps the list the same as the map.
const EVENTS = Object.keys({ request: 0, response: 0, retry: 0, wait: 0 } satisfies Record<keyof ClientEventMap, 0>);

/** The client's listeners. Emitting without listeners costs one lookup and builds no payload. */
export class ClientEvents {
  #listeners = new Map<keyof ClientEventMap, Set<(payload: never) => void>>();

  /** `redact` hides the API key in an unknown event's name (one pasted in its place). */
  on<E extends keyof ClientEventMap>(event: E, listener: (payload: ClientEventMap[E]) => void, redact: (text: string) => string): () => void {
    if (!EVENTS.includes(event)) {
      // Not String(event): an object without a prototype, from JavaScript, would make it throw a TypeError.
      const name = typeof event === 'string' ? `"${clip(redact(event), 40)}"` : `(not a string: ${typeof event})`;
      const meant = typeof event === 'string' && closest(event, EVENTS);
      throw configError(`client.on(): unknown event ${name}${meant ? ` (did you mean "${meant}"?)` : ''}. The events are ${EVENTS.join(', ')}.`, 'event');
    }
    if (typeof listener !== 'function') throw configError(`client.on("${event}"): the listener must be a function.`, 'listener');
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, (set = new Set()));
    const entry = (payload: ClientEventMap[E]) => listener(payload);
    set.add(entry as (payload: never) => void);
    return () => void set.delete(entry as (payload: never) => void);
  }

  /** Whether `event` has listeners: the hot path builds no payload without them. */
  has(event: keyof ClientEventMap): boolean {
    return (this.#listeners.get(event)?.size ?? 0) > 0;
  }

  /** Calls the listeners of `event` with `payload`. */
  emit<E extends keyof ClientEventMap>(event: E, payload: ClientEventMap[E]): void {
    const set = this.#listeners.get(event);
    if (set?.size) notify(set as Set<(payload: ClientEventMap[E]) => void>, payload);
  }
}
