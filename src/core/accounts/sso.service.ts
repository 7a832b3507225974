import type { Kysely } from 'kysely';
import { consumeAuthChallenge, insertAuthChallenge } from '../../../db/repositories/auth-challenges.repo.js';
import { listMembershipsOfUser } from '../../../db/repositories/memberships.repo.js';
import { findSsoIdentityUser, linkSsoIdentity, openInvitationsFor, touchSsoIdentity } from '../../../db/repositories/sso-identities.repo.js';
import { claimInvitation } from '../../../db/repositories/invitations.repo.js';
import { addMembership } from '../../../db/repositories/members.repo.js';
import { findUserByEmail, insertUser, normalizeEmail } from '../../../db/repositories/users.repo.js';
import type { Database } from '../../../db/schema.js';
import { roleOf } from '../api-keys/api-keys.service.js';
import { recordAudit } from '../audit/record.js';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { Origin, Principal } from '../principal.js';
import type { SessionsService } from '../sessions/sessions.service.js';

/** An authorization request on its way: where to send the browser, and what the answer must match. */
export interface SsoRequest {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** What the provider vouched for in a validated ID token. */
export interface SsoClaims {
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

/**
 * The OpenID Connect relying party the core drives (filled by `src/sso/`): discovery, the authorization code
 * flow with PKCE, state and nonce, and the ID token's validation all happen behind it.
 */
export interface SsoProvider {
  issuer: string;
  start(): Promise<SsoRequest>;
  /** Exchanges the code of `callbackUrl`; `state_mismatch` when its state is not `expected.state`. */
  finish(callbackUrl: string, expected: Omit<SsoRequest, 'url'>): Promise<{ ok: true; claims: SsoClaims } | { ok: false; reason: 'state_mismatch' | 'provider_error' }>;
}

export interface SsoPolicy {
  /** Lowercased domains whose people may join `defaultWorkspaceId` by signing in. */
  allowedDomains: readonly string[];
  defaultWorkspaceId: string | null;
  defaultRole: string;
}

export type SsoRefusal = 'expired' | 'state_mismatch' | 'provider_error' | 'email_unverified' | 'not_allowed';

/** How long a person has at the provider between leaving and coming back. */
export const SSO_REQUEST_TTL_MS = 10 * 60_000;

export type SsoService = ReturnType<typeof createSsoService>;

/**
 * Single sign-on. A person is matched by the provider's (issuer, subject) once linked, else by a verified email:
 * an existing account is linked; a new one is created only for an address with an open invitation (accepted
 * here) or at an allowed domain (joining the default workspace with the default role). Anyone else is refused,
 * and nothing is written for them.
 */
export function createSsoService(deps: { db: Kysely<Database>; clock: Clock; sessions: SessionsService; provider: SsoProvider; policy: SsoPolicy; label: string }) {
  const { db, clock, provider, policy } = deps;

  const domainAllowed = (email: string) => policy.defaultWorkspaceId !== null && policy.allowedDomains.includes(email.slice(email.lastIndexOf('@') + 1));

  /** Gives a person without a workspace one: their open invitations first, else the default workspace by domain. */
  async function admit(userId: string, email: string, now: number, origin: Origin): Promise<void> {
    if ((await listMembershipsOfUser(db, userId)).length > 0) return;
    for (const invitation of await openInvitationsFor(db, email, now)) {
      await db.transaction().execute(async (tx) => {
        if (!(await claimInvitation(tx, invitation.id, userId, now))) return;
        await addMembership(tx, { id: newId('mem_'), workspaceId: invitation.workspaceId, userId, role: invitation.role, brandIds: invitation.brandIds, now });
        const actor: Principal = { kind: 'user', workspaceId: invitation.workspaceId, userId, sessionId: '', keyId: null, role: roleOf(invitation.role), brandIds: null, origin };
        await recordAudit(tx, actor, 'invitation.accepted', { type: 'invitation', id: invitation.id, label: email }, now, { method: 'sso' });
      });
    }
    if ((await listMembershipsOfUser(db, userId)).length > 0 || !domainAllowed(email)) return;
    const workspaceId = policy.defaultWorkspaceId!;
    await db.transaction().execute(async (tx) => {
      if (!(await addMembership(tx, { id: newId('mem_'), workspaceId, userId, role: policy.defaultRole, brandIds: null, now }))) return;
      const actor: Principal = { kind: 'user', workspaceId, userId, sessionId: '', keyId: null, role: roleOf(policy.defaultRole), brandIds: null, origin };
      await recordAudit(tx, actor, 'member.joined', { type: 'user', id: userId, label: email }, now, { method: 'sso', role: policy.defaultRole });
    });
  }

  return {
    /** The provider's name on the sign-in button ("Sign in with …"). */
    label: deps.label,

    /**
     * Starts a sign-in: the provider's address to send the browser to, and the id of the stored request (state,
     * nonce, PKCE verifier, where to go after), which the browser keeps in a cookie until it comes back.
     */
    async begin(next: string): Promise<{ requestId: string; url: string }> {
      const request = await provider.start();
      const now = clock.now();
      const requestId = newId('chl_', 24);
      await insertAuthChallenge(db, {
        id: requestId,
        purpose: 'sso',
        challenge: request.state,
        payload: { nonce: request.nonce, code_verifier: request.codeVerifier, next },
        userId: null,
        sessionId: null,
        createdAt: now,
        expiresAt: now + SSO_REQUEST_TTL_MS,
      });
      return { requestId, url: request.url };
    },

    /**
     * Finishes a sign-in at the callback: consumes the stored request (once), has the provider check the answer,
     * finds or admits the person, opens a session and records `auth.signed_in` (method sso). Refusals are values.
     */
    async complete(
      requestId: string,
      callbackUrl: string,
      origin: Omit<Origin, 'via'>,
    ): Promise<{ ok: true; token: string; next: string } | { ok: false; reason: SsoRefusal; email?: string }> {
      const now = clock.now();
      const stored = await consumeAuthChallenge(db, requestId, 'sso', now);
      if (!stored) return { ok: false, reason: 'expired' };
      const nonce = stored.payload?.nonce ?? '';
      const codeVerifier = stored.payload?.code_verifier ?? '';
      const result = await provider.finish(callbackUrl, { state: stored.challenge, nonce, codeVerifier });
      if (!result.ok) return { ok: false, reason: result.reason };
      const { subject, email: rawEmail, emailVerified } = result.claims;
      const via: Origin = { ...origin, via: 'dashboard' };

      let userId = await findSsoIdentityUser(db, provider.issuer, subject);
      const email = rawEmail === null ? null : normalizeEmail(rawEmail);
      if (userId === undefined) {
        // Matching by email only when the provider says the address is verified: otherwise anyone could claim one.
        if (email === null || !emailVerified) return { ok: false, reason: 'email_unverified' };
        const existing = await findUserByEmail(db, email);
        const invited = (await openInvitationsFor(db, email, now)).length > 0;
        if (!existing && !invited && !domainAllowed(email)) return { ok: false, reason: 'not_allowed', email };
        if (existing) userId = existing.id;
        else {
          const id = newId('usr_');
          try {
            await insertUser(db, { id, email, name: null, passwordHash: null, emailVerifiedAt: now, createdAt: now, updatedAt: now });
            userId = id;
          } catch (err) {
            // The same person's first sign-in in another tab: the unique email index kept one account.
            userId = (await findUserByEmail(db, email))?.id;
            if (userId === undefined) throw err;
          }
        }
        await linkSsoIdentity(db, { issuer: provider.issuer, subject, userId, email, now });
        userId = (await findSsoIdentityUser(db, provider.issuer, subject)) ?? userId;
      } else {
        await touchSsoIdentity(db, provider.issuer, subject, now);
      }
      if (email !== null && emailVerified) await admit(userId, email, now, via);

      const [membership] = await listMembershipsOfUser(db, userId);
      if (!membership) return { ok: false, reason: 'not_allowed', ...(email === null ? {} : { email }) };
      const session = await deps.sessions.openForUser(userId, 'sso', origin, membership.workspaceId);
      const actor: Principal = { kind: 'user', workspaceId: membership.workspaceId, userId, sessionId: session.sessionId, keyId: null, role: roleOf(membership.role), brandIds: membership.brandIds, origin: via };
      await recordAudit(db, actor, 'auth.signed_in', { type: 'user', id: userId, label: email }, now, { method: 'sso', issuer: provider.issuer });
      return { ok: true, token: session.token, next: stored.payload?.next ?? '/dashboard' };
    },
  };
}
