import { JOB_ERROR_MESSAGES } from '../../vocabulary/job-errors.js';
import type { Confirmation, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { classifyContainerError, classifyInstagramError, parseGraphError } from './errors.js';
import type { NetworkDeps, NetworkOAuth, NetworkSettings, TokenResult } from '../network-oauth.js';

/** Instagram API with Instagram Login (graph.instagram.com): content publishing in three steps. */

const TIMEOUT_MS = 30_000;
const SCOPES = ['instagram_business_basic', 'instagram_business_content_publish'];
/** Short in-call polls of a container before handing back `pending` (the worker asks again later). */
const QUICK_POLLS = 3;
const QUICK_POLL_MS = 2_000;
/** After a media_publish with no answer, give that call this long to land before sending another one. */
const SETTLE_MS = 30_000;
/** Listing lookups that may miss (the listing can lag) before we give up naming the published post. */
const MAX_LOOKUP_MISSES = 5;
/** Clock skew allowed between our clock and Instagram's media timestamps. */
const SKEW_MS = 10 * 60_000;

type Json = Record<string, unknown>;
type Call = { ok: true; data: Json } | { ok: false; failure: NetworkFailure; status: number; code: number | undefined; subcode: number | undefined };
type Shape = { kind: 'image'; url: string } | { kind: 'reel'; url: string } | { kind: 'carousel'; urls: string[] };

const fail = (code: NetworkFailure['code'], message = JOB_ERROR_MESSAGES[code], retryable = false): NetworkFailure => ({ ok: false, code, retryable, message });
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);
const normalizeCaption = (s: string | null | undefined) => (s ?? '').replace(/\r\n/g, '\n').trim();

