import { builtProjectCopy, type ProjectCopy } from './build.js';

/**
 * vitest globalSetup of the system tier: the service compiled once per run into a temporary folder
 * (./build.ts), which the files that spawn service processes run with node (./process.ts) instead of
 * transpiling the whole service again through tsx at every start. The checkout is left as it is.
 */
let copy: ProjectCopy | undefined;

export async function setup(): Promise<void> {
  copy = await builtProjectCopy();
  // Read in the test workers, which are started after the global setups.
  process.env.TEST_BUILD_DIR = copy.dir;
}

export function teardown(): void {
  delete process.env.TEST_BUILD_DIR;
  copy?.remove();
}
