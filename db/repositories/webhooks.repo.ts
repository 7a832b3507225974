import type { Kysely, Selectable } from 'kysely';
import type { Database, WebhooksTable } from '../schema.js';
import { toMillis } from './rows.js';

export interface WebhookRow {
  id: string;
  workspaceId: string;
  url: string;
  description: string;
  enabledEvents: string[];
  active: boolean;
  secretSealed: string;
  createdAt: number;
  updatedAt: number;
}

function toRow(r: Selectable<WebhooksTable>): WebhookRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    url: r.url,
    description: r.description,
    enabledEvents: JSON.parse(r.enabled_events) as string[],
    // A deleted endpoint is inactive whatever its flag says: nothing is ever sent to it.
    active: Number(r.active) === 1 && r.deleted_at === null,
    secretSealed: r.secret_sealed,
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
  };
}

export async function insertWebhook(db: Kysely<Database>, row: WebhookRow): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      url: row.url,
      description: row.description,
      enabled_events: JSON.stringify(row.enabledEvents),
      active: row.active ? 1 : 0,
      secret_sealed: row.secretSealed,
      created_at: row.createdAt,
      updated_at: row.updatedAt,
    })
    .execute();
}

export async function findWebhook(db: Kysely<Database>, workspaceId: string, id: string): Promise<WebhookRow | undefined> {
  const r = await db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return r && toRow(r);
}

export async function findWebhookById(db: Kysely<Database>, id: string): Promise<WebhookRow | undefined> {
  const r = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

export async function listWebhooks(db: Kysely<Database>, workspaceId: string): Promise<WebhookRow[]> {
  const rows = await db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null).orderBy('created_at').orderBy('id').execute();
  return rows.map(toRow);
}

/** Active endpoints of the workspace subscribed to `type`. */
export async function subscribedWebhooks(db: Kysely<Database>, workspaceId: string, type: string): Promise<WebhookRow[]> {
  return (await listWebhooks(db, workspaceId)).filter((w) => w.active && w.enabledEvents.includes(type));
}

/** Changes an endpoint that is not deleted. Returns whether it did. */
export async function updateWebhook(
  db: Kysely<Database>,
  workspaceId: string,
  id: string,
  changes: { url?: string | undefined; description?: string | undefined; enabledEvents?: string[] | undefined; active?: boolean | undefined },
  now: number,
): Promise<boolean> {
  const r = await db
    .updateTable('webhooks')
    .set({
      ...(changes.url === undefined ? {} : { url: changes.url }),
      ...(changes.description === undefined ? {} : { description: changes.description }),
      ...(changes.enabledEvents === undefined ? {} : { enabled_events: JSON.stringify(changes.enabledEvents) }),
      ...(changes.active === undefined ? {} : { active: changes.active ? 1 : 0 }),
      updated_at: now,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    // A PATCH that read the endpoint before a concurrent DELETE committed must not revive it.
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Soft delete: deliveries keep their endpoint for the record. Returns whether this call deleted it. */
export async function deleteWebhook(db: Kysely<Database>, workspaceId: string, id: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('webhooks')
    .set({ deleted_at: now, active: 0, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
