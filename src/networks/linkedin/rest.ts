import type { NetworkFailure, PublishRequest } from '../adapter.js';
import { classify, failure } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import { list, obj } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import type { NetworkDeps } from '../network-deps.js';
import { LINKEDIN_ERROR_TABLE, LINKEDIN_NETWORK_FAILURE, linkedinErrorInfo, type LinkedinErrorInfo } from './errors.js';

/** LinkedIn's REST API plumbing: the versioned Rest.li call, the job's saved progress, reading media files. */

const RESTLI_PROTOCOL = '2.0.0';

export const LEASE_LOST = failure('upstream_5xx', true, 'Another run took over this job; this one stopped.');

export type ImageStep = { kind: 'image'; urn: string; uploadUrl: string; uploaded: boolean };
export type VideoPart = { uploadUrl: string; firstByte: number; lastByte: number };
export type VideoStep = { kind: 'video'; urn: string; uploadToken: string; parts: VideoPart[]; etags: string[]; finalizeSent: boolean; finalized: boolean };
/** What this job did on LinkedIn (`req.progress`): per media item its upload, and the post attempt. */
export type Progress = { media: (ImageStep | VideoStep | null)[]; post: { attemptedAt: number } | null; postUrn: string | null };

export interface Ctx {
  deps: NetworkDeps;
  base: string;
  version: string;
  token: string;
  author: string;
  req: PublishRequest;
  state: Progress;
}

/** A LinkedIn answer: the body of a success, or a classified failure (status null: no answer at all). */
export type Reply = { ok: true; headers: Headers; text: string } | { ok: false; status: number | null; info: LinkedinErrorInfo | null; failure: NetworkFailure };

/**
 * One exchange through the kit (timeout, no answer as a value). An error status is sorted with `table` and its
 * raw body logged, never returned; the token and upload URLs are not logged (`call` names the request).
 */
export async function exchange(deps: NetworkDeps, call: string, url: string, init: RequestInit, table = LINKEDIN_ERROR_TABLE): Promise<Reply> {
  const answer = await send(deps, { network: 'linkedin', call, url, init });
  if (answer.status === 0) return { ok: false, status: null, info: null, failure: LINKEDIN_NETWORK_FAILURE };
  if (answer.ok) return { ok: true, headers: answer.headers, text: answer.text };
  const info = linkedinErrorInfo(answer.status, answer.text);
  const sorted = classify(table, info);
  logFailedAnswer(deps, { network: 'linkedin', call }, answer, { row: sorted.row });
  return { ok: false, status: answer.status, info, failure: sorted.failure };
}

/** A versioned Rest.li call: every /rest request needs LinkedIn-Version and the 2.0.0 protocol header. */
export function rest(ctx: Ctx, method: string, path: string, json?: unknown, extra: Record<string, string> = {}): Promise<Reply> {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${ctx.token}`,
    'LinkedIn-Version': ctx.version,
    'X-Restli-Protocol-Version': RESTLI_PROTOCOL,
    ...extra,
  };
  if (json !== undefined) headers['Content-Type'] = 'application/json';
  const init: RequestInit = { method, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) };
  return exchange(ctx.deps, `${method} ${path.split('?')[0] ?? path}`, `${ctx.base}${path}`, init);
}

export function unexpected(deps: NetworkDeps, what: string): NetworkFailure {
  deps.log('linkedin: unexpected answer', { call: what });
  return failure('upstream_unknown', false);
}

export async function openFile(ctx: Ctx, url: string): Promise<{ ok: true; source: MediaSource } | NetworkFailure> {
  try {
    return { ok: true, source: await ctx.deps.openMedia(url) };
  } catch (err) {
    ctx.deps.log('linkedin: media could not be read', { error: err instanceof Error ? err.message : String(err) });
    return failure('upstream_unknown', false, 'The media file could not be read for upload to LinkedIn.');
  }
}

export function progressOf(raw: Record<string, unknown> | null): Progress {
  const p = obj(raw);
  const post = obj(p.post);
  return {
    media: list(p.media).map((m) => (obj(m).kind === 'image' || obj(m).kind === 'video' ? (m as ImageStep | VideoStep) : null)),
    post: typeof post.attemptedAt === 'number' ? { attemptedAt: post.attemptedAt } : null,
    postUrn: typeof p.postUrn === 'string' ? p.postUrn : null,
  };
}

/** Records progress durably (the whole state: the worker stores what it is given). False: the lease was lost. */
export function save(ctx: Ctx, patch: Partial<Progress>): Promise<boolean> {
  ctx.state = { ...ctx.state, ...patch };
  return ctx.req.saveProgress({ ...ctx.state });
}
export function saveStep(ctx: Ctx, i: number, step: ImageStep | VideoStep): Promise<boolean> {
  const media = [...ctx.state.media];
  while (media.length < i) media.push(null);
  media[i] = step;
  return save(ctx, { media });
}

