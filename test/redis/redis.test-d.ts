// What createRedisCoordinator takes, as a user's node-redis client is typed. Compiled with
// exactOptionalPropertyTypes on (tsconfig.types.json).
import { createClient, createClientPool, createCluster, type RedisClientType } from 'redis';
import { describe, expectTypeOf, it } from 'vitest';
import { PetStoreClient } from '@animal-store/sdk';
import { createRedisCoordinator, type RedisCoordinator } from '@animal-store/sdk/redis';

declare const typed: RedisClientType;

describe('createRedisCoordinator types', () => {
  it('takes the node-redis clients users have: createClient() with RESP 2 or 3, modules, scripts, functions, a type mapping, or one typed RedisClientType', async () => {
    expectTypeOf(createRedisCoordinator).toBeCallableWith({ redis: createClient() });
    expectTypeOf(createRedisCoordinator).toBeCallableWith({ redis: await createClient({ url: 'redis://127.0.0.1:6379' }).connect() });
    expectTypeOf(createRedisCoordinator).toBeCallableWith({ redis: createClient({ RESP: 2 }) });
    expectTypeOf(createRedisCoordinator).toBeCallableWith({ redis: createClient({ RESP: 3 }) });
    expectTypeOf(createRedisCoordinator).toBeCallableWith({ redis: createClient({ modules: {}, scripts: {}, functions: {} }) });
    expectTypeOf(createRedisCoordinator).toBeCallableWith({ redis: createClient().withTypeMapping({}) });
    expectTypeOf(createRedisCoordinator).toBeCallableWith({ redis: typed });
    expectTypeOf(createRedisCoordinator({ redis: typed })).toEqualTypeOf<RedisCoordinator>();
    expectTypeOf(PetStoreClient).toBeConstructibleWith({ coordinator: createRedisCoordinator({ redis: typed }) });
  });

  it('a cluster or a pool does not compile, as it is refused at run time', () => {
    // @ts-expect-error a cluster is not supported: pass a client of one Redis
    createRedisCoordinator({ redis: createCluster({ rootNodes: [] }) });
    // @ts-expect-error a pool is not supported either
    createRedisCoordinator({ redis: createClientPool() });
  });
});
