/**
 * The Animal Store SDK: {@link PetStoreClient}, its errors, and the API's types.
 *
 * The reference server (`@animal-store/sdk/server`), its msw handlers (`@animal-store/sdk/msw`), the
 * node:http adapter (`@animal-store/sdk/node`) and the Redis coordinator for many processes with one
 * key (`@animal-store/sdk/redis`) are separate entry points.
 *
 * @module @animal-store/sdk
 */
export { PetStoreClient } from './client/client.js';
export type { ApiResponse, WithResponse } from './client/client.js';
export { DEFAULTS } from './client/options.js';
export type { ClientOptions, Fetch, Logger, LogLevel, RequestOptions } from './client/options.js';
export {
  AbortError,
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  InternalServerError,
  NotFoundError,
  PetStoreError,
  RateLimitError,
  ResponseValidationError,
  ThrottledError,
  TimeoutError,
  ValidationError,
} from './client/errors.js';
export type {
  AbortErrorInit,
  ApiErrorInit,
  CallInfo,
  ConnectionErrorInit,
  PetStoreErrorInit,
  ResponseValidationErrorInit,
  ThrottledErrorInit,
  ValidationErrorInit,
} from './client/errors.js';
export type {
  AcquireDecision,
  AcquireRequest,
  CoordinatorScope,
  RateLimitCoordinator,
  RateLimitObservation,
  RateLimitState,
  RateLimitStore,
} from './client/coordinator.js';
export { createMemoryCoordinator } from './client/memory-coordinator.js';
export type { ClientEventMap } from './client/events.js';
export type { DeprecationNotice } from './client/deprecation.js';
// The schemas the public types are inferred from, for users who validate their own data with them.
export {
  ErrorRecordSchema,
  LIST_LIMIT,
  ListPetsQuerySchema,
  NewPetSchema,
  PET_STATUSES,
  PetSchema,
  PetStatusSchema,
} from './schemas/index.js';
export type { ListPetsQuery, NewPet, Pet, PetStatus, ValidationIssue, ErrorRecord } from './schemas/index.js';
// Internal on purpose: the header parsing, the retry rules and the deprecation reporter. Their
// behaviour is documented on the options; their shape may change.
