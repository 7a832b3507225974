import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';

/** Storage behind the authorization server (oidc-provider's adapter contract) and our client registry. */

export interface StoredModel {
  payload: string;
  expiresAt: number | null;
  consumedAt: number | null;
}

export async function upsertModel(
  db: Kysely<Database>,
  row: { model: string; id: string; payload: string; grantId: string | null; uid: string | null; accountId: string | null; clientId: string | null; expiresAt: number | null },
): Promise<void> {
  const values = {
    model: row.model,
    id: row.id,
    payload: row.payload,
    grant_id: row.grantId,
    uid: row.uid,
    account_id: row.accountId,
    client_id: row.clientId,
    expires_at: row.expiresAt,
    consumed_at: null,
  };
  await db
    .insertInto('oauth_store')
    .values(values)
    .onConflict((oc) =>
      oc.columns(['model', 'id']).doUpdateSet({
        payload: values.payload,
        grant_id: values.grant_id,
        uid: values.uid,
        account_id: values.account_id,
        client_id: values.client_id,
        expires_at: values.expires_at,
      }),
    )
    .execute();
}

function toStored(r: { payload: string; expires_at: number | string | null; consumed_at: number | string | null }): StoredModel {
  return { payload: r.payload, expiresAt: toMillisOrNull(r.expires_at), consumedAt: toMillisOrNull(r.consumed_at) };
}

export async function findModel(db: Kysely<Database>, model: string, id: string): Promise<StoredModel | undefined> {
  const r = await db.selectFrom('oauth_store').select(['payload', 'expires_at', 'consumed_at']).where('model', '=', model).where('id', '=', id).executeTakeFirst();
  return r && toStored(r);
}

export async function findModelByUid(db: Kysely<Database>, model: string, uid: string): Promise<StoredModel | undefined> {
  const r = await db.selectFrom('oauth_store').select(['payload', 'expires_at', 'consumed_at']).where('model', '=', model).where('uid', '=', uid).executeTakeFirst();
  return r && toStored(r);
}

/**
 * Marks a single-use model (an authorization code) consumed, once: the update is conditional on `consumed_at`
 * still being null, so of two concurrent exchanges (two processes on PostgreSQL) exactly one changes the row.
 * Returns true for that one; false when the row was already consumed or is gone (RFC 6749 §4.1.2).
 */
export async function consumeModelOnce(db: Kysely<Database>, model: string, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('oauth_store').set({ consumed_at: now }).where('model', '=', model).where('id', '=', id).where('consumed_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The grant a stored model belongs to, consumed or not (to revoke it when a code is replayed). */
export async function grantIdOfModel(db: Kysely<Database>, model: string, id: string): Promise<string | null> {
  const r = await db.selectFrom('oauth_store').select('grant_id').where('model', '=', model).where('id', '=', id).executeTakeFirst();
  return r?.grant_id ?? null;
}

export async function destroyModel(db: Kysely<Database>, model: string, id: string): Promise<void> {
  await db.deleteFrom('oauth_store').where('model', '=', model).where('id', '=', id).execute();
}

export async function destroyByGrant(db: Kysely<Database>, grantId: string): Promise<void> {
  await db.deleteFrom('oauth_store').where('grant_id', '=', grantId).execute();
}

/**
 * Revokes a grant: the grant itself (its row is keyed by its id; its own `grant_id` column is empty) and every
 * token and code issued under it, in one statement.
 */
export async function revokeGrant(db: Kysely<Database>, grantId: string): Promise<void> {
  await db
    .deleteFrom('oauth_store')
    .where((eb) => eb.or([eb('grant_id', '=', grantId), eb.and([eb('model', '=', 'Grant'), eb('id', '=', grantId)])]))
    .execute();
}

/** Every token, code and grant issued to an account (a revoked API key) or a client (a deleted one). */
export async function destroyIssuedFor(db: Kysely<Database>, by: { accountId?: string; accountPrefix?: string; clientId?: string }): Promise<void> {
  let q = db.deleteFrom('oauth_store').where('model', 'in', ['AccessToken', 'AuthorizationCode', 'Grant', 'RefreshToken']);
  if (by.accountId !== undefined) q = q.where('account_id', '=', by.accountId);
  if (by.accountPrefix !== undefined) q = q.where('account_id', 'like', `${by.accountPrefix}%`);
  if (by.clientId !== undefined) q = q.where('client_id', '=', by.clientId);
  await q.execute();
}

export async function deleteExpiredModels(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('oauth_store').where('expires_at', '<', now).execute();
}

export interface ClientRow {
  id: string;
  workspaceId: string | null;
  kind: 'confidential' | 'public';
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

function toClient(r: { id: string; workspace_id: string | null; kind: string; metadata: string; created_at: number | string; updated_at: number | string }): ClientRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    kind: r.kind as ClientRow['kind'],
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
  };
}

export async function upsertClient(db: Kysely<Database>, row: ClientRow): Promise<void> {
  await db
    .insertInto('oauth_clients')
    .values({ id: row.id, workspace_id: row.workspaceId, kind: row.kind, metadata: JSON.stringify(row.metadata), created_at: row.createdAt, updated_at: row.updatedAt })
    .onConflict((oc) => oc.column('id').doUpdateSet({ metadata: JSON.stringify(row.metadata), updated_at: row.updatedAt }))
    .execute();
}

export async function findClient(db: Kysely<Database>, id: string): Promise<ClientRow | undefined> {
  const r = await db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
  return r && toClient(r);
}

export async function listClients(db: Kysely<Database>, workspaceId: string): Promise<ClientRow[]> {
  const rows = await db.selectFrom('oauth_clients').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toClient);
}

export async function deleteClient(db: Kysely<Database>, id: string): Promise<boolean> {
  const r = await db.deleteFrom('oauth_clients').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}
