import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

/** Reads of what the authorization server has issued to one workspace, for its list of connected apps. */

export interface IssuedRow {
  model: 'Grant' | 'AccessToken';
  clientId: string;
  /** The provider's JSON payload (with `iat`, epoch seconds). */
  payload: string;
}

/**
 * The live grants and access tokens whose account is one of the workspace's keys (`{workspaceId}:{keyId}`).
 * Workspace ids are `ws_` plus lowercase letters and digits, so the prefix has no LIKE wildcard of its own beyond
 * the fixed `_` of `ws_`, which every id has in the same place.
 */
export async function listIssuedToWorkspace(db: Kysely<Database>, workspaceId: string, now: number): Promise<IssuedRow[]> {
  const rows = await db
    .selectFrom('oauth_store')
    .select(['model', 'client_id', 'payload'])
    .where('model', 'in', ['Grant', 'AccessToken'])
    .where('account_id', 'like', `${workspaceId}:%`)
    .where('client_id', 'is not', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .execute();
  return rows.map((r) => ({ model: r.model as IssuedRow['model'], clientId: r.client_id!, payload: r.payload }));
}

export interface RegisteredClientRow {
  id: string;
  metadata: Record<string, unknown>;
  createdAt: number;
}

/** The registered clients (DCR and REST-made) among `ids`; ids with no row are left out. */
export async function findRegisteredClients(db: Kysely<Database>, ids: readonly string[]): Promise<RegisteredClientRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('oauth_clients').select(['id', 'metadata', 'created_at']).where('id', 'in', [...ids]).execute();
  return rows.map((r) => ({ id: r.id, metadata: JSON.parse(r.metadata) as Record<string, unknown>, createdAt: toMillis(r.created_at) }));
}
