import type { Kysely } from 'kysely';
import { randomBytes } from 'node:crypto';
import {
  deleteDashboardSession,
  deleteStaleDashboardSessions,
  findDashboardSession,
  insertDashboardSession,
  rebindDashboardSession,
  touchDashboardSession,
} from '../../../db/repositories/dashboard-sessions.repo.js';
import type { Database } from '../../../db/schema.js';
import type { ApiKeysService } from '../api-keys/api-keys.service.js';
import type { Clock } from '../clock.js';
import { sha256Hex } from '../ids.js';
import type { Principal } from '../principal.js';
import { roleOf } from '../api-keys/api-keys.service.js';

/** Activity is recorded at most this often, so reading pages is not a write per request. */
const TOUCH_GRANULARITY_MS = 60_000;

export type SessionPrincipal = Extract<Principal, { kind: 'api_key' }>;

export type ResolvedSession =
  | { state: 'active'; principal: SessionPrincipal; expiresAt: number }
  /** Past its idle or absolute deadline: the person signs in again. */
  | { state: 'expired' }
  /** The API key that signed in was revoked since. */
  | { state: 'key_revoked' }
  /** No such session (never existed, signed out, or cleaned up). */
  | { state: 'none' };

export type SessionsService = ReturnType<typeof createSessionsService>;

/**
 * Dashboard sessions. A person signs in with an API key; the session then acts as that key (same principal,
 * same workspace), so the dashboard can do nothing the key could not. The cookie value is random and only its
 * digest is stored.
 */
export function createSessionsService(deps: { db: Kysely<Database>; clock: Clock; apiKeys: ApiKeysService; idleMs: number; maxMs: number }) {
  const { db, clock, idleMs, maxMs } = deps;
  const deadline = (createdAt: number, lastSeenAt: number) => Math.min(createdAt + maxMs, lastSeenAt + idleMs);

  return {
    /**
     * Checks the key and opens a session for it.
     * @throws ServiceError `invalid_api_key` (the same for unknown, revoked and malformed keys).
     */
    async signIn(apiKey: string): Promise<{ token: string; principal: SessionPrincipal; expiresAt: number }> {
      const principal = await deps.apiKeys.authenticate(apiKey.trim());
      const token = randomBytes(32).toString('base64url');
      const now = clock.now();
      await insertDashboardSession(db, { tokenDigest: sha256Hex(token), workspaceId: principal.workspaceId, keyId: principal.keyId, now, endsAt: now + maxMs });
      return { token, principal, expiresAt: deadline(now, now) };
    },

    /** Resolves a cookie value; an active session's idle deadline moves forward. */
    async resolve(token: string): Promise<ResolvedSession> {
      if (token.length === 0 || token.length > 100) return { state: 'none' };
      const digest = sha256Hex(token);
      const row = await findDashboardSession(db, digest);
      if (!row) return { state: 'none' };
      const now = clock.now();
      if (now >= deadline(row.createdAt, row.lastSeenAt)) {
        await deleteDashboardSession(db, digest);
        return { state: 'expired' };
      }
      if (!row.keyActive) {
        await deleteDashboardSession(db, digest);
        return { state: 'key_revoked' };
      }
      if (now - row.lastSeenAt >= TOUCH_GRANULARITY_MS) await touchDashboardSession(db, digest, now);
      return { state: 'active', principal: { kind: 'api_key', workspaceId: row.workspaceId, keyId: row.keyId, role: roleOf(row.keyRole), brandIds: row.keyBrandIds }, expiresAt: deadline(row.createdAt, now) };
    },

    /**
     * After a rotation from the dashboard (a new key that revoked the others, this session's among them), the
     * session carries on as the new key instead of ending mid-page.
     */
    async rebind(token: string, newKeyId: string): Promise<void> {
      await rebindDashboardSession(db, sha256Hex(token), newKeyId);
    },

    async signOut(token: string): Promise<void> {
      await deleteDashboardSession(db, sha256Hex(token));
    },

    /** Deletes sessions past either deadline (run by the maintenance loop). */
    async sweep(): Promise<number> {
      return deleteStaleDashboardSessions(db, clock.now(), idleMs);
    },
  };
}
