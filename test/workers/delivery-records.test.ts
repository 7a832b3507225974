import { expect, it } from 'vitest';
import { type AttemptRecord, claimDueDeliveries, endpointsWithPending, insertDeliveries, recordAttempts, requestRedelivery } from '../../db/repositories/deliveries.repo.js';
import { describeEachDb } from '../support/server.js';

/**
 * The outbox's batch operations, on both databases: claims give each endpoint at most what was asked for it and
 * never a row already leased; one batch of records writes only the deliveries still held under their own lease.
 */
describeEachDb('delivery claims and batched attempt records', (server) => {
  it('claims per endpoint, then records a batch where one lease was lost: only the held deliveries change, with one attempt row each', async () => {
    const s = server();
    const ws = await s.workspace('Records');
    const hook = async (path: string) => {
      const res = await s.request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: `https://example.com/${path}`, description: path, enabled_events: ['content.published'] },
      });
      return res.body.id as string;
    };
    const [a, b] = [await hook('a'), await hook('b')];
    const db = s.container.db.kysely;
    const dialect = s.container.db.dialect;
    const row = (webhookId: string, id: string) => ({ id, workspaceId: ws.workspace_id, webhookId, eventId: `evt_${id}`, eventType: 'content.published', body: '{}', now: 1_000 });
    await insertDeliveries(db, [row(a, 'del_a1'), row(a, 'del_a2'), row(a, 'del_a3'), row(b, 'del_b1')]);

    expect((await endpointsWithPending(db, dialect, { after: '', limit: 10 })).sort()).toEqual([a, b].sort());
    expect(await endpointsWithPending(db, dialect, { after: [a, b].sort()[0]!, limit: 10 })).toEqual([[a, b].sort()[1]]);

    const first = await claimDueDeliveries(db, dialect, { now: 2_000, lease: 'L1', lockedUntil: 9_000, endpoints: [{ webhookId: a, limit: 2 }, { webhookId: b, limit: 5 }] });
    expect(first.map((d) => d.id).sort()).toEqual(['del_a1', 'del_a2', 'del_b1']);
    // A second claim before the lease ends takes only what the first left.
    const second = await claimDueDeliveries(db, dialect, { now: 3_000, lease: 'L2', lockedUntil: 9_000, endpoints: [{ webhookId: a, limit: 5 }, { webhookId: b, limit: 5 }] });
    expect(second.map((d) => d.id)).toEqual(['del_a3']);

    // A redeliver asked during the attempt on del_b1 keeps it pending after its record (spec 4.4).
    expect(await requestRedelivery(db, ws.workspace_id, 'del_b1', 2_500)).toBe(true);
    const record = (id: string, lease: string): AttemptRecord => ({
      id,
      lease,
      attemptId: `att_${id}_${lease}`,
      attempt: { deliveryId: id, number: 1, manual: false, at: 4_000, httpStatus: 204, latencyMs: 3, error: null, responseExcerpt: null },
      status: 'delivered',
      nextAttemptAt: null,
      deliveredAt: 4_000,
    });
    const kept = await recordAttempts(db, [record('del_a1', 'L1'), record('del_a2', 'L-lost'), record('del_b1', 'L1'), record('del_a3', 'L2')]);
    expect(kept).toEqual([true, false, true, true]);

    const states = Object.fromEntries(
      (await db.selectFrom('deliveries').select(['id', 'status', 'locked_by', 'attempt_count', 'manual']).execute()).map((d) => [
        d.id,
        { status: d.status, locked_by: d.locked_by, attempts: Number(d.attempt_count), manual: Number(d.manual) },
      ]),
    );
    expect(states).toEqual({
      del_a1: { status: 'delivered', locked_by: null, attempts: 1, manual: 0 },
      del_a2: { status: 'pending', locked_by: 'L1', attempts: 0, manual: 0 },
      del_a3: { status: 'delivered', locked_by: null, attempts: 1, manual: 0 },
      del_b1: { status: 'pending', locked_by: null, attempts: 1, manual: 1 },
    });
    const attempts = await db.selectFrom('delivery_attempts').select(['id', 'delivery_id']).orderBy('id').execute();
    expect(attempts.map((x) => x.delivery_id)).toEqual(['del_a1', 'del_a3', 'del_b1']);
  });
}, {}, () => ({ workers: false }));
