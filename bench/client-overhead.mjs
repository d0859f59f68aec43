/**
 * Client overhead: `client.listPets({ limit: 100 })` against the floor, ky and zod/mini used in
 * the fewest lines (`Pets.parse(await ky.get(url, { searchParams }).json())`), same request, same
 * concurrency, on the same reference server: over loopback HTTP and in-process, with a `fetch`
 * that calls `server.fetch` directly. Target: the client at least 1.0 × the floor on both, so
 * its features (validation of arguments, the rate-limit gate, retries, errors) cost nothing
 * measurable beyond the libraries it is built on.
 */
import ky from 'ky';
import * as z from 'zod/mini';
import { alternate, median, printTable, quantile, round, saveResult, startServerWorker, throughput, verdict } from './lib.mjs';

const { PetStoreClient, PetSchema } = await import('../dist/index.js');
const Pets = z.array(PetSchema);
const { createReferenceServer } = await import('../dist/server.js');

const KEY = 'bench-enterprise';
export const OPTIONS = { apiKeys: { [KEY]: { perMinute: 1e12, perDay: 1e12 } }, pets: 200 };
export const LOAD = { concurrency: 10, durationMs: 1_000 };
/** Many short rounds rather than a few long ones: the median of 12 paired ratios moves less between runs. */
const ROUNDS = 12;
/**
 * Per side, before the rounds, in slices that alternate. Throughput rises for the first seconds of
 * a run (the JIT settles, the heap grows): with 500 ms, the first round ran 20–30 % slower than the
 * rest and the side that went first in it lost (round ratios 0.85, 1.01, 0.89, 1.01), so the
 * median measured warm-up. Warmed one whole side after the other, the order still decided about
 * 1.5 % (ky's code, shared by both sides, is optimized for whichever ran first): alternating
 * slices warm both in the mix the rounds run in.
 */
const WARMUP_MS = 2_500;
const WARMUP_SLICES = 5;
const TARGET = 1.0;

/** The two sides, one call each, against `baseUrl`: the client, and the floor (ky and zod/mini in the fewest lines). */
export function sides(baseUrl, fetchImpl) {
  const client = new PetStoreClient({ apiKey: KEY, baseUrl, ...(fetchImpl && { fetch: fetchImpl }) });
  const url = `${baseUrl}/pets`;
  const headers = { Authorization: `Bearer ${KEY}` };
  return {
    client: async () => {
      if ((await client.listPets({ limit: 100 })).length !== 100) throw new Error('client: expected 100 pets');
    },
    floor: async () => {
      const pets = Pets.parse(await ky.get(url, { searchParams: { limit: 100 }, headers, ...(fetchImpl && { fetch: fetchImpl }) }).json());
      if (pets.length !== 100) throw new Error('floor: expected 100 pets');
    },
  };
}

/** Runs both sides in alternating slices for `WARMUP_MS` in all (see WARMUP_MS for why). */
export async function warmUp({ client, floor }) {
  for (let slice = 0; slice < WARMUP_SLICES; slice++) {
    for (const side of slice % 2 ? [floor, client] : [client, floor]) await throughput(side, { ...LOAD, durationMs: WARMUP_MS / WARMUP_SLICES });
  }
}

/** Calls per second of the client and of the floor against `baseUrl`, alternated. */
async function compare(baseUrl, fetchImpl) {
  const { client: viaClient, floor: viaRaw } = sides(baseUrl, fetchImpl);
  await warmUp({ client: viaClient, floor: viaRaw });
  const busy = { client: [], floor: [] };
  const result = await alternate(ROUNDS, () => measure(viaClient, busy.client), () => measure(viaRaw, busy.floor));
  return { ...result, busyClient: median(busy.client), busyFloor: median(busy.floor), busyRatio: median(busy.floor.map((floor, i) => floor / busy.client[i])) };
}

/**
 * Calls per second of `side`, and into `busy` the main thread's busy time per call (µs, from its
 * event-loop utilization). Over loopback the server's thread may be what limits both sides'
 * throughput, which then ties whatever each side costs: busy time shows what each costs the app.
 */
async function measure(side, busy) {
  const before = performance.eventLoopUtilization();
  const started = performance.now();
  const rate = await throughput(side, LOAD);
  const calls = (rate * (performance.now() - started)) / 1000;
  busy.push((performance.eventLoopUtilization(before).active * 1000) / calls);
  return rate;
}

/** The main thread's busy time per call of each side, and the floor's over the client's (above 1: the client costs less). */
const busyColumns = ({ busyClient, busyFloor, busyRatio }) => ({
  'client busy µs/call': Math.round(busyClient),
  'floor busy µs/call': Math.round(busyFloor),
  'busy floor/client': round(busyRatio),
});

export async function run() {
  const worker = await startServerWorker('reference', OPTIONS);
  let http;
  try {
    http = await compare(worker.url);
  } finally {
    await worker.stop();
  }
  const server = createReferenceServer(OPTIONS);
  const inProcess = await compare('http://bench.test/v1', (request) => server.fetch(request));

  const httpRatio = http.ratio;
  const inProcessRatio = inProcess.ratio;
  const rows = [
    { transport: 'loopback HTTP', 'client calls/s': Math.round(http.a), 'floor calls/s': Math.round(http.b), ratio: round(httpRatio), ...busyColumns(http) },
    { transport: 'in-process (server.fetch)', 'client calls/s': Math.round(inProcess.a), 'floor calls/s': Math.round(inProcess.b), ratio: round(inProcessRatio), ...busyColumns(inProcess) },
  ];
  // The middle half of the rounds' ratios: how far one run's median can move on this machine.
  const spread = ({ ratios }) => `${round(quantile(ratios, 0.25))}–${round(quantile(ratios, 0.75))}`;
  rows[0]['middle half of rounds'] = spread(http);
  rows[1]['middle half of rounds'] = spread(inProcess);
  printTable(`Client overhead: listPets({ limit: 100 }), concurrency ${LOAD.concurrency}, ${ROUNDS}×${LOAD.durationMs / 1000} s each`, rows, [
    verdict(`client ≥ ${TARGET} × the floor over loopback HTTP`, round(httpRatio), httpRatio >= TARGET),
    verdict(`client ≥ ${TARGET} × the floor in-process`, round(inProcessRatio), inProcessRatio >= TARGET),
  ]);
  return saveResult('client-overhead', {
    http: { clientCps: http.a, floorCps: http.b, ratio: httpRatio, ratios: http.ratios, samplesClient: http.samplesA, samplesFloor: http.samplesB, busyClientUs: http.busyClient, busyFloorUs: http.busyFloor, busyRatio: http.busyRatio },
    inProcess: { clientCps: inProcess.a, floorCps: inProcess.b, ratio: inProcessRatio, ratios: inProcess.ratios, samplesClient: inProcess.samplesA, samplesFloor: inProcess.samplesB, busyClientUs: inProcess.busyClient, busyFloorUs: inProcess.busyFloor, busyRatio: inProcess.busyRatio },
    concurrency: LOAD.concurrency,
    target: TARGET,
    pass: httpRatio >= TARGET && inProcessRatio >= TARGET,
  });
}
