import { z } from 'zod';
import { ServiceError } from '../../core/errors.js';
import type { Principal } from '../../core/principal.js';

export const workspaceParams = z.object({ wsId: z.string().describe('Workspace id (ws_…).') });

/** Bearer routes always have a principal; this narrows the type and guards against a mis-declared route. */
export function requirePrincipal(principal: Principal | null): Principal {
  if (principal === null) throw new ServiceError('invalid_api_key', 'The API key is missing, malformed, revoked or unknown.');
  return principal;
}
