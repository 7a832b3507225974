import { PLATFORMS } from '../../vocabulary/platforms.js';
import type { Confirmation, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { type Answer, logFailedAnswer } from '../kit/http.js';
import { jsonObject } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { YOUTUBE_MESSAGES } from './errors.js';
import { bearer, exchange, refused, trimBase } from './http.js';

/** YouTube Data API v3: resumable uploads (https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol). */

/** A chunk of several MiB on a slow link needs longer than a JSON call. */
const CHUNK_TIMEOUT_MS = 120_000;
/** Google's rule: every chunk but the last is a multiple of 256 KiB. */
export const YOUTUBE_CHUNK_UNIT = 256 * 1024;
const CATEGORY_PEOPLE_AND_BLOGS = '22';
/** YouTube counts the description limit in UTF-8 bytes. */
const DESCRIPTION_MAX_BYTES = 5000;

/** Tuning of the upload loop; the defaults suit production, tests shrink them. */
export interface YoutubeAdapterOptions {
  /** Bytes per PUT, a multiple of 256 KiB. Default 8 MiB. */
  chunkSizeBytes?: number;
  /** Time one `publish` call may upload before it answers pending, so an upload never outlives the job lease. */
  publishBudgetMs?: number;
  /** Times one call asks the session and continues after a broken chunk before giving up (retryable). */
  resumeAttempts?: number;
}

/** Cuts a string to `maxChars` code points and `maxBytes` UTF-8 bytes, never inside a character. */
function clip(text: string, maxChars: number, maxBytes = Infinity): string {
  let out = '';
  let bytes = 0;
  let chars = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch);
    if (chars + 1 > maxChars || bytes + size > maxBytes) break;
    out += ch;
    bytes += size;
    chars += 1;
  }
  return out;
}

const firstLine = (text: string | null) => (text ?? '').trim().split('\n')[0]?.trim() ?? '';

/** What `saveProgress` holds for a YouTube job. */
interface UploadProgress {
  sessionUri: string;
  total: number;
  /** Bytes the session confirmed; present once a chunk may have been sent. */
  offset?: number;
  videoId?: string;
}

function readProgress(p: Record<string, unknown> | null): UploadProgress | null {
  if (!p || typeof p.sessionUri !== 'string' || typeof p.total !== 'number') return null;
  const out: UploadProgress = { sessionUri: p.sessionUri, total: p.total };
  if (typeof p.offset === 'number') out.offset = p.offset;
  if (typeof p.videoId === 'string') out.videoId = p.videoId;
  return out;
}

/** Where an upload stands after one exchange with the session. */
type Step = { kind: 'continue'; offset: number } | { kind: 'done'; videoId: string } | { kind: 'failed'; failure: NetworkFailure };

/**
 * What the author must know when the video is not public although the upload asked for it: YouTube locks every
 * video uploaded through an API project created after 28 July 2020 to private until the project passes YouTube's
 * API audit (YouTube Data API, videos.insert). Null for a public video (or a status YouTube did not give).
 */
export function privacyNotice(privacyStatus: unknown): string | null {
  if (privacyStatus === 'private') {
    return (
      'YouTube keeps this video private: only the channel can see it. YouTube makes every upload from an API project it has not audited private; ' +
      "the installation's operator can request YouTube's API audit, and meanwhile the channel can make the video public in YouTube Studio."
    );
  }
  if (privacyStatus === 'unlisted') return 'YouTube made this video unlisted: only people with its link can see it. The channel can make it public in YouTube Studio.';
  return null;
}

const watchUrl = (id: string) => `${PLATFORMS.youtube.postUrlBase}${encodeURIComponent(id)}`;

/**
 * The YouTube adapter. `submit` opens a resumable upload session (nothing exists on YouTube yet); `publish`
 * sends the bytes in chunks, saving the confirmed offset after each, and the video exists only once the last
 * byte lands — so a repeated `publish` asks the session where it stands and can never create a second video.
 * `confirm` reads the video's status.
 */
