// How an app tests its code that uses @animal-store/sdk: the reference server behind msw handlers,
// so the real client sends real requests and no network is involved.
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PetStoreClient } from '@animal-store/sdk';
import { createHandlers } from '@animal-store/sdk/msw';
import { createReferenceServer } from '@animal-store/sdk/server';
import { Shelter } from './shelter.js';

const baseUrl = 'https://petstore.test/v1';
// A fixed clock: 30 seconds into a minute, so rate-limit windows do not move under the tests.
const api = createReferenceServer({
  now: () => Date.UTC(2026, 5, 1, 12, 0, 30),
  apiKeys: { 'shelter-key': 'free', 'tiny-key': { perMinute: 1, perDay: 100 } },
  pets: [
    { name: 'Luna', categoryId: 2, status: 'available' },
    { name: 'Milo', categoryId: 1, status: 'sold' },
  ],
});
const mock = setupServer(...createHandlers(api, { baseUrl }));

beforeAll(() => mock.listen({ onUnhandledFrame: 'error' }));
afterEach(() => api.reset());
afterAll(() => mock.close());

const shelter = (apiKey = 'shelter-key') => new Shelter(new PetStoreClient({ apiKey, baseUrl, maxRetries: 0 }));

describe('Shelter', () => {
  it('an admitted animal is listed as adoptable after the ones already there', async () => {
    const app = shelter();
    const rex = await app.admit('  Rex ', 3);
    expect(rex).toMatchObject({ name: 'Rex', categoryId: 3, status: 'available' });
    expect(await app.adoptable()).toEqual(['Luna', 'Rex']);
  });

  it('the census counts the pets in each status', async () => {
    expect(await shelter().census()).toEqual({ available: 1, pending: 0, sold: 1, unknown: 0 });
  });

  it('a wrong API key is explained to the staff', async () => {
    const error = await shelter('wrong-key').adoptable().catch((e: unknown) => e);
    expect(Shelter.explain(error)).toBe('The shelter is not signed in: check the API key.');
  });

  it('a call the client does not send, since the budget is spent, is explained with the wait left', async () => {
    // Throttling on (the default), and no waiting (as an interactive app would choose): the client
    // refuses the second request itself, with a ThrottledError, instead of waiting 30 s.
    const app = new Shelter(new PetStoreClient({ apiKey: 'tiny-key', baseUrl, maxRetryDelay: 0 }));
    await app.adoptable();
    const error = await app.adoptable().catch((e: unknown) => e);
    expect(Shelter.explain(error)).toMatch(/^Too many requests: try again in \d+ s\.$/);
    expect(api.inspect().keys['tiny-key']?.requests).toBe(1);
  });

  it('a spent rate limit is explained with the wait the server asked for', async () => {
    // One request per minute, and throttling off, so the second request gets the server's 429.
    const app = new Shelter(new PetStoreClient({ apiKey: 'tiny-key', baseUrl, maxRetries: 0, throttle: false }));
    await app.adoptable();
    const error = await app.adoptable().catch((e: unknown) => e);
    expect(Shelter.explain(error)).toBe('Too many requests: try again in 30 s.');
  });
});
