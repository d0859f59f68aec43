/**
 * What every benchmark shares: where results go, how tables are printed, servers in a worker
 * thread (so the load generator and the server each get a core), and bounded load loops.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

export const RESULTS = new URL('./results/', import.meta.url);
export const DIST = new URL('../dist/', import.meta.url);

/** Prints a titled table of rows (objects with the same keys) and the target line. */
export function printTable(title, rows, verdicts = []) {
  const columns = Object.keys(rows[0] ?? {});
  const cells = rows.map((row) => columns.map((c) => String(row[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (values) => `| ${values.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`;
  console.log(`\n## ${title}\n`);
  console.log(line(columns));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of cells) console.log(line(r));
  for (const v of verdicts) console.log(`${v.pass ? 'PASS' : 'MISS'}  ${v.target}: ${v.actual}`);
}

/** Writes `bench/results/<name>.json` with the figures, the targets and the machine. */
export async function saveResult(name, result) {
  await mkdir(RESULTS, { recursive: true });
  const record = {
    benchmark: name,
    date: new Date().toISOString(),
    node: process.version,
    cpus: (await import('node:os')).availableParallelism(),
    ...result,
  };
  await writeFile(new URL(`${name}.json`, RESULTS), `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

/** A verdict on one target: `{ target, actual, pass }`. */
export const verdict = (target, actual, pass) => ({ target, actual, pass });

/**
 * Starts one of bench/servers.mjs's servers in a worker thread and resolves to its base URL and
 * a `stop()`. `kind` is `reference` or `bare`.
 */
export function startServerWorker(kind, options = {}) {
  const worker = new Worker(new URL('./servers.mjs', import.meta.url), { workerData: { kind, options } });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (message) =>
      resolve({
        url: message.url,
        stop: async () => {
          worker.postMessage('stop');
          await new Promise((done) => worker.once('exit', done));
        },
      }),
    );
  });
}

/**
 * Runs `call` from `concurrency` loops for `durationMs` (and at most `maxCalls` in all), and
 * resolves to completed calls per second. Every call must succeed: a failure ends the bench.
 */
export async function throughput(call, { concurrency, durationMs, maxCalls = 1_000_000 }) {
  let done = 0;
  let started = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const loop = async () => {
    while (performance.now() < deadline && started < maxCalls) {
      started++;
      await call();
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return done / ((performance.now() - start) / 1000);
}

/**
 * Measures A and B in alternating rounds (A, B, B, A, …) so drift on a noisy machine hits both
 * alike, and returns each side's median and the median of the per-round ratios A/B. The ratio
 * of adjacent measurements is what to compare: on a shared VM whole rounds run faster or slower.
 */
export async function alternate(rounds, measureA, measureB) {
  const a = [];
  const b = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      a.push(await measureA());
      b.push(await measureB());
    } else {
      b.push(await measureB());
      a.push(await measureA());
    }
  }
  const ratios = a.map((x, i) => x / b[i]);
  return { a: median(a), b: median(b), ratio: median(ratios), ratios, samplesA: a, samplesB: b };
}

export function median(values) {
  return quantile(values, 0.5);
}

/** The `q` quantile of `values` (0.25 for the lower quartile), interpolated between neighbours. */
export function quantile(values, q) {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (at - low);
}

export const round = (n, digits = 2) => Number(n.toFixed(digits));
