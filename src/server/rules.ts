/**
 * The reference server's own rules, which the spec does not state. They live here, with the
 * server, so that no client bundle carries them: the client validates to the spec only.
 *
 * @module
 */
import * as z from 'zod/mini';
import { NewPetSchema } from '../schemas/index.js';

/**
 * The longest `name` the reference server accepts, in characters: Unicode code points, as zod's
 * length checks and JSON Schema's `maxLength` count them (256 emoji, 512 UTF-16 code units, pass).
 */
export const MAX_NAME_LENGTH = 256;

/** A new pet as the reference server accepts it: the spec's NewAnimal with a name of 1 to 256 characters, and no other field. */
export const ServerNewPetSchema = /* @__PURE__ */ (() => {
  // The spec's fields without `id`: an unknown field here, reported as such like any other.
  const { id: _id, ...fields } = NewPetSchema.def.shape;
  return z.strictObject({ ...fields, name: z.string().check(z.minLength(1), z.maxLength(MAX_NAME_LENGTH)) });
})();
