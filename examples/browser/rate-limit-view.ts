/**
 * A small live view of `client.rateLimit`: a meter of the requests left in the window and one
 * log line per change, updated as the client's requests go out and their answers come back.
 */
import type { RateLimitState, RateLimitStore } from '@animal-store/sdk';

/** One line describing the state, such as `297 of 300 left, resets at 12:01:00`. */
export function describeRateLimit(state: RateLimitState | undefined): string {
  if (!state) return 'No request sent yet.';
  const reset = state.resetAt.toISOString().slice(11, 19);
  const blocked = state.blockedUntil ? `, blocked until ${state.blockedUntil.toISOString().slice(11, 19)}` : '';
  return `${state.remaining} of ${state.limit} left, resets at ${reset} UTC${blocked}`;
}

/** Renders the store into `element` now and on every change; returns the function that stops it. */
export function mountRateLimitView(element: HTMLElement, store: RateLimitStore): () => void {
  const meter = element.ownerDocument.createElement('meter');
  const text = element.ownerDocument.createElement('span');
  const log = element.ownerDocument.createElement('ol');
  log.id = 'rate-limit-log';
  element.replaceChildren(meter, ' ', text, log);
  const render = (state: RateLimitState | undefined) => {
    text.textContent = describeRateLimit(state);
    meter.max = state?.limit ?? 1;
    meter.value = state?.remaining ?? 0;
    element.dataset.remaining = state ? String(state.remaining) : '';
  };
  render(store.getSnapshot());
  return store.subscribe((state) => {
    render(state);
    const line = element.ownerDocument.createElement('li');
    line.textContent = describeRateLimit(state);
    log.append(line);
  });
}
