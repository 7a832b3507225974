import type { Kysely } from 'kysely';
import { findApiKey } from '../../../db/repositories/api-keys.repo.js';
import { listBrands } from '../../../db/repositories/brands.repo.js';
import { findMembership, listMembershipsOfUser } from '../../../db/repositories/memberships.repo.js';
import { findGrantAccess, upsertGrantAccess } from '../../../db/repositories/oauth-grant-access.repo.js';
import { findUser } from '../../../db/repositories/users.repo.js';
import type { Database } from '../../../db/schema.js';
import type { ApiKeysService } from '../api-keys/api-keys.service.js';
import { roleOf } from '../api-keys/api-keys.service.js';
import { recordAudit } from '../audit/record.js';
import type { Clock } from '../clock.js';
import { ServiceError } from '../errors.js';
import { brandsWithin, type Role, ROLE_PERMISSIONS, ROLES, roleWithin } from '../permissions/roles.js';
import type { Access, Principal } from '../principal.js';

/**
 * What an assistant's OAuth grant carries: the role and brands the approving person (or API key) chose, never
 * above their own, stored beside oidc-provider's grant (`oauth_grant_access`, keyed by its grant id). The
 * grant's account id says who approved (`ws:key_…` or `ws:usr_…`, see `accountIdFor`); every call with one of its
 * tokens acts with the granted role and brands narrowed to what the approver holds *now*, so a demotion narrows
 * the token and a removal (or a revoked key) ends it at the next call.
 */

/** How the consent page names each role it offers an assistant. */
export const GRANT_ROLE_LABELS: Readonly<Record<Role, string>> = {
  owner: 'Everything, as an owner',
  admin: 'Everything but managing owners',
  editor: 'Drafts, publishes and approves',
  contributor: 'Drafts that a person approves',
  viewer: 'Reads only',
  client: 'Reads and approves',
};

/** The roles one may grant from `ceiling`: those it covers, widest first (the order of ROLES). */
export function grantableRoles(ceiling: Role): Role[] {
  return ROLES.filter((r) => roleWithin(r, ceiling));
}

/** What a person is offered first: an assistant that drafts for a person to approve, when they may grant it. */
export function defaultPersonRole(ceiling: Role): Role {
  return roleWithin('contributor', ceiling) ? 'contributor' : ceiling;
}

/**
 * The role a grant acts with when its approver now holds `current`: the granted role while the approver still
 * covers it; otherwise the widest role both cover (a demoted person's assistant drops to the person's role); null
 * when no role fits inside both (the token then stops working).
 */
export function narrowedRole(granted: Role, current: Role): Role | null {
  if (roleWithin(granted, current)) return granted;
  const fits = ROLES.filter((r) => roleWithin(r, granted) && roleWithin(r, current));
  fits.sort((a, b) => ROLE_PERMISSIONS[b].size - ROLE_PERMISSIONS[a].size);
  return fits[0] ?? null;
}

/** The brands a grant acts on: those granted that the approver still has (null: every brand). */
export function narrowedBrands(granted: readonly string[] | null, current: readonly string[] | null): readonly string[] | null {
  if (granted === null) return current;
  if (current === null) return granted;
  return granted.filter((b) => current.includes(b));
}

/** Who approved a grant, as its account id says. */
export type GrantApprover = { kind: 'api_key'; keyId: string } | { kind: 'user'; userId: string };

/** One workspace a signed-in person may connect an assistant to, with what they may grant there. */
export interface WorkspaceChoice {
  workspaceId: string;
  workspaceName: string;
  role: Role;
  brandIds: readonly string[] | null;
  /** The brands they may pick from (theirs). */
  brands: { id: string; name: string }[];
}

export interface ApproveGrantInput {
  workspaceId: string;
  clientId: string;
  clientName: string;
  grantId: string;
  /** Absent: the approver's own role for a key (as before roles existed), contributor for a person. */
  role?: Role | undefined;
  /** Absent or null: every brand the approver has. */
  brandIds?: readonly string[] | null | undefined;
}

export type GrantAccessService = ReturnType<typeof createGrantAccessService>;

