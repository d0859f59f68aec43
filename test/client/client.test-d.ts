// Compiled with exactOptionalPropertyTypes on (tsconfig.types.json), as users' strictest projects are.
import { describe, expectTypeOf, it } from 'vitest';
import type * as z from 'zod/mini';
import {
  AbortError,
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConnectionError,
  ErrorRecordSchema,
  InternalServerError,
  ListPetsQuerySchema,
  NewPetSchema,
  NotFoundError,
  PetSchema,
  PetStoreClient,
  RateLimitError,
  ResponseValidationError,
  ThrottledError,
  TimeoutError,
  ValidationError,
  createMemoryCoordinator,
  DEFAULTS,
  type ApiResponse,
  type CoordinatorScope,
  type DeprecationNotice,
  type ErrorRecord,
  type ListPetsQuery,
  type LogLevel,
  type NewPet,
  type Pet,
  type PetStatus,
  type RateLimitCoordinator,
  type RateLimitState,
  type ValidationErrorInit,
} from '@animal-store/sdk';

declare const client: PetStoreClient;
declare const input: unknown;
/** An error of any class whose name is one literal. */
declare const literalNamed:
  | ValidationError | ResponseValidationError | TimeoutError | AbortError | BadRequestError | AuthenticationError
  | NotFoundError | InternalServerError | RateLimitError | ThrottledError;

