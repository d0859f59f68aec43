/**
 * A scripted node:http server for the hostile-server suite: each test says what every request
 * is answered with, as a real API or proxy might answer it. It records, per request, when it
 * arrived on the server's own clock (the shared, faked `Date.now()` plus a skew, so a test can put
 * the client's clock minutes off), how many body bytes the server wrote, and whether the client
 * closed the connection before the answer was complete.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
// Real timers: the suite fakes setTimeout/clearTimeout/Date, and a trickling body runs on the wire.
import { clearInterval, setInterval } from 'node:timers';

/** How the body of a {@link Reply} goes out after its head. */
export type BodyMode =
  /** A chunk of spaces every few real milliseconds, forever (until the client closes). */
  | { kind: 'endless'; chunkBytes?: number; everyMs?: number }
  /** `totalBytes` of spaces as fast as the socket takes them. */
  | { kind: 'huge'; totalBytes: number }
  /** The first `afterBytes` of `body`, then the connection is destroyed. */
  | { kind: 'cut'; afterBytes: number };

/** A scripted answer. `Date` is set from the server's clock unless `date` is false. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  date?: boolean;
  stream?: BodyMode;
}

/**
 * What one request gets: a {@link Reply}, `'drop'` (the connection is destroyed once the request
 * has arrived: it reached the server, no answer), `'hold'` (never answered), or a handler that
 * writes the answer by hand.
 */
export type Answer = Reply | 'drop' | 'hold' | ((res: ServerResponse, req: IncomingMessage) => void);

/** One request, as the server saw it. */
export interface Arrival {
  /** When it arrived, on the server's clock (ms). */
  at: number;
  method: string;
  path: string;
  body: string;
  /** Body bytes the server wrote for it. */
  written: number;
  /** Whether the connection closed before the answer was complete (the client aborted, or the server cut it). */
  closedEarly: boolean;
}

export interface Hostile {
  /** The base URL, ending in /v1. */
  url: string;
  /** When each request arrived, on the server's clock (ms). */
  arrivals: number[];
  /** Each request in arrival order. */
  requests: Arrival[];
  /** The most requests that were in flight at once. */
  maxInFlight: () => number;
  /** Resolves when the connection of request `n` closes (at once when it already has). */
  closed: (n: number) => Promise<void>;
  /** The server's clock now. */
  now: () => number;
  close: () => Promise<void>;
}

/**
 * Starts the server on 127.0.0.1:0. `script(n, now)` answers the n-th request (from 0) once its
 * body has arrived; `now` is the server's clock, which runs `skewMs` ahead of the client's.
 */
export async function startHostile(script: (n: number, now: number) => Answer, { skewMs = 0 } = {}): Promise<Hostile> {
  const arrivals: number[] = [];
  const requests: Arrival[] = [];
  const closes = new Map<number, () => void>();
  const closedSet = new Set<number>();
  let inFlight = 0;
  let max = 0;
  const now = () => Date.now() + skewMs;
  const server = createServer((req, res) => {
    const at = now();
    const n = arrivals.push(at) - 1;
    const arrival: Arrival = { at, method: req.method ?? '', path: req.url ?? '', body: '', written: 0, closedEarly: false };
    requests.push(arrival);
    inFlight++;
    max = Math.max(max, inFlight);
    // Count every body byte, whoever writes it (a Reply or a hand-written handler).
    const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (!res.destroyed) arrival.written += typeof chunk === 'string' ? Buffer.byteLength(chunk) : (chunk as Buffer).length;
      return write(chunk, ...rest);
    }) as typeof res.write;
    let ticker: ReturnType<typeof setInterval> | undefined;
    res.on('close', () => {
      inFlight--;
      clearInterval(ticker);
      arrival.closedEarly = !res.writableFinished;
      closedSet.add(n);
      closes.get(n)?.();
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      arrival.body = Buffer.concat(chunks).toString();
      const answer = script(n, at);
      if (answer === 'hold') return;
      if (answer === 'drop') return void res.destroy();
      if (typeof answer === 'function') return answer(res, req);
      const headers: Record<string, string> = { 'Content-Type': 'application/json', ...answer.headers };
      // node:http adds a Date of the real wall clock unless told not to: the server's clock is ours.
      res.sendDate = false;
      if (answer.date !== false) headers.Date ??= new Date(at).toUTCString();
      const body = answer.body ?? (answer.status < 400 ? '[]' : '');
      const stream = answer.stream;
      if (!stream) return void res.writeHead(answer.status, headers).end(body);
      res.writeHead(answer.status, headers);
      if (stream.kind === 'cut') return void res.write(body.slice(0, stream.afterBytes), () => res.destroy());
      if (stream.kind === 'endless') {
        res.write('[');
        const chunk = ' '.repeat(stream.chunkBytes ?? 1024);
        ticker = setInterval(() => void (res.destroyed || res.write(chunk)), stream.everyMs ?? 5);
        return;
      }
      const chunk = Buffer.alloc(64 * 1024, 32);
      let sent = 0;
      const pump = () => {
        while (!res.destroyed && sent < stream.totalBytes) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    arrivals,
    requests,
    maxInFlight: () => max,
    closed: (n) => (closedSet.has(n) ? Promise.resolve() : new Promise((resolve) => closes.set(n, resolve))),
    now,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `X-RateLimit-*` headers announcing `remaining` of `limit` until `resetMs` (server clock), in Unix seconds. */
export const budget = (limit: number, remaining: number, resetMs: number) => ({
  'X-RateLimit-Limit': String(limit),
  'X-RateLimit-Remaining': String(remaining),
  'X-RateLimit-Reset': String(Math.ceil(resetMs / 1000)),
});

/**
 * A fixed-window rate limiter on the server's clock, as a script: `limit` requests per clock-aligned
 * `windowMs`, each answer announcing the budget; past it, a 429 with `Retry-After` until the
 * window's end. `inside` counts requests that arrived while a window the server announced as
 * spent (or a Retry-After it sent) was still running: requests a real API would count as strikes.
 */
export function fixedWindow(limit: number, windowMs: number, ok: () => Reply = () => ({ status: 200 })) {
  let windowStart = -1;
  let used = 0;
  /** Until when the server told the client to send nothing (server clock). */
  let toldUntil = 0;
  const stats = { served: 0, limited: 0, inside: 0 };
  const script = (_: number, now: number): Reply => {
    if (now < toldUntil) stats.inside++;
    const start = Math.floor(now / windowMs) * windowMs;
    if (start !== windowStart) [windowStart, used] = [start, 0];
    const end = start + windowMs;
    if (used >= limit) {
      stats.limited++;
      toldUntil = end;
      return { status: 429, headers: { ...budget(limit, 0, end), 'Retry-After': String(Math.ceil((end - now) / 1000)) }, body: '{"code":"rate_limited","message":"slow down","status":429}' };
    }
    used++;
    stats.served++;
    if (used === limit) toldUntil = end;
    const reply = ok();
    return { ...reply, headers: { ...budget(limit, limit - used, end), ...reply.headers } };
  };
  return { script, stats };
}
