import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { rateCounter } from '../../db/repositories/rate-limits.repo.js';
import { describeEachDb } from '../support/server.js';

describeEachDb('the sweep of rate-limit windows', (server) => {
  it('deletes the windows that have ended, including rows with no end, and keeps the running ones', async () => {
    const db = server().container.db;
    const now = Date.now();
    const key = (k: string) => `sweep-test:${k}:${now}`;
    await sql`insert into rate_limits (key, points, expire) values (${key('ended')}, 3, ${now - 1}), (${key('now')}, 3, ${now}), (${key('no-end')}, 3, null), (${key('running')}, 3, ${now + 60_000})`.execute(db.kysely);
    await rateCounter(db).sweep(now);
    const left = await db.kysely.selectFrom('rate_limits').select(['key', 'points']).where('key', 'like', `sweep-test:%:${now}`).execute();
    expect(left).toEqual([{ key: key('running'), points: 3 }]);
  });
});
