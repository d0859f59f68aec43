/**
 * The integration project's global setup: the tests of the CLI, the packed tarball, the browsers,
 * the runtimes and the Python suite run the built `dist/`. `npm test` builds it first; a developer
 * who runs one of those files alone (`vitest run --project integration test/cli`) in a fresh
 * checkout, or after editing `src/`, would otherwise test nothing (every CLI test timing out) or,
 * worse, the code as it was. So `dist/` is built here when it is missing or older than what it
 * is built from.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './consumer.js';

/** The modification times of `path`'s files, or of `path` itself; none if it does not exist. */
function mtimes(path: string): number[] {
  let stat;
  try {
    stat = statSync(join(ROOT, path));
  } catch {
    return [];
  }
  if (!stat.isDirectory()) return [stat.mtimeMs];
  const files = readdirSync(join(ROOT, path), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return files.map((file) => statSync(join(file.parentPath, file.name)).mtimeMs);
}

export default function setup(): void {
  const built = mtimes('dist');
  const sources = ['src', 'package.json', 'tsup.config.ts'].flatMap(mtimes);
  if (built.length > 0 && Math.min(...built) >= Math.max(...sources)) return;
  const tsup = spawnSync(process.execPath, [join(ROOT, 'node_modules/tsup/dist/cli-default.js')], { cwd: ROOT, encoding: 'utf8' });
  if (tsup.status !== 0) throw new Error(`dist/ is ${built.length > 0 ? 'older than src/' : 'missing'} and building it (tsup) failed:\n${tsup.stdout}${tsup.stderr}`);
}
