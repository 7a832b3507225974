import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { insertMembership } from '../../db/repositories/memberships.repo.js';
import { insertUser } from '../../db/repositories/users.repo.js';
import { newId } from '../../src/core/ids.js';
import type { Role } from '../../src/core/permissions/roles.js';
import type { TestServer } from './server.js';

/** A person with an account and a membership of `workspaceId`, written straight into the database. */
export async function addPerson(server: TestServer, workspaceId: string, email: string, role: Role = 'admin'): Promise<{ userId: string }> {
  const db = server.container.db.kysely;
  const now = server.container.clock.now();
  const userId = newId('usr_');
  await insertUser(db, { id: userId, email, name: null, passwordHash: null, emailVerifiedAt: now, createdAt: now, updatedAt: now });
  await insertMembership(db, { id: newId('mem_'), workspaceId, userId, role, brandIds: null, createdAt: now, updatedAt: now });
  return { userId };
}

/** A TCP port free right now, for a server that must know its own address before it starts (BASE_URL). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
