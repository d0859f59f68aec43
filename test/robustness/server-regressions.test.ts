/**
 * Regression tests for what the fuzz suite found in the reference server, each pinned down as
 * the smallest request that showed it.
 */
import { describe, expect, it } from 'vitest';
import { createReferenceServer } from '@animal-store/sdk/server';

describe('reference server: fuzz findings', () => {
  const server = createReferenceServer({ apiKeys: { k: 'free' }, pets: 3 });
  const head = (path: string, headers: HeadersInit = {}) =>
    server.fetch(new Request(`http://a.test${path}`, { method: 'HEAD', headers }));

  it('HEAD: a 401 or 404 answer has no body in-process, as no HEAD answer may', async () => {
    const answers = [
      await head('/v1/pets'),
      await head('/v1/nowhere', { Authorization: 'Bearer k' }),
      await head('/v1/pets/1/x', { Authorization: 'Bearer k' }),
    ];
    expect(answers.map((r) => r.status)).toEqual([401, 404, 404]);
    for (const response of answers) {
      expect(response.body).toBeNull();
      expect(response.headers.get('X-RateLimit-Limit')).toBe('60');
    }
  });

  it('HEAD: a 429 keeps its Retry-After and rate-limit headers but sends no body', async () => {
    const limited = createReferenceServer({ apiKeys: { k: { perMinute: 1, perDay: 10 } }, now: () => Date.UTC(2027, 0, 1) });
    const send = () => limited.fetch(new Request('http://a.test/v1/pets', { method: 'HEAD', headers: { Authorization: 'Bearer k' } }));
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('Retry-After')).toBe('60');
    expect(refused.headers.get('X-RateLimit-Remaining')).toBe('0');
    expect(refused.body).toBeNull();
  });
});
