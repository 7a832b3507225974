import { classify, failure } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import type { MediaSource } from '../media-source.js';
import { type Ctx, openFile, save, type UploadState } from './api.js';
import { LEASE_LOST, TIKTOK_ERROR_TABLE, tiktokErrorInfo } from './errors.js';
import { fetchStatus } from './status.js';

/**
 * FILE_UPLOAD (Media Transfer Guide, "Work with chunks"): the bytes go to the `upload_url` in sequential PUTs with
 * `Content-Range`; TikTok answers 206 for each chunk and 201 for the last. Every chunk but the last is
 * `chunk_size` bytes, 5 to 64 MB; the last takes the trailing bytes (up to 128 MB); a file under 5 MB goes whole;
 * at most 1000 chunks. Nothing is public until the last byte lands, and only this job knows the upload URL, so
 * an upload that never completes can never become a post.
 */

const MB = 1024 * 1024;
export const MIN_CHUNK_BYTES = 5 * MB;
export const MAX_CHUNK_BYTES = 64 * MB;
const MAX_CHUNKS = 1000;
/** A chunk of several MB on a slow link needs longer than a JSON call. */
const CHUNK_TIMEOUT_MS = 120_000;
/** Times one call asks the status and carries on after a chunk without an answer, before handing back. */
const RESUMES_PER_CALL = 2;
const VIDEO_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'];

/** `chunk_size` and `total_chunk_count` for a file: whole up to `preferred`, else `floor(size / chunk)` chunks. */
export function chunkPlan(total: number, preferred: number): { chunkSize: number; chunks: number } {
  if (total <= preferred) return { chunkSize: total, chunks: 1 };
  const chunkSize = Math.min(MAX_CHUNK_BYTES, Math.max(preferred, Math.ceil(total / MAX_CHUNKS)));
  return { chunkSize, chunks: Math.floor(total / chunkSize) };
}

const rangeOf = (u: UploadState, j: number) => ({ first: j * u.chunkSize, end: j === u.chunks - 1 ? u.total : (j + 1) * u.chunkSize });

export type UploadOutcome =
  | { state: 'uploaded' }
  /** The upload URL is gone (expired after an hour, or unknown) and TikTok holds only part of the file. */
  | { state: 'gone' }
  /** This call's time is up; the next one continues from the saved chunk. */
  | { state: 'later' }
  | { state: 'failed'; failure: ReturnType<typeof failure> };

/**
 * Where the upload stands by TikTok's own count (status `uploaded_bytes`), after an answer that never came or a
 * 416 (`Content-Range` off the real progress). The reference calls the count "1-indexed": both readings are
 * accepted on a chunk boundary. A status past PROCESSING_UPLOAD, or every byte held, means the upload finished.
 */
async function chunksHeld(ctx: Ctx, u: UploadState): Promise<{ state: 'uploaded' } | { state: 'at'; done: number; known: boolean } | { state: 'failed'; failure: ReturnType<typeof failure> }> {
  const seen = await fetchStatus(ctx, ctx.state.publishId ?? '');
  if (!seen.ok) return { state: 'failed', failure: seen.failure };
  const { status, uploadedBytes } = seen.view;
  if (status !== 'PROCESSING_UPLOAD') return { state: 'uploaded' };
  if (uploadedBytes === null) return { state: 'at', done: u.done, known: false };
  if (uploadedBytes >= u.total - 1) return { state: 'uploaded' };
  const boundary = uploadedBytes % u.chunkSize === 0 ? uploadedBytes : (uploadedBytes + 1) % u.chunkSize === 0 ? uploadedBytes + 1 : null;
  if (boundary === null) return { state: 'at', done: u.done, known: true };
  return { state: 'at', done: Math.min(boundary / u.chunkSize, u.chunks - 1), known: true };
}

/**
 * Sends the chunks not yet acknowledged, saving progress before each PUT (`sending`) and after its answer, until
 * the file is in, `deadline` passes, or something fails. A chunk whose answer was lost is never guessed about:
 * the status tells how many bytes TikTok holds before anything is sent again.
 */
