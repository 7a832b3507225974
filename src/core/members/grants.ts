import type { Kysely } from 'kysely';
import { unknownBrands } from '../../../db/repositories/members.repo.js';
import type { Database } from '../../../db/schema.js';
import { ServiceError } from '../errors.js';
import { authorize } from '../permissions/authorize.js';
import { brandsWithin, type Role, roleWithin } from '../permissions/roles.js';
import type { Principal } from '../principal.js';

/**
 * Whether `principal` may hand out `role` over `brandIds` (a new member, an invitation, a change): managing
 * owners needs `members.manage_owners`, and nobody grants a role or brands above their own.
 * @throws ServiceError `forbidden` with the permission that is missing.
 */
export function assertMayGrant(principal: Principal, workspaceId: string, role: Role, brandIds: readonly string[] | null): void {
  if (role === 'owner') authorize(principal, workspaceId, 'members.manage_owners');
  if (!roleWithin(role, principal.role)) {
    throw new ServiceError('forbidden', `Your role (${principal.role}) cannot grant the role ${role}: it may do more than you.`, { permission: 'members.manage' });
  }
  if (!brandsWithin(brandIds, principal.brandIds)) {
    throw new ServiceError('forbidden', 'You cannot grant brands you do not see yourself.', { permission: 'members.manage' });
  }
}

/**
 * Every brand id must be a live brand of the workspace.
 * @throws ServiceError `validation_failed` naming `brand_ids[i]` for each unknown one.
 */
export async function assertBrandsExist(db: Kysely<Database>, workspaceId: string, brandIds: readonly string[] | null): Promise<void> {
  if (brandIds === null) return;
  const unknown = await unknownBrands(db, workspaceId, brandIds);
  if (unknown.length === 0) return;
  const fields = unknown.map((id) => ({ path: `brand_ids[${brandIds.indexOf(id)}]`, message: `${id} is not a brand of this workspace` }));
  throw new ServiceError('validation_failed', fields.map((f) => `${f.path}: ${f.message}`).join('; '), { fields });
}

/** Who made something, as stored in `created_by`: the person, else the API key, else the OAuth client. */
export function makerOf(principal: Principal): string {
  if (principal.kind === 'user') return principal.userId;
  if (principal.kind === 'oauth') return principal.userId ?? principal.keyId ?? principal.clientId;
  return principal.keyId;
}

/** A brand list without repeats, in the order given (null stays null: every brand). */
export function distinctBrands(brandIds: readonly string[] | null | undefined): string[] | null {
  return brandIds === null || brandIds === undefined ? null : [...new Set(brandIds)];
}
