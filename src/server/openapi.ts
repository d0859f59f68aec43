import * as z from 'zod/mini';
import {
  ErrorRecordSchema,
  GET_PET_SUNSET,
  isInt64,
  LIST_LIMIT,
  PetSchema,
  PetStatusSchema,
} from '../schemas/index.js';
import { ServerNewPetSchema } from './rules.js';

const schema = (s: z.ZodMiniType, io: 'input' | 'output') => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, {
    io,
    // The spec's int64 fields say so, as petId does: without a format, generators pick 32 bits.
    override: ({ zodSchema, jsonSchema }) => {
      if (isInt64(zodSchema)) jsonSchema.format = 'int64';
    },
  }) as Record<string, unknown>;
  return rest;
};

const rateLimitHeaders = {
  'X-RateLimit-Limit': { description: 'The request limit currently in force.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests remaining.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix timestamp (seconds) at which the limit resets.', schema: { type: 'integer' } },
};
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** A response with the rate-limit headers, and `headers` (those its operation adds), and a JSON body. */
const ok = (description: string, body: unknown, headers?: Record<string, unknown>) => ({
  description,
  headers: { ...rateLimitHeaders, ...headers },
  content: { 'application/json': { schema: body } },
});
const errorResponse = (description: string, headers?: Record<string, unknown>) => ok(description, ref('Error'), headers);
const tooMany = /* @__PURE__ */ errorResponse('Rate limit exceeded, or the API key is temporarily banned.', {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
});
/** What the deprecated `getPet` answers with, its errors included (not a 401 or 429: those come before it runs). */
const deprecationHeaders = {
  Deprecation: { description: 'When the operation was deprecated (RFC 9745): `@` and Unix seconds.', required: true, schema: { type: 'string' } },
  Sunset: { description: 'When the operation is removed (RFC 8594), an HTTP-date.', required: true, schema: { type: 'string' } },
  Link: { description: 'Its successor, GET /pets, with rel="successor-version".', required: true, schema: { type: 'string' } },
};

/** One operation of the {@link OpenApiDocument}, as the OpenAPI 3.1 specification writes it. */
export interface OpenApiOperation {
  /** The client method of the same name: `listPets`, `createPet`, `getPet`, `listOrders`. */
  operationId: string;
  /** A few words on what it does. */
  summary: string;
  /** Whether the operation is deprecated (`getPet`); absent when it is not. */
  deprecated?: boolean;
  /** Why it is deprecated, and what to use instead. */
  description?: string;
  /** Its query or path parameters, each an OpenAPI Parameter Object. */
  parameters?: Record<string, unknown>[];
  /** Its body, an OpenAPI Request Body Object. */
  requestBody?: Record<string, unknown>;
  /** Each status it may answer, with an OpenAPI Response Object. */
  responses: Record<string, Record<string, unknown>>;
}

/** The OpenAPI 3.1 document {@link openApiDocument} returns and `GET /v1/openapi.json` serves. */
export interface OpenApiDocument {
  /** The version of the OpenAPI specification. */
  openapi: '3.1.0';
  /** The API's title and version. */
  info: {
    /** The API's name: `Animal Store Service`. */
    title: string;
    /** The API's version (`1.0.0`), not the SDK's. */
    version: string;
  };
  /** Where the API is served, relative to the host: `/v1` here; `GET …/v1/openapi.json` names the base path it was fetched under. */
  servers: {
    /** The base path. */
    url: string;
  }[];
  /** What every operation requires: the bearer API key. */
  security: Record<string, string[]>[];
  /** The API's paths and their operations, by method. */
  paths: {
    /** `listPets` and `createPet`. */
    '/pets': { get: OpenApiOperation; post: OpenApiOperation };
    /** `getPet`, deprecated. */
    '/pets/{petId}': { get: OpenApiOperation };
    /** `listOrders`. */
    '/store/orders': { get: OpenApiOperation };
  };
  /** What the document refers to by `$ref`. */
  components: {
    /** The bearer API key scheme, `bearerAuth`. */
    securitySchemes: Record<string, Record<string, unknown>>;
    /** The JSON Schemas of `Pet`, `NewPet`, `PetStatus` and `Error`. */
    schemas: Record<string, Record<string, unknown>>;
  };
}

