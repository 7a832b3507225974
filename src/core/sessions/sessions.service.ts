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
import { newId, sha256Hex } from '../ids.js';
import type { Principal } from '../principal.js';
import { roleOf } from '../api-keys/api-keys.service.js';
import { findMembership, listMembershipsOfUser } from '../../../db/repositories/memberships.repo.js';
import {
  deleteStaleUserSessions,
  deleteUserSession,
  deleteUserSessions,
  findUserSessionWithMembership,
  insertUserSession,
  listUserSessions,
  setUserSessionWorkspace,
  touchUserSession,
} from '../../../db/repositories/user-sessions.repo.js';
import { ServiceError } from '../errors.js';

/** Activity is recorded at most this often, so reading pages is not a write per request. */
const TOUCH_GRANULARITY_MS = 60_000;

export type SessionPrincipal = Extract<Principal, { kind: 'api_key' | 'user' }>;

/** How a person proved who they are, recorded on the session and in the audit log. */
export type AuthMethod = 'password' | 'password+totp' | 'recovery_code' | 'passkey' | 'sso' | 'invitation';

/** A person's session as they see it in their list (never its token). */
export interface UserSessionView {
  id: string;
  authMethod: string;
  ip: string | null;
  userAgent: string | null;
  createdAt: number;
  lastSeenAt: number;
  current: boolean;
}

/** A person's session cookie starts with this, so one lookup finds the right table. */
const USER_TOKEN_PREFIX = 'u.';

export type ResolvedSession =
  | { state: 'active'; principal: SessionPrincipal; expiresAt: number }
  /** Past its idle or absolute deadline: the person signs in again. */
  | { state: 'expired' }
  /** The API key that signed in was revoked since. */
  | { state: 'key_revoked' }
  /** A person signed in, but belongs to no workspace (any more): the dashboard offers what is left (account, sign-out). */
  | { state: 'no_workspace'; userId: string; sessionId: string }
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

  /**
   * A person's session acts with their membership of the session's workspace, read on every request: a demotion
   * or a removal takes effect on the next page.
   */
  async function resolveUser(token: string): Promise<ResolvedSession> {
    const row = await findUserSessionWithMembership(db, sha256Hex(token));
    if (!row) return { state: 'none' };
    const now = clock.now();
    if (now >= deadline(row.createdAt, row.lastSeenAt)) {
      await deleteUserSession(db, row.userId, row.id);
      return { state: 'expired' };
    }
    if (now - row.lastSeenAt >= TOUCH_GRANULARITY_MS) await touchUserSession(db, row.id, now);
    let workspaceId = row.workspaceId;
    let membership = workspaceId === null ? undefined : row.membership;
    if (!membership || workspaceId === null) {
      // Removed from the workspace the session was in: carry on in another one they belong to, if any.
      const [other] = await listMembershipsOfUser(db, row.userId);
      if (!other) return { state: 'no_workspace', userId: row.userId, sessionId: row.id };
      await setUserSessionWorkspace(db, row.id, other.workspaceId);
      membership = other;
      workspaceId = other.workspaceId;
    }
    return {
      state: 'active',
      principal: { kind: 'user', workspaceId, userId: row.userId, sessionId: row.id, keyId: null, role: roleOf(membership.role), brandIds: membership.brandIds },
      expiresAt: deadline(row.createdAt, now),
    };
  }

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

    /**
     * Opens a session for a person who has just proved who they are, acting in `workspaceId` (or the first
     * workspace they belong to). The cookie value is returned once; only its digest is stored.
     */
    async openForUser(userId: string, method: AuthMethod, origin: { ip: string | null; userAgent: string | null }, workspaceId?: string): Promise<{ token: string; sessionId: string; expiresAt: number }> {
      const token = `${USER_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
      const now = clock.now();
      const memberships = await listMembershipsOfUser(db, userId);
      const chosen = memberships.find((m) => m.workspaceId === workspaceId) ?? memberships[0];
      const id = newId('uss_');
      await insertUserSession(db, {
        id,
        tokenDigest: sha256Hex(token),
        userId,
        workspaceId: chosen?.workspaceId ?? null,
        authMethod: method,
        ip: origin.ip,
        userAgent: origin.userAgent?.slice(0, 300) ?? null,
        createdAt: now,
        lastSeenAt: now,
        endsAt: now + maxMs,
      });
      return { token, sessionId: id, expiresAt: deadline(now, now) };
    },

    /**
     * Moves a person's session to another of their workspaces (the switcher).
     * @throws ServiceError `forbidden` when they are not a member of it.
     */
    async switchWorkspace(userId: string, sessionId: string, workspaceId: string): Promise<void> {
      if (!(await findMembership(db, workspaceId, userId))) throw new ServiceError('forbidden', 'You are not a member of that workspace.');
      await setUserSessionWorkspace(db, sessionId, workspaceId);
    },

    /** A person's sessions, most recently used first; `currentId` is marked. */
    async listForUser(userId: string, currentId: string | null): Promise<UserSessionView[]> {
      return (await listUserSessions(db, userId)).map((s) => ({
        id: s.id,
        authMethod: s.authMethod,
        ip: s.ip,
        userAgent: s.userAgent,
        createdAt: s.createdAt,
        lastSeenAt: s.lastSeenAt,
        current: s.id === currentId,
      }));
    },

    /** Ends one of a person's own sessions; false when it was not theirs or already ended. */
    endForUser: (userId: string, sessionId: string): Promise<boolean> => deleteUserSession(db, userId, sessionId),

    /**
     * Ends every session of a person except `keepId` (sign out everywhere, a password change, removal from every
     * workspace). Returns how many ended.
     */
    endAllForUser: (userId: string, keepId: string | null = null): Promise<number> => deleteUserSessions(db, userId, keepId),

    /** Resolves a cookie value; an active session's idle deadline moves forward. */
    async resolve(token: string): Promise<ResolvedSession> {
      if (token.length === 0 || token.length > 100) return { state: 'none' };
      if (token.startsWith(USER_TOKEN_PREFIX)) return resolveUser(token);
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
      if (token.startsWith(USER_TOKEN_PREFIX)) {
        await db.deleteFrom('user_sessions').where('token_digest', '=', sha256Hex(token)).execute();
        return;
      }
      await deleteDashboardSession(db, sha256Hex(token));
    },

    /** Deletes sessions past either deadline (run by the maintenance loop). */
    async sweep(): Promise<number> {
      const now = clock.now();
      return (await deleteStaleDashboardSessions(db, now, idleMs)) + (await deleteStaleUserSessions(db, now, idleMs));
    },
  };
}
