/** The kinds of fault the reference server can inject. */
export type FaultKind = 'latency' | 'error' | 'drop' | 'truncate';

/** Fault injection, for testing how a client copes with a bad network and a flaky server. */
export interface FaultOptions {
  /** The share of requests that get a fault, from 0 to 1. Preflights, the OpenAPI document, the admin API and forced answers (`Prefer: code=…`) never do. */
  rate: number;
  /**
   * Which faults to draw from, each equally likely.
   * - `latency`: the answer is delayed by `latencyMs`.
   * - `error`: 503 with an Error record, before the request is acted on.
   * - `drop`: the connection is dropped, before or (half the time) after the request was acted on.
   * - `truncate`: the request is acted on and the body is cut off halfway.
   * @default ['latency', 'error', 'drop', 'truncate']
   */
  kinds?: readonly FaultKind[] | undefined;
  /** How long a `latency` fault delays the answer, in milliseconds. @default 200 */
  latencyMs?: number | undefined;
  /** Seed of the pseudo-random draw, so a run can be repeated; `reset()` starts the draw over. @default 1 */
  seed?: number | undefined;
}

/**
 * Thrown by `fetch` for a dropped connection, as a real `fetch` throws a `TypeError` when the
 * network fails. The adapters turn it into a network error (msw) or a destroyed socket (node:http).
 */
export class InjectedFault extends TypeError {
  /** The class name, `InjectedFault`, set as a literal so it survives minification. */
  override readonly name = 'InjectedFault' as const;
  /** What was injected: a dropped connection. */
  readonly kind: 'drop';
  /**
   * Creates the fault a server's `fetch` throws for a dropped connection.
   * @param kind What was injected: a dropped connection.
   */
  constructor(kind: 'drop') {
    super('fetch failed: connection dropped by injected fault');
    this.kind = kind;
  }
}

/** True when `error` is a dropped connection injected by the reference server. */
export const isInjectedFault = (error: unknown): error is InjectedFault =>
  error instanceof Error && error.name === 'InjectedFault';

/** A plan for one request: which fault, and when the drop happens. */
export interface FaultPlan {
  kind: FaultKind;
  /** For `drop`: after the request was acted on. */
  afterHandling: boolean;
  /** For `latency`: how long the answer waits. */
  latencyMs: number;
}

/** Every kind of fault, in the order the docs list them. */
export const FAULT_KINDS: readonly FaultKind[] = /* @__PURE__ */ Object.freeze(['latency', 'error', 'drop', 'truncate']);

/**
 * mulberry32: a small, fast, seedable PRNG; fault draws must repeat across runs. A seed's bits
 * past 32 are folded into its 32-bit state, so each seed up to 2^53 - 1 draws its own (a seed
 * below 2^32 draws as it always has).
 */
function prng(seed: number): () => number {
  let a = (seed >>> 0) ^ Math.imul((seed / 4294967296) >>> 0, 0x9e3779b9);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fault options after defaults are applied and inputs are checked. */
export interface ResolvedFaults {
  rate: number;
  kinds: readonly FaultKind[];
  latencyMs: number;
  seed: number;
}

/** Draws faults for requests, or nothing when `faults` is undefined or its rate is 0. */
export function createFaultPlanner(faults: ResolvedFaults | undefined): (() => FaultPlan | undefined) & { reset(): void } {
  if (!faults || faults.rate === 0) return Object.assign(() => undefined, { reset() {} });
  const { rate, kinds, seed, latencyMs } = faults;
  let random = prng(seed);
  const plan = () => (random() >= rate ? undefined : { kind: kinds[Math.floor(random() * kinds.length)]!, afterHandling: random() < 0.5, latencyMs });
  return Object.assign(plan, { reset: () => void (random = prng(seed)) });
}
