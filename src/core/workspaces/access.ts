import { authorize } from '../permissions/authorize.js';
import type { Permission } from '../permissions/roles.js';
import type { Principal } from '../principal.js';

/**
 * Spec 5.3: a credential acts only inside its own workspace; with a permission, its role and brands must allow
 * the operation too (`authorize`).
 * @throws ServiceError `forbidden` when the path names another workspace (existing or not) or the role refuses.
 */
export function assertWorkspaceAccess(principal: Principal, workspaceId: string, permission: Permission = 'workspace.read', brandId?: string | null): void {
  authorize(principal, workspaceId, permission, brandId);
}
