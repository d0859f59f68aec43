/**
 * What the client needs from its host, reached without Node-only imports so the client runs
 * wherever `fetch` does: `process` (env vars, warnings) when it exists, abortable waits, and
 * listener calls that cannot break a call.
 *
 * @internal
 * @module
 */

/** The few members of Node's `process` the client uses; absent in browsers and workers. */
export interface HostProcess {
  env?: Record<string, string | undefined>;
  emitWarning?: (message: string, options: { type: string; code: string }) => void;
}

/** Node's `process` when the host has one, looked up at run time so bundlers leave it alone. */
export function hostProcess(): HostProcess | undefined {
  return (globalThis as { process?: HostProcess }).process;
}

/**
 * Whether the environment (one variable, or all of it) may be read without asking: Deno stops
 * the app on a terminal to ask for what was not granted, and a query never asks. Deno Deploy has
 * no `querySync` (denoland/deploy_feedback#527) and grants the environment.
 */
export function envGranted(variable?: string): boolean {
  const deno = (globalThis as { Deno?: { permissions?: { querySync?(descriptor: { name: 'env'; variable?: string | undefined }): { state: string } } } }).Deno;
  return (deno?.permissions?.querySync?.({ name: 'env', variable }).state ?? 'granted') === 'granted';
}

/**
 * An environment variable, or `undefined` where there is no environment or reading it is not
 * allowed (Deno without `--allow-env` throws `NotCapable`, or asks): a denied variable reads as unset.
 */
export function env(name: string): string | undefined {
  try {
    return envGranted(name) ? hostProcess()?.env?.[name] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether an error is the host refusing the request itself (Deno's `NotCapable` or
 * `PermissionDenied` without `--allow-net`): it never goes away, so it is not retried, and nothing
 * was sent.
 */
export function isPermissionDenied(error: unknown): boolean {
  const name = (error as Error | undefined)?.name;
  return name === 'NotCapable' || name === 'PermissionDenied';
}

/**
 * Reports an error thrown by a user's listener without letting it change what the client does:
 * `reportError` where the host has it (browsers, workerd, Deno, Bun), else rethrown in a
 * microtask (Node has no `reportError`). In Node, Bun and Deno either ends the process, as an
 * uncaught error does; browsers and workerd log it.
 */
export function reportListenerError(error: unknown): void {
  const report = (globalThis as { reportError?: (error: unknown) => void }).reportError;
  if (typeof report === 'function') report(error);
  else queueMicrotask(() => {
    throw error;
  });
}

/**
 * Calls each listener with `value`; one that throws is reported and the others still run. An
 * async one that rejects is reported too: unhandled, its rejection would end a Node process.
 */
export function notify<T>(listeners: Iterable<(value: T) => void>, value: T): void {
  for (const listener of [...listeners]) isolated(() => listener(value));
}

/**
 * Whether `value` is a promise: this realm's, another realm's (a `vm` context, an iframe) or a
 * library's thenable. Code of the user's own is duck typed, and `instanceof Promise` is not:
 * an async method of another realm answers that realm's `Promise`.
 */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** Runs code of the user's own (a listener, a logger's method): what it throws, or rejects with when async, is reported. */
export function isolated(run: () => unknown): void {
  try {
    const result = run();
    if (isThenable(result)) Promise.resolve(result).catch(reportListenerError);
  } catch (error) {
    reportListenerError(error);
  }
}

/** The longest wait `setTimeout` honours: a longer one fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits `ms` milliseconds (forever for `Infinity`), or until `wake` resolves, whichever comes
 * first; rejects with the signal's reason as soon as it aborts. The one abortable wait of the
 * package: the client's retries, rate-limit windows and waits for a slot, and the reference
 * server's injected latency, all use it, and it uses `setTimeout`, so fake timers drive every
 * wait. ({@link orAbort} waits for a promise, not a time: it needs no timer and stands apart.)
 */
export function sleep(ms: number, signal?: AbortSignal, wake?: (signal: AbortSignal) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    // Only a wake needs telling that the wait is over.
    const done = wake && new AbortController();
    // A failure is an argument, whatever its value: a wake that throws undefined failed too.
    const finish = (...failure: unknown[]) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      done?.abort();
      if (failure.length) reject(failure[0]);
      else resolve();
    };
    const onAbort = () => finish(signal!.reason);
    const timer = Number.isFinite(ms) ? setTimeout(() => finish(), Math.max(0, ms)) : undefined;
    signal?.addEventListener('abort', onAbort, { once: true });
    // A wake that throws, or answers no promise (a coordinator of the user's own), ends the wait
    // with that failure, its timer cleared; one that rejects only leaves the timer to end it.
    try {
      wake?.(done!.signal).then(() => finish(), () => {});
    } catch (error) {
      finish(error);
    }
  });
}

/**
 * `promise`, or a rejection with the signal's reason as soon as it aborts, whichever comes first:
 * for what may not heed the signal itself (an in-process fetch, a body being read).
 */
export function orAbort<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  // On every request of the client and of the in-process server: one listener, no controller or
  // timer (built on sleep, it cost the client 6-13 % of its throughput).
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    const settle =
      <V>(then: (value: V) => void) =>
      (value: V) => {
        signal.removeEventListener('abort', onAbort);
        then(value);
      };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(settle(resolve), settle(reject));
  });
}

/** Whether `value` is an object with these methods (duck typed: one from another realm serves). */
export function hasMethods(value: unknown, names: readonly string[]): boolean {
  return ((typeof value === 'object' && value !== null) || typeof value === 'function') && names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');
}

/** A repeatable event: `next()` resolves on the following `fire()`. */
export class Signal {
  #waiters = new Set<() => void>();

  /** Wakes everyone waiting. */
  fire(): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Resolves on the next `fire()`; rejects with the signal's reason if it aborts first. */
  next(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.#waiters.delete(wake);
        reject(signal!.reason);
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.#waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** The package's version, from package.json at build time. */
export const SDK_VERSION = typeof __SDK_VERSION__ === 'string' ? __SDK_VERSION__ : '0.0.0-dev';

/** The SDK's name and version, sent with every request. */
export const SDK_ID = `@animal-store/sdk/${SDK_VERSION}`;
declare const __SDK_VERSION__: string | undefined;

/**
 * Whether this is workerd (Cloudflare Workers), which names itself only in `navigator.userAgent`:
 * its `process` (nodejs_compat, on by default since 2026-08-04) claims `versions.node`.
 */
function isWorkerd(): boolean {
  return (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers';
}

/** The runtime, for the User-Agent: `node/24.1.0`, `bun/1.4.5`, `deno/2.9.6`, `workerd`, or `unknown`. */
export function runtimeName(): string {
  const versions = (globalThis as { process?: { versions?: Record<string, string | undefined> } }).process?.versions;
  if (versions?.bun) return `bun/${versions.bun}`;
  const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno?.version?.deno;
  if (deno) return `deno/${deno}`;
  // A worker knows no version of its runtime.
  if (isWorkerd()) return 'workerd';
  return versions?.node ? `node/${versions.node}` : 'unknown';
}

/**
 * `process.emitWarning` where the runtime prints what it emits (Node, Bun, Deno); `undefined`
 * elsewhere, console.warn's hosts: browsers, and workerd, whose `emitWarning` only emits a
 * 'warning' event that nothing prints.
 */
export function printedWarning(): HostProcess['emitWarning'] {
  return isWorkerd() ? undefined : hostProcess()?.emitWarning;
}

/** The page's address where there is one (a browser), to resolve a relative base URL against. */
export function pageUrl(): string | undefined {
  return (globalThis as { location?: { href?: string } }).location?.href;
}