describe('PetStoreClient types', () => {
  it('operations resolve to the API types', () => {
    expectTypeOf(client.listPets).returns.resolves.toEqualTypeOf<Pet[]>();
    expectTypeOf(client.createPet).returns.resolves.toEqualTypeOf<Pet>();
    expectTypeOf(client.getPet).returns.resolves.toEqualTypeOf<Pet>();
    expectTypeOf(client.listOrders).returns.resolves.toEqualTypeOf<unknown>();
  });

  it('withResponse resolves to the data with the Response', () => {
    expectTypeOf(client.withResponse.createPet).returns.resolves.toEqualTypeOf<ApiResponse<Pet>>();
    expectTypeOf<ApiResponse<Pet>['response']>().toEqualTypeOf<Response>();
  });

  it('arguments are typed: status is the enum, NewPet has no id', () => {
    expectTypeOf(client.listPets).parameter(0).toEqualTypeOf<{ limit?: number | undefined; status?: PetStatus | undefined } | undefined>();
    expectTypeOf<PetStatus>().toEqualTypeOf<'available' | 'pending' | 'sold'>();
    // @ts-expect-error status must be one of the enum
    void client.listPets({ status: 'lost' });
    // @ts-expect-error NewPet has no id
    void client.createPet({ id: 1, name: 'Rex', categoryId: 1 } satisfies NewPet);
  });

  it('rate-limit state and errors carry their documented fields', () => {
    expectTypeOf(client.rateLimit.getSnapshot).returns.toEqualTypeOf<RateLimitState | undefined>();
    expectTypeOf(client.rateLimit.subscribe).returns.toEqualTypeOf<() => void>();
    // React's signature (@types/react 19): the store fits it as it is, unbound.
    const useSyncExternalStore = <S>(subscribe: (onStoreChange: () => void) => () => void, getSnapshot: () => S): S => getSnapshot();
    expectTypeOf(useSyncExternalStore(client.rateLimit.subscribe, client.rateLimit.getSnapshot)).toEqualTypeOf<RateLimitState | undefined>();
    expectTypeOf<RateLimitState['resetAt']>().toEqualTypeOf<Date>();
    expectTypeOf<RateLimitError['retryAfterMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<RateLimitError>().toExtend<ApiError>();
    expectTypeOf<ApiError['headers']>().toEqualTypeOf<Headers>();
  });

  it('narrowing a caught error with instanceof ApiError gives a number status, not any', async () => {
    try {
      await client.listPets();
    } catch (error) {
      if (error instanceof ApiError) {
        expectTypeOf(error.status).not.toBeAny();
        expectTypeOf(error.status).toEqualTypeOf<number>();
      }
      if (error instanceof NotFoundError) expectTypeOf(error.status).toEqualTypeOf<404>();
    }
  });

  it("a status class is built with its own status only: a NotFoundError's init says 404, as its status does", () => {
    const headers = new Headers();
    expectTypeOf(NotFoundError).toBeConstructibleWith({ status: 404, headers, body: null });
    expectTypeOf(RateLimitError).toBeConstructibleWith({ status: 429, headers, body: '' });
    expectTypeOf(InternalServerError).toBeConstructibleWith({ status: 503, headers, body: null });
    expectTypeOf(ApiError).toBeConstructibleWith({ status: 418, headers, body: null });
    // @ts-expect-error its status would read 404 and be 500
    void new NotFoundError({ status: 500, headers, body: null });
    // @ts-expect-error a 401 is an AuthenticationError
    void new BadRequestError({ status: 401, headers, body: null });
    expectTypeOf(ApiError.generate({ status: 404 as number, headers, body: null }).status).toEqualTypeOf<number>();
  });

  it('the exported schemas parse to the exported interfaces', () => {
    expectTypeOf<z.infer<typeof PetSchema>>().toEqualTypeOf<Pet>();
    expectTypeOf<z.infer<typeof ErrorRecordSchema>>().toEqualTypeOf<ErrorRecord>();
    expectTypeOf(NewPetSchema.parse(input)).toExtend<NewPet>();
    expectTypeOf(ListPetsQuerySchema.parse(input)).toExtend<ListPetsQuery>();
    const pet: Pet = PetSchema.parse(input);
    void pet;
  });

  it('a DeprecationNotice says that its optional fields may be present and undefined, as the client sends them', () => {
    const fromHeaders = { operation: 'getPet', message: '…', sunset: undefined, deprecation: '@1767225600', link: undefined };
    expectTypeOf(fromHeaders).toExtend<DeprecationNotice>();
  });

  it('what a user builds accepts undefined where the SDK reads it with a default: a ValidationError message, a snapshot without a block', () => {
    const message: string | undefined = undefined;
    expectTypeOf({ issues: [], message }).toExtend<ValidationErrorInit>();
    expectTypeOf(ValidationError).toBeConstructibleWith({ issues: [], message });
    // A coordinator of one's own builds the snapshots client.rateLimit hands out.
    const blockedUntil: Date | undefined = undefined;
    expectTypeOf({ limit: 60, remaining: 59, resetAt: new Date(), blockedUntil }).toExtend<RateLimitState>();
    expectTypeOf<ReturnType<RateLimitCoordinator['getSnapshot']>>().toEqualTypeOf<RateLimitState | undefined>();
  });

  it('a coordinator of several keys may be bind alone, as the client accepts it: each client then uses what bind returns', () => {
    const perKey = new Map<string, RateLimitCoordinator>();
    const coordinator = { bind: ({ apiKey }: CoordinatorScope) => perKey.get(apiKey) ?? createMemoryCoordinator() };
    expectTypeOf(PetStoreClient).toBeConstructibleWith({ apiKey: 'k', baseUrl: 'https://petstore.test/v1', coordinator });
    // Without bind, the coordinator is used as it is: it needs every method.
    const { acquire: _, ...partial } = createMemoryCoordinator();
    // @ts-expect-error acquire is missing
    void new PetStoreClient({ coordinator: partial });
  });

  it('DEFAULTS are typed as their options, not as literals: a value started from a default can change', () => {
    expectTypeOf(DEFAULTS.maxRetries).toEqualTypeOf<number>();
    expectTypeOf(DEFAULTS.timeout).toEqualTypeOf<number>();
    expectTypeOf(DEFAULTS.maxRetryDelay).toEqualTypeOf<number>();
    expectTypeOf(DEFAULTS.throttle).toEqualTypeOf<boolean>();
    // React's useState(DEFAULTS.timeout) infers its state from the default, as this does.
    const state = <T>(initial: T) => ({ value: initial });
    const timeout = state(DEFAULTS.timeout);
    timeout.value = 5_000;
    const throttle = state(DEFAULTS.throttle);
    throttle.value = false;
  });

  it('headers are only read: a readonly list of pairs serves, as fetch takes it', () => {
    const headers = [['X-Team', 'pets']] as const;
    expectTypeOf(PetStoreClient).toBeConstructibleWith({ apiKey: 'k', baseUrl: 'https://petstore.test/v1', headers });
    expectTypeOf(client.listPets).toBeCallableWith({}, { headers });
    expectTypeOf(client.listPets).toBeCallableWith({}, { headers: new Headers(), timeout: undefined });
  });

  it('a retry event carries the error that is retried: an ApiError (429, 408, 5xx) or a ConnectionError', () => {
    client.on('retry', ({ error }) => {
      expectTypeOf(error).toEqualTypeOf<ApiError | ConnectionError>();
      expectTypeOf(error.status).toEqualTypeOf<number | undefined>();
    });
  });

  it('toJSON says what it holds, not Record<string, unknown>', () => {
    type Numbers = 'maxRetries' | 'timeout' | 'maxRetryDelay' | 'maxResponseBytes';
    type Settings = Record<'apiKey' | 'baseUrl', string> & Record<Numbers, number> & { throttle: boolean; logLevel: LogLevel };
    expectTypeOf(client.toJSON()).branded.toEqualTypeOf<Settings>();
    const error = new NotFoundError({ status: 404, headers: new Headers(), body: null });
    expectTypeOf(error.toJSON()).toEqualTypeOf<{ name: string; message: string; code?: string; status?: number }>();
  });

  it("an error's literal name stays literal where TypeScript infers a type from it", () => {
    // `readonly name = 'X'` is a widening literal: passed to a generic function (or `let name =
    // error.name`), it became string.
    const same = <T>(value: T): T => value;
    expectTypeOf(same(literalNamed.name)).toEqualTypeOf<(typeof literalNamed)['name']>();
    expectTypeOf(same(literalNamed.name)).not.toEqualTypeOf<string>();
  });
});
