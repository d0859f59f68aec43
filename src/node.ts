/**
 * Node adapter of the reference server: a real HTTP server on `node:http`, for tests that need a
 * URL and for the `petstore-server` CLI. Node-only; browser bundles never include it.
 *
 * @module @animal-store/sdk/node
 */
import { setMaxListeners } from 'node:events';
import { createServer, METHODS, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { clip } from './redact.js';
import { reportListenerError } from './runtime.js';
import { BrokenBody, codingsBeyond, MAX_TARGET_LENGTH, TARGET_TOO_LONG, truncatedBody, type ErrorCode, type Incoming, type Reply } from './server/http.js';
import { createServerCore, withFetch, type Arrival, type ReferenceServer } from './server/server.js';
import { listenHostProblem, SERVER_OPTIONS, type ReferenceServerOptions } from './server/options.js';
import { checkKnownOptions } from './suggest.js';

/** One request as it ended, answered or not, as the CLI logs it. It never holds the API key. */
export interface RequestLogEntry {
  /** When the request arrived, on the server's clock (ISO 8601). */
  time: string;
  /** The method as sent (`?` for what node:http could not parse up to its method, or whose request line came in an earlier packet). */
  method: string;
  /**
   * Path and query string (`?` for what node:http could not parse, headers past its limit (431) included, or a target no URL can be made of, a CONNECT's included); an API key in them shows as `[redacted]`.
   * One too long to serve (414) shows its first 100 characters and `…`, or `?` when the headers after it did not come with it (the key they present is unknown).
   */
  path: string;
  /** The status answered, or 0 when the connection was dropped or aborted before an answer. */
  status: number;
  /** The Error record's code when the answer was an error, e.g. `rate_limited` or `api_key_banned`. */
  code?: string;
  /** The body was cut halfway by an injected `truncate` fault: the status went out, the body did not. */
  truncated?: boolean;
  /** The `X-Request-Id` of the answer. */
  requestId: string;
  /** The API key's label (its first characters, never the key), when the request had a valid key. */
  key?: string;
  /** Milliseconds from the request's arrival to the end of the answer. */
  durationMs: number;
}

/** Options of {@link startReferenceServer}: where to listen, and the reference server's own options. */
export interface StartReferenceServerOptions extends ReferenceServerOptions {
  /**
   * The port; 0 picks a free one.
   * @default 0
   */
  port?: number | undefined;
  /**
   * The interface to listen on. An empty one is a `TypeError`: node:http would listen on every
   * interface, the admin API included.
   * @default '127.0.0.1'
   */
  host?: string | undefined;
  /**
   * Called after each request is answered, e.g. to print a log line. A listener that throws is
   * reported (`reportError`, else rethrown in a microtask) and the server serves on.
   */
  onRequest?: ((entry: RequestLogEntry) => void) | undefined;
}

/** Every option's name: the server's, and where and how it listens. */
const START_OPTIONS = [...SERVER_OPTIONS, ...Object.keys({ port: 0, host: 0, onRequest: 0 } satisfies Record<Exclude<keyof StartReferenceServerOptions, keyof ReferenceServerOptions>, 0>)];

/** A running reference server. */
export interface RunningReferenceServer {
  /**
   * Base URL of the API, ending in `/v1`, such as `http://127.0.0.1:4010/v1`. On a wildcard host
   * (`0.0.0.0`, `::`) it names the loopback (`127.0.0.1`, `[::1]`), which a client can connect to.
   */
  url: string;
  /** The reference server behind it, for `reset()` and `inspect()`. */
  server: ReferenceServer;
  /** Stops listening and closes open connections. Called again, it returns the same promise. */
  close(): Promise<void>;
}

/** An absolute-form target's scheme and authority (`http://host:port`), the authority alone its group 1. */
const AUTHORITY = /^[a-z][a-z\d+.-]*:\/\/([^/?#]*)/i;

/**
 * The target URI of a request (RFC 9112, section 3.3). An origin-form target is a path on `origin`
 * (the Host header's), joined as text: resolved as a relative URL, `//evil.example/v1/pets` would
 * name another host. An absolute-form target is the URI itself, its authority used over Host
 * (section 3.2.2), when it is http(s) with a host (RFC 9110, section 4.2.1: the URL standard would
 * read `http:///v1/pets` as the host `v1` and the path `/pets`) and no userinfo (section 4.2.4 has
 * it treated as an error; a web `Request` cannot carry one); `*` (asterisk-form) is the path `/*`.
 * Anything else throws.
 */
function targetUri(target: string, origin: string): URL {
  if (target.startsWith('/')) return new URL(origin + target);
  if (target === '*') return new URL(`${origin}/*`);
  const url = new URL(target);
  const authority = AUTHORITY.exec(target)?.[1];
  if ((url.protocol === 'http:' || url.protocol === 'https:') && authority && !authority.includes('@')) return url;
  throw new TypeError(`Unsupported request target ${url.protocol}`);
}

/** How a request's body is watched for what node:http finds wrong with it after the request began. */
interface BodyWatch {
  /** Set when node:http could not parse the rest of the body: what reading it rejects with. */
  broken?: BrokenBody;
  /** Rejects the body's reading, once it has begun. */
  cut?: (reason: BrokenBody) => void;
  /** Called as the body's reading begins: the `100 Continue` a client that asked for one waits on. */
  reading?: () => void;
}

/** Whether a raw header line's name is `lower` (given in lower case), in any case: lengths first, so most lines cost no copy. */
const named = (name: string, lower: string) => name.length === lower.length && name.toLowerCase() === lower;

/** A header's value in raw headers (name, value, name, value…), duplicates joined as `Headers#get` joins them; `null` when absent. */
function rawHeader(raw: readonly string[], name: string): string | null {
  const lower = name.toLowerCase();
  let value: string | null = null;
  for (let i = 0; i < raw.length; i += 2) {
    if (named(raw[i]!, lower)) value = value === null ? raw[i + 1]! : `${value}, ${raw[i + 1]}`;
  }
  return value;
}

/** Each connection's {@link closing} signal, once a request on it has waited. */
const closings = new WeakMap<Socket, AbortSignal>();

/**
 * A signal that aborts when the client's connection closes: whatever its requests still wait on
 * (a fault's latency) then has nobody to answer, and the server acts on nothing, as in-process
 * when a request's `signal` aborts. One per connection, made only when a request first waits.
 */
function closing(socket: Socket): AbortSignal {
  let signal = closings.get(socket);
  if (signal) return signal;
  const controller = new AbortController();
  signal = controller.signal;
  // Every pipelined request on the connection may wait on it at once: that is no leak.
  setMaxListeners(0, signal);
  // Read as node:http hands over a request, from the packet it parses (a latency fault reads it
  // at once): the socket has not emitted 'close' yet, since none is parsed after it, so it will.
  socket.once('close', () => controller.abort());
  closings.set(socket, signal);
  return signal;
}

/** The reference server's view of a node:http request: no `Request` is built (see ServerCore). */
function incoming(req: IncomingMessage, origin: string, watch: BodyWatch): Incoming {
  const method = req.method ?? 'GET';
  const raw = req.rawHeaders;
  // From the raw headers: req.headers would keep only the first Authorization or Content-Type.
  const header = (name: string) => rawHeader(raw, name);
  // The Host header names the origin the client used (Location and Link answers use it); one that
  // is no host, `hostProblem` refuses, and the request is recorded on the server's own origin.
  const host = header('Host') ?? '';
  const url = targetUri(req.url ?? '/', validHost(host) ? `http://${host}` : origin);
  const body =
    method === 'GET' || method === 'HEAD'
      ? null
      : () => {
          watch.reading?.();
          // Not destroyed when the reading stops early (a 413 midway): node:http then neither read
          // the rest nor closed the connection, and the requests after it went unanswered.
          const chunks = req.iterator({ destroyOnReturn: false }) as AsyncIterator<Uint8Array, undefined>;
          // A body node:http stops parsing just waits for more: the reading is cut instead.
          const cut = new Promise<never>((_, reject) => (watch.cut = reject));
          cut.catch(() => {});
          if (watch.broken) watch.cut!(watch.broken);
          // The rest is read and dropped, as node:http drops a body nobody read, and the connection serves on.
          const cancel = async () => {
            await chunks.return?.();
            req.resume();
          };
          return { read: () => Promise.race([chunks.next(), cut]), cancel };
        };
  return new NodeIncoming(method, url, header, body, req.socket);
}

/**
 * An {@link Incoming} whose `signal` is made only when read ({@link closing}). A class, not an
 * object literal with a getter: V8 builds such a literal on its slow path, about 0.35 µs a request.
 */
class NodeIncoming implements Incoming {
  constructor(
    readonly method: string,
    readonly url: URL,
    readonly header: (name: string) => string | null,
    readonly body: Incoming['body'],
    private readonly socket: Socket,
  ) {}

  get signal(): AbortSignal {
    return closing(this.socket);
  }
}

/** The last Host value found valid: a client sends the same one with every request, so it is parsed once. */
let validHostSeen: string | undefined;

/**
 * Whether a Host value is a host and optional port (RFC 9112, section 3.2; the port may be empty, as
 * RFC 3986's `*DIGIT`) that URLs can be built on: a name of RFC 3986's unreserved characters,
 * sub-delims and percent-encoded octets, or an IP literal.
 */
function validHost(host: string): boolean {
  if (host === validHostSeen) return true;
  if (!/^(?:[\w.\-~!$&'()*+,;=]|%[\da-fA-F]{2})+(:\d*)?$|^\[[\w:.]+\](:\d*)?$/.test(host)) return false;
  try {
    new URL(`http://${host}`);
  } catch {
    // A port past 65535, an IPv4 address of five parts, an IPv6 literal that is none, octets that
    // decode to what no name may hold (a space, a slash) or to no UTF-8.
    return false;
  }
  validHostSeen = host;
  return true;
}

/**
 * Why a request's Host lines make it one RFC 9112 (section 3.2) answers with a 400, if they do:
 * more than one Host line (in any version), none in HTTP/1.1 or later, or one whose value is no
 * host and port. HTTP/1.0 and 0.9 have no Host to require: such a request, and one with an empty
 * Host, is served on the server's own origin. node:http keeps only the first of several in
 * `req.headers`, so they are counted in the raw headers.
 */
function hostProblem(req: IncomingMessage): string | undefined {
  let lines = 0;
  let value = '';
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (named(req.rawHeaders[i]!, 'host')) {
      lines++;
      value = req.rawHeaders[i + 1]!;
    }
  }
  if (lines === 1 && value !== '' && !validHost(value)) {
    return `The Host header "${clip(value, 100)}" is not a host and port (RFC 9112, section 3.2). Send Host: with the host and port you connect to, such as 127.0.0.1:4010.`;
  }
  if (lines > 1) return `The request carries ${lines} Host header lines; RFC 9112 (section 3.2) allows exactly one. Send one Host: with the host and port you connect to.`;
  if (lines === 0 && Number(req.httpVersion) >= 1.1) {
    return 'An HTTP/1.1 request must carry a Host header (RFC 9112, section 3.2). Send Host: with the host and port you connect to.';
  }
  return undefined;
}

/**
 * What a request line whose HTTP version the server does not speak is told: node:http parses
 * HTTP/2.0 in HTTP/1.1's syntax, stops at HTTP/2's connection preface (`PRI * HTTP/2.0`, then
 * `SM`), and itself refuses the other versions past 1.1 (3.0, 1.2).
 */
const UNSUPPORTED_VERSION = 'The request\'s HTTP version is not one this server speaks. Send HTTP/1.1 (HTTP/2 and HTTP/3 are not served).';

/**
 * Why a request node:http parsed is refused before the server sees it, as its answer's status,
 * code and message: a version past 1.1 (a 400, not RFC 9110's 505, section 15.6.6: no input gets
 * a 5xx, which clients retry; docs/decisions.md); a Transfer-Encoding (`coding`) in HTTP/1.0,
 * whose framing RFC 9112 (section 6.1) calls `faulty`; its Host lines; or a transfer coding besides
 * chunked, whose body node:http hands over still coded (gzip, chunked): RFC 9112 offers 501, a 5xx,
 * and it gets the 415 of a Content-Encoding.
 */
function refusal(req: IncomingMessage, coding: string | null, faulty: boolean): readonly [number, ErrorCode, string] | undefined {
  if (req.httpVersionMajor > 1) return [400, 'bad_request', UNSUPPORTED_VERSION];
  if (faulty) return [400, 'bad_request', 'An HTTP/1.0 request cannot carry a Transfer-Encoding (RFC 9112, section 6.1). Send HTTP/1.1, or the body with a Content-Length.'];
  const host = hostProblem(req);
  if (host) return [400, 'bad_request', host];
  if (coding !== null && codingsBeyond(coding, 'chunked')) {
    return [415, 'unsupported_media_type', `Transfer-Encoding "${clip(coding, 40)}" is not supported. Send the body uncompressed, with Transfer-Encoding: chunked alone or a Content-Length.`];
  }
  return undefined;
}

/** What node:http reports of what it could not parse: the packet it failed on, and how far into it. */
type ParseError = NodeJS.ErrnoException & { rawPacket?: Buffer; bytesParsed?: number };

/** The request line of the request node:http failed in, as {@link requestLine} finds it. */
interface RequestLine {
  method: string;
  target: string;
  /** Where the line's target ends in the packet. */
  end: number;
  packet: string;
  bytesParsed: number;
}

/**
 * The request line of the request node:http failed in, when the packet it failed on holds its
 * beginning: right after the packet's last blank line before the failure point (the end of the
 * connection's `last` request's head, or of its chunked body) and the body its Content-Length
 * announced; without such a blank line, at the packet's start (the request began there, or in an
 * earlier packet, whose header lines, like the tail of a body that came in two packets, seldom
 * begin with a method and a space). Words in a body in the packet are never taken for it: a blank
 * line in a body would pass for the end of `last`'s head, so that head must hold `last`'s request
 * line. The line begins with a method node:http knows and a space (one that failed before its
 * method's space is `HPE_INVALID_METHOD`); else `undefined`.
 */
function requestLine({ rawPacket, bytesParsed = rawPacket?.length ?? 0 }: ParseError, last?: IncomingMessage): RequestLine | undefined {
  const packet = rawPacket?.toString('latin1') ?? '';
  const parsed = packet.slice(0, bytesParsed);
  const blank = parsed.lastIndexOf('\r\n\r\n');
  let start = 0;
  if (blank >= 0) {
    const length = last && !last.headers['transfer-encoding'] ? Number(last.headers['content-length'] ?? 0) : 0;
    const previous = parsed.lastIndexOf('\r\n\r\n', blank - 1);
    if (length > 0 && parsed.lastIndexOf(`${last!.method} ${last!.url} `, blank) < (previous < 0 ? 0 : previous + 4)) return undefined;
    start = blank + 4 + length;
  }
  // Empty lines before a request line are skipped, as node:http skips them.
  const match = /(?:\r\n)*([\w!#$%&'*+.^`|~-]+) ([^ \r\n]*)/y;
  match.lastIndex = start;
  const line = match.exec(parsed);
  // PRI, which node:http's parser knows (HTTP/2's preface begins with it), METHODS does not list.
  if (!line || !(METHODS.includes(line[1]!) || line[1] === 'PRI')) return undefined;
  return { method: line[1]!, target: line[2]!, end: start + line[0].length, packet, bytesParsed };
}

/**
 * The 414 of a request whose target passed node:http's header limit, however long its path and
 * query (its message then blames the authority or the fragment when the rest is short), or
 * `undefined` when the headers passed it (431). Node checks one limit for both; the packet it
 * failed on shows the request line when the request came in one piece. Node counts the target
 * first, so a failure before its end is the target alone past the limit;
 * otherwise the target is measured as `serve` measures it, by its URL's path and query (an
 * absolute-form target's scheme and authority not counted, its empty path counted as `/`). The
 * request is what the journal needs: its method, and its URL when the packet also holds all its
 * headers, since the journal hides the key an Authorization header presents (without them, or with
 * an authority cut short, no path is shown).
 */
function longTarget({ method, target, end, packet, bytesParsed }: RequestLine, origin: string): readonly [number, ErrorCode, string, Arrival] | undefined {
  let url: URL | undefined;
  try {
    url = targetUri(target, origin);
  } catch {
    // No URL is made of it: served, it would be a 400, not a 414.
  }
  const inTarget = bytesParsed <= end;
  if (inTarget ? target.length <= MAX_TARGET_LENGTH : !url || url.pathname.length + url.search.length <= MAX_TARGET_LENGTH) return undefined;
  if (inTarget) {
    // A target whose path and query are no longer than the server reads: what passed the limit is
    // an absolute-form target's authority, or a fragment, which a client sends none of (RFC 9112,
    // section 3.2).
    const authority = AUTHORITY.exec(target)?.[0].length ?? 0;
    const fragment = target.includes('#') ? target.length - target.indexOf('#') : 0;
    if (target.length - authority - fragment <= MAX_TARGET_LENGTH) {
      const message =
        fragment > authority
          ? 'The request target\'s fragment (from #) is too long, and a client sends none (RFC 9112, section 3.2). Send the path and query alone, such as /v1/pets?limit=10.'
          : 'The request target\'s authority (the scheme and host before its path) is too long. Send the path alone, such as /v1/pets, with the host in a Host header.';
      return [414, 'uri_too_long', message, { method }];
    }
  }
  const head = packet.slice(end).split(/\r?\n\r?\n/, 2);
  if (!url || head.length < 2) return [...TARGET_TOO_LONG, { method }];
  // The header lines after the request line's end (its version), as node:http's raw headers.
  const raw = head[0]!.split(/\r?\n/).slice(1).flatMap((field) => {
    const colon = field.indexOf(':');
    return colon > 0 ? [field.slice(0, colon), field.slice(colon + 1).trim()] : [];
  });
  return [...TARGET_TOO_LONG, { method, url, header: (name) => rawHeader(raw, name), body: null }];
}

/**
 * How long a connection the server closes is still read after its FIN, for a client that never
 * closes its side (nginx's lingering_timeout is 5 s too).
 */
const LINGER_MS = 5_000;

/**
 * Closes a connection after `last`, as nginx's lingering close does: the server's side ends (FIN),
 * and what the client still sends (a body it did not wait to be asked for, requests after the
 * last answer) is read and dropped until it closes its side, for {@link LINGER_MS} at most.
 * Closed at once with such bytes unread, the connection was reset, and the client could lose the
 * answer before reading it.
 */
function linger(socket: Duplex, last?: string): void {
  // Resumed: a socket node:http handed over (CONNECT's) is read by nobody else.
  socket.resume().end(last);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Where node:http's parser looks for a function to call as a request begins (its
 * `kOnMessageBegin`), which node:http leaves empty and empties again when the parser is freed.
 */
const MESSAGE_BEGIN = 0;

/** A connection's parser, as node:http keeps it on the socket while it parses. */
type Parsed = Socket & { parser?: Record<number, unknown> | null };

/**
 * Set on each connection's parser until its first request begins, when the parser calls it once:
 * still set, it tells that only the empty lines a server ignores before a request line (RFC 9112,
 * section 2.2) came, if anything. Per connection, not per request, nor a look at every packet.
 */
function unbegun(this: Record<number, unknown>): void {
  this[MESSAGE_BEGIN] = null;
}

/** node:http's way to close a connection after its last answer (`destroySoon`), made a {@link linger}. */
function lingerSoon(this: Socket): void {
  linger(this);
}

/** A whole HTTP/1.1 response, for a socket that has no ServerResponse; the connection closes after it. */
function serialize(reply: Reply): string {
  const body = reply.body ?? '';
  // A HEAD's answer has no body, and the Content-Length of its GET's (see the server's close()).
  const headers = { 'Content-Length': String(Buffer.byteLength(body)), ...reply.headers, Connection: 'close' };
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? ''}\r\n${head}\r\n${body}`;
}

/** The log entry of a reply the server recorded: what its exchange says, as the journal does. */
function logEntry(reply: Reply, durationMs: number): RequestLogEntry | undefined {
  const { exchange } = reply;
  if (!exchange) return undefined;
  const entry: RequestLogEntry = {
    time: new Date(exchange.at).toISOString(),
    method: exchange.method,
    path: exchange.path,
    status: exchange.status,
    requestId: exchange.requestId,
    durationMs,
  };
  if (exchange.code !== undefined) entry.code = exchange.code;
  if (exchange.key !== null) entry.key = exchange.key;
  if (reply.truncated && exchange.status !== 0) entry.truncated = true;
  return entry;
}

/**
 * Writes a reply; says whether its status went out. A drop, or a client already gone, stops it;
 * an injected truncation cuts only the body.
 */
function send(res: ServerResponse, reply: Reply): boolean {
  if (res.destroyed || reply.dropped) {
    res.destroy();
    return false;
  }
  if (reply.body === null) {
    res.writeHead(reply.status, reply.headers).end();
    return true;
  }
  // Content-Length, and the body as a string: node:http then sends head and body in one write
  // (a Buffer goes out as a second, vectored write; chunked encoding costs more still).
  reply.headers['Content-Length'] = String(Buffer.byteLength(reply.body));
  res.writeHead(reply.status, reply.headers);
  if (!reply.truncated) {
    res.end(reply.body);
    return true;
  }
  // An injected truncation: half the body, then the connection is cut, as a real fault would.
  res.write(truncatedBody(reply.body)[0], () => res.destroy());
  return true;
}

/**
 * The status, code and message of the answer to what node:http could not parse (`err.code`):
 * in a body already begun (`inBody`), or where a request should begin; and what it shows of the
 * request, for the journal and a HEAD's bodiless answer: its method when node:http parsed it, and
 * its path only for a 414 whose headers came whole (else the key they present is unknown).
 */
function unparsed(err: ParseError, inBody: boolean, origin: string, last?: IncomingMessage): readonly [number, ErrorCode, string, (Arrival | undefined)?] {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'request_timeout', 'The request took too long to arrive. Send it again.'];
  if (inBody) {
    // Trailer fields are fields too (RFC 9110, section 6.5), counted against node:http's header
    // limit: the body arrived whole and validly framed, what is too large is a field section.
    if (err.code === 'HPE_HEADER_OVERFLOW') return [431, 'headers_too_large', 'The request\'s trailer fields, after its chunked body, are too large. Send fewer or shorter trailers.'];
    if (err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return [400, 'bad_request', 'The request body\'s chunk extensions (after a chunk\'s size) are too long. Send its chunks without extensions.'];
    return [400, 'bad_request', 'The request body broke off before its end, or its framing (Content-Length, chunked encoding) is not valid HTTP/1.1. Send the whole body.'];
  }
  if (err.code === 'HPE_INVALID_METHOD') {
    return [400, 'bad_request', 'The request method is not one this server\'s HTTP parser knows (methods are case-sensitive: POST, not post). The API\'s methods are GET, POST, HEAD and OPTIONS.'];
  }
  const line = requestLine(err, last);
  const parsed = line && { method: line.method };
  // node:http reports a version past 1.1 as it reports PRI * HTTP/1.1 (which only HTTP/2's preface
  // may begin with) or a bare LF after the version: only the first is told its version is not spoken.
  if (err.code === 'HPE_INVALID_VERSION' && line && /^ HTTP\/(?!1\.[01])\d\.\d/.test(line.packet.slice(line.end))) return [400, 'bad_request', UNSUPPORTED_VERSION, parsed];
  // HTTP/2's connection preface (PRI * HTTP/2.0, then SM), which node:http stops at whatever packets it came in.
  if (err.code === 'HPE_PAUSED_H2_UPGRADE') return [400, 'bad_request', UNSUPPORTED_VERSION, { method: 'PRI' }];
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return (line && longTarget(line, origin)) || [431, 'headers_too_large', 'The request headers are too large. Send fewer or shorter headers.', parsed];
  }
  return [400, 'bad_request', 'The request is not valid HTTP/1.1 (check the method, the request line and the headers).', parsed];
}

/**
 * A request on a connection while what node:http cannot parse after it may be its own: its answer
 * is still to come, or its body had not all arrived when it was answered.
 */
interface Open {
  req: IncomingMessage;
  res: ServerResponse;
  watch: BodyWatch;
}

/**
 * Starts the reference server on `node:http`. Resolves once it listens.
 *
 * @example
 * ```ts
 * import { startReferenceServer } from '@animal-store/sdk/node';
 *
 * const { url, close } = await startReferenceServer({ port: 0, apiKeys: { 'test-key': 'pro' } });
 * // point the client at `url` (it ends in /v1), then:
 * await close();
 * ```
 */
export async function startReferenceServer(options: StartReferenceServerOptions = {}): Promise<RunningReferenceServer> {
  checkKnownOptions(options, START_OPTIONS, 'startReferenceServer()');
  const { port = 0, host = '127.0.0.1', onRequest, ...serverOptions } = options;
  const noInterface = listenHostProblem(host);
  if (noInterface) throw new TypeError(`startReferenceServer(): host ${noInterface}.`);
  const core = createServerCore(serverOptions);
  const { serve, refuse } = core;
  let origin = '';
  /** Each connection's last request, while what node:http cannot parse after it may be its own (see {@link Open}). */
  const open = new WeakMap<Socket, Open>();
  /** Connections whose unparsable rest was already refused: node:http reports each later packet again. */
  const refused = new WeakSet<Socket>();
  /**
   * Connections that close after an answer: to a request whose framing was faulty, or to one with
   * Expect: 100-continue whose body had not all arrived. node:http still parses the requests
   * pipelined after it, which RFC 9112 (sections 6.1 and 9.6) has no server process.
   */
  const closes = new WeakSet<Socket>();
  /**
   * Connections node:http handed over (a CONNECT's, an upgrade's until a parser takes it back):
   * its closeAllConnections() no longer sees them, so close() ends them itself.
   */
  const handedOver = new Set<Socket>();
  /** Takes a socket node:http handed over without its error listener: its errors end it, as close() does. Returns how to give it back. */
  const takeOver = (socket: Socket) => {
    const drop = () => socket.destroy();
    socket.on('error', drop);
    handedOver.add(socket);
    return () => {
      socket.off('error', drop);
      handedOver.delete(socket);
    };
  };
  /**
   * Tells `onRequest` of an answer; one whose status never went out (`sent` false) reached nobody,
   * and the journal says so too. A listener that throws is reported, as the client's are, and the
   * server serves on.
   */
  const record = (reply: Reply, sent: boolean, durationMs: number) => {
    if (!sent) core.undelivered(reply);
    const entry = onRequest && logEntry(reply, durationMs);
    if (!entry) return;
    try {
      onRequest(entry);
    } catch (error) {
      reportListenerError(error);
    }
  };
  /**
   * Sends a reply, as {@link send}. Answered without the 100 Continue it asked for, a request makes
   * node:http close the connection (adding Connection: close): the client may send the body or
   * not, so what it sends next could be either. Once the body has all arrived the doubt is gone,
   * and a late 100 keeps the connection for what was pipelined after it, which the server may
   * already have acted on. A dropped answer sends nothing.
   */
  const answer = (req: IncomingMessage, res: ServerResponse, watch: BodyWatch, reply: Reply) => {
    if (watch.reading && !reply.dropped) {
      if (req.complete) watch.reading();
      else closes.add(req.socket);
    }
    return send(res, reply);
  };
  const handle = (req: IncomingMessage, res: ServerResponse, expectsContinue = false) => {
    // Neither answered nor journalled, as what follows a request with Connection: close; its body
    // is read and dropped, as the connection lingers (unread, it stopped the reading).
    if (closes.has(req.socket)) return void req.resume();
    const started = performance.now();
    const log = (reply: Reply, sent: boolean) => record(reply, sent, performance.now() - started);
    const watch: BodyWatch = {};
    if (expectsContinue) {
      watch.reading = () => {
        delete watch.reading;
        res.writeContinue();
      };
    }
    const coding = rawHeader(req.rawHeaders, 'Transfer-Encoding');
    // RFC 9112 (section 6.1): a Transfer-Encoding in HTTP/1.0 makes the framing faulty, and the
    // connection closes after the answer, whatever it is; node:http would read the body by it.
    const faulty = coding !== null && Number(req.httpVersion) < 1.1;
    if (faulty) {
      res.setHeader('Connection', 'close');
      closes.add(req.socket);
    }
    let reply: Reply | Promise<Reply>;
    try {
      const request = incoming(req, origin, watch);
      const problem = refusal(req, coding, faulty);
      reply = problem ? refuse(...problem, request) : serve(request);
    } catch {
      reply = refuse(400, 'bad_request', 'The request target or headers could not be read. Send a path such as /v1/pets, or an http(s) URL.', { method: req.method! });
    }
    // Never complete yet: node:http emits a request at the end of its head, before its message ends.
    open.set(req.socket, { req, res, watch });
    // Most answers are ready at once; only those that read a body or carry a fault wait.
    if (!(reply instanceof Promise)) return void log(reply, answer(req, res, watch, reply));
    void reply.then(
      (ready) => log(ready, answer(req, res, watch, ready)),
      () => {
        // serve() only rejects when something is badly wrong: still answer, as for everything else.
        const fallback = refuse(400, 'bad_request', 'The request could not be handled.');
        log(fallback, !res.headersSent && answer(req, res, watch, fallback));
      },
    );
  };
  // requireHostHeader off: node:http would answer a Host-less HTTP/1.1 request with a bare 400 (no
  // Error record, no rate-limit headers); `hostProblem` gives it the server's 400 instead.
  const http = createServer({ requireHostHeader: false }, handle);
  // node:http closes a connection after its last answer with destroySoon(): a FIN, then a close
  // that resets the connection when the client's bytes are still unread. It lingers instead.
  http.on('connection', (socket: Parsed) => {
    socket.destroySoon = lingerSoon;
    // Only where node:http left the slot empty (Node 20 to 24 do): a Node that used it for
    // something else keeps it, and an idle connection is then told apart by bytesRead alone.
    const parser = socket.parser;
    if (parser && parser[MESSAGE_BEGIN] == null) parser[MESSAGE_BEGIN] = unbegun;
  });
  // An Expect other than 100-continue is served like any request, as server.fetch and msw serve it
  // (RFC 9110, section 10.1.1: a server MAY answer 417, need not). Without this listener node:http
  // answers a bare 417 itself: no Error record, no rate-limit headers, unlike every other answer.
  http.on('checkExpectation', handle);
  // A request with Expect: 100-continue (HTTP/1.1 only: node:http serves an HTTP/1.0 one as any
  // other, which RFC 9110, section 10.1.1, sends no 100) is told to send its body only when the
  // server begins to read it; node:http sent 100 Continue at once, so a body refused by the
  // headers alone (413, 401, 429…) was sent whole for nothing. One whose framing says it has no
  // body (no Content-Length or Transfer-Encoding, or Content-Length: 0) has nothing to wait for: it
  // is served as any other, without a 100 (the same section lets the server omit it), and its
  // connection serves on, as Go's net/http does; node:http closed it (its `_expect_continue`).
  http.on('checkContinue', (req: IncomingMessage, res: ServerResponse & { _expect_continue?: boolean }) => {
    const body = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length']) > 0;
    if (!body) res._expect_continue = false;
    handle(req, res, body);
  });
  /**
   * Answers on a bare socket, for what never became a request, in its turn, and closes the
   * connection. Refused as it arrived (the journal orders by arrival), it goes out once the answer
   * to `last`, the connection's last request, has left (its 'close'): one already ended may still wait
   * in node:http's queue behind an earlier pipelined one. A socket its client already left (a
   * reset while an earlier answer was held) gets no answer, recorded so.
   */
  const answerSocket = (socket: Duplex, reply: Reply, last: Open | undefined) => {
    const arrived = performance.now();
    const writeAndClose = () => {
      const sent = socket.writable;
      if (sent) linger(socket, serialize(reply));
      else socket.destroy();
      record(reply, sent, performance.now() - arrived);
    };
    if (last && !last.res.writableFinished && !last.res.destroyed) last.res.once('close', writeAndClose);
    else writeAndClose();
  };
  // What node:http cannot parse (an unknown or lower-case method, oversized headers, a broken
  // body) gets an answer as the server answers everything, not node's bare 400, and only one: the
  // request whose body broke is answered as itself, and what follows a request still being
  // answered is answered after it, in order.
  http.on('clientError', (err: ParseError, socket: Parsed) => {
    // node:http times out a connection on which no request began (a browser's preconnect, or one
    // that sent only empty lines) as one whose request is late: it has no request to answer or
    // journal, and just closes.
    if (err.code === 'ECONNRESET' || (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' && (socket.bytesRead === 0 || socket.parser?.[MESSAGE_BEGIN] === unbegun))) return void socket.destroy();
    // A connection that lingers (see linger()) is read to its end whatever it holds.
    if (!socket.writable) return;
    // What follows a request with Connection: close (or HTTP/1.0's default) is no request: RFC 9112
    // (section 9.6) processes none after it, and node:http closes the connection once it is answered.
    if (err.code === 'HPE_CLOSED_CONNECTION') return;
    // node:http parses nothing more on this connection, but still reads it: a client that goes
    // away is seen, and what was held for it is acted on no further (paused, the connection hid a
    // reset, and the held request was acted on for nobody). It closes after the answers below.
    if (refused.has(socket)) return;
    refused.add(socket);
    const last = open.get(socket);
    open.delete(socket);
    const pending = last !== undefined && !last.res.writableEnded && !last.res.destroyed;
    if (last && !last.req.complete) {
      // The body of the request on this connection broke: no new request began.
      if (!pending) return void socket.destroy();
      if (!last.res.headersSent) last.res.setHeader('Connection', 'close');
      const [status, code, message] = unparsed(err, true, origin);
      last.watch.broken = new BrokenBody(status, code, message);
      return void last.watch.cut?.(last.watch.broken);
    }
    answerSocket(socket, refuse(...unparsed(err, false, origin, last?.req)), last);
  });
  // A request asking to upgrade the connection (Upgrade with Connection: upgrade) is served as a
  // plain request: the server speaks no other protocol, and RFC 9110 (section 7.8) lets it ignore
  // Upgrade. node:http stops parsing at one and dropped what followed it in the same packet, so
  // it is handed back, without its Upgrade lines and with what came after it, to a parser of its
  // own, once the answers before it have left (node:http's queue of them belongs to the old one).
  http.on('upgrade', (req: IncomingMessage, socket: Socket & { _httpMessage?: ServerResponse | null }, rest: Buffer) => {
    const raw = req.rawHeaders;
    let head = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
    for (let i = 0; i < raw.length; i += 2) if (!named(raw[i]!, 'upgrade')) head += `${raw[i]}: ${raw[i + 1]}\r\n`;
    socket.unshift(Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), rest]));
    // Ours until a parser takes it back: a client's reset meanwhile ends it, not the process.
    const giveBack = takeOver(socket);
    const parse = () => {
      if (socket._httpMessage) return void socket._httpMessage.once('close', parse);
      giveBack();
      if (!socket.destroyed) http.emit('connection', socket);
    };
    parse();
  });
  // CONNECT never reaches the request handler either: node hands over the socket, and without
  // this listener closes it unanswered. The socket is ours now, its errors included; a request
  // pipelined before it is still answered first, as before what node:http cannot parse.
  http.on('connect', (req: IncomingMessage, socket: Socket) => {
    socket.once('close', takeOver(socket));
    answerSocket(socket, refuse(400, 'bad_request', 'CONNECT is not supported: this server is not a proxy. Send the API\'s methods (GET, POST, HEAD, OPTIONS).', { method: req.method! }), open.get(socket));
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  // A wildcard (0.0.0.0, ::) is where the server listens, not an address to connect to: the URL
  // names the loopback of the same family, as Vite and Next print localhost for it.
  const ip = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  const hostname = address.family === 'IPv6' ? `[${ip}]` : ip;
  origin = `http://${hostname}:${address.port}`;
  let closing: Promise<void> | undefined;
  return {
    url: `${origin}/v1`,
    server: withFetch(core),
    // Once: a later call (a teardown after a test that closed it) gets the same promise, where
    // node:http rejected it with ERR_SERVER_NOT_RUNNING.
    close: () =>
      (closing ??= new Promise<void>((resolve, reject) => {
        http.close((err) => (err ? reject(err) : resolve()));
        http.closeAllConnections();
        for (const socket of handedOver) socket.destroy();
      })),
  };
}

export type { ReferenceServer, ReferenceServerOptions };
export type { BanEvent } from './server/server.js';
