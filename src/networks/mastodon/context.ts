import type { PublishRequest } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { isRecord, list, num, obj, str } from '../kit/json.js';
import type { NetworkDeps } from '../network-deps.js';

/** One job on one server: who posts, where, and what this job already did there (saved progress). */

/** A media attachment uploaded by `submit`: `ready` once the server says its `url` is set. */
export type Upload = { id: string; ready: boolean };

/**
 * What this job did on the server (`req.progress`). Posts `0..index-1` of the chain are live with `ids`;
 * `sending` is recorded just before the POST of post `index` (with the time of its first attempt), so a run
 * taken over knows that post may exist and repeats it only under the same Idempotency-Key, or looks it up.
 */
export type Progress = {
  uploads: (Upload | null)[];
  index: number;
  ids: string[];
  firstUrl: string | null;
  sending: { index: number; at: number } | null;
};

export interface Ctx {
  deps: NetworkDeps;
  origin: string;
  /** The account's id on its server. */
  account: string;
  token: string;
  req: PublishRequest;
  state: Progress;
}

export const LEASE_LOST = failure('upstream_5xx', true, 'Another run took over this job; this one stopped.');

function uploadOf(v: unknown): Upload | null {
  const id = isRecord(v) ? str(v.id) : null;
  return id && isRecord(v) ? { id, ready: v.ready === true } : null;
}

/** Saved progress, read defensively: anything inconsistent reads as "nothing posted yet" for that part. */
export function progressOf(raw: Record<string, unknown> | null): Progress {
  const p = obj(raw);
  const ids = list(p.ids).map(str).filter((s): s is string => s !== null);
  const index = num(p.index) === ids.length ? ids.length : 0;
  const sending = obj(p.sending);
  const sendingIndex = num(sending.index);
  const sendingAt = num(sending.at);
  return {
    uploads: list(p.uploads).map(uploadOf),
    index,
    ids: ids.slice(0, index),
    firstUrl: index > 0 ? str(p.firstUrl) : null,
    sending: sendingIndex === index && sendingAt !== null ? { index: sendingIndex, at: sendingAt } : null,
  };
}

/** Records progress durably (the whole state: the worker stores what it is given). False: the lease was lost. */
export function save(ctx: Ctx, patch: Partial<Progress>): Promise<boolean> {
  ctx.state = { ...ctx.state, ...patch };
  return ctx.req.saveProgress({ ...ctx.state });
}
