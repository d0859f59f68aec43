// The README and the guides cannot drift from the code: every TypeScript block in them is
// type-checked against the sources, and the blocks marked `<!-- run -->` are run with Node
// against the reference server, importing the built package as users do.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS } from '@animal-store/sdk';
import { codeBlocks, DOCS, ROOT } from './blocks.js';

const run = promisify(execFile);
// Blocks are written inside the repo (not os.tmpdir()) so that `@animal-store/sdk` resolves to this
// package by its own name and msw from node_modules; the folder is git-ignored and outside
// tsconfig's `include`.
const OUT = join(ROOT, '.doc-blocks');
const blocks = codeBlocks().map((block) => ({ ...block, file: join(OUT, block.name) }));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

beforeAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  // Each block is a module of its own (they all have imports), so top-level await works.
  for (const block of blocks) writeFileSync(block.file, block.code);
});

describe('code blocks in the README and the guides', () => {
  it('every guide and the README has TypeScript blocks, and some are run', () => {
    for (const doc of DOCS.filter((d) => d !== 'docs/decisions.md')) expect(blocks.some((b) => b.doc === doc), doc).toBe(true);
    expect(blocks.filter((b) => b.run).length).toBeGreaterThanOrEqual(6);
  });

  it('all of them type-check under the repository tsconfig (strict)', () => {
    const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    })!;
    const program = ts.createProgram(blocks.map((b) => b.file), { ...config.options, noEmit: true });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const where = d.file ? `${relative(ROOT, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
    });
    expect(problems).toEqual([]);
  }, 60_000);

  it.each(blocks.filter((b) => b.run).map((b) => [`${b.doc}:${b.line}`, b] as const))(
    '%s runs to completion against the reference server',
    async (_name, block) => {
      const { stdout, stderr } = await run(process.execPath, [block.file], { cwd: ROOT, timeout: 20_000 });
      expect(stderr).toBe('');
      expect(stdout).not.toBe('');
      // What a `console.log(…); // …` line says it prints is a line of the output, in that order.
      const lines = stdout.split('\n');
      let from = 0;
      for (const printed of block.printed) {
        const at = lines.indexOf(printed, from);
        expect(at, `prints "${printed}"; it printed:\n${stdout}`).toBeGreaterThanOrEqual(0);
        from = at + 1;
      }
    },
    30_000,
  );

  it('the blocks that say what they print are found, so their outputs are checked', () => {
    const printing = blocks.filter((b) => b.run && b.printed.length > 0).map((b) => `${b.doc}: ${b.printed.length}`);
    expect(printing).toEqual(expect.arrayContaining(['docs/errors.md: 3', 'docs/testing-with-the-reference-server.md: 1']));
  });
});

describe('README', () => {
  it('its quickstart is examples/quickstart.ts, the file npm start runs', () => {
    const quickstart = blocks.find((b) => b.doc === 'README.md' && b.run)!;
    expect(quickstart.code).toBe(readFileSync(join(ROOT, 'examples/quickstart.ts'), 'utf8'));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toMatch(/node examples\/quickstart\.ts$/);
  });

  it('examples/quickstart.ts, what npm start runs, prints what each call did and exits', async () => {
    const { stdout, stderr } = await run(process.execPath, ['examples/quickstart.ts'], { cwd: ROOT, timeout: 20_000 });
    expect(stderr).toBe('');
    expect(stdout.trim().split('\n').map((line) => line.replace(/\d+/g, 'N'))).toEqual([
      'Reference server listening on http://N.N.N.N:N/vN',
      'listPets: N pets: Rex (#N, available), Whiskers (#N, pending), Bubbles (#N, sold)',
      'createPet: Biscuit got id N',
      "listPets({ status: 'available' }): Rex (#N), Biscuit (#N)",
      'ValidationError: listPets: limit must be at most N. Nothing was sent.',
      'Rate limit: N of N requests left in this window',
      'Done: the reference server is closed.',
    ]);
  });

  it('its test command is the one CI runs', () => {
    expect(readme).toContain('npm ci && npm test');
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm ci && npm test$/m);
  });

  it('the options table lists every client option, with the defaults the client uses', () => {
    const source = ts.createSourceFile('options.ts', readFileSync(join(ROOT, 'src/client/options.ts'), 'utf8'), ts.ScriptTarget.Latest);
    const options = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'ClientOptions')!;
    const names = options.members.map((m) => (m.name as ts.Identifier).text);
    const rows = new Map([...readme.matchAll(/^\| `(\w+)` \| `([^`]+)` \|/gm)].map((m) => [m[1]!, m[2]!]));
    expect(names.filter((name) => !rows.has(name))).toEqual([]);
    for (const [name, value] of Object.entries(DEFAULTS)) expect(rows.get(name), name).toBe(String(value));
  });

  it('links to each guide', () => {
    for (const doc of DOCS.filter((d) => d.startsWith('docs/'))) expect(readme).toContain(`](${doc})`);
  });
});

describe('Testing with the reference server', () => {
  it('its --log-format json paragraph names every event the CLI prints', () => {
    const guide = readFileSync(join(ROOT, 'docs/testing-with-the-reference-server.md'), 'utf8');
    const paragraph = guide.slice(guide.indexOf('For log tooling, `--log-format json`')).split('\n\n')[0]!;
    const cli = readFileSync(join(ROOT, 'src/cli.ts'), 'utf8');
    // say('keys', …), { event: 'request', … } and the ban's { event: e.state === 'banned' ? 'key_banned' : 'ban_ended' }.
    const events = [...cli.matchAll(/(?:say\(|event: )(?:e\.state === 'banned' \? '(\w+)' : )?'(\w+)'/g)].flatMap((m) => m.slice(1).filter(Boolean));
    expect(events).toEqual(expect.arrayContaining(['listening', 'keys', 'stopping', 'request', 'key_banned']));
    expect(events.filter((event) => !paragraph.includes(`\`${event}\``) && !paragraph.includes(`"event":"${event}"`))).toEqual([]);
  });
});
