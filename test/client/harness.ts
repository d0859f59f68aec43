/**
 * Shared set-up of the client tests: the reference server behind msw handlers, as users wire it.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, expect, vi } from 'vitest';
import { PetStoreClient, type ClientOptions } from '@animal-store/sdk';
import { createHandlers } from '@animal-store/sdk/msw';
import { createReferenceServer, type ReferenceServerOptions } from '@animal-store/sdk/server';

export const BASE_URL = 'https://petstore.test/v1';

/** 2026-06-01T00:00:10Z: ten seconds into a clock-aligned minute, well before getPet's sunset. */
export const START = Date.UTC(2026, 5, 1, 0, 0, 10);

export const KEYS = { 'key-free': 'free', 'key-pro': 'pro', 'key-ent': { perMinute: 5, perDay: 100 } } as const;

/**
 * Starts msw over a reference server for the file's tests, resets it after each, and gives a
 * client factory. Fake timers are on (at {@link START}) so every wait is driven by the test.
 */
export function useReferenceServer(options: ReferenceServerOptions = {}) {
  const server = createReferenceServer({ apiKeys: { ...KEYS }, pets: 10, ...options });
  const mock = setupServer(...createHandlers(server, { baseUrl: BASE_URL }));
  beforeAll(() => mock.listen({ onUnhandledFrame: 'error' }));
  beforeEach(() => {
    vi.useFakeTimers({ now: START });
  });
  afterEach(() => {
    mock.resetHandlers();
    server.reset();
    vi.useRealTimers();
  });
  afterAll(() => mock.close());
  const client = (overrides: ClientOptions = {}) =>
    new PetStoreClient({ apiKey: 'key-pro', baseUrl: BASE_URL, ...overrides });
  return { server, mock, client };
}

/**
 * Advances fake time in bounded steps until `promise` settles, and returns how it settled.
 * Bounded so a hang fails the test instead of spinning forever.
 */
export async function settle<T>(promise: Promise<T>, { stepMs = 100, maxSteps = 10_000 } = {}) {
  let outcome: { status: 'fulfilled'; value: T } | { status: 'rejected'; reason: unknown } | undefined;
  promise.then(
    (value) => void (outcome = { status: 'fulfilled', value }),
    (reason: unknown) => void (outcome = { status: 'rejected', reason }),
  );
  for (let step = 0; outcome === undefined && step < maxSteps; step++) await vi.advanceTimersByTimeAsync(stepMs);
  if (outcome === undefined) throw new Error(`did not settle within ${(stepMs * maxSteps) / 1000} s of fake time`);
  return outcome;
}

/**
 * Settles a call that must fail, asserts that it failed with an instance of `Class`, and
 * returns the error typed as that class.
 */
export async function failure<E extends Error>(promise: Promise<unknown>, Class: abstract new (...args: never[]) => E): Promise<E> {
  const outcome = await settle(promise);
  if (outcome.status === 'fulfilled') throw new Error(`expected ${Class.name}, but the call resolved`);
  expect(outcome.reason).toBeInstanceOf(Class);
  return outcome.reason as E;
}

/** Settles a call that must succeed and returns its value, typed. */
export async function value<T>(promise: Promise<T>): Promise<T> {
  const outcome = await settle(promise);
  if (outcome.status === 'rejected') throw outcome.reason;
  return outcome.value;
}

/** Like {@link settle}, but resolves to the value or the rejection reason (for `expect(...).toBeInstanceOf`). */
export async function run<T>(promise: Promise<T>): Promise<T | unknown> {
  const outcome = await settle(promise);
  return outcome.status === 'fulfilled' ? outcome.value : outcome.reason;
}

/** What `make` threw: for a throw that must happen at once (a constructor's `ValidationError`). */
export function thrown(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
