import { ServiceError } from '../errors.js';
import type { Access, Principal } from '../principal.js';
import { type Permission, roleCan, WORKSPACE_WIDE } from './roles.js';

/**
 * The one authorization decision: may `principal` do `permission` in `workspaceId`, on `brandId` when the
 * operation touches one brand? Every door asks the core, and the core asks this; nothing else decides.
 * @throws ServiceError `forbidden` for another workspace (spec 5.3), and `forbidden` with `permission` for an
 *   operation the credential's role or brands do not allow.
 */
export function authorize(principal: Principal, workspaceId: string, permission: Permission, brandId?: string | null): void {
  if (principal.workspaceId !== workspaceId) {
    throw new ServiceError('forbidden', 'This credential does not belong to the workspace in the path.');
  }
  if (!allows(principal, permission, brandId)) {
    throw new ServiceError('forbidden', `This credential's role (${principal.role}) does not allow ${permission}${brandId ? ` on brand ${brandId}` : ''}.`, { permission });
  }
}

/** The same decision as a boolean, for listing what a credential may do (tools, dashboard links). */
export function allows(access: Access, permission: Permission, brandId?: string | null): boolean {
  if (!roleCan(access.role, permission)) return false;
  if (access.brandIds === null) return true;
  if (WORKSPACE_WIDE.has(permission)) return false;
  return brandId === undefined || brandId === null || access.brandIds.includes(brandId);
}

/** Whether the credential sees `brandId` at all (a member limited to some brands sees nothing of the others). */
export function seesBrand(access: Access, brandId: string): boolean {
  return access.brandIds === null || access.brandIds.includes(brandId);
}

/** The brands a list must be narrowed to (null: no narrowing). */
export function brandScope(access: Access): readonly string[] | null {
  return access.brandIds;
}
