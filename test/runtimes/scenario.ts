/**
 * The scenario every runtime of the matrix runs, with the packed package: list, create, the
 * deprecated getPet, a 429 with Retry-After, a refusal without sending, a timeout and an abort,
 * once against a reference server in the same runtime (`fetch: server.fetch`) and once against a
 * real HTTP reference server the test started in Node. It only reports what happened, as JSON;
 * the test decides what is right. It imports nothing but the package, so it runs anywhere the
 * package claims to run.
 */
import { PetStoreClient, PetStoreError, type Fetch } from '@animal-store/sdk';
import { createReferenceServer, type SeedPet } from '@animal-store/sdk/server';

/** What the scenario and the test agree on. */
export const SCENARIO = {
  apiKey: 'runtime-key',
  plan: 'pro',
  pets: [
    { name: 'Luna', categoryId: 2, status: 'available' },
    { name: 'Milo', categoryId: 1, status: 'sold' },
  ] satisfies SeedPet[],
  /** How long the slow servers hold every answer: longer than a call may take to settle. */
  latencyMs: 30_000,
  /** The client's per-attempt timeout against a slow server. */
  timeoutMs: 200,
  /**
   * How long a timeout or an abort may take to settle the call before it is reported unsettled:
   * only a guard against a hang (a client that waits for the answer, which comes later still),
   * so that two modes of two such calls end within the runner's minute.
   */
  settleWithinMs: 10_000,
} as const;

/** Where the test's HTTP reference servers listen. */
export interface ScenarioConfig {
  /** The reference server over node:http, seeded with `SCENARIO.pets`. */
  baseUrl: string;
  /** The same, with every answer delayed by `SCENARIO.latencyMs`. */
  slowBaseUrl: string;
}

/** An error as JSON: its class name, whether it is one of ours, and what it carries. */
export interface ErrorReport {
  name: string;
  petStoreError: boolean;
  message: string;
  status?: number;
  code?: string;
  retryAfterMs?: number;
}

/** What happened against one server. */
export interface ModeReport {
  listed: string[];
  /**
   * What the client read of the first answer's headers (a browser calling another origin sees
   * only those the server exposes): the budget it now knows, and the answer's request id.
   */
  seen: { limit?: number; remaining?: number; resetsLater?: boolean; requestId?: string | undefined };
  created: unknown;
  getPet: { name: string; notices: { operation: string; sunset: string | undefined }[] };
  rateLimited: ErrorReport | 'resolved';
  throttled: (ErrorReport | 'resolved') & { sent?: number };
  timedOut: { settled: boolean; error?: ErrorReport | 'resolved' };
  aborted: { settled: boolean; withReason?: boolean; error?: ErrorReport | 'resolved' };
}

/** What depends on the host rather than on the server: checked once, in-process. */
export interface HostReport {
  /** The headers that name the SDK on a request: `User-Agent` where it may be set, else the X- one. */
  identity: { userAgent: string | null; client: string | null };
  /**
   * Where getPet's default deprecation warning (no onDeprecation) went: `console` (console.warn),
   * `process` (a process 'warning' event, which Node, Bun and Deno print), both or neither.
   */
  warning: ('console' | 'process')[];
  /** A body sent one byte per chunk, a character split across chunks: its text as listPets read it. */
  streamed: string[] | ErrorReport;
  /** maxResponseBytes against a body with no Content-Length (read, then stopped) and one whose Content-Length is too large. */
  tooLarge: { chunked: ErrorReport | 'resolved'; declared: ErrorReport | 'resolved' };
}

/** One answer as read over HTTP: its `Content-Length` and how many bytes of body came. */
export interface LengthReport {
  contentLength: string | null;
  bytes: number;
}

/** `GET` and `HEAD /v1/pets` as a reference server served by a runtime's own HTTP server answered them. */
export interface ServedReport {
  get: LengthReport;
  head: LengthReport;
}

export interface ScenarioReport {
  /** Which runtime ran it, as it names itself: `node 22.23.3`, `bun 1.4.5`, a user agent. */
  runtime: string;
  host: HostReport;
  inProcess: ModeReport;
  http: ModeReport;
  /** Where the runtime serves HTTP itself (not in a page): the reference server served by it. */
  served?: ServedReport;
}

/** The options of every reference server of the scenario: its key and its pets. */
export const SERVER_OPTIONS = { apiKeys: { [SCENARIO.apiKey]: SCENARIO.plan }, pets: SCENARIO.pets };

/** Sends `GET` and `HEAD /pets` to the reference server at `baseUrl` over HTTP, with `fetch`, and reports their lengths. */
export async function probeHead(baseUrl: string, fetch: typeof globalThis.fetch = globalThis.fetch): Promise<ServedReport> {
  const read = async (method: string): Promise<LengthReport> => {
    const response = await fetch(`${baseUrl}/pets`, { method, headers: { Authorization: `Bearer ${SCENARIO.apiKey}` } });
    return { contentLength: response.headers.get('Content-Length'), bytes: (await response.arrayBuffer()).byteLength };
  };
  return { get: await read('GET'), head: await read('HEAD') };
}

