import type { NetworkFailure, PublishRequest } from '../adapter.js';
import { classify, type ErrorRow, failure, waitingFor } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import { obj, parseJson, str } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import type { NetworkDeps } from '../network-deps.js';
import { PINTEREST_ERROR_TABLE, PINTEREST_NETWORK_FAILURE, pinterestErrorInfo, type PinterestErrorInfo } from './errors.js';

/** Pinterest API v5 plumbing: the bearer call, the job's saved progress, reading media files. */

export const LEASE_LOST = failure('upstream_5xx', true, 'Another run took over this job; this one stopped.');

/** A video registered with POST /v5/media whose bytes reached Pinterest's storage. */
export type VideoStep = { mediaId: string };
/**
 * What this job did on Pinterest (`req.progress`): the uploaded video, the pin creation in flight (saved before
 * POST /v5/pins, whose outcome may then be unknown) and the pin once known.
 */
export type Progress = { video: VideoStep | null; creating: { attemptedAt: number } | null; pinId: string | null };

export interface Ctx {
  deps: NetworkDeps;
  /** settings.apiBaseUrl, e.g. https://api.pinterest.com/v5 */
  base: string;
  token: string;
  /** The board this connection publishes to (LiveCredentials.accountId). */
  boardId: string;
  req: PublishRequest;
  state: Progress;
}

/** A Pinterest answer: the body of a success, or a classified failure (status null: no answer at all). */
export type Reply = { ok: true; status: number; headers: Headers; text: string } | { ok: false; status: number | null; info: PinterestErrorInfo | null; failure: NetworkFailure };

/**
 * One exchange through the kit (timeout, no answer as a value). An error status is sorted with `table` and its
 * raw body logged, never returned; `call` names the request for the log (no token, no signed upload field).
 */
export async function exchange(
  deps: NetworkDeps,
  call: string,
  url: string,
  init: RequestInit,
  table: readonly ErrorRow<PinterestErrorInfo>[] = PINTEREST_ERROR_TABLE,
  timeoutMs?: number,
): Promise<Reply> {
  const answer = await send(deps, { network: 'pinterest', call, url, init, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  if (answer.status === 0) return { ok: false, status: null, info: null, failure: PINTEREST_NETWORK_FAILURE };
  if (answer.ok) return { ok: true, status: answer.status, headers: answer.headers, text: answer.text };
  const info = pinterestErrorInfo(answer.status, answer.text, answer.headers, deps.now());
  const sorted = classify(table, info);
  logFailedAnswer(deps, { network: 'pinterest', call }, answer, { row: sorted.row, code: info.code });
  return { ok: false, status: answer.status, info, failure: waitingFor(sorted.failure, info.retryAfterMs) };
}

/** A bearer call on the v5 API; `path` starts with `/` and is relative to the configured base. */
export function v5(io: { deps: NetworkDeps; base: string; token: string }, method: 'GET' | 'POST', path: string, json?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { Authorization: `Bearer ${io.token}`, Accept: 'application/json' };
  if (json !== undefined) headers['Content-Type'] = 'application/json';
  const init: RequestInit = { method, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) };
  return exchange(io.deps, `${method} /v5${path.split('?')[0] ?? path}`, `${io.base}${path}`, init);
}

/** The body of a success as an object (`{}` when it is not one). */
export const bodyOf = (reply: { text: string }) => obj(parseJson(reply.text));

export function unexpected(deps: NetworkDeps, what: string): NetworkFailure {
  deps.log('pinterest: unexpected answer', { call: what });
  return failure('upstream_unknown', false);
}

export async function openFile(deps: NetworkDeps, url: string): Promise<{ ok: true; source: MediaSource } | NetworkFailure> {
  try {
    return { ok: true, source: await deps.openMedia(url) };
  } catch (err) {
    deps.log('pinterest: media could not be read', { error: err instanceof Error ? err.message : String(err) });
    return failure('upstream_unknown', false, 'The media file could not be read for upload to Pinterest.');
  }
}

export function progressOf(raw: Record<string, unknown> | null): Progress {
  const p = obj(raw);
  const mediaId = str(obj(p.video).mediaId);
  const attemptedAt = obj(p.creating).attemptedAt;
  return {
    video: mediaId ? { mediaId } : null,
    creating: typeof attemptedAt === 'number' ? { attemptedAt } : null,
    pinId: str(p.pinId),
  };
}

/** Records progress durably (the whole state: the worker stores what it is given). False: the lease was lost. */
export function save(ctx: Ctx, patch: Partial<Progress>): Promise<boolean> {
  ctx.state = { ...ctx.state, ...patch };
  return ctx.req.saveProgress({ ...ctx.state });
}
