import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { deflateSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { startReferenceServer, type RequestLogEntry, type RunningReferenceServer } from '@animal-store/sdk/node';
import { behaviourSuite } from './behaviour.js';
import { overHttp } from './transports.js';

behaviourSuite(overHttp);

/**
 * A raw HTTP exchange, for what fetch will not send: HEAD bodies, broken requests, aborts. The
 * client ends its side after `text`, unless `end` is false (node:http closes a connection its
 * client ended, answers it still owes included): then the server must close it.
 */
function raw(url: string, text: string | Uint8Array, end = true): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => (end ? socket.end(text) : socket.write(text)));
    let out = '';
    socket.on('data', (d) => (out += d));
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

/**
 * A raw answer's head and body: the text before its first blank line, and what follows it up to
 * the next one (where a second answer's head begins). Text without a blank line is no answer.
 */
function headAndBody(answer: string): [head: string, body: string] {
  const [head, body] = answer.split('\r\n\r\n') as [string, string?];
  if (body === undefined) throw new Error(`No blank line ends a head in ${JSON.stringify(answer.slice(0, 200))}`);
  return [head, body];
}

/** Journal entries as `METHOD path status` lines, `?` where the server could not tell. */
const journal = (entries: readonly Pick<RequestLogEntry, 'method' | 'path' | 'status'>[]) => entries.map(({ method, path, status }) => `${method} ${path} ${status}`);

/**
 * The server's side of the last connection it accepted (node:net's diagnostics channel), to see
 * what it has read; unsubscribed when the test ends.
 */
function lastAccepted(): () => Socket | undefined {
  let accepted: Socket | undefined;
  const onSocket = (message: unknown) => void (accepted = (message as { socket: Socket }).socket);
  subscribe('net.server.socket', onSocket);
  onTestFinished(() => void unsubscribe('net.server.socket', onSocket));
  return () => accepted;
}

