/**
 * The client's one error hierarchy. Every failure a user can see is a {@link PetStoreError};
 * ky's own errors are wrapped at the boundary and never reach users.
 *
 * @module
 */
import { ErrorRecordSchema, formatIssues, type ValidationIssue } from '../schemas/index.js';

/**
 * The base class of every error the client throws.
 *
 * @example
 * ```ts
 * try {
 *   await client.listPets();
 * } catch (error) {
 *   if (error instanceof PetStoreError) console.error(error.name, error.message);
 * }
 * ```
 */
export class PetStoreError extends Error {
  /** The class name, set as a literal so it survives minification. */
  override readonly name: string = 'PetStoreError';
}

/**
 * An argument or option was invalid; nothing was sent. `issues` says which field and why.
 */
export class ValidationError extends PetStoreError {
  override readonly name = 'ValidationError';
  /** Each problem found, with its path and a message. */
  readonly issues: readonly ValidationIssue[];

  /** Creates the error; the message is built from `issues` when not given. */
  constructor(issues: readonly ValidationIssue[], message = formatIssues(issues)) {
    super(message);
    this.issues = issues;
  }
}

/**
 * A response did not match the API's schema (or was not JSON). `body` holds the raw response
 * body, as text when it was not JSON.
 */
export class ResponseValidationError extends PetStoreError {
  override readonly name = 'ResponseValidationError';
  /** Each mismatch found, with its path and a message. */
  readonly issues: readonly ValidationIssue[];
  /** The body as received: parsed JSON, or the text when it was not JSON. */
  readonly body: unknown;
  /** The HTTP status of the response. */
  readonly status: number;

  /** Creates the error for a response of `status` whose `body` failed validation. */
  constructor(message: string, issues: readonly ValidationIssue[], body: unknown, status: number) {
    super(message);
    this.issues = issues;
    this.body = body;
    this.status = status;
  }
}

/** The request could not be completed: the connection failed or was cut. */
export class ConnectionError extends PetStoreError {
  override readonly name: string = 'ConnectionError';
}

/** An attempt took longer than the `timeout` option allows. */
export class TimeoutError extends ConnectionError {
  override readonly name = 'TimeoutError';
}

/** What {@link ApiError.generate} needs to build the right error for a response. */
export interface ApiErrorInit {
  /** The HTTP status. */
  status: number;
  /** The response headers. */
  headers: Headers;
  /** The parsed body: an Error record when the server sent one, else whatever arrived. */
  body: unknown;
  /** For 429s: how long the server asked to wait, in milliseconds. */
  retryAfterMs?: number;
}

/**
 * The service answered with an error status. Subclasses name the common ones; use
 * {@link ApiError.generate} to get the right class for a status.
 */
export class ApiError extends PetStoreError {
  override readonly name: string = 'ApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The Error record's machine-readable code, or a code derived from the status when the body had none. */
  readonly code: string;
  /** The response headers (the request's headers, with the API key, are never kept). */
  readonly headers: Headers;
  /** The body as received: the Error record, other JSON, or text. */
  readonly body: unknown;

  /** Creates the error; prefer {@link ApiError.generate}, which picks the subclass. */
  constructor(status: number, code: string, message: string, headers: Headers, body: unknown) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
    this.body = body;
  }

  /**
   * Builds the error class that matches `status`: 400, 401, 404, 429 and 5xx get their own
   * subclass; any other status an `ApiError`. Works without an Error record body.
   *
   * @example
   * ```ts
   * const error = ApiError.generate({ status: 429, headers: new Headers(), body: '' });
   * error instanceof RateLimitError; // true
   * ```
   */
  static generate(init: ApiErrorInit): ApiError {
    const { status, headers, body } = init;
    const record = ErrorRecordSchema.safeParse(body);
    const code = record.success ? record.data.code : (DEFAULT_CODES[status] ?? `http_${status}`);
    const message = record.success ? record.data.message : `The service answered HTTP ${status} without an Error record.`;
    if (status === 429) return new RateLimitError(code, message, headers, body, init.retryAfterMs);
    const Class = status >= 500 ? InternalServerError : (BY_STATUS[status] ?? ApiError);
    return new Class(status, code, message, headers, body);
  }
}

/** 400: the service rejected the request's values. */
export class BadRequestError extends ApiError {
  override readonly name = 'BadRequestError';
}

/** 401: the API key is missing or invalid. */
export class AuthenticationError extends ApiError {
  override readonly name = 'AuthenticationError';
}

/** 404: the requested resource does not exist. */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
}

/** 5xx: the service failed. GET requests are retried; `createPet` never is. */
export class InternalServerError extends ApiError {
  override readonly name = 'InternalServerError';
}

/**
 * 429: the rate limit is spent or the key is banned (`code` is `api_key_banned`). Also thrown
 * without sending when the client knows the wait would exceed `maxRetryDelay`.
 */
export class RateLimitError extends ApiError {
  override readonly name = 'RateLimitError';
  /** How long to wait before the next request may succeed, in milliseconds, when known. */
  readonly retryAfterMs: number | undefined;

  /** Creates the error; `retryAfterMs` comes from `Retry-After` or `X-RateLimit-Reset`. */
  constructor(code: string, message: string, headers: Headers, body: unknown, retryAfterMs?: number) {
    super(429, code, message, headers, body);
    this.retryAfterMs = retryAfterMs;
  }
}

const DEFAULT_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'invalid_api_key',
  404: 'not_found',
  429: 'rate_limited',
};

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  404: NotFoundError,
};
