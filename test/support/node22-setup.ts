/**
 * The integration project's global setup: Node 22 is installed once, before its workers start.
 * Two of its test files run it (the runtime matrix and the proxy test); installed by both at once,
 * npm's `node` package fails (its install script installs the binary's package, and two of those
 * break each other even in two directories).
 */
import { node22 } from '../runtimes/runners.js';

export default async function setup(): Promise<void> {
  await node22();
}
