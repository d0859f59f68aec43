import { clip } from '../redact.js';
import { orAbort } from '../runtime.js';
import { EXPOSED_HEADERS, type ErrorRecord } from '../schemas/index.js';
import { InjectedFault } from './faults.js';
import type { Exchange } from './journal.js';
import type { Admission } from './rate-limiter.js';

/** Error codes the reference server answers with. */
export type ErrorCode =
  | 'bad_request'
  | 'invalid_query'
  | 'invalid_body'
  | 'invalid_json'
  | 'invalid_pet_id'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'not_found'
  | 'method_not_allowed'
  | 'ids_exhausted'
  | 'gone'
  | 'payload_too_large'
  | 'request_timeout'
  | 'headers_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'api_key_banned'
  | 'service_unavailable'
  | 'internal_error';

const CORS_HEADERS: Record<string, string> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': /* @__PURE__ */ EXPOSED_HEADERS.join(', '),
};

/**
 * A request as the server reads it: the few things every adapter can supply without building a
 * `Request` (the node:http adapter reads them straight from `IncomingMessage`).
 */
export interface Incoming {
  /** The method as sent. */
  method: string;
  url: URL;
  /** A header's value, duplicates joined with `", "` as `Headers#get` does; `null` when absent. */
  header(name: string): string | null;
  /** Opens the body, or `null` when the request has none. */
  body: (() => ChunkReader) | null;
  /**
   * Aborts when the caller gives up (in-process, its `Request`'s signal; over node:http, its
   * connection closing): the server then stops waiting (on a fault's latency) and acts on nothing.
   */
  signal?: AbortSignal;
}

/**
 * Reads a body chunk by chunk; `ReadableStreamDefaultReader` and Node's stream iterators fit.
 * `read()` rejects when the body cannot be read to its end: with a {@link BrokenBody} when the
 * transport knows what to answer, with anything else for a generic 400.
 */
export interface ChunkReader {
  read(): Promise<{ done?: boolean | undefined; value?: Uint8Array | undefined }>;
  cancel(): unknown;
}

/**
 * An answer before it becomes a `Response`: building one costs more than the whole route does,
 * so the node:http adapter writes replies directly (bench/server-throughput.mjs).
 */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  /** The JSON text, or `null` for no content. */
  body: string | null;
  /** An injected fault: only the first half of the body goes out, then the connection is cut. */
  truncated?: boolean;
  /** An injected fault: no answer at all, the connection is cut (`fetch` rejects with an {@link InjectedFault}). */
  dropped?: boolean;
  /** The Error record's code, when the reply is one (for logs and the journal). */
  code?: ErrorCode;
  /** The exchange this reply ends, once the server has recorded it. */
  exchange?: Exchange;
}

/** Why a body could not be read to its end, as the transport knows it, with the answer it calls for. */
export class BrokenBody extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A JSON reply with the CORS headers every answer carries. */
export function json(body: unknown, status = 200, headers?: Record<string, string>): Reply {
  return jsonText(JSON.stringify(body), status, headers);
}

/** A reply of JSON that is already serialized. */
export function jsonText(text: string, status = 200, headers?: Record<string, string>): Reply {
  return { status, headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8', ...CORS_HEADERS }, body: text };
}

/** An Error record reply whose `status` field equals the HTTP status. */
export function error(status: number, code: ErrorCode, message: string, headers?: Record<string, string>): Reply {
  const record: ErrorRecord = { code, message, status };
  const reply = json(record, status, headers);
  reply.code = code;
  return reply;
}

/** An empty reply (preflights) with the CORS headers. */
export function empty(status: number, headers: Record<string, string>): Reply {
  return { status, headers: { ...headers, ...CORS_HEADERS }, body: null };
}

/** Which rate-limit headers the server sends: `X-RateLimit-*`, the IETF draft's, or both. */
export type RateLimitHeaders = 'x' | 'ietf' | 'both';

/** Every value of {@link RateLimitHeaders}. */
export const RATE_LIMIT_HEADERS: readonly RateLimitHeaders[] = ['x', 'ietf', 'both'];

/** The second {@link httpDate} last formatted, and its text. */
let dateSecond = NaN;
let dateText = '';

/**
 * `ms` (epoch milliseconds, 1970 or later) as an HTTP date (RFC 9110, section 5.6.7), as
 * `Date#toUTCString` writes it. It names whole seconds, so it is formatted once a second, as
 * node:http formats its own `Date` header: formatting one cost more than the rest of an answer's headers.
 */
export function httpDate(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== dateSecond) {
    dateText = new Date(ms).toUTCString();
    dateSecond = second;
  }
  return dateText;
}

