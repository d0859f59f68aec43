/**
 * A scripted node:http server for the hostile-server suite: each test says what every request
 * is answered with, as a real API or proxy might answer it. It records when each request arrived
 * on the server's own clock (the shared, faked `Date.now()` plus a skew, so a test can put the
 * client's clock minutes off), how many are in flight, and whether the client closed its sockets.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What one request is answered with: a plain answer, or a handler that writes it by hand. */
export type Answer =
  | { status: number; headers?: Record<string, string>; body?: string }
  | ((res: ServerResponse, req: IncomingMessage) => void);

export interface Hostile {
  /** The base URL, ending in /v1. */
  url: string;
  /** When each request arrived, on the server's clock (ms). */
  arrivals: number[];
  /** The most requests that were in flight at once. */
  maxInFlight: () => number;
  /** Resolves when a client socket closes. */
  closed: () => Promise<void>;
  /** The server's clock now. */
  now: () => number;
  close: () => Promise<void>;
}

/**
 * Starts the server on 127.0.0.1:0. `script(n, now)` answers the n-th request (from 0); the
 * server's clock runs `skewMs` ahead of the client's.
 */
export async function startHostile(script: (n: number, now: number) => Answer, { skewMs = 0 } = {}): Promise<Hostile> {
  const arrivals: number[] = [];
  let inFlight = 0;
  let max = 0;
  const closes: (() => void)[] = [];
  const now = () => Date.now() + skewMs;
  const server = createServer((req, res) => {
    const at = now();
    const n = arrivals.push(at) - 1;
    inFlight++;
    max = Math.max(max, inFlight);
    res.on('close', () => {
      inFlight--;
      for (const wake of closes.splice(0)) wake();
    });
    req.resume();
    const answer = script(n, at);
    if (typeof answer === 'function') return answer(res, req);
    res.writeHead(answer.status, { Date: new Date(at).toUTCString(), 'Content-Type': 'application/json', ...answer.headers });
    res.end(answer.body ?? (answer.status < 400 ? '[]' : ''));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    arrivals,
    maxInFlight: () => max,
    closed: () => new Promise((resolve) => closes.push(resolve)),
    now,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `X-RateLimit-*` headers announcing `remaining` of `limit` until `resetMs` (server clock). */
export const budget = (limit: number, remaining: number, resetMs: number) => ({
  'X-RateLimit-Limit': String(limit),
  'X-RateLimit-Remaining': String(remaining),
  'X-RateLimit-Reset': String(Math.ceil(resetMs / 1000)),
});
