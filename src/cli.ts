#!/usr/bin/env node
/**
 * `petstore-server`: the reference server as a real HTTP server, for trying the API with curl or
 * pointing any client at it.
 */
import { parseArgs } from 'node:util';
import { startReferenceServer, type BanEvent, type RequestLogEntry, type StartReferenceServerOptions } from './node.js';
import { DEFAULTS, DEMO_API_KEY, listenHostProblem, PLANS, resolveApiKeys, type PlanName, type Quota } from './server/options.js';
import { FAULT_KINDS, type FaultKind } from './server/faults.js';
import { RATE_LIMIT_HEADERS, type RateLimitHeaders } from './server/http.js';
import { SDK_VERSION } from './runtime.js';
import { closest } from './suggest.js';

const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

const HELP = `Usage: petstore-server [options]

Runs the Animal Store reference server (in memory) over HTTP.

Options:
  -p, --port N             Port to listen on; 0 picks a free one (default 4010)
  --host HOST              Interface to listen on (default 127.0.0.1)
  --key KEY[:PLAN]         Accept this API key; PLAN is ${PLAN_NAMES.join(', ')} (default free).
                           A custom Enterprise quota: KEY:enterprise:PER_MINUTE:PER_DAY.
                           Repeatable. Without --key, the demo key ${DEMO_API_KEY} (free) works.
  --pets N                 Start the store with N generated pets: ids 1..N, names like
                           "Rex 1", categories 1-5, statuses in turn (default ${DEFAULTS.pets}).
                           --seed N is the same (its older name).
  --fault-rate R           Inject faults into a share R (0-1) of requests (default 0)
  --fault-kinds LIST       Comma-separated: ${FAULT_KINDS.join(',')} (default all)
  --fault-seed N           Seed of the fault draw (default ${DEFAULTS.faults.seed})
  --ratelimit-headers H    x (X-RateLimit-*, the default), ietf (RateLimit and
                           RateLimit-Policy, the IETF draft's) or both
  --admin                  Serve the admin API under /_admin/ (reset, keys, requests, clock),
                           for test suites in any language. No key needed: never expose it.
  --log-format F           text (default) or json: one JSON object per line, for log tooling
  --quiet                  Do not log each request
  -v, --version            Print the version
  -h, --help               Show this help

Example:
  petstore-server --port 4010 --key my-key:pro --pets 25
  curl -H "Authorization: Bearer my-key" http://127.0.0.1:4010/v1/pets`;

/** `a, b or c`, for messages that list the accepted values. */
const oneOf = (items: readonly string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

const LOG_FORMATS = ['text', 'json'] as const;
type LogFormat = (typeof LOG_FORMATS)[number];

/** One log line per request: what happened, told apart (`rate_limited` from `api_key_banned`, a truncated body from a drop). */
function requestLine(e: RequestLogEntry, format: LogFormat): string {
  if (format === 'json') return JSON.stringify({ event: 'request', ...e, durationMs: Number(e.durationMs.toFixed(1)) });
  const outcome = e.status === 0 ? 'dropped' : `${e.status}${e.code ? ` ${e.code}` : ''}${e.truncated ? ' truncated' : ''}`;
  return `${e.time} ${e.method} ${e.path} ${outcome} ${e.durationMs.toFixed(1)}ms req=${e.requestId}`;
}

/** From how many generated pets the start takes long enough (about a second) to be told first. */
const LONG_START_PETS = 500_000;

/** A line when a key is banned and when its ban ends. */
function banLine(e: BanEvent, format: LogFormat): string {
  if (format === 'json') return JSON.stringify({ event: e.state === 'banned' ? 'key_banned' : 'ban_ended', time: e.time, key: e.key, until: e.until });
  return e.state === 'banned'
    ? `${e.time} key ${e.key} banned until ${e.until} for sending while told to wait`
    : `${e.time} key ${e.key} is no longer banned`;
}

/** Parses `--fault-kinds`, naming the kind it does not know. */
function faultKinds(list: string): FaultKind[] {
  const kinds = list.split(',');
  for (const kind of kinds) {
    if (!(FAULT_KINDS as string[]).includes(kind)) throw new Error(`--fault-kinds: "${kind}" is not one of ${FAULT_KINDS.join(', ')}.`);
  }
  return kinds as FaultKind[];
}

/** The flags, as `parseArgs` reads them. */
const FLAGS = {
  port: { type: 'string', short: 'p', default: '4010' },
  host: { type: 'string', default: '127.0.0.1' },
  key: { type: 'string', multiple: true },
  pets: { type: 'string' },
  seed: { type: 'string' },
  'fault-rate': { type: 'string' },
  'fault-kinds': { type: 'string' },
  'fault-seed': { type: 'string' },
  'ratelimit-headers': { type: 'string' },
  admin: { type: 'boolean', default: false },
  'log-format': { type: 'string', default: 'text' },
  quiet: { type: 'boolean', default: false },
  version: { type: 'boolean', short: 'v', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** `parseArgs`, with the flag most likely meant after an unknown one (`--prot`: did you mean --port?). */
function parseFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    const unknown = (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && /'--?([^'=]+)/.exec((error as Error).message)?.[1];
    const meant = unknown ? closest(unknown, Object.keys(FLAGS)) : undefined;
    if (meant) throw new Error(`Unknown option '--${unknown}' (did you mean --${meant}?).`);
    // A stray argument after a key (`--key one two:pro`) may be a key itself: not echoed.
    if ((error as { code?: string }).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      const tokens = parseArgs({ args: argv, options: FLAGS, strict: false, allowPositionals: true, tokens: true }).tokens;
      const stray = tokens.findIndex((token) => token.kind === 'positional');
      const before = tokens[stray - 1];
      if (before?.kind === 'option' && before.name === 'key') {
        throw new Error("Unexpected argument after --key's value (not shown: it may be a key). Give each key its own --key: --key KEY --key KEY2:pro.");
      }
    }
    throw error;
  }
}

