// A non-JS test suite against the CLI server: test/python/test_reference_server.py, run with the
// machine's python3 ($PYTHON3 or Debian's, which npm test provisions; standard library only) against the built petstore-server.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PROGRAMS, programPath } from '../support/programs.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('a Python test suite against petstore-server', () => {
  it('passes: create and list, a 429 then the clock moved past the window, getPet before and after its sunset with the clock restored between tests, forced answers, the admin API', async () => {
    const { stderr } = await promisify(execFile)(programPath(PROGRAMS.python), ['test/python/test_reference_server.py', '-v'], {
      cwd: ROOT,
      env: { ...process.env, PETSTORE_SERVER: `${process.execPath} dist/cli.js` },
      timeout: 60_000,
    });
    expect(stderr).toMatch(/Ran 6 tests/);
    expect(stderr).toMatch(/\nOK\s*$/);
  }, 90_000);
});
