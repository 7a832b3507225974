import type { NetworkFailure, PublishRequest } from '../adapter.js';
import { classify, failure } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import { type Json, jsonObject, num, obj, str } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import type { NetworkDeps } from '../network-deps.js';
import { TIKTOK_ERROR_TABLE, tiktokErrorInfo, type TiktokErrorInfo } from './errors.js';

/** TikTok's v2 API plumbing: the JSON call and its `error.code` envelope, the job's saved progress, media files. */

/** How media reaches TikTok (source_info.source). */
export type Source = 'FILE_UPLOAD' | 'PULL_FROM_URL';

/** A chunked upload to the `upload_url` (FILE_UPLOAD): its plan and how far it got. */
export interface UploadState {
  total: number;
  chunkSize: number;
  chunks: number;
  /** Chunks TikTok acknowledged (206/201), in order. */
  done: number;
  /** A chunk sent whose answer was not read yet: its outcome is unknown until the status says how many bytes arrived. */
  sending: number | null;
}

/**
 * What this job did on TikTok (`req.progress`). `initStartedAt` is saved before an init call and `publishId` right
 * after its answer: a run that finds the first without the second knows an init may have happened unseen.
 */
export interface Progress {
  /** The creator's handle (creator_info `creator_username`), for the post URL. */
  username: string | null;
  /** The privacy level asked for (direct posts). */
  privacy: string | null;
  source: Source | null;
  initStartedAt: number | null;
  publishId: string | null;
  uploadUrl: string | null;
  upload: UploadState | null;
  /** Fresh inits after a publication TikTok gave up on (expired upload, failed pull). */
  restarts: number;
}

export interface Ctx {
  deps: NetworkDeps;
  base: string;
  token: string;
  req: PublishRequest;
  state: Progress;
}

/** A TikTok answer: the `data` of a success, or a classified failure. `definite`: TikTok refused, nothing was done. */
export type Reply =
  | { ok: true; data: Json; text: string; headers: Headers; status: number }
  | { ok: false; status: number; definite: boolean; info: TiktokErrorInfo; row: string; failure: NetworkFailure };

/**
 * One exchange through the kit (timeout, no answer as a value). Success is a 2xx whose `error.code` is `ok` (or
 * absent); anything else is sorted with the table and its raw body logged, never returned. A 2xx that is not
 * readable JSON counts as a bad gateway: whether TikTok acted is unknown.
 */
export async function exchange(deps: NetworkDeps, call: string, url: string, init: RequestInit, timeoutMs?: number): Promise<Reply> {
  const answer = await send(deps, { network: 'tiktok', call, url, init, ...(timeoutMs ? { timeoutMs } : {}) });
  const body = answer.ok ? jsonObject(answer.text) : null;
  const code = body ? str(obj(body.error).code) : null;
  if (answer.ok && body && (code === null || code === 'ok')) return { ok: true, data: obj(body.data), text: answer.text, headers: answer.headers, status: answer.status };
  const status = answer.ok && !body ? 502 : answer.status;
  const info = answer.status === 0 ? { status: 0, code: '', text: '' } : tiktokErrorInfo(status, answer.text);
  const sorted = classify(TIKTOK_ERROR_TABLE, info);
  if (answer.status !== 0) logFailedAnswer(deps, { network: 'tiktok', call }, answer, { row: sorted.row });
  const definite = status >= 400 && status < 500 && status !== 408 ? true : answer.ok && body !== null;
  return { ok: false, status, definite, info, row: sorted.row, failure: sorted.failure };
}

/** A JSON call on the Content Posting API, as the account. */
export function post(ctx: Ctx, path: string, json?: unknown): Promise<Reply> {
  return exchange(ctx.deps, `POST ${path}`, `${ctx.base}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ctx.token}`, 'Content-Type': 'application/json; charset=UTF-8' },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
}

export function unexpected(deps: NetworkDeps, what: string): NetworkFailure {
  deps.log('tiktok: unexpected answer', { call: what });
  return failure('upstream_unknown', false);
}

export async function openFile(deps: NetworkDeps, url: string): Promise<{ ok: true; source: MediaSource } | NetworkFailure> {
  try {
    return { ok: true, source: await deps.openMedia(url) };
  } catch (err) {
    deps.log('tiktok: media could not be read', { error: err instanceof Error ? err.message : String(err) });
    return failure('upstream_5xx', true, 'The media file could not be read for upload to TikTok.');
  }
}

const strOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function uploadOf(v: unknown): UploadState | null {
  const u = obj(v);
  const [total, chunkSize, chunks, done] = [num(u.total), num(u.chunkSize), num(u.chunks), num(u.done)];
  if (total === null || chunkSize === null || chunks === null || done === null) return null;
  return { total, chunkSize, chunks, done, sending: num(u.sending) };
}

export function progressOf(raw: Record<string, unknown> | null): Progress {
  const p = obj(raw);
  const source = p.source === 'FILE_UPLOAD' || p.source === 'PULL_FROM_URL' ? p.source : null;
  return {
    username: strOrNull(p.username),
    privacy: strOrNull(p.privacy),
    source,
    initStartedAt: num(p.initStartedAt),
    publishId: strOrNull(p.publishId),
    uploadUrl: strOrNull(p.uploadUrl),
    upload: uploadOf(p.upload),
    restarts: num(p.restarts) ?? 0,
  };
}

/** Records progress durably (the whole state: the worker stores what it is given). False: the lease was lost. */
export function save(ctx: Ctx, patch: Partial<Progress>): Promise<boolean> {
  ctx.state = { ...ctx.state, ...patch };
  return ctx.req.saveProgress({ ...ctx.state });
}
