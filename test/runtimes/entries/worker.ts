// The scenario's entry in workerd (the Cloudflare Workers runtime): a module worker that runs
// the scenario for the config POSTed to it and answers the report; GET answers when it is up.
// Under /v1 it is a reference server itself, as a Worker serves one: the test reads it over HTTP.
import { createReferenceServer } from '@animal-store/sdk/server';
import { reportError, runScenario, SERVER_OPTIONS, type ScenarioConfig } from '../scenario.js';

/** Made in the module's scope, as a Worker's users would make it. */
const served = createReferenceServer(SERVER_OPTIONS);

export default {
  async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname.startsWith('/v1/')) return served.fetch(request);
    if (request.method !== 'POST') return new Response('ready');
    try {
      return Response.json(await runScenario((await request.json()) as ScenarioConfig));
    } catch (error) {
      return Response.json({ crashed: reportError(error) }, { status: 500 });
    }
  },
};
