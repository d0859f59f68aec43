/**
 * What a browser bundle gets for `@animal-store/sdk/node` (its `browser` export condition): an
 * error that says which entry to use instead, rather than Node code a bundler cannot run.
 *
 * @internal
 * @module
 */
const MESSAGE =
  '@animal-store/sdk/node runs only in Node: it starts a node:http server. In a browser, use @animal-store/sdk/msw with msw/browser, or createReferenceServer() from @animal-store/sdk/server in-process.';

// Thrown when the bundle loads, so the mistake shows at once, not at the first call.
throw new Error(MESSAGE);

/** Throws: this entry runs only in Node. */
export function startReferenceServer(): never {
  throw new Error(MESSAGE);
}
