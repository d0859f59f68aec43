#!/usr/bin/env node
/**
 * `petstore-server`: the reference server as a real HTTP server, for trying the API with curl or
 * pointing any client at it.
 */
import { parseArgs } from 'node:util';
import { startReferenceServer, type RequestLogEntry, type StartReferenceServerOptions } from './node.js';
import { DEMO_API_KEY, type PlanName, type Quota } from './server/options.js';
import { FAULT_KINDS, type FaultKind } from './server/faults.js';
import type { RateLimitHeaders } from './server/http.js';

const HELP = `Usage: petstore-server [options]

Runs the Animal Store reference server (in memory) over HTTP.

Options:
  --port N                 Port to listen on; 0 picks a free one (default 4010)
  --host HOST              Interface to listen on (default 127.0.0.1)
  --key KEY[:PLAN]         Accept this API key; PLAN is free, pro or business (default free).
                           A custom Enterprise quota: KEY:enterprise:PER_MINUTE:PER_DAY.
                           Repeatable. Without --key, the demo key ${DEMO_API_KEY} (free) works.
  --pets N                 Start with N generated pets (default 0); --seed N is the same
  --fault-rate R           Inject faults into a share R (0-1) of requests (default 0)
  --fault-kinds LIST       Comma-separated: latency,error,drop,truncate (default all)
  --fault-seed N           Seed of the fault draw (default 1)
  --ratelimit-headers H    x (X-RateLimit-*, the default), ietf (RateLimit and
                           RateLimit-Policy, the IETF draft's) or both
  --admin                  Serve the admin API under /_admin/ (reset, keys, requests, clock)
  --log-format FORMAT      text (default) or json: one JSON object per request
  --quiet                  Do not log each request
  -h, --help               Show this help

Example:
  petstore-server --port 4010 --key my-key:pro --pets 25
  curl -H "Authorization: Bearer my-key" http://127.0.0.1:4010/v1/pets`;

/** `--fault-kinds`: a comma-separated list of the kinds the server knows. */
function faultKinds(list: string): FaultKind[] {
  const kinds = list.split(',');
  for (const kind of kinds) {
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) throw new Error(`--fault-kinds: "${kind}" is not one of ${FAULT_KINDS.join(', ')}.`);
  }
  return kinds as FaultKind[];
}

/** Parses the CLI's arguments into server options, or throws an Error with a usage hint. */
function parseCli(argv: string[]): StartReferenceServerOptions & { help?: boolean; quiet?: boolean; logFormat?: 'text' | 'json' } {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '4010' },
      host: { type: 'string', default: '127.0.0.1' },
      key: { type: 'string', multiple: true },
      pets: { type: 'string' },
      seed: { type: 'string' },
      'fault-rate': { type: 'string' },
      'fault-kinds': { type: 'string' },
      'fault-seed': { type: 'string' },
      'ratelimit-headers': { type: 'string' },
      quiet: { type: 'boolean', default: false },
      admin: { type: 'boolean', default: false },
      'log-format': { type: 'string', default: 'text' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const int = (name: string, text: string, max = Number.MAX_SAFE_INTEGER) => {
    const n = Number(text);
    if (!/^\d+$/.test(text) || n > max) throw new Error(`--${name} must be a whole number from 0 to ${max}; got "${text}".`);
    return n;
  };
  let apiKeys: Record<string, PlanName | Quota> | undefined;
  for (const spec of values.key ?? []) {
    const [key = '', plan = 'free', perMinute, perDay, ...extra] = spec.split(':');
    if (!key || extra.length > 0) throw new Error(`--key must be KEY, KEY:PLAN or KEY:enterprise:PER_MINUTE:PER_DAY; got "${spec.replace(/^[^:]*/, '<key>')}".`);
    apiKeys ??= {};
    if (plan.toLowerCase() === 'enterprise') {
      if (perMinute === undefined || perDay === undefined) throw new Error('--key KEY:enterprise needs a quota: KEY:enterprise:PER_MINUTE:PER_DAY.');
      apiKeys[key] = { perMinute: int('key per-minute quota', perMinute), perDay: int('key per-day quota', perDay) };
    } else {
      if (!['free', 'pro', 'business'].includes(plan.toLowerCase()) || perMinute !== undefined) {
        throw new Error(`--key: unknown plan "${plan}". Use free, pro, business, or enterprise:PER_MINUTE:PER_DAY.`);
      }
      apiKeys[key] = plan.toLowerCase() as PlanName;
    }
  }
  const rate = values['fault-rate'];
  const faults =
    rate === undefined
      ? undefined
      : {
          rate: Number.isFinite(Number(rate)) && Number(rate) >= 0 && Number(rate) <= 1 ? Number(rate) : (() => { throw new Error(`--fault-rate must be a number from 0 to 1; got "${rate}".`); })(),
          ...(values['fault-kinds'] ? { kinds: faultKinds(values['fault-kinds']) } : {}),
          ...(values['fault-seed'] ? { seed: int('fault-seed', values['fault-seed']) } : {}),
        };
  const headers = values['ratelimit-headers'];
  if (headers !== undefined && !['x', 'ietf', 'both'].includes(headers)) {
    throw new Error(`--ratelimit-headers must be x, ietf or both; got "${headers}".`);
  }
  return {
    port: int('port', values.port, 65535),
    ...(headers ? { rateLimitHeaders: headers as RateLimitHeaders } : {}),
    host: values.host,
    pets: int(values.pets === undefined && values.seed !== undefined ? 'seed' : 'pets', values.pets ?? values.seed ?? '0', 10_000_000),
    ...(apiKeys ? { apiKeys } : {}),
    ...(faults ? { faults } : {}),
    help: values.help,
    quiet: values.quiet,
    admin: values.admin,
    logFormat: values['log-format'] === 'json' || values['log-format'] === 'text' ? values['log-format'] : (() => { throw new Error(`--log-format must be text or json; got "${values['log-format']}".`); })(),
  };
}

