// Real sockets, no msw: what the client says when the request never left, or may have.
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { ConnectionError, InternalServerError, PetStoreClient } from '@animal-store/sdk';
import { freePort } from '../support/ports.js';

/** Listens on 127.0.0.1, port 0, for the length of `use`, which gets the port; then closes. */
async function listening(server: Server, use: (port: number) => Promise<void>) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await use((server.address() as AddressInfo).port);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('connection failures', () => {
  it('a refused connection is a ConnectionError with mayHaveSucceeded false, and createPet does not claim a pet may exist', async () => {
    const client = new PetStoreClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${await freePort()}/v1`, maxRetries: 0 });
    const error = await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ mayHaveSucceeded: false, method: 'POST', status: undefined });
    expect((error as Error).message).toMatch(/^createPet \(POST \/pets\): the request failed before a response arrived/);
    expect((error as Error).message).not.toMatch(/may have been created/);
  });

  it('an https baseUrl for a server that speaks plain http says so, instead of OpenSSL\'s "wrong version number" dump', async () => {
    await listening(createHttpServer((_request, response) => response.end('[]')), async (port) => {
      const client = new PetStoreClient({ apiKey: 'k', baseUrl: `https://127.0.0.1:${port}/v1`, maxRetries: 0 });
      const error = await client.listPets().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toBe(
        'listPets (GET /pets): the request failed before a response arrived (fetch failed: the server does not speak TLS: is it http, where baseUrl says https?). Check the network and baseUrl.',
      );
    });
  });

  it('a refused connection names the system error and the address, not only fetch\'s "fetch failed"', async () => {
    const port = await freePort();
    const client = new PetStoreClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('a connection dropped after the request was sent says the pet may have been created', async () => {
    await listening(createServer((socket) => socket.once('data', () => socket.destroy())), async (port) => {
      const client = new PetStoreClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
      const error = await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ConnectionError', mayHaveSucceeded: true });
      expect((error as Error).message).toMatch(/The pet may have been created: list pets to check before creating it again\.$/);
    });
  });
});

/** Serves `handler` on 127.0.0.1, port 0, for the length of `use`, with a client of it. */
async function serving(handler: Parameters<typeof createHttpServer>[1], use: (client: PetStoreClient, requests: () => number) => Promise<void>) {
  let requests = 0;
  const server = createHttpServer((request, response) => ((requests++), handler!(request, response)));
  await listening(server, (port) => use(new PetStoreClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1 }), () => requests));
}

describe('answers HTTP does not define, over real sockets', () => {
  it('a status past 599 (HTTP/1.1 600, which fetch hands over) is read as RFC 9110 says, as a 5xx: an InternalServerError with status 600 and code http_600, retried on GET only, its rate-limit headers not taken for the budget', async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0);
    try {
      await serving(
        (_request, response) => response.writeHead(600, { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '59', 'X-RateLimit-Reset': '4102444800' }).end(),
        async (client, requests) => {
          const error = await client.listPets().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(InternalServerError);
          expect(error).toMatchObject({ status: 600, code: 'http_600', message: 'listPets (GET /pets): The service answered HTTP 600 without an Error record. This was attempt 2 of 2.' });
          expect(requests()).toBe(2);
          expect(await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e)).toMatchObject({ name: 'InternalServerError', status: 600 });
          expect(requests()).toBe(3);
          expect(client.rateLimit.getSnapshot()).toBeUndefined();
        },
      );
    } finally {
      random.mockRestore();
    }
  });

  it('a 1xx sent as the final answer never reaches the client as a response: fetch fails on it, a ConnectionError', async () => {
    await listening(createServer((socket) => socket.once('data', () => socket.end('HTTP/1.1 199 Odd\r\nContent-Length: 2\r\n\r\n[]'))), async (port) => {
      const client = new PetStoreClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
      expect(await client.listPets().catch((e: unknown) => e)).toMatchObject({ name: 'ConnectionError', status: undefined });
    });
  });
});

describe('bodies that cannot be read, over real sockets', () => {
  it('a body that is not the gzip its Content-Encoding names is a ConnectionError that says it could not be decoded, not that the connection was cut; after createPet\'s 201 it says the pet may have been created', async () => {
    await serving(
      (request, response) => response.writeHead(request.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }).end('this is not gzip'),
      async (client) => {
        const error = await client.listPets({}, { maxRetries: 0 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ConnectionError);
        expect(error).toMatchObject({ status: 200, mayHaveSucceeded: true, cause: expect.any(TypeError) });
        expect((error as Error).message).toBe(
          'listPets (GET /pets): the response body could not be decoded: it is not in the compression its Content-Encoding names. Check the network and baseUrl.',
        );
        const created = await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e);
        expect(created).toMatchObject({ name: 'ConnectionError', status: 201, mayHaveSucceeded: true });
        expect((created as Error).message).toMatch(/^createPet \(POST \/pets\): the response body could not be decoded: .* The pet may have been created/);
      },
    );
  });

  it('a gzip body cut off mid-stream still reads as a cut connection, not as a decoding failure', async () => {
    const gzip = gzipSync(JSON.stringify(Array.from({ length: 2_000 }, (_, id) => ({ id, name: `pet ${id}` }))));
    await serving(
      (_request, response) => {
        response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'Content-Length': gzip.length });
        // Cut once the first bytes are on the wire, not after a guessed delay.
        response.write(gzip.subarray(0, 64), () => response.socket?.destroy());
      },
      async (client) => {
        const error = await client.listPets({}, { maxRetries: 0 }).catch((e: unknown) => e);
        expect(error).toMatchObject({ name: 'ConnectionError', status: 200 });
        expect((error as Error).message).toMatch(/^listPets \(GET \/pets\): the connection was cut while reading the response body\./);
      },
    );
  });
});
