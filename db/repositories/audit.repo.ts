import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

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

/** Filters of a page of the audit log; every one optional. */
export interface AuditQuery {
  action?: string | undefined;
  actorId?: string | undefined;
  targetType?: string | undefined;
  targetId?: string | undefined;
  /** Inclusive lower bound on `occurred_at`. */
  from?: number | undefined;
  /** Exclusive upper bound on `occurred_at`. */
  to?: number | undefined;
  /** Keyset position: entries strictly older than it. */
  after?: { occurredAt: number; id: string } | undefined;
  limit: number;
}

/** A workspace's entries, newest first (occurred_at, then id, both descending). */
export async function listAuditEvents(db: Kysely<Database>, workspaceId: string, q: AuditQuery): Promise<AuditEventRow[]> {
  let query = db.selectFrom('audit_events').selectAll().where('workspace_id', '=', workspaceId);
  if (q.action !== undefined) query = query.where('action', '=', q.action);
  if (q.actorId !== undefined) query = query.where('actor_id', '=', q.actorId);
  if (q.targetType !== undefined) query = query.where('target_type', '=', q.targetType);
  if (q.targetId !== undefined) query = query.where('target_id', '=', q.targetId);
  if (q.from !== undefined) query = query.where('occurred_at', '>=', q.from);
  if (q.to !== undefined) query = query.where('occurred_at', '<', q.to);
  const after = q.after;
  if (after !== undefined) {
    query = query.where((eb) => eb.or([eb('occurred_at', '<', after.occurredAt), eb.and([eb('occurred_at', '=', after.occurredAt), eb('id', '<', after.id)])]));
  }
  const rows = await query.orderBy('occurred_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    occurredAt: toMillis(r.occurred_at),
    action: r.action,
    actorType: r.actor_type,
    actorId: r.actor_id,
    actorLabel: r.actor_label,
    actorRole: r.actor_role,
    via: r.via,
    targetType: r.target_type,
    targetId: r.target_id,
    targetLabel: r.target_label,
    details: r.details === null ? null : (JSON.parse(r.details) as Record<string, unknown>),
    ip: r.ip,
    userAgent: r.user_agent,
    requestId: r.request_id,
  }));
}

/**
 * The retention sweep, and the only statement that removes audit entries: deletes up to `batch` entries older
 * than `before` (of any workspace) and returns how many went, so the caller repeats until fewer come back.
 */
export async function sweepAuditEvents(db: Kysely<Database>, before: number, batch: number): Promise<number> {
  const result = await db
    .deleteFrom('audit_events')
    .where('id', 'in', (eb) => eb.selectFrom('audit_events').select('id').where('occurred_at', '<', before).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Display names of the actors among `rows` whose entries hold none: key name and prefix, client name, email. */
export async function actorLabels(db: Kysely<Database>, workspaceId: string, actors: { type: string; id: string }[]): Promise<Map<string, string>> {
  const labels = new Map<string, string>();
  const ids = (type: string) => [...new Set(actors.filter((a) => a.type === type).map((a) => a.id))];
  const keyIds = ids('api_key');
  if (keyIds.length > 0) {
    const keys = await db.selectFrom('api_keys').select(['id', 'name', 'prefix']).where('workspace_id', '=', workspaceId).where('id', 'in', keyIds).execute();
    for (const k of keys) labels.set(`api_key:${k.id}`, `${k.name} (${k.prefix}…)`);
  }
  const clientIds = ids('oauth');
  if (clientIds.length > 0) {
    const clients = await db.selectFrom('oauth_clients').select(['id', 'metadata']).where('id', 'in', clientIds).execute();
    for (const c of clients) {
      const name = (JSON.parse(c.metadata) as { client_name?: unknown }).client_name;
      labels.set(`oauth:${c.id}`, typeof name === 'string' && name !== '' ? name : c.id);
    }
  }
  const userIds = ids('user');
  if (userIds.length > 0) {
    const users = await db.selectFrom('users').select(['id', 'email']).where('id', 'in', userIds).execute();
    for (const u of users) labels.set(`user:${u.id}`, u.email);
  }
  return labels;
}
