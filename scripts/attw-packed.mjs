#!/usr/bin/env node
/**
 * Runs attw (Are the Types Wrong?) on the package in this folder as npm packs it, without
 * building it again. `attw --pack` runs `npm pack`, whose `prepack` runs tsup a second time right
 * after `npm test` built dist/ (and a check of a different build than the one the tests use). This
 * packs with scripts off into a temporary folder, hands attw the tarball, removes the folder, and
 * exits with attw's status. Paths travel through npm's environment and as single arguments, never
 * through a shell, so a folder with spaces works on Windows too.
 * Usage: node scripts/attw-packed.mjs [attw options, e.g. --profile node16]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const destination = mkdtempSync(join(tmpdir(), 'attw-'));
try {
  // Under `npm run`, npm's own CLI runs on this Node: Windows' npm.cmd would need a shell.
  const viaNpm = process.env.npm_execpath?.endsWith('.js') ? [process.execPath, process.env.npm_execpath] : ['npm'];
  const packed = spawnSync(viaNpm[0], [...viaNpm.slice(1), 'pack'], {
    encoding: 'utf8',
    shell: viaNpm.length === 1 && process.platform === 'win32',
    env: { ...process.env, npm_config_json: 'true', npm_config_ignore_scripts: 'true', npm_config_pack_destination: destination },
  });
  if (packed.status !== 0) {
    process.stderr.write(packed.stdout + packed.stderr);
    console.error(`npm pack failed (${packed.error?.message ?? `exit ${packed.status ?? packed.signal}`}).`);
    process.exit(1);
  }
  const [{ filename }] = JSON.parse(packed.stdout);
  const manifest = createRequire(import.meta.url).resolve('@arethetypeswrong/cli/package.json');
  const attw = resolve(dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.attw);
  const checked = spawnSync(process.execPath, [attw, join(destination, filename), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exitCode = checked.status ?? 1;
} finally {
  rmSync(destination, { recursive: true, force: true });
}