/** The runtime this runs in, by the globals it has. */
export function runtimeName(): string {
  const g = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } }; process?: { versions?: { node?: string } }; navigator?: { userAgent?: string } };
  if (g.Bun) return `bun ${g.Bun.version}`;
  if (g.Deno) return `deno ${g.Deno.version.deno}`;
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (g.process?.versions?.node) return `node ${g.process.versions.node}`;
  return g.navigator?.userAgent ?? 'unknown';
}

export function reportError(error: unknown): ErrorReport {
  if (!(error instanceof Error)) return { name: typeof error, petStoreError: false, message: String(error) };
  const { status, code, retryAfterMs } = error as { status?: number; code?: string; retryAfterMs?: number };
  return { name: error.name, petStoreError: error instanceof PetStoreError, message: error.message, status, code, retryAfterMs };
}

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'resolved' as const,
    (error: unknown) => error,
  );

/** How a call settled, if it did within `SCENARIO.settleWithinMs`. */
async function settledInTime(promise: Promise<unknown>): Promise<{ settled: boolean; outcome?: unknown }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<{ settled: false }>((resolve) => (timer = setTimeout(() => resolve({ settled: false }), SCENARIO.settleWithinMs)));
  const result = await Promise.race([rejection(promise).then((outcome) => ({ settled: true, outcome })), late]);
  clearTimeout(timer);
  return result;
}

const asReport = (outcome: unknown): ErrorReport | 'resolved' => (outcome === 'resolved' ? 'resolved' : reportError(outcome));

/** Runs every step against one server: `baseUrl` through `fetch`, and its slow twin. */
async function runMode(baseUrl: string, fetch: Fetch, slowBaseUrl: string, slowFetch: Fetch): Promise<ModeReport> {
  const { apiKey } = SCENARIO;
  const notices: ModeReport['getPet']['notices'] = [];
  const client = new PetStoreClient({ apiKey, baseUrl, fetch, onDeprecation: (notice) => notices.push({ operation: notice.operation, sunset: notice.sunset?.toISOString().slice(0, 10) }) });

  const first = await client.withResponse.listPets();
  const listed = first.data.map((pet) => pet.name);
  const budget = client.rateLimit.getSnapshot();
  const seen = { limit: budget?.limit, remaining: budget?.remaining, resetsLater: budget && budget.resetAt.getTime() > Date.now(), requestId: first.requestId };
  const created = await client.createPet({ name: 'Runtime', categoryId: 3, status: 'pending' }).catch(reportError);
  const pet = await client.getPet(1);
  await client.getPet(2);

  // A 429 the server forces (Prefer: code=429) with its Retry-After; then the client knows it
  // must wait longer than it may (maxRetryDelay), so it refuses the next call without sending.
  let sent = 0;
  const counting: Fetch = (request, init) => {
    sent++;
    return fetch(request, init);
  };
  const limited = new PetStoreClient({ apiKey, baseUrl, fetch: counting, maxRetries: 0, maxRetryDelay: 100 });
  const rateLimited = asReport(await rejection(limited.listPets(undefined, { headers: { Prefer: 'code=429' } })));
  const sentBefore = sent;
  const throttled = { ...(asReport(await rejection(limited.listPets())) as ErrorReport), sent: sent - sentBefore };

  const slow = new PetStoreClient({ apiKey, baseUrl: slowBaseUrl, fetch: slowFetch, maxRetries: 0, timeout: SCENARIO.timeoutMs });
  const timeout = await settledInTime(slow.listPets());
  const controller = new AbortController();
  const reason = new Error('The caller gave up.');
  // Aborted while the request is in flight: after fetch has begun it, long before the slow answer.
  const inFlight: Fetch = (request, init) => {
    const answer = slowFetch(request, init);
    setTimeout(() => controller.abort(reason));
    return answer;
  };
  // The abort needs a client with its default timeout: a short one would end the call itself.
  const patient = new PetStoreClient({ apiKey, baseUrl: slowBaseUrl, fetch: inFlight, maxRetries: 0 });
  const abort = await settledInTime(patient.listPets(undefined, { signal: controller.signal }));

  return {
    listed,
    created,
    seen,
    getPet: { name: pet.name, notices },
    rateLimited,
    throttled,
    timedOut: timeout.settled ? { settled: true, error: asReport(timeout.outcome) } : { settled: false },
    aborted: abort.settled ? { settled: true, withReason: (abort.outcome as { cause?: unknown } | undefined)?.cause === reason, error: asReport(abort.outcome) } : { settled: false },
  };
}