/**
 * One line per request: time, method, path, status and error code (a truncated answer says so),
 * duration and request id; a line when a key is banned and when its ban is over. JSON: one object
 * per request, with `event: 'ban'` objects for bans.
 */
function logger(format: 'text' | 'json') {
  const bans = new Map<string, Date>();
  return (entry: RequestLogEntry) => {
    const time = new Date().toISOString();
    const ended = entry.key !== undefined && bans.has(entry.key) && bans.get(entry.key)! <= new Date() && entry.code !== 'api_key_banned';
    if (ended) bans.delete(entry.key!);
    if (format === 'json') {
      if (ended) console.log(JSON.stringify({ time, event: 'ban-ended', key: entry.key }));
      console.log(JSON.stringify({ time, ...entry, durationMs: Number(entry.durationMs.toFixed(1)) }));
    } else {
      if (ended) console.log(`${time} key ${entry.key} is no longer banned`);
      const status = entry.truncated ? 'truncated' : entry.status || 'dropped';
      console.log(`${time} ${entry.method} ${entry.path} ${status}${entry.code ? ` ${entry.code}` : ''} ${entry.durationMs.toFixed(1)}ms${entry.requestId ? ` req=${entry.requestId}` : ''}`);
    }
    if (entry.bannedUntil && entry.key !== undefined) {
      bans.set(entry.key, entry.bannedUntil);
      if (format === 'json') console.log(JSON.stringify({ time, event: 'ban', key: entry.key, until: entry.bannedUntil.toISOString() }));
      else console.log(`${time} key ${entry.key} banned until ${entry.bannedUntil.toISOString()} for sending while told to wait`);
    }
  };
}

async function main(): Promise<void> {
  let options: ReturnType<typeof parseCli>;
  try {
    options = parseCli(process.argv.slice(2));
  } catch (error) {
    console.error(`petstore-server: ${(error as Error).message}\nRun petstore-server --help for usage.`);
    process.exitCode = 2;
    return;
  }
  if (options.help) return void console.log(HELP);
  const { help: _help, quiet, logFormat, ...serverOptions } = options;
  let running: Awaited<ReturnType<typeof startReferenceServer>>;
  try {
    running = await startReferenceServer({
      ...serverOptions,
      ...(quiet ? {} : { onRequest: logger(logFormat ?? 'text') }),
    });
  } catch (error) {
    console.error(`petstore-server: ${(error as Error).message}`);
    process.exitCode = 1;
    return;
  }
  const stop = (signal: string) => {
    console.log(`petstore-server: ${signal} received, shutting down`);
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // Handlers go in before the banner: whoever reads the banner may signal at once.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(`petstore-server listening on ${running.url}`);
  if (!serverOptions.apiKeys) console.log(`API key: ${DEMO_API_KEY} (Free plan)`);
  else console.log(`${Object.keys(serverOptions.apiKeys).length} API key(s) accepted`);
}

void main();
