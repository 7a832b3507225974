import type { Kysely } from 'kysely';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import {
  deleteUserRow,
  expirePasswordResets,
  findUsablePasswordReset,
  insertPasswordReset,
  usePasswordReset,
  workspacesWhereOnlyOwner,
} from '../../../db/repositories/accounts.repo.js';
import { findMembership, insertMembership, listMembershipsOfUser } from '../../../db/repositories/memberships.repo.js';
import { findUser, findUserByEmail, insertUser, normalizeEmail, setUserPassword } from '../../../db/repositories/users.repo.js';
import { lockWorkspace } from '../../../db/repositories/workspaces.repo.js';
import type { Database } from '../../../db/schema.js';
import { roleOf } from '../api-keys/api-keys.service.js';
import { recordAudit } from '../audit/record.js';
import type { Clock } from '../clock.js';
import { ServiceError, validationError } from '../errors.js';
import { newId, sha256Hex } from '../ids.js';
import type { Mailer } from '../mail/mailer.js';
import type { Origin, Principal } from '../principal.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import { createUserInputSchema, newPasswordSchema } from './accounts.schema.js';
import { hashPassword, verifyPassword } from './password.js';
import { createPasswordSignIn, type FailureThrottle } from './sign-in.js';
import { createTwoFactor } from './two-factor.js';

/** A reset (or first-password) link works for an hour, once. */
export const RESET_LINK_MS = 60 * 60_000;

type PersonPrincipal = Extract<Principal, { kind: 'user' }>;

export interface AccountSummary {
  userId: string;
  email: string;
  workspaces: { id: string; name: string; role: string }[];
}

export type AccountsService = ReturnType<typeof createAccountsService>;

/**
 * A person's account: sign-in (password, then TOTP or a recovery code), their second factor, password changes
 * and resets, deletion, and the operator's `user create`. Sessions stay the sessions service's.
 */
