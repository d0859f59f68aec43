/**
 * The ways of reaching a reference server, each a typed `send(request)`: in-process, through msw,
 * and over real HTTP. The behaviour suite and the fuzz suite drive the same ones.
 */
import { setupServer } from 'msw/node';
import { createHandlers } from '@animal-store/sdk/msw';
import { startReferenceServer } from '@animal-store/sdk/node';
import { createReferenceServer, type ReferenceServer, type ReferenceServerOptions } from '@animal-store/sdk/server';

/** Sends one request to a reference server and resolves to its answer. */
export type Send = (request: Request) => Promise<Response>;

/** A reference server started behind a transport. */
export interface Running {
  server: ReferenceServer;
  /** The API's base URL, ending in `/v1`. */
  baseUrl: string;
  send: Send;
  close(): Promise<void>;
}

/** A way of reaching a reference server. */
export interface Transport {
  name: string;
  start(options: ReferenceServerOptions): Promise<Running>;
}

/** `server.fetch` itself: no network, no interception. */
export const inProcess: Transport = {
  name: 'server.fetch',
  async start(options) {
    const server = createReferenceServer(options);
    return { server, baseUrl: 'http://api.test/v1', send: (request) => server.fetch(request), close: async () => {} };
  },
};

/** msw's `setupServer` over the reference server's handlers; requests go through the global `fetch` msw intercepts. */
export const throughMsw: Transport = {
  name: 'msw',
  async start(options) {
    const baseUrl = 'https://petstore.test/v1';
    const server = createReferenceServer(options);
    const mock = setupServer(...createHandlers(server, { baseUrl }));
    mock.listen({ onUnhandledFrame: 'error' });
    return { server, baseUrl, send: (request) => fetch(request), close: async () => mock.close() };
  },
};

/** `startReferenceServer` on 127.0.0.1, port 0, reached with the global `fetch` over real HTTP. */
export const overHttp: Transport = {
  name: 'node:http on port 0',
  async start(options) {
    const running = await startReferenceServer({ port: 0, host: '127.0.0.1', ...options });
    return { server: running.server, baseUrl: running.url, send: (request) => fetch(request), close: running.close };
  },
};
