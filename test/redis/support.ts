/**
 * A private redis-server for the Redis tests (Debian's, or $REDIS_SERVER), on a free port of
 * 127.0.0.1, with no persistence unless given a `dir` (then `SAVE` writes its snapshot there, and
 * a restart loads it); stopped by the test. Restartable on the same port, to test what clients do
 * while Redis is down, or after it comes back from an older snapshot. Its clock is the test's to
 * move (`advanceClock`), through libfaketime (Debian's, or $LIBFAKETIME).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { freePort } from '../support/ports.js';
import { PROGRAMS, programPath } from '../support/programs.js';

export const REDIS_SERVER = programPath(PROGRAMS.redis);
const LIBFAKETIME = programPath(PROGRAMS.libfaketime);

export interface RedisProcess {
  url: string;
  stop(): Promise<void>;
  /** Starts it again after stop(), on the same port; does nothing while it runs. */
  start(): Promise<void>;
  /**
   * Moves Redis' clock (TIME, which the scripts read, and its keys' expiry) `ms` forward (back if
   * negative, as NTP may) at once, across restarts. Synchronous: no reply is read between this and a
   * move of this process's clocks made in the same turn.
   */
  advanceClock(ms: number): void;
}

export async function startRedis(options: { dir?: string } = {}): Promise<RedisProcess> {
  // Without it redis-server starts all the same (ld.so only warns), and the tests that move its clock fail on their assertions.
  if (!existsSync(LIBFAKETIME)) throw new Error(`${LIBFAKETIME} not found: install libfaketime (npm run provision), or set ${PROGRAMS.libfaketime.variable} to it.`);
  const port = await freePort();
  let child: ChildProcess | undefined;
  // No automatic snapshots either way: a snapshot is taken when a test says SAVE.
  const persistence = options.dir ? ['--dir', options.dir, '--dbfilename', 'dump.rdb'] : [];
  // Redis' clock, off real time by `offsetMs`: libfaketime reads the offset from this file at
  // every reading of the time of day. The monotonic clock, which runs Redis' event loop, is left alone.
  const clock = join(tmpdir(), `animal-store-redis-${process.pid}-${port}.faketime`);
  let offsetMs = 0;
  const writeClock = () => {
    // Replaced whole (rename), so that Redis never reads a file half written.
    writeFileSync(`${clock}.next`, `${offsetMs < 0 ? '-' : '+'}${(Math.abs(offsetMs) / 1_000).toFixed(3)}`);
    renameSync(`${clock}.next`, clock);
  };
  // Debian's redis-server allocates with jemalloc, which reads the clock while libfaketime is still
  // starting, and hangs (wolfcw/libfaketime#130); libc preloaded after libfaketime gives it glibc's malloc.
  const env = { ...process.env, LD_PRELOAD: `${LIBFAKETIME}:libc.so.6`, FAKETIME_TIMESTAMP_FILE: clock, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
  // A redis-server killed by a signal (stop()) has no exit code, only a signal code.
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const start = async () => {
    if (running()) return;
    writeClock();
    child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...persistence], { stdio: ['ignore', 'pipe', 'inherit'], env });
    let out = '';
    child.stdout!.on('data', (chunk) => (out += chunk));
    const deadline = Date.now() + 10_000;
    // It may die of a signal (a crash under the preload) without a word, or hang: checked each second.
    const exited = once(child, 'exit');
    exited.catch(() => {}); // an 'error' (no such program) rejects the race below; after that, nobody awaits it
    try {
      while (!out.includes('Ready to accept connections')) {
        if (Date.now() > deadline || !running()) throw new Error(`redis-server did not start:\n${out}`);
        await Promise.race([once(child.stdout!, 'data'), exited, new Promise((resolve) => setTimeout(resolve, 1_000))]);
      }
    } catch (error) {
      child.kill('SIGKILL');
      rmSync(clock, { force: true });
      throw error;
    }
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop: async () => {
      if (!running()) return;
      const exited = once(child!, 'exit');
      child!.kill('SIGKILL');
      await exited;
      rmSync(clock, { force: true });
    },
    advanceClock: (ms) => {
      offsetMs += ms;
      if (running()) writeClock(); // else start() does
    },
  };
}

/** A connected node-redis client that gives up reconnecting quickly, as tests want. */
export async function connect(url: string) {
  const client = createClient({ url, socket: { reconnectStrategy: (retries: number) => Math.min(retries * 50, 200), connectTimeout: 1_000 } });
  client.on('error', () => {});
  return client.connect();
}
