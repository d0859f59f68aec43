/**
 * A small app built on the client: an animal shelter that admits animals and lists the ones
 * up for adoption. `shelter.test.ts` tests it against the reference server through msw, the way
 * an app's own tests would.
 */
import { AuthenticationError, PetStoreClient, RateLimitError, ThrottledError, type Pet, type PetStatus } from '@animal-store/sdk';

export class Shelter {
  constructor(private readonly client: PetStoreClient) {}

  /** Admits an animal: it is added to the store as available for adoption. */
  admit(name: string, categoryId: number): Promise<Pet> {
    return this.client.createPet({ name: name.trim(), categoryId, status: 'available' });
  }

  /** The names of the animals up for adoption, in the order the store lists them. */
  async adoptable(limit = 100): Promise<string[]> {
    const pets = await this.client.listPets({ status: 'available', limit });
    return pets.map((pet) => pet.name);
  }

  /** How many of the first `limit` pets are in each status. */
  async census(limit = 100): Promise<Record<PetStatus | 'unknown', number>> {
    const counts = { available: 0, pending: 0, sold: 0, unknown: 0 };
    for (const pet of await this.client.listPets({ limit })) counts[pet.status ?? 'unknown']++;
    return counts;
  }

  /** A message for the shelter's staff, for the errors they can act on. */
  static explain(error: unknown): string {
    if (error instanceof AuthenticationError) return 'The shelter is not signed in: check the API key.';
    // The server's 429 (RateLimitError), or the client's refusal to send one (ThrottledError).
    if (error instanceof RateLimitError || error instanceof ThrottledError) return `Too many requests: try again in ${Math.ceil((error.retryAfterMs ?? 0) / 1000)} s.`;
    return 'Something went wrong.';
  }
}