/** Parses the CLI's arguments into server options, or throws an Error with a usage hint. */
function parseCli(argv: string[]): StartReferenceServerOptions & { help: boolean; version: boolean; quiet: boolean; logFormat: LogFormat } {
  const values = parseFlags(argv);
  const int = (name: string, text: string, max = Number.MAX_SAFE_INTEGER, min = 0) => {
    const n = Number(text);
    if (!/^\d+$/.test(text) || n < min || n > max) throw new Error(`--${name} must be a whole number from ${min} to ${max}; got "${text}".`);
    return n;
  };
  let apiKeys: Record<string, PlanName | Quota> | undefined;
  for (const [index, spec] of (values.key ?? []).entries()) {
    const [key = '', plan = 'free', perMinute, perDay, ...extra] = spec.split(':');
    const enterprise = plan.toLowerCase() === 'enterprise';
    // A named plan takes no quota after it: `k:pro:300` is misshapen, not an unknown plan.
    if (!key || extra.length > 0 || (!enterprise && perMinute !== undefined)) {
      throw new Error(`--key must be KEY, KEY:PLAN or KEY:enterprise:PER_MINUTE:PER_DAY; got "${spec.replace(/^[^:]*/, '<key>')}".`);
    }
    // No prototype: a key named `__proto__` is a key like any other, not a prototype to set (the
    // assignment was dropped, and the banner said "0 API keys accepted").
    apiKeys ??= Object.create(null) as Record<string, PlanName | Quota>;
    let limits: PlanName | Quota;
    if (enterprise) {
      if (perMinute === undefined || perDay === undefined) throw new Error('--key KEY:enterprise needs a quota: KEY:enterprise:PER_MINUTE:PER_DAY.');
      limits = { perMinute: int('key per-minute quota', perMinute, undefined, 1), perDay: int('key per-day quota', perDay, undefined, 1) };
    } else {
      if (!(PLAN_NAMES as string[]).includes(plan.toLowerCase())) {
        throw new Error(`--key: unknown plan "${plan}". Use ${PLAN_NAMES.join(', ')}, or enterprise:PER_MINUTE:PER_DAY.`);
      }
      limits = plan.toLowerCase() as PlanName;
    }
    // One key with two plans: the last won without a word. Told without the key, which may be real.
    if (key in apiKeys && JSON.stringify(apiKeys[key]) !== JSON.stringify(limits)) {
      throw new Error(`--key: a key is given twice with different plans (--key number ${index + 1} repeats an earlier one); give each key once.`);
    }
    apiKeys[key] = limits;
  }
  // The server's own check, here so that a key or quota it refuses is a bad flag (exit 2).
  try {
    if (apiKeys) resolveApiKeys(apiKeys);
  } catch (error) {
    throw new Error(`--key: ${(error as Error).message.replace(/^apiKeys: /, '')}`);
  }
  if (values.pets !== undefined && values.seed !== undefined && values.pets !== values.seed) {
    throw new Error(`--pets and --seed are the same flag; give one (got --pets ${values.pets} and --seed ${values.seed}).`);
  }
  const pets = values.pets ?? values.seed;
  // Every fault flag is checked whether or not --fault-rate turns faults on.
  const kinds = values['fault-kinds'] !== undefined ? faultKinds(values['fault-kinds']) : undefined;
  const seed = values['fault-seed'] !== undefined ? int('fault-seed', values['fault-seed']) : undefined;
  const rateText = values['fault-rate'];
  // A plain decimal: Number() would read "" as 0 and "0x1" as 1.
  if (rateText !== undefined && !(/^(\d+\.?\d*|\.\d+)$/.test(rateText) && Number(rateText) <= 1)) {
    throw new Error(`--fault-rate must be a number from 0 to 1; got "${rateText}".`);
  }
  // Without a rate nothing is injected: a kind or seed alone would be a flag taken without a word.
  const alone = rateText === undefined && (['fault-kinds', 'fault-seed'] as const).find((flag) => values[flag] !== undefined);
  if (alone) throw new Error(`--${alone} has no effect without --fault-rate, the share of requests to fault (such as --fault-rate 0.1).`);
  const faults =
    rateText === undefined
      ? undefined
      : { rate: Number(rateText), ...(kinds ? { kinds } : {}), ...(seed !== undefined ? { seed } : {}) };
  const noInterface = listenHostProblem(values.host);
  if (noInterface) throw new Error(`--host ${noInterface}.`);
  const logFormat = values['log-format'];
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat)) throw new Error(`--log-format must be ${oneOf(LOG_FORMATS)}; got "${logFormat}".`);
  const headers = values['ratelimit-headers'];
  if (headers !== undefined && !(RATE_LIMIT_HEADERS as readonly string[]).includes(headers)) {
    throw new Error(`--ratelimit-headers must be ${oneOf(RATE_LIMIT_HEADERS)}; got "${headers}".`);
  }
  return {
    port: int('port', values.port, 65535),
    ...(headers ? { rateLimitHeaders: headers as RateLimitHeaders } : {}),
    host: values.host,
    ...(pets === undefined ? {} : { pets: int(values.pets === undefined ? 'seed' : 'pets', pets, 10_000_000) }),
    ...(apiKeys ? { apiKeys } : {}),
    ...(faults ? { faults } : {}),
    ...(values.admin ? { admin: true } : {}),
    help: values.help,
    version: values.version,
    quiet: values.quiet,
    logFormat: logFormat as LogFormat,
  };
}

