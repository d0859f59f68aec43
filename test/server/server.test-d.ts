// The reference server's public types, as a user of @animal-store/sdk/server, /node and /msw sees
// them. Compiled with exactOptionalPropertyTypes on (tsconfig.types.json).
import { describe, expectTypeOf, it } from 'vitest';
import {
  createReferenceServer,
  openApiDocument,
  SERVER_DEFAULTS,
  type FaultOptions,
  type ReferenceServerOptions,
  type SeedPet,
} from '@animal-store/sdk/server';
import { startReferenceServer, type StartReferenceServerOptions } from '@animal-store/sdk/node';
import { createHandlers } from '@animal-store/sdk/msw';
import { setupWorker } from 'msw/browser';
import { setupServer } from 'msw/node';

declare const count: number | undefined;
declare const text: string | undefined;

describe('reference server types', () => {
  it('every option accepts undefined, which means its default, as the client options do', () => {
    // A project with exactOptionalPropertyTypes passes what it read from a flag or the environment as is.
    const options = {
      apiKeys: undefined,
      pets: count,
      orders: undefined,
      now: undefined,
      banThreshold: count,
      banDurationMs: count,
      faults: undefined,
      rateLimitHeaders: undefined,
      admin: undefined,
      onBan: undefined,
    };
    expectTypeOf(options).toExtend<ReferenceServerOptions>();
    expectTypeOf({ rate: 0.1, kinds: undefined, latencyMs: count, seed: count }).toExtend<FaultOptions>();
    expectTypeOf({ name: 'Rex', categoryId: 1, status: undefined, id: count }).toExtend<SeedPet>();
    expectTypeOf({ ...options, port: count, host: text, onRequest: undefined }).toExtend<StartReferenceServerOptions>();
    expectTypeOf(createReferenceServer).toBeCallableWith(options);
    expectTypeOf(startReferenceServer).toBeCallableWith({ port: count, host: text });
  });

  it('the defaults keep their types', () => {
    expectTypeOf(SERVER_DEFAULTS.faults.latencyMs).toEqualTypeOf<number>();
    expectTypeOf(SERVER_DEFAULTS.faults.seed).toEqualTypeOf<number>();
    // Not literals (5, false): a value a test starts from a default can change.
    expectTypeOf(SERVER_DEFAULTS.banThreshold).toEqualTypeOf<number>();
    expectTypeOf(SERVER_DEFAULTS.banDurationMs).toEqualTypeOf<number>();
    expectTypeOf(SERVER_DEFAULTS.pets).toEqualTypeOf<number>();
    expectTypeOf(SERVER_DEFAULTS.admin).toEqualTypeOf<boolean>();
  });

  it('a misspelt option or an unknown plan does not compile', () => {
    // @ts-expect-error apiKeys, not apikeys
    createReferenceServer({ apikeys: { k: 'pro' } });
    // @ts-expect-error the plans are free, pro and business (or a quota)
    createReferenceServer({ apiKeys: { k: 'gold' } });
    // @ts-expect-error rateLimitHeaders is x, ietf or both
    createReferenceServer({ rateLimitHeaders: 'draft' });
  });

  it('createHandlers takes the base URL as the client does: a string or a URL', () => {
    const server = createReferenceServer();
    const baseUrl = new URL('https://petstore.test/v1');
    expectTypeOf(createHandlers).toBeCallableWith(server, { baseUrl });
    expectTypeOf(createHandlers).toBeCallableWith(server, { baseUrl: baseUrl.href });
    // What msw 3 takes, in Node and in a browser.
    expectTypeOf(setupServer).toBeCallableWith(...createHandlers(server, { baseUrl }));
    expectTypeOf(setupWorker).toBeCallableWith(...createHandlers(server, { baseUrl: '/api/v1' }));
  });

  it('openApiDocument() is typed as the document it is, not as object', () => {
    const doc = openApiDocument();
    expectTypeOf(doc.openapi).toEqualTypeOf<'3.1.0'>();
    expectTypeOf(doc.info.version).toEqualTypeOf<string>();
    expectTypeOf(doc.paths['/pets'].get.operationId).toEqualTypeOf<string>();
    expectTypeOf(doc.paths['/pets/{petId}'].get.deprecated).toEqualTypeOf<boolean | undefined>();
    expectTypeOf(doc.components.schemas).toEqualTypeOf<Record<string, Record<string, unknown>>>();
  });
});
