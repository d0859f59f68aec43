// One worker of examples/workers: many of these share one API key. With REDIS_URL set, they
// share its rate limit through Redis and act as one client; without it, each only knows what
// its own responses said. It makes CALLS calls at once, prints one JSON line of what happened,
// closes Redis and exits on its own (the coordinator's connection goes with the app's).
import { createClient } from 'redis';
import { PetStoreClient, ThrottledError, type ClientOptions } from '@animal-store/sdk';
import { createRedisCoordinator } from '@animal-store/sdk/redis';

const { BASE_URL, API_KEY, REDIS_URL, CALLS = '100', TIMEOUT = '5000', MAX_RETRY_DELAY = '5000', COMMAND_TIMEOUT, BARRIER } = process.env;

const redis = REDIS_URL ? createClient({ url: REDIS_URL, socket: { reconnectStrategy: () => 200 } }).on('error', () => {}) : undefined;
// Redis may be down when the worker starts: wait for it a little, then work anyway (the
// coordinator falls back to this process until Redis answers; node-redis keeps reconnecting).
await Promise.race([redis?.connect().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
const warnings: string[] = [];
const options: ClientOptions = {
  apiKey: API_KEY,
  baseUrl: BASE_URL,
  timeout: Number(TIMEOUT),
  // Wait at most 5 s (by default) for a rate-limit window or for requests in flight; past that,
  // a call is refused without being sent.
  maxRetryDelay: Number(MAX_RETRY_DELAY),
  // COMMAND_TIMEOUT: the coordinator's commandTimeoutMs (250 ms by default), past which it falls back.
  ...(redis ? { coordinator: createRedisCoordinator({ redis, onWarning: (message) => void warnings.push(message), ...(COMMAND_TIMEOUT ? { commandTimeoutMs: Number(COMMAND_TIMEOUT) } : {}) }) } : {}),
};
const client = new PetStoreClient(options);

// Started by main.ts, workers begin together, as a fleet scaled out at once does: each says it is
// ready, and waits for the word to go.
if (BARRIER) {
  console.log('ready');
  await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
  process.stdin.destroy();
}
const results = await Promise.allSettled(Array.from({ length: Number(CALLS) }, () => client.listPets({ limit: 1 })));
const count = (name: string) => results.filter((r) => r.status === 'rejected' && (r.reason as Error).name === name).length;
console.log(
  JSON.stringify({
    ok: results.filter((r) => r.status === 'fulfilled').length,
    throttled: results.filter((r) => r.status === 'rejected' && r.reason instanceof ThrottledError).length,
    rateLimited: count('RateLimitError'),
    other: results.filter((r) => r.status === 'rejected' && !['ThrottledError', 'RateLimitError'].includes((r.reason as Error).name)).map((r) => String((r as PromiseRejectedResult).reason)),
    warnings,
  }),
);
// Close Redis when it is up; when it is down, close() would wait for it, so let go at once.
if (redis?.isReady) await redis.close();
else redis?.destroy();
