/**
 * A private redis-server for the Redis tests (Debian's, or $REDIS_SERVER), on a free port of
 * 127.0.0.1, with no persistence unless given a `dir` (then `SAVE` writes its snapshot there, and
 * a restart loads it); stopped by the test. Restartable on the same port, to test what clients do
 * while Redis is down, or after it comes back from an older snapshot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createClient } from 'redis';
import { freePort } from '../support/ports.js';
import { PROGRAMS, programPath } from '../support/programs.js';

export const REDIS_SERVER = programPath(PROGRAMS.redis);

export interface RedisProcess {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startRedis(options: { dir?: string } = {}): Promise<RedisProcess> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  // No automatic snapshots either way: a snapshot is taken when a test says SAVE.
  const persistence = options.dir ? ['--dir', options.dir, '--dbfilename', 'dump.rdb'] : [];
  const start = async () => {
    child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...persistence], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk) => (out += chunk));
    const deadline = Date.now() + 10_000;
    while (!out.includes('Ready to accept connections')) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`redis-server did not start:\n${out}`);
      await once(child.stdout!, 'data');
    }
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop: async () => {
      if (!child || child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A connected node-redis client that gives up reconnecting quickly, as tests want. */
export async function connect(url: string) {
  const client = createClient({ url, socket: { reconnectStrategy: (retries: number) => Math.min(retries * 50, 200), connectTimeout: 1_000 } });
  client.on('error', () => {});
  return client.connect();
}
