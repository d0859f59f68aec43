#!/usr/bin/env node
/**
 * Runs a command and shows its output only if it fails, so that `npm test` prints the test
 * results and what went wrong, not pages of build logs and tables on success.
 * Usage: node scripts/quiet.mjs <command> [args...]
 */
import { spawnSync } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const result = spawnSync(command, args, { encoding: 'utf8', shell: process.platform === 'win32' });
if (result.status !== 0) {
  process.stdout.write(result.stdout ?? '');
  process.stderr.write(result.stderr ?? '');
  console.error(`\n${[command, ...args].join(' ')} failed (${result.error ? result.error.message : `exit ${result.status ?? result.signal}`}).`);
  process.exit(result.status ?? 1);
}
