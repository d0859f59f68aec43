/**
 * The API's shapes, defined once with `zod/mini`.
 *
 * The client parses responses with these schemas, the reference server validates requests with
 * them, and the OpenAPI document is generated from them: a field changes here and nowhere else.
 * `zod/mini` (not classic `zod`) keeps browser bundles small; see docs/decisions.md.
 *
 * @module
 */
import * as z from 'zod/mini';
import { clip } from '../redact.js';

/** The availability states an animal can be in. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;

/** Schema of a pet's availability status: `available`, `pending` or `sold`. */
export const PetStatusSchema = z.enum(PET_STATUSES);

/** An animal's availability status. */
export type PetStatus = z.infer<typeof PetStatusSchema>;

/** The smallest and largest page size `listPets` accepts, and the default. */
export const LIST_LIMIT = { min: 1, max: 100, default: 20 } as const;

/**
 * An int64 identifier. Only safe integers are accepted: an id beyond 2^53 would be rounded by
 * `JSON.parse`, so it is reported as invalid instead of silently becoming another id. Its JSON
 * Schema says `format: int64`, the spec's format, so clients generated from the OpenAPI document
 * hold it in 64 bits (without a format, most generators pick a 32-bit integer).
 */
const int64 = () => {
  const schema = z.int();
  INT64.add(schema);
  return schema;
};
/**
 * The spec's int64 schemas, which the reference server's OpenAPI document gives `format: int64`.
 * A mark of our own, not zod's metadata registry, which would add 0.3 KB gzip to every client bundle
 * for what only the server's document reads.
 */
const INT64 = new WeakSet<object>();

/** Whether `schema` is one of the spec's int64s (the pet ids, `petId` and the category ids). @internal */
export const isInt64 = (schema: object): boolean => INT64.has(schema);

/** Schema of an animal record as the service returns it. Unknown extra fields are dropped. */
export const PetSchema = z.object({
  id: int64(),
  name: z.string(),
  categoryId: int64(),
  status: z.optional(PetStatusSchema),
});

/** An animal record as returned by the service. */
export interface Pet {
  /** Unique identifier, assigned by the service when the pet is created (int64). */
  id: number;
  /** The animal's name. */
  name: string;
  /** Identifier of the category the animal belongs to (int64). */
  categoryId: number;
  /** Its availability: `available`, `pending` or `sold`. Absent when none was given; the spec states no default. */
  status?: PetStatus | undefined;
}

/**
 * Schema of the body of `createPet`: the spec's NewAnimal. `id` is refused (the spec says clients
 * do not send it; the service assigns it). A field the spec does not name is passed through as
 * given, for the service to decide on: that rule is the service's, not the spec's.
 */
export const NewPetSchema = z.looseObject({
  name: z.string(),
  categoryId: int64(),
  status: z.optional(PetStatusSchema),
  id: z.optional(z.never()),
});


/** The body of `createPet`: a new animal, without the `id` the service assigns. */
export interface NewPet {
  /** The animal's name. Required. */
  name: string;
  /** Identifier of the category it belongs to (int64). Required. */
  categoryId: number;
  /** Its availability: `available`, `pending` or `sold`. Optional, with no default. */
  status?: PetStatus | undefined;
}

/** Schema of a list response: an array of animal records. */
export const PetListSchema = z.array(PetSchema);

/**
 * Schema of the query of `listPets`. A parameter the spec does not name is passed through as
 * given: the service decides on it (the reference server ignores it).
 */
export const ListPetsQuerySchema = z.looseObject({
  // Not an int64: the bounds come first and end the check, so 1e20 is told it is over 100, not
  // also over 2^53 − 1 (z.int() alone reported both).
  limit: z.optional(z.number().check(z.minimum(LIST_LIMIT.min, { abort: true }), z.maximum(LIST_LIMIT.max, { abort: true }), z.int())),
  status: z.optional(PetStatusSchema),
});

/** The query of `listPets`. */
export interface ListPetsQuery {
  /** The most pets to return, 1 to 100; the service's default is 20. There is no other paging. */
  limit?: number | undefined;
  /** Only pets with this status; all pets when absent. */
  status?: PetStatus | undefined;
}

/** Schema of a pet identifier in a path: an int64 (as a safe integer); the spec sets no sign. */
export const PetIdSchema = int64();