/**
 * Sets the rate-limit headers of `mode` (and `Retry-After` on refusals) on a reply, and its `Date`.
 * The IETF draft's fields (`RateLimit-Policy: "default";q=60;w=60`, `RateLimit: "default";r=59;t=42`)
 * count in seconds from `now`, which is also the `Date`: `Date` + `t` is the reset.
 */
export function withRateLimit(reply: Reply, admission: Admission, mode: RateLimitHeaders, now: number): Reply {
  const headers = reply.headers;
  headers.Date = httpDate(now);
  if (mode !== 'ietf') {
    headers['X-RateLimit-Limit'] = String(admission.limit);
    headers['X-RateLimit-Remaining'] = String(admission.remaining);
    headers['X-RateLimit-Reset'] = String(admission.reset);
  }
  if (mode !== 'x') {
    headers['RateLimit-Policy'] = `"default";q=${admission.limit};w=${admission.window}`;
    headers.RateLimit = `"default";r=${admission.remaining};t=${Math.max(0, admission.reset - Math.floor(now / 1000))}`;
  }
  if (admission.retryAfter !== undefined) headers['Retry-After'] = String(admission.retryAfter);
  return reply;
}

/**
 * The longest request target (path and query) the server reads: 8,000 characters, the
 * request-line length RFC 9112 (section 3) recommends every server support. A longer one is a
 * 414 on every transport: node:http alone would refuse only what passes its header limit (431).
 */
export const MAX_TARGET_LENGTH = 8_000;

/** The status, code and message of the answer to a request target longer than {@link MAX_TARGET_LENGTH}. */
export const TARGET_TOO_LONG = [
  414,
  'uri_too_long',
  // Joined, not a template of a variable, which a bundler cannot tell is pure (see DEMO_API_KEY).
  /* @__PURE__ */ ['The request target (path and query) is longer than', MAX_TARGET_LENGTH, 'characters. Send a shorter URL: fewer or shorter query parameters.'].join(' '),
] as const satisfies readonly [number, ErrorCode, string];

/** The largest request body accepted: 1 MiB. */
export const MAX_BODY_BYTES: number = 1_048_576;

/**
 * Whether a list of codings (Content-Encoding, Transfer-Encoding) names one other than `only`, in
 * any case; empty elements name none (RFC 9110, section 5.6.1).
 */
export const codingsBeyond = (list: string, only: string): boolean => list.split(',').some((c) => !['', only].includes(c.trim().toLowerCase()));

/**
 * A 415 when the body is not sent as plain UTF-8 (RFC 9110, section 15.5.16): a content coding
 * other than `identity` (gzip, br…; the answer's `Accept-Encoding` says which is accepted, as
 * section 12.5.3 asks), or a charset other than UTF-8, which JSON must be in (RFC 8259, section 8.1).
 */
function unsupportedEncoding(request: Incoming): Reply | undefined {
  const coding = request.header('Content-Encoding');
  if (coding !== null && codingsBeyond(coding, 'identity')) {
    return error(
      415,
      'unsupported_media_type',
      `Content-Encoding "${clip(coding, 40)}" is not supported. Send the body uncompressed, without Content-Encoding (or with identity).`,
      { 'Accept-Encoding': 'identity' },
    );
  }
  const charset = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(request.header('Content-Type') ?? '')?.[2];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    return error(
      415,
      'unsupported_media_type',
      `The body's charset "${clip(charset, 40)}" is not supported. Send UTF-8 JSON, with Content-Type: application/json (or application/json; charset=utf-8).`,
    );
  }
  return undefined;
}

