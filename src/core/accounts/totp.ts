import { randomBytes } from 'node:crypto';
import { generate, generateSecret, generateURI, verify } from 'otplib';
import { sha256Hex } from '../ids.js';

/** RFC 6238 defaults every authenticator app reads: SHA-1, 6 digits, 30-second steps. */
const PERIOD_SECONDS = 30;
/** A code of the step before or after now is accepted too (a clock a little off, a code typed as it turned). */
const TOLERANCE_SECONDS = PERIOD_SECONDS;

export const RECOVERY_CODE_COUNT = 10;

/** A new base32 secret (20 random bytes, RFC 4226's recommended length). */
export function newTotpSecret(): string {
  return generateSecret();
}

/** The `otpauth://` address an authenticator app imports (as a QR code or typed). */
export function totpUri(secret: string, issuer: string, label: string): string {
  return generateURI({ issuer, label, secret, period: PERIOD_SECONDS });
}

/** The code of `atMs` (tests and the browser test type what an app would show). */
export function totpCode(secret: string, atMs: number): Promise<string> {
  return generate({ secret, epoch: Math.floor(atMs / 1000), period: PERIOD_SECONDS });
}

/**
 * Checks a 6-digit code at `nowMs` (the injected clock). Returns the time step it belongs to, or null. A step at or
 * before `afterStep` is refused: a code already accepted cannot be replayed.
 */
export async function checkTotp(secret: string, code: string, nowMs: number, afterStep: number | null): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(nowMs / 1000),
    period: PERIOD_SECONDS,
    epochTolerance: TOLERANCE_SECONDS,
    ...(afterStep === null ? {} : { afterTimeStep: afterStep }),
  }).catch(() => ({ valid: false as const }));
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten recovery codes (`xxxxx-xxxxx`, about 49 bits each), shown once; only their digests are kept. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(10);
    const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]!).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** The digest of a recovery code as typed: case, spaces and dashes do not matter. */
export function recoveryCodeDigest(typed: string): string {
  return sha256Hex(`recovery:${typed.toLowerCase().replace(/[\s-]/g, '')}`);
}

/** Whether typed text has the shape of a recovery code (so it is not mistaken for a 6-digit code). */
export function looksLikeRecoveryCode(typed: string): boolean {
  return /^[a-z0-9]{10}$/.test(typed.toLowerCase().replace(/[\s-]/g, ''));
}
