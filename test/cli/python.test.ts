import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// A test suite in another language (Python's standard library only) against the built CLI, as a
// team testing a Python, Go or Java app would use petstore-server. npm test builds first.
const SCRIPT = fileURLToPath(new URL('../python/test_reference_server.py', import.meta.url));
/** Where `npm test`'s provisioning step found Python 3 (scripts/provision.mjs). */
const PYTHON = process.env.PYTHON3 || '/usr/bin/python3';

describe('petstore-server from another language', () => {
  it('a Python unittest suite lists, creates, meets a 429, moves the clock and reads the admin API over plain HTTP', async () => {
    const child = spawn(PYTHON, [SCRIPT, '-v'], { env: { ...process.env, NODE: process.execPath }, stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code] = await once(child, 'exit');
    clearTimeout(timer);
    expect(output).toMatch(/Ran 6 tests/);
    expect(code, output).toBe(0);
  }, 40_000);
});
