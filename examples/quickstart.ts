// The quickstart: `npm start` runs this file. It starts the bundled reference server on a free
// port, points the client at it, and prints what each call did.
import { PetStoreClient, ValidationError } from '@animal-store/sdk';
import { startReferenceServer } from '@animal-store/sdk/node';

// The whole Animal Store API in memory, over real HTTP on 127.0.0.1, with one Pro-plan key
// and three pets, one of each status.
const api = await startReferenceServer({
  port: 0,
  apiKeys: { 'quickstart-key': 'pro' },
  pets: [
    { name: 'Rex', categoryId: 1, status: 'available' },
    { name: 'Whiskers', categoryId: 2, status: 'pending' },
    { name: 'Bubbles', categoryId: 3, status: 'sold' },
  ],
});
console.log(`Reference server listening on ${api.url}`);

const client = new PetStoreClient({ apiKey: 'quickstart-key', baseUrl: api.url });

const pets = await client.listPets({ limit: 10 });
console.log(`listPets: ${pets.length} pets: ${pets.map((pet) => `${pet.name} (#${pet.id}, ${pet.status})`).join(', ')}`);

const biscuit = await client.createPet({ name: 'Biscuit', categoryId: 1, status: 'available' });
console.log(`createPet: ${biscuit.name} got id ${biscuit.id}`);

const available = await client.listPets({ status: 'available' });
console.log(`listPets({ status: 'available' }): ${available.map((pet) => `${pet.name} (#${pet.id})`).join(', ')}`);

// Arguments are checked before anything is sent.
try {
  await client.listPets({ limit: 500 });
} catch (error) {
  if (!(error instanceof ValidationError)) throw error;
  console.log(`ValidationError: ${error.message}`);
}

// Every response carries the rate-limit headers; the client keeps the latest state.
const state = client.rateLimit.getSnapshot();
console.log(`Rate limit: ${state?.remaining} of ${state?.limit} requests left in this window`);

await api.close();
console.log('Done: the reference server is closed.');
