// The scenario's entry for runtimes with a command line (Node, Bun, Deno): the request comes as
// the first argument, the report goes to stdout as one line of JSON.
import { deniedNetwork, missingOption, runScenario, type ScenarioConfig } from '../scenario.js';

export type CliRequest =
  | { run: 'scenario'; config: ScenarioConfig }
  | { run: 'missing-option'; baseUrl: string }
  | { run: 'denied-network'; baseUrl: string };

const host = globalThis as unknown as { Deno?: { args: string[]; exit(code: number): never }; process: { argv: string[]; exit(code: number): never } };
const request = JSON.parse((host.Deno ? host.Deno.args : host.process.argv.slice(2))[0]!) as CliRequest;
const report =
  request.run === 'scenario' ? await runScenario(request.config)
  : request.run === 'missing-option' ? missingOption(request.baseUrl)
  : await deniedNetwork(request.baseUrl);
console.log(JSON.stringify(report));
// The slow servers' timers would keep the process alive for seconds after the report.
if (host.Deno) host.Deno.exit(0);
else host.process.exit(0);
