/**
 * The reference server inside the browser: msw's service worker intercepts the client's
 * requests and answers them with `createReferenceServer()`, so a front-end can be developed and
 * tested with no API and no server process at all.
 *
 * Serve msw's worker script at the site's root (`npx msw init public/ --save`, or copy
 * `node_modules/msw/lib/mockServiceWorker.js`), then bundle this file with the page.
 */
import { setupWorker } from 'msw/browser';
import { PetStoreClient } from '@animal-store/sdk';
import { createHandlers } from '@animal-store/sdk/msw';
import { createReferenceServer } from '@animal-store/sdk/server';

// A host that does not exist: every answer has to come from the worker.
const baseUrl = 'https://petstore.test/v1';
const api = createReferenceServer({ apiKeys: { 'browser-key': 'free' }, pets: 2 });
const worker = setupWorker(...createHandlers(api, { baseUrl }));

const status = document.querySelector('#status')!;
try {
  await worker.start({ serviceWorker: { url: '/mockServiceWorker.js' }, onUnhandledFrame: 'error', quiet: true });
  const client = new PetStoreClient({ apiKey: 'browser-key', baseUrl });
  const before = await client.listPets();
  const created = await client.createPet({ name: 'Pixel', categoryId: 4, status: 'pending' });
  const pending = await client.listPets({ status: 'pending' });
  const result = { before, created, pending, rateLimit: client.rateLimit.getSnapshot(), petCount: api.inspect().petCount };
  document.querySelector('#result')!.textContent = JSON.stringify(result, null, 2);
  status.textContent = 'Done.';
} catch (error) {
  status.textContent = `Failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
}