/** Schema of the Error record every error response carries. */
export const ErrorRecordSchema = z.object({
  code: z.string(),
  message: z.string(),
  status: z.int(),
});

/** The Error record every error response carries. */
export interface ErrorRecord {
  /** A machine-readable code, such as `invalid_api_key` or `rate_limited`. */
  code: string;
  /** A human-readable description. */
  message: string;
  /** The HTTP status of the response. */
  status: number;
}

/**
 * Schema of the orders listing: any JSON. The spec shows nothing of its payload (not even that it
 * is an array), so the client takes what the service answers rather than refuse a listing it
 * cannot know the shape of.
 */
export const OrderListSchema = z.unknown();

/** The rate-limit and deprecation headers every browser client needs to read. */
export const EXPOSED_HEADERS = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Deprecation',
  'Sunset',
  'Link',
  'Location',
  'RateLimit',
  'RateLimit-Policy',
  'X-Request-Id',
  'Date',
] as const;

/** When `GET /pets/{petId}` is removed: 5 December 2030, 00:00 UTC. */
export const GET_PET_SUNSET = new Date(Date.UTC(2030, 11, 5));


/** One problem found while validating a value: where it is and what is wrong. */
export type ValidationIssue = z.core.$ZodIssue;

/**
 * Words for zod's issues. `zod/mini` ships no locale (that keeps it small), so without this every
 * issue would read "Invalid input".
 */
const issueMessage = (issue: z.core.$ZodRawIssue): string => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      // The one field a request must leave out: NewPet's id.
      if (issue.expected === 'never') return 'must be left out: the service assigns it';
      // Every number of the API is an int64: z.int() reports a non-number as expected "number".
      if (issue.expected === 'int' || issue.expected === 'number') return 'must be an integer';
      return `must be ${issue.expected === 'array' || issue.expected === 'object' ? 'an' : 'a'} ${issue.expected}`;
    case 'too_small':
      return issue.origin === 'string'
        ? `must be at least ${issue.minimum} character${issue.minimum === 1 ? '' : 's'} long`
        : `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'string'
        ? `must be at most ${issue.maximum} characters long`
        : `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${issue.maximum}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'unrecognized_keys': {
      // Bounded: a body may hold thousands of unknown fields, each of any length.
      const { keys } = issue;
      const named = keys.slice(0, 3).map((key) => JSON.stringify(clip(key, 40)));
      return `has unknown field${keys.length === 1 ? '' : 's'} ${named.join(', ')}${keys.length > 3 ? ` and ${keys.length - 3} more` : ''}`;
    }
    default:
      return 'is invalid';
  }
};

/** A validation result: the parsed value, or the issues and a message that names each field. */
export type Checked<T> =
  | { success: true; data: T }
  | { success: false; issues: ValidationIssue[]; message: string };

/**
 * Validates `input` against one of the API's schemas, with messages that name the field and say
 * what it must be, such as `categoryId must be an integer`; `what` names the whole (`body`, `query`).
 */
export function check<S extends z.ZodMiniType>(schema: S, input: unknown, what: string): Checked<z.infer<S>> {
  const result = schema.safeParse(input, { error: issueMessage });
  if (result.success) return { success: true, data: result.data };
  const issues = result.error.issues;
  return { success: false, issues, message: formatIssues(issues, what) };
}

/** Joins issues into one sentence: `name is required; status must be one of "available", …`. */
export function formatIssues(issues: readonly ValidationIssue[], what = 'value'): string {
  return issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : what} ${issue.message}`)
    .join('; ');
}

// The interfaces above are what the API reference shows; these checks keep each one the same as
// the type its schema infers, so that a field still changes in one place (a mismatch fails tsc).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
/** A request schema's fields, without the index signature of those that pass unknown fields through. */
type Named<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
/**
 * Compile-time only. One `Holds` per pair: joined with `&`, `true & false` is `never`, which
 * passes `extends true`, so a mismatch went unnoticed. @internal
 */
export type SchemasMatchTheirInterfaces = [
  Holds<Same<Pet, z.infer<typeof PetSchema>>>,
  Holds<Same<NewPet, Omit<Named<z.infer<typeof NewPetSchema>>, 'id'>>>,
  Holds<Same<ListPetsQuery, Named<z.infer<typeof ListPetsQuerySchema>>>>,
  Holds<Same<ErrorRecord, z.infer<typeof ErrorRecordSchema>>>,
];
