import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The longest files, started first: on a clean clone vitest has no timings and orders by file size, which put the
 * chaos run (its code lives in bench/) last, alone on one worker for its whole two minutes.
 */
const LONGEST = ['test/chaos.test.ts', 'test/faults/postgres-restart.test.ts', 'test/system/bluesky-pds.test.ts', 'test/fuzz.test.ts', 'test/workers/crash.test.ts', 'test/concurrency/scheduling.test.ts', 'test/start.test.ts'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST.findIndex((path) => file.moduleId.endsWith(path));
      return at < 0 ? LONGEST.length : at;
    };
    return [...(await super.sort(files))].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real servers on real databases; two at a time matches the CI machine's two cores.
    maxWorkers: 2,
    // A worker keeps its module graph from one file to the next: every file starts its own servers on its own
    // databases and no test replaces a module, so re-importing the service for each of ~110 files only cost time
    // (about 170 s of import across a run).
    isolate: false,
    sequence: { sequencer: LongestFirst },
  },
});