export function createAccountsService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  secretKey: Buffer;
  sessions: SessionsService;
  mailer: Mailer | null;
  /** Told when the mail server refuses or fails a message (the person is answered as if it went). */
  onMailFailure?: (err: unknown, what: string) => void;
  baseUrl: string;
  perAccount: FailureThrottle;
  perAddress: FailureThrottle;
}) {
  const { db, clock } = deps;
  const resetLink = (token: string) => `${deps.baseUrl}/dashboard/reset-password/${token}`;

  function checkNewPassword(password: string, field = 'new_password'): string {
    // Parsed under the form's field name, so the error names the field the person typed into.
    const parsed = z.object({ [field]: newPasswordSchema }).safeParse({ [field]: password });
    if (!parsed.success) throw validationError(parsed.error);
    return password;
  }

  /** The same entry in every workspace the person belongs to (an account change concerns each of them). */
  async function auditEverywhere(tx: Kysely<Database>, actor: PersonPrincipal | { userId: string; system: true }, action: string, details: Record<string, unknown> | null, email: string): Promise<void> {
    const now = clock.now();
    for (const m of await listMembershipsOfUser(tx, actor.userId)) {
      const who =
        'system' in actor
          ? { kind: 'system' as const, workspaceId: m.workspaceId, label: 'operator', via: 'cli' as const }
          : { ...actor, workspaceId: m.workspaceId, role: roleOf(m.role), brandIds: m.brandIds };
      await recordAudit(tx, who, action, { type: 'user', id: actor.userId, label: email }, now, details);
    }
  }

  /** A new one-time link for a person; earlier unused ones keep working until used or expired. */
  async function issueReset(tx: Kysely<Database>, userId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = clock.now();
    await insertPasswordReset(tx, { id: newId('pwr_'), userId, tokenDigest: sha256Hex(token), createdAt: now, expiresAt: now + RESET_LINK_MS });
    return resetLink(token);
  }

  return {
    signIn: createPasswordSignIn(deps),
    /** Whether resets can be mailed (else the "forgot password" page points to an operator). */
    mailConfigured: deps.mailer !== null,
    twoFactor: createTwoFactor({ ...deps, issuer: 'Publisher' }),

    /** Who is signed in and where they belong, for the header and the switcher. */
    async summary(userId: string): Promise<AccountSummary | null> {
      const user = await findUser(db, userId);
      if (!user) return null;
      const memberships = await listMembershipsOfUser(db, userId);
      return { userId, email: user.email, workspaces: memberships.map((m) => ({ id: m.workspaceId, name: m.workspaceName, role: m.role })) };
    },

    /**
     * Changes the password after checking the current one; every other session of the person ends.
     * @throws ServiceError `validation_failed` naming `current_password` or `new_password`.
     */
    async changePassword(principal: PersonPrincipal, current: string, next: string): Promise<{ endedSessions: number }> {
      const user = await findUser(db, principal.userId);
      if (!user) throw new ServiceError('not_found', 'This account no longer exists.');
      const fresh = checkNewPassword(next);
      if (user.passwordHash === null || current.length > 1024 || !(await verifyPassword(current, user.passwordHash))) {
        throw new ServiceError('validation_failed', 'The current password is not right.', { fields: [{ path: 'current_password', message: 'does not match' }] });
      }
      const hash = await hashPassword(fresh);
      await db.transaction().execute(async (tx) => {
        await setUserPassword(tx, user.id, hash, clock.now());
        await expirePasswordResets(tx, user.id, clock.now());
        await auditEverywhere(tx, principal, 'user.password_changed', null, user.email);
      });
      return { endedSessions: await deps.sessions.endAllForUser(user.id, principal.sessionId) };
    },

    /**
     * "Forgot password": with mail configured, mails a one-time link when the email has an account and says the
     * same either way, even when the mail server fails. Without mail, nothing is sent and the page tells the person to ask an operator.
     */
    async requestReset(email: string): Promise<{ mailed: boolean }> {
      if (deps.mailer === null) return { mailed: false };
      const user = await findUserByEmail(db, email);
      if (user) {
        const link = await db.transaction().execute((tx) => issueReset(tx, user.id));
        try {
          await deps.mailer.send({
            to: user.email,
            subject: 'Set a new password',
            text: `Someone asked to set a new password for ${user.email}. If it was you, open this link within an hour:\n\n${link}\n\nIf not, ignore this message: your password stays as it is.`,
          });
        } catch (err) {
          // The answer must not differ from an unknown address's, or a failing mail server would reveal which
          // addresses have accounts; the operator learns of it from the log.
          deps.onMailFailure?.(err, 'password reset');
        }
      }
      return { mailed: true };
    },

    /**
     * The operator's reset (`cli user reset-password`): a one-time link for the person, audited in each of their
     * workspaces. @throws ServiceError `not_found` for an email with no account.
     */
    async resetLinkFor(email: string): Promise<{ link: string; userId: string }> {
      const user = await findUserByEmail(db, email);
      if (!user) throw new ServiceError('not_found', `No account has the email ${normalizeEmail(email)}.`);
      const link = await db.transaction().execute(async (tx) => {
        await auditEverywhere(tx, { userId: user.id, system: true }, 'user.password_reset_issued', null, user.email);
        return issueReset(tx, user.id);
      });
      return { link, userId: user.id };
    },

    /** Whether a reset link can still be used (the page asks before showing its form). */
    async resetUsable(token: string): Promise<boolean> {
      return token.length <= 100 && (await findUsablePasswordReset(db, sha256Hex(token), clock.now())) !== undefined;
    },

    /**
     * Sets a password through a one-time link: the link is used once (a conditional update, so two tabs sending
     * it at once set one password), every session of the person ends, and the other links stop working.
     * @throws ServiceError `not_found` when the link is unknown, used or expired; `validation_failed` for the password.
     */
    async resetPassword(token: string, password: string, origin: Origin): Promise<void> {
      const gone = new ServiceError('not_found', 'This link was already used or has expired. Ask for a new one.');
      const fresh = checkNewPassword(password, 'password');
      const reset = token.length <= 100 ? await findUsablePasswordReset(db, sha256Hex(token), clock.now()) : undefined;
      if (!reset) throw gone;
      const hash = await hashPassword(fresh);
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        if (!(await usePasswordReset(tx, reset.id, now))) throw gone;
        const user = await findUser(tx, reset.userId);
        if (!user) throw gone;
        await setUserPassword(tx, user.id, hash, now);
        await expirePasswordResets(tx, user.id, now);
        await auditEverywhere(tx, { kind: 'user', workspaceId: '', userId: user.id, sessionId: '', keyId: null, role: 'viewer', brandIds: null, origin }, 'user.password_reset', null, user.email);
      });
      await deps.sessions.endAllForUser(reset.userId);
    },

    /**
     * The operator's `cli user create`: a person (or an existing one) joins a workspace with a role, and gets a
     * one-time link to set their password. The workspace is locked, so the membership is made once.
     * @throws ServiceError `validation_failed`, `not_found` (workspace), `forbidden` (already a member).
     */
    async createUser(input: unknown): Promise<{ userId: string; link: string; created: boolean }> {
      const parsed = createUserInputSchema.safeParse(input);
      if (!parsed.success) throw validationError(parsed.error);
      const { email, workspace_id: workspaceId, role } = parsed.data;
      return db.transaction().execute(async (tx) => {
        const now = clock.now();
        if (!(await lockWorkspace(tx, workspaceId))) throw new ServiceError('not_found', `No workspace ${workspaceId}. See: npm run cli -- workspace list`);
        let user = await findUserByEmail(tx, email);
        const created = user === undefined;
        if (!user) {
          user = { id: newId('usr_'), email: normalizeEmail(email), name: null, passwordHash: null, emailVerifiedAt: null, createdAt: now, updatedAt: now };
          await insertUser(tx, user);
        } else if (await findMembership(tx, workspaceId, user.id)) {
          throw new ServiceError('forbidden', `${user.email} is already a member of ${workspaceId}.`);
        }
        await insertMembership(tx, { id: newId('mem_'), workspaceId, userId: user.id, role, brandIds: null, createdAt: now, updatedAt: now });
        const actor = { kind: 'system' as const, workspaceId, label: 'operator', via: 'cli' as const };
        if (created) await recordAudit(tx, actor, 'user.created', { type: 'user', id: user.id, label: user.email }, now);
        await recordAudit(tx, actor, 'member.added', { type: 'user', id: user.id, label: user.email }, now, { role });
        return { userId: user.id, link: await issueReset(tx, user.id), created };
      });
    },

    /**
     * Deletes the signed-in person's account after checking their password: memberships and sessions go with it,
     * and each workspace they left records `user.deleted`. Refused while they are the only owner of a workspace:
     * those workspaces are locked first, so two owners leaving at once cannot both succeed.
     * @throws ServiceError `forbidden` naming the workspaces; `validation_failed` (`password`).
     */
    async deleteAccount(principal: PersonPrincipal, password: string): Promise<void> {
      const user = await findUser(db, principal.userId);
      if (!user) throw new ServiceError('not_found', 'This account no longer exists.');
      if (user.passwordHash !== null && (password.length > 1024 || !(await verifyPassword(password, user.passwordHash)))) {
        throw new ServiceError('validation_failed', 'The password is not right.', { fields: [{ path: 'password', message: 'does not match' }] });
      }
      await db.transaction().execute(async (tx) => {
        const memberships = await listMembershipsOfUser(tx, user.id);
        for (const id of memberships.filter((m) => m.role === 'owner').map((m) => m.workspaceId).sort()) await lockWorkspace(tx, id);
        const alone = await workspacesWhereOnlyOwner(tx, user.id);
        if (alone.length > 0) {
          const names = alone.map((w) => `${w.name} (${w.id})`).join(', ');
          throw new ServiceError('forbidden', `You are the last owner of ${names}. Make another member an owner there first, then delete your account.`);
        }
        await auditEverywhere(tx, principal, 'user.deleted', null, user.email);
        await deleteUserRow(tx, user.id);
      });
    },
  };
}
