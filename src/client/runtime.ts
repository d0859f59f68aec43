/**
 * What the client needs from its host, reached without Node-only imports so the client runs
 * wherever `fetch` does: `process` (env vars, warnings) when it exists, and abortable timers.
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
 * Resolves after `ms` milliseconds, or rejects with the signal's reason as soon as it aborts.
 * Uses `setTimeout`, so fake timers drive every wait of the client.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
