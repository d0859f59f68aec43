// What Vite 8 makes of the package for a browser app: the client builds with no Node code, and a
// Node-only entry builds to the module that says which entry to use instead (Vite used to
// externalize `http` with a warning and ship the Node code).
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Rollup } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let app: string;

beforeAll(async () => {
  // An app outside the repository with the package in its node_modules, as after `npm install`.
  app = await mkdtemp(join(tmpdir(), 'petstore-vite-'));
  await mkdir(join(app, 'node_modules', '@animal-store'), { recursive: true });
  await symlink(ROOT, join(app, 'node_modules', '@animal-store', 'sdk'), 'dir');
});
afterAll(async () => {
  if (app) await rm(app, { recursive: true, force: true });
});

async function viteBuild(source: string): Promise<string> {
  await writeFile(join(app, 'main.js'), source);
  const warnings: string[] = [];
  const output = (await build({
    root: app,
    logLevel: 'silent',
    configFile: false,
    build: { write: false, lib: { entry: join(app, 'main.js'), formats: ['es'], fileName: 'app' }, minify: false },
    customLogger: { info() {}, warn: (m: string) => void warnings.push(m), warnOnce: (m: string) => void warnings.push(m), error() {}, clearScreen() {}, hasErrorLogged: () => false, hasWarned: false },
  })) as Rollup.RollupOutput[] | Rollup.RollupOutput;
  const first = Array.isArray(output) ? output[0]! : output;
  expect(warnings.filter((w) => /externalized for browser compatibility/.test(w))).toEqual([]);
  return first.output.map((chunk) => ('code' in chunk ? chunk.code : '')).join('\n');
}

describe('bundling with Vite 8', () => {
  it('an app importing the client builds without Node built-ins', async () => {
    const code = await viteBuild(`import { PetStoreClient } from '@animal-store/sdk';\nexport default PetStoreClient;\n`);
    expect(code).toContain('PetStoreClient');
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:|["'](node:)?http["']/);
  }, 60_000);

  it.each(['node', 'redis'])('an app importing @animal-store/sdk/%s gets the error that names what to use instead, not Node code', async (entry) => {
    const code = await viteBuild(`import * as entry from '@animal-store/sdk/${entry}';\nexport default entry;\n`);
    expect(code).toMatch(new RegExp(`@animal-store/sdk/${entry} runs only in Node`));
    expect(code).not.toMatch(/from\s*["']node:|["']node:http["']|createServer\(/);
  }, 60_000);
});
