// Real sockets, no msw: what the client says when the request never left, or may have.
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionError, PetStoreClient } from '@animal-store/sdk';
import { freePort } from '../support/ports.js';

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
    const server = createHttpServer((_request, response) => response.end('[]'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = new PetStoreClient({ apiKey: 'k', baseUrl: `https://127.0.0.1:${port}/v1`, maxRetries: 0 });
      const error = await client.listPets().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectionError);
      expect((error as Error).message).toBe(
        'listPets (GET /pets): the request failed before a response arrived (fetch failed: the server does not speak TLS: is it http, where baseUrl says https?). Check the network and baseUrl.',
      );
    } finally {
      server.close();
    }
  });

  it('a refused connection names the system error and the address, not only fetch\'s "fetch failed"', async () => {
    const port = await freePort();
    const client = new PetStoreClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const error = await client.listPets().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('a connection dropped after the request was sent says the pet may have been created', async () => {
    const server = createServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = new PetStoreClient({ apiKey: 'k', baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
      const error = await client.createPet({ name: 'Rex', categoryId: 1 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'ConnectionError', mayHaveSucceeded: true });
      expect((error as Error).message).toMatch(/The pet may have been created: list pets to check before creating it again\.$/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
