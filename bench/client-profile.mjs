/**
 * Client profile: where each side of the client-overhead benchmark spends the main thread's CPU
 * over loopback, per call, from one V8 CPU profile of both sides run in alternating rounds in one
 * process (so a slower or faster spell of a shared machine falls on both alike). The server runs
 * in a worker thread, whose isolate the profile does not sample. No target: it explains the
 * client-overhead figure, where throughput over loopback ties within the machine's noise.
 * Run on its own (`node bench/run.mjs client-profile`); `npm run bench` leaves it out.
 */
import { Session } from 'node:inspector/promises';
import { printTable, round, saveResult, startServerWorker, throughput } from './lib.mjs';
import { LOAD, OPTIONS, sides, warmUp } from './client-overhead.mjs';

const ROUNDS = 16;
const ROUND_MS = 500;
/** Microseconds between samples (V8's default is 1,000): about 40,000 samples a side. */
const SAMPLING_US = 100;

/** Where a sampled frame's code comes from. */
function category({ url, functionName }) {
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName}`;
  if (url.includes('undici')) return 'undici (fetch)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
  if (pkg) return pkg;
  if (url.includes('/dist/')) return 'the client (dist/)';
  if (url.startsWith('node:')) return 'node (streams, events, timers…)';
  return 'the benchmark';
}

const now = () => Number(process.hrtime.bigint() / 1000n);

export async function run() {
  const worker = await startServerWorker('reference', OPTIONS);
  const session = new Session();
  session.connect();
  let profile;
  const windows = [];
  try {
    const both = sides(worker.url);
    await warmUp(both);
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_US });
    await session.post('Profiler.start');
    for (let i = 0; i < ROUNDS; i++) {
      for (const side of i % 2 ? ['floor', 'client'] : ['client', 'floor']) {
        const start = now();
        const rate = await throughput(both[side], { ...LOAD, durationMs: ROUND_MS });
        const end = now();
        windows.push({ side, start, end, calls: (rate * (end - start)) / 1e6 });
      }
    }
    ({ profile } = await session.post('Profiler.stop'));
  } finally {
    session.disconnect();
    await worker.stop();
  }

  // V8 stamps samples on the same monotonic clock as process.hrtime, in microseconds.
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const spent = { client: {}, floor: {} };
  const calls = { client: 0, floor: 0 };
  for (const w of windows) calls[w.side] += w.calls;
  let at = profile.startTime;
  let w = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i];
    while (w < windows.length && windows[w].end < at) w++;
    if (w === windows.length) break;
    if (at < windows[w].start) continue;
    const name = category(frames.get(profile.samples[i]));
    const side = spent[windows[w].side];
    side[name] = (side[name] ?? 0) + profile.timeDeltas[i];
  }
  const perCall = (side, name) => (spent[side][name] ?? 0) / calls[side];
  const names = [...new Set([...Object.keys(spent.client), ...Object.keys(spent.floor)])].filter((name) => name !== '(idle)');
  names.sort((a, b) => perCall('client', b) + perCall('floor', b) - perCall('client', a) - perCall('floor', a));
  const busy = (side) => names.reduce((sum, name) => sum + perCall(side, name), 0);
  const rows = [...names.filter((name) => Math.max(perCall('client', name), perCall('floor', name)) >= 1), 'busy, in all'].map((name) => {
    const [client, floor] = name === 'busy, in all' ? [busy('client'), busy('floor')] : [perCall('client', name), perCall('floor', name)];
    return { code: name, 'client µs/call': round(client, 1), 'floor µs/call': round(floor, 1), 'client − floor': round(client - floor, 1) };
  });
  printTable(`Client profile: main-thread CPU per call over loopback, ${ROUNDS} alternating rounds of ${ROUND_MS} ms a side (categories of 1 µs or more)`, rows);
  // A builtin's time counts to the function that called it.
  console.log("JSON.parse of the body counts to the client's code on the client's side, and to ky's on the floor's.");
  return saveResult('client-profile', { calls, busyClientUs: busy('client'), busyFloorUs: busy('floor'), rows });
}
