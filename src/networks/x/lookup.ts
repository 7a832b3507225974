import type { NetworkFailure } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { isRecord, list, obj, str } from '../kit/json.js';
import { api, type Ctx } from './api.js';

/**
 * Finding a post whose POST /2/tweets answer was lost. X has no idempotency key, so the account's own timeline
 * (GET /2/users/{id}/tweets, docs.x.com "Get Posts") is read from just before the attempt, and the post is
 * recognised by its text, the post it replies to and its media.
 */

/** Tolerated skew between our clock and X's, when asking for posts created since an attempt. */
const CLOCK_SLACK_MS = 10 * 60_000;
/** Posts read per lookup (5–100). Pay-per-use bills reads per post, so only a page of the newest. */
const LOOKUP_PAGE = 20;

/**
 * A lookup refused for good (a token without tweet.read, a suspended account) cannot tell whether the lost
 * attempt posted. Failing with the refusal's own code would invite a reconnect and a retry, and a retry starts the
 * job afresh, without the attempt's record: a second post. So it stops as "may be live", as the other networks do.
 */
const LOOKUP_INCONCLUSIVE = failure(
  'upstream_unknown',
  false,
  'An interrupted attempt may have posted on X and it could not be checked, so nothing was posted again. Check the profile before republishing.',
);

export type Lookup = { state: 'found'; id: string } | { state: 'absent' } | { state: 'failed'; failure: NetworkFailure };

/** What identifies the post: its text, the post it replies to (null for the first), its media ids. */
export interface Wanted {
  text: string;
  replyTo: string | null;
  mediaIds: string[];
}

const decode = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
/**
 * Text as compared: X returns `&`, `<`, `>` HTML-escaped, replaces links with t.co addresses and appends one for
 * attached media, so links are dropped on both sides and white space is collapsed.
 */
export const comparable = (s: string): string => decode(s).replace(/\bhttps?:\/\/\S+/gi, ' ').replace(/\s+/g, ' ').trim();

/** `start_time` as the API takes it: YYYY-MM-DDTHH:mm:ssZ. */
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function matches(post: Record<string, unknown>, wanted: Wanted): boolean {
  if (comparable(str(post.text) ?? '') !== comparable(wanted.text)) return false;
  const repliedTo = list(post.referenced_tweets).map(obj).find((r) => r.type === 'replied_to');
  if ((repliedTo ? str(repliedTo.id) : null) !== wanted.replyTo) return false;
  // Media keys are `<type>_<media id>` (e.g. `3_1880…` for a photo, `7_1880…` for a video).
  const keys = list(obj(post.attachments).media_keys).map((k) => String(k).split('_').pop() ?? '');
  return keys.length === wanted.mediaIds.length && wanted.mediaIds.every((id) => keys.includes(id));
}

/** The account's post matching `wanted`, created since `since` (minus clock slack); newest first. */
export async function findEarlierPost(ctx: Ctx, wanted: Wanted, since: number): Promise<Lookup> {
  const query = new URLSearchParams({
    start_time: isoSeconds(since - CLOCK_SLACK_MS),
    max_results: String(LOOKUP_PAGE),
    'tweet.fields': 'created_at,referenced_tweets,attachments',
  });
  const res = await api(ctx, 'GET', `/2/users/${encodeURIComponent(ctx.userId)}/tweets?${query.toString()}`);
  if (!res.ok) return { state: 'failed', failure: res.failure.retryable ? res.failure : LOOKUP_INCONCLUSIVE };
  const found = list(res.body.data).filter(isRecord).find((p) => str(p.id) !== null && matches(p, wanted));
  const id = found ? str(found.id) : null;
  return id ? { state: 'found', id } : { state: 'absent' };
}
