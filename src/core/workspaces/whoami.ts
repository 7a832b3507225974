import type { Kysely } from 'kysely';
import { findApiKey } from '../../../db/repositories/api-keys.repo.js';
import { findClient } from '../../../db/repositories/oauth.repo.js';
import { findUser } from '../../../db/repositories/users.repo.js';
import { findWorkspace } from '../../../db/repositories/workspaces.repo.js';
import type { Database } from '../../../db/schema.js';
import { toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import type { Principal } from '../principal.js';
import type { Me } from './workspaces.schema.js';

/**
 * Who a credential is (`GET /api/v1/me`): the workspace it acts in (id, name, plan) and which API key or OAuth
 * client it is, so a key holder can find the workspace id every other path needs. It reads only what the
 * credential already reaches, and who acts with it: role, brands, and the key or person behind it (for an OAuth
 * token, whoever approved the grant). Doors have authenticated the credential; this adds no check of its own.
 * @throws ServiceError `not_found` when the workspace no longer exists.
 */
export async function whoAmI(db: Kysely<Database>, principal: Principal): Promise<Me> {
  const workspace = await findWorkspace(db, principal.workspaceId);
  if (!workspace) throw new ServiceError('not_found', `Workspace ${principal.workspaceId} was not found.`);
  const summary = { id: workspace.id, name: workspace.name, plan: workspace.plan ?? 'default', created_at: toIso(workspace.createdAt) };
  const userId = principal.userId ?? null;
  const person = userId === null ? undefined : await findUser(db, userId);
  const actor = {
    role: principal.role,
    brand_ids: principal.brandIds === null ? null : [...principal.brandIds],
    key_id: principal.keyId,
    user_id: userId,
    email: person?.email ?? null,
  };
  if (principal.kind === 'api_key') {
    const key = await findApiKey(db, principal.workspaceId, principal.keyId);
    // Authentication has just found this key active; a revocation racing this request still names it.
    if (!key) throw new ServiceError('invalid_api_key', 'The API key is missing, malformed, revoked or unknown.');
    return { workspace: summary, credential: { kind: 'api_key', key_id: key.id, name: key.name, prefix: key.prefix }, actor };
  }
  if (principal.kind === 'user') {
    // The session was resolved this request; a person deleted meanwhile is gone, as a deleted workspace is.
    if (!person) throw new ServiceError('not_found', `Person ${userId ?? ''} was not found.`);
    return { workspace: summary, credential: { kind: 'user', user_id: person.id, email: person.email }, actor };
  }
  const client = await findClient(db, principal.clientId);
  const name = (client?.metadata as { client_name?: unknown } | undefined)?.client_name;
  return {
    workspace: summary,
    credential: { kind: 'oauth', client_id: principal.clientId, client_name: typeof name === 'string' && name !== '' ? name : null, key_id: principal.keyId },
    actor,
  };
}