/** Reads a request body as UTF-8 text, refusing more than {@link MAX_BODY_BYTES} and anything not sent as plain UTF-8. */
async function readText(request: Incoming): Promise<{ text: string } | { error: Reply }> {
  const unsupported = unsupportedEncoding(request);
  if (unsupported) return { error: unsupported };
  const declared = request.header('Content-Length');
  const tooLarge = () => ({
    error: error(413, 'payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes (1 MiB). Send a smaller body.`),
  });
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) return tooLarge();
  if (!request.body) return { text: '' };
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    const reader = request.body();
    for (;;) {
      const { done, value } = await reader.read();
      if (done || !value) break;
      total += value.byteLength;
      if (total > MAX_BODY_BYTES) {
        void Promise.resolve(reader.cancel()).catch(() => {});
        return tooLarge();
      }
      chunks.push(value);
    }
  } catch (cause) {
    // The body broke off (its connection, its framing, its stream): nothing about its text is known.
    return {
      error:
        cause instanceof BrokenBody
          ? error(cause.status, cause.code, cause.message)
          : error(400, 'bad_request', 'The request body could not be read to its end. Send the whole body.'),
    };
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { error: error(400, 'invalid_body', 'The request body could not be read as UTF-8 text. Send UTF-8 encoded JSON.') };
  }
}

/** Reads a request body as JSON; a body that is not answers 400 `invalid_json` with `hint` (what to send). */
export async function readJson(request: Incoming, hint: string): Promise<{ body: unknown } | { error: Reply }> {
  const read = await readText(request);
  if ('error' in read) return read;
  try {
    return { body: JSON.parse(read.text) };
  } catch {
    return { error: error(400, 'invalid_json', `The request body is not valid JSON. ${hint}`) };
  }
}

/**
 * The {@link Incoming} view of a web `Request`. The body is read from `request.body` chunk by
 * chunk, so a body past the limit is refused once the limit is passed, not buffered whole first
 * (Deno.serve, Bun.serve and workerd hand a chunked upload over as a stream); Firefox's `Request`
 * has no `body` property at all, and is read with `arrayBuffer()`. Reading stops when the
 * request's signal aborts, as a connection's would when its client goes away.
 */
export function fromRequest(request: Request): Incoming {
  const method = request.method.toUpperCase();
  const { signal } = request;
  return {
    method: request.method,
    url: new URL(request.url),
    header: (name) => request.headers.get(name),
    signal,
    body:
      method === 'GET' || method === 'HEAD'
        ? null
        : () => {
            const stream = request.body;
            if (stream) {
              const reader = stream.getReader();
              return { read: () => orAbort(reader.read(), signal), cancel: () => reader.cancel() };
            }
            let read = false;
            return {
              read: async () => {
                if (read) return { done: true };
                read = true;
                return { value: new Uint8Array(await orAbort(request.arrayBuffer(), signal)) };
              },
              cancel: () => {},
            };
          },
  };
}

/**
 * What a truncated reply sends before its connection is cut: the first half of the body's bytes,
 * and the whole body's length in bytes.
 */
export function truncatedBody(body: string): [half: Uint8Array, length: number] {
  const bytes = new TextEncoder().encode(body);
  return [bytes.subarray(0, Math.floor(bytes.length / 2)), bytes.length];
}

/** The web `Response` of a reply; a truncated one errors halfway through its body. */
export function toResponse(reply: Reply): Response {
  if (reply.dropped) throw new InjectedFault('drop');
  const init = { status: reply.status, headers: reply.headers };
  if (!reply.truncated || reply.body === null) return new Response(reply.body, init);
  const [cut, length] = truncatedBody(reply.body);
  let half: Uint8Array | undefined = cut;
  // The whole body's length is announced, as over node:http: without it, a transport that frames
  // the answer by its end (msw's node:http mock) ends it at the cut, a whole body to its client.
  // The error comes at the read after the half, not with it: a stream that errors drops what is queued.
  init.headers = { ...reply.headers, 'Content-Length': String(length) };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (half) controller.enqueue(half);
      else controller.error(new InjectedFault('drop'));
      half = undefined;
    },
  });
  return new Response(body, init);
}

/** The `Allow` list of a resource with these methods: HEAD wherever GET is, and OPTIONS always. */
export function allowList(methods: readonly string[]): string {
  return [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
}