export async function sendChunks(ctx: Ctx, deadline: number, contentType: string | null, mediaUrl: string): Promise<UploadOutcome> {
  const type = contentType && VIDEO_TYPES.includes(contentType) ? contentType : 'video/mp4';
  let source: MediaSource | null = null;
  let resumes = RESUMES_PER_CALL;
  const progress = async (patch: Partial<UploadState>): Promise<boolean> => {
    const u = ctx.state.upload;
    return u !== null && (await save(ctx, { upload: { ...u, ...patch } }));
  };
  try {
    for (;;) {
      const u = ctx.state.upload;
      const url = ctx.state.uploadUrl;
      if (u === null || url === null) return { state: 'failed', failure: failure('upstream_unknown') };
      if (u.done >= u.chunks) return { state: 'uploaded' };
      if (u.sending !== null) {
        const held = await chunksHeld(ctx, u);
        if (held.state === 'failed') return held;
        if (held.state === 'uploaded') return (await progress({ done: u.chunks, sending: null })) ? { state: 'uploaded' } : { state: 'failed', failure: LEASE_LOST };
        if (!(await progress({ done: held.done, sending: null }))) return { state: 'failed', failure: LEASE_LOST };
        continue;
      }
      if (ctx.deps.now() >= deadline) return { state: 'later' };
      if (source === null) {
        const opened = await openFile(ctx.deps, mediaUrl);
        if (!opened.ok) return { state: 'failed', failure: opened };
        source = opened.source;
        if (source.size !== u.total) return { state: 'failed', failure: failure('upstream_unknown', false, 'The media file changed while it was being uploaded to TikTok.') };
      }
      const j = u.done;
      const { first, end } = rangeOf(u, j);
      // Saved before the PUT: a run taken over asks TikTok how far the upload got instead of guessing.
      if (!(await progress({ sending: j }))) return { state: 'failed', failure: LEASE_LOST };
      const call = `PUT upload chunk ${j + 1}/${u.chunks}`;
      // The upload URL carries its own token (upload_token): the account's bearer token does not go there.
      const answer = await send(ctx.deps, {
        network: 'tiktok',
        call,
        url,
        init: { method: 'PUT', headers: { 'Content-Type': type, 'Content-Range': `bytes ${first}-${end - 1}/${u.total}` }, body: await source.read(first, end - first) },
        timeoutMs: CHUNK_TIMEOUT_MS,
      });
      if (answer.status === 201 || answer.status === 206) {
        const done = answer.status === 201 ? u.chunks : j + 1;
        if (!(await progress({ done, sending: null }))) return { state: 'failed', failure: LEASE_LOST };
        continue;
      }
      if (answer.status !== 0) logFailedAnswer(ctx.deps, { network: 'tiktok', call }, answer, { row: `upload answer ${answer.status}` });
      if (answer.status === 403 || answer.status === 404) {
        // Expired (an hour after init) or unknown: only a partial upload may be restarted, never a finished one.
        const held = await chunksHeld(ctx, u);
        if (held.state === 'failed') return held;
        if (held.state === 'uploaded') return (await progress({ done: u.chunks, sending: null })) ? { state: 'uploaded' } : { state: 'failed', failure: LEASE_LOST };
        if (!held.known) return { state: 'failed', failure: failure('upstream_unknown', false, 'TikTok closed the upload and did not say how much of the file it holds. It may still publish it: check the profile before republishing.') };
        return { state: 'gone' };
      }
      // 416: `Content-Range` is off TikTok's count. `sending` is still saved, so the status tells where to resume.
      const resumable = answer.status === 0 || answer.status === 416 || answer.status >= 500;
      if (resumable && resumes-- > 0) {
        await ctx.deps.sleep(1_000 * (RESUMES_PER_CALL - resumes));
        continue;
      }
      // Unknown outcome: `sending` stays saved, so the next run asks the status before sending anything.
      return { state: 'failed', failure: classify(TIKTOK_ERROR_TABLE, answer.status === 0 ? { status: 0, code: '', text: '' } : tiktokErrorInfo(answer.status, answer.text)).failure };
    }
  } finally {
    await source?.close();
  }
}