/** What to do when the server cannot listen: another port, another interface. */
function listenHint(error: NodeJS.ErrnoException, { port, host }: StartReferenceServerOptions): string {
  if (error.code === 'EADDRINUSE') return `\nPort ${port} is taken (another petstore-server?): pick another with --port N, or --port 0 for a free one.`;
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') return `\n--host ${host} is not an interface of this machine: use 127.0.0.1 (the default), ::1 or localhost.`;
  if (error.code === 'EACCES') return `\nPort ${port} needs privileges to listen on: pick one above 1023, or --port 0 for a free one.`;
  return '';
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
  if (options.version) return void console.log(`petstore-server ${SDK_VERSION}`);
  const { help: _help, version: _version, quiet, logFormat, ...serverOptions } = options;
  // Whoever reads the log may go away (a test harness that closes the pipe after the banner,
  // `| head`): node ignores SIGPIPE, so the next line's EPIPE was an uncaught error that took the
  // server down. The log goes unread from then on; the API serves on, and signals still stop it.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  /** Banner and shutdown lines: plain text, or JSON objects whose `message` holds the same text. */
  const say = (event: string, message: string, fields: Record<string, unknown> = {}) =>
    console.log(logFormat === 'json' ? JSON.stringify({ event, time: new Date().toISOString(), message, ...fields }) : message);
  let started: ReturnType<typeof startReferenceServer> | undefined;
  const stop = (signal: string) => {
    say('stopping', `petstore-server: ${signal} received, shutting down`);
    void started?.then((running) => running.close()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // Handlers go in first: a signal while the server starts (generating millions of pets takes
  // seconds) stops it with 0 once started, as one after the banner does; it ended the process.
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (typeof serverOptions.pets === 'number' && serverOptions.pets >= LONG_START_PETS) say('pets', `Generating ${serverOptions.pets} pets…`);
  started = startReferenceServer({
    ...serverOptions,
    ...(quiet
      ? {}
      : { onRequest: (e) => console.log(requestLine(e, logFormat)), onBan: (e) => console.log(banLine(e, logFormat)) }),
  });
  let running: Awaited<typeof started>;
  try {
    running = await started;
  } catch (error) {
    console.error(`petstore-server: ${(error as Error).message}${listenHint(error as NodeJS.ErrnoException, serverOptions)}`);
    process.exitCode = 1;
    return;
  }
  say('listening', `petstore-server listening on ${running.url}`, { url: running.url });
  if (!serverOptions.apiKeys) say('keys', `API key: ${DEMO_API_KEY} (Free plan)`);
  else {
    // The plans as the server took them, keys not shown: `--key k:Pro` reads back as Pro.
    const plans = Object.values(serverOptions.apiKeys).map((limits) =>
      typeof limits === 'string' ? limits[0]!.toUpperCase() + limits.slice(1) : `Enterprise at ${limits.perMinute}/min and ${limits.perDay}/day`,
    );
    const counts = new Map<string, number>();
    for (const plan of plans) counts.set(plan, (counts.get(plan) ?? 0) + 1);
    const which = plans.length === 1 ? plans[0]!.replace(/^\w+/, '$& plan') : [...counts].map(([plan, keys]) => `${keys} ${plan}`).join(', ');
    say('keys', `${plans.length} API key${plans.length === 1 ? '' : 's'} accepted (${which})`);
  }
  if (serverOptions.admin) say('admin', `Admin API: ${new URL('/_admin/', running.url).href} (reset, keys, requests, clock)`);
}

void main();
