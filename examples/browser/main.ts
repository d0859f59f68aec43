/**
 * A browser page using the client: it lists pets, adds one from a form, looks one up with the
 * deprecated getPet (the deprecation warning goes to the console), and shows the rate-limit
 * state live. Bundle it as any app would, e.g.
 * `esbuild examples/browser/main.ts --bundle --format=esm --outfile=main.js`.
 *
 * The API's base URL and key come from the page's query string (`?api=…&key=…`), so the page
 * works against any server: the reference server, `petstore-server`, or the real service.
 */
import { PetStoreClient, PetStoreError, type Pet } from '@animal-store/sdk';
import { mountRateLimitView } from './rate-limit-view.js';

const params = new URLSearchParams(location.search);
const client = new PetStoreClient({
  baseUrl: params.get('api') ?? 'http://127.0.0.1:4010/v1',
  apiKey: params.get('key') ?? 'petstore-demo-key',
});

const $ = <T extends HTMLElement>(selector: string) => document.querySelector<T>(selector)!;
const status = $('#status');
mountRateLimitView($('#rate-limit'), client.rateLimit);

function show(pets: Pet[]): void {
  $('#pets').replaceChildren(
    ...pets.map((pet) => {
      const item = document.createElement('li');
      item.dataset.id = String(pet.id);
      item.textContent = `#${pet.id} ${pet.name} (category ${pet.categoryId}${pet.status ? `, ${pet.status}` : ''})`;
      return item;
    }),
  );
}

/** Runs one action, reporting its outcome (or the client's error) in the status line. */
async function run(action: () => Promise<string>): Promise<void> {
  try {
    status.textContent = await action();
  } catch (error) {
    status.textContent = error instanceof PetStoreError ? `${error.name}: ${error.message}` : String(error);
  }
}

$<HTMLFormElement>('#new-pet').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = new FormData(event.target as HTMLFormElement);
  void run(async () => {
    const pet = await client.createPet({ name: String(form.get('name')), categoryId: Number(form.get('categoryId')) });
    show(await client.listPets({ limit: 100 }));
    return `Added ${pet.name} as #${pet.id}.`;
  });
});

$('#first-pet').addEventListener('click', () => {
  void run(async () => {
    const first = document.querySelector<HTMLElement>('#pets li')?.dataset.id;
    if (!first) return 'No pet to look up.';
    // Deprecated: the client warns once on the console (DeprecationWarning) on the first call.
    const pet = await client.getPet(Number(first));
    return `getPet(${pet.id}): ${pet.name}.`;
  });
});

void run(async () => {
  const pets = await client.listPets({ limit: 100 });
  show(pets);
  return `Loaded ${pets.length} pets.`;
});
