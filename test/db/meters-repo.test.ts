import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { incrementAllWithin, readCounters } from '../../db/repositories/meters.repo.js';
import { describeEachDb } from '../support/server.js';

describeEachDb('several meters taken in one statement', (server) => {
  const take = (workspaceId: string, meter: string, amount: number, limit: number) => ({ workspaceId, meter, period: '2026-11', amount, limit });
  const counters = async (workspaceId: string) =>
    Object.fromEntries((await readCounters(server().container.db.kysely, workspaceId, ['2026-11'])).map((r) => [r.meter, r.used]));

  it('new counters are created when their amount fits; one that does not fit is returned, in the order given, and not created', async () => {
    const { workspace_id: ws } = await server().workspace();
    const db = server().container.db.kysely;
    expect(await incrementAllWithin(db, [take(ws, 'a', 2, 5), take(ws, 'b', 3, 3)])).toEqual([]);
    expect(await counters(ws)).toEqual({ a: 2, b: 3 });
    const over = await incrementAllWithin(db, [take(ws, 'a', 3, 5), take(ws, 'b', 1, 3), take(ws, 'c', 9, 8)]);
    expect(over.map((t) => t.meter)).toEqual(['b', 'c']);
    // What fitted grew (the caller's transaction takes it back when anything did not fit).
    expect(await counters(ws)).toEqual({ a: 5, b: 3 });
  });

  it('inside a transaction that rolls back on a refusal, nothing is taken; racing charges never pass either limit', async () => {
    const { workspace_id: ws } = await server().workspace();
    const db = server().container.db.kysely;
    const charge = () =>
      db
        .transaction()
        .execute(async (tx) => {
          const over = await incrementAllWithin(tx, [take(ws, 'creations', 1, 100), take(ws, 'posts', 3, 10)]);
          if (over.length > 0) throw new Error('over');
          await sql`select 1`.execute(tx);
        })
        .then(
          () => true,
          () => false,
        );
    const results = await Promise.all(Array.from({ length: 12 }, charge));
    expect(results.filter(Boolean)).toHaveLength(3);
    expect(await counters(ws)).toEqual({ creations: 3, posts: 9 });
  });
});
