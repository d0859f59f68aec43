/**
 * The package as users get it: `npm pack` of this repository (`npm test` builds dist/ first, so
 * packing skips `prepack`, which would rebuild it under the tests that import it),
 * installed into a fresh project in a temporary directory, outside the repository. The package
 * test and the runtime matrix both start from it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Consumer {
  /** The project's directory. */
  dir: string;
  /** What `npm pack --json` said about the tarball. */
  packed: { filename: string; files: { path: string }[] };
  /** Runs a command in the project. */
  run(file: string, args: string[], options?: { timeout?: number; env?: NodeJS.ProcessEnv }): Promise<{ stdout: string; stderr: string }>;
  /** Deletes the project. */
  remove(): Promise<void>;
}

/**
 * Packs the repository and installs the tarball, with `packages` beside it (npm specs), into a
 * new ESM project; from npm's cache when it can.
 */
export async function createConsumer(packages: string[] = []): Promise<Consumer> {
  const dir = await mkdtemp(join(tmpdir(), 'petstore-consumer-'));
  const inDir: Consumer['run'] = (file, args, options = {}) => run(file, args, { cwd: dir, timeout: 60_000, ...options });
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, timeout: 60_000 });
  const packed = (JSON.parse(stdout) as Consumer['packed'][])[0]!;
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await inDir('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', `./${packed.filename}`, ...packages], { timeout: 120_000 });
  return { dir, packed, run: inDir, remove: () => rm(dir, { recursive: true, force: true }) };
}
