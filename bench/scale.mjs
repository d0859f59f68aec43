/**
 * Scale: `listPets({ status, limit: 100 })` (in-process, through server.fetch) with 1,000 and
 * with 1,000,000 stored pets. Target: time ratio ≤ 2, since a page must not cost more in a
 * bigger store. Also the heap each stored pet takes.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { alternate, median, printTable, round, saveResult, verdict } from './lib.mjs';

const { createReferenceServer } = await import('../dist/server.js');

const KEY = 'bench-enterprise';
const SIZES = [1_000, 1_000_000];
const CALLS = 5_000;
const ROUNDS = 4;
const TARGET = 2;
const STATUSES = ['available', 'pending', 'sold'];

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const createServer = (pets) => createReferenceServer({ apiKeys: { [KEY]: { perMinute: 1e12, perDay: 1e12 } }, pets });

/** Microseconds per listPets call: CALLS sequential calls, statuses in turn, bodies read. */
async function timeCalls(server) {
  const requests = STATUSES.map((status) => `http://bench.test/v1/pets?status=${status}&limit=100`);
  const headers = { Authorization: `Bearer ${KEY}` };
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const response = await server.fetch(new Request(requests[i % 3], { headers }));
    if (response.status !== 200 || JSON.parse(await response.text()).length !== 100) throw new Error(`unexpected answer ${response.status}`);
  }
  return ((performance.now() - start) * 1000) / CALLS;
}

export async function run() {
  const before = heapAfterGc();
  const big = createServer(SIZES[1]);
  const bytesPerPet = (heapAfterGc() - before) / SIZES[1];
  const small = createServer(SIZES[0]);
  await timeCalls(small);
  await timeCalls(big);
  const { a, b, samplesA, samplesB } = await alternate(ROUNDS, () => timeCalls(small), () => timeCalls(big));
  // Times, not rates: the 1M-pet call's time over the 1k-pet one's, round by round.
  const ratio = median(samplesB.map((time, i) => time / samplesA[i]));
  const rows = [
    { 'stored pets': '1,000', 'µs per call': round(a, 1), samples: samplesA.map((s) => round(s, 1)).join(' ') },
    { 'stored pets': '1,000,000', 'µs per call': round(b, 1), samples: samplesB.map((s) => round(s, 1)).join(' ') },
    { 'stored pets': 'ratio', 'µs per call': round(ratio), samples: '' },
    { 'stored pets': 'heap per stored pet', 'µs per call': `${Math.round(bytesPerPet)} B`, samples: '' },
  ];
  printTable(`Scale: listPets({ status, limit: 100 }) in-process, ${CALLS} calls × ${ROUNDS} rounds`, rows, [
    verdict(`1,000,000-pet time ≤ ${TARGET} × 1,000-pet time`, round(ratio), ratio <= TARGET),
  ]);
  return saveResult('scale', { microsSmall: a, microsBig: b, ratio, target: TARGET, pass: ratio <= TARGET, bytesPerPet, samplesA, samplesB, calls: CALLS });
}
