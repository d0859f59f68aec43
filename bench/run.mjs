/**
 * `npm run bench`: runs the benchmarks against the built package (dist/), prints a table per
 * benchmark and writes bench/results/<name>.json. Name benchmarks to run only those:
 * `node bench/run.mjs scale server-throughput`.
 */
const BENCHMARKS = {
  'bundle-size': () => import('./bundle-size.mjs'),
  'client-overhead': () => import('./client-overhead.mjs'),
  coordinator: () => import('./coordinator.mjs'),
  'server-throughput': () => import('./server-throughput.mjs'),
  scale: () => import('./scale.mjs'),
  'client-profile': () => import('./client-profile.mjs'),
};
/** Run only when named: they explain a figure of another benchmark and have no target. */
const ON_REQUEST = new Set(['client-profile']);

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!(name in BENCHMARKS)) {
    console.error(`Unknown benchmark "${name}". Choose from: ${Object.keys(BENCHMARKS).join(', ')}.`);
    process.exit(2);
  }
}
const results = [];
for (const [name, load] of Object.entries(BENCHMARKS)) {
  if (wanted.length > 0 ? !wanted.includes(name) : ON_REQUEST.has(name)) continue;
  const { run } = await load();
  results.push(await run());
}
const missed = results.filter((r) => r.pass === false).map((r) => r.benchmark);
console.log(`\n${results.length} benchmark(s); targets missed: ${missed.length === 0 ? 'none' : missed.join(', ')}.`);