describe('startReferenceServer', () => {
  let running: RunningReferenceServer | undefined;

  /**
   * Runs `test` against a server that holds every answer on a latency of 1 s, with what
   * `onRequest` told. Only the latency's timer and `performance.now` (the log's durations) are
   * faked: node:http and the sockets keep their own.
   */
  async function withHeldAnswers(test: (held: RunningReferenceServer, log: RequestLogEntry[]) => Promise<void>): Promise<void> {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, faults: { rate: 1, kinds: ['latency'], latencyMs: 1_000 }, onRequest: (e) => log.push(e) });
      await test(running, log);
    } finally {
      vi.useRealTimers();
    }
  }

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('a misspelt option (prot, apikeys) is a TypeError naming the one meant, before anything listens', async () => {
    await expect(startReferenceServer({ prot: 0 } as never)).rejects.toThrow('startReferenceServer(): unknown option "prot" (did you mean "port"?).');
    await expect(startReferenceServer({ port: 0, apikeys: {} } as never)).rejects.toThrow('startReferenceServer(): unknown option "apikeys" (did you mean "apiKeys"?).');
  });

  it('a host that names no interface (empty, blank, not a string) is a TypeError before anything listens, not every interface with the admin API open to the network (before: node:http listened on all of them)', async () => {
    for (const host of ['', '  ', 4010]) {
      await expect(startReferenceServer({ port: 0, host, admin: true } as never)).rejects.toThrow(
        `startReferenceServer(): host must name an interface, such as 127.0.0.1, ::1 or localhost; got ${JSON.stringify(host)}.`,
      );
    }
  });

  it('a port already in use rejects with node\'s EADDRINUSE error, and the server on it serves on', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    await expect(startReferenceServer({ port: Number(new URL(running.url).port) })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect((await fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer k' } })).status).toBe(200);
  });

  it('listens on a free port of 127.0.0.1 and its url ends in /v1', async () => {
    running = await startReferenceServer({ port: 0 });
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(Number(new URL(running.url).port)).toBeGreaterThan(0);
  });

  it('on an IPv6 host (::1) its url names it in brackets, and serves there', async () => {
    running = await startReferenceServer({ host: '::1', apiKeys: { k: 'free' } });
    expect(running.url).toMatch(/^http:\/\/\[::1\]:\d+\/v1$/);
    expect((await fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer k' } })).status).toBe(200);
  });

  it('HEAD answers the status and headers without a body', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' }, pets: 3 });
    const text = await raw(running.url, `HEAD /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toMatch(/x-ratelimit-remaining: 59/i);
    expect(headAndBody(text)[1]).toBe('');
  });

  it('a POST with an empty body answers 400, and one with Content-Length: 0 too', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const text = await raw(
      running.url,
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 400/);
    expect(text).toContain('"code":"invalid_json"');
  });

  it('a request aborted halfway through its body is dropped and the server keeps serving', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
    const { port } = new URL(running.url);
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/pets',
        headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json', 'Content-Length': '1000' },
      });
      req.on('error', () => resolve());
      req.write('{"name":"half');
      setImmediate(() => req.destroy());
    });
    const response = await fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer k' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
    expect(running.server.inspect().petCount).toBe(0);
  });

  it.each([
    ['chunked', 'Transfer-Encoding: chunked'],
    ['with a Content-Length', `Content-Length: ${40 * 65_536}`],
  ])('a body of 2.5 MiB sent %s answers 413 and the connection serves on, the next request answered (before, chunked: the connection stalled until node:http reset it)', async (_, framing) => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const chunk = 'a'.repeat(65_536);
    const chunked = framing.startsWith('Transfer');
    const body = Array.from({ length: 40 }, () => (chunked ? `10000\r\n${chunk}\r\n` : chunk)).join('') + (chunked ? '0\r\n\r\n' : '');
    const post = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n${framing}\r\n\r\n${body}`;
    const answer = await raw(running.url, `${post}GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`, false);
    expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200']);
    expect(answer).toContain('"code":"payload_too_large"');
  });

  it('a body sent with a transfer coding besides chunked (gzip, chunked; deflate, chunked; on two lines) answers 415 unsupported_media_type saying what to send, acts on nothing, and the connection serves on; chunked alone, in any case, is served (before: node:http removed the chunks and handed the rest over as plain: plain JSON created a pet, gzip got a 400 saying it was not UTF-8)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const json = '{"name":"a","categoryId":1}';
    const post = (codings: string, body: Uint8Array | string) =>
      Buffer.concat([
        Buffer.from(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n${codings}\r\n\r\n${Buffer.byteLength(body).toString(16)}\r\n`),
        Buffer.from(body),
        Buffer.from('\r\n0\r\n\r\n'),
      ]);
    const get = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n';
    for (const [codings, body] of [
      ['Transfer-Encoding: gzip, chunked', gzipSync(json)],
      ['Transfer-Encoding: gzip, chunked', json],
      ['Transfer-Encoding: deflate, chunked', deflateSync(json)],
      ['Transfer-Encoding: gzip\r\ntransfer-encoding: chunked', gzipSync(json)],
    ] as const) {
      // The client leaves its side open: the connection must neither stall on the unread body nor close before the GET.
      const answer = await raw(running.url, Buffer.concat([post(codings, body), Buffer.from(get)]), false);
      expect(answer.match(/HTTP\/1\.1 \d+/g), codings).toEqual(['HTTP/1.1 415', 'HTTP/1.1 200']);
      const [head, record] = headAndBody(answer);
      expect(head).toMatch(/^x-ratelimit-remaining: 60\r?$/im);
      const coding = codings.replace(/\r\ntransfer-encoding: /, ', ').slice('Transfer-Encoding: '.length);
      expect(JSON.parse(record.slice(0, record.lastIndexOf('}') + 1))).toEqual({
        code: 'unsupported_media_type',
        status: 415,
        message: `Transfer-Encoding "${coding}" is not supported. Send the body uncompressed, with Transfer-Encoding: chunked alone or a Content-Length.`,
      });
      expect(answer).toMatch(/\r\n\[\]$/);
    }
    expect(running.server.requests().map(({ method, path, status, code }) => `${method} ${path} ${status} ${code}`)).toEqual(
      Array.from({ length: 4 }, () => ['POST /v1/pets 415 unsupported_media_type', 'GET /v1/pets 200 undefined']).flat(),
    );
    expect(running.server.inspect()).toMatchObject({ petCount: 0, keys: { k: { requests: 4 } } });
    for (const codings of ['Transfer-Encoding: CHUNKED', 'Transfer-Encoding: , chunked']) {
      expect(await raw(running.url, post(`${codings}\r\nConnection: close`, json)), codings).toMatch(/^HTTP\/1\.1 201/);
    }
  });

  it('the 415 of a transfer coding besides chunked quotes the Transfer-Encoding by its first 40 characters, so a long list of codings cannot make the message long', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const codings = `${'gzip, '.repeat(20)}chunked`;
    const answer = await raw(running.url, `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nTransfer-Encoding: ${codings}\r\nConnection: close\r\n\r\n0\r\n\r\n`);
    const [head, body] = headAndBody(answer);
    expect(head).toMatch(/^HTTP\/1\.1 415 /);
    expect(JSON.parse(body).message).toBe('Transfer-Encoding "gzip, gzip, gzip, gzip, gzip, gzip, gzip…" is not supported. Send the body uncompressed, with Transfer-Encoding: chunked alone or a Content-Length.');
  });

  it('an HTTP/1.0 request with a Transfer-Encoding, whose framing RFC 9112 (section 6.1) calls faulty, answers 400 bad_request saying so with Connection: close, acts on nothing, a request pipelined after it included, and the server closes the connection (before: its chunked body was read and the pet created, 201)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const json = '{"name":"a","categoryId":1}';
    const chunked = `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`;
    for (const connection of ['', 'Connection: keep-alive\r\n']) {
      const text = `POST /v1/pets HTTP/1.0\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n${connection}Transfer-Encoding: chunked\r\n\r\n${chunked}`;
      // The client leaves its side open: the server closes the connection after its one answer.
      const answer = await raw(running.url, text + 'GET /v1/pets HTTP/1.0\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n', false);
      expect(answer.match(/HTTP\/1\.1 \d+/g), connection).toEqual(['HTTP/1.1 400']);
      const [head, body] = headAndBody(answer);
      expect(head).toMatch(/^connection: close\r?$/im);
      expect(JSON.parse(body)).toEqual({
        code: 'bad_request',
        status: 400,
        message: 'An HTTP/1.0 request cannot carry a Transfer-Encoding (RFC 9112, section 6.1). Send HTTP/1.1, or the body with a Content-Length.',
      });
    }
    // A target no URL can be made of gets its own 400, and the connection closes too.
    const unreadable = `POST http:///v1/pets HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}GET /v1/pets HTTP/1.0\r\nHost: x\r\n\r\n`;
    const answer = await raw(running.url, unreadable, false);
    expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 400']);
    expect(answer).toMatch(/^connection: close\r?$/im);
    expect(running.server.inspect()).toEqual({ petCount: 0, keys: {} });
    expect(journal(running.server.requests())).toEqual(['POST /v1/pets 400', 'POST /v1/pets 400', 'POST ? 400']);
  });

  it('a POST whose Content-Length announces more than 1 MiB answers 413 before its body is sent', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const { port, hostname } = new URL(running.url);
    const socket = connect(Number(port), hostname);
    onTestFinished(() => void socket.destroy());
    socket.write(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: 1048577\r\n\r\n{`);
    let answer = '';
    await new Promise<void>((resolve, reject) => {
      socket.on('data', (d) => {
        answer += d;
        if (answer.endsWith('}')) resolve();
      });
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer).toContain('"code":"payload_too_large"');
  });

  it('an absolute-form or odd request target still gets an Error record, never a crash', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const text = await raw(running.url, `GET * HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 404/);
    expect(text).toContain('"status":404');
  });

  it('an absolute-form target with https is served like its path, as one with http is', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' }, pets: 1 });
    for (const scheme of ['http', 'https']) {
      const text = await raw(running.url, `GET ${scheme}://other.test/v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
      expect(text, scheme).toMatch(/^HTTP\/1\.1 200/);
    }
  });

  it('headers are read by their own name only (Cache-Control is no Authorization, though as long), and repeated lines are joined in order', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const get = await raw(running.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nCache-Control: no-cache\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
    expect(get).toMatch(/^HTTP\/1\.1 200/);
    const preflight = await raw(
      running.url,
      `OPTIONS /v1/pets HTTP/1.1\r\nHost: x\r\nAccess-Control-Request-Headers: x-a\r\nAccess-Control-Request-Headers: x-b\r\nConnection: close\r\n\r\n`,
    );
    expect(preflight).toMatch(/\r\naccess-control-allow-headers: x-a, x-b\r\n/i);
  });

  it('a request target no URL can be made of answers a 400 Error record', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const text = await raw(running.url, `GET http://[::1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
    expect(text).toMatch(/^HTTP\/1\.1 400/);
    expect(text).toMatch(/x-ratelimit-remaining: 60/i);
    expect(text).toContain('"code":"bad_request"');
    expect(text).toContain('"status":400');
  });

  it('a request node:http cannot parse gets an Error record with rate-limit headers, not a bare 400', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const text = await raw(running.url, `patch /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n`);
    const [head, body] = headAndBody(text);
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(head).toMatch(/x-ratelimit-remaining: 60/i);
    expect(head).toMatch(/access-control-allow-origin: \*/i);
    expect(JSON.parse(body)).toMatchObject({ code: 'bad_request', status: 400 });
  });

  it.each([
    ['headers over node:http\'s limit', `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large', 'The request headers are too large. Send fewer or shorter headers.'],
    ['a header line that is no header', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nNo Header: y\r\n\r\n', 400, 'bad_request', 'The request is not valid HTTP/1.1 (check the method, the request line and the headers).'],
    ['CONNECT', 'CONNECT petstore.test:443 HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'bad_request', 'CONNECT is not supported: this server is not a proxy. Send the API\'s methods (GET, POST, HEAD, OPTIONS).'],
  ])('%s gets an answer written to the socket that says what is wrong and Connection: close, and the server closes the connection the client left open', async (_, text, status, code, message) => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const [head, body] = headAndBody(await raw(running.url, text, false));
    expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(head).toMatch(/^connection: close\r?$/im);
    expect(JSON.parse(body)).toEqual({ code, message, status });
  });

  it('a method node:http cannot parse (unknown, or not in upper case) gets a 400 that says the method is the problem, with the rate-limit headers', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    for (const method of ['FOO', 'patch', 'Post']) {
      const [head, body] = headAndBody(await raw(running.url, `${method} /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n`));
      expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request/);
      expect(head).toMatch(/^x-ratelimit-limit: 60\r?$/im);
      expect(JSON.parse(body)).toMatchObject({ code: 'bad_request', status: 400, message: expect.stringContaining('method') });
      expect(JSON.parse(body).message).toContain('GET, POST, HEAD and OPTIONS');
    }
  });

  it('CONNECT, which node:http never hands to the request handler, gets an Error record instead of a closed connection', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    for (const target of ['petstore.test:443', '/v1/pets']) {
      const text = await raw(running.url, `CONNECT ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n`);
      const [head, body] = headAndBody(text);
      expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request/);
      expect(head).toMatch(/x-ratelimit-remaining: 60/i);
      expect(JSON.parse(body)).toMatchObject({ code: 'bad_request', status: 400 });
    }
  });

  it('a request asking to upgrade the connection (Upgrade with Connection: upgrade: h2c, as curl --http2 asks, or websocket) is served as a plain request, its body read, and what was pipelined after it in the same packet is served in order (before: node:http dropped it, unanswered and unjournalled)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const json = '{"name":"a","categoryId":1}';
    const get = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n';
    const h2c = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\nContent-Length: ${json.length}\r\n\r\n${json}`;
    const websocket = `${get}Connection: upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    const answer = await raw(running.url, `${get}\r\n${h2c}${websocket}${get}Connection: close\r\n\r\n`, false);
    expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 201', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(answer.match(/\r\n\r\n[^H]*/g)!.map((body) => body.slice(4))).toEqual(['[]', `{"id":1,${json.slice(1)}`, '[{"id":1,"name":"a","categoryId":1}]', '[{"id":1,"name":"a","categoryId":1}]']);
    expect(running.server.requests().map(({ method, status }) => `${method} ${status}`)).toEqual(['GET 200', 'POST 201', 'GET 200', 'GET 200']);
    await running.close();
    // Behind an answer still held (a latency fault), it waits for that answer to leave.
    await withHeldAnswers(async (held) => {
      const answered = raw(held.url, `${get}\r\n${websocket}${get}Connection: close\r\n\r\n`, false);
      let answer: string | undefined;
      void answered.then((text) => (answer = text));
      while (answer === undefined) await vi.advanceTimersByTimeAsync(1_000);
      expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
      expect(held.server.requests().map(({ method, status }) => `${method} ${status}`)).toEqual(['GET 200', 'GET 200', 'GET 200']);
    });
  });

  it('headers larger than node:http accepts answer 431 with an Error record', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const text = await raw(running.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const [head, body] = headAndBody(text);
    expect(head).toMatch(/^HTTP\/1\.1 431/);
    expect(JSON.parse(body)).toMatchObject({ code: 'headers_too_large', status: 431 });
  });

  it('a request line past node:http\'s header limit answers 414 uri_too_long, as a shorter one over 8,000 characters does, and large headers still 431', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const text = await raw(running.url, `GET /v1/pets?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n`);
    const [head, body] = headAndBody(text);
    expect(head).toMatch(/^HTTP\/1\.1 414/);
    expect(head).toMatch(/^x-ratelimit-remaining: 60\r?$/im);
    expect(JSON.parse(body)).toMatchObject({ code: 'uri_too_long', status: 414 });
    const headers = await raw(running.url, `GET /v1/pets?x=${'a'.repeat(7_000)} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(headers).toMatch(/^HTTP\/1\.1 431/);
    // A target past the limit alone is too long, though its URL drops most of it (a fragment).
    expect(await raw(running.url, `GET /v1/pets#${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)).toMatch(/^HTTP\/1\.1 414/);
  });

  it('a request line that says HTTP/2.0 gets the 414 when its target passes node:http\'s header limit, the line being too long to read up to its version (as nginx answers), and the version\'s 400 when its target is over 8,000 characters but within the limit, the version being read before the target is served', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const answer = async (length: number) => headAndBody(await raw(running!.url, `GET /v1/pets?x=${'a'.repeat(length)} HTTP/2.0\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n`));
    expect(JSON.parse((await answer(20_000))[1])).toMatchObject({ code: 'uri_too_long', status: 414 });
    expect(JSON.parse((await answer(9_000))[1])).toEqual({ code: 'bad_request', status: 400, message: 'The request\'s HTTP version is not one this server speaks. Send HTTP/1.1 (HTTP/2 and HTTP/3 are not served).' });
  });

  it('an absolute-form target whose authority, or a target whose fragment, makes it pass node:http\'s header limit answers 414 uri_too_long saying which is too long, not the path and query, journalled with its method and ? (before: the message blamed the path and query, however short)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const answer = async (target: string) => {
      const [head, body] = headAndBody(await raw(running!.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`));
      expect(head, target.slice(0, 40)).toMatch(/^HTTP\/1\.1 414 /);
      return JSON.parse(body);
    };
    const tooLong = (message: string) => ({ code: 'uri_too_long', status: 414, message });
    const authority = tooLong('The request target\'s authority (the scheme and host before its path) is too long. Send the path alone, such as /v1/pets, with the host in a Host header.');
    expect(await answer(`http://${'a'.repeat(20_000)}.test/v1/pets`)).toEqual(authority);
    expect(await answer(`http://${'a'.repeat(12_000)}.test/v1/pets?x=${'a'.repeat(5_000)}`)).toEqual(authority);
    // A fragment is no part of what a client sends (RFC 9112, section 3.2).
    const fragment = tooLong('The request target\'s fragment (from #) is too long, and a client sends none (RFC 9112, section 3.2). Send the path and query alone, such as /v1/pets?limit=10.');
    expect(await answer(`/v1/pets#${'a'.repeat(20_000)}`)).toEqual(fragment);
    expect(await answer(`/v1/pets?x=${'a'.repeat(7_000)}#${'a'.repeat(20_000)}`)).toEqual(fragment);
    expect(await answer(`http://${'a'.repeat(500)}.test/v1/pets#${'a'.repeat(20_000)}`)).toEqual(fragment);
    // The path and query past 8,000 characters are what is too long, in absolute form too, whatever follows them.
    const pathAndQuery = /^The request target \(path and query\) is longer than 8000 characters/;
    expect((await answer(`http://${'a'.repeat(500)}.test/v1/pets?x=${'a'.repeat(20_000)}`)).message).toMatch(pathAndQuery);
    expect((await answer(`/v1/pets?x=${'a'.repeat(9_000)}#${'a'.repeat(20_000)}`)).message).toMatch(pathAndQuery);
    // The URL of an authority or a fragment cut short has no path to show.
    expect(running.server.requests().map(({ method, path }) => `${method} ${path.slice(0, 20)}`)).toEqual([
      ...['GET ?', 'GET ?', 'GET ?', 'GET ?', 'GET ?'],
      ...['GET /v1/pets?x=aaaaaaaaa', 'GET /v1/pets?x=aaaaaaaaa'],
    ]);
  });

  it('over node:http a request target of 8,000 characters is served and one of 8,001 answers 414, whether or not the headers pass node:http\'s limit (then 431 for the first), measured as the URL measures it; in absolute form only the path and query count, however long the authority before them (before: http://host:port was counted, and 8,000 with big headers got a 414 blaming the path; an absolute target with no path, whose path is /, or a quote the URL percent-encodes, counted short and got 431)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const big = `X-Big: ${'a'.repeat(20_000)}\r\n`;
    const { origin } = new URL(running.url);
    // Where each target starts, and what its 8,000 characters are answered when served.
    for (const [start, served] of [
      ['/v1/pets?x=', ['200', undefined]],
      [`${origin}/v1/pets?x=`, ['200', undefined]],
      [`http://${'a'.repeat(500)}.test/v1/pets?x=`, ['200', undefined]],
      [`${origin}?x=`, ['404', 'not_found']],
      ['/v1/pets?x="', ['200', undefined]],
    ] as const) {
      const { pathname, search } = new URL(start, origin);
      const target = (length: number) => start + 'a'.repeat(length - pathname.length - search.length);
      const answer = async (length: number, headers: string) => {
        const [head, body] = headAndBody(await raw(running!.url, `GET ${target(length)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n${headers}Connection: close\r\n\r\n`));
        return [/^HTTP\/1\.1 (\d+)/.exec(head)?.[1], JSON.parse(body).code];
      };
      expect(await answer(8_000, ''), start).toEqual(served);
      expect(await answer(8_001, ''), start).toEqual(['414', 'uri_too_long']);
      expect(await answer(8_000, big), start).toEqual(['431', 'headers_too_large']);
      expect(await answer(8_001, big), start).toEqual(['414', 'uri_too_long']);
    }
  });

  it('a request pipelined behind another in the same packet is measured by its own request line for the 414-vs-431 choice (before: by the first request\'s, so a long target got 431 behind a short one, and big headers 414 behind a long one)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const get = (target: string, big = '') => `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n${big}\r\n`;
    const long = `/v1/pets?x=${'a'.repeat(8_001)}`;
    const big = `X-Big: ${'a'.repeat(20_000)}\r\n`;
    const statuses = async (text: string) => (await raw(running!.url, text)).match(/HTTP\/1\.1 \d+/g);
    expect(await statuses(get('/v1/pets') + get(`/v1/pets?x=${'a'.repeat(20_000)}`))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 414']);
    expect(await statuses(get(long) + get('/v1/pets', big))).toEqual(['HTTP/1.1 414', 'HTTP/1.1 431']);
    expect(await statuses(get('/v1/pets') + get(long, big))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 414']);
  });

  it('an Expect other than 100-continue is answered as in-process, not with node:http\'s bare 417', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' }, pets: 2 });
    const text = await raw(running.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nExpect: something\r\nConnection: close\r\n\r\n`);
    const [head, body] = headAndBody(text);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toMatch(/^x-ratelimit-remaining: 59\r?$/im);
    expect(JSON.parse(body)).toHaveLength(2);
  });

  describe('Expect: 100-continue', () => {
    /**
     * A connection that reads the server's answers one by one (a 1xx is a head alone, a final one
     * its head and the body its Content-Length announces), as a client waiting for 100 Continue does.
     */
    function answers(url: string) {
      const { port, hostname } = new URL(url);
      const socket = connect(Number(port), hostname);
      onTestFinished(() => void socket.destroy());
      /** How the server ended the connection: its FIN, a reset (the error's code). */
      const seen: string[] = [];
      socket.on('end', () => seen.push('FIN'));
      socket.on('error', (error: NodeJS.ErrnoException) => seen.push(error.code!));
      let buffered = '';
      let wake = () => {};
      socket.on('data', (d) => {
        buffered += d;
        wake();
      });
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      /** The next whole answer. */
      const next = async (): Promise<string> => {
        for (;;) {
          const end = buffered.indexOf('\r\n\r\n');
          if (end >= 0) {
            const head = buffered.slice(0, end + 4);
            const length = /^HTTP\/1\.1 1\d\d /.test(head) ? 0 : Number(/^content-length: (\d+)\r$/im.exec(head)?.[1] ?? 0);
            if (buffered.length >= head.length + length) {
              const answer = buffered.slice(0, head.length + length);
              buffered = buffered.slice(answer.length);
              return answer;
            }
          }
          await new Promise<void>((resolve) => (wake = resolve));
        }
      };
      return { socket, next, closed, seen };
    }

    const json = '{"name":"a","categoryId":1}';
    const post = (fields: string, length = json.length, key = 'k') =>
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n${fields}Content-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`;

    it.each([
      ['a body over 1 MiB by its Content-Length', post('Content-Type: application/json\r\n', 1_048_577), 413, 'payload_too_large'],
      ['a key that is not valid', post('Content-Type: application/json\r\n', json.length, 'wrong'), 401, 'invalid_api_key'],
      ['a spent rate limit', post('Content-Type: application/json\r\n', json.length, 'one'), 429, 'rate_limited'],
      ['a path not in the API', post('Content-Type: application/json\r\n').replace('/v1/pets', '/v1/cats'), 404, 'not_found'],
      ['a method the path does not take', post('Content-Type: application/json\r\n').replace('/v1/pets', '/v1/store/orders'), 405, 'method_not_allowed'],
      ['a Content-Type that is not JSON', post('Content-Type: text/plain\r\n'), 415, 'unsupported_media_type'],
    ])('a request with Expect: 100-continue refused for %s gets its final answer at once, without 100 Continue, and the connection closes, so what the client sends next, its body or another request, is never misread (before: 100 Continue came first, and the client sent a body only to have it refused)', async (_, text, status, code) => {
      running = await startReferenceServer({ apiKeys: { k: 'free', one: { perMinute: 1, perDay: 10 } } });
      expect((await fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer one' } })).status).toBe(200);
      const { socket, next, closed } = answers(running.url);
      socket.write(text);
      const answer = await next();
      const [head, body] = headAndBody(answer);
      expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(head).toMatch(/^connection: close\r?$/im);
      expect(JSON.parse(body)).toMatchObject({ code, status });
      // A client that sends its next request instead of the body: it is neither read as the body nor answered.
      socket.write('GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n');
      await closed;
      expect(running.server.requests().map(({ method, path, status, code }) => `${method} ${path} ${status} ${code}`)).toEqual([
        'GET /v1/pets 200 undefined',
        `POST ${/^POST (\S+)/.exec(text)![1]} ${status} ${code}`,
      ]);
      expect(running.server.inspect().petCount).toBe(0);
    });

    it('a request with Expect: 100-continue refused from its headers whose client sends its body at once anyway gets its whole answer, then the server\'s FIN, never a reset: what the client still sends is read and dropped until it closes (before: node:http closed the connection with the body unread, and the kernel reset it, which may lose the answer)', async () => {
      running = await startReferenceServer({ apiKeys: { k: 'free' } });
      const { socket, next, closed, seen } = answers(running.url);
      // 32 MiB, far past both sides' socket buffers: most of it is still to come when the server closes.
      const megabyte = Buffer.alloc(1_048_576, 'a');
      socket.write(post('Content-Type: application/json\r\n', 32 * megabyte.length));
      let sent = 0;
      const pump = () => {
        while (sent < 32 && socket.writable) {
          sent++;
          if (!socket.write(megabyte)) return void socket.once('drain', pump);
        }
      };
      pump();
      const [head, body] = headAndBody(await next());
      expect(head).toMatch(/^HTTP\/1\.1 413 /);
      expect(JSON.parse(body)).toMatchObject({ code: 'payload_too_large', status: 413 });
      // The client ends its side on the server's FIN, once what it has written has gone out.
      await closed;
      expect(seen).toEqual(['FIN']);
    });

    /**
     * On faked timeouts, a server and a client's connection to it, with the server's side of it.
     * `allowHalfOpen`: the client keeps its side open after the server's FIN, as the test says.
     */
    async function lingering(allowHalfOpen: boolean) {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      onTestFinished(() => void vi.useRealTimers());
      const serverSide = lastAccepted();
      running = await startReferenceServer({ apiKeys: { k: 'free' } });
      const { port, hostname } = new URL(running.url);
      const socket = connect({ port: Number(port), host: hostname, allowHalfOpen });
      onTestFinished(() => void socket.destroy());
      return { socket, serverSide };
    }

    it('a connection closing after a refusal is still read for 5 s after the server\'s FIN when its client never closes its side, then closed', async () => {
      const { socket, serverSide } = await lingering(true);
      const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
      socket.resume().write(post('Content-Type: text/plain\r\n'));
      await ended;
      const closed = new Promise<void>((resolve) => serverSide()!.once('close', () => resolve()));
      await vi.advanceTimersByTimeAsync(4_999);
      expect(serverSide()!.destroyed).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await closed;
    });

    it('a connection closing after a refusal whose client then closes its side is closed at once, and leaves no timer behind to keep the process alive for the rest of the 5 s', async () => {
      const { socket, serverSide } = await lingering(false);
      socket.resume().write(post('Content-Type: text/plain\r\n'));
      // The client ends its side on the server's FIN (allowHalfOpen off).
      await new Promise<void>((resolve) => socket.once('close', () => resolve()));
      await expect.poll(() => serverSide()!.closed, { message: 'the server closes its side' }).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('a POST with Expect: 100-continue that the server reads gets 100 Continue, then after its body 201, and the connection serves on', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const { socket, next } = answers(running.url);
      socket.write(post('Content-Type: application/json\r\n'));
      expect(await next()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      socket.write(json);
      const created = await next();
      expect(created).toMatch(/^HTTP\/1\.1 201 /);
      expect(created).not.toMatch(/^connection: close\r?$/im);
      socket.write('GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n');
      const listed = await next();
      expect(listed).toMatch(/^HTTP\/1\.1 200 /);
      expect(JSON.parse(headAndBody(listed)[1])).toEqual([{ id: 1, name: 'a', categoryId: 1 }]);
      expect(journal(running.server.requests())).toEqual(['POST /v1/pets 201', 'GET /v1/pets 200']);
      expect(log.map(({ method, status }) => `${method} ${status}`)).toEqual(['POST 201', 'GET 200']);
    });

    it('a chunked POST with Expect: 100-continue, which has no Content-Length, gets 100 Continue as the server reads its body, then 201 (before the 100, no chunk is sent)', async () => {
      running = await startReferenceServer({ apiKeys: { k: 'free' } });
      const { socket, next } = answers(running.url);
      socket.write(post('Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n').replace(/Content-Length: \d+\r\n/, ''));
      expect(await next()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
      socket.write(`${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`);
      expect(await next()).toMatch(/^HTTP\/1\.1 201 /);
      expect(running.server.inspect().petCount).toBe(1);
    });

    it('a request pipelined after one with Expect: 100-continue answered without reading its body is neither acted on, answered nor journalled, as the connection closes, unless that body had all arrived by the answer: then a late 100 Continue goes before the refusal and the connection serves on (without it node:http closed the connection: a pet created, its 201 journalled and never sent)', async () => {
      const pipelined = post('Content-Type: application/json\r\n').replace('Expect: 100-continue\r\n', '') + json;
      const refused = [post('Content-Type: text/plain\r\n'), post('Content-Type: application/json\r\n', json.length, 'wrong')];
      await withHeldAnswers(async (held, log) => {
        // Held on a latency, the 415 is decided once node:http has parsed the whole packet.
        // The POST after it closes the connection once answered: the answers are all there then.
        const answer = raw(held.url, refused[0] + json + pipelined.replace('Content-Length', 'Connection: close\r\nContent-Length'), false);
        await expect.poll(() => vi.getTimerCount(), { message: 'the server holds both answers' }).toBe(2);
        await vi.advanceTimersByTimeAsync(1_000);
        expect((await answer).match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 100', 'HTTP/1.1 415', 'HTTP/1.1 201']);
        await expect.poll(() => log.length).toBe(2);
        expect(held.server.inspect().petCount).toBe(1);
      });
      await running!.close();
      running = await startReferenceServer({ apiKeys: { k: 'free' } });
      // Answered at once, before node:http parses the body and what follows it.
      for (const text of refused) {
        expect((await raw(running.url, text + json + pipelined, false)).match(/HTTP\/1\.1 \d+/g)).toEqual([`HTTP/1.1 ${text.includes('wrong') ? 401 : 415}`]);
      }
      expect(running.server.requests().map(({ method, status }) => `${method} ${status}`)).toEqual(['POST 415', 'POST 401']);
      expect(running.server.inspect().petCount).toBe(0);
    });

    it('a request with Expect: 100-continue whose framing says it has no body (a GET, a POST with Content-Length: 0) is served as any other, without 100 Continue, and the connection serves on (before: it closed after the answer, though no body could follow)', async () => {
      running = await startReferenceServer({ apiKeys: { k: 'free' } });
      const { socket, next } = answers(running.url);
      const get = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n';
      socket.write(`${get}Expect: 100-continue\r\n\r\n`);
      const listed = await next();
      expect(listed).toMatch(/^HTTP\/1\.1 200 /);
      expect(listed).not.toMatch(/^connection: close\r?$/im);
      socket.write(post('Content-Type: application/json\r\n', 0));
      const refused = await next();
      expect(refused).toMatch(/^HTTP\/1\.1 400 /);
      expect(refused).toContain('"code":"invalid_json"');
      expect(refused).not.toMatch(/^connection: close\r?$/im);
      socket.write(`${get}\r\n`);
      expect(await next()).toMatch(/^HTTP\/1\.1 200 /);
      expect(running.server.requests().map(({ method, status }) => `${method} ${status}`)).toEqual(['GET 200', 'POST 400', 'GET 200']);
    });

    it('an HTTP/1.0 request with Expect: 100-continue gets no 100 Continue, which RFC 9110 (section 10.1.1) forbids sending it, and its body is read', async () => {
      running = await startReferenceServer({ apiKeys: { k: 'free' } });
      const answer = await raw(running.url, post('Content-Type: application/json\r\n').replace('HTTP/1.1', 'HTTP/1.0') + json, false);
      expect(answer).toMatch(/^HTTP\/1\.1 201 /);
      expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 201']);
    });

    it('a connection closing after a refusal from the headers is read to its end though a request with a large body was pipelined after the refused one: that request is not answered, and its body is read and dropped too (before: left unread, it stopped the reading, and the client was reset when the 5 s ran out)', async () => {
      running = await startReferenceServer({ apiKeys: { k: 'free' } });
      const { socket, next, closed, seen } = answers(running.url);
      // 4 MiB, past both sides' socket buffers: most of it is still to come when the server closes.
      const size = 4 * 1_048_576;
      socket.write(`${post('Content-Type: application/json\r\n', json.length, 'wrong')}${json}`);
      socket.write(post('Content-Type: application/json\r\n', size).replace('Expect: 100-continue\r\n', ''));
      socket.write(Buffer.alloc(size, 'a'));
      expect(headAndBody(await next())[0]).toMatch(/^HTTP\/1\.1 401 /);
      await closed;
      expect(seen).toEqual(['FIN']);
      expect(running.server.requests().map(({ method, status }) => `${method} ${status}`)).toEqual(['POST 401']);
    });
  });

  it('an HTTP/1.1 request without Host gets a 400 Error record with rate-limit headers, not node:http\'s bare 400', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const text = await raw(running.url, `GET /v1/pets HTTP/1.1\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
    const [head, body] = headAndBody(text);
    expect(head).toMatch(/^HTTP\/1\.1 400/);
    expect(head).toMatch(/^x-ratelimit-limit: 60\r?$/im);
    expect(head).toMatch(/^x-request-id: [0-9a-f]{16}\r?$/im);
    expect(JSON.parse(body)).toMatchObject({ code: 'bad_request', status: 400, message: expect.stringContaining('Host') });
    // HTTP/1.0 has no Host to require: it is served on the server's own origin.
    expect(await raw(running.url, `GET /v1/pets HTTP/1.0\r\nAuthorization: Bearer k\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200/);
    expect(running.server.inspect().keys.k).toMatchObject({ requests: 1 });
  });

  it('an HTTP/0.9 request, which node:http parses, needs no Host, as one in HTTP/1.0 (before: a 400 saying an HTTP/1.1 request must carry one)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    expect(await raw(running.url, `GET /v1/pets HTTP/0.9\r\nAuthorization: Bearer k\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200/);
    // A simple request (a request line alone) sends no key.
    expect(await raw(running.url, `GET /v1/pets\r\n\r\n`)).toMatch(/^HTTP\/1\.1 401/);
  });

  it('a request with more than one Host line gets a 400 Error record with rate-limit headers, as RFC 9112 asks (before: served on the first)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    // The count is what is refused, whether or not the last line names a host.
    for (const [version, second] of [['1.1', 'b.test'], ['1.0', 'b.test'], ['1.1', 'b test']]) {
      const text = await raw(running.url, `GET /v1/pets HTTP/${version}\r\nHost: a.test\r\nhost: ${second}\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
      const [head, body] = headAndBody(text);
      expect(head).toMatch(/^HTTP\/1\.1 400/);
      expect(head).toMatch(/^x-ratelimit-remaining: 60\r?$/im);
      expect(head).toMatch(/^x-request-id: [0-9a-f]{16}\r?$/im);
      expect(JSON.parse(body)).toMatchObject({ code: 'bad_request', status: 400, message: expect.stringContaining('2 Host header lines') });
    }
    expect(running.server.inspect().keys).toEqual({});
  });

  it('a Host that is no host and port (anything before or after one too, though a URL could be built on it; a % that is no percent-encoded octet, or one of what no name may hold) gets a 400 Error record naming the Host by its first 100 characters, journalled with its method and path (before: a 400 blaming the request target and journalled "? ?", or served on the server\'s origin)', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
    // Anything before or after a host and port too, though a URL could be built on it (a@b, b/x, a@[::1], [::1]/x,
    // a b:1x); a long one is quoted by its first 100 characters.
    const hosts = ['localhost:99999', '1.2.3.4.5', '[zz]', 'a b', 'a.test, b.test', 'a@b', 'b/x', 'b:1/x', 'a@[::1]', '[::1]/x', '[::1]:1/x', 'a b:1x', `a b${'x'.repeat(200)}`, 'a%', 'a%G1', 'a%4:80', 'a%20b', 'a%2Fb', 'a%FF'];
    for (const host of hosts) {
      const text = await raw(running.url, `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
      const [head, body] = headAndBody(text);
      expect(head, host).toMatch(/^HTTP\/1\.1 400/);
      expect(head).toMatch(/^x-ratelimit-remaining: 60\r?$/im);
      expect(JSON.parse(body)).toMatchObject({ code: 'bad_request', status: 400, message: expect.stringContaining(`Host header "${host.length > 100 ? `${host.slice(0, 100)}…` : host}" is not a host and port`) });
    }
    await expect.poll(() => log.length).toBe(hosts.length);
    expect(journal(running.server.requests())).toEqual(hosts.map(() => 'GET /v1/pets?limit=1 400'));
    expect(running.server.inspect().keys).toEqual({});
    // What a host may be: a name in any case, with any character RFC 3986 lets a name hold (unreserved and
    // sub-delims, and percent-encoded octets of UTF-8), an IPv6 literal, with a port or not; an empty Host
    // is served on the server's origin.
    for (const host of ['EXAMPLE.TEST', 'a~b', "x!$&'()*+,;=y:80", 'a%41b:80', 'caf%C3%a9', '[::1]:8080', 'localhost:4010', '']) {
      expect(await raw(running.url, `GET /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200/);
    }
  });

  it('a Host with an empty port (example.test:, [::1]:), which RFC 9112 (section 3.2) allows (RFC 3986\'s port is *DIGIT), is served, and Location names its host (before: a 400 saying it was no host and port)', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const json = '{"name":"a","categoryId":1}';
    for (const [host, origin] of [['example.test:', 'http://example.test'], ['[::1]:', 'http://[::1]']] as const) {
      const [head] = headAndBody(await raw(running.url, `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nConnection: close\r\n\r\n${json}`));
      expect(head, host).toMatch(/^HTTP\/1\.1 201/);
      expect(head).toMatch(new RegExp(`^location: ${origin.replace(/[[\]]/g, '\\$&')}/v1/pets/\\d+\r?$`, 'im'));
    }
  });

  it('repeated Authorization headers are read joined, as Headers#get reads them, so the key is refused', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const text = await raw(
      running.url,
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nauthorization: Bearer k\r\nConnection: close\r\n\r\n`,
    );
    expect(text).toMatch(/^HTTP\/1\.1 401/);
    expect(text).toContain('"code":"invalid_api_key"');
  });

  it('a truncated body from injected faults announces its full length and is cut halfway', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' }, pets: 5, faults: { rate: 1, kinds: ['truncate'] } });
    const text = await raw(running.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
    const [head, body] = headAndBody(text);
    const announced = Number(/content-length: (\d+)/i.exec(head)?.[1]);
    expect(announced).toBeGreaterThan(0);
    expect(body.length).toBe(Math.floor(announced / 2));
    await expect((await fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer k' } })).text()).rejects.toThrow();
  });

  /** A raw `POST <target>` creating a pet with the key `k` and `Host: x`. */
  const rawPost = (target: string) => {
    const body = '{"name":"a","categoryId":1}';
    return raw(
      running!.url,
      `POST ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  it('a request target that starts with // is a path on the Host header\'s origin, never another host: //evil.example/v1/pets is a 404', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    for (const target of ['//evil.example/v1/pets', '//x/v1/pets']) {
      const [head, body] = headAndBody(await rawPost(target));
      expect(head).toMatch(/^HTTP\/1\.1 404/);
      expect(head).not.toMatch(/^location:/im);
      expect(JSON.parse(body)).toMatchObject({ code: 'not_found', status: 404, message: expect.stringContaining(`${target} is not part of the API`) });
    }
    expect(running.server.inspect().petCount).toBe(0);
  });

  it('an absolute-form request target is the target URI, as RFC 9112 says, and only an http(s) one is taken', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    // The origin server uses the target's authority, not Host (RFC 9112, section 3.2.2).
    expect(await rawPost('http://other.test/v1/pets')).toMatch(/^location: http:\/\/other\.test\/v1\/pets\/1\r$/im);
    const [head, body] = headAndBody(await rawPost('ftp://other.test/v1/pets'));
    expect(head).toMatch(/^HTTP\/1\.1 400/);
    expect(head).not.toMatch(/^location:/im);
    expect(JSON.parse(body)).toMatchObject({ code: 'bad_request', status: 400, message: expect.stringContaining('http(s) URL') });
    expect(running.server.inspect().petCount).toBe(1);
  });

  it('Location names the host the client used', async () => {
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const { port } = new URL(running.url);
    const response = await fetch(`http://localhost:${port}/v1/pets`, {
      method: 'POST',
      headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' },
      body: '{"name":"a","categoryId":1}',
    });
    expect(response.headers.get('Location')).toBe(`http://localhost:${port}/v1/pets/1`);
    // An IPv6 literal, with its port or without one.
    for (const host of [`[::1]:${port}`, '[::1]']) {
      const [head] = headAndBody(await raw(running.url, `POST /v1/pets HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: 27\r\nConnection: close\r\n\r\n{"name":"a","categoryId":1}`));
      expect(head, host).toMatch(new RegExp(`^location: http://${host.replace(/[[\]]/g, '\\$&')}/v1/pets/\\d+\r?$`, 'im'));
    }
  });

  it('logs each request with method, path and status, and never the API key', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { 'secret-key-123': 'free' }, onRequest: (e) => log.push(e) });
    const ok = await fetch(`${running.url}/pets?limit=2`, { headers: { Authorization: 'Bearer secret-key-123' } });
    const refused = await fetch(`${running.url}/pets`);
    await expect.poll(() => log.length).toBe(2);
    expect(log.map(({ method, path, status, code, requestId }) => ({ method, path, status, code, requestId }))).toEqual([
      { method: 'GET', path: '/v1/pets?limit=2', status: 200, code: undefined, requestId: ok.headers.get('X-Request-Id') },
      { method: 'GET', path: '/v1/pets', status: 401, code: 'missing_api_key', requestId: refused.headers.get('X-Request-Id') },
    ]);
    expect(new Date(log[0]!.time).getTime()).not.toBeNaN();
    expect(JSON.stringify(log)).not.toContain('secret-key-123');
  });

  it('a log entry names the key by its label when one was checked and has no key at all without one, is truncated only when cut, and its durationMs is within the time the request took', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { 'secret-key-123': 'free' }, onRequest: (e) => log.push(e) });
    const started = performance.now();
    const ok = await fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer secret-key-123' } });
    const refused = await fetch(`${running.url}/pets`);
    await expect.poll(() => log.length).toBe(2);
    const elapsed = performance.now() - started;
    const entry = { time: expect.any(String), method: 'GET', path: '/v1/pets', durationMs: expect.any(Number) };
    expect(log).toStrictEqual([
      { ...entry, status: 200, requestId: ok.headers.get('X-Request-Id'), key: 'secr…' },
      { ...entry, status: 401, code: 'missing_api_key', requestId: refused.headers.get('X-Request-Id') },
    ]);
    for (const { durationMs } of log) {
      expect(durationMs).toBeGreaterThanOrEqual(0);
      expect(durationMs).toBeLessThanOrEqual(elapsed);
    }
  });

  it('a connection dropped by an injected fault is logged with status 0, never as truncated, and with the key\'s label only when the request was acted on before the drop', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { 'secret-key-123': 'business' }, faults: { rate: 1, kinds: ['drop'], seed: 1 }, onRequest: (e) => log.push(e) });
    for (let i = 0; i < 6; i++) await expect(fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer secret-key-123' } })).rejects.toThrow(TypeError);
    await expect.poll(() => log.length).toBe(6);
    const actedOn = running.server.inspect().keys['secret-key-123']?.requests ?? 0;
    expect(actedOn, 'seed 1 drops some requests before acting and some after').toBeGreaterThan(0);
    expect(actedOn).toBeLessThan(6);
    const keys = log.map((e) => ('key' in e ? e.key : 'no key'));
    expect(keys.sort()).toEqual([...Array<string>(6 - actedOn).fill('no key'), ...Array<string>(actedOn).fill('secr…')]);
    for (const { key: _, ...rest } of log) {
      expect(rest).toStrictEqual({ time: expect.any(String), method: 'GET', path: '/v1/pets', status: 0, requestId: expect.any(String), durationMs: expect.any(Number) });
    }
  });

  it('the request log shows [redacted] where a path or query held the key (before: the path as sent, key included)', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { 'secret-key-123': 'free' }, onRequest: (e) => log.push(e) });
    const { origin } = new URL(running.url);
    await fetch(`${origin}/secret-key-123/v1/pets?token=secret-key-123`, { headers: { Authorization: 'Bearer secret-key-123' } });
    await fetch(`${running.url}/pets?token=sk-not-configured`, { headers: { Authorization: 'Bearer sk-not-configured' } });
    await expect.poll(() => log.length).toBe(2);
    expect(log.map(({ path, status }) => ({ path, status }))).toEqual([
      { path: '/[redacted]/v1/pets?token=[redacted]', status: 200 },
      { path: '/v1/pets?token=[redacted]', status: 401 },
    ]);
  });

  it('an onRequest that throws is reported and the server keeps answering, requests node:http could not parse included', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    try {
      running = await startReferenceServer({
        apiKeys: { k: 'free' },
        onRequest: () => {
          throw new Error('onRequest bug');
        },
      });
      const post = () =>
        fetch(`${running!.url}/pets`, { method: 'POST', headers: { Authorization: 'Bearer k', 'Content-Type': 'application/json' }, body: '{"name":"a","categoryId":1}' });
      expect((await fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer k' } })).status).toBe(200);
      expect((await post()).status).toBe(201);
      expect(await raw(running.url, `patch /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400/);
      expect((await post()).status).toBe(201);
      await expect.poll(() => reported.length).toBe(4);
      expect(reported).toEqual(Array(4).fill(new Error('onRequest bug')));
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('a dropped connection from injected faults reaches the client as a network error', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { k: 'free' }, faults: { rate: 1, kinds: ['drop'] }, onRequest: (e) => log.push(e) });
    await expect(fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer k' } })).rejects.toThrow(TypeError);
    await expect.poll(() => log.length).toBe(1);
    expect(log[0]).toMatchObject({ status: 0 });
    expect(log[0]!.truncated).toBeUndefined();
  });

  it.each([
    ['closes', (socket: Socket) => socket.destroy()],
    ['resets', (socket: Socket) => socket.resetAndDestroy()],
  ])('a client that %s its connection while an injected latency holds the answer has nothing acted on, as in-process (before: the pet was created and the request counted)', async (_, leave) => {
    await withHeldAnswers(async (held, log) => {
      const body = '{"name":"a","categoryId":1}';
      const socket = connect(Number(new URL(held.url).port), '127.0.0.1', () =>
        socket.write(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`),
      );
      socket.on('error', () => {});
      await expect.poll(() => vi.getTimerCount(), { message: 'the server holds the answer on the latency' }).toBe(1);
      leave(socket);
      await expect.poll(() => held.server.requests(), { message: 'the server stops holding an answer nobody waits for' }).toEqual([
        expect.objectContaining({ method: 'POST', path: '/v1/pets', status: 0, code: undefined, fault: 'latency', key: null }),
      ]);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(held.server.inspect()).toEqual({ petCount: 0, keys: {} });
      expect(log).toEqual([expect.objectContaining({ method: 'POST', status: 0 })]);
    });
  });

  it('a truncated answer is logged with its status and as truncated, not as a drop', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { k: 'free' }, pets: 5, faults: { rate: 1, kinds: ['truncate'] }, onRequest: (e) => log.push(e) });
    await raw(running.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
    await expect.poll(() => log.length).toBe(1);
    expect(log[0]).toMatchObject({ status: 200, truncated: true, requestId: expect.stringMatching(/^[0-9a-f]{16}$/) });
  });

  it('a HEAD that draws a truncate fault has no body to cut: it goes out whole and is not logged as truncated', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { k: 'free' }, pets: 5, faults: { rate: 1, kinds: ['truncate'] }, onRequest: (e) => log.push(e) });
    const response = await fetch(`${running.url}/pets`, { method: 'HEAD', headers: { Authorization: 'Bearer k' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    await expect.poll(() => log.length).toBe(1);
    expect(log[0]).toMatchObject({ method: 'HEAD', status: 200 });
    expect(log[0]!.truncated).toBeUndefined();
  });

  it('X-Request-Id comes on answers node:http could not parse too, and the log names them', async () => {
    const log: RequestLogEntry[] = [];
    running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
    const text = await raw(running.url, `patch /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n`);
    const id = /x-request-id: (\S+)/i.exec(text)?.[1];
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    await expect.poll(() => log.length).toBe(1);
    expect(log[0]).toMatchObject({ method: '?', status: 400, code: 'bad_request', requestId: id });
  });

  describe('the journal and the log tell each request once, as it happened', () => {
    const head = `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n`;
    /**
     * What the journal and the log say of each request: the same entries, the journal's in the
     * order the requests arrived, the log's as each was answered.
     */
    const told = async (log: RequestLogEntry[], count: number) => {
      await expect.poll(() => log.length).toBe(count);
      const journal = running!.server.requests().map(({ method, path, status, code, requestId }) => ({ method, path, status, code, requestId }));
      const logged = log.map(({ method, path, status, code, requestId }) => ({ method, path, status, code, requestId }));
      expect(logged).toHaveLength(journal.length);
      expect(logged).toEqual(expect.arrayContaining(journal));
      return journal;
    };

    it('a body that breaks off because the client reset the connection: status 0, no code, since no answer reached it (before: 400 invalid_body, an answer nobody got)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const { port } = new URL(running.url);
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(`${head}Content-Length: 100\r\n\r\n{"name":"ha`));
      socket.on('error', () => {});
      await expect.poll(() => running!.server.inspect().keys.k?.requests).toBe(1);
      socket.resetAndDestroy();
      expect(await told(log, 1)).toEqual([{ method: 'POST', path: '/v1/pets', status: 0, code: undefined, requestId: expect.any(String) }]);
      expect(running.server.inspect().petCount).toBe(0);
    });

    /**
     * Opens a connection to the running server for each text, one at a time, sends the text, and
     * once the server has read it lets node:http time them all out (its headersTimeout, 60 s, made
     * 1 ms; node checks its connections every 30 s, here its check, kept under a symbol, runs until
     * all are closed). Resolves to what each connection was answered.
     */
    const timedOut = async (...texts: string[]) => {
      const accepted = lastAccepted();
      const { port } = new URL(running!.url);
      const answers: Promise<string>[] = [];
      for (const text of texts) {
        const before = accepted();
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
        onTestFinished(() => void socket.destroy());
        let answer = '';
        socket.on('data', (d) => (answer += d));
        answers.push(new Promise<string>((resolve) => socket.once('close', () => resolve(answer))));
        await expect.poll(() => accepted() !== before && accepted()!.bytesRead === text.length, { message: `the server reads ${JSON.stringify(text)}` }).toBe(true);
      }
      const http = (accepted() as Socket & { server: Record<symbol, { _onTimeout(): void }> & { headersTimeout: number } }).server;
      http.headersTimeout = 1;
      const check = http[Object.getOwnPropertySymbols(http).find((symbol) => symbol.description === 'http.server.connectionsCheckingInterval')!]!;
      const all = Promise.all(answers);
      await expect.poll(() => (check._onTimeout(), Promise.race([all, false]))).not.toBe(false);
      return all;
    };

    it('a connection on which no request began (nothing sent, or only the empty lines RFC 9112, section 2.2, has a server ignore before a request line), timed out by node:http (its headersTimeout, 60 s), closes unanswered, unjournalled and unlogged; one whose request had begun is answered 408 (before: all were, the idle ones journalled "? ? 408" for a request that never was; then the one of empty lines still was)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ onRequest: (e) => log.push(e) });
      const [unanswered, unansweredBlank, answered] = await timedOut('', '\r\n\r\n', 'GET /v1/pe');
      expect(unanswered).toBe('');
      expect(unansweredBlank).toBe('');
      expect(answered).toMatch(/^HTTP\/1\.1 408 /);
      expect(answered).toContain('"code":"request_timeout","message":"The request took too long to arrive. Send it again."');
      expect(journal(await told(log, 1))).toEqual(['? ? 408']);
    });

    it('half of HTTP/2\'s connection preface (PRI * HTTP/2.0 and its empty line, without SM) waits for the rest, as node:http\'s parser does, and is answered 408 when node:http times it out, journalled "? ?" (answered at once, every connection\'s bytes would be read before node:http\'s parser reads them)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ onRequest: (e) => log.push(e) });
      const [answered] = await timedOut('PRI * HTTP/2.0\r\n\r\n');
      expect(answered).toMatch(/^HTTP\/1\.1 408 /);
      expect(journal(await told(log, 1))).toEqual(['? ? 408']);
    });

    it('a client that resets its connection halfway through a request\'s headers is told of nowhere, neither answered nor journalled nor logged, and the server serves on', async () => {
      const accepted = lastAccepted();
      const reported: unknown[] = [];
      vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
      onTestFinished(() => void vi.unstubAllGlobals());
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const half = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Be';
      const socket = connect(Number(new URL(running.url).port), '127.0.0.1', () => socket.write(half));
      socket.on('error', () => {});
      await expect.poll(() => accepted()?.bytesRead, { message: 'the server reads the half request' }).toBe(half.length);
      socket.resetAndDestroy();
      await expect.poll(() => accepted()?.closed, { message: 'the server sees the reset' }).toBe(true);
      expect((await fetch(`${running.url}/pets`, { headers: { Authorization: 'Bearer k' } })).status).toBe(200);
      expect(await told(log, 1)).toEqual([{ method: 'GET', path: '/v1/pets', status: 200, code: undefined, requestId: expect.any(String) }]);
      expect(reported).toEqual([]);
    });

    it('a request drawn for a truncate fault whose client reset the connection before its answer is logged with status 0 and not as truncated: nothing was cut, nothing went out', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, faults: { rate: 1, kinds: ['truncate'] }, onRequest: (e) => log.push(e) });
      const socket = connect(Number(new URL(running.url).port), '127.0.0.1', () => socket.write(`${head}Content-Length: 100\r\n\r\n{"name":"ha`));
      socket.on('error', () => {});
      await expect.poll(() => running!.server.inspect().keys.k?.requests).toBe(1);
      socket.resetAndDestroy();
      await expect.poll(() => log.length).toBe(1);
      expect(log[0]).toMatchObject({ method: 'POST', path: '/v1/pets', status: 0 });
      expect(log[0]).not.toHaveProperty('truncated');
      expect(running.server.requests()).toEqual([expect.objectContaining({ status: 0, fault: 'truncate' })]);
    });

    it.each([
      ['its chunked framing breaks', `${head}Transfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\nZZ\r\n`],
      ['the client ends it before its Content-Length', `${head}Content-Length: 100\r\n\r\n{"name":"ha`],
    ])('a body where %s is answered as that request, once: 400 bad_request with the request id the client got, and Connection: close (before: also a "? ?" entry, and 400 invalid_body for an answer never sent)', async (_, text) => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const answer = await raw(running.url, text);
      expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      const [top, body] = headAndBody(answer);
      expect(top).toMatch(/^HTTP\/1\.1 400/);
      expect(top).toMatch(/^x-ratelimit-remaining: 59\r?$/im);
      expect(top).toMatch(/^connection: close\r?$/im);
      expect(JSON.parse(body)).toEqual({ code: 'bad_request', status: 400, message: 'The request body broke off before its end, or its framing (Content-Length, chunked encoding) is not valid HTTP/1.1. Send the whole body.' });
      const requestId = /^x-request-id: (\S+)\r?$/im.exec(top)?.[1];
      expect(await told(log, 1)).toEqual([{ method: 'POST', path: '/v1/pets', status: 400, code: 'bad_request', requestId }]);
      expect(running.server.inspect().petCount).toBe(0);
    });

    it.each([
      ['trailer fields pass node:http\'s header limit', 431, 'headers_too_large', '', `X-Trailer: ${'a'.repeat(20_000)}\r\n`, 'The request\'s trailer fields, after its chunked body, are too large. Send fewer or shorter trailers.'],
      ['chunk extensions pass node:http\'s limit', 400, 'bad_request', `;x=${'a'.repeat(20_000)}`, '', 'The request body\'s chunk extensions (after a chunk\'s size) are too long. Send its chunks without extensions.'],
    ])('a chunked body whose %s is answered as that request, once: %i %s naming them, with Connection: close, and nothing created; short ones are served (before: the 400 saying the body broke off or its framing was not valid)', async (_, status, code, extension, trailer, message) => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const body = '{"name":"a","categoryId":1}';
      const chunked = (extension: string, trailer: string) => `${head}Transfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}${extension}\r\n${body}\r\n0\r\n${trailer}\r\n`;
      const answer = await raw(running.url, chunked(extension, trailer));
      expect(answer.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      const [top, json] = headAndBody(answer);
      expect(top).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(top).toMatch(/^connection: close\r?$/im);
      expect(JSON.parse(json)).toEqual({ code, status, message });
      const requestId = /^x-request-id: (\S+)\r?$/im.exec(top)?.[1];
      expect(await told(log, 1)).toEqual([{ method: 'POST', path: '/v1/pets', status, code, requestId }]);
      expect(running.server.inspect().petCount).toBe(0);
      expect(await raw(running.url, chunked(';x=y', 'X-Trailer: y\r\n'))).toMatch(/^HTTP\/1\.1 201/);
    });

    it('a body that breaks while its request is held on a latency, before the server reads it, is answered as that request once the latency ends: 400 bad_request with Connection: close, nothing created', async () => {
      await withHeldAnswers(async (held, log) => {
        const answer = raw(held.url, `${head}Transfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\nZZ\r\n`, false);
        await expect.poll(() => vi.getTimerCount(), { message: 'the server holds the POST on the latency' }).toBe(1);
        await vi.advanceTimersByTimeAsync(1_000);
        const [top, body] = headAndBody(await answer);
        expect(top).toMatch(/^HTTP\/1\.1 400 /);
        expect(top).toMatch(/^connection: close\r?$/im);
        expect(JSON.parse(body)).toMatchObject({ code: 'bad_request', message: expect.stringContaining('body') });
        expect((await told(log, 1)).map(({ method, status, code }) => `${method} ${status} ${code}`)).toEqual(['POST 400 bad_request']);
        expect(held.server.inspect().petCount).toBe(0);
      });
    });

    it('a broken body after its request was answered gets no second answer (before: a "? ?" 400 after the 405)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const answer = await raw(running.url, `POST /v1/store/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\nZZ\r\n`);
      expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 405']);
      expect(await told(log, 1)).toEqual([{ method: 'POST', path: '/v1/store/orders', status: 405, code: 'method_not_allowed', requestId: expect.any(String) }]);
    });

    it('what node:http cannot parse after a request still being answered is answered after it, in order (before: its 400 came first, read as the answer to the POST)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const body = '{"name":"a","categoryId":1}';
      const answer = await raw(running.url, `${head}Content-Length: ${body.length}\r\n\r\n${body}GARBAGE\r\n\r\n`);
      expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 201', 'HTTP/1.1 400']);
      expect((await told(log, 2)).map(({ method, status }) => `${method} ${status}`)).toEqual(['POST 201', '? 400']);
    });

    it('a CONNECT after a request still being answered is answered after it, in order (before: its 400 came first and closed the connection, so the 201 the journal told of reached nobody)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const body = '{"name":"a","categoryId":1}';
      for (const end of [true, false]) {
        const answer = await raw(running.url, `${head}Content-Length: ${body.length}\r\n\r\n${body}CONNECT petstore.test:443 HTTP/1.1\r\nHost: x\r\n\r\n`, end);
        expect(answer.match(/HTTP\/1\.1 \d+/g), `client ends its side: ${end}`).toEqual(['HTTP/1.1 201', 'HTTP/1.1 400']);
      }
      expect((await told(log, 4)).map(({ method, status }) => `${method} ${status}`)).toEqual(['POST 201', 'CONNECT 400', 'POST 201', 'CONNECT 400']);
    });

    it('what node:http cannot parse after pipelined requests still queued is answered after all of them, in order (before: its 400 went out first and cut the connection, so the 201 and 200 the journal told of reached nobody)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const body = '{"name":"a","categoryId":1}';
      const get = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n';
      const answer = await raw(running.url, `${head}Content-Length: ${body.length}\r\n\r\n${body}${get}FOO / HTTP/1.1\r\n\r\n`);
      expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 201', 'HTTP/1.1 200', 'HTTP/1.1 400']);
      expect((await told(log, 3)).map(({ method, status }) => `${method} ${status}`)).toEqual(['POST 201', 'GET 200', '? 400']);
    });

    it('the journal lists pipelined requests in the order they arrived, not as they were answered (before: the GETs answered at once came before the POST whose body was still being read)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const body = '{"name":"a","categoryId":1}';
      const get = (limit: number) => `GET /v1/pets?limit=${limit} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n`;
      const answer = await raw(running.url, `${get(1)}${head}Content-Length: ${body.length}\r\n\r\n${body}${get(2)}${get(3)}FOO / HTTP/1.1\r\n\r\n`);
      const ids = [...answer.matchAll(/^x-request-id: (\S+)\r?$/gim)].map((match) => match[1]);
      expect((await told(log, 5)).map(({ method, path, status, requestId }) => ({ method, path, status, requestId }))).toEqual([
        { method: 'GET', path: '/v1/pets?limit=1', status: 200, requestId: ids[0] },
        { method: 'POST', path: '/v1/pets', status: 201, requestId: ids[1] },
        { method: 'GET', path: '/v1/pets?limit=2', status: 200, requestId: ids[2] },
        { method: 'GET', path: '/v1/pets?limit=3', status: 200, requestId: ids[3] },
        { method: '?', path: '?', status: 400, requestId: ids[4] },
      ]);
    });

    it('what node:http cannot parse is journalled where it arrived, though its answer waits behind a held one (before: where it was answered, after a request another connection sent meanwhile)', async () => {
      await withHeldAnswers(async (held, log) => {
        const get = (limit: number, close = '') => `GET /v1/pets?limit=${limit} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n${close}\r\n`;
        const first = raw(held.url, `${get(1)}FOO / HTTP/1.1\r\n\r\n`, false);
        await expect.poll(() => vi.getTimerCount()).toBe(1);
        const second = raw(held.url, get(2, 'Connection: close\r\n'), false);
        await expect.poll(() => vi.getTimerCount()).toBe(2);
        await vi.advanceTimersByTimeAsync(1_000);
        expect((await first).match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 400']);
        expect((await second).match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200']);
        expect(journal(await told(log, 3))).toEqual(['GET /v1/pets?limit=1 200', '? ? 400', 'GET /v1/pets?limit=2 200']);
      });
    });

    it.each([
      ['what node:http cannot parse', 'FOO / HTTP/1.1\r\n\r\n', '?'],
      ['a CONNECT', 'CONNECT petstore.test:443 HTTP/1.1\r\nHost: x\r\n\r\n', 'CONNECT'],
    ])('%s behind a held answer goes out after it, logged with the time its answer waited, as the held one is (before: 0 ms, though it went out a second later; a CONNECT went out first)', async (_, behind, method) => {
      await withHeldAnswers(async (held, log) => {
        // The clock is past 0 when the requests arrive, so a duration is told by its start too.
        await vi.advanceTimersByTimeAsync(500);
        const answer = raw(held.url, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n${behind}`, false);
        await expect.poll(() => vi.getTimerCount(), { message: 'the server holds the GET on the latency' }).toBe(1);
        await vi.advanceTimersByTimeAsync(1_000);
        expect((await answer).match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 400']);
        await expect.poll(() => log.length).toBe(2);
        expect(log.map(({ method, status, durationMs }) => ({ method, status, durationMs }))).toEqual([
          { method: 'GET', status: 200, durationMs: 1_000 },
          { method, status: 400, durationMs: 1_000 },
        ]);
      });
    });

    it('what node:http cannot parse behind a held answer, whose client reset the connection before its turn, is told with status 0 in the journal and the log (before: journalled as a 400 never sent, and never logged)', async () => {
      await withHeldAnswers(async (held, log) => {
        const socket = connect(Number(new URL(held.url).port), '127.0.0.1', () =>
          socket.write('GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\nFOO / HTTP/1.1\r\n\r\n'),
        );
        socket.on('error', () => {});
        await expect.poll(() => vi.getTimerCount(), { message: 'the server holds the GET on the latency' }).toBe(1);
        socket.resetAndDestroy();
        await vi.advanceTimersByTimeAsync(1_000);
        const journal = await told(log, 2);
        expect(journal[1]).toEqual({ method: '?', path: '?', status: 0, code: undefined, requestId: expect.any(String) });
      });
    });

    it.each([
      ['a request asking to upgrade', 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n', ['GET 0']],
      ['a CONNECT', 'CONNECT petstore.test:443 HTTP/1.1\r\nHost: x\r\n\r\n', ['GET 0', 'CONNECT 0']],
    ])('a client that resets its connection while an answer is held, with %s behind it, which node:http hands over, is told of with status 0, and the process lives on (before: behind an upgrade, the reset was an uncaught ECONNRESET that ended the process)', async (_, behind, told) => {
      await withHeldAnswers(async (held) => {
        const socket = connect(Number(new URL(held.url).port), '127.0.0.1', () => socket.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\n${behind}`));
        socket.on('error', () => {});
        await expect.poll(() => vi.getTimerCount(), { message: 'the server holds the GET on the latency' }).toBe(1);
        socket.resetAndDestroy();
        await expect.poll(() => vi.getTimerCount(), { message: 'the server stops holding an answer nobody waits for' }).toBe(0);
        await expect.poll(() => held.server.requests().map(({ method, status }) => `${method} ${status}`)).toEqual(told);
      });
    });

    it('a client that resets its connection while an answer is held, with what node:http cannot parse behind it, has nothing acted on (before: the pet was created, and the 201 nobody got journalled and logged)', async () => {
      const accepted = lastAccepted();
      await withHeldAnswers(async (held, log) => {
        const body = '{"name":"a","categoryId":1}';
        const socket = connect(Number(new URL(held.url).port), '127.0.0.1', () => socket.write(`${head}Content-Length: ${body.length}\r\n\r\n${body}FOO / HTTP/1.1\r\n\r\n`));
        socket.on('error', () => {});
        await expect.poll(() => vi.getTimerCount(), { message: 'the server holds the POST on the latency' }).toBe(1);
        // More the parser cannot read, in a packet of its own: it is refused no second time. The
        // reset waits until the server has read it (a reset drops what the server has not read).
        await new Promise((resolve) => socket.write('BAR / HTTP/1.1\r\n\r\n', resolve));
        await expect.poll(() => accepted()?.bytesRead, { message: 'the server reads the second packet' }).toBe(socket.bytesWritten);
        socket.resetAndDestroy();
        await expect.poll(() => vi.getTimerCount(), { message: 'the server stops holding an answer nobody waits for' }).toBe(0);
        await vi.advanceTimersByTimeAsync(1_000);
        expect((await told(log, 2)).map(({ method, status }) => `${method} ${status}`)).toEqual(['POST 0', '? 0']);
        expect(held.server.inspect()).toEqual({ petCount: 0, keys: {} });
      });
    });

    it('a request target past node:http\'s header limit is journalled and logged with its method and its path\'s first 100 characters, a key in it [redacted], as a shorter one over 8,000 characters is, and a HEAD\'s 414 has no body (before: "? ? 414", and a HEAD\'s came with its body)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { 'secret-key-123': 'free' }, onRequest: (e) => log.push(e) });
      const filler = 'a'.repeat(20_000);
      const send = (line: string, key = 'secret-key-123') => raw(running!.url, `${line} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`);
      const cut = (path: string) => `${path.slice(0, 100)}…`;
      await send(`GET /v1/pets?x=${filler}`);
      await send(`POST http://other.test/secret-key-123/v1/pets?x=${filler}`);
      await send(`GET /v1/pets?token=sk-presented&x=${filler}`, 'sk-presented');
      const [get, head] = [await send(`GET /v1/pets?x=${filler}`), await send(`HEAD /v1/pets?x=${filler}`)].map(headAndBody);
      // A target too long for the packet node:http failed in: the headers after it are unknown, and
      // so is the key they present, which the path may hold.
      await send(`GET /v1/pets?token=sk-presented&x=${'a'.repeat(100_000)}`, 'sk-presented');
      expect((await told(log, 6)).map(({ method, path, status, code }) => [method, path, status, code])).toEqual([
        ['GET', cut(`/v1/pets?x=${filler}`), 414, 'uri_too_long'],
        ['POST', cut(`/[redacted]/v1/pets?x=${filler}`), 414, 'uri_too_long'],
        ['GET', cut(`/v1/pets?token=[redacted]&x=${filler}`), 414, 'uri_too_long'],
        ['GET', cut(`/v1/pets?x=${filler}`), 414, 'uri_too_long'],
        ['HEAD', cut(`/v1/pets?x=${filler}`), 414, 'uri_too_long'],
        ['GET', '?', 414, 'uri_too_long'],
      ]);
      expect(JSON.stringify(log)).not.toMatch(/secret-key-123|sk-presented/);
      expect(head![0]).toMatch(/^HTTP\/1\.1 414/);
      expect(head![0]).toMatch(new RegExp(`^content-length: ${Buffer.byteLength(get![1])}\r?$`, 'im'));
      expect(head![1]).toBe('');
    });

    it('headers past node:http\'s limit, and what its parser refuses after the method, are journalled and logged with their method and ? for the path (the key the unread headers present could be in it), and a HEAD\'s 431 or 400 has no body and its GET\'s Content-Length (before: "? ? 431", and a HEAD\'s came with its body)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { 'secret-key-123': 'free' }, onRequest: (e) => log.push(e) });
      const big = `X-Big: ${'a'.repeat(20_000)}\r\n`;
      const send = (line: string, fields: string) => raw(running!.url, `${line} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret-key-123\r\n${fields}\r\n`);
      const answers = [
        await send('GET /v1/pets?token=secret-key-123', big),
        await send('HEAD /v1/pets?token=secret-key-123', big),
        await send('GET /v1/pets', 'No Header: y\r\n'),
        await send('HEAD /v1/pets', 'No Header: y\r\n'),
      ].map(headAndBody);
      expect((await told(log, 4)).map(({ method, path, status, code }) => [method, path, status, code])).toEqual([
        ['GET', '?', 431, 'headers_too_large'],
        ['HEAD', '?', 431, 'headers_too_large'],
        ['GET', '?', 400, 'bad_request'],
        ['HEAD', '?', 400, 'bad_request'],
      ]);
      expect(JSON.stringify(log)).not.toContain('secret-key-123');
      for (const [get, head] of [answers.slice(0, 2), answers.slice(2, 4)]) {
        expect(head![0]!.split('\r\n')[0]).toBe(get![0]!.split('\r\n')[0]);
        expect(head![0]).toMatch(new RegExp(`^content-length: ${Buffer.byteLength(get![1])}\r?$`, 'im'));
        expect(head![1]).toBe('');
      }
    });

    it('headers past node:http\'s limit whose request line came in an earlier packet are journalled "? ?": a header value\'s words at the start of the packet node:http failed in are no method', async () => {
      const accepted = lastAccepted();
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const first = 'HEAD /v1/pets HTTP/1.1\r\nHost: x\r\nX-Note: a';
      const answer = new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(running!.url).port), '127.0.0.1', () => socket.write(first));
        let out = '';
        socket.on('data', (d) => (out += d));
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
        void expect
          .poll(() => accepted()?.bytesRead, { message: 'the server reads the request line in a packet of its own' })
          .toBe(first.length)
          .then(() => socket.end(`b c ${'a'.repeat(20_000)}\r\n\r\n`), reject);
      });
      expect(await answer).toMatch(/^HTTP\/1\.1 431/);
      expect(journal(await told(log, 1))).toEqual(['? ? 431']);
    });

    it('what node:http cannot parse right after a request\'s body in the same packet is found where that body ends, by its Content-Length or its chunked end: journalled with its method, a HEAD\'s refusal without a body, a long target\'s 414 (before: "? ?", a HEAD\'s 400 came with a body, the long target got 431)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const body = '{"name":"a","categoryId":1}';
      const withLength = `${head}Content-Length: ${body.length}\r\n\r\n${body}`;
      const chunked = `${head}Transfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      const statuses = async (text: string) => (await raw(running!.url, text)).match(/HTTP\/1\.1 \d+/g);
      expect(await statuses(`${withLength}GET /v1/pets HTTP/1.1\r\nHost: x\r\nNo Header: y\r\n\r\n`)).toEqual(['HTTP/1.1 201', 'HTTP/1.1 400']);
      expect(await statuses(`${withLength}GET /v1/pets?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)).toEqual(['HTTP/1.1 201', 'HTTP/1.1 414']);
      expect(await statuses(`${chunked}GET /v1/pets HTTP/1.1\r\nHost: x\r\nNo Header: y\r\n\r\n`)).toEqual(['HTTP/1.1 201', 'HTTP/1.1 400']);
      const headAnswer = await raw(running.url, `${withLength}HEAD /v1/pets HTTP/1.1\r\nHost: x\r\nNo Header: y\r\n\r\n`);
      expect(headAnswer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 201', 'HTTP/1.1 400']);
      expect(headAnswer).toMatch(/\r\n\r\n$/);
      expect(journal(await told(log, 8))).toEqual([
        ...['POST /v1/pets 201', 'GET ? 400', 'POST /v1/pets 201', `GET /v1/pets?x=${'a'.repeat(89)}… 414`],
        ...['POST /v1/pets 201', 'GET ? 400', 'POST /v1/pets 201', 'HEAD ? 400'],
      ]);
    });

    it('words in a request\'s body that read as a request line are never taken for the one after it that node:http cannot parse: its own is, or when the body holds a blank line, none ("? ?"; before: DELETE, the body\'s words)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const bad = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nNo Header: y\r\n\r\n';
      for (const body of ['DELETE /v1/pets HTTP/1.1\r\nX', 'x\r\n\r\nDELETE /v1/pets HTTP/1.1\r\nX']) {
        const answer = await raw(running.url, `${head}Content-Length: ${body.length}\r\n\r\n${body}${bad}`);
        expect(answer.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 400', 'HTTP/1.1 400']);
      }
      expect(journal(await told(log, 4))).toEqual(['POST /v1/pets 400', 'GET ? 400', 'POST /v1/pets 400', '? ? 400']);
    });

    it('a request line in HTTP/1.1\'s syntax with a version the server does not speak (HTTP/2.0, which node:http parses, HTTP/3.0, HTTP/1.2) gets a 400 Error record saying so, with the rate-limit headers, and nothing is acted on; HTTP/2.0 is journalled with its method and path, the others with their method (before: HTTP/2.0 was served, the others got a 400 blaming the request line or headers, journalled "? ?")', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const body = '{"name":"a","categoryId":1}';
      for (const version of ['2.0', '3.0', '1.2']) {
        const text = await raw(running.url, `${head.replace('HTTP/1.1', `HTTP/${version}`)}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
        const [top, json] = headAndBody(text);
        expect(top, version).toMatch(/^HTTP\/1\.1 400/);
        expect(top).toMatch(/^x-ratelimit-remaining: 60\r?$/im);
        expect(JSON.parse(json)).toEqual({ code: 'bad_request', status: 400, message: 'The request\'s HTTP version is not one this server speaks. Send HTTP/1.1 (HTTP/2 and HTTP/3 are not served).' });
      }
      expect(journal(await told(log, 3))).toEqual(['POST /v1/pets 400', 'POST ? 400', 'POST ? 400']);
      expect(running.server.inspect()).toEqual({ petCount: 0, keys: {} });
    });

    it('a request line node:http refuses at its HTTP/1.1 (PRI * HTTP/1.1, reserved for HTTP/2\'s preface; HTTP/1.1 followed by a space or a bare LF) gets the generic 400, journalled with its method, and HTTP/3.0 still the one saying the version is not spoken (before: all were told the version is not one the server speaks, though it is)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const message = async (line: string) => JSON.parse(headAndBody(await raw(running!.url, `${line}Host: x\r\n\r\n`))[1]).message;
      const generic = 'The request is not valid HTTP/1.1 (check the method, the request line and the headers).';
      expect(await message('PRI * HTTP/1.1\r\n')).toBe(generic);
      // A version past 1.1 later in the head (a Via naming HTTP/2.0) is not the request line's.
      expect(await message('GET /v1/pets HTTP/1.1 \r\nVia: HTTP/2.0 proxy\r\n')).toBe(generic);
      expect(await message('POST /v1/pets HTTP/1.1\n')).toBe(generic);
      expect(await message('GET /v1/pets HTTP/3.0\r\n')).toBe('The request\'s HTTP version is not one this server speaks. Send HTTP/1.1 (HTTP/2 and HTTP/3 are not served).');
      expect(journal(await told(log, 4))).toEqual(['PRI ? 400', 'GET ? 400', 'POST ? 400', 'GET ? 400']);
    });

    it('HTTP/2\'s connection preface (PRI * HTTP/2.0, then SM), as an h2c client with prior knowledge sends it, gets the 400 saying the version is not one the server speaks, journalled as PRI, and the connection closes (before: the generic 400 blaming the request line or headers)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      // The preface and an empty SETTINGS frame, in one write as clients send them; the client leaves its side open.
      const preface = Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]);
      const [head, body] = headAndBody(await raw(running.url, preface, false));
      expect(head).toMatch(/^HTTP\/1\.1 400/);
      expect(head).toMatch(/^x-ratelimit-remaining: 60\r?$/im);
      expect(JSON.parse(body)).toEqual({ code: 'bad_request', status: 400, message: 'The request\'s HTTP version is not one this server speaks. Send HTTP/1.1 (HTTP/2 and HTTP/3 are not served).' });
      expect(journal(await told(log, 1))).toEqual(['PRI ? 400']);
    });

    it('requests refused for their Host lines are journalled with their method and path (before: "? ?")', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      await raw(running.url, `GET /v1/pets?limit=2 HTTP/1.1\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`);
      await raw(running.url, `DELETE /v1/pets HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n`);
      expect(journal(await told(log, 2))).toEqual(['GET /v1/pets?limit=2 400', 'DELETE /v1/pets 400']);
    });

    it('what follows a request with Connection: close, or an HTTP/1.0 one, is neither answered nor journalled nor logged, as RFC 9112 processes no further request (before: a "? ? 0" entry, as if a client had gone away unanswered)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const get = (version: string, close: string) => `GET /v1/pets?limit=1 HTTP/${version}\r\nHost: x\r\nAuthorization: Bearer k\r\n${close}\r\n`;
      for (const [first, after] of [
        [get('1.1', 'Connection: close\r\n'), get('1.1', '')],
        [get('1.1', 'Connection: close\r\n'), 'FOO / HTTP/1.1\r\n\r\n'],
        [get('1.0', ''), 'CONNECT a:1 HTTP/1.1\r\nHost: x\r\n\r\n'],
      ] as const) {
        // The client leaves its side open: the server closes the connection after its one answer.
        expect((await raw(running.url, first + after, false)).match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 200']);
      }
      await raw(running.url, get('1.1', 'Connection: close\r\n'));
      expect((await told(log, 4)).map(({ method, status }) => `${method} ${status}`)).toEqual(['GET 200', 'GET 200', 'GET 200', 'GET 200']);
    });

    it('requests whose target no URL can be made of, and CONNECTs, are journalled and logged with their method, and ? for the path they lack (before: "? ?", as if node:http had not parsed them)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const lines = ['GET ftp://x/v1/pets', 'POST http://[::1', 'HEAD ftp://x/v1/pets', 'CONNECT petstore.test:443', 'CONNECT /v1/pets'];
      for (const line of lines) {
        const [head, body] = headAndBody(await raw(running.url, `${line} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`));
        expect(head).toMatch(/^HTTP\/1\.1 400/);
        // A HEAD's answer has no body, as every other HEAD's.
        expect(body === '', line).toBe(line.startsWith('HEAD'));
      }
      expect(journal(await told(log, lines.length))).toEqual(['GET ? 400', 'POST ? 400', 'HEAD ? 400', 'CONNECT ? 400', 'CONNECT ? 400']);
    });
    it('an http(s) target with an empty authority (http:///v1/pets), or with userinfo (http://user:pass@x/v1/pets), answers the 400 of a target no URL can be made of, journalled with its method and ?, as RFC 9110 calls the first invalid (section 4.2.1) and has a recipient treat the second as an error (section 4.2.4; a web Request cannot carry one) (before: the URL standard read v1 as the first\'s host, and /pets got a 404; the second was served, 200)', async () => {
      const log: RequestLogEntry[] = [];
      running = await startReferenceServer({ apiKeys: { k: 'free' }, onRequest: (e) => log.push(e) });
      const targets = ['http:///v1/pets', 'https:///v1/pets?limit=1', 'http://user:pass@x/v1/pets', 'https://k@x/v1/pets'];
      for (const target of targets) {
        const [head, body] = headAndBody(await raw(running.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nConnection: close\r\n\r\n`));
        expect(head, target).toMatch(/^HTTP\/1\.1 400/);
        expect(head).toMatch(/^x-ratelimit-remaining: 60\r?$/im);
        expect(JSON.parse(body)).toEqual({ code: 'bad_request', status: 400, message: 'The request target or headers could not be read. Send a path such as /v1/pets, or an http(s) URL.' });
      }
      expect(journal(await told(log, targets.length))).toEqual(targets.map(() => 'GET ? 400'));
    });

    it('a client that resets its connection while a request asking to upgrade it waits behind a held answer is told of nowhere: the held answer is logged with status 0, the upgrade request not at all, and the server serves on (before: node:http had handed the socket over with no error listener, and its ECONNRESET was thrown out of the process)', async () => {
      const accepted = lastAccepted();
      // What a server process would die of (the test runner reports it too, after the test).
      const thrown: unknown[] = [];
      const onThrown = (error: unknown) => void thrown.push(error);
      process.on('uncaughtException', onThrown);
      onTestFinished(() => void process.off('uncaughtException', onThrown));
      await withHeldAnswers(async (held, log) => {
        const get = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n';
        const text = `${get}\r\n${get}Connection: upgrade\r\nUpgrade: websocket\r\n\r\n`;
        const socket = connect(Number(new URL(held.url).port), '127.0.0.1', () => socket.write(text));
        socket.on('error', () => {});
        await expect.poll(() => accepted()?.bytesRead, { message: 'the server reads both requests' }).toBe(text.length);
        socket.resetAndDestroy();
        await expect.poll(() => accepted()?.closed, { message: 'the server sees the reset' }).toBe(true);
        await vi.advanceTimersByTimeAsync(1_000);
        expect(thrown).toEqual([]);
        expect(await told(log, 1)).toEqual([{ method: 'GET', path: '/v1/pets', status: 0, code: undefined, requestId: expect.any(String) }]);
        let status: number | undefined;
        void fetch(`${held.url}/pets`, { headers: { Authorization: 'Bearer k' } }).then((answer) => (status = answer.status));
        while (status === undefined) await vi.advanceTimersByTimeAsync(1_000);
        expect(status).toBe(200);
      });
    });
  });

  it('close() stops listening', async () => {
    const server = await startReferenceServer();
    await server.close();
    await expect(fetch(`${server.url}/pets`)).rejects.toThrow();
  });

  it('close() closes the connections node:http handed over too: a CONNECT\'s whose client keeps its side open, and one with a request asking to upgrade behind an answer still held, which is then acted on no further, as any held request (before: close() waited out the CONNECT\'s 5 s linger, and the held answers went out after it)', async () => {
    const closes = (server: RunningReferenceServer) => {
      let closed = false;
      void server.close().then(() => (closed = true));
      return expect.poll(() => closed, { message: 'close() resolves with no time passing on the server\'s timers' }).toBe(true);
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    running = await startReferenceServer({ apiKeys: { k: 'free' } });
    const { port } = new URL(running.url);
    const tunnel = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true }, () => tunnel.write('CONNECT petstore.test:443 HTTP/1.1\r\nHost: x\r\n\r\n'));
    onTestFinished(() => void tunnel.destroy());
    await new Promise<void>((resolve) => tunnel.resume().once('end', () => resolve()));
    await closes(running);
    vi.useRealTimers();
    await withHeldAnswers(async (held) => {
      const get = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n';
      const answered = raw(held.url, `${get}\r\n${get}Connection: upgrade\r\nUpgrade: websocket\r\n\r\n`, false);
      await expect.poll(() => vi.getTimerCount(), { message: 'the server holds the first answer' }).toBe(1);
      await closes(held);
      expect(await answered).toBe('');
      expect(held.server.requests().map(({ method, status }) => `${method} ${status}`)).toEqual(['GET 0']);
    });
  });

  it('close() called again, or twice at once (a test teardown after a test that closed it), resolves like the first (before: the later ones rejected with ERR_SERVER_NOT_RUNNING)', async () => {
    const server = await startReferenceServer();
    await Promise.all([server.close(), server.close()]);
    await expect(server.close()).resolves.toBeUndefined();
    await expect(fetch(`${server.url}/pets`)).rejects.toThrow();
  });

  it('close() closes the connections node:http handed over too: one answered for its CONNECT whose client keeps it open, and one whose request asking to upgrade waits behind a held answer (before: close() waited for the first to linger 5 s, and for the held answer and a keep-alive after it for the second)', async () => {
    await withHeldAnswers(async (held) => {
      const { port } = new URL(held.url);
      const get = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n';
      const texts = ['CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n', `${get}\r\n${get}Connection: upgrade\r\nUpgrade: websocket\r\n\r\n`];
      const sockets = texts.map((text) => {
        const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true }, () => socket.write(text));
        onTestFinished(() => void socket.destroy());
        socket.on('error', () => {});
        return socket;
      });
      let answer = '';
      sockets[0]!.on('data', (d) => (answer += d));
      await expect.poll(() => answer, { message: 'the CONNECT is answered' }).toMatch(/^HTTP\/1\.1 400 /);
      await expect.poll(() => vi.getTimerCount(), { message: 'the server holds the GET, the CONNECT lingers' }).toBe(2);
      let closed = false;
      void held.close().then(() => (closed = true));
      await expect.poll(() => closed, { message: 'close() resolves with the clock still' }).toBe(true);
    });
  });
});
