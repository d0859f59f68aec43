/**
 * msw adapter of the reference server: request handlers that pass every request under a base URL
 * to `server.fetch`. Works with `setupServer` (`msw/node`) and `setupWorker` (`msw/browser`).
 *
 * @module @animal-store/sdk/msw
 */
import { http, HttpResponse, type HttpHandler } from 'msw';
import { isInjectedFault } from './server/faults.js';
import { pageUrl } from './runtime.js';
import type { ReferenceServer } from './server/server.js';
import { checkKnownOptions } from './suggest.js';

/** Options of {@link createHandlers}. */
export interface CreateHandlersOptions {
  /**
   * The base URL the handlers answer under, ending in `/v1`, as the client is configured with.
   * In a browser it may be relative (`'/api/v1'`), resolved against the page's address. A `URL`
   * object serves as well as a string.
   * @example 'https://petstore.test/v1'
   */
  baseUrl: string | URL;
}

const HANDLER_OPTIONS = Object.keys({ baseUrl: 0 } satisfies Record<keyof CreateHandlersOptions, 0>);

/**
 * Creates msw 3 handlers that answer every request under `baseUrl` with the reference server.
 * A dropped connection injected by the server's `faults` option becomes a network error, and so
 * does a request its client aborts while the server waits (an injected latency), quietly.
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node';
 * import { createReferenceServer } from '@animal-store/sdk/server';
 * import { createHandlers } from '@animal-store/sdk/msw';
 *
 * const api = createReferenceServer({ apiKeys: { 'test-key': 'free' } });
 * const mock = setupServer(...createHandlers(api, { baseUrl: 'https://petstore.test/v1' }));
 * mock.listen({ onUnhandledFrame: 'error' });
 * ```
 */
export function createHandlers(server: ReferenceServer, options: CreateHandlersOptions): HttpHandler[] {
  if (typeof (server as Partial<ReferenceServer> | undefined)?.fetch !== 'function') {
    throw new TypeError('createHandlers: pass the reference server first, then the options: createHandlers(createReferenceServer(), { baseUrl: "https://petstore.test/v1" }).');
  }
  if (options === undefined) throw new TypeError('createHandlers: give the base URL the client uses: createHandlers(server, { baseUrl: "https://petstore.test/v1" }).');
  checkKnownOptions(options, HANDLER_OPTIONS, 'createHandlers');
  let base: URL;
  try {
    // In a page, a relative base URL ('/api/v1') resolves against its address, as the client's does.
    base = new URL(options.baseUrl, pageUrl());
  } catch {
    throw new TypeError(
      `createHandlers: baseUrl must be an absolute URL such as "https://petstore.test/v1" (or, in a browser, a path such as "/api/v1"); got "${options.baseUrl}".`,
    );
  }
  // A RegExp, not msw's path pattern: a `:` or `*` in the base's path is text, where the pattern
  // read `/api:v2/v1` as a parameter (`/apiX/v1` matched too) and `/x*/v1` as a wildcard. msw
  // matches it against the request's origin and path, without its query.
  const root = (base.origin + base.pathname).replace(/\/+$/, '').replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
  const resolver = async ({ request }: { request: Request }) => {
    try {
      return await server.fetch(request);
    } catch (error) {
      // A dropped connection is a network error. So is the rejection of a request its client
      // aborted (server.fetch rejects at once with the reason): nobody waits for an answer, and
      // rethrown, msw reported it as an unhandled exception in the handler, with a stack trace.
      if (isInjectedFault(error) || request.signal.aborted) return HttpResponse.error();
      throw error;
    }
  };
  return [http.all(new RegExp(`^${root}(?:/.*)?$`), resolver)];
}
