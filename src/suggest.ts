/**
 * The name most likely meant by a misspelt one: one rule for the options of the client, the Redis
 * coordinator and the reference server, and for the CLI's flags, so that each "did you mean"
 * answers the same slips.
 *
 * @internal
 * @module
 */

import { clip } from './redact.js';

/**
 * Lower case, without `_` and `-`, and `-ies` read as `-y`: `max_retries`, `MaxRetries`,
 * `max-retries` and `maxRetry` read alike.
 */
const plain = (name: string) => name.toLowerCase().replace(/[_-]/g, '').replace(/ies$/, 'y');

/** Edits between two names (insert, delete, replace, swap two neighbours), or more than `most` once past it. */
function distance(a: string, b: string, most: number): number {
  if (Math.abs(a.length - b.length) > most) return most + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      let cost = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) cost = Math.min(cost, before[j - 2]! + 1);
      row.push(cost);
    }
    [before, previous] = [previous, row];
  }
  return previous[b.length]!;
}

/**
 * The one of `known` that `name` most likely means: the same but for case, `_`, `-` or
 * `-y` for `-ies` (`base_url`, `maxRetry`), its end (`retries` for `maxRetries`), or one or two slips of the keyboard
 * (`timout`, `prot`); `undefined` when none is near.
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  const given = plain(name);
  if (!given) return undefined;
  const exact = known.find((option) => plain(option) === given || (given.length >= 3 && plain(option).endsWith(given)));
  if (exact) return exact;
  const most = given.length < 6 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = most + 1;
  for (const option of known) {
    const d = distance(given, plain(option), most);
    if (d < bestDistance) [best, bestDistance] = [option, d];
  }
  return best;
}

/**
 * What to say of an option not in `known`: the one most likely meant, else the list.
 * `shown` is the name as the message may show it (an API key pasted as a name is redacted).
 */
export function unknownOption(name: string, known: readonly string[], shown = name): string {
  const meant = closest(name, known);
  return `unknown option "${clip(shown, 40)}"${meant ? ` (did you mean "${meant}"?)` : `. The options are ${known.join(', ')}`}.`;
}

/**
 * Throws for options that are not an object, or that hold a name not in `known` (naming the one
 * most likely meant); `what` is the function they were given to. The error is `error`'s, given
 * the message and the option's name: a `TypeError` by default, for the server side's options; the
 * Redis coordinator throws the client's `ValidationError`.
 */
export function checkKnownOptions(
  options: unknown,
  known: readonly string[],
  what: string,
  error: (message: string, path: string) => Error = (message) => new TypeError(message),
): void {
  if (typeof options !== 'object' || options === null) throw error(`${what}: the options must be an object, such as { ${known.slice(0, 3).join(', ')} }.`, 'options');
  const unknown = Object.keys(options).find((name) => !known.includes(name));
  if (unknown !== undefined) throw error(`${what}: ${unknownOption(unknown, known)}`, unknown);
}
