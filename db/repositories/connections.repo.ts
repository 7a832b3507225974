import type { Kysely, Selectable } from 'kysely';
import type { ConnectionsTable, Database } from '../schema.js';
import { toMillis } from './rows.js';

export interface ConnectionRow {
  id: string;
  workspaceId: string;
  brandId: string;
  platformSlug: string;
  mode: string;
  name: string;
  status: string;
  statusReason: string | null;
  createdAt: number;
  updatedAt: number;
}

const COLUMNS = ['id', 'workspace_id', 'brand_id', 'platform_slug', 'mode', 'name', 'status', 'status_reason', 'created_at', 'updated_at'] as const;

type Selected = Pick<Selectable<ConnectionsTable>, (typeof COLUMNS)[number]>;

function toRow(r: Selected): ConnectionRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    brandId: r.brand_id,
    platformSlug: r.platform_slug,
    mode: r.mode,
    name: r.name,
    status: r.status,
    statusReason: r.status_reason,
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
  };
}

export async function insertConnection(db: Kysely<Database>, row: ConnectionRow): Promise<void> {
  await db
    .insertInto('connections')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      brand_id: row.brandId,
      platform_slug: row.platformSlug,
      mode: row.mode,
      name: row.name,
      status: row.status,
      status_reason: row.statusReason,
      created_at: row.createdAt,
      updated_at: row.updatedAt,
    })
    .execute();
}

export async function findConnection(db: Kysely<Database>, workspaceId: string, id: string): Promise<ConnectionRow | undefined> {
  const r = await db.selectFrom('connections').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

export async function findConnectionById(db: Kysely<Database>, id: string): Promise<ConnectionRow | undefined> {
  const r = await db.selectFrom('connections').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

/** The connections of a claim's jobs, in one statement. */
export async function findConnectionsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, ConnectionRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('connections').select(COLUMNS).where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((r) => [r.id, toRow(r)]));
}

export interface ConnectionFilter {
  brandId?: string | undefined;
  /** Only connections of these brands (null or absent: every brand). */
  brandIds?: readonly string[] | null | undefined;
  platformSlug?: string | undefined;
  status?: string | undefined;
  statuses?: string[] | undefined;
}

export async function listConnections(db: Kysely<Database>, workspaceId: string, filter: ConnectionFilter = {}): Promise<ConnectionRow[]> {
  let q = db.selectFrom('connections').select(COLUMNS).where('workspace_id', '=', workspaceId);
  if (filter.brandId !== undefined) q = q.where('brand_id', '=', filter.brandId);
  if (filter.brandIds !== undefined && filter.brandIds !== null) {
    if (filter.brandIds.length === 0) return [];
    q = q.where('brand_id', 'in', filter.brandIds);
  }
  if (filter.platformSlug !== undefined) q = q.where('platform_slug', '=', filter.platformSlug);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  if (filter.statuses !== undefined) q = q.where('status', 'in', filter.statuses);
  const rows = await q.orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map(toRow);
}

/**
 * A content creation's first read, in one statement: the brand (undefined when it is not the workspace's or is
 * deleted), its workspace's plan, and the brand's connections, oldest first. Three reads before, three round
 * trips on PostgreSQL.
 */
export async function findBrandContext(db: Kysely<Database>, workspaceId: string, brandId: string): Promise<{ plan: string; connections: ConnectionRow[] } | undefined> {
  const rows = await db
    .selectFrom('brands as b')
    .innerJoin('workspaces as w', 'w.id', 'b.workspace_id')
    .leftJoin('connections as c', (join) => join.onRef('c.brand_id', '=', 'b.id').onRef('c.workspace_id', '=', 'b.workspace_id'))
    .select(['w.plan as plan', ...COLUMNS.map((column) => `c.${column}` as const)])
    .where('b.workspace_id', '=', workspaceId)
    .where('b.id', '=', brandId)
    .where('b.deleted_at', 'is', null)
    .orderBy('c.created_at', 'asc')
    .orderBy('c.id', 'asc')
    .execute();
  const first = rows[0];
  if (!first) return undefined;
  // A brand without connections is one row whose connection columns are all null.
  const connections = rows.filter((r) => r.id !== null).map((r) => toRow(r as Selected));
  return { plan: first.plan, connections };
}

