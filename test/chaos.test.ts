import { expect, it } from 'vitest';
import { runChaos } from '../bench/chaos.js';
import { testDatabaseKinds } from './support/databases.js';

const postgres = testDatabaseKinds().find((k) => k.name === 'postgres');

// Three processes share one PostgreSQL; SQLite is the single-process default, so this runs where CI has PostgreSQL.
it.runIf(postgres !== undefined)('three processes on one PostgreSQL, one SIGKILLed mid-run and restarted: nothing lost, nothing posted twice', async () => {
  const db = await postgres!.create();
  try {
    const report = await runChaos({ databaseUrl: db.url, contents: 60 });
    expect(report).toMatchObject({
      contentsRequested: 60,
      contents: 60,
      jobs: 180,
      jobsNotFinal: 0,
      jobsNotPublished: 0,
      jobsPostedTwice: 0,
      contentEvents: 60,
      eventsMissing: 0,
      walletConsistent: true,
      metersConsistent: true,
    });
    expect(report.eventsDelivered).toBe(60);
    expect(report.duplicateDeliveries).toBeGreaterThanOrEqual(0);
  } finally {
    await db.drop();
  }
}, 180_000);
