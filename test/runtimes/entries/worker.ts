// The scenario's entry in workerd (the Cloudflare Workers runtime): a module worker that runs
// the scenario for the config POSTed to it and answers the report; GET answers when it is up.
import { reportError, runScenario, type ScenarioConfig } from '../scenario.js';

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== 'POST') return new Response('ready');
    try {
      return Response.json(await runScenario((await request.json()) as ScenarioConfig));
    } catch (error) {
      return Response.json({ crashed: reportError(error) }, { status: 500 });
    }
  },
};
