import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { formatBrandIds, parseBrandIds, toMillis } from './rows.js';

/** The role and brands an OAuth grant carries and who approved it, beside oidc-provider's grant. */

export interface GrantAccessRow {
  grantId: string;
  workspaceId: string;
  clientId: string;
  approverType: 'user' | 'api_key';
  approverId: string;
  approverLabel: string | null;
  role: string;
  /** null: every brand the approver has. */
  brandIds: string[] | null;
  createdAt: number;
  updatedAt: number;
}

const COLUMNS = ['grant_id', 'workspace_id', 'client_id', 'approver_type', 'approver_id', 'approver_label', 'role', 'brand_ids', 'created_at', 'updated_at'] as const;

type Selected = {
  grant_id: string;
  workspace_id: string;
  client_id: string;
  approver_type: string;
  approver_id: string;
  approver_label: string | null;
  role: string;
  brand_ids: string | null;
  created_at: number | string;
  updated_at: number | string;
};

function toRow(r: Selected): GrantAccessRow {
  return {
    grantId: r.grant_id,
    workspaceId: r.workspace_id,
    clientId: r.client_id,
    approverType: r.approver_type === 'user' ? 'user' : 'api_key',
    approverId: r.approver_id,
    approverLabel: r.approver_label,
    role: r.role,
    brandIds: parseBrandIds(r.brand_ids),
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
  };
}

/**
 * Records what a grant carries. A grant approved again (the same person or key, the same client) keeps its id:
 * the latest approval's role and brands replace the earlier ones, in one statement, so two approvals racing
 * leave one row, the last writer's.
 */
export async function upsertGrantAccess(db: Kysely<Database>, row: GrantAccessRow): Promise<void> {
  const values = {
    grant_id: row.grantId,
    workspace_id: row.workspaceId,
    client_id: row.clientId,
    approver_type: row.approverType,
    approver_id: row.approverId,
    approver_label: row.approverLabel,
    role: row.role,
    brand_ids: formatBrandIds(row.brandIds),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
  await db
    .insertInto('oauth_grant_access')
    .values(values)
    .onConflict((oc) =>
      oc.column('grant_id').doUpdateSet({
        workspace_id: values.workspace_id,
        client_id: values.client_id,
        approver_type: values.approver_type,
        approver_id: values.approver_id,
        approver_label: values.approver_label,
        role: values.role,
        brand_ids: values.brand_ids,
        updated_at: values.updated_at,
      }),
    )
    .execute();
}

export async function findGrantAccess(db: Kysely<Database>, grantId: string): Promise<GrantAccessRow | undefined> {
  const r = await db.selectFrom('oauth_grant_access').select(COLUMNS).where('grant_id', '=', grantId).executeTakeFirst();
  return r && toRow(r);
}

/** What the live grants of a workspace carry (a row whose grant is gone or expired at `now` is left out). */
export async function listGrantAccessOfWorkspace(db: Kysely<Database>, workspaceId: string, now: number): Promise<GrantAccessRow[]> {
  const rows = await db
    .selectFrom('oauth_grant_access as a')
    .innerJoin('oauth_store as g', (join) => join.onRef('g.id', '=', 'a.grant_id').on('g.model', '=', 'Grant'))
    .select(COLUMNS.map((c) => `a.${c}` as const))
    .where('a.workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('g.expires_at', 'is', null), eb('g.expires_at', '>', now)]))
    .execute();
  return rows.map(toRow);
}

/** What the grants one person or key approved in a workspace carried (their grants are being destroyed with them). */
export async function deleteGrantAccessOfApprover(db: Kysely<Database>, workspaceId: string, approverType: GrantAccessRow['approverType'], approverId: string): Promise<void> {
  await db.deleteFrom('oauth_grant_access').where('workspace_id', '=', workspaceId).where('approver_type', '=', approverType).where('approver_id', '=', approverId).execute();
}

/**
 * Rows whose grant was revoked, disconnected or has expired (the maintenance loop). Only rows last written before
 * `writtenBefore`: a row is written just before its grant is saved, and must not be taken for an orphan then.
 */
export async function deleteOrphanGrantAccess(db: Kysely<Database>, writtenBefore: number): Promise<void> {
  await db
    .deleteFrom('oauth_grant_access')
    .where('updated_at', '<', writtenBefore)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('oauth_store').select('oauth_store.id').whereRef('oauth_store.id', '=', 'oauth_grant_access.grant_id').where('oauth_store.model', '=', 'Grant'))),
    )
    .execute();
}
