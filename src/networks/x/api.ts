import type { NetworkFailure, PublishRequest } from '../adapter.js';
import { classify, type ErrorRow, failure, rowFor, waitingFor } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import { isRecord, type Json, list, num, obj, parseJson, str } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import type { NetworkDeps } from '../network-deps.js';
import { X_ERROR_TABLE, X_NETWORK_FAILURE, xErrorInfo, type XErrorInfo } from './errors.js';

/** X API v2 plumbing: one exchange through the kit, the job's saved progress, reading media files. */

export const LEASE_LOST = failure('upstream_5xx', true, 'Another run took over this job; this one stopped.');

/** An image sent whole (POST /2/media/upload); `pending` while X still processes it. */
export type ImageStep = { kind: 'image'; id: string; pending: boolean };
/**
 * A file sent in segments (initialize → append × n → finalize): a video, or a GIF; `segments` counts those X
 * acknowledged. The kind stays `video` for both, as progress saved by earlier runs names it.
 */
export type VideoStep = { kind: 'video'; id: string; size: number; segments: number; finalizeSent: boolean; finalized: boolean; pending: boolean };
export type MediaStep = ImageStep | VideoStep;

/**
 * What this job did on X (`req.progress`): the uploads of its media; the chain reached (`index` posts live, with
 * their ids, the last one being what the next replies to); and `attempt`, recorded just before POST /2/tweets
 * for post `index`, so a run taken over knows that post may be live and looks it up before posting again.
 */
export interface Progress {
  media: (MediaStep | null)[];
  index: number;
  ids: string[];
  lastTweetId: string | null;
  attempt: { index: number; startedAt: number; lookups: number } | null;
}

export interface Ctx {
  deps: NetworkDeps;
  base: string;
  token: string;
  /** The X user id the connection posts as. */
  userId: string;
  req: PublishRequest;
  state: Progress;
}

/** An X answer: a success's JSON body (`{}` when it has none), or a classified failure (status null: no answer). */
export type Reply =
  | { ok: true; status: number; headers: Headers; body: Json }
  | { ok: false; status: number | null; info: XErrorInfo; row: string; failure: NetworkFailure };

/**
 * One exchange through the kit (timeout, "no answer" as a value). An error status is sorted with `table` and its
 * raw body logged with the deciding row, never returned; `call` names the request without query or token.
 */
export async function exchange(deps: NetworkDeps, call: string, url: string, init: RequestInit, table: readonly ErrorRow<XErrorInfo>[] = X_ERROR_TABLE): Promise<Reply> {
  const answer = await send(deps, { network: 'x', call, url, init });
  if (answer.status === 0) {
    const info = xErrorInfo(0, '');
    return { ok: false, status: null, info, row: rowFor(table, info).name, failure: X_NETWORK_FAILURE };
  }
  if (answer.ok) {
    const body = parseJson(answer.text);
    return { ok: true, status: answer.status, headers: answer.headers, body: isRecord(body) ? body : {} };
  }
  const info = xErrorInfo(answer.status, answer.text, answer.headers, deps.now());
  const sorted = classify(table, info);
  logFailedAnswer(deps, { network: 'x', call }, answer, { row: sorted.row });
  // A 429 in the 15-minute window is retried once the window resets, not on the shorter retry schedule.
  return { ok: false, status: answer.status, info, row: sorted.row, failure: waitingFor(sorted.failure, info.status === 429 ? info.resetInMs : null) };
}

/** A call on the API as the connected user: bearer token, JSON body when given. */
export function api(ctx: Pick<Ctx, 'deps' | 'base' | 'token'>, method: string, path: string, body?: { json: unknown } | { form: FormData }): Promise<Reply> {
  const headers: Record<string, string> = { Authorization: `Bearer ${ctx.token}` };
  let payload: RequestInit['body'];
  if (body && 'json' in body) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body) {
    payload = body.form; // fetch writes the multipart boundary itself
  }
  return exchange(ctx.deps, `${method} ${path.split('?')[0] ?? path}`, `${ctx.base}${path}`, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
}

export function unexpected(deps: NetworkDeps, what: string): NetworkFailure {
  deps.log('x: unexpected answer', { call: what });
  return failure('upstream_unknown', false);
}

export async function openFile(ctx: Ctx, url: string): Promise<{ ok: true; source: MediaSource } | NetworkFailure> {
  try {
    return { ok: true, source: await ctx.deps.openMedia(url) };
  } catch (err) {
    ctx.deps.log('x: media could not be read', { error: err instanceof Error ? err.name : 'unknown' });
    return failure('upstream_unknown', false, 'The media file could not be read for upload to X.');
  }
}

function stepOf(v: unknown): MediaStep | null {
  const m = obj(v);
  const id = str(m.id);
  if (!id) return null;
  if (m.kind === 'image') return { kind: 'image', id, pending: m.pending === true };
  if (m.kind !== 'video') return null;
  return { kind: 'video', id, size: num(m.size) ?? 0, segments: num(m.segments) ?? 0, finalizeSent: m.finalizeSent === true, finalized: m.finalized === true, pending: m.pending !== false };
}

/** Saved progress, read defensively (it is JSON from the store); an inconsistent chain starts from its beginning. */
export function progressOf(raw: Record<string, unknown> | null): Progress {
  const p = obj(raw);
  const ids = list(p.ids).filter((x): x is string => typeof x === 'string');
  const index = num(p.index) ?? 0;
  const a = obj(p.attempt);
  const attempt = typeof a.index === 'number' && typeof a.startedAt === 'number' ? { index: a.index, startedAt: a.startedAt, lookups: num(a.lookups) ?? 0 } : null;
  const chainOk = index === ids.length;
  return {
    media: list(p.media).map(stepOf),
    index: chainOk ? index : 0,
    ids: chainOk ? ids : [],
    lastTweetId: chainOk ? (ids.at(-1) ?? null) : null,
    attempt: chainOk ? attempt : null,
  };
}

/** Records progress durably (the whole state: the worker stores what it is given). False: the lease was lost. */
export function save(ctx: Ctx, patch: Partial<Progress>): Promise<boolean> {
  ctx.state = { ...ctx.state, ...patch };
  return ctx.req.saveProgress({ ...ctx.state });
}

export function saveStep(ctx: Ctx, i: number, step: MediaStep): Promise<boolean> {
  const media = [...ctx.state.media];
  while (media.length < i) media.push(null);
  media[i] = step;
  return save(ctx, { media });
}
