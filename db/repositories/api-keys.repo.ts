import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';
import { POSTGRES_HIT_ON_CONFLICT, type WindowCount, type WorkspaceHit } from './rate-limits.repo.js';

export interface ApiKeyRow {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

type Selected = {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  created_at: number | string;
  last_used_at: number | string | null;
  revoked_at: number | string | null;
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
  };
}

const COLUMNS = ['id', 'workspace_id', 'name', 'prefix', 'created_at', 'last_used_at', 'revoked_at'] as const;

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
    })
    .execute();
}

/** Looks a key up by the digest of its plaintext (an index lookup; the plaintext never reaches SQL). */
export async function findApiKeyByDigest(db: Kysely<Database>, digest: string): Promise<ApiKeyRow | undefined> {
  const row = await db.selectFrom('api_keys').select(COLUMNS).where('key_digest', '=', digest).executeTakeFirst();
  return row && toRow(row);
}

/**
 * PostgreSQL: the digest lookup and, when the key is active, one hit on its workspace's rate window, in one
 * statement (one round trip instead of two on every request made with an API key). The hit is the rate limit's
 * own upsert (rate-limits.repo.ts), fed by the lookup, so it counts exactly as a separate hit would; a revoked or
 * unknown key counts nothing, as when authentication failed before the limit.
 */
const POSTGRES_KEY_AND_HIT = `WITH key AS (
  SELECT ${COLUMNS.join(', ')} FROM api_keys WHERE key_digest = $5
), hit AS (
  INSERT INTO rate_limits (key, points, expire)
  SELECT $1 || key.workspace_id, $2, $3 FROM key WHERE key.revoked_at IS NULL
  ${POSTGRES_HIT_ON_CONFLICT}
)
SELECT key.*, hit.points AS window_points, hit.expire AS window_expire FROM key LEFT JOIN hit ON true`;

/**
 * Looks a key up by digest and counts `hit` on its workspace's window if the key is active (PostgreSQL only: SQLite
 * has no writing CTE, and there the lookup and the hit stay two statements). `window` is null for a revoked key.
 */
export async function findApiKeyByDigestCounting(
  db: Kysely<Database>,
  digest: string,
  hit: WorkspaceHit,
): Promise<{ row: ApiKeyRow; window: WindowCount | null } | undefined> {
  const parameters = [hit.keyPrefix, hit.points, hit.now + hit.windowMs, hit.now, digest];
  const [found] = (await db.executeQuery<Selected & { window_points: number | null; window_expire: string | null }>(CompiledQuery.raw(POSTGRES_KEY_AND_HIT, parameters))).rows;
  if (found === undefined) return undefined;
  const window = found.window_points === null || found.window_expire === null ? null : { points: found.window_points, expire: toMillis(found.window_expire) };
  return { row: toRow(found), window };
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
