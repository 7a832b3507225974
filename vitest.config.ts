import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites start real servers on real databases; two at a time matches the CI machine's two cores.
    maxWorkers: 2,
  },
});
