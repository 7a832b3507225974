import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { formatBrandIds, parseBrandIds, toMillis, toMillisOrNull } from './rows.js';

export interface ApiKeyRow {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  role: string;
  /** null: every brand. */
  brandIds: string[] | null;
  createdBy: string | null;
}

type Selected = {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  created_at: number | string;
  last_used_at: number | string | null;
  revoked_at: number | string | null;
  role: string;
  brand_ids: string | null;
  created_by: string | null;
};

function toRow(r: Selected): ApiKeyRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    prefix: r.prefix,
    createdAt: toMillis(r.created_at),
    lastUsedAt: toMillisOrNull(r.last_used_at),
    revokedAt: toMillisOrNull(r.revoked_at),
    role: r.role,
    brandIds: parseBrandIds(r.brand_ids),
    createdBy: r.created_by,
  };
}

const COLUMNS = ['id', 'workspace_id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked_at', 'role', 'brand_ids', 'created_by'] as const;

export async function insertApiKey(db: Kysely<Database>, row: Omit<ApiKeyRow, 'lastUsedAt' | 'revokedAt'> & { keyDigest: string }): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      name: row.name,
      prefix: row.prefix,
      key_digest: row.keyDigest,
      created_at: row.createdAt,
      role: row.role,
      brand_ids: formatBrandIds(row.brandIds),
      created_by: row.createdBy,
    })
    .execute();
}

/** Looks a key up by the digest of its plaintext (an index lookup; the plaintext never reaches SQL). */
export async function findApiKeyByDigest(db: Kysely<Database>, digest: string): Promise<ApiKeyRow | undefined> {
  const row = await db.selectFrom('api_keys').select(COLUMNS).where('key_digest', '=', digest).executeTakeFirst();
  return row && toRow(row);
}

export async function findApiKey(db: Kysely<Database>, workspaceId: string, id: string): Promise<ApiKeyRow | undefined> {
  const r = await db
    .selectFrom('api_keys')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r && toRow(r);
}

export async function listApiKeys(db: Kysely<Database>, workspaceId: string): Promise<ApiKeyRow[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toRow);
}

/** Revokes one key if still active; returns whether it changed. */
export async function revokeApiKey(db: Kysely<Database>, workspaceId: string, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Revokes every active key of the workspace except `keepId`; returns how many. */
export async function revokeOtherApiKeys(db: Kysely<Database>, workspaceId: string, keepId: string, now: number): Promise<number> {
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '!=', keepId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function touchApiKey(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', id).execute();
}