let cached: OpenApiDocument | undefined;

/** The OpenAPI 3.1 document of the API, generated from the shared schemas. The same object on every call. */
export function openApiDocument(): OpenApiDocument {
  return (cached ??= {
    openapi: '3.1.0',
    info: { title: 'Animal Store Service', version: '1.0.0' },
    servers: [{ url: '/v1' }],
    security: [{ bearerAuth: [] }],
    paths: {
      '/pets': {
        get: {
          operationId: 'listPets',
          summary: 'List animals',
          parameters: [
            {
              name: 'limit',
              in: 'query',
              schema: { type: 'integer', minimum: LIST_LIMIT.min, maximum: LIST_LIMIT.max, default: LIST_LIMIT.default },
            },
            { name: 'status', in: 'query', schema: ref('PetStatus') },
          ],
          responses: {
            200: ok('A page of animals in ascending id order.', { type: 'array', items: ref('Pet') }),
            400: errorResponse('A query parameter is invalid.'),
            401: errorResponse('The API key is missing or invalid.'),
            429: tooMany,
          },
        },
        post: {
          operationId: 'createPet',
          summary: 'Add an animal',
          requestBody: { required: true, content: { 'application/json': { schema: ref('NewPet') } } },
          responses: {
            201: ok('The animal, with its assigned id.', ref('Pet'), {
              Location: { description: 'The URL of the new animal.', schema: { type: 'string' } },
            }),
            400: errorResponse('The body lacks required fields or holds invalid values.'),
            401: errorResponse('The API key is missing or invalid.'),
            409: errorResponse('No id is left: the largest safe integer (2^53 − 1) is taken.'),
            413: errorResponse('The body is larger than 1 MiB.'),
            415: errorResponse('The body is not JSON, not UTF-8, or has a Content-Encoding other than identity.'),
            429: tooMany,
          },
        },
      },
      '/pets/{petId}': {
        get: {
          operationId: 'getPet',
          summary: 'Get an animal',
          deprecated: true,
          description: `Deprecated; removed on ${GET_PET_SUNSET.toISOString().slice(0, 10)}. Use GET /pets with the status filter.`,
          parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer', format: 'int64' } }],
          responses: {
            200: ok('The animal.', ref('Pet'), deprecationHeaders),
            400: errorResponse('The id is not an int64 in decimal.', deprecationHeaders),
            401: errorResponse('The API key is missing or invalid.'),
            404: errorResponse('No animal has this id.', deprecationHeaders),
            410: errorResponse('The endpoint is past its sunset date.', deprecationHeaders),
            429: tooMany,
          },
        },
      },
      '/store/orders': {
        get: {
          operationId: 'listOrders',
          summary: 'List store orders (their shape is not specified)',
          responses: {
            // Any JSON, as the client reads it: the spec shows nothing of the payload, not even an
            // array (the reference server answers its `orders` option, which is one).
            200: ok('The orders listing; the spec shows nothing of its payload.', {}),
            401: errorResponse('The API key is missing or invalid.'),
            429: tooMany,
          },
        },
      },
    },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: {
        // As input: the spec does not close the records (output would add additionalProperties: false).
        Pet: schema(PetSchema, 'input'),
        // What the server accepts, its own rules included (a name of 1 to 256 characters), so the
        // document does not promise a 201 for a body the server answers with a 400.
        NewPet: schema(ServerNewPetSchema, 'input'),
        PetStatus: schema(PetStatusSchema, 'output'),
        Error: schema(ErrorRecordSchema, 'input'),
      },
    },
  });
}
