import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

export interface NetworkStateRow {
  state: string;
  workspaceId: string;
  brandId: string;
  connectionId: string | null;
  platformSlug: string;
  expiresAt: number;
}

export async function insertNetworkState(db: Kysely<Database>, row: NetworkStateRow, now: number): Promise<void> {
  await db
    .insertInto('network_oauth_states')
    .values({
      state: row.state,
      workspace_id: row.workspaceId,
      brand_id: row.brandId,
      connection_id: row.connectionId,
      platform_slug: row.platformSlug,
      created_at: now,
      expires_at: row.expiresAt,
      used_at: null,
    })
    .execute();
}

/**
 * Uses a state once: the conditional update lets exactly one callback through, even if the network (or an
 * attacker replaying the URL) calls twice. Returns the row only for that one caller.
 */
export async function consumeNetworkState(db: Kysely<Database>, state: string, now: number): Promise<NetworkStateRow | 'used' | 'expired' | undefined> {
  const row = await db.selectFrom('network_oauth_states').selectAll().where('state', '=', state).executeTakeFirst();
  if (!row) return undefined;
  if (row.used_at !== null) return 'used';
  if (toMillis(row.expires_at) <= now) return 'expired';
  const r = await db.updateTable('network_oauth_states').set({ used_at: now }).where('state', '=', state).where('used_at', 'is', null).executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) return 'used';
  return {
    state: row.state,
    workspaceId: row.workspace_id,
    brandId: row.brand_id,
    connectionId: row.connection_id,
    platformSlug: row.platform_slug,
    expiresAt: toMillis(row.expires_at),
  };
}
