import type { NetworkFailure, PublishRequest } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { type Json, isRecord, list, num, obj, parseJson, str } from '../kit/json.js';
import type { NetworkDeps } from '../network-deps.js';
import type { BlueskyAccount } from './account.js';
import { type XrpcReply, xrpc } from './xrpc.js';

/**
 * The account's repository on its data server (PDS), and what a job keeps between runs. Sources: the lexicons
 * com.atproto.repo.createRecord / getRecord / uploadBlob, com.atproto.identity.resolveHandle, and the `blob` type
 * of atproto.com/specs/data-model (`{$type: 'blob', ref: {$link: cid}, mimeType, size}`).
 */

export const POST_COLLECTION = 'app.bsky.feed.post';

/** A blob as a record references it; the exact object uploadBlob (or the video service) answered. */
export interface BlobRef {
  $type: 'blob';
  ref: { $link: string };
  mimeType: string;
  size: number;
}

/** A strong reference to a record (com.atproto.repo.strongRef), as replies need them. */
export interface PostRef {
  uri: string;
  cid: string;
}

/** What one run works with: the account, its access token, the video service, and the job's saved state. */
export interface Ctx {
  deps: NetworkDeps;
  account: BlueskyAccount;
  token: string;
  videoService: string;
  req: PublishRequest;
  state: Progress;
}

/**
 * What a job did on Bluesky (`req.progress`): `posts` are live (a chain's first ones, in order); `sending` is the
 * index of a post whose createRecord was sent and may have landed, so the next run looks it up before anything;
 * `videoBlob` is the processed video once the video service handed it over.
 */
export interface Progress {
  posts: PostRef[];
  sending: number | null;
  videoBlob: BlobRef | null;
}

export function readBlob(v: unknown): BlobRef | null {
  const b = obj(v);
  const link = str(obj(b.ref).$link);
  const mimeType = str(b.mimeType);
  const size = num(b.size);
  return b.$type === 'blob' && link && mimeType && size !== null ? { $type: 'blob', ref: { $link: link }, mimeType, size } : null;
}

const readRef = (v: unknown): PostRef | null => {
  const r = obj(v);
  const uri = str(r.uri);
  const cid = str(r.cid);
  return uri && cid ? { uri, cid } : null;
};

export function readProgress(raw: Record<string, unknown> | null): Progress {
  const p = obj(raw);
  const posts = list(p.posts).map(readRef);
  return {
    // A damaged list would misplace the chain: start over rather than guess (the record keys still prevent doubles).
    posts: posts.every((x) => x !== null) ? (posts as PostRef[]) : [],
    sending: typeof p.sending === 'number' && Number.isInteger(p.sending) ? p.sending : null,
    videoBlob: readBlob(p.videoBlob),
  };
}

/** Records the whole state durably (the worker keeps what it is given). False: the job's lease was lost. */
export function save(ctx: Ctx, patch: Partial<Progress>): Promise<boolean> {
  ctx.state = { ...ctx.state, ...patch };
  return ctx.req.saveProgress({ ...ctx.state });
}

/** What `submit` hands to `publish` (the job's container id): nothing, uploaded images, or a video job. */
export type Container = { kind: 'text' } | { kind: 'images'; blobs: BlobRef[] } | { kind: 'video'; jobId: string | null; blob: BlobRef | null };

export const TEXT_ONLY = 'text';

export function encodeContainer(c: Container): string {
  if (c.kind === 'text') return TEXT_ONLY;
  return JSON.stringify(c.kind === 'images' ? { images: c.blobs } : { videoJob: c.jobId, video: c.blob });
}

export function decodeContainer(id: string): Container | null {
  if (id === TEXT_ONLY) return { kind: 'text' };
  const c = parseJson(id);
  if (!isRecord(c)) return null;
  if (Array.isArray(c.images)) {
    const blobs = c.images.map(readBlob);
    return blobs.length > 0 && blobs.every((b) => b !== null) ? { kind: 'images', blobs: blobs as BlobRef[] } : null;
  }
  const jobId = str(c.videoJob);
  const blob = readBlob(c.video);
  return jobId || blob ? { kind: 'video', jobId, blob } : null;
}

/** The post's public address on bsky.app (the DID never changes, unlike the handle). */
export function postUrl(did: string, rkey: string): string {
  return `https://bsky.app/profile/${did}/post/${rkey}`;
}

/** `at://{did}/{collection}/{rkey}` → its parts. */
export function parseAtUri(uri: string): { did: string; collection: string; rkey: string } | null {
  const m = /^at:\/\/(did:[^/]+)\/([^/]+)\/([^/]+)$/.exec(uri);
  return m && m[1] && m[2] && m[3] ? { did: m[1], collection: m[2], rkey: m[3] } : null;
}

export type Lookup = { state: 'found'; ref: PostRef; text: string } | { state: 'absent' } | { state: 'failed'; failure: NetworkFailure };

/** com.atproto.repo.getRecord (no auth needed): is there a post at `rkey` in the account's repository? */
export async function getPost(deps: NetworkDeps, account: BlueskyAccount, rkey: string): Promise<Lookup> {
  const res = await xrpc(deps, { base: account.pds, nsid: 'com.atproto.repo.getRecord', params: { repo: account.did, collection: POST_COLLECTION, rkey } });
  if (!res.ok) {
    if (res.info.error === 'RecordNotFound' || /could not locate record/i.test(res.info.message)) return { state: 'absent' };
    return { state: 'failed', failure: res.failure };
  }
  const uri = str(res.data.uri);
  const cid = str(res.data.cid);
  if (!uri || !cid) {
    deps.log('bluesky: unexpected answer', { call: 'getRecord without uri or cid' });
    return { state: 'failed', failure: failure('upstream_unknown', false) };
  }
  return { state: 'found', ref: { uri, cid }, text: str(obj(res.data.value).text) ?? '' };
}

/** com.atproto.repo.createRecord of a post at a key chosen in advance (see record-key.ts). */
export function createPost(ctx: Ctx, rkey: string, record: Json): Promise<XrpcReply> {
  return xrpc(ctx.deps, {
    base: ctx.account.pds,
    nsid: 'com.atproto.repo.createRecord',
    token: ctx.token,
    json: { repo: ctx.account.did, collection: POST_COLLECTION, rkey, record },
  });
}

/**
 * The DIDs of mentioned handles (com.atproto.identity.resolveHandle on the account's PDS). A handle that does not
 * resolve, or a lookup that fails, leaves that mention as plain text: the post is not held back for it.
 */
export async function resolveHandles(ctx: Ctx, handles: string[]): Promise<Map<string, string>> {
  const dids = new Map<string, string>();
  for (const handle of new Set(handles)) {
    const res = await xrpc(ctx.deps, { base: ctx.account.pds, nsid: 'com.atproto.identity.resolveHandle', params: { handle } });
    const did = res.ok ? str(res.data.did) : null;
    if (did?.startsWith('did:')) dids.set(handle, did);
  }
  return dids;
}