export function createGrantAccessService(deps: { db: Kysely<Database>; clock: Clock; apiKeys: Pick<ApiKeysService, 'accessOf'> }) {
  const { db, clock } = deps;

  async function currentAccess(workspaceId: string, approver: GrantApprover): Promise<Access | undefined> {
    if (approver.kind === 'api_key') return deps.apiKeys.accessOf(workspaceId, approver.keyId);
    const membership = await findMembership(db, workspaceId, approver.userId);
    return membership && { role: roleOf(membership.role), brandIds: membership.brandIds };
  }

  return {
    /** A person's email and the workspaces they may connect an assistant to; undefined for an unknown person. */
    async personChoices(userId: string): Promise<{ email: string; workspaces: WorkspaceChoice[] } | undefined> {
      const [user, memberships] = await Promise.all([findUser(db, userId), listMembershipsOfUser(db, userId)]);
      if (!user) return undefined;
      const workspaces = await Promise.all(
        memberships.map(async (m): Promise<WorkspaceChoice> => {
          const brands = (await listBrands(db, m.workspaceId)).filter((b) => m.brandIds === null || m.brandIds.includes(b.id));
          return { workspaceId: m.workspaceId, workspaceName: m.workspaceName, role: roleOf(m.role), brandIds: m.brandIds, brands: brands.map((b) => ({ id: b.id, name: b.name })) };
        }),
      );
      return { email: user.email, workspaces };
    },

    /**
     * Records what the grant `input.grantId` carries and who approved it, with its `oauth_grant.approved` audit
     * entry in the same transaction. Called before the provider saves the grant, so a grant never exists
     * without what it carries. The approver's access is read again here, not taken from the page.
     * @throws ServiceError `forbidden` when the approver no longer belongs to the workspace (or the key was
     *   revoked); `validation_failed` naming `role` or `brand_ids` when asked for more than the approver has.
     */
    async approve(approver: Extract<Principal, { kind: 'api_key' | 'user' }>, input: ApproveGrantInput): Promise<{ role: Role; brandIds: readonly string[] | null }> {
      const who: GrantApprover = approver.kind === 'user' ? { kind: 'user', userId: approver.userId } : { kind: 'api_key', keyId: approver.keyId };
      // A key acts in its own workspace only; a person in any workspace they belong to (their session may be
      // looking at another one).
      const current = who.kind === 'user' || approver.workspaceId === input.workspaceId ? await currentAccess(input.workspaceId, who) : undefined;
      if (!current) throw new ServiceError('forbidden', 'You do not belong to that workspace (any more).');
      const actor = { ...approver, workspaceId: input.workspaceId, ...current };
      const role = input.role ?? (who.kind === 'user' ? defaultPersonRole(current.role) : current.role);
      if (!roleWithin(role, current.role)) {
        throw new ServiceError('validation_failed', `role ${role} is above your own role (${current.role}) in this workspace.`, { fields: [{ path: 'role', message: `at most ${current.role}` }] });
      }
      const brandIds = input.brandIds === undefined || input.brandIds === null || input.brandIds.length === 0 ? current.brandIds : [...new Set(input.brandIds)];
      const known = new Set((await listBrands(db, input.workspaceId)).map((b) => b.id));
      if (!brandsWithin(brandIds, current.brandIds) || (brandIds !== null && brandIds.some((b) => !known.has(b)))) {
        throw new ServiceError('validation_failed', 'brand_ids names a brand you cannot reach in this workspace.', { fields: [{ path: 'brand_ids', message: 'only your own brands' }] });
      }
      const label = who.kind === 'user' ? ((await findUser(db, who.userId))?.email ?? null) : ((await findApiKey(db, input.workspaceId, who.keyId))?.name ?? null);
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        await upsertGrantAccess(tx, {
          grantId: input.grantId,
          workspaceId: input.workspaceId,
          clientId: input.clientId,
          approverType: who.kind,
          approverId: who.kind === 'user' ? who.userId : who.keyId,
          approverLabel: label,
          role,
          brandIds: brandIds === null ? null : [...brandIds],
          createdAt: now,
          updatedAt: now,
        });
        await recordAudit(tx, actor, 'oauth_grant.approved', { type: 'oauth_client', id: input.clientId, label: input.clientName }, now, {
          grant_id: input.grantId,
          role,
          brand_ids: brandIds,
        });
      });
      return { role, brandIds };
    },

    /**
     * What a call with one of the grant's tokens may do now: the granted role and brands narrowed to the
     * approver's current ones. Undefined when the approver is gone (removed from the workspace, key revoked),
     * when no role fits inside both, or when a person's grant has nothing recorded. A key's grant from before
     * grants carried a role acts with the key's access, as it always did.
     */
    async accessFor(workspaceId: string, approver: GrantApprover, grantId: string): Promise<Access | undefined> {
      const [row, current] = await Promise.all([findGrantAccess(db, grantId), currentAccess(workspaceId, approver)]);
      if (!current) return undefined;
      if (!row) return approver.kind === 'api_key' ? current : undefined;
      const approverId = approver.kind === 'user' ? approver.userId : approver.keyId;
      if (row.workspaceId !== workspaceId || row.approverType !== approver.kind || row.approverId !== approverId) return undefined;
      const role = narrowedRole(roleOf(row.role), current.role);
      return role === null ? undefined : { role, brandIds: narrowedBrands(row.brandIds, current.brandIds) };
    },
  };
}
