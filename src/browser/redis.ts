/**
 * What a browser bundle gets for `@animal-store/sdk/redis` (its `browser` export condition): an
 * error that says which entry to use instead, rather than Node code a bundler cannot run.
 *
 * @internal
 * @module
 */
const MESSAGE =
  '@animal-store/sdk/redis runs only in Node: it coordinates processes through Redis. A browser app needs no coordinator: every call of one PetStoreClient is already coordinated.';

// Thrown when the bundle loads, so the mistake shows at once, not at the first call.
throw new Error(MESSAGE);

/** Throws: this entry runs only in Node. */
export function createRedisCoordinator(): never {
  throw new Error(MESSAGE);
}
