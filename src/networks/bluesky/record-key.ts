import { createHash } from 'node:crypto';

/**
 * Record keys that make a post impossible to create twice. A repository holds one record per key, so a post
 * whose key is fixed in advance cannot be made a second time by a repeated createRecord (the data server refuses
 * the key; the reference PDS answers 500 because its MST refuses a second value at a key). The key is a valid TID
 * (atproto.com/specs/tid; app.bsky.feed.post's lexicon asks for `"key": "tid"`) computed from the job id and the
 * post's index, so any run of the job, however many times taken over, names the same records.
 *
 * A TID is 64 bits: a zero bit, 53 bits of microseconds since the epoch, a 10-bit clock id; written as 13
 * characters of base32-sortable. The spec says the time is the record's creation time; ours is the job's creation
 * time (job ids lead with it, see src/core/ids.ts newTimeOrderedId), plus a sub-millisecond offset from the job
 * id's hash and the post's index, so a chain's posts sort in order. An id that does not carry a time (tests) gets a
 * moment of 2023 from its hash: always in the past, never in the future.
 */

const TID_ALPHABET = '234567abcdefghijklmnopqrstuvwxyz';
/** The alphabet of our ids (src/core/ids.ts), whose first 10 characters after `job_` are the creation millisecond. */
const JOB_ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const EARLIEST_MS = Date.UTC(2023, 0, 1);
const LATEST_MS = Date.UTC(2100, 0, 1);
const YEAR_MS = 365 * 86_400_000;

/** The TID syntax (packages/syntax/src/tid.ts): 13 characters, the first one keeping the top bit zero. */
export const TID_PATTERN = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;

/** The creation millisecond a job id leads with, when it plausibly does. */
function jobCreatedAt(jobId: string): number | null {
  const time = /^job_([0-9a-hjkmnp-tv-z]{10})/.exec(jobId)?.[1];
  if (!time) return null;
  let ms = 0;
  for (const c of time) ms = ms * 32 + JOB_ID_ALPHABET.indexOf(c);
  return ms >= EARLIEST_MS && ms < LATEST_MS ? ms : null;
}

function encodeTid(value: bigint): string {
  let out = '';
  for (let i = 0, rest = value; i < 13; i++, rest >>= 5n) out = TID_ALPHABET[Number(rest & 31n)]! + out;
  return out;
}

/** The record key of post `index` (0-based) of job `jobId`: the same on every run. */
export function recordKey(jobId: string, index: number): string {
  const hash = createHash('sha256').update(`bluesky-post:${jobId}`).digest();
  const ms = jobCreatedAt(jobId) ?? EARLIEST_MS + (hash.readUIntBE(0, 6) % YEAR_MS);
  // 0..949 µs, then one µs per post: a chain of up to 50 posts stays within the job's millisecond.
  const micros = BigInt(ms) * 1000n + BigInt((hash.readUInt16BE(6) % 950) + index);
  const clockId = BigInt(hash.readUInt16BE(8) & 0x3ff);
  return encodeTid((micros << 10n) | clockId);
}
