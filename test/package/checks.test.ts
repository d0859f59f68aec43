// `npm test`'s package check with attw, run as `npm test` runs it, on a small package of its own:
// it must not build the package again (`npm test` has just built it) and must fail when attw does.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/consumer.js';

/** `npm test`'s attw step, words split, the repository's scripts named by their full path. */
async function attwStep(): Promise<[string, string[]]> {
  const { scripts } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const step = scripts.test!.split(' && ').find((command) => command.includes('attw'));
  const [program, ...args] = step!.split(' ').map((word) => (word.startsWith('scripts/') ? join(ROOT, word) : word));
  return [program!, args];
}

/** Runs `npm test`'s attw step in `dir`, with the repository's tools first on PATH, as under `npm test`. */
async function runIn(dir: string): Promise<{ code: number; output: string }> {
  const [program, args] = await attwStep();
  const PATH = [join(ROOT, 'node_modules/.bin'), process.env.PATH].join(delimiter);
  return new Promise((resolve) => {
    execFile(program, args, { cwd: dir, env: { ...process.env, PATH }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

describe("npm test's attw check", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /**
   * A CommonJS package whose `prepack` leaves a mark, with declarations that match its
   * `module.exports =` or that claim an `export default` it does not have.
   */
  async function fixture({ wrong }: { wrong: boolean }): Promise<string> {
    dir = await mkdtemp(join(tmpdir(), 'attw-check-'));
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({
        name: 'attw-fixture',
        version: '1.0.0',
        main: './index.js',
        types: './index.d.ts',
        files: ['index.js', 'index.d.ts'],
        scripts: { prepack: 'node -e "require(\'fs\').writeFileSync(\'prepacked\', \'\')"' },
      }),
    );
    await writeFile(join(dir, 'index.js'), 'module.exports = function answer() { return 42; };\n');
    await writeFile(join(dir, 'index.d.ts'), `declare function answer(): number;\nexport ${wrong ? 'default' : '='} answer;\n`);
    return dir;
  }

  it('checks the package as packed without running prepack again (before: attw --pack ran npm pack, and prepack built it twice)', async () => {
    const { code, output } = await runIn(await fixture({ wrong: false }));
    expect(output).toBe('');
    expect(code).toBe(0);
    expect(existsSync(join(dir!, 'prepacked'))).toBe(false);
  });

  it('fails, showing what attw found, when the types are wrong', async () => {
    const { code, output } = await runIn(await fixture({ wrong: true }));
    expect(code).not.toBe(0);
    expect(output).toMatch(/attw/);
    expect(output).toContain('Incorrect default export');
    expect(existsSync(join(dir!, 'prepacked'))).toBe(false);
  });
}, 120_000);
