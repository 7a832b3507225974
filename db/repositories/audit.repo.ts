import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface AuditEventRow {
  id: string;
  workspaceId: string;
  occurredAt: number;
  action: string;
  actorType: string;
  actorId: string | null;
  actorLabel: string | null;
  actorRole: string | null;
  via: string;
  targetType: string | null;
  targetId: string | null;
  targetLabel: string | null;
  details: Record<string, unknown> | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

/** The only write to `audit_events` besides the retention sweep: entries are never updated. */
export async function insertAuditEvent(db: Kysely<Database>, row: AuditEventRow): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      occurred_at: row.occurredAt,
      action: row.action,
      actor_type: row.actorType,
      actor_id: row.actorId,
      actor_label: row.actorLabel,
      actor_role: row.actorRole,
      via: row.via,
      target_type: row.targetType,
      target_id: row.targetId,
      target_label: row.targetLabel,
      details: row.details === null ? null : JSON.stringify(row.details),
      ip: row.ip,
      user_agent: row.userAgent,
      request_id: row.requestId,
    })
    .execute();
}
