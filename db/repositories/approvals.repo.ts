import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { type ContentRow, findContentsByIds } from './contents.repo.js';
import { toMillis } from './rows.js';

/** One entry of a content's review thread. */
export interface ContentReviewRow {
  id: string;
  workspaceId: string;
  contentId: string;
  kind: string;
  actorType: string;
  actorId: string | null;
  actorLabel: string | null;
  actorRole: string | null;
  body: string | null;
  createdAt: number;
}

/** A JSON array of roles as stored (null: not set). */
function parseRoles(value: string | null | undefined): string[] | null {
  if (value === null || value === undefined) return null;
  const parsed: unknown = JSON.parse(value);
  return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : null;
}

/** The approval roles set on a brand and on its workspace (null where not set). */
export async function findApprovalRoles(db: Kysely<Database>, workspaceId: string, brandId: string | null): Promise<{ brand: string[] | null; workspace: string[] | null }> {
  const ws = await db.selectFrom('workspaces').select('approval_roles').where('id', '=', workspaceId).executeTakeFirst();
  const brand = brandId === null ? undefined : await db.selectFrom('brands').select('approval_roles').where('workspace_id', '=', workspaceId).where('id', '=', brandId).executeTakeFirst();
  return { brand: parseRoles(brand?.approval_roles), workspace: parseRoles(ws?.approval_roles) };
}

/** The approval roles of several brands of a workspace (brands without their own are absent). */
export async function listBrandApprovalRoles(db: Kysely<Database>, workspaceId: string): Promise<Map<string, string[]>> {
  const rows = await db.selectFrom('brands').select(['id', 'approval_roles']).where('workspace_id', '=', workspaceId).where('approval_roles', 'is not', null).execute();
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const roles = parseRoles(r.approval_roles);
    if (roles !== null) out.set(r.id, roles);
  }
  return out;
}

export async function setBrandApprovalRoles(db: Kysely<Database>, workspaceId: string, brandId: string, roles: readonly string[] | null, now: number): Promise<void> {
  await db
    .updateTable('brands')
    .set({ approval_roles: roles === null ? null : JSON.stringify([...roles]), updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', brandId)
    .execute();
}

export async function setWorkspaceApprovalRoles(db: Kysely<Database>, workspaceId: string, roles: readonly string[] | null): Promise<void> {
  await db.updateTable('workspaces').set({ approval_roles: roles === null ? null : JSON.stringify([...roles]) }).where('id', '=', workspaceId).execute();
}

export async function insertContentReview(db: Kysely<Database>, row: ContentReviewRow): Promise<void> {
  await db
    .insertInto('content_reviews')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      content_id: row.contentId,
      kind: row.kind,
      actor_type: row.actorType,
      actor_id: row.actorId,
      actor_label: row.actorLabel,
      actor_role: row.actorRole,
      body: row.body,
      created_at: row.createdAt,
    })
    .execute();
}

/** A content's thread, oldest first (ids are time-ordered, so they break ties in creation order). */
export async function listContentReviews(db: Kysely<Database>, workspaceId: string, contentId: string): Promise<ContentReviewRow[]> {
  const rows = await db
    .selectFrom('content_reviews')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('content_id', '=', contentId)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .limit(500)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    contentId: r.content_id,
    kind: r.kind,
    actorType: r.actor_type,
    actorId: r.actor_id,
    actorLabel: r.actor_label,
    actorRole: r.actor_role,
    body: r.body,
    createdAt: toMillis(r.created_at),
  }));
}

/**
 * The contents waiting for approval in a workspace (limited to `brandIds` unless null), the earliest due first
 * (those without a time last), then by creation.
 */
export async function listPendingContents(db: Kysely<Database>, workspaceId: string, brandIds: readonly string[] | null, limit: number): Promise<ContentRow[]> {
  if (brandIds !== null && brandIds.length === 0) return [];
  let query = db.selectFrom('contents').select('id').where('workspace_id', '=', workspaceId).where('status', '=', 'pending_approval');
  if (brandIds !== null) query = query.where('brand_id', 'in', [...brandIds]);
  const ids = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(limit).execute();
  const rows = await findContentsByIds(db, ids.map((r) => r.id));
  return [...rows.values()].sort(
    (a, b) => (a.publishAt ?? Number.MAX_SAFE_INTEGER) - (b.publishAt ?? Number.MAX_SAFE_INTEGER) || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1),
  );
}
