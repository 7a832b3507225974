import { mintApiKey } from '../../src/core/api-keys/api-keys.service.js';
import { newId } from '../../src/core/ids.js';
import type { Role } from '../../src/core/permissions/roles.js';
import { insertUser } from '../../db/repositories/users.repo.js';
import type { TestServer } from '../support/server.js';

/** An API key of `workspaceId` with `role` and brands, minted as the service mints them. */
export async function keyWithRole(server: TestServer, workspaceId: string, role: Role, brandIds: string[] | null = null): Promise<string> {
  const { apiKey } = await server.container.db.kysely.transaction().execute((tx) => mintApiKey(tx, workspaceId, `${role} key`, Date.now(), { role, brandIds, createdBy: null }));
  return apiKey;
}

/** A person with an account and no workspace yet. */
export async function person(server: TestServer, email = `${newId('p')}@example.com`): Promise<{ id: string; email: string }> {
  const id = newId('usr_');
  const now = Date.now();
  await insertUser(server.container.db.kysely, { id, email, name: null, passwordHash: null, emailVerifiedAt: null, createdAt: now, updatedAt: now });
  return { id, email };
}

/** Makes a brand through the API and returns its id. */
export async function brand(server: TestServer, workspaceId: string, key: string, name = 'Brand'): Promise<string> {
  const res = await server.request('POST', `/api/v1/workspaces/${workspaceId}/brands`, { key, body: { name } });
  if (res.status !== 201) throw new Error(`brand: ${res.status} ${res.text}`);
  return res.body.id as string;
}

/** The member actions recorded in a workspace's audit log, oldest first. */
export async function auditActions(server: TestServer, workspaceId: string): Promise<string[]> {
  const rows = await server.container.db.kysely.selectFrom('audit_events').select('action').where('workspace_id', '=', workspaceId).where('action', 'like', 'member.%').orderBy('occurred_at').orderBy('id').execute();
  return rows.map((r) => r.action);
}
