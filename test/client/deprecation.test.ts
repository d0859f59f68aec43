import { http } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClientOptions, DeprecationNotice } from '@animal-store/sdk';
import { BASE_URL, run, useReferenceServer } from './harness.js';

const { server, mock, client } = useReferenceServer();

afterEach(() => {
  vi.restoreAllMocks();
});

/** Prepends a handler that adds deprecation headers to the server's answers on `path`. */
function deprecate(path: string) {
  mock.use(
    http.get(`${BASE_URL}${path}`, async ({ request }) => {
      const response = await server.fetch(request);
      response.headers.set('Deprecation', '@1767225600');
      response.headers.set('Sunset', 'Wed, 01 Jan 2031 00:00:00 GMT');
      return response;
    }),
  );
}

/**
 * A client from a freshly loaded copy of the package, as in a new process: the default warning
 * is once per process, and a fresh module has warned about nothing yet, whatever ran before.
 */
async function freshClients() {
  vi.resetModules();
  const { PetStoreClient } = await import('@animal-store/sdk');
  return (options: ClientOptions = {}) => new PetStoreClient({ apiKey: 'key-pro', baseUrl: BASE_URL, ...options });
}

describe('deprecation', () => {
  it('getPet: the first call warns once per process through process.emitWarning with code PETSTORE_GET_PET', async () => {
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const fresh = await freshClients();
    await run(fresh().getPet(1));
    await run(fresh().getPet(2));
    expect(emitWarning).toHaveBeenCalledTimes(1);
    expect(emitWarning).toHaveBeenCalledWith(expect.stringMatching(/2030-12-05.*Keep the id that createPet returns/), {
      type: 'DeprecationWarning',
      code: 'PETSTORE_GET_PET',
    });
  });

  it('with a logger of the user\'s, getPet\'s notice goes to it at warn once per client, and the once-per-process warning still fires; with the default console, the warning alone', async () => {
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const consoleWarn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const fresh = await freshClients();
    const warned: string[] = [];
    const logger = { error: () => {}, warn: (line: string) => void warned.push(line), info: () => {}, debug: () => {} };
    const logged = fresh({ logger });
    await run(logged.getPet(1));
    await run(logged.getPet(2));
    await run(fresh().getPet(1));
    expect(warned).toEqual([expect.stringMatching(/^PetStoreClient\.getPet\(\) is deprecated and stops working on 2030-12-05\./)]);
    expect(emitWarning).toHaveBeenCalledTimes(1);
    expect(consoleWarn).not.toHaveBeenCalled();
  });

  it('onDeprecation replaces the default warning and is called once per client and operation', async () => {
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const notices: DeprecationNotice[] = [];
    const c = client({ onDeprecation: (notice) => notices.push(notice) });
    expect(await run(c.getPet(1))).toMatchObject({ id: 1 });
    await run(c.getPet(2));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ operation: 'getPet', sunset: new Date('2030-12-05T00:00:00Z') });
    const other: DeprecationNotice[] = [];
    await run(client({ onDeprecation: (notice) => other.push(notice) }).getPet(1));
    expect(other).toHaveLength(1);
    expect(emitWarning).not.toHaveBeenCalled();
  });

  it('Deprecation and Sunset headers on any operation are reported once per operation', async () => {
    deprecate('/pets');
    const notices: DeprecationNotice[] = [];
    const c = client({ onDeprecation: (notice) => notices.push(notice) });
    await run(c.listPets());
    await run(c.listPets());
    await run(c.listOrders());
    expect(notices).toEqual([
      expect.objectContaining({
        operation: 'listPets',
        message: 'The service marks PetStoreClient.listPets() as deprecated; it stops working on 2031-01-01.',
        deprecation: '@1767225600',
        sunset: new Date('2031-01-01T00:00:00Z'),
      }),
    ]);
  });

  it('an onDeprecation that throws is reported and fails no call: getPet resolves, and a deprecated listPets is not sent again', async () => {
    deprecate('/pets');
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    const sent = () => server.inspect().keys['key-pro']?.requests ?? 0;
    const before = sent();
    const c = client({
      onDeprecation: () => {
        throw new Error('callback bug');
      },
    });
    try {
      expect(await run(c.getPet(1))).toMatchObject({ id: 1 });
      expect(await run(c.listPets({ limit: 1 }))).toHaveLength(1);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(reported).toEqual([new Error('callback bug'), new Error('callback bug')]);
    expect(sent() - before).toBe(2);
  });

  it.each(['1.5', '-5', '2031-01-01', 'Wed, 01 Jan 2031 00:00:00 +0000'])('a Sunset of %j is not an IMF-fixdate, so the notice gives no date rather than a guessed one', async (value) => {
    mock.use(
      http.get(`${BASE_URL}/pets`, async ({ request }) => {
        const response = await server.fetch(request);
        response.headers.set('Sunset', value);
        return response;
      }),
    );
    const notices: DeprecationNotice[] = [];
    await run(client({ onDeprecation: (notice) => notices.push(notice) }).listPets());
    expect(notices).toHaveLength(1);
    expect(notices[0]!.sunset).toBeUndefined();
    expect(notices[0]!.message).toBe('The service marks PetStoreClient.listPets() as deprecated.');
  });

  it('a default warning that throws (node --throw-deprecation) is reported, and the call returns its data: getPet sent once, a deprecation its headers announce not taken for a cut connection and retried', async () => {
    deprecate('/store/orders');
    const thrown: Error[] = [];
    // What --throw-deprecation makes of emitWarning: the DeprecationWarning is thrown at once.
    vi.spyOn(process, 'emitWarning').mockImplementation((message) => {
      const warning = new Error(String(message));
      warning.name = 'DeprecationWarning';
      thrown.push(warning);
      throw warning;
    });
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (error: unknown) => void reported.push(error));
    let orders = 0;
    const fresh = await freshClients();
    const c = fresh();
    c.on('request', ({ operation }) => void (operation === 'listOrders' && orders++));
    try {
      expect(await run(c.getPet(1))).toMatchObject({ id: 1 });
      expect(await run(c.listOrders())).toEqual(expect.any(Array));
    } finally {
      vi.unstubAllGlobals();
    }
    expect(orders).toBe(1);
    expect(thrown).toHaveLength(2);
    expect(reported).toEqual(thrown);
  });

  it('without process.emitWarning (a browser), the default warning goes to console.warn, once', async () => {
    deprecate('/store/orders');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const emitWarning = process.emitWarning;
    (process as { emitWarning?: unknown }).emitWarning = undefined;
    try {
      const fresh = await freshClients();
      await run(fresh().listOrders());
      await run(fresh().listOrders());
    } finally {
      process.emitWarning = emitWarning;
    }
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^DeprecationWarning: .*listOrders\(\).*2031-01-01/));
  });

  it('in workerd, whose process.emitWarning prints nothing, the default warning goes to console.warn', async () => {
    deprecate('/store/orders');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const emitWarning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    try {
      const fresh = await freshClients();
      await run(fresh().listOrders());
    } finally {
      vi.unstubAllGlobals();
    }
    expect(emitWarning).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^DeprecationWarning: .*listOrders\(\)/));
  });
});
