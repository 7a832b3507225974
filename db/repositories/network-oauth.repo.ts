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
  /** The user's server (Mastodon); null for networks with one server. */
  instanceOrigin: string | null;
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
      instance_origin: row.instanceOrigin,
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
    instanceOrigin: row.instance_origin,
  };
}

export interface InstanceAppRow {
  clientId: string;
  clientSecretSealed: string;
}

/** This service's registration on `origin` for `redirectUri`, if it has one. */
export async function findInstanceApp(db: Kysely<Database>, platform: string, origin: string, redirectUri: string): Promise<InstanceAppRow | undefined> {
  const row = await db
    .selectFrom('network_instance_apps')
    .select(['client_id', 'client_secret_sealed'])
    .where('platform_slug', '=', platform)
    .where('origin', '=', origin)
    .where('redirect_uri', '=', redirectUri)
    .executeTakeFirst();
  return row && { clientId: row.client_id, clientSecretSealed: row.client_secret_sealed };
}

/**
 * Keeps a registration unless one exists already (two first connections to a server racing), and returns the
 * one kept, so every flow on that server uses the same client.
 */
export async function keepInstanceApp(db: Kysely<Database>, platform: string, origin: string, redirectUri: string, app: InstanceAppRow, now: number): Promise<InstanceAppRow> {
  await db
    .insertInto('network_instance_apps')
    .values({ platform_slug: platform, origin, redirect_uri: redirectUri, client_id: app.clientId, client_secret_sealed: app.clientSecretSealed, created_at: now })
    .onConflict((oc) => oc.columns(['platform_slug', 'origin', 'redirect_uri']).doNothing())
    .execute();
  const kept = await findInstanceApp(db, platform, origin, redirectUri);
  if (!kept) throw new Error(`instance app for ${origin} vanished after insert`);
  return kept;
}

/** Forgets a registration the server no longer knows (it answered `invalid_client`): the next start registers anew. */
export async function forgetInstanceApp(db: Kysely<Database>, platform: string, origin: string, clientId: string): Promise<void> {
  await db.deleteFrom('network_instance_apps').where('platform_slug', '=', platform).where('origin', '=', origin).where('client_id', '=', clientId).execute();
}
