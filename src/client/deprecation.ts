/**
 * Deprecation notices: warned once per process by default, or handed to `onDeprecation` once
 * per client and operation.
 *
 * @module
 */
import { GET_PET_SUNSET } from '../schemas/index.js';
import { parseHttpDate } from './headers.js';
import { isolated, printedWarning } from '../runtime.js';

/** What the client reports when an operation is deprecated. */
export interface DeprecationNotice {
  /** The client method, such as `getPet`. */
  operation: string;
  /** A sentence saying what is deprecated, until when, and what to use instead. */
  message: string;
  /** When the operation stops working, if known. */
  sunset?: Date | undefined;
  /** The value of the response's `Deprecation` header, when the notice came from a response; an API key it quotes shows as `[redacted]`. */
  deprecation?: string | undefined;
  /** The value of the response's `Link` header (its successor), when the notice came from a response; an API key it quotes shows as `[redacted]`. */
  link?: string | undefined;
}

/** Codes already warned about in this process, so `emitWarning` fires once per operation. */
const warnedInProcess = new Set<string>();

/** The warning code of an operation: `getPet` becomes `PETSTORE_GET_PET`. */
export const warningCode = (operation: string): string =>
  `PETSTORE_${operation.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`;

/** The notice for `getPet`, reported on its first call. */
export const GET_PET_NOTICE: DeprecationNotice = Object.freeze({
  operation: 'getPet',
  message: `PetStoreClient.getPet() is deprecated and stops working on ${GET_PET_SUNSET.toISOString().slice(0, 10)}. Keep the id that createPet returns, or find the pet with listPets.`,
  sunset: GET_PET_SUNSET,
});

/**
 * Builds the notice for a response that carries `Deprecation` or `Sunset`, or `undefined`. Its
 * header values pass through `redact`: a `Link` may quote a base URL that holds the API key.
 */
export function noticeFromHeaders(operation: string, headers: Headers, redact: (text: string) => string): DeprecationNotice | undefined {
  const deprecation = headers.get('Deprecation') ?? undefined;
  const sunsetText = headers.get('Sunset') ?? undefined;
  if (deprecation === undefined && sunsetText === undefined) return undefined;
  // RFC 8594: an IMF-fixdate. Date.parse would read "1.5" as a date in 2001.
  const sunsetMs = sunsetText === undefined ? undefined : parseHttpDate(sunsetText);
  const sunset = sunsetMs === undefined ? undefined : new Date(sunsetMs);
  const link = headers.has('Link') ? redact(headers.get('Link')!) : undefined;
  const message =
    `The service marks PetStoreClient.${operation}() as deprecated` +
    (sunset ? `; it stops working on ${sunset.toISOString().slice(0, 10)}` : '') +
    (link ? `. Successor: ${link}` : '') +
    '.';
  return { operation, message, sunset, deprecation: deprecation === undefined ? undefined : redact(deprecation), link };
}

/**
 * Warns through `process.emitWarning` where the runtime prints it (so Node's `--no-deprecation`
 * applies), else `console.warn` (browsers, workerd), once per process.
 */
function warnOnce(notice: DeprecationNotice): void {
  const code = warningCode(notice.operation);
  if (warnedInProcess.has(code)) return;
  warnedInProcess.add(code);
  const emitWarning = printedWarning();
  if (typeof emitWarning === 'function') emitWarning(notice.message, { type: 'DeprecationWarning', code });
  else console.warn(`DeprecationWarning: ${notice.message}`);
}

/**
 * Reports each operation's deprecation once per client to `onDeprecation`, or, without it,
 * once per process through the default warning.
 */
export class DeprecationReporter {
  #reported = new Set<string>();
  readonly #onDeprecation: ((notice: DeprecationNotice) => void) | undefined;
  /** Also told of every notice: the client's logger, at `warn`. */
  readonly #log: (notice: DeprecationNotice) => void;

  constructor(onDeprecation: ((notice: DeprecationNotice) => void) | undefined, log: (notice: DeprecationNotice) => void) {
    this.#onDeprecation = onDeprecation;
    this.#log = log;
  }

  /** Reports `notice` unless its operation was already reported by this client. */
  report(notice: DeprecationNotice | undefined): void {
    if (!notice || this.#reported.has(notice.operation)) return;
    this.#reported.add(notice.operation);
    this.#log(notice);
    // A callback that throws is reported, like a listener: it must not fail the call. So is a
    // default warning that throws (`node --throw-deprecation`): a getPet it failed was a raw
    // DeprecationWarning, and one its headers announce read as a cut connection, then retried.
    isolated(() => (this.#onDeprecation ? this.#onDeprecation(notice) : warnOnce(notice)));
  }
}
