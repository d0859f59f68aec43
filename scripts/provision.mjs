#!/usr/bin/env node
/**
 * The first step of `npm test`: makes sure the system programs the tests drive are there. Each is
 * found at its variable's path (e.g. CHROMIUM_PATH) or its Debian path. What is missing is
 * installed with apt-get when this runs as root on Debian; otherwise one line says what to
 * install and which variable points the tests at it, and the tests do not run: none is ever
 * skipped for want of a program.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The programs the tests need: what uses it, its variable, where Debian puts it, its package. */
const NEEDS = [
  { what: 'the browser tests', name: 'Chromium', variable: 'CHROMIUM_PATH', path: '/usr/bin/chromium', apt: 'chromium' },
  { what: 'the Redis tests', name: 'redis-server', variable: 'REDIS_SERVER', path: '/usr/bin/redis-server', apt: 'redis-server' },
  { what: 'the Python fixture test', name: 'Python 3', variable: 'PYTHON3', path: '/usr/bin/python3', apt: 'python3' },
];

const missing = NEEDS.filter((need) => !existsSync(process.env[need.variable] || need.path));
if (missing.length === 0) process.exit(0);

const canInstall = process.getuid?.() === 0 && existsSync('/usr/bin/apt-get') && !missing.some((need) => process.env[need.variable]);
if (!canInstall) {
  for (const need of missing) {
    const where = process.env[need.variable] ? `${need.variable}=${process.env[need.variable]} does not exist` : `${need.path} is missing`;
    console.error(`npm test: ${need.what} need ${need.name} (${where}): install it (Debian: apt-get install ${need.apt}), or set ${need.variable} to its binary.`);
  }
  process.exit(1);
}

const packages = missing.map((need) => need.apt);
console.log(`npm test: installing ${packages.join(', ')} from Debian for ${missing.map((need) => need.what).join(' and ')} (once per machine)...`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [['update', '-qq'], ['install', '-y', '-qq', ...packages]]) {
  const result = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (result.status !== 0) {
    console.error(`npm test: apt-get ${args[0]} failed (exit ${result.status}); install ${packages.join(', ')} by hand, or set ${missing.map((n) => n.variable).join(', ')}.`);
    process.exit(1);
  }
}
