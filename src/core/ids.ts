import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Identifiers and secrets. Ids are a prefix plus random base32-ish text, so they sort nowhere and reveal
 * nothing; secrets are a prefix plus hex from `crypto.randomBytes`.
 */

const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** A random identifier such as `ws_4k8x…` (`prefix` includes the underscore). */
export function newId(prefix: string, length = 20): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const b of bytes) out += ID_ALPHABET[b & 31];
  return out;
}

/** `svc_live_` + 32 lowercase hex characters (spec 2.1). */
export const API_KEY_PATTERN = /^svc_live_[0-9a-f]{32}$/;

export function newApiKey(): string {
  return `svc_live_${randomBytes(16).toString('hex')}`;
}

/** A prefixed secret of `bytes` random bytes rendered as hex (e.g. `whsec_…`, `mcp_csec_…`). */
export function newSecret(prefix: string, bytes = 24): string {
  return `${prefix}${randomBytes(bytes).toString('hex')}`;
}

/** Hex SHA-256; what we store instead of API keys and client secrets. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Compares two strings without leaking, through timing, where they first differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    // Still do the work so a length mismatch takes as long as a content mismatch.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}
