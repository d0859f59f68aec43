import { EXPOSED_HEADERS, type ErrorRecord } from '../schemas/index.js';
import type { Admission } from './rate-limiter.js';

/** Error codes the reference server answers with. */
export type ErrorCode =
  | 'bad_request'
  | 'invalid_query'
  | 'invalid_body'
  | 'invalid_json'
  | 'invalid_pet_id'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'not_found'
  | 'method_not_allowed'
  | 'gone'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'api_key_banned'
  | 'service_unavailable'
  | 'internal_error';

const CORS_HEADERS: Record<string, string> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': EXPOSED_HEADERS.join(', '),
};

/** A JSON response with the CORS headers every answer carries. */
export function json(body: unknown, status = 200, headers?: Record<string, string>): Response {
  // A plain object, not `new Headers` and a `set` per header: this runs on every answer.
  return new Response(JSON.stringify(body), {
    status,
    headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8', ...CORS_HEADERS },
  });
}

/** An Error record response whose `status` field equals the HTTP status. */
export function error(status: number, code: ErrorCode, message: string, headers?: Record<string, string>): Response {
  const record: ErrorRecord = { code, message, status };
  return json(record, status, headers);
}

/** An empty response (preflights) with the CORS headers. */
export function empty(status: number, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  for (const [name, value] of Object.entries(CORS_HEADERS)) h.set(name, value);
  return new Response(null, { status, headers: h });
}

/** Sets the `X-RateLimit-*` headers (and `Retry-After` on refusals) on a response. */
export function withRateLimit(response: Response, admission: Admission): Response {
  response.headers.set('X-RateLimit-Limit', String(admission.limit));
  response.headers.set('X-RateLimit-Remaining', String(admission.remaining));
  response.headers.set('X-RateLimit-Reset', String(admission.reset));
  if (admission.retryAfter !== undefined) response.headers.set('Retry-After', String(admission.retryAfter));
  return response;
}

/** The largest request body accepted: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads a request body as UTF-8 text, refusing more than {@link MAX_BODY_BYTES}. */
export async function readText(request: Request): Promise<{ text: string } | { error: Response }> {
  const declared = request.headers.get('Content-Length');
  const tooLarge = () => ({
    error: error(413, 'payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes (1 MiB). Send a smaller body.`),
  });
  if (declared !== null && Number(declared) > MAX_BODY_BYTES) return tooLarge();
  if (!request.body) return { text: '' };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > MAX_BODY_BYTES) {
        void reader.cancel().catch(() => {});
        return tooLarge();
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { error: error(400, 'invalid_body', 'The request body could not be read as UTF-8 text. Send UTF-8 encoded JSON.') };
  }
}
