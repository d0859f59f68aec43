// The scenario's entry in a browser page: the test calls `runScenario(config)` in the page.
import { runScenario } from '../scenario.js';

(globalThis as { runScenario?: typeof runScenario }).runScenario = runScenario;
