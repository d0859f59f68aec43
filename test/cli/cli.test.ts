import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// The CLI as users run it: the built bin, in a child process (npm test builds first).
const BIN = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

function run(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const waitFor = async (pattern: RegExp): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const match = stdout.match(pattern);
      if (match) return match;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${pattern} in output:\n${stdout}\n${stderr}`);
      // Bounded by the deadline too: a server that prints nothing more would otherwise hang here
      // until the test's timeout, without the output that says what was missing.
      await once(child.stdout, 'data', { signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())) }).catch(() => {});
    }
  };
  const exit = async () => (child.exitCode !== null ? child.exitCode : (await once(child, 'exit'))[0]);
  return { child, waitFor, exit, out: () => stdout, err: () => stderr };
}

/** Sets or moves the clock of a server started with --admin (`url` is its /v1 URL). */
const clock = (url: string, body: object) =>
  fetch(new URL('/_admin/clock', url), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describe('petstore-server CLI', () => {
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
  });

  it('serves the API on the chosen port with the given keys and seed, logs each request, and exits 0 on SIGTERM', async () => {
    const cli = run(['--port', '0', '--key', 'cli-key:pro', '--seed', '3']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/);
    const response = await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer cli-key' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveLength(3);
    expect(response.headers.get('X-RateLimit-Limit')).toBe('300');
    await cli.waitFor(/GET \/v1\/pets 200 \d+\.\dms/);
    expect(cli.out()).not.toContain('cli-key');
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('--pets N starts with N generated pets, --seed N is its alias (both may be given the same N), and GET / points at /v1 with a 404', async () => {
    for (const flags of [['--pets', '4'], ['--seed', '4'], ['--pets', '4', '--seed', '4']]) {
      const cli = run(['--port', '0', '--quiet', ...flags]);
      child = cli.child;
      const [, url] = await cli.waitFor(/listening on (\S+)/);
      const pets = await (await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer petstore-demo-key' } })).json();
      expect(pets.map((p: { id: number }) => p.id)).toEqual([1, 2, 3, 4]);
      const root = await fetch(new URL('/', url));
      expect(root.status).toBe(404);
      expect((await root.json()).message).toContain('under /v1');
      cli.child.kill('SIGTERM');
      expect(await cli.exit()).toBe(0);
    }
  });

  it('logs a line per request with timestamp, status and error code, duration and request id, and a line when a key is banned', async () => {
    const cli = run(['--port', '0', '--admin', '--key', 'cli-ban-key:enterprise:1:100']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (\S+)/);
    await cli.waitFor(/Admin API: http:\/\/127\.0\.0\.1:\d+\/_admin\//);
    // At the start of a minute, so the requests below cannot straddle two windows of the real clock.
    expect((await clock(url!, { set: '2027-01-01T00:00:00Z' })).status).toBe(200);
    const send = () => fetch(`${url}/pets`, { headers: { Authorization: 'Bearer cli-ban-key' } });
    const ok = await send();
    const limited = await send();
    for (let i = 0; i < 6; i++) await send(); // 5 strikes, then the 6th: banned
    const id = (r: Response) => `req=${r.headers.get('X-Request-Id')}`;
    await cli.waitFor(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z GET /v1/pets 200 \\d+\\.\\dms ${id(ok)}$`, 'm'));
    await cli.waitFor(new RegExp(`^\\S+Z GET /v1/pets 429 rate_limited \\d+\\.\\dms ${id(limited)}$`, 'm'));
    await cli.waitFor(/^\S+Z key cli-… banned until \S+Z for sending while told to wait$/m);
    await cli.waitFor(/GET \/v1\/pets 429 api_key_banned /);
    // The ban ends when the clock passes it: moved through the admin API, the log says so.
    expect((await clock(url!, { advanceMs: 15 * 60_000 })).status).toBe(200);
    await cli.waitFor(/^\S+Z key cli-… is no longer banned$/m);
    expect(cli.out()).not.toContain('cli-ban-key');
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('--log-format json prints one JSON object per line: the banner, each request, each ban', async () => {
    const cli = run(['--port', '0', '--log-format', 'json', '--fault-rate', '1', '--fault-kinds', 'truncate']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (http:[^"\s]+)/);
    const response = await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer petstore-demo-key' } });
    await response.text().catch(() => {});
    await cli.waitFor(/"event":"request"/);
    const lines = cli.out().trim().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toMatchObject({ event: 'listening', url });
    expect(lines.find((l) => l.event === 'request')).toEqual({
      event: 'request',
      time: expect.stringMatching(/Z$/),
      method: 'GET',
      path: '/v1/pets',
      status: 200,
      truncated: true,
      key: 'pets…',
      requestId: response.headers.get('X-Request-Id'),
      durationMs: expect.any(Number),
    });
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('the text log reads "dropped" for a connection cut by a fault and "truncated" for a body cut halfway', async () => {
    for (const [kind, outcome] of [['drop', 'dropped'], ['truncate', '200 truncated']] as const) {
      const cli = run(['--port', '0', '--fault-rate', '1', '--fault-kinds', kind]);
      child = cli.child;
      const [, url] = await cli.waitFor(/listening on (\S+)/);
      const response = await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer petstore-demo-key' } }).catch(() => undefined);
      await response?.text().catch(() => {});
      await cli.waitFor(new RegExp(`^\\S+Z GET /v1/pets ${outcome} \\d+\\.\\dms req=\\w+$`, 'm'));
      cli.child.kill('SIGTERM');
      expect(await cli.exit()).toBe(0);
    }
  });

  it('--log-format json prints a key_banned line when a key is banned and a ban_ended line when the ban ends, with the key\'s label only', async () => {
    const cli = run(['--port', '0', '--admin', '--log-format', 'json', '--key', 'cli-ban-key:enterprise:1:100']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (http:[^"\s]+)/);
    // At the start of a minute, so the requests below cannot straddle two windows of the real clock.
    expect((await clock(url!, { set: '2027-01-01T00:00:00Z' })).status).toBe(200);
    for (let i = 0; i < 8; i++) await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer cli-ban-key' } }); // 1 ok, 1 limited, 5 strikes, banned
    const [banned] = await cli.waitFor(/^\{"event":"key_banned".*\}$/m);
    const ban = JSON.parse(banned);
    expect(ban).toEqual({ event: 'key_banned', time: expect.stringMatching(/^2027-01-01T00:00:\d\d\.\d{3}Z$/), key: 'cli-…', until: expect.stringMatching(/^2027-01-01T00:\d\d:\d\d\.\d{3}Z$/) });
    expect((await clock(url!, { advanceMs: 15 * 60_000 })).status).toBe(200);
    const [ended] = await cli.waitFor(/^\{"event":"ban_ended".*\}$/m);
    expect(JSON.parse(ended)).toEqual({ event: 'ban_ended', time: expect.stringMatching(/Z$/), key: 'cli-…', until: ban.until });
    expect(JSON.parse(cli.out().split('\n')[1]!)).toMatchObject({ event: 'keys', message: '1 API key accepted (Enterprise plan at 1/min and 100/day)' });
    expect(cli.out()).not.toContain('cli-ban-key');
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('--fault-rate takes a share such as 0.25 or .25, and --fault-seed picks the draw: the default seed (1) again gives the same faults, another seed others', async () => {
    const draw = async (args: string[]) => {
      const cli = run(['--port', '0', '--quiet', '--fault-kinds', 'error', ...args]);
      child = cli.child;
      const [, url] = await cli.waitFor(/listening on (\S+)/);
      let statuses = '';
      for (let i = 0; i < 16; i++) statuses += (await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer petstore-demo-key' } })).status === 503 ? 'F' : '.';
      cli.child.kill('SIGTERM');
      expect(await cli.exit()).toBe(0);
      return statuses;
    };
    const unseeded = await draw(['--fault-rate', '0.25']);
    expect(unseeded).toMatch(/F/);
    expect(unseeded).toMatch(/\./);
    expect(await draw(['--fault-rate', '.25', '--fault-seed', '1'])).toBe(unseeded);
    // The largest seed the flag takes (its message says so) starts the server too.
    expect(await draw(['--fault-rate', '0.25', '--fault-seed', String(Number.MAX_SAFE_INTEGER)])).not.toBe(unseeded);
  });

  it('--log-format json prints one JSON object per request; --admin serves the admin API', async () => {
    const cli = run(['--port', '0', '--admin', '--log-format', 'json']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (http:[^"\s]+)/);
    const answer = await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer petstore-demo-key', Prefer: 'code=503' } });
    expect(answer.status).toBe(503);
    const [line] = await cli.waitFor(/^\{.*"status":503.*\}$/m);
    expect(JSON.parse(line)).toMatchObject({ method: 'GET', path: '/v1/pets', status: 503, code: 'service_unavailable', requestId: answer.headers.get('X-Request-Id') });
    const journal = (await (await fetch(url!.replace(/\/v1$/, '/_admin/requests'))).json()) as { requests: unknown[] };
    expect(journal.requests).toHaveLength(1);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
    // The banner and the shutdown are JSON too, each with its event and the text log's words.
    const said = cli.out().trim().split('\n').map((text) => JSON.parse(text)).filter((l) => l.event !== 'request');
    expect(said.map(({ event, message }) => ({ event, message }))).toEqual([
      { event: 'listening', message: `petstore-server listening on ${url}` },
      { event: 'keys', message: 'API key: petstore-demo-key (Free plan)' },
      { event: 'admin', message: `Admin API: ${url!.replace(/\/v1$/, '/_admin/')} (reset, keys, requests, clock)` },
      { event: 'stopping', message: 'petstore-server: SIGTERM received, shutting down' },
    ]);
  });

  it('exits 0 on SIGINT too, saying so; --quiet logs no request, and without --admin the banner names no admin API', async () => {
    const cli = run(['--port', '0', '--quiet']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (\S+)/);
    await cli.waitFor(/API key: petstore-demo-key \(Free plan\)/);
    expect((await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer petstore-demo-key' } })).status).toBe(200);
    cli.child.kill('SIGINT');
    expect(await cli.exit()).toBe(0);
    expect(cli.out()).toBe(`petstore-server listening on ${url}\nAPI key: petstore-demo-key (Free plan)\npetstore-server: SIGINT received, shutting down\n`);
  });

  it('--pets of half a million or more says it is generating them first, and a SIGINT meanwhile still exits 0 once the server has started (before: the signal ended the process)', async () => {
    const cli = run(['--port', '0', '--pets', '600000']);
    child = cli.child;
    await cli.waitFor(/^Generating 600000 pets…\n/);
    cli.child.kill('SIGINT');
    expect(await cli.exit()).toBe(0);
    expect(cli.out()).toMatch(/^Generating 600000 pets…\n[^]*petstore-server: SIGINT received, shutting down\n$/);
  });

  it('accepts a custom Enterprise quota as KEY:enterprise:PER_MINUTE:PER_DAY', async () => {
    const cli = run(['--port', '0', '--key', 'big:enterprise:5000:900000']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (\S+)/);
    const response = await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer big' } });
    expect(response.headers.get('X-RateLimit-Limit')).toBe('5000');
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('--ratelimit-headers ietf sends the IETF draft headers instead of X-RateLimit-*', async () => {
    const cli = run(['--port', '0', '--quiet', '--ratelimit-headers', 'ietf']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (\S+)/);
    const response = await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer petstore-demo-key' } });
    expect(response.headers.get('RateLimit-Policy')).toBe('"default";q=60;w=60');
    expect(response.headers.get('RateLimit')).toMatch(/^"default";r=59;t=\d+$/);
    expect(response.headers.get('X-RateLimit-Limit')).toBeNull();
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('a key given twice with different plans exits 2 without echoing the key (before: the last plan won without a word); given twice with the same plan, however spelt, it counts once', async () => {
    const refused = run(['--port', '0', '--key', 'sk-twice:free', '--key', 'other', '--key', 'sk-twice:pro']);
    child = refused.child; // taken by mistake, it starts a server: afterEach stops it
    expect(await refused.exit()).toBe(2);
    expect(refused.err()).toMatch(/--key: a key is given twice with different plans \(--key number 3 repeats an earlier one\); give each key once\./);
    expect(refused.err()).not.toContain('sk-twice');
    const cli = run(['--port', '0', '--quiet', '--key', 'sk-twice', '--key', 'sk-twice:FREE', '--key', 'q:enterprise:5:9', '--key', 'q:enterprise:5:9']);
    child = cli.child;
    await cli.waitFor(/2 API keys accepted \(1 Free, 1 Enterprise at 5\/min and 9\/day\)\n/);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('the banner counts the keys in words and names their plans as the server took them: "2 API keys accepted (1 Free, 1 Pro)"', async () => {
    const cli = run(['--port', '0', '--quiet', '--key', 'a-key', '--key', 'b-key:PRO']);
    child = cli.child;
    await cli.waitFor(/2 API keys accepted \(1 Free, 1 Pro\)\n/);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('a key named __proto__ is accepted like any other, and the banner counts it', async () => {
    const cli = run(['--port', '0', '--key', '__proto__:pro']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (\S+)/);
    await cli.waitFor(/API keys? accepted/);
    expect(cli.out()).toContain('1 API key accepted (Pro plan)\n');
    const response = await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer __proto__' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('X-RateLimit-Limit')).toBe('300');
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('keeps serving when whoever reads its output goes away (the pipe closed after the banner), and still exits 0 on SIGTERM', async () => {
    const cli = run(['--port', '0']);
    child = cli.child;
    const [, url] = await cli.waitFor(/listening on (\S+)/);
    cli.child.stdout.destroy(); // a harness that read the banner and closed the pipe
    for (let i = 0; i < 3; i++) {
      expect((await fetch(`${url}/pets`, { headers: { Authorization: 'Bearer petstore-demo-key' } })).status).toBe(200);
    }
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
    expect(cli.err()).toBe('');
  });

  it('--version and -v print the package version and exit 0', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const cli = run([flag]);
      child = cli.child; // one that started a server instead: afterEach stops it
      expect(await cli.exit()).toBe(0);
      expect(cli.out()).toBe(`petstore-server ${version}\n`);
    }
  });

  it('-p is short for --port', async () => {
    const cli = run(['-p', '0', '--quiet']);
    child = cli.child;
    await cli.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+\/v1/);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);
  });

  it('--host 0.0.0.0 or :: listens on every interface and prints a loopback URL a client can connect to, not the wildcard', async () => {
    for (const [host, shown] of [['0.0.0.0', '127\\.0\\.0\\.1'], ['::', '\\[::1\\]']] as const) {
      const cli = run(['--port', '0', '--host', host, '--quiet', '--admin']);
      child = cli.child;
      const [, url, port] = await cli.waitFor(new RegExp(`listening on (http://${shown}:(\\d+)/v1)\n`));
      await cli.waitFor(new RegExp(`Admin API: http://${shown}:${port}/_admin/`));
      const auth = { headers: { Authorization: 'Bearer petstore-demo-key' } };
      expect((await fetch(`${url}/pets`, auth)).status).toBe(200);
      // Still the wildcard: another loopback address reaches it too (127.0.0.1 alone would refuse it).
      expect((await fetch(`http://127.0.0.2:${port}/v1/pets`, auth)).status).toBe(200);
      cli.child.kill('SIGTERM');
      expect(await cli.exit()).toBe(0);
    }
  });

  it('a port already taken exits 1 saying to pick another with --port N or --port 0', async () => {
    const first = run(['--port', '0', '--quiet']);
    child = first.child;
    const [, port] = await first.waitFor(/listening on http:\/\/127\.0\.0\.1:(\d+)\/v1/);
    const second = run(['--port', port!, '--quiet']);
    expect(await second.exit()).toBe(1);
    expect(second.err()).toContain(`Port ${port} is taken (another petstore-server?): pick another with --port N, or --port 0 for a free one.`);
    first.child.kill('SIGTERM');
    expect(await first.exit()).toBe(0);
  });

  it('a --host that is not an interface of this machine (an address of another, a name that does not resolve) exits 1 saying what to use instead', async () => {
    for (const host of ['192.0.2.1', 'no-such-host.invalid']) {
      const cli = run(['--port', '0', '--quiet', '--host', host]);
      child = cli.child;
      expect(await cli.exit()).toBe(1);
      expect(cli.err()).toMatch(new RegExp(`^petstore-server: .*\\n--host ${host.replaceAll('.', '\\.')} is not an interface of this machine: use 127\\.0\\.0\\.1 \\(the default\\), ::1 or localhost\\.\\n$`));
    }
  });

  it('--help prints the usage and exits 0', async () => {
    const cli = run(['--help']);
    child = cli.child; // one that started a server instead: afterEach stops it
    expect(await cli.exit()).toBe(0);
    expect(cli.out()).toContain('Usage: petstore-server [options]');
    expect(cli.out()).toContain('--key KEY[:PLAN]');
    // The lists come from the code: each plan and each fault kind, named.
    expect(cli.out()).toContain('PLAN is free, pro, business (default free)');
    expect(cli.out()).toContain('Comma-separated: latency,error,drop,truncate (default all)');
  });

  it.each([
    [['--port', 'abc'], /--port must be a whole number/],
    [['--key', 'k:gold'], /--key: unknown plan "gold"\. Use free, pro, business, or enterprise:PER_MINUTE:PER_DAY\./],
    [['--key', 'k:enterprise'], /needs a quota/],
    [['--key', 'k:enterprise:5'], /--key KEY:enterprise needs a quota: KEY:enterprise:PER_MINUTE:PER_DAY\./],
    [['--key', 'k:enterprise:0:100'], /--key per-minute quota must be a whole number from 1 to \d+; got "0"\./],
    [['--key', 'k:enterprise:100:many'], /--key per-day quota must be a whole number from 1 to \d+; got "many"\./],
    [['--key', 'bad key:pro'], /--key: every key must be a non-empty string of printable ASCII without spaces\./],
    // The key itself is never echoed, whatever its length.
    [['--key', 'secret-key:pro:300'], /--key must be KEY, KEY:PLAN or KEY:enterprise:PER_MINUTE:PER_DAY; got "<key>:pro:300"/],
    [['--key', 'k:enterprise:1:2:3'], /--key must be KEY, KEY:PLAN or KEY:enterprise:PER_MINUTE:PER_DAY; got "<key>:enterprise:1:2:3"/],
    [['--host', ''], /--host must name an interface/],
    [['--fault-rate', '3'], /--fault-rate must be a number from 0 to 1/],
    [['--ratelimit-headers', 'draft'], /--ratelimit-headers must be x, ietf or both/],
    [['--fault-rate', '0.5', '--fault-kinds', 'bogus'], /--fault-kinds: "bogus" is not one of latency, error, drop, truncate/],
    [['--fault-kinds', 'latency,bogus'], /--fault-kinds: "bogus"/],
    [['--fault-seed', 'abc'], /--fault-seed must be a whole number/],
    [['--fault-rate', '0.5', '--fault-seed', ''], /--fault-seed must be a whole number/],
    [['--fault-rate', ''], /--fault-rate must be a number from 0 to 1/],
    [['--fault-rate', '0x1'], /--fault-rate must be a number from 0 to 1/],
    [['--fault-kinds', 'drop'], /--fault-kinds has no effect without --fault-rate, the share of requests to fault \(such as --fault-rate 0\.1\)\./],
    [['--fault-seed', '7'], /--fault-seed has no effect without --fault-rate/],
    [['--pets', '2', '--seed', '3'], /--pets and --seed are the same flag/],
    [['--pets', 'many'], /--pets must be a whole number/],
    [['--seed', 'many'], /--seed must be a whole number from 0 to 10000000; got "many"\./],
    [['--pets', '2.5'], /--pets must be a whole number from 0 to 10000000; got "2\.5"\./],
    [['--port', '65536'], /--port must be a whole number from 0 to 65535; got "65536"\./],
    [['--log-format', 'xml'], /--log-format must be text or json/],
    [['--nope'], /Unknown option '--nope'\n/],
    [['--quiet=yes'], /^petstore-server: Option '--quiet' does not take an argument\n/],
    [['--port', '0', 'extra'], /^petstore-server: Unexpected argument 'extra'/],
    // A stray argument after a key may be a key: not echoed (node's parseArgs quoted it).
    [['--key', 'my', 'secret:pro'], /^petstore-server: Unexpected argument after --key's value \(not shown: it may be a key\)\. Give each key its own --key: --key KEY --key KEY2:pro\.\n(?![^]*secret)/],
    [['--port', '0', '--key=my', 'secret'], /^petstore-server: Unexpected argument after --key's value \(not shown: it may be a key\)\.(?![^]*secret)/],
    [['--prot', '4010'], /Unknown option '--prot' \(did you mean --port\?\)\.\n/],
    [['--fault-rat', '0.5'], /Unknown option '--fault-rat' \(did you mean --fault-rate\?\)\.\n/],
  ])('%j exits 2 with a message saying what is wrong', async (args, message) => {
    const cli = run(args);
    child = cli.child; // a flag taken by mistake starts a server: afterEach stops it
    expect(await cli.exit()).toBe(2);
    expect(cli.err()).toMatch(message);
    expect(cli.err()).toContain('--help');
  });
});
