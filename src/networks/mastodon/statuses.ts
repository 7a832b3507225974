import { createHash } from 'node:crypto';
import type { NetworkFailure } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { list, obj, str } from '../kit/json.js';
import { call, type Reply } from './api.js';
import type { Ctx } from './context.js';

/**
 * Posting one status and finding it again. Statuses are created with an Idempotency-Key (docs: methods/statuses
 * "Idempotency-Key … stored for up to 1 hour"): the server answers a repeated key with the status it already
 * made, which is what makes a repeated POST safe. After that hour only a lookup can tell.
 */

/** Trust a repeated key for this long after the first attempt; the server keeps keys for 3,600 s. */
export const IDEMPOTENCY_TRUST_MS = 50 * 60_000;
/** Tolerated skew between our clock and the server's `created_at` when matching an earlier attempt's status. */
const CLOCK_SLACK_MS = 10 * 60_000;
/** `GET /api/v1/accounts/:id/statuses` returns at most 40. */
const PAGE = 40;
/** Sources read per lookup; candidates are already narrowed by time, reply target and media. */
const MAX_SOURCES = 5;

/** The key of post `k` of job `jobId`: the same on every attempt, different for every post (docs suggest a hash). */
export function idempotencyKey(jobId: string, k: number): string {
  return createHash('sha256').update(`mastodon-status:${jobId}:${k}`).digest('base64url');
}

export interface StatusDraft {
  text: string;
  mediaIds: string[];
  replyTo: string | null;
}

/** `POST /api/v1/statuses` (form data: `status`, `media_ids[]`, `in_reply_to_id`, `visibility`). */
export function postStatus(ctx: Ctx, draft: StatusDraft, key: string): Promise<Reply> {
  const form = new URLSearchParams();
  if (draft.text !== '') form.set('status', draft.text);
  for (const id of draft.mediaIds) form.append('media_ids[]', id);
  if (draft.replyTo) form.set('in_reply_to_id', draft.replyTo);
  form.set('visibility', 'public');
  return call(ctx.deps, { origin: ctx.origin, method: 'POST', path: '/api/v1/statuses', token: ctx.token, body: form, headers: { 'Idempotency-Key': key } });
}

/** A status's public page (`url`; `uri` for servers that leave it null), or null. */
export const statusUrl = (status: unknown): string | null => str(obj(status).url) ?? str(obj(status).uri);

export type Lookup = { state: 'found'; id: string; url: string | null } | { state: 'absent' } | { state: 'failed'; failure: NetworkFailure };

const LOOKUP_INCONCLUSIVE = failure(
  'upstream_unknown',
  false,
  'An interrupted attempt may have posted on Mastodon and it could not be checked, so nothing was posted again. Check the profile before republishing.',
);

const normalize = (text: string) => text.replace(/\r\n?/g, '\n').trim();

function sameMedia(status: Record<string, unknown>, ids: string[]): boolean {
  const attached = list(status.media_attachments).map((m) => str(obj(m).id));
  return attached.length === ids.length && ids.every((id) => attached.includes(id));
}

/**
 * After an unanswered POST whose key the server may have forgotten: is the status there? The account's latest
 * statuses are narrowed to those created since the attempt, replying to the same status and carrying the same
 * attachments; each candidate's plain-text source (`GET /api/v1/statuses/:id/source`) must equal ours.
 */
export async function findEarlier(ctx: Ctx, draft: StatusDraft, attemptedAt: number): Promise<Lookup> {
  const res = await call(ctx.deps, { origin: ctx.origin, method: 'GET', path: `/api/v1/accounts/${encodeURIComponent(ctx.account)}/statuses?limit=${PAGE}&exclude_reblogs=true`, token: ctx.token });
  if (!res.ok) return { state: 'failed', failure: res.failure.retryable ? res.failure : LOOKUP_INCONCLUSIVE };
  const since = attemptedAt - CLOCK_SLACK_MS;
  const createdAt = (s: Record<string, unknown>) => Date.parse(str(s.created_at) ?? '');
  const statuses = list(res.body).map(obj);
  const candidates = statuses.filter((s) => str(s.id) && createdAt(s) >= since && (str(s.in_reply_to_id) ?? null) === draft.replyTo && sameMedia(s, draft.mediaIds));
  for (const candidate of candidates.slice(0, MAX_SOURCES)) {
    const id = str(candidate.id) ?? '';
    const source = await call(ctx.deps, { origin: ctx.origin, method: 'GET', path: `/api/v1/statuses/${encodeURIComponent(id)}/source`, token: ctx.token });
    if (!source.ok) return { state: 'failed', failure: source.failure.retryable ? source.failure : LOOKUP_INCONCLUSIVE };
    if (normalize(str(obj(source.body).text) ?? '') === normalize(draft.text)) return { state: 'found', id, url: statusUrl(candidate) };
  }
  // A full page all newer than the attempt may hide ours further down; too many candidates were not all read.
  const oldest = statuses.at(-1);
  const pageFull = statuses.length >= PAGE && oldest !== undefined && createdAt(oldest) >= since;
  if (pageFull || candidates.length > MAX_SOURCES) return { state: 'failed', failure: LOOKUP_INCONCLUSIVE };
  return { state: 'absent' };
}
