// Several worker processes sharing one Free-plan API key through Redis: `REDIS_URL=redis://… node
// examples/workers/main.ts [workers] [calls]`. It starts the reference server over HTTP, runs the
// workers, and prints what the server saw: with Redis, no request inside a Retry-After window and
// no ban. `--no-redis` runs the same storm without the coordinator, for comparison.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startReferenceServer } from '@animal-store/sdk/node';

const args = process.argv.slice(2);
const useRedis = !args.includes('--no-redis');
const [workers = 4, calls = 100] = args.filter((a) => !a.startsWith('--')).map(Number);
if (useRedis && !process.env.REDIS_URL) throw new Error('Set REDIS_URL (e.g. redis://127.0.0.1:6379), or pass --no-redis.');

// The server's clock starts ten seconds into a minute, so the storm never straddles the end of the
// Free plan's minute window (which would hand out a fresh budget halfway and blur the comparison).
const offset = 10_000 - (Date.now() % 60_000);
const api = await startReferenceServer({ port: 0, apiKeys: { 'shared-key': 'free' }, now: () => Date.now() + offset });
const worker = fileURLToPath(new URL('./worker.ts', import.meta.url));
// All workers start calling at the same moment, once every one of them is up.
const children = Array.from({ length: workers }, () => {
  const env = { ...process.env, BASE_URL: api.url, API_KEY: 'shared-key', CALLS: String(calls), BARRIER: '1', ...(useRedis ? {} : { REDIS_URL: '' }) };
  const child = spawn(process.execPath, [worker], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const ready = new Promise<void>((resolve) => child.stdout.on('data', (chunk) => ((out += chunk), out.startsWith('ready\n') && resolve())));
  return { child, ready, out: () => out };
});
await Promise.all(children.map((c) => c.ready));
for (const { child } of children) child.stdin.end('go\n');
const runs = children.map(async ({ child, out }) => {
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`a worker exited with ${code}`);
  return JSON.parse(out().trim().split('\n').at(-1)!) as { ok: number; throttled: number; rateLimited: number; other: string[] };
});
const results = await Promise.all(runs);
const stats = api.server.inspect().keys['shared-key'];
console.log(JSON.stringify({ redis: useRedis, workers: results, server: stats }));
await api.close();
