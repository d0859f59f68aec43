#!/usr/bin/env node
/**
 * The first step of `npm test`: makes sure the system programs the tests drive are there (the
 * table is test/support/programs.ts). Each is found at its variable's path (e.g. CHROMIUM_PATH)
 * or its Debian path. What is missing is installed with one `apt-get update` and one
 * `apt-get install` when this runs as root on Debian; otherwise one line says what to install and
 * which variables point the tests at it, and the tests do not run: none is ever skipped for want
 * of a program.
 *
 * `--dry-run` (or PROVISION_DRY_RUN=1) changes nothing: it says what it would install, lets
 * apt-get simulate it (`apt-get install --dry-run`), and exits 1 when anything is missing (0 when
 * nothing is), so `npm test` stops there. In this mode a variable pointing at a
 * missing path counts as the package being absent, so a machine that has the programs can
 * preview what a fresh one would do: `CHROMIUM_PATH=/nowhere npm run provision -- --dry-run`. Run it
 * through npm (`npm run provision`), so it runs under the pinned Node 24, which reads the .ts table.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { PROGRAMS, programPath } from '../test/support/programs.ts';

/** `a, b and c`. */
const list = (items) => [...new Set(items)].join(', ').replace(/, ([^,]*)$/, ' and $1');

const dryRun = process.argv.includes('--dry-run') || process.env.PROVISION_DRY_RUN === '1';
const missing = Object.values(PROGRAMS).filter((program) => !existsSync(programPath(program)));
if (missing.length === 0) {
  if (dryRun) console.log('npm test: every program the tests drive is present; nothing to install.');
  process.exit(0);
}

const packages = missing.map((program) => program.apt);
const variables = missing.map((program) => program.variable);
// A variable naming a path that does not exist is the user's choice; installing the Debian
// package would not put a binary there, so say so instead (except when previewing).
const misdirected = dryRun ? [] : missing.filter((program) => process.env[program.variable]);
const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && misdirected.length === 0;

if (!canInstall && !dryRun) {
  const why = misdirected.length > 0
    ? misdirected.map((p) => `${p.variable}=${process.env[p.variable]} does not exist`).join(', ')
    : `${missing.map((p) => p.debianPath).join(', ')} missing, and installing needs root and apt-get`;
  console.error(
    `npm test: ${missing.map((p) => `${p.name} (${p.usedBy})`).join(', ')} not found (${why}): ` +
      `install ${packages.join(' ')} (Debian: apt-get install ${packages.join(' ')}), or set ${variables.join(', ')} to the binaries.`,
  );
  process.exit(1);
}

const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
const steps = [['update', '-qq'], ['install', '-y', '-qq', ...packages]];
if (dryRun) {
  console.log(`npm test would install ${packages.join(', ')} for ${list(missing.map((p) => p.usedBy))}:`);
  for (const args of steps) console.log(`  apt-get ${args.join(' ')}`);
  console.log('apt-get install --dry-run says:');
  const simulated = spawnSync('apt-get', ['install', '-y', '--dry-run', ...packages], { env, encoding: 'utf8' });
  process.stdout.write(simulated.stdout.split('\n').filter((line) => /^(Inst|Conf|E:)|newly installed/.test(line)).join('\n') + '\n');
  process.stderr.write(simulated.stderr);
  // Nothing was installed, so the tests cannot run: fail, as `npm test` must stop here.
  process.exit(1);
}

console.log(`npm test: installing ${packages.join(', ')} from Debian for ${list(missing.map((p) => p.usedBy))} (once per machine)...`);
for (const args of steps) {
  // apt's chatter (debconf notes and the like) is shown only when a step fails.
  const result = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (result.status !== 0) {
    process.stderr.write(result.stderr ?? '');
    console.error(`npm test: apt-get ${args[0]} failed (exit ${result.status}); install ${packages.join(' ')} by hand, or set ${variables.join(', ')} to the binaries.`);
    process.exit(1);
  }
}
const stillMissing = missing.filter((program) => !existsSync(programPath(program)));
if (stillMissing.length > 0) {
  console.error(`npm test: apt-get installed ${packages.join(' ')}, but ${stillMissing.map((p) => p.debianPath).join(', ')} is still missing; set ${stillMissing.map((p) => p.variable).join(', ')} to the binaries.`);
  process.exit(1);
}
