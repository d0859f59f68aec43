/**
 * The client's one error hierarchy. Every failure a user can see is a {@link PetStoreError}; the
 * transport's own errors are wrapped at the boundary and never reach users. Every class takes one
 * init object, and one table maps an HTTP status to its class.
 *
 * Fields the constructor assigns are `declare`d: the constructor creates them, in the order
 * declared, and no empty class field is emitted for each (bytes in every browser bundle).
 *
 * @module
 */
import { ErrorRecordSchema, formatIssues, type ValidationIssue } from '../schemas/index.js';
import { retryAfterNow } from './headers.js';

/** Which call failed: the client method and the request it sent (never its headers or key). */
export interface CallInfo {
  /** The client method, such as `listPets`. */
  readonly operation: string;
  /** The HTTP method. */
  readonly method: string;
  /** The request URL, query included; an API key it holds (a query value, a path segment of `baseUrl`) shows as `[redacted]`. */
  readonly url: string;
}

/** What every {@link PetStoreError} is made from. */
export interface PetStoreErrorInit {
  /** The message, saying what happened and what to do. */
  message: string;
  /** The underlying error, when there is one. */
  cause?: unknown;
}

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

  /** Creates the error from its init object. */
  constructor(init: PetStoreErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
  }

  /** What `JSON.stringify(error)` shows: name, message, and `code` and `status` where the error has them. */
  toJSON(): { name: string; message: string; code?: string; status?: number } {
    const { code, status } = this as { code?: string; status?: number };
    return { name: this.name, message: this.message, ...(code === undefined ? {} : { code }), ...(status === undefined ? {} : { status }) };
  }
}

/** What a {@link ValidationError} is made from. */
export interface ValidationErrorInit extends Omit<PetStoreErrorInit, 'message'> {
  /** The message; built from `issues` when absent or `undefined`. */
  message?: string | undefined;
  /** Each problem found. */
  issues: readonly ValidationIssue[];
}

/** An argument or option was invalid; nothing was sent. `issues` says which field and why. */
export class ValidationError extends PetStoreError {
  override readonly name = 'ValidationError' as const;
  /** Each problem found, with its path and a message. */
  declare readonly issues: readonly ValidationIssue[];

  /** Creates the error; the message is built from `issues` when not given. */
  constructor(init: ValidationErrorInit) {
    super({ ...init, message: init.message ?? formatIssues(init.issues) });
    this.issues = init.issues;
  }
}

/** What a {@link ResponseValidationError} is made from. */
export interface ResponseValidationErrorInit extends PetStoreErrorInit {
  /** Each mismatch found. */
  issues: readonly ValidationIssue[];
  /** The body as received. */
  body: unknown;
  /** The HTTP status. */
  status: number;
  /** The call. */
  call: CallInfo;
}

/**
 * A response did not match the API's schema (or was not JSON). `body` holds the raw response
 * body, as text when it was not JSON.
 */
export class ResponseValidationError extends PetStoreError {
  override readonly name = 'ResponseValidationError' as const;
  /** Each mismatch found, with its path and a message. */
  declare readonly issues: readonly ValidationIssue[];
  /** The body as received (the API key hidden, should the service echo it): parsed JSON, or the text when it was not JSON. */
  declare readonly body: unknown;
  /** The HTTP status of the response. */
  declare readonly status: number;
  /** The HTTP method of the call. */
  declare readonly method: string;
  /** The URL of the call. */
  declare readonly url: string;

  /** Creates the error from its init object. */
  constructor(init: ResponseValidationErrorInit) {
    super(init);
    this.issues = init.issues;
    this.body = init.body;
    this.status = init.status;
    this.method = init.call.method;
    this.url = init.call.url;
  }
}

/** What a {@link ConnectionError} is made from. */
export interface ConnectionErrorInit extends PetStoreErrorInit {
  /** The call, when the error belongs to one. */
  call?: CallInfo | undefined;
  /** Whether the request may have reached the service and been acted on. */
  mayHaveSucceeded: boolean;
  /** The response's status, when its head arrived before the failure. */
  status?: number | undefined;
  /** The response's headers, when its head arrived before the failure. */
  headers?: Headers | undefined;
}

/**
 * The request could not be completed: the connection failed or was cut, or the host refused
 * the request (a Deno permission, say). Its `cause` is what `fetch` threw, or, when that quoted
 * the API key (Deno's fetch quotes the URL), a copy of the same class showing `[redacted]`.
 */
export class ConnectionError extends PetStoreError {
  override readonly name: string = 'ConnectionError';
  /**
   * Whether the request may have reached the service and been acted on. After a `createPet`
   * that failed this way, the pet may have been created: list pets to check before creating it
   * again (see the errors guide).
   */
  declare readonly mayHaveSucceeded: boolean;
  /** The response's status, when its head arrived before the connection failed (a 201 whose body was cut, say). */
  declare readonly status: number | undefined;
  /** The response's headers (with `Location` after a 201), when its head arrived before the failure. */
  declare readonly headers: Headers | undefined;
  /** The HTTP method of the call. */
  declare readonly method: string | undefined;
  /** The URL of the call. */
  declare readonly url: string | undefined;

