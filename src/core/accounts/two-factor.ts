import type { Kysely } from 'kysely';
import {
  acceptTotpStep,
  countUnusedRecoveryCodes,
  deleteTotp,
  findTotp,
  putPendingTotp,
  replaceRecoveryCodes,
  useRecoveryCode,
} from '../../../db/repositories/accounts.repo.js';
import { findUser } from '../../../db/repositories/users.repo.js';
import type { Database } from '../../../db/schema.js';
import type { Clock } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import { deriveKey, open, seal } from '../secret-box.js';
import { verifyPassword } from './password.js';
import { checkTotp, looksLikeRecoveryCode, newRecoveryCodes, newTotpSecret, recoveryCodeDigest, totpUri } from './totp.js';

/** The key TOTP secrets are sealed with: derived from SECRET_KEY for this purpose alone. */
const totpKey = (secretKey: Buffer) => deriveKey(secretKey, 'totp-secret');

/**
 * Uses a second factor of a person whose TOTP is on: a 6-digit code of a step later than the last accepted one
 * (recorded by a conditional update, so the same code sent twice at once passes once), or an unused recovery
 * code (marked used the same way). Returns how the person proved it, or null.
 */
export async function useSecondFactor(db: Kysely<Database>, secretKey: Buffer, userId: string, code: string, now: number): Promise<'password+totp' | 'recovery_code' | null> {
  const totp = await findTotp(db, userId);
  if (!totp || totp.confirmedAt === null) return null;
  const typed = code.trim();
  if (/^\d{6}$/.test(typed)) {
    const step = await checkTotp(open(totpKey(secretKey), totp.secretSealed), typed, now, totp.lastStep);
    return step !== null && (await acceptTotpStep(db, userId, step, now, false)) ? 'password+totp' : null;
  }
  if (looksLikeRecoveryCode(typed) && (await useRecoveryCode(db, userId, recoveryCodeDigest(typed), now))) return 'recovery_code';
  return null;
}

export interface TwoFactorStatus {
  enabled: boolean;
  /** An enrolment started and not yet confirmed. */
  pending: boolean;
  recoveryCodesLeft: number;
}

export type TwoFactor = ReturnType<typeof createTwoFactor>;

/** Enrolling, confirming and turning off a person's TOTP factor, and their recovery codes. */
export function createTwoFactor(deps: { db: Kysely<Database>; clock: Clock; secretKey: Buffer; issuer: string }) {
  const { db, clock, secretKey } = deps;

  async function issueRecoveryCodes(tx: Kysely<Database>, userId: string): Promise<string[]> {
    const codes = newRecoveryCodes();
    await replaceRecoveryCodes(tx, userId, codes.map((c) => ({ id: newId('rec_'), digest: recoveryCodeDigest(c) })), clock.now());
    return codes;
  }

  return {
    async status(userId: string): Promise<TwoFactorStatus> {
      const totp = await findTotp(db, userId);
      const enabled = totp?.confirmedAt != null;
      return { enabled, pending: totp !== undefined && !enabled, recoveryCodesLeft: enabled ? await countUnusedRecoveryCodes(db, userId) : 0 };
    },

    /**
     * Starts an enrolment: a new secret, sealed and kept unconfirmed until a code from the app proves it was
     * copied. The secret and its `otpauth://` address are returned once.
     * @throws ServiceError `validation_failed` when TOTP is already on.
     */
    async start(userId: string, label: string): Promise<{ secret: string; uri: string }> {
      const secret = newTotpSecret();
      if (!(await putPendingTotp(db, userId, seal(totpKey(secretKey), secret), clock.now()))) {
        throw new ServiceError('validation_failed', 'Two-step sign-in is already on. Turn it off first to enrol another app.', { fields: [{ path: 'code', message: 'already enrolled' }] });
      }
      return { secret, uri: totpUri(secret, deps.issuer, label) };
    },

    /**
     * Confirms an enrolment with a code of the app, turns the factor on and returns ten recovery codes, shown once.
     * @throws ServiceError `validation_failed` (field `code`) when the code does not match or nothing is pending.
     */
    async confirm(userId: string, code: string): Promise<string[]> {
      const totp = await findTotp(db, userId);
      const wrong = new ServiceError('validation_failed', 'That code does not match. Type the 6 digits the app shows now.', { fields: [{ path: 'code', message: 'does not match' }] });
      if (!totp || totp.confirmedAt !== null) throw wrong;
      const step = await checkTotp(open(totpKey(secretKey), totp.secretSealed), code.trim(), clock.now(), totp.lastStep);
      if (step === null) throw wrong;
      return db.transaction().execute(async (tx) => {
        if (!(await acceptTotpStep(tx, userId, step, clock.now(), true))) throw wrong;
        return issueRecoveryCodes(tx, userId);
      });
    },

    /**
     * Turns the factor off, proved by the password, a current code or a recovery code; the recovery codes go with it.
     * @throws ServiceError `validation_failed` (field `proof`) when neither matches.
     */
    async disable(userId: string, proof: string): Promise<void> {
      const user = await findUser(db, userId);
      const byPassword = user?.passwordHash != null && proof.length <= 1024 && (await verifyPassword(proof, user.passwordHash));
      const byCode = !byPassword && (await useSecondFactor(db, secretKey, userId, proof, clock.now())) !== null;
      if (!byPassword && !byCode) throw new ServiceError('validation_failed', 'Enter your password or a current code of your app to turn two-step sign-in off.', { fields: [{ path: 'proof', message: 'does not match' }] });
      await deleteTotp(db, userId);
    },

    /**
     * Replaces the recovery codes with ten new ones (the old ones stop working), shown once.
     * @throws ServiceError `validation_failed` when TOTP is off.
     */
    async regenerateRecoveryCodes(userId: string): Promise<string[]> {
      const totp = await findTotp(db, userId);
      if (totp?.confirmedAt == null) throw new ServiceError('validation_failed', 'Recovery codes exist only while two-step sign-in is on.', { fields: [{ path: 'code', message: 'two-step sign-in is off' }] });
      return db.transaction().execute((tx) => issueRecoveryCodes(tx, userId));
    },
  };
}
