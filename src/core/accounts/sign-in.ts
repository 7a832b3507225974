import type { Kysely } from 'kysely';
import { findTotp } from '../../../db/repositories/accounts.repo.js';
import { listMembershipsOfUser } from '../../../db/repositories/memberships.repo.js';
import { findUser, findUserByEmail, normalizeEmail } from '../../../db/repositories/users.repo.js';
import type { Database } from '../../../db/schema.js';
import { roleOf } from '../api-keys/api-keys.service.js';
import { recordAudit } from '../audit/record.js';
import type { Clock } from '../clock.js';
import { constantTimeEqual } from '../ids.js';
import type { Origin, Principal } from '../principal.js';
import { deriveKey, sign } from '../secret-box.js';
import type { AuthMethod, SessionsService } from '../sessions/sessions.service.js';
import { decoyHash, verifyPassword } from './password.js';
import { useSecondFactor } from './two-factor.js';

/**
 * Counts failed sign-ins per key (an account's email, a client address) over a window. The container backs it
 * with rate-limiter-flexible on the service's rate store, so processes sharing a database share the count.
 */
export interface FailureThrottle {
  /** Milliseconds until `key` may try again; 0 when it may now. */
  blockedFor(key: string): Promise<number>;
  fail(key: string): Promise<void>;
  clear(key: string): Promise<void>;
}

/** What a sign-in attempt came to (values, not exceptions: each is an expected answer). */
export type SignInOutcome =
  | { kind: 'signed_in'; token: string; userId: string }
  | { kind: 'second_factor'; pending: string }
  /** Wrong password and unknown email alike: the door says the same words for both. */
  | { kind: 'refused' }
  | { kind: 'throttled'; retryAfterMs: number };

/** How long the step between the password and the code may take. */
const PENDING_MS = 5 * 60_000;

export interface SignInDeps {
  db: Kysely<Database>;
  clock: Clock;
  secretKey: Buffer;
  sessions: SessionsService;
  perAccount: FailureThrottle;
  perAddress: FailureThrottle;
}

export type PasswordSignIn = ReturnType<typeof createPasswordSignIn>;

/**
 * Sign-in by email and password, then by a second factor when the person has one. Unknown emails take the same
 * path as wrong passwords (a hash is verified against `decoyHash()`), are throttled under the same key and get
 * the same outcome, so neither words nor timing tell which emails have accounts.
 */
export function createPasswordSignIn(deps: SignInDeps) {
  const { db, clock } = deps;
  const pendingKey = deriveKey(deps.secretKey, 'sign-in-second-factor');

  /** `userId.expiresAt.mac`: proves the password step passed, for a few minutes, and nothing more. */
  function pendingToken(userId: string): string {
    const body = `${userId}.${clock.now() + PENDING_MS}`;
    return `${body}.${sign(pendingKey, body)}`;
  }

  function readPending(token: string): string | null {
    const [userId, expires, mac] = token.split('.');
    if (!userId || !expires || !mac || !constantTimeEqual(mac, sign(pendingKey, `${userId}.${expires}`))) return null;
    return Number(expires) > clock.now() ? userId : null;
  }

  async function throttled(accountKey: string, address: string): Promise<number> {
    const [a, b] = await Promise.all([deps.perAccount.blockedFor(accountKey), deps.perAddress.blockedFor(address)]);
    return Math.max(a, b);
  }

  /** Failures are audited best effort, outside any transaction: a failed write must not change the answer. */
  async function auditPerson(userId: string, action: string, origin: Origin, details: Record<string, unknown> | null, sessionId = ''): Promise<void> {
    const now = clock.now();
    for (const m of await listMembershipsOfUser(db, userId)) {
      const actor: Principal = { kind: 'user', workspaceId: m.workspaceId, userId, sessionId, keyId: null, role: roleOf(m.role), brandIds: m.brandIds, origin };
      await recordAudit(db, actor, action, { type: 'user', id: userId }, now, details);
    }
  }

  async function failed(accountKey: string, address: string, userId: string | null, origin: Origin, step: string): Promise<SignInOutcome> {
    await Promise.all([deps.perAccount.fail(accountKey), deps.perAddress.fail(address)]);
    if (userId !== null) await auditPerson(userId, 'auth.sign_in_failed', origin, { step }).catch(() => undefined);
    return { kind: 'refused' };
  }

  async function open(userId: string, accountKey: string, method: AuthMethod, origin: Origin): Promise<SignInOutcome> {
    await deps.perAccount.clear(accountKey);
    const { token, sessionId } = await deps.sessions.openForUser(userId, method, origin);
    await auditPerson(userId, 'auth.signed_in', origin, { method }, sessionId);
    return { kind: 'signed_in', token, userId };
  }

  return {
    /** The password step. Throttled per account (its email, known or not) and per client address. */
    async withPassword(email: string, password: string, origin: Origin): Promise<SignInOutcome> {
      const accountKey = normalizeEmail(email);
      const address = origin.ip ?? 'unknown';
      const wait = await throttled(accountKey, address);
      if (wait > 0) return { kind: 'throttled', retryAfterMs: wait };
      const user = await findUserByEmail(db, accountKey);
      const matches = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
      if (!user || user.passwordHash === null || !matches) return failed(accountKey, address, user?.id ?? null, origin, 'password');
      const totp = await findTotp(db, user.id);
      if (totp?.confirmedAt != null) return { kind: 'second_factor', pending: pendingToken(user.id) };
      return open(user.id, accountKey, 'password', origin);
    },

    /** Whether a pending token is still good (the code page shows itself only then). */
    pendingValid: (pending: string): boolean => readPending(pending) !== null,

    /** The code step: a TOTP code (never one already used) or an unused recovery code. */
    async withSecondFactor(pending: string, code: string, origin: Origin): Promise<SignInOutcome | { kind: 'expired' }> {
      const userId = readPending(pending);
      const user = userId === null ? undefined : await findUser(db, userId);
      if (!user) return { kind: 'expired' };
      const address = origin.ip ?? 'unknown';
      const wait = await throttled(user.email, address);
      if (wait > 0) return { kind: 'throttled', retryAfterMs: wait };
      const used = await useSecondFactor(db, deps.secretKey, user.id, code, clock.now());
      if (used === null) return failed(user.email, address, user.id, origin, 'second_factor');
      return open(user.id, user.email, used, origin);
    },
  };
}