  /** Creates the error from its init object. */
  constructor(init: ConnectionErrorInit) {
    super(init);
    this.mayHaveSucceeded = init.mayHaveSucceeded;
    this.status = init.status;
    this.headers = init.headers;
    this.method = init.call?.method;
    this.url = init.call?.url;
  }
}

/** An attempt took longer than the `timeout` option allows. */
export class TimeoutError extends ConnectionError {
  override readonly name = 'TimeoutError' as const;
}

/** What an {@link AbortError} is made from. */
export interface AbortErrorInit extends PetStoreErrorInit {
  /** The call the caller aborted. */
  call: CallInfo;
  /** Whether a request was in flight, or answered, when the signal aborted. */
  mayHaveSucceeded: boolean;
}

/**
 * The caller's `signal` aborted the call. `cause` is the signal's reason (what was passed to
 * `controller.abort(reason)`, or the runtime's `AbortError`); the `name` is `'AbortError'`, as
 * code that ignores aborts by name expects.
 */
export class AbortError extends PetStoreError {
  override readonly name = 'AbortError' as const;
  /**
   * Whether the request had left when the signal aborted, so the service may have acted on it.
   * After a `createPet`, list pets to check before creating it again (see the errors guide).
   */
  declare readonly mayHaveSucceeded: boolean;
  /** The HTTP method of the call. */
  declare readonly method: string;
  /** The URL of the call. */
  declare readonly url: string;

  /** Creates the error from its init object. */
  constructor(init: AbortErrorInit) {
    super(init);
    this.mayHaveSucceeded = init.mayHaveSucceeded;
    this.method = init.call.method;
    this.url = init.call.url;
  }
}

/**
 * What {@link ApiError.generate} and the `ApiError` classes are made from; a class of one status
 * (`NotFoundError`) takes that status only, which its `status` then reads.
 */
export interface ApiErrorInit<S extends number = number> {
  /** The HTTP status. */
  status: S;
  /** The response headers. */
  headers: Headers;
  /** The parsed body: an Error record when the server sent one, else whatever arrived. */
  body: unknown;
  /** The call that got the response; its description leads the message. */
  call?: CallInfo | undefined;
}

/**
 * The service answered with an error status. Subclasses name the common ones; use
 * {@link ApiError.generate} to get the right class for a status.
 */
export class ApiError<S extends number = number> extends PetStoreError {
  override readonly name: string = 'ApiError';
  /**
   * The HTTP status: a literal on the subclasses (a `NotFoundError`'s is `404`), else a number.
   * (`instanceof` narrows a generic class to `ApiError<any>`; written this way, `status` is then
   * `number`, not `any`.)
   */
  declare readonly status: number extends S ? number : S;
  /** The Error record's machine-readable code, or a code derived from the status when the body had none. */
  declare readonly code: string;
  /** The response headers (the API key hidden, should one echo it; the request's headers are never kept). */
  declare readonly headers: Headers;
  /** The body as received (the API key hidden, should the service echo it): the Error record, other JSON, or text. */
  declare readonly body: unknown;
  /** The response's `X-Request-Id`, to quote when reporting a problem. */
  declare readonly requestId: string | undefined;
  /** The HTTP method of the call. */
  declare readonly method: string | undefined;
  /** The URL of the call (it never holds the key). */
  declare readonly url: string | undefined;

  /** Creates the error; prefer {@link ApiError.generate}, which picks the subclass. */
  constructor(init: ApiErrorInit<S>) {
    const record = ErrorRecordSchema.safeParse(init.body);
    const requestId = init.headers.get('X-Request-Id') ?? undefined;
    // A 404 the API did not write (no Error record) is most often a baseUrl that points elsewhere.
    const elsewhere = init.status === 404 && init.call ? ` Nothing answers ${init.call.url.replace(/\?.*$/, '')}: check that baseUrl points at the Animal Store API.` : '';
    // A bare 429 (the spec does not say one carries an Error record) or a gateway's 401 still says what to do.
    const wait = init.status === 429 ? retryAfterNow(init.headers) : undefined;
    const hint =
      init.status === 429
        ? `: the rate limit is exceeded. ${!wait ? 'Wait before sending again' : `Retry after ${Math.ceil(wait / 1000)} s`}; sending sooner may get the key banned`
        : init.status === 401
          ? ': the API key is missing or invalid. Check the key'
          : '';
    const text = record.success ? record.data.message : `The service answered HTTP ${init.status} without an Error record${hint}.${elsewhere}`;
    const call = init.call ? `${describeCall(init.call)}: ` : '';
    super({ message: `${call}${text}${requestId ? ` (request id ${requestId})` : ''}` });
    this.status = init.status as number extends S ? number : S;
    this.code = record.success ? record.data.code : (DEFAULT_CODES[init.status] ?? `http_${init.status}`);
    this.headers = init.headers;
    this.body = init.body;
    this.requestId = requestId;
    this.method = init.call?.method;
    this.url = init.call?.url;
  }