export function createYoutubeAdapter(settings: NetworkSettings, deps: NetworkDeps, options: YoutubeAdapterOptions = {}): NetworkAdapter {
  const api = trimBase(settings.apiBaseUrl);
  const chunkSize = options.chunkSizeBytes ?? 32 * YOUTUBE_CHUNK_UNIT;
  const budgetMs = options.publishBudgetMs ?? 20_000;
  const resumeAttempts = options.resumeAttempts ?? 3;
  if (chunkSize <= 0 || chunkSize % YOUTUBE_CHUNK_UNIT !== 0) throw new Error('youtube: chunkSizeBytes must be a positive multiple of 256 KiB');

  /** Reads one answer of the upload session: 308 = partial (Range says how much), 200/201 = the video. */
  function interpret(a: Answer, what: string): Step {
    if (a.status === 308) {
      // `Range: bytes=0-N` confirms N+1 bytes; no header means nothing was kept.
      const m = /^bytes=0-(\d+)$/.exec(a.headers.get('range') ?? '');
      return { kind: 'continue', offset: m?.[1] === undefined ? 0 : Number(m[1]) + 1 };
    }
    if (a.status === 200 || a.status === 201) {
      const id = jsonObject(a.text)?.id;
      if (typeof id === 'string' && id !== '') return { kind: 'done', videoId: id };
      logFailedAnswer(deps, { network: 'youtube', call: what }, a, { row: 'upload finished without a video id' });
      return { kind: 'failed', failure: failure('upstream_unknown') };
    }
    if (a.status === 404 || a.status === 410) {
      logFailedAnswer(deps, { network: 'youtube', call: what }, a, { row: 'upload session gone' });
      return { kind: 'failed', failure: failure('upstream_unknown', false, YOUTUBE_MESSAGES.sessionGone) };
    }
    return { kind: 'failed', failure: refused(deps, what, a) };
  }

  return {
    async submit(req: PublishRequest): Promise<Submitted> {
      if (!req.credentials) return failure('upstream_unknown');
      const media = req.media[0];
      if (!media || req.media.length !== 1) return failure('upstream_unknown', false, YOUTUBE_MESSAGES.noVideo);
      let total: number;
      try {
        // Only the size is needed here; the bytes are read chunk by chunk when they are sent.
        const source = await deps.openMedia(media.url);
        total = source.size;
        await source.close();
      } catch (err) {
        deps.log('youtube: reading the media failed', { error: err instanceof Error ? err.message : String(err) });
        return failure('upstream_5xx', true);
      }
      if (total === 0) return failure('media_unsupported_format', false, YOUTUBE_MESSAGES.emptyFile);

      const title = clip(firstLine(req.title) || firstLine(req.text), PLATFORMS.youtube.limits.titleMaxChars ?? 100);
      const description = clip(req.text ?? '', PLATFORMS.youtube.limits.textMaxChars, DESCRIPTION_MAX_BYTES);
      const resource = {
        snippet: { title, description, categoryId: CATEGORY_PEOPLE_AND_BLOGS },
        status: { privacyStatus: 'public', selfDeclaredMadeForKids: false },
      };
      const a = await exchange(deps, `${api}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status`, {
        method: 'POST',
        headers: {
          ...bearer(req.credentials.accessToken),
          'Content-Type': 'application/json; charset=UTF-8',
          'X-Upload-Content-Length': String(total),
          'X-Upload-Content-Type': media.contentType ?? 'application/octet-stream',
        },
        body: JSON.stringify(resource),
      });
      const sessionUri = a.headers.get('location');
      if (a.status !== 200 || !sessionUri) return refused(deps, 'starting the upload session', a);
      if (!(await req.saveProgress({ sessionUri, total }))) return failure('upstream_5xx', true, YOUTUBE_MESSAGES.leaseLost);
      return { ok: true, containerId: sessionUri };
    },

    async publish(req: PublishRequest, containerId: string): Promise<Published> {
      if (!req.credentials) return failure('upstream_unknown');
      const token = req.credentials.accessToken;
      const saved = readProgress(req.progress);
      if (saved?.videoId) return { ok: true, postId: saved.videoId, url: watchUrl(saved.videoId) };
      const sessionUri = saved?.sessionUri ?? containerId;
      // The token goes only to the configured API host, whatever a Location header said.
      if (URL.canParse(sessionUri) === false || new URL(sessionUri).origin !== new URL(api).origin) {
        deps.log('youtube: upload session is not on the API host', {});
        return failure('upstream_unknown');
      }
      const media = req.media[0];
      if (!media) return failure('upstream_unknown', false, YOUTUBE_MESSAGES.noVideo);
      let source: MediaSource;
      try {
        source = await deps.openMedia(media.url);
      } catch (err) {
        deps.log('youtube: reading the media failed', { error: err instanceof Error ? err.message : String(err) });
        return failure('upstream_5xx', true);
      }
      try {
        const total = source.size;
        if (saved && saved.total !== total) return failure('upstream_unknown', false, YOUTUBE_MESSAGES.fileChanged);
        const contentType = media.contentType ?? 'application/octet-stream';

        const askSession = async (): Promise<Step> =>
          interpret(
            await exchange(deps, sessionUri, { method: 'PUT', headers: { ...bearer(token), 'Content-Range': `bytes */${total}` } }),
            'asking the upload session',
          );
        const sendChunk = async (offset: number): Promise<Step> => {
          const end = Math.min(offset + chunkSize, total);
          const a = await exchange(deps,
            sessionUri,
            { method: 'PUT', headers: { ...bearer(token), 'Content-Type': contentType, 'Content-Range': `bytes ${offset}-${end - 1}/${total}` }, body: await source.read(offset, end - offset) },
            CHUNK_TIMEOUT_MS,
          );
          return interpret(a, 'uploading a chunk');
        };

        const started = deps.now();
        let sentThisCall = false;
        let resumesLeft = resumeAttempts;
        // A resumed run (an offset was saved, or nothing was: we cannot tell) first asks the session: an earlier
        // run may have sent bytes, or even the last chunk, whose answer it never read.
        let step: Step = saved && saved.offset === undefined ? { kind: 'continue', offset: 0 } : await askSession();
        for (;;) {
          if (step.kind === 'done') {
            await req.saveProgress({ sessionUri, total, offset: total, videoId: step.videoId });
            return { ok: true, postId: step.videoId, url: watchUrl(step.videoId) };
          }
          if (step.kind === 'failed') {
            if (!step.failure.retryable || resumesLeft <= 0) return step.failure;
            // Broken chunk or unknown outcome: ask the session where it stands instead of guessing.
            await deps.sleep(1000 * 2 ** (resumeAttempts - resumesLeft));
            resumesLeft -= 1;
            step = await askSession();
            continue;
          }
          if (step.offset >= total) {
            // Every byte arrived but the session has not produced the video yet: look again later.
            return { ok: 'pending', retryAfterMs: 5_000 };
          }
          // Saved before each chunk: the last chunk creates the video, and a crash after it must resume by asking.
          if (!(await req.saveProgress({ sessionUri, total, offset: step.offset }))) return failure('upstream_5xx', true, YOUTUBE_MESSAGES.leaseLost);
          if (sentThisCall && deps.now() - started >= budgetMs) return { ok: 'pending', retryAfterMs: 1_000 };
          sentThisCall = true;
          step = await sendChunk(step.offset);
        }
      } finally {
        await source.close();
      }
    },

    async confirm(req: PublishRequest, postId: string): Promise<Confirmation> {
      if (!req.credentials) return { state: 'unavailable' };
      const a = await exchange(deps, `${api}/youtube/v3/videos?part=status,processingDetails&id=${encodeURIComponent(postId)}`, {
        headers: { ...bearer(req.credentials.accessToken), Accept: 'application/json' },
      });
      if (a.status !== 200) {
        logFailedAnswer(deps, { network: 'youtube', call: 'reading the video' }, a);
        return { state: 'unavailable' };
      }
      const items = jsonObject(a.text)?.items;
      const video = Array.isArray(items) ? (items as Array<{ id?: unknown; status?: { uploadStatus?: unknown; privacyStatus?: unknown } }>).find((v) => v.id === postId) : undefined;
      if (!video) return { state: 'not_found' };
      const uploadStatus = video.status?.uploadStatus;
      // Rejected (duplicate, copyright, terms), failed (bad file) or deleted: no one will ever see it.
      if (uploadStatus === 'rejected' || uploadStatus === 'failed' || uploadStatus === 'deleted') {
        deps.log('youtube: video will not be shown', { videoId: postId, status: video.status });
        return { state: 'not_found' };
      }
      // Still processing counts as found: the video exists at its URL and processing cannot create another.
      const notice = privacyNotice(video.status?.privacyStatus);
      if (notice) deps.log('youtube: video is not public', { videoId: postId, privacyStatus: video.status?.privacyStatus });
      return notice ? { state: 'found', url: watchUrl(postId), notice } : { state: 'found', url: watchUrl(postId) };
    },
  };
}
