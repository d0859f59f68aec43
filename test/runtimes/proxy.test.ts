// Behind an HTTP proxy: Node's fetch goes through the proxy HTTP_PROXY names when NODE_USE_ENV_PROXY=1
// is set, and the client's requests with it (as the getting-started guide says). A real proxy that
// tunnels CONNECT, a real reference server, and Node 22 and 24 in child processes running the built
// package.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer } from '@animal-store/sdk/node';
import { ROOT } from '../support/consumer.js';
import { NODE_24, node22 } from './runners.js';

let api: Awaited<ReturnType<typeof startReferenceServer>>;
let proxy: Server;
/** What the proxy was asked for: `CONNECT host:port`, or a request line in absolute form. */
const asked: string[] = [];

beforeAll(async () => {
  api = await startReferenceServer({ port: 0, host: '127.0.0.1', apiKeys: { 'proxy-key': 'free' }, pets: 3 });
  proxy = createServer((request, response) => {
    // Only tunnels are expected: a plain proxied request is answered 502 and shows in `asked`.
    asked.push(`${request.method} ${request.url}`);
    response.writeHead(502).end();
  });
  proxy.on('connect', (request, socket, head) => {
    asked.push(`CONNECT ${request.url}`);
    const [host, port] = request.url!.split(':');
    const upstream = connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
}, 180_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await api?.close();
});

/** Runs the client in `node` with the proxy in its environment; resolves to what it printed. */
function listThroughProxy(node: string, proxied: boolean): Promise<string> {
  const sdk = pathToFileURL(join(ROOT, 'dist/index.js')).href;
  const script = `
    const { PetStoreClient } = await import(${JSON.stringify(sdk)});
    const client = new PetStoreClient({ apiKey: 'proxy-key', baseUrl: ${JSON.stringify(api.url)}, maxRetries: 0, timeout: 5000 });
    console.log(JSON.stringify((await client.listPets()).map((pet) => pet.id)));`;
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, NO_PROXY: '' };
  if (proxied) env.NODE_USE_ENV_PROXY = '1';
  return new Promise((resolve, reject) =>
    execFile(node, ['--input-type=module', '-e', script], { env, timeout: 20_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout.trim()),
    ),
  );
}

describe.each([
  ['Node 24', async () => NODE_24],
  ['Node 22', node22],
])('%s behind an HTTP proxy', (_, binary) => {
  it('with NODE_USE_ENV_PROXY=1, the client\'s requests go through the proxy HTTP_PROXY names', async () => {
    asked.length = 0;
    const before = api.server.requests().length;
    expect(await listThroughProxy(await binary(), true)).toBe('[1,2,3]');
    expect(asked).toEqual([`CONNECT ${new URL(api.url).host}`]);
    expect(api.server.requests().length).toBe(before + 1);
  }, 200_000);

  it('without it, HTTP_PROXY alone changes nothing: the client connects directly', async () => {
    asked.length = 0;
    expect(await listThroughProxy(await binary(), false)).toBe('[1,2,3]');
    expect(asked).toEqual([]);
  }, 200_000);
});
