/**
 * Client overhead: `client.listPets({ limit: 100 })` against raw `fetch` + `JSON.parse` of the
 * same request, same concurrency, on the same reference server: over loopback HTTP (target:
 * client ≥ 0.85 × raw) and in-process, with a `fetch` that calls `server.fetch` directly.
 */
import { alternate, printTable, round, saveResult, startServerWorker, throughput, verdict } from './lib.mjs';

const { PetStoreClient } = await import('../dist/index.js');
const { createReferenceServer } = await import('../dist/server.js');

const KEY = 'bench-enterprise';
const OPTIONS = { apiKeys: { [KEY]: { perMinute: 1e12, perDay: 1e12 } }, pets: 200 };
const LOAD = { concurrency: 10, durationMs: 2_000 };
const ROUNDS = 4;
const TARGET = 0.85;

/** Calls per second of the client and of raw fetch against `baseUrl`, alternated. */
async function compare(baseUrl, fetchImpl) {
  const client = new PetStoreClient({ apiKey: KEY, baseUrl, ...(fetchImpl && { fetch: fetchImpl }) });
  const url = `${baseUrl}/pets?limit=100`;
  const headers = { Authorization: `Bearer ${KEY}`, Accept: 'application/json' };
  const send = fetchImpl ?? fetch;
  const viaClient = async () => {
    if ((await client.listPets({ limit: 100 })).length !== 100) throw new Error('client: expected 100 pets');
  };
  const viaRaw = async () => {
    const response = await send(new Request(url, { headers }));
    if (!response.ok || JSON.parse(await response.text()).length !== 100) throw new Error(`raw: HTTP ${response.status}`);
  };
  await throughput(viaClient, { ...LOAD, durationMs: 500 });
  await throughput(viaRaw, { ...LOAD, durationMs: 500 });
  return alternate(ROUNDS, () => throughput(viaClient, LOAD), () => throughput(viaRaw, LOAD));
}

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
    { transport: 'loopback HTTP', 'client calls/s': Math.round(http.a), 'raw calls/s': Math.round(http.b), ratio: round(httpRatio) },
    { transport: 'in-process (server.fetch)', 'client calls/s': Math.round(inProcess.a), 'raw calls/s': Math.round(inProcess.b), ratio: round(inProcessRatio) },
  ];
  printTable(`Client overhead: listPets({ limit: 100 }), concurrency ${LOAD.concurrency}, ${ROUNDS}×${LOAD.durationMs / 1000} s each`, rows, [
    verdict(`client ≥ ${TARGET} × raw over loopback HTTP`, round(httpRatio), httpRatio >= TARGET),
  ]);
  return saveResult('client-overhead', {
    http: { clientCps: http.a, rawCps: http.b, ratio: httpRatio, samplesClient: http.samplesA, samplesRaw: http.samplesB },
    inProcess: { clientCps: inProcess.a, rawCps: inProcess.b, ratio: inProcessRatio, samplesClient: inProcess.samplesA, samplesRaw: inProcess.samplesB },
    concurrency: LOAD.concurrency,
    target: TARGET,
    pass: httpRatio >= TARGET,
  });
}
