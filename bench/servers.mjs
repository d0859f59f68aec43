/**
 * A server in a worker thread, for the load benchmarks: `reference` is the reference server on
 * node:http (dist/node.js), `bare` a plain node:http server answering one fixed JSON body, and
 * `fetch-floor` the same body through a Request and a Response, as any fetch-style server pays.
 * Posts `{ url }` once listening; stops on the message 'stop'.
 */
import { createServer } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { kind, options } = workerData;
let stop;

if (kind === 'reference') {
  const { startReferenceServer } = await import('../dist/node.js');
  const running = await startReferenceServer({ port: 0, host: '127.0.0.1', ...options });
  stop = running.close;
  parentPort.postMessage({ url: running.url });
} else if (kind === 'bare' || kind === 'fetch-floor') {
  const body = options.body;
  const bare = (req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  };
  // The least any fetch(Request) → Response bridge costs over node:http: build a Request, answer
  // a constant Response, stream it out. No logic at all. src/node.ts skips both objects for this.
  const floor = async (req, res) => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
    const controller = new AbortController();
    res.on('close', () => res.writableFinished || controller.abort());
    const request = new Request(new URL(req.url, `http://${req.headers.host}`), { method: req.method, headers, signal: controller.signal });
    const response = new Response(body, { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Method': request.method } });
    res.statusCode = response.status;
    response.headers.forEach((value, name) => res.setHeader(name, value));
    res.end(new Uint8Array(await response.arrayBuffer()));
  };
  const server = createServer(kind === 'bare' ? bare : floor);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  stop = () => new Promise((resolve) => {
    server.close(resolve);
    server.closeAllConnections();
  });
  parentPort.postMessage({ url: `http://127.0.0.1:${server.address().port}/v1` });
} else {
  throw new Error(`unknown server kind ${kind}`);
}

parentPort.on('message', async (message) => {
  if (message === 'stop') {
    await stop();
    process.exit(0);
  }
});