/** A pet whose name has a 2-byte, a 3-byte and a 4-byte character, for the streamed body. */
export const STREAMED_NAME = 'Zoë € 🐈';

/** A 200 with `body` one byte per chunk, with no Content-Length (as a chunked answer), or with `contentLength`. */
function bytewise(body: string, contentLength?: number): Response {
  const bytes = new TextEncoder().encode(body);
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < bytes.length) controller.enqueue(bytes.slice(at, ++at));
      else controller.close();
    },
  });
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (contentLength !== undefined) headers['Content-Length'] = String(contentLength);
  return new Response(stream, { headers });
}

/** What depends on the host: how the client names itself, where its default warning goes, how it reads bodies. */
async function runHost(server: { fetch: Fetch }): Promise<HostReport> {
  const { apiKey } = SCENARIO;
  const baseUrl = 'http://in-process.test/v1';
  let identity: HostReport['identity'] = { userAgent: null, client: null };
  const recording: Fetch = (request, init) => {
    identity = { userAgent: request.headers.get('User-Agent'), client: request.headers.get('X-Animal-Store-Client') };
    return server.fetch(request, init);
  };

  // The default warning, without onDeprecation: watched on both channels, then both restored.
  const warning = new Set<'console' | 'process'>();
  type Emitter = { on?(event: string, listener: (warning: { code?: string }) => void): unknown; off?(event: string, listener: (warning: { code?: string }) => void): unknown };
  const host = (globalThis as { process?: Emitter }).process;
  const onWarning = (emitted: { code?: string }) => void (emitted?.code === 'PETSTORE_GET_PET' && warning.add('process'));
  const consoleWarn = console.warn;
  console.warn = (...args: unknown[]) => void (String(args[0]).includes('getPet') ? warning.add('console') : consoleWarn.apply(console, args));
  host?.on?.('warning', onWarning);
  try {
    await new PetStoreClient({ apiKey, baseUrl, fetch: recording }).getPet(1);
    // Node, Bun and Deno emit the warning event on a later tick (process.nextTick): a timer runs after it.
    await new Promise((resolve) => setTimeout(resolve));
  } finally {
    console.warn = consoleWarn;
    host?.off?.('warning', onWarning);
  }

  const pets = JSON.stringify([{ id: 1, name: STREAMED_NAME, categoryId: 1, status: 'available' }]);
  const streamed = await new PetStoreClient({ apiKey, baseUrl, fetch: async () => bytewise(pets) })
    .listPets()
    .then((list) => list.map((pet) => pet.name), reportError);
  const capped = (response: () => Response) => new PetStoreClient({ apiKey, baseUrl, maxRetries: 0, maxResponseBytes: 16, fetch: async () => response() }).listPets();
  const tooLarge = {
    chunked: asReport(await rejection(capped(() => bytewise(pets)))),
    declared: asReport(await rejection(capped(() => bytewise(pets, new TextEncoder().encode(pets).length)))),
  };
  return { identity, warning: [...warning].sort(), streamed, tooLarge };
}

/** The whole scenario: in-process first, then over HTTP against the test's servers. */
export async function runScenario(config: ScenarioConfig): Promise<ScenarioReport> {
  const host = await runHost(createReferenceServer(SERVER_OPTIONS));
  const server = createReferenceServer(SERVER_OPTIONS);
  const slowServer = createReferenceServer({ ...SERVER_OPTIONS, faults: { rate: 1, kinds: ['latency'], latencyMs: SCENARIO.latencyMs } });
  const inProcess = await runMode('http://in-process.test/v1', server.fetch, 'http://in-process.test/v1', slowServer.fetch);
  const network: Fetch = (request, init) => globalThis.fetch(request, init);
  const http = await runMode(config.baseUrl, network, config.slowBaseUrl, network);
  return { runtime: runtimeName(), host, inProcess, http };
}

/**
 * Deno without `--allow-env`: a client given only `baseUrl` must say that `apiKey` is missing
 * (a ValidationError naming it), not leak Deno's `NotCapable`; one given `apiKey` too is made.
 */
export function missingOption(baseUrl: string, apiKey?: string): ErrorReport | 'constructed' {
  try {
    new PetStoreClient({ apiKey, baseUrl });
    return 'constructed';
  } catch (error) {
    return reportError(error);
  }
}

/**
 * Deno without `--allow-net`: a call must fail with a PetStoreError, and not be retried (the
 * permission will not appear between attempts).
 */
export async function deniedNetwork(baseUrl: string): Promise<{ error: ErrorReport | 'resolved'; attempts: number }> {
  let attempts = 0;
  const client = new PetStoreClient({
    apiKey: SCENARIO.apiKey,
    baseUrl,
    fetch: (request, init) => {
      attempts++;
      return globalThis.fetch(request, init);
    },
  });
  const error = asReport(await rejection(client.listPets()));
  return { error, attempts };
}
