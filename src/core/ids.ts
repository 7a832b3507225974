import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Identifiers and secrets. Ids are a prefix plus random base32-ish text, so they sort nowhere and reveal
 * nothing, except those of contents, their jobs, webhook deliveries and their attempts, which lead with their
 * creation time (it is in every answer about them anyway) so that rows written together are stored together and
 * an insert writes the last page of the id index rather than a random one; secrets are a prefix plus hex from
 * `crypto.randomBytes`.
 */

const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Random bytes for 200 ids at a time: one call into the system's generator per 200 ids (a request id, an event, a job's rows), not one each. */
const POOL_BYTES = 4_000;
let pool = Buffer.alloc(0);
let offset = 0;

/** `n` bytes from the system's generator, each handed out once. */
function randomPart(n: number): Buffer {
  if (offset + n > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, n));
    offset = 0;
  }
  offset += n;
  return pool.subarray(offset - n, offset);
}

/** A random identifier such as `ws_4k8x…` (`prefix` includes the underscore). */
export function newId(prefix: string, length = 20): string {
  const bytes = randomPart(length);
  let out = prefix;
  for (const b of bytes) out += ID_ALPHABET[b & 31];
  return out;
}

/**
 * An id like `newId`'s (the prefix, then 20 characters of the same alphabet) whose first 10 characters are the
 * millisecond `nowMs`, so ids made together sort together (50 random bits follow). Rows created in one batch then
 * share the pages of the indexes keyed by them instead of touching one page each.
 */
export function newTimeOrderedId(prefix: string, nowMs: number): string {
  let time = '';
  for (let rest = Math.floor(nowMs), i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = ID_ALPHABET[rest % 32]! + time;
  return newId(prefix + time, 10);
}

/**
 * The id that sorts right after `previous` (one of `newTimeOrderedId`'s): its last character counted up by one,
 * carrying leftwards through the random part only. Null when that part is all at its top, which never happens in
 * practice; the caller then takes a fresh id.
 */
export function followingTimeOrderedId(previous: string, prefix: string): string | null {
  const chars = [...previous];
  for (let i = chars.length - 1; i >= prefix.length + 10; i--) {
    const at = ID_ALPHABET.indexOf(chars[i]!);
    if (at < ID_ALPHABET.length - 1) {
      chars[i] = ID_ALPHABET[at + 1]!;
      return chars.join('');
    }
    chars[i] = ID_ALPHABET[0]!;
  }
  return null;
}

/**
 * A version 7 UUID (RFC 9562): the millisecond `nowMs` in the first 48 bits, then 74 random bits. It sorts by
 * creation time, for the same reason as `newTimeOrderedId`.
 */
export function newTimeOrderedUuid(nowMs: number): string {
  const b = Buffer.from(randomPart(16));
  b.writeUIntBE(Math.floor(nowMs), 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
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