/**
 * Moves a connection from one of `from` to `to`; returns whether this call made the change (so an event is
 * recorded once per transition even when several jobs notice it together).
 */
export async function transitionConnection(
  db: Kysely<Database>,
  id: string,
  from: string[],
  to: string,
  reason: string | null,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('connections')
    .set({ status: to, status_reason: reason, updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The sealed tokens of a live connection and when they expire. */
export async function findConnectionTokens(
  db: Kysely<Database>,
  id: string,
): Promise<{ sealed: string | null; expiresAt: number | null; accountId: string | null; warnedAt: number | null } | undefined> {
  const r = await db
    .selectFrom('connections')
    .select(['tokens_sealed', 'token_expires_at', 'external_account_id', 'expiry_warned_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  return (
    r && {
      sealed: r.tokens_sealed,
      expiresAt: r.token_expires_at === null ? null : Number(r.token_expires_at),
      accountId: r.external_account_id,
      warnedAt: r.expiry_warned_at === null ? null : Number(r.expiry_warned_at),
    }
  );
}

/** Stores new tokens and makes the connection active again (a reconnect keeps its id and history). */
/**
 * Takes the connection's token renewal for `leaseMs` unless another renewal holds it (a conditional update, so
 * exactly one of several processes renews at a time). True when taken.
 */
export async function claimTokenRefresh(db: Kysely<Database>, id: string, now: number, leaseMs: number): Promise<boolean> {
  const r = await db
    .updateTable('connections')
    .set({ token_refresh_until: now + leaseMs })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('token_refresh_until', 'is', null), eb('token_refresh_until', '<=', now)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function releaseTokenRefresh(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('connections').set({ token_refresh_until: null }).where('id', '=', id).execute();
}

/** Whether a renewal holds the connection at `now`. */
export async function tokenRefreshHeld(db: Kysely<Database>, id: string, now: number): Promise<boolean> {
  const r = await db.selectFrom('connections').select('token_refresh_until').where('id', '=', id).executeTakeFirst();
  return r?.token_refresh_until != null && Number(r.token_refresh_until) > now;
}

/**
 * Stores renewed tokens only if the connection still holds `previous` (compare and swap): two renewals racing
 * (a publish and the sweep, in two processes) keep one result, and the loser reads the winner's tokens back.
 * Networks that rotate refresh tokens (X) make the loser's own result unusable anyway. True when stored.
 */
export async function replaceConnectionTokens(
  db: Kysely<Database>,
  id: string,
  previous: string,
  tokens: { sealed: string; expiresAt: number | null; accountId: string },
  now: number,
): Promise<boolean> {
  const r = await db
    .updateTable('connections')
    .set({ tokens_sealed: tokens.sealed, token_expires_at: tokens.expiresAt, external_account_id: tokens.accountId, expiry_warned_at: null, updated_at: now })
    .where('id', '=', id)
    .where('tokens_sealed', '=', previous)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Renames a connection (its network account's label changed, e.g. another Pinterest board). */
export async function renameConnection(db: Kysely<Database>, id: string, name: string, now: number): Promise<void> {
  await db.updateTable('connections').set({ name, updated_at: now }).where('id', '=', id).execute();
}

export async function storeConnectionTokens(
  db: Kysely<Database>,
  id: string,
  tokens: { sealed: string; expiresAt: number | null; accountId: string },
  now: number,
): Promise<void> {
  await db
    .updateTable('connections')
    .set({
      tokens_sealed: tokens.sealed,
      token_expires_at: tokens.expiresAt,
      external_account_id: tokens.accountId,
      expiry_warned_at: null,
      status: 'active',
      status_reason: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
}

export async function markExpiryWarned(db: Kysely<Database>, id: string, now: number): Promise<boolean> {
  const r = await db.updateTable('connections').set({ expiry_warned_at: now }).where('id', '=', id).where('expiry_warned_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Live, active connections whose token expires before `before` (refresh or warning candidates). */
export async function connectionsExpiringBefore(db: Kysely<Database>, before: number): Promise<ConnectionRow[]> {
  const rows = await db
    .selectFrom('connections')
    .select(COLUMNS)
    .where('mode', '=', 'live')
    .where('status', '=', 'active')
    .where('token_expires_at', 'is not', null)
    .where('token_expires_at', '<', before)
    .execute();
  return rows.map(toRow);
}
