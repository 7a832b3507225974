import type { Kysely } from 'kysely';
import { actorLabels, type AuditEventRow, listAuditEvents, sweepAuditEvents } from '../../../db/repositories/audit.repo.js';
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { authorize } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import type { AuditEntry, AuditLog, AuditLogQuery } from './audit.schema.js';

/** Entries deleted per statement by the retention sweep: short transactions that never hold the table long. */
export const AUDIT_SWEEP_BATCH = 1_000;

function render(row: AuditEventRow, labels: Map<string, string>): AuditEntry {
  const label = row.actorLabel ?? (row.actorId === null ? null : (labels.get(`${row.actorType}:${row.actorId}`) ?? null));
  return {
    id: row.id,
    occurred_at: toIso(row.occurredAt),
    action: row.action,
    actor: { type: row.actorType as AuditEntry['actor']['type'], id: row.actorId, label, role: row.actorRole },
    via: row.via as AuditEntry['via'],
    target: row.targetType === null || row.targetId === null ? null : { type: row.targetType, id: row.targetId, label: row.targetLabel },
    details: row.details,
    ip: row.ip,
    user_agent: row.userAgent,
    request_id: row.requestId,
  };
}

export function createAuditService(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /**
     * A page of the workspace's audit log, newest first, for owners and admins. Actors whose entry holds no name
     * get their present one (key name and prefix, client name, email) when they still exist.
     * @throws ServiceError `forbidden` (permission `audit.read`), `validation_failed` (cursor).
     */
    async list(principal: Principal, workspaceId: string, query: AuditLogQuery): Promise<AuditLog> {
      authorize(principal, workspaceId, 'audit.read');
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const rows = await listAuditEvents(db, workspaceId, {
        action: query.action,
        actorId: query.actor_id,
        targetType: query.target_type,
        targetId: query.target_id,
        from: query.from === undefined ? undefined : Date.parse(query.from),
        to: query.to === undefined ? undefined : Date.parse(query.to),
        after: after === undefined ? undefined : { occurredAt: after.createdAt, id: after.id },
        limit: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const unnamed = page.filter((r) => r.actorLabel === null && r.actorId !== null).map((r) => ({ type: r.actorType, id: r.actorId! }));
      const labels = await actorLabels(db, workspaceId, unnamed);
      const last = page[page.length - 1];
      return {
        data: page.map((r) => render(r, labels)),
        next_cursor: rows.length > query.limit && last ? encodeCursor({ createdAt: last.occurredAt, id: last.id }) : null,
      };
    },

    /**
     * Deletes entries older than `retentionMs` before now, in batches of `batch` (one statement each, so no
     * transaction holds the table long), and returns how many went. The only way an entry ever leaves the log.
     */
    async sweep(retentionMs: number, batch = AUDIT_SWEEP_BATCH): Promise<number> {
      const before = clock.now() - retentionMs;
      let total = 0;
      for (;;) {
        const deleted = await sweepAuditEvents(db, before, batch);
        total += deleted;
        if (deleted < batch) return total;
      }
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
