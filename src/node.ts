/**
 * Node adapter of the reference server: a real HTTP server on `node:http`, for tests that need a
 * URL and for the `petstore-server` CLI. Node-only; browser bundles never include it.
 *
 * @module petstore-sdk/node
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { isInjectedFault } from './server/faults.js';
import { error } from './server/http.js';
import { createReferenceServer, type ReferenceServer } from './server/server.js';
import type { ReferenceServerOptions } from './server/options.js';

/** One answered request, as the CLI logs it. It never holds the API key. */
export interface RequestLogEntry {
  method: string;
  /** Path and query string. */
  path: string;
  /** The status answered, or 0 when the connection was dropped or aborted. */
  status: number;
  durationMs: number;
}

/** Options of {@link startReferenceServer}: where to listen, and the reference server's own options. */
export interface StartReferenceServerOptions extends ReferenceServerOptions {
  /**
   * The port; 0 picks a free one.
   * @default 0
   */
  port?: number;
  /**
   * The interface to listen on.
   * @default '127.0.0.1'
   */
  host?: string;
  /** Called after each request is answered, e.g. to print a log line. */
  onRequest?: (entry: RequestLogEntry) => void;
}

/** A running reference server. */
export interface RunningReferenceServer {
  /** Base URL of the API, ending in `/v1`, such as `http://127.0.0.1:4010/v1`. */
  url: string;
  /** The reference server behind it, for `reset()` and `inspect()`. */
  server: ReferenceServer;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

async function bridge(api: ReferenceServer, req: IncomingMessage, res: ServerResponse, origin: string): Promise<number> {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  let request: Request;
  try {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    const method = req.method ?? 'GET';
    const hasBody = method !== 'GET' && method !== 'HEAD';
    // The Host header names the origin the client used (Location and Link answers use it).
    const url = /^[\w.\-]+(:\d+)?$|^\[[\w:.]+\](:\d+)?$/.test(req.headers.host ?? '')
      ? new URL(req.url ?? '/', `http://${req.headers.host}`)
      : new URL(req.url ?? '/', origin);
    request = new Request(url, {
      method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
      signal: controller.signal,
      // @ts-expect-error -- `duplex` is required by Node's fetch for streamed bodies but missing from the DOM types.
      duplex: 'half',
    });
  } catch {
    const response = error(400, 'bad_request', 'The request line or headers could not be parsed.');
    await write(res, response);
    return response.status;
  }
  let response: Response;
  try {
    response = await api.fetch(request);
  } catch (thrown) {
    if (!isInjectedFault(thrown)) throw thrown;
    req.socket.destroy();
    return 0;
  }
  await write(res, response);
  return res.destroyed && !res.writableFinished ? 0 : response.status;
}

async function write(res: ServerResponse, response: Response): Promise<void> {
  if (res.destroyed) return;
  // Headers stay implicit (not flushed by writeHead) until the first write, so a body that
  // arrives as one chunk, as every answer of the reference server does, goes out in one write
  // with Content-Length instead of chunked encoding: a third more throughput (bench/).
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  let pending: Uint8Array | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) return void reader.cancel().catch(() => {});
      if (pending) res.write(pending);
      pending = value;
    }
    res.end(pending);
  } catch {
    // The body failed halfway (an injected truncation): send what came, then cut the connection,
    // as a real fault would.
    if (pending) res.write(pending);
    res.destroy();
  }
}

/**
 * Starts the reference server on `node:http`. Resolves once it listens.
 *
 * @example
 * ```ts
 * import { startReferenceServer } from 'petstore-sdk/node';
 *
 * const { url, close } = await startReferenceServer({ port: 0, apiKeys: { 'test-key': 'pro' } });
 * // point the client at `url` (it ends in /v1), then:
 * await close();
 * ```
 */
export async function startReferenceServer(options: StartReferenceServerOptions = {}): Promise<RunningReferenceServer> {
  const { port = 0, host = '127.0.0.1', onRequest, ...serverOptions } = options;
  const api = createReferenceServer(serverOptions);
  let origin = '';
  const http = createServer((req, res) => {
    const started = performance.now();
    bridge(api, req, res, origin)
      .catch(() => {
        if (!res.headersSent) void write(res, error(400, 'bad_request', 'The request could not be handled.'));
        else res.destroy();
        return 0;
      })
      .then((status) =>
        onRequest?.({ method: req.method ?? '?', path: req.url ?? '/', status, durationMs: performance.now() - started }),
      );
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const hostname = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  origin = `http://${hostname}:${address.port}`;
  return {
    url: `${origin}/v1`,
    server: api,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.close((err) => (err ? reject(err) : resolve()));
        http.closeAllConnections();
      }),
  };
}

export type { ReferenceServer, ReferenceServerOptions };
