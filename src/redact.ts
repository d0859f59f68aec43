/**
 * How an API key is hidden in what people are shown (errors, log lines, events, the reference
 * server's journal), and how a long value is cut there: one rule for the client and the server.
 *
 * @module
 */

/**
 * `text` as a message quotes it: at most `max` characters, and `…` where it was cut (never
 * between the two halves of an emoji or another character outside the BMP).
 */
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max).replace(/[\uD800-\uDBFF]$/, '')}…` : text);

/** What stands where a key was. */
export const REDACTED = '[redacted]';

/** A character of a key, as written or percent-encoded (`/` as `%2F` or `%2f`, `%` as `%25`). */
function character(c: string): string {
  if (/[A-Za-z0-9]/.test(c)) return c;
  const [high, low] = c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
  const digit = (d: string) => (/\d/.test(d) ? d : `[${d}${d.toLowerCase()}]`);
  // Every other character escaped: outside unicode mode, a backslash before any of them means itself.
  return `(?:\\${c}|%${digit(high!)}${digit(low!)})`;
}

/**
 * Finds each of `keys` where it stands alone, as written or with any of its characters
 * percent-encoded (as `encodeURIComponent` or a URL parser writes them). Standing alone: not
 * inside a longer token (`[\w.~+-]` on either side), so a key `k` leaves `invalid_api_key` as it
 * is; a period after it ends a sentence unless the token goes on. A `/`, `=`, `?` or `&` is a
 * boundary: a key is found as a path segment (`https://proxy.example/KEY/v1`) and as a query
 * value (`?token=KEY`), and after a percent-escape (`Bearer%20KEY`). The keys are visible ASCII.
 */
function keyPattern(keys: readonly string[]): RegExp {
  const alternatives = keys.map((key) => [...key].map(character).join(''));
  return new RegExp(`(?:(?<![\\w.~+-])|(?<=%[\\dA-Fa-f]{2}))(?:${alternatives.join('|')})(?!\\.?[\\w~+-])`, 'g');
}

/**
 * `text` with each of `keys` shown as {@link REDACTED} where it stands alone (see {@link keyPattern}),
 * also as JSON writes a key holding `"` or `\` (escaped), and as a URL parser writes a key with
 * `\` in a path (`https://proxy.example/KEY/v1`): with `/`. No real key holds either.
 */
export function redactor(keys: readonly string[]): (text: string) => string {
  const pattern = keyPattern([...new Set(keys.flatMap((key) => [key, JSON.stringify(key).slice(1, -1), key.replaceAll('\\', '/')]))]);
  // Each form of a key holds its longest run of letters and digits as written (they are never
  // escaped): a text without any holds no key, and costs no search (every call's URL is redacted).
  // A key without a letter or a digit has the run '', which every text holds; no keys, no run.
  const runs = keys.map((key) => (key.match(/[A-Za-z0-9]+/g) ?? ['']).reduce((longest, run) => (run.length > longest.length ? run : longest)));
  return (text) => (runs.some((run) => text.includes(run)) ? text.replace(pattern, REDACTED) : text);
}
