import type { NewPet, Pet, PetStatus } from '../schemas/index.js';

/**
 * The in-memory pet store. Ids only grow and pets are never removed, so the insertion-ordered
 * arrays below are already sorted by id: a page costs O(limit) whatever the store holds. Pets
 * never change either, so each is serialized once, when stored: a page is a join of ready JSON,
 * made once until the next pet is stored.
 */
export class PetStore {
  #byId = new Map<number, Pet>();
  /** Every pet's JSON, in id order. */
  #all: string[] = [];
  /** The JSON of the pets of each status, in id order. */
  #byStatus = new Map<PetStatus, string[]>();
  /** Each page already joined, by status (`undefined`: all) and limit; a new pet changes them all. */
  #pages = new Map<PetStatus | undefined, string[]>();
  #nextId = 1;

  /** A store holding `seed` (sorted by id), its ids continuing after the largest. */
  constructor(seed: readonly Pet[] = []) {
    for (const pet of seed) this.#insert(Object.freeze({ ...pet }));
  }

  #insert(pet: Pet): Pet {
    const json = JSON.stringify(pet);
    this.#pages.clear();
    this.#byId.set(pet.id, pet);
    this.#all.push(json);
    if (pet.status) {
      let list = this.#byStatus.get(pet.status);
      if (!list) this.#byStatus.set(pet.status, (list = []));
      list.push(json);
    }
    this.#nextId = Math.max(this.#nextId, pet.id + 1);
    return pet;
  }

  /**
   * Adds a pet under a new id, never used before by this store; `undefined` when none is left: ids
   * are safe integers (past 2^53 − 1 they would not survive JSON, and 2^53 + 1 does not exist).
   */
  add(pet: NewPet): Pet | undefined {
    if (!Number.isSafeInteger(this.#nextId)) return undefined;
    const record: Pet = { id: this.#nextId, name: pet.name, categoryId: pet.categoryId };
    if (pet.status !== undefined) record.status = pet.status;
    return this.#insert(Object.freeze(record));
  }

  /** The pet with this id, if any. */
  get(id: number): Pet | undefined {
    return this.#byId.get(id);
  }

  /** The JSON array of the first `limit` pets in ascending id order, optionally only those with `status`. */
  listJson(limit: number, status?: PetStatus): string {
    let pages = this.#pages.get(status);
    if (!pages) this.#pages.set(status, (pages = []));
    const source = status ? (this.#byStatus.get(status) ?? []) : this.#all;
    return (pages[limit] ??= `[${source.slice(0, limit).join(',')}]`);
  }

  /** How many pets the store holds. */
  get size(): number {
    return this.#all.length;
  }
}
