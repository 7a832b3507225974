import { ServiceError } from '../errors.js';
import type { Principal } from '../principal.js';

/**
 * Spec 5.3: a credential acts only inside its own workspace.
 * @throws ServiceError `forbidden` when the path names another workspace (existing or not).
 */
export function assertWorkspaceAccess(principal: Principal, workspaceId: string): void {
  if (principal.workspaceId !== workspaceId) {
    throw new ServiceError('forbidden', 'This credential does not belong to the workspace in the path.');
  }
}
