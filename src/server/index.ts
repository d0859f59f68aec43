/**
 * The reference server: the whole Animal Store API in memory, as a web-standard `fetch` handler.
 * Use it offline, in tests (through `@animal-store/sdk/msw` or `@animal-store/sdk/node`), or from the
 * `petstore-server` CLI.
 *
 * @module @animal-store/sdk/server
 */
export { createReferenceServer } from './server.js';
export { GET_PET_DEPRECATED_AT } from './routes.js';
export { MAX_BODY_BYTES } from './http.js';
export type { RateLimitHeaders } from './http.js';
export type { BanEvent, ReferenceServer, ServerInspection } from './server.js';
export type { ServerClock } from './admin.js';
export type { RequestRecord } from './journal.js';
export { DEMO_API_KEY, PLANS, DEFAULTS as SERVER_DEFAULTS } from './options.js';
export type { PlanName, Quota, ReferenceServerOptions, SeedPet } from './options.js';
export type { KeyStats } from './rate-limiter.js';
export { InjectedFault, isInjectedFault } from './faults.js';
export type { FaultKind, FaultOptions } from './faults.js';
export { openApiDocument } from './openapi.js';
export type { OpenApiDocument, OpenApiOperation } from './openapi.js';
// PetStore, RateLimiter, the routes, the reply helpers and createServerCore (the node adapter's
// fast path) are internal on purpose: the server's contract is its HTTP behaviour, not its parts.
