import type { MediaSource } from '../media-source.js';
import type { Confirmation, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import type { NetworkDeps, NetworkOAuth, NetworkSettings, NetworkTokens, TokenResult } from '../network-oauth.js';
import { classifyYoutubeError, parseGoogleError, YOUTUBE_MESSAGES, youtubeFailure } from './errors.js';

/** YouTube Data API v3: resumable uploads (https://developers.google.com/youtube/v3/guides/using_resumable_upload_protocol). */

const UPLOAD_SCOPE = 'https://www.googleapis.com/auth/youtube.upload';
/** Read-only is needed for `channels?mine=true` (the account id and name); upload alone cannot read it. */
const SCOPES = [UPLOAD_SCOPE, 'https://www.googleapis.com/auth/youtube.readonly'];
const REQUEST_TIMEOUT_MS = 30_000;
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

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** One HTTP exchange; no answer (refused, dropped, timed out) becomes status 0 instead of an exception. */
async function send(deps: NetworkDeps, url: string, init: RequestInit, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Answer> {
  try {
    // manual: a 308 here means "resume incomplete", never a redirect to follow.
    const res = await deps.fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, headers: res.headers, body: await res.text() };
  } catch (err) {
    return { status: 0, headers: new Headers(), body: err instanceof Error ? `${err.name}: ${err.message}` : 'fetch failed' };
  }
}

/** Logs the raw answer (never returned) and sorts it with the error table. */
function failure(deps: NetworkDeps, what: string, a: Answer): NetworkFailure {
  deps.log(`youtube: ${what} failed`, { status: a.status, body: a.body.slice(0, 2000) });
  return classifyYoutubeError(parseGoogleError(a.status, a.body));
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const trimBase = (url: string) => url.replace(/\/+$/, '');
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

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
      const id = parseJson(a.body)?.id;
      if (typeof id === 'string' && id !== '') return { kind: 'done', videoId: id };
      deps.log('youtube: upload finished without a video id', { status: a.status, body: a.body.slice(0, 2000) });
      return { kind: 'failed', failure: youtubeFailure('upstream_unknown') };
    }
    if (a.status === 404 || a.status === 410) {
      deps.log(`youtube: ${what}: upload session gone`, { status: a.status, body: a.body.slice(0, 2000) });
      return { kind: 'failed', failure: youtubeFailure('upstream_unknown', false, YOUTUBE_MESSAGES.sessionGone) };
    }
    return { kind: 'failed', failure: failure(deps, what, a) };
  }

  return {
    async submit(req: PublishRequest): Promise<Submitted> {
      if (!req.credentials) return youtubeFailure('upstream_unknown');
      const media = req.media[0];
      if (!media || req.media.length !== 1) return youtubeFailure('upstream_unknown', false, YOUTUBE_MESSAGES.noVideo);
      let total: number;
      try {
        // Only the size is needed here; the bytes are read chunk by chunk when they are sent.
        const source = await deps.openMedia(media.url);
        total = source.size;
        await source.close();
      } catch (err) {
        deps.log('youtube: reading the media failed', { error: err instanceof Error ? err.message : String(err) });
        return youtubeFailure('upstream_5xx', true);
      }
      if (total === 0) return youtubeFailure('media_unsupported_format', false, YOUTUBE_MESSAGES.emptyFile);

      const title = clip(firstLine(req.title) || firstLine(req.text), PLATFORMS.youtube.limits.titleMaxChars ?? 100);
      const description = clip(req.text ?? '', PLATFORMS.youtube.limits.textMaxChars, DESCRIPTION_MAX_BYTES);
      const resource = {
        snippet: { title, description, categoryId: CATEGORY_PEOPLE_AND_BLOGS },
        status: { privacyStatus: 'public', selfDeclaredMadeForKids: false },
      };
      const a = await send(deps, `${api}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status`, {
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
      if (a.status !== 200 || !sessionUri) return failure(deps, 'starting the upload session', a);
      if (!(await req.saveProgress({ sessionUri, total }))) return youtubeFailure('upstream_5xx', true, YOUTUBE_MESSAGES.leaseLost);
      return { ok: true, containerId: sessionUri };
    },

    async publish(req: PublishRequest, containerId: string): Promise<Published> {
      if (!req.credentials) return youtubeFailure('upstream_unknown');
      const token = req.credentials.accessToken;
      const saved = readProgress(req.progress);
      if (saved?.videoId) return { ok: true, postId: saved.videoId, url: watchUrl(saved.videoId) };
      const sessionUri = saved?.sessionUri ?? containerId;
      // The token goes only to the configured API host, whatever a Location header said.
      if (URL.canParse(sessionUri) === false || new URL(sessionUri).origin !== new URL(api).origin) {
        deps.log('youtube: upload session is not on the API host', {});
        return youtubeFailure('upstream_unknown');
      }
      const media = req.media[0];
      if (!media) return youtubeFailure('upstream_unknown', false, YOUTUBE_MESSAGES.noVideo);
      let source: MediaSource;
      try {
        source = await deps.openMedia(media.url);
      } catch (err) {
        deps.log('youtube: reading the media failed', { error: err instanceof Error ? err.message : String(err) });
        return youtubeFailure('upstream_5xx', true);
      }
      try {
        const total = source.size;
        if (saved && saved.total !== total) return youtubeFailure('upstream_unknown', false, YOUTUBE_MESSAGES.fileChanged);
        const contentType = media.contentType ?? 'application/octet-stream';

        const askSession = async (): Promise<Step> =>
          interpret(
            await send(deps, sessionUri, { method: 'PUT', headers: { ...bearer(token), 'Content-Range': `bytes */${total}` } }),
            'asking the upload session',
          );
        const sendChunk = async (offset: number): Promise<Step> => {
          const end = Math.min(offset + chunkSize, total);
          const a = await send(
            deps,
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
          if (!(await req.saveProgress({ sessionUri, total, offset: step.offset }))) return youtubeFailure('upstream_5xx', true, YOUTUBE_MESSAGES.leaseLost);
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
      const a = await send(deps, `${api}/youtube/v3/videos?part=status,processingDetails&id=${encodeURIComponent(postId)}`, {
        headers: { ...bearer(req.credentials.accessToken), Accept: 'application/json' },
      });
      if (a.status !== 200) {
        deps.log('youtube: reading the video failed', { status: a.status, body: a.body.slice(0, 2000) });
        return { state: 'unavailable' };
      }
      const items = parseJson(a.body)?.items;
      const video = Array.isArray(items) ? (items as Array<{ id?: unknown; status?: { uploadStatus?: unknown } }>).find((v) => v.id === postId) : undefined;
      if (!video) return { state: 'not_found' };
      const uploadStatus = video.status?.uploadStatus;
      // Rejected (duplicate, copyright, terms), failed (bad file) or deleted: no one will ever see it.
      if (uploadStatus === 'rejected' || uploadStatus === 'failed' || uploadStatus === 'deleted') {
        deps.log('youtube: video will not be shown', { videoId: postId, status: video.status });
        return { state: 'not_found' };
      }
      // Still processing counts as found: the video exists at its URL and processing cannot create another.
      return { state: 'found', url: watchUrl(postId) };
    },
  };
}

/**
 * Google OAuth 2.0 for YouTube: offline access with a consent prompt (so Google returns a refresh token each
 * time), the channel read with `channels?mine=true` for the account id and name, and `refresh`.
 */
export function createYoutubeOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  const api = trimBase(settings.apiBaseUrl);

  async function tokenCall(form: Record<string, string>, what: string): Promise<{ ok: true; json: Record<string, unknown>; accessToken: string } | NetworkFailure> {
    if (!settings.clientId || !settings.clientSecret) return youtubeFailure('upstream_unknown', false, YOUTUBE_MESSAGES.clientConfig);
    const body = new URLSearchParams({ ...form, client_id: settings.clientId, client_secret: settings.clientSecret });
    const a = await send(deps, settings.tokenUrl, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, body: body.toString() });
    const json = a.status === 200 ? parseJson(a.body) : null;
    const accessToken = json?.access_token;
    if (!json || typeof accessToken !== 'string') return failure(deps, what, a);
    return { ok: true, json, accessToken };
  }

  const expiresAt = (json: Record<string, unknown>) => (typeof json.expires_in === 'number' ? deps.now() + json.expires_in * 1000 : null);

  async function readChannel(accessToken: string): Promise<{ ok: true; id: string; name: string } | NetworkFailure> {
    const a = await send(deps, `${api}/youtube/v3/channels?part=snippet&mine=true`, { headers: { ...bearer(accessToken), Accept: 'application/json' } });
    if (a.status !== 200) return failure(deps, 'reading the channel', a);
    const items = parseJson(a.body)?.items;
    const channel = Array.isArray(items) ? (items[0] as { id?: unknown; snippet?: { title?: unknown } } | undefined) : undefined;
    if (typeof channel?.id !== 'string') return youtubeFailure('permission_revoked', false, YOUTUBE_MESSAGES.noChannel);
    const title = channel.snippet?.title;
    return { ok: true, id: channel.id, name: typeof title === 'string' && title !== '' ? title : channel.id };
  }

  return {
    authorizationUrl({ state, redirectUri }) {
      if (!settings.clientId) throw new Error('youtube: clientId is not configured');
      const q = new URLSearchParams({
        client_id: settings.clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: SCOPES.join(' '),
        // offline + consent: Google gives a refresh token only on a consent screen.
        access_type: 'offline',
        prompt: 'consent',
        include_granted_scopes: 'true',
        state,
      });
      return `${settings.authorizeUrl}?${q.toString()}`;
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      const t = await tokenCall({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }, 'exchanging the code');
      if (!t.ok) return t;
      // Google's consent screen lets the user untick a scope; without upload, publishing could never work.
      if (typeof t.json.scope === 'string' && !t.json.scope.split(' ').includes(UPLOAD_SCOPE)) return youtubeFailure('permission_revoked');
      const channel = await readChannel(t.accessToken);
      if (!channel.ok) return channel;
      const refreshToken = typeof t.json.refresh_token === 'string' ? t.json.refresh_token : null;
      return { ok: true, tokens: { accessToken: t.accessToken, refreshToken, expiresAt: expiresAt(t.json), accountId: channel.id, accountName: channel.name } };
    },

    async refresh(tokens: NetworkTokens): Promise<TokenResult> {
      if (!tokens.refreshToken) return youtubeFailure('token_expired');
      const t = await tokenCall({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken }, 'refreshing the token');
      if (!t.ok) return t;
      // Google usually omits refresh_token on refresh: the old one stays valid.
      const refreshToken = typeof t.json.refresh_token === 'string' ? t.json.refresh_token : tokens.refreshToken;
      return { ok: true, tokens: { ...tokens, accessToken: t.accessToken, refreshToken, expiresAt: expiresAt(t.json) } };
    },
  };
}
