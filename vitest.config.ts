import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { configDefaults, defineConfig } from 'vitest/config';

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

/**
 * The system tier: files that start service processes (a crash, a restart, several processes sharing a database),
 * drive Chromium, run the long fuzz, the MCP conformance suite or the reference Bluesky PDS. They hold most of the
 * run's time; the rest is the push tier, `npm run test:unit`. `npm test` (CI) runs both.
 */
const SYSTEM = [
  'test/start.test.ts',
  'test/cli.test.ts',
  'test/readme-quickstart.test.ts',
  'test/chaos.test.ts',
  'test/concurrency/**/*.test.ts',
  'test/workers/crash.test.ts',
  'test/faults/postgres-restart.test.ts',
  'test/faults/keep-alive-shutdown.test.ts',
  'test/media/s3-store.test.ts',
  'test/rest/rate-limit.test.ts',
  'test/rest/revocation-across-processes.test.ts',
  'test/mcp/clients.test.ts',
  'test/fuzz.test.ts',
  'test/**/*-browser.test.ts',
  'test/dashboard/browser.test.ts',
  'test/rest/docs.test.ts',
  'test/mcp/conformance.test.ts',
  'test/system/**/*.test.ts',
];

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...SYSTEM] } },
      // Its processes run the service compiled once for the run, not through tsx (test/support/process.ts).
      { extends: true, test: { name: 'system', include: SYSTEM, globalSetup: ['test/support/global-build.ts'] } },
    ],
    // One migrated PostgreSQL database that every suite's database copies (test/support/databases.ts).
    globalSetup: ['test/support/global-template.ts'],
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
