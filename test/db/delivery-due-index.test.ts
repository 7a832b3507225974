import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { insertDeliveries } from '../../db/repositories/deliveries.repo.js';
import { queueStats } from '../../db/repositories/queue-stats.repo.js';
import { newTimeOrderedId } from '../../src/core/ids.js';
import { describeEachDb } from '../support/server.js';

// Migration 0016 dropped the index of every delivery by status and due time; the queue's depth reads the partial
// index of pending deliveries instead, however much delivered history the table holds.
describeEachDb(
  'deliveries without the (status, next_attempt_at) index',
  (server, kind) => {
    it('the index is gone, and the queue depth counts only pending deliveries that are due', async () => {
      const db = server().container.db.kysely;
      const indexes =
        kind.name === 'sqlite'
          ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'deliveries'`.execute(db)).rows
          : (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'deliveries' and schemaname = current_schema()`.execute(db)).rows;
      expect(indexes.map((i) => i.name)).not.toContain('deliveries_due_idx');
      expect(indexes.map((i) => i.name)).toContain('deliveries_endpoint_due_idx');

      const ws = await server().workspace();
      const hook = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key, body: { url: 'https://example.com/hook', enabled_events: ['content.published'] } });
      expect(hook.status).toBe(201);
      const at = (n: number) => ({ id: newTimeOrderedId('del_', n), workspaceId: ws.workspace_id, webhookId: hook.body.id as string, eventId: `evt_${n}`, eventType: 'content.published', body: '{}', now: n });
      await insertDeliveries(db, [1_000, 2_000, 3_000, 9_000].map(at));
      const delivered = [4_000, 5_000].map(at);
      await insertDeliveries(db, delivered);
      await db.updateTable('deliveries').set({ status: 'delivered', next_attempt_at: null }).where('id', 'in', delivered.map((d) => d.id)).execute();

      expect(await queueStats(db, 5_000)).toMatchObject({ pendingDeliveries: 3, oldestDeliveryAgeSeconds: 4 });
      if (kind.name === 'sqlite') {
        const plan = await sql<{ detail: string }>`explain query plan select count(*), min(next_attempt_at) from deliveries where status = 'pending' and next_attempt_at <= 5000`.execute(db);
        expect(plan.rows.map((r) => r.detail).join('; ')).toMatch(/USING COVERING INDEX deliveries_endpoint_due_idx/);
      }
    });
  },
  {},
  () => ({ workers: false }),
);
