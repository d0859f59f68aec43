/**
 * Reference server throughput: autocannon over loopback against `GET /v1/pets` with an
 * Enterprise key whose quota never binds, and against a bare node:http server answering the same
 * JSON body, fixed, in the same run. Target: reference ≥ 0.6 × bare.
 */
import autocannon from 'autocannon';
import { alternate, printTable, round, saveResult, startServerWorker, verdict } from './lib.mjs';

const KEY = 'bench-enterprise';
const CONNECTIONS = 10;
const SECONDS = 2;
const ROUNDS = 4;
const TARGET = 0.6;

/** Requests per second autocannon gets from `url`; any non-2xx answer or error fails the bench. */
async function cannon(url, seconds = SECONDS) {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { Authorization: `Bearer ${KEY}` } });
  if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return result.requests.total / (result.duration || seconds);
}

export async function run() {
  const reference = await startServerWorker('reference', {
    apiKeys: { [KEY]: { perMinute: 1e12, perDay: 1e12 } },
    pets: 100,
  });
  const url = `${reference.url}/pets`;
  const body = await (await fetch(url, { headers: { Authorization: `Bearer ${KEY}` } })).text();
  const bare = await startServerWorker('bare', { body });
  const floor = await startServerWorker('fetch-floor', { body });
  const bareUrl = `${bare.url}/pets`;
  const floorUrl = `${floor.url}/pets`;
  try {
    // Warm up until the JIT has settled: the first second of a fresh server runs well below its pace.
    for (const target of [url, bareUrl, floorUrl]) await cannon(target, 3);
    const { a, b, ratio, samplesA, samplesB } = await alternate(ROUNDS, () => cannon(url), () => cannon(bareUrl));
    // Measured apart from the A/B pair, only to explain the ratio: it is not part of the target.
    const floorRps = await cannon(floorUrl);
    const rows = [
      { server: 'reference server (node:http adapter)', 'req/s': Math.round(a), 'vs bare': round(ratio), samples: samplesA.map(Math.round).join(' ') },
      { server: 'bare node:http, fixed JSON', 'req/s': Math.round(b), 'vs bare': 1, samples: samplesB.map(Math.round).join(' ') },
      { server: 'floor: constant Response via Request/Response', 'req/s': Math.round(floorRps), 'vs bare': round(floorRps / b), samples: '' },
    ];
    const verdicts = [verdict(`reference ≥ ${TARGET} × bare`, round(ratio), ratio >= TARGET)];
    printTable(`Reference server throughput: GET /v1/pets (20 pets, ${body.length} B), ${CONNECTIONS} connections, ${ROUNDS}×${SECONDS} s each`, rows, verdicts);
    return saveResult('server-throughput', {
      referenceRps: a, bareRps: b, fetchFloorRps: floorRps, ratio, floorRatio: floorRps / b,
      target: TARGET, pass: ratio >= TARGET, bodyBytes: body.length, connections: CONNECTIONS, samplesA, samplesB,
    });
  } finally {
    await reference.stop();
    await bare.stop();
    await floor.stop();
  }
}