/** One HTTP call with a timeout; failures are mapped (spec 7.4), raw bodies go to the log only. */
async function http(deps: NetworkDeps, label: string, url: string, init: { method?: 'GET' | 'POST'; token?: string; form?: Record<string, string> } = {}): Promise<Call> {
  const headers: Record<string, string> = {};
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  let res: Response;
  let text: string;
  try {
    res = await deps.fetch(url, {
      method: init.method ?? 'GET',
      headers,
      body: init.form ? new URLSearchParams(init.form) : undefined,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    text = await res.text();
  } catch (err) {
    deps.log('instagram: no answer', { endpoint: label, error: err instanceof Error ? err.name : 'unknown' });
    return { ok: false, failure: classifyInstagramError({ status: 0 }), status: 0, code: undefined, subcode: undefined };
  }
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON: the status decides */
  }
  if (res.ok && typeof body === 'object' && body !== null && !('error' in body)) return { ok: true, data: body as Json };
  deps.log('instagram: error answer', { endpoint: label, status: res.status, body: text.slice(0, 2000) });
  const info = parseGraphError(res.status, body, text);
  return { ok: false, failure: classifyInstagramError(info), status: res.status, code: info.code, subcode: info.subcode };
}

/** What a content becomes on Instagram; a failure when Instagram cannot carry it. */
function shapeOf(req: PublishRequest): Shape | NetworkFailure {
  // Instagram downloads each file itself: an upload goes by its signed public address.
  const urls = req.media.map((m) => m.publicUrl ?? m.url);
  if (urls.length === 0 || urls.some((u) => !/^https?:\/\//i.test(u))) {
    return fail('upstream_unknown', 'Instagram fetches media from a public http(s) address, and this media has none.');
  }
  if (req.contentType === 'photo') return urls.length === 1 ? { kind: 'image', url: urls[0]! } : { kind: 'carousel', urls: urls.slice(0, 10) };
  if (req.contentType === 'video' || req.contentType === 'reel') {
    // Videos are published as reels (Meta, July 2023); a reel holds exactly one video.
    return urls.length === 1 ? { kind: 'reel', url: urls[0]! } : fail('media_unsupported_format', 'An Instagram reel holds exactly one video. Send a single video.');
  }
  return fail('media_unsupported_format', 'Instagram publishes photos, carousels and reels only.');
}

/** The Graph `media_type` of the published media for each shape (reels list as VIDEO). */
const LISTED_TYPE: Record<Shape['kind'], string> = { image: 'IMAGE', reel: 'VIDEO', carousel: 'CAROUSEL_ALBUM' };

/** This adapter's part of `req.progress`, valid only for the container it was saved for. */
interface Progress {
  publishStartedAt: number | null;
  mediaId: string | null;
  lookupMisses: number;
}

function readProgress(p: Record<string, unknown> | null, containerId: string): Progress {
  if (p?.ig_container_id !== containerId) return { publishStartedAt: null, mediaId: null, lookupMisses: 0 };
  return {
    publishStartedAt: typeof p.ig_publish_started_at === 'number' ? p.ig_publish_started_at : null,
    mediaId: typeof p.ig_media_id === 'string' ? p.ig_media_id : null,
    lookupMisses: typeof p.ig_lookup_misses === 'number' ? p.ig_lookup_misses : 0,
  };
}

/**
 * The Instagram adapter. `submit` reads the publishing quota and creates the container (children first for a
 * carousel); nothing is public. `publish` looks the container up before anything else, records the attempt
 * before `media_publish` and, when an earlier attempt's outcome is unknown, finds the post it made instead of
 * publishing again. `confirm` reads the media's permalink.
 */
export function createInstagramAdapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  const api = settings.apiBaseUrl.replace(/\/+$/, '');
  const get = (label: string, path: string, token: string, query: Record<string, string> = {}) =>
    http(deps, label, `${api}/${path}?${new URLSearchParams(query).toString()}`, { token });
  const post = (label: string, path: string, token: string, form: Record<string, string>) => http(deps, label, `${api}/${path}`, { method: 'POST', token, form });

  async function createContainer(userId: string, token: string, form: Record<string, string>): Promise<string | NetworkFailure> {
    const r = await post('create_container', `${encodeURIComponent(userId)}/media`, token, form);
    if (!r.ok) return r.failure;
    return str(r.data.id) ?? fail('upstream_unknown');
  }

  async function save(req: PublishRequest, containerId: string, p: Progress): Promise<boolean> {
    return req.saveProgress({ ...req.progress, ig_container_id: containerId, ig_publish_started_at: p.publishStartedAt, ig_media_id: p.mediaId, ig_lookup_misses: p.lookupMisses });
  }

  /** The post is live: the permalink is a nicety, never a reason to fail (and risk publishing again). */
  async function done(token: string, mediaId: string, url?: string): Promise<Published> {
    if (url !== undefined) return { ok: true, postId: mediaId, url };
    const r = await get('permalink', encodeURIComponent(mediaId), token, { fields: 'permalink' });
    const permalink = r.ok ? str(r.data.permalink) : undefined;
    return permalink === undefined ? { ok: true, postId: mediaId } : { ok: true, postId: mediaId, url: permalink };
  }

  /** Container status with a few short polls; `IN_PROGRESS` after them is left to the worker's next call. */
  async function containerStatus(token: string, containerId: string): Promise<{ code: string; text: string | undefined } | NetworkFailure> {
    for (let i = 0; ; i++) {
      const r = await get('container_status', encodeURIComponent(containerId), token, { fields: 'status_code,status' });
      if (!r.ok) return r.failure;
      const code = str(r.data.status_code) ?? '';
      if (code !== 'IN_PROGRESS' || i + 1 >= QUICK_POLLS) return { code, text: str(r.data.status) };
      await deps.sleep(QUICK_POLL_MS);
    }
  }

  /**
   * The container says PUBLISHED but we hold no media id (the answer to media_publish was lost). Containers do
   * not name their media, so find it in the account's newest media: same caption and type, published no
   * earlier than our recorded attempt; the oldest such one is ours.
   */
  async function recover(req: PublishRequest, userId: string, token: string, containerId: string, p: Progress): Promise<Published> {
    const shape = shapeOf(req);
    if ('ok' in shape) return shape;
    const r = await get('media_list', `${encodeURIComponent(userId)}/media`, token, { fields: 'id,caption,media_type,timestamp,permalink', limit: '50' });
    if (!r.ok) return r.failure;
    const items = Array.isArray(r.data.data) ? (r.data.data as Json[]) : [];
    const since = p.publishStartedAt === null ? -Infinity : p.publishStartedAt - SKEW_MS;
    const mine = items
      .map((m) => ({ id: str(m.id), caption: str(m.caption), type: str(m.media_type), at: Date.parse(str(m.timestamp) ?? ''), url: str(m.permalink) }))
      .filter((m) => m.id !== undefined && m.type === LISTED_TYPE[shape.kind] && normalizeCaption(m.caption) === normalizeCaption(req.text) && !(m.at < since))
      .sort((a, b) => a.at - b.at)[0];
    if (mine?.id !== undefined) {
      await save(req, containerId, { ...p, mediaId: mine.id });
      return done(token, mine.id, mine.url);
    }
    const misses = p.lookupMisses + 1;
    await save(req, containerId, { ...p, lookupMisses: misses });
    deps.log('instagram: published container not found in the media listing', { container: containerId, misses });
    if (misses >= MAX_LOOKUP_MISSES) {
      return fail('confirmacao_esgotada', 'Instagram reports the post as published, but it could not be found on the account. Check the account before publishing again.');
    }
    return { ok: 'pending', retryAfterMs: 15_000 };
  }

  return {
    async submit(req): Promise<Submitted> {
      const cred = req.credentials;
      if (!cred) return fail('upstream_unknown');
      const shape = shapeOf(req);
      if ('ok' in shape) return shape;
      const userId = encodeURIComponent(cred.accountId);
      // The account's own rolling 24 h cap (a carousel counts once); read it rather than hard-coding it.
      const quota = await get('publishing_limit', `${userId}/content_publishing_limit`, cred.accessToken, { fields: 'quota_usage,config' });
      if (!quota.ok) return quota.failure;
      const row = (Array.isArray(quota.data.data) ? quota.data.data[0] : undefined) as Json | undefined;
      const used = Number(row?.quota_usage ?? 0);
      const total = Number((row?.config as Json | undefined)?.quota_total ?? Infinity);
      if (used >= total) return fail('quota_exceeded');

      const caption = req.text ?? '';
      let containerId: string | NetworkFailure;
      if (shape.kind === 'image') containerId = await createContainer(cred.accountId, cred.accessToken, { image_url: shape.url, caption });
      else if (shape.kind === 'reel') containerId = await createContainer(cred.accountId, cred.accessToken, { video_url: shape.url, media_type: 'REELS', caption });
      else {
        const children: string[] = [];
        for (const url of shape.urls) {
          const child = await createContainer(cred.accountId, cred.accessToken, { image_url: url, is_carousel_item: 'true' });
          if (typeof child !== 'string') return child;
          children.push(child);
        }
        containerId = await createContainer(cred.accountId, cred.accessToken, { media_type: 'CAROUSEL', children: children.join(','), caption });
      }
      return typeof containerId === 'string' ? { ok: true, containerId } : containerId;
    },

    async publish(req, containerId): Promise<Published> {
      const cred = req.credentials;
      if (!cred) return fail('upstream_unknown');
      const token = cred.accessToken;
      const p = readProgress(req.progress, containerId);
      if (p.mediaId !== null) return done(token, p.mediaId);

      const status = await containerStatus(token, containerId);
      if ('ok' in status) return status;
      switch (status.code) {
        case 'IN_PROGRESS':
          return { ok: 'pending', retryAfterMs: req.contentType === 'photo' ? 5_000 : 30_000 };
        case 'ERROR':
          deps.log('instagram: container error', { container: containerId, status: status.text });
          return classifyContainerError(status.text);
        case 'EXPIRED':
          return fail('upstream_unknown', 'The media prepared on Instagram expired (after 24 h) before it was published. Publish the content again.');
        case 'PUBLISHED':
          return recover(req, cred.accountId, token, containerId, p);
        case 'FINISHED':
          break;
        default:
          deps.log('instagram: unknown container status', { container: containerId, status: status.code });
          return fail('upstream_unknown');
      }

      // An earlier media_publish got no answer and the container is not PUBLISHED yet: that call may still
      // land. Wait it out before sending another one (Instagram also refuses a second publish of a container).
      const now = deps.now();
      if (p.publishStartedAt !== null && now - p.publishStartedAt < SETTLE_MS) {
        return { ok: 'pending', retryAfterMs: SETTLE_MS - (now - p.publishStartedAt) };
      }
      const attempt: Progress = { ...p, publishStartedAt: now };
      // Recorded before the step that makes the post public, so a run cut off here looks the post up.
      if (!(await save(req, containerId, attempt))) return { ok: 'pending', retryAfterMs: SETTLE_MS };
      const r = await post('media_publish', `${encodeURIComponent(cred.accountId)}/media_publish`, token, { creation_id: containerId });
      if (r.ok) {
        const mediaId = str(r.data.id);
        if (mediaId === undefined) return fail('upstream_unknown');
        await save(req, containerId, { ...attempt, mediaId });
        return done(token, mediaId);
      }
      if (r.failure.code === 'token_expired' || r.failure.code === 'permission_revoked') return r.failure;
      // No answer, or an error that may hide a publish that happened (a container publishes once): look again.
      const again = await get('container_status', encodeURIComponent(containerId), token, { fields: 'status_code' });
      if (again.ok && str(again.data.status_code) === 'PUBLISHED') return recover(req, cred.accountId, token, containerId, attempt);
      return r.failure;
    },

    async confirm(req, postId): Promise<Confirmation> {
      if (!req.credentials) return { state: 'unavailable' };
      const r = await get('confirm', encodeURIComponent(postId), req.credentials.accessToken, { fields: 'id,permalink' });
      if (r.ok) {
        const url = str(r.data.permalink);
        return url === undefined ? { state: 'pending' } : { state: 'found', url };
      }
      // 100/33: "object does not exist" (deleted, or never made); a 404 says the same.
      if ((r.code === 100 && r.subcode === 33) || r.status === 404) return { state: 'not_found' };
      return { state: 'unavailable' };
    },
  };
}

/**
 * Business Login for Instagram: authorization code → short-lived token (1 h) → long-lived token (60 days),
 * refreshed with `ig_refresh_token` (the token must be at least 24 h old). The account is read with
 * `GET /me?fields=user_id,username`; `user_id` is the professional account id used for publishing.
 */
export function createInstagramOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  const api = settings.apiBaseUrl.replace(/\/+$/, '');
  // The token exchange and refresh endpoints live at the host root, outside the versioned path.
  const root = api.replace(/\/v\d+(\.\d+)?$/, '');
  const notConfigured = () => fail('upstream_unknown', 'Instagram is not configured on this service (client id and secret).');

  function longLived(data: Json): { token: string; expiresAt: number | null } | undefined {
    const token = str(data.access_token);
    if (token === undefined) return undefined;
    const expiresIn = Number(data.expires_in);
    return { token, expiresAt: Number.isFinite(expiresIn) ? deps.now() + expiresIn * 1000 : null };
  }

  return {
    authorizationUrl({ state, redirectUri }) {
      if (!settings.clientId) throw new Error('instagram: clientId is not configured');
      const q = new URLSearchParams({ client_id: settings.clientId, redirect_uri: redirectUri, response_type: 'code', scope: SCOPES.join(','), state });
      return `${settings.authorizeUrl}?${q.toString()}`;
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      if (!settings.clientId || !settings.clientSecret) return notConfigured();
      const form = { client_id: settings.clientId, client_secret: settings.clientSecret, grant_type: 'authorization_code', redirect_uri: redirectUri, code };
      const short = await http(deps, 'oauth_token', settings.tokenUrl, { method: 'POST', form });
      if (!short.ok) return short.failure;
      // Business Login answers {data: [{access_token, user_id, permissions}]}; older apps get the flat object.
      const first = Array.isArray(short.data.data) ? ((short.data.data[0] ?? {}) as Json) : short.data;
      const shortToken = str(first.access_token);
      if (shortToken === undefined) return fail('upstream_unknown');
      const granted = first.permissions;
      const grantedList = Array.isArray(granted) ? granted.map(String) : typeof granted === 'string' ? granted.split(',') : null;
      if (grantedList !== null && !grantedList.map((s) => s.trim()).includes('instagram_business_content_publish')) {
        return fail('permission_revoked', 'The Instagram account did not grant the publishing permission. Connect it again and allow publishing.');
      }

      const q = new URLSearchParams({ grant_type: 'ig_exchange_token', client_secret: settings.clientSecret, access_token: shortToken });
      const exchanged = await http(deps, 'ig_exchange_token', `${root}/access_token?${q.toString()}`);
      if (!exchanged.ok) return exchanged.failure;
      const long = longLived(exchanged.data);
      if (!long) return fail('upstream_unknown');

      const me = await http(deps, 'me', `${api}/me?fields=user_id,username`, { token: long.token });
      if (!me.ok) return me.failure;
      const accountId = str(me.data.user_id) ?? str(first.user_id);
      if (accountId === undefined) return fail('upstream_unknown');
      const accountName = str(me.data.username) ?? accountId;
      return { ok: true, tokens: { accessToken: long.token, refreshToken: null, expiresAt: long.expiresAt, accountId, accountName } };
    },

    async refresh(tokens): Promise<TokenResult> {
      const q = new URLSearchParams({ grant_type: 'ig_refresh_token', access_token: tokens.accessToken });
      const r = await http(deps, 'ig_refresh_token', `${root}/refresh_access_token?${q.toString()}`);
      if (!r.ok) return r.failure;
      const long = longLived(r.data);
      if (!long) return fail('upstream_unknown');
      return { ok: true, tokens: { ...tokens, accessToken: long.token, expiresAt: long.expiresAt } };
    },
  };
}
