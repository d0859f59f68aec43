/** An answer a fake `fetch` gives: a 429 Error record's `code`, and its `Retry-After`. */
export interface Answer429 {
  code: string;
  retryAfter: string;
}

/**
 * A `fetch` that answers the nth request with the nth of `answers`, after n × `stepMs` (on
 * `setTimeout`: fake timers drive it where a test uses them), so requests sent together are
 * answered in order; `sent()` says how many requests it got.
 */
export function answering429s(answers: readonly Answer429[], stepMs: number) {
  let sent = 0;
  const fetch = async () => {
    const { code, retryAfter } = answers[sent++]!;
    await new Promise((resolve) => setTimeout(resolve, sent * stepMs));
    return Response.json({ code, message: code, status: 429 }, { status: 429, headers: { 'Retry-After': retryAfter } });
  };
  return { fetch, sent: () => sent };
}