  /**
   * Builds the error class that matches `status`: 400, 401, 404, 429 and 5xx (and past 599) get
   * their own subclass; any other status an `ApiError`. Works without an Error record body.
   *
   * @example
   * ```ts
   * const error = ApiError.generate({ status: 429, headers: new Headers(), body: '' });
   * error instanceof RateLimitError; // true
   * ```
   */
  static generate(init: ApiErrorInit): ApiError {
    const Class = init.status >= 500 ? InternalServerError : (BY_STATUS[init.status] ?? ApiError);
    return new Class(init);
  }
}

/** 400: the service rejected the request's values. */
export class BadRequestError extends ApiError<400> {
  override readonly name = 'BadRequestError' as const;
}

/** 401: the API key is missing or invalid. */
export class AuthenticationError extends ApiError<401> {
  override readonly name = 'AuthenticationError' as const;
}

/** 404: the requested resource does not exist. */
export class NotFoundError extends ApiError<404> {
  override readonly name = 'NotFoundError' as const;
}

/**
 * 5xx: the service failed. GET requests are retried; `createPet` never is. A status past 599,
 * which HTTP does not define, is one too (RFC 9110 says to read it as a 5xx); `status` is the one sent.
 */
export class InternalServerError extends ApiError {
  override readonly name = 'InternalServerError' as const;
}

/**
 * 429, as the service answered it: the rate limit is spent, or the key is banned (`code` is
 * `api_key_banned`). A call the client refused without sending is a {@link ThrottledError}.
 */
export class RateLimitError extends ApiError<429> {
  override readonly name = 'RateLimitError' as const;

  /**
   * How long the service asked to wait, in milliseconds, from `Retry-After` (seconds or an
   * HTTP-date measured against the response's `Date`), when it said so validly and named a wait
   * (`Retry-After: 0` names none).
   */
  get retryAfterMs(): number | undefined {
    return retryAfterNow(this.headers);
  }
}

/** What a {@link ThrottledError} is made from. */
export interface ThrottledErrorInit extends PetStoreErrorInit {
  /** Why nothing was sent: a 429's window, a ban, or a spent budget. */
  code: 'rate_limited' | 'api_key_banned' | 'budget_spent';
  /** How long until a request may be sent, in milliseconds. */
  retryAfterMs: number;
  /** The call. */
  call: CallInfo;
}

/**
 * The client refused to send the call: the rate-limit window it knows of lasts longer than
 * `maxRetryDelay`, requests in flight (or the coordinator, for the `reason` it gave: the Redis
 * fallback while Redis does not answer) held it back for longer than its
 * `timeout` (or `maxRetryDelay` when that is longer), probes of the unknown budget went
 * unanswered and the next would wait past that same limit, or the call already waited as often
 * as `maxRetries` allows. Nothing was sent,
 * so it has no status and no headers; `retryAfterMs` says when sending may work.
 */
export class ThrottledError extends PetStoreError {
  override readonly name = 'ThrottledError' as const;
  /** `rate_limited` (a 429's window), `api_key_banned` (the service banned the key), or `budget_spent` (the announced budget is used up, or held by requests in flight for longer than the call's `timeout`, or `maxRetryDelay` when that is longer, or unknown while the requests probing it go unanswered). */
  declare readonly code: ThrottledErrorInit['code'];
  /** How long until a request may be sent, in milliseconds. */
  declare readonly retryAfterMs: number;
  /** When a request may be sent, on this machine's clock. */
  declare readonly retryAt: Date;
  /** The HTTP method of the call. */
  declare readonly method: string;
  /** The URL of the call. */
  declare readonly url: string;

  /** Creates the error from its init object. */
  constructor(init: ThrottledErrorInit) {
    super(init);
    this.code = init.code;
    this.retryAfterMs = init.retryAfterMs;
    this.retryAt = new Date(Date.now() + init.retryAfterMs);
    this.method = init.call.method;
    this.url = init.call.url;
  }
}

/** `listPets (GET /pets)`: how messages name a call. */
export function describeCall(call: CallInfo): string {
  const path = call.url.replace(/^[^?]*\/v1(?=\/)/, '').replace(/\?.*$/, '');
  return `${call.operation} (${call.method} ${path})`;
}

const DEFAULT_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'invalid_api_key',
  404: 'not_found',
  429: 'rate_limited',
};

// Each class under its own status: `generate` builds one only with the status it is listed under.
const BY_STATUS = {
  400: BadRequestError,
  401: AuthenticationError,
  404: NotFoundError,
  429: RateLimitError,
} as Record<number, new (init: ApiErrorInit) => ApiError>;
