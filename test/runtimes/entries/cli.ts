// The scenario's entry for runtimes with a command line (Node, Bun, Deno): the request comes as
// the first argument, the report goes to stdout as one line of JSON.
import { createReferenceServer } from '@animal-store/sdk/server';
import { deniedNetwork, missingOption, probeHead, runScenario, SERVER_OPTIONS, type ScenarioConfig, type ScenarioReport } from '../scenario.js';

export type CliRequest =
  | { run: 'scenario'; config: ScenarioConfig }
  | { run: 'missing-option'; baseUrl: string; apiKey?: string }
  | { run: 'denied-network'; baseUrl: string };

type Handler = (request: Request) => Promise<Response>;
const host = globalThis as unknown as {
  Bun?: { serve(options: { port: number; hostname: string; fetch: Handler }): { port: number; stop(force: boolean): unknown } };
  Deno?: {
    args: string[];
    exit(code: number): never;
    serve(options: { port: number; hostname: string; onListen(): void }, handler: Handler): { addr: { port: number }; shutdown(): Promise<void> };
  };
  process: { argv: string[]; exit(code: number): never };
};
const request = JSON.parse((host.Deno ? host.Deno.args : host.process.argv.slice(2))[0]!) as CliRequest;

/** Serves a reference server with this runtime's own HTTP server, as its users would: Bun.serve, Deno.serve, node:http. */
async function serve(): Promise<{ url: string; close(): unknown }> {
  const at = (port: number) => `http://127.0.0.1:${port}/v1`;
  if (host.Bun) {
    const server = host.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: createReferenceServer(SERVER_OPTIONS).fetch });
    return { url: at(server.port), close: () => server.stop(true) };
  }
  if (host.Deno) {
    const server = host.Deno.serve({ port: 0, hostname: '127.0.0.1', onListen() {} }, createReferenceServer(SERVER_OPTIONS).fetch);
    return { url: at(server.addr.port), close: () => server.shutdown() };
  }
  const { startReferenceServer } = await import('@animal-store/sdk/node');
  return startReferenceServer(SERVER_OPTIONS);
}

/** The scenario, and HEAD and GET over the runtime's own server. */
async function scenario(config: ScenarioConfig): Promise<ScenarioReport> {
  const report = await runScenario(config);
  const server = await serve();
  try {
    return { ...report, served: await probeHead(server.url) };
  } finally {
    await server.close();
  }
}

const report =
  request.run === 'scenario' ? await scenario(request.config)
  : request.run === 'missing-option' ? missingOption(request.baseUrl, request.apiKey)
  : await deniedNetwork(request.baseUrl);
console.log(JSON.stringify(report));
// The slow servers' timers would keep the process alive for seconds after the report.
if (host.Deno) host.Deno.exit(0);
else host.process.exit(0);
