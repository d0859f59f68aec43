import type { NewPet, Pet, PetStatus } from '../schemas/index.js';

/**
 * The in-memory pet store. Ids only grow and pets are never removed, so the insertion-ordered
 * arrays below are already sorted by id: a page costs O(limit) whatever the store holds.
 */
export class PetStore {
  #byId = new Map<number, Pet>();
  #all: Pet[] = [];
  #byStatus = new Map<PetStatus, Pet[]>();
  #nextId = 1;

  constructor(seed: readonly Pet[] = []) {
    this.reset(seed);
  }

  /** Replaces the contents with `seed` (sorted by id) and restarts ids after the largest. */
  reset(seed: readonly Pet[]): void {
    this.#byId.clear();
    this.#all = [];
    this.#byStatus.clear();
    this.#nextId = 1;
    for (const pet of seed) this.#insert(Object.freeze({ ...pet }));
  }

  #insert(pet: Pet): Pet {
    this.#byId.set(pet.id, pet);
    this.#all.push(pet);
    if (pet.status) {
      let list = this.#byStatus.get(pet.status);
      if (!list) this.#byStatus.set(pet.status, (list = []));
      list.push(pet);
    }
    this.#nextId = Math.max(this.#nextId, pet.id + 1);
    return pet;
  }

  /** Adds a pet under a new id, never used before by this store. */
  add(pet: NewPet): Pet {
    const record: Pet = { id: this.#nextId, name: pet.name, categoryId: pet.categoryId };
    if (pet.status !== undefined) record.status = pet.status;
    return this.#insert(Object.freeze(record));
  }

  /** The pet with this id, if any. */
  get(id: number): Pet | undefined {
    return this.#byId.get(id);
  }

  /** The first `limit` pets in ascending id order, optionally only those with `status`. */
  list(limit: number, status?: PetStatus): Pet[] {
    const source = status ? (this.#byStatus.get(status) ?? []) : this.#all;
    return source.slice(0, limit);
  }

  /** How many pets the store holds. */
  get size(): number {
    return this.#all.length;
  }
}
