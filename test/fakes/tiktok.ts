import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { overrides, serviceEnv } from '../support/overrides.js';

/**
 * A local TikTok: Login Kit's authorize page and token endpoint, /v2/user/info/, and the Content Posting API
 * (creator_info/query, video/init, inbox/video/init, content/init, the upload URL, status/fetch), with the
 * documented shapes — `{data, error: {code, message, log_id}}`, OAuth's `{error, error_description, log_id}` —
 * and the documented refusals: bearer token and scopes, the creator's privacy options, the unaudited-app rule,
 * verified URL prefixes for PULL_FROM_URL, chunk rules and `Content-Range` order, 6 inits a minute per token,
 * 5 pending inbox drafts. A publication becomes a post once TikTok holds all of it (the last chunk, or an
 * accepted pull): `posts` counts those, so a test can prove nothing was posted twice.
 */

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  json: Record<string, unknown> | null;
  form: URLSearchParams | null;
  token: string | null;
}

type Status = 'PROCESSING_UPLOAD' | 'PROCESSING_DOWNLOAD' | 'SEND_TO_USER_INBOX' | 'PUBLISH_COMPLETE' | 'FAILED';

export interface FakePublication {
  publishId: string;
  token: string;
  kind: 'video' | 'photo';
  mode: 'direct' | 'inbox';
  source: 'FILE_UPLOAD' | 'PULL_FROM_URL';
  postInfo: Record<string, unknown>;
  /** What the post is visible as: SELF_ONLY whatever was asked while the app is unaudited. */
  visibility: string | null;
  media: string[];
  total: number;
  chunkSize: number;
  chunks: number;
  received: number;
  uploadToken: string;
  uploadExpired: boolean;
  /** TikTok holds all of it: the post will be made unless processing fails. */
  committed: boolean;
  status: Status;
  pollsLeft: number;
  failReason: string | null;
  moderationPollsLeft: number;
  videoId: string | null;
  /** Inbox: the creator posted the draft in the app. */
  userPosted: boolean;
}

type Rule = { match: (r: FakeRequest) => boolean; remaining: number } & ({ reply: { status: number; body: unknown } } | { hangMs: number });

const MB = 1024 * 1024;
const PROFILE_FIELDS = ['bio_description', 'profile_deep_link', 'is_verified', 'username'];
const STATS_FIELDS = ['follower_count', 'following_count', 'likes_count', 'video_count'];
const BASIC_FIELDS = ['open_id', 'union_id', 'avatar_url', 'avatar_url_100', 'avatar_large_url', 'display_name'];

class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}
let logSeq = 0;
const logId = () => `2026010112000000${String(++logSeq).padStart(6, '0')}`;
const apiOk = (data: unknown) => new Reply(200, { data, error: { code: 'ok', message: '', log_id: logId() } });
/** The v2 API's error envelope. */
export const apiError = (code: string, message: string) => ({ data: {}, error: { code, message, log_id: logId() } });
const fail = (status: number, code: string, message: string) => new Reply(status, apiError(code, message));
/** Login Kit's OAuth error body. */
export const oauthError = (error: string, description: string) => ({ error, error_description: description, log_id: logId() });
const utf16 = (v: unknown) => (typeof v === 'string' ? v.length : 0);

export async function startFakeTiktok() {
  let seq = 0;
  const next = () => ++seq;
  const rules: Rule[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const requests: FakeRequest[] = [];
  const authorizeRequests: URLSearchParams[] = [];
  const publications = new Map<string, FakePublication>();
  const initTimes = new Map<string, number[]>();
  const codes = new Map<string, { redirectUri: string; scopes: string[] }>();
  const refreshTokens = new Map<string, string[]>(); // refresh token → scopes
  const tokens = new Map<string, string[]>(); // access token → scopes
  const account = { openId: '723f24d7-e717-40f8-a2b6-cb8464cd23b4', unionId: 'c9c60f44-a68e-4f5d-84dd-ce22faeb0ba1', displayName: 'Acme Studio', username: 'acme.studio' };
  const ALL_SCOPES = ['user.info.basic', 'video.publish', 'video.upload'];
  const token = 'act.valid-token';
  tokens.set(token, ALL_SCOPES);

  const knobs = {
    /** The app passed TikTok's audit (public posts allowed). */
    audited: false,
    /** The creator's account is private (its privacy options, and the unaudited rule, depend on it). */
    accountPrivate: true,
    /** URL prefixes verified for the app (PULL_FROM_URL). */
    verifiedPrefixes: ['https://media.example/'],
    /** Status checks answering PROCESSING_* after TikTok holds the media. */
    processingPolls: 0,
    /** Status checks of a public post answering PUBLISH_COMPLETE without its id (moderation). */
    moderationPolls: 0,
    /** The next publication ends FAILED with this fail_reason. */
    nextFailReason: null as string | null,
    /** creator_info answers this code with HTTP 200, as TikTok does for its spam caps. */
    creatorError: null as string | null,
    /** Chunk bounds (Media Transfer Guide): 5 MB to 64 MB, the last up to 128 MB. */
    minChunkBytes: 5 * MB,
    initsPerMinute: 6,
  };

  const privacyOptions = () => (knobs.accountPrivate ? ['FOLLOWER_OF_CREATOR', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY'] : ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'SELF_ONLY']);

  /** The scopes of the bearer token, or the 401 to answer. */
  function authed(r: FakeRequest, need: string[] = []): string[] | Reply {
    const scopes = r.token ? tokens.get(r.token) : undefined;
    if (!scopes) return fail(401, 'access_token_invalid', 'The access token is invalid or not found in the request.');
    if (need.length > 0 && !need.some((s) => scopes.includes(s))) return fail(401, 'scope_not_authorized', `The user did not authorize the scope required: ${need.join(' or ')}`);
    return scopes;
  }

  function rateLimited(r: FakeRequest): Reply | null {
    const now = Date.now();
    const times = (initTimes.get(r.token ?? '') ?? []).filter((t) => now - t < 60_000);
    if (times.length >= knobs.initsPerMinute) return fail(429, 'rate_limit_exceeded', 'Your request is blocked due to exceeding the API rate limit.');
    initTimes.set(r.token ?? '', [...times, now]);
    return null;
  }

  const verified = (u: unknown) => typeof u === 'string' && u.startsWith('https://') && knobs.verifiedPrefixes.some((p) => u.startsWith(p));

  function newPublication(r: FakeRequest, p: Partial<FakePublication> & Pick<FakePublication, 'kind' | 'mode' | 'source' | 'postInfo' | 'media'>): FakePublication {
    const asked = typeof p.postInfo.privacy_level === 'string' ? p.postInfo.privacy_level : null;
    const pub: FakePublication = {
      publishId: `${p.kind === 'photo' ? 'p' : 'v'}_${p.mode === 'inbox' ? 'inbox' : 'pub'}_${p.source === 'FILE_UPLOAD' ? 'file' : 'url'}~v2.${next()}`,
      token: r.token ?? '',
      visibility: p.mode === 'inbox' ? null : knobs.audited ? asked : 'SELF_ONLY',
      total: 0,
      chunkSize: 0,
      chunks: 0,
      received: 0,
      uploadToken: `ut${next()}`,
      uploadExpired: false,
      committed: false,
      status: p.source === 'FILE_UPLOAD' ? 'PROCESSING_UPLOAD' : 'PROCESSING_DOWNLOAD',
      pollsLeft: knobs.processingPolls,
      failReason: null,
      moderationPollsLeft: knobs.moderationPolls,
      videoId: null,
      userPosted: false,
      ...p,
    };
    publications.set(pub.publishId, pub);
    if (pub.source === 'PULL_FROM_URL') commit(pub);
    return pub;
  }

  /** TikTok holds the whole media: from here the post happens unless processing fails. */
  function commit(pub: FakePublication): void {
    pub.committed = true;
    pub.failReason = knobs.nextFailReason;
    knobs.nextFailReason = null;
  }

  /** Validates source_info for a video; a Reply on refusal. */
  function videoSource(si: Record<string, unknown>): Reply | { source: 'FILE_UPLOAD' | 'PULL_FROM_URL'; total: number; chunkSize: number; chunks: number; url: string | null } {
    if (si.source === 'PULL_FROM_URL') {
      if (typeof si.video_url !== 'string' || !si.video_url.startsWith('https://')) return fail(400, 'invalid_param', 'video_url must be an https URL.');
      if (!verified(si.video_url)) return fail(403, 'url_ownership_unverified', 'The developer must verify the ownership of the URL prefix or domain.');
      return { source: 'PULL_FROM_URL', total: 0, chunkSize: 0, chunks: 0, url: si.video_url };
    }
    if (si.source !== 'FILE_UPLOAD') return fail(400, 'invalid_param', 'source must be FILE_UPLOAD or PULL_FROM_URL.');
    const [total, chunk, count] = [si.video_size, si.chunk_size, si.total_chunk_count].map((v) => (typeof v === 'number' && Number.isInteger(v) ? v : -1)) as [number, number, number];
    if (total <= 0 || chunk <= 0 || count <= 0) return fail(400, 'invalid_param', 'video_size, chunk_size and total_chunk_count are required for FILE_UPLOAD.');
    if (total > 4096 * MB) return fail(400, 'invalid_param', 'The video is over 4 GB.');
    if (total < knobs.minChunkBytes && (chunk !== total || count !== 1)) return fail(400, 'invalid_param', 'A video under 5 MB must be uploaded whole.');
    if (total >= knobs.minChunkBytes && (chunk < knobs.minChunkBytes || chunk > 64 * MB) && !(chunk === total && count === 1 && total <= 64 * MB)) return fail(400, 'invalid_param', 'chunk_size must be 5 MB to 64 MB.');
    if (count !== Math.max(1, Math.floor(total / chunk)) || count > 1000) return fail(400, 'invalid_param', 'total_chunk_count must be video_size / chunk_size rounded down.');
    if (total - (count - 1) * chunk > 128 * MB) return fail(400, 'invalid_param', 'The last chunk is over 128 MB.');
    return { source: 'FILE_UPLOAD', total, chunkSize: chunk, chunks: count, url: null };
  }

  function initAnswer(pub: FakePublication, base: string): Reply {
    return apiOk({ publish_id: pub.publishId, ...(pub.source === 'FILE_UPLOAD' ? { upload_url: `${base}/upload/?upload_id=${pub.publishId}&upload_token=${pub.uploadToken}` } : {}) });
  }

  function directPostInfo(pi: Record<string, unknown>, titleMax: number): Reply | null {
    if (!knobs.audited && !knobs.accountPrivate) return fail(403, 'unaudited_client_can_only_post_to_private_accounts', 'Unaudited clients can only post to a private account.');
    if (!privacyOptions().includes(String(pi.privacy_level))) return fail(403, 'privacy_level_option_mismatch', 'privacy_level is not specified or not among the options.');
    if (typeof pi.brand_content_toggle !== 'boolean') return fail(400, 'invalid_param', 'brand_content_toggle is required.');
    if (utf16(pi.title) > titleMax) return fail(400, 'invalid_param', `title is over ${titleMax} UTF-16 runes.`);
    return null;
  }

  function route(r: FakeRequest, base: string): Reply {
    // --- Login Kit.
    if (r.method === 'GET' && r.path === '/v2/auth/authorize/') {
      authorizeRequests.push(r.query);
      const q = r.query;
      const redirect = q.get('redirect_uri');
      if (q.get('client_key') !== 'tt-client-key' || q.get('response_type') !== 'code' || !redirect || !q.get('scope')) return new Reply(400, { error: 'invalid_request' });
      const scopes = (q.get('scope') ?? '').split(',');
      const code = `code-${next()}`;
      codes.set(code, { redirectUri: redirect, scopes });
      const to = new URL(redirect);
      to.searchParams.set('code', code);
      to.searchParams.set('scopes', scopes.join(','));
      to.searchParams.set('state', q.get('state') ?? '');
      return new Reply(302, '', { location: to.toString() });
    }
    if (r.path === '/v2/oauth/token/') {
      const f = r.form;
      if (r.method !== 'POST' || !f) return new Reply(400, oauthError('invalid_request', 'The request parameters are malformed.'));
      if (f.get('client_key') !== 'tt-client-key' || f.get('client_secret') !== 'tt-client-secret') return new Reply(401, oauthError('invalid_client', 'Client key or secret is invalid.'));
      const issue = (scopes: string[]) => {
        const access = `act.${next()}`;
        const refresh = `rft.${next()}`;
        tokens.set(access, scopes);
        refreshTokens.set(refresh, scopes);
        return new Reply(200, { access_token: access, expires_in: 86400, open_id: account.openId, refresh_expires_in: 31536000, refresh_token: refresh, scope: scopes.join(','), token_type: 'Bearer' });
      };
      if (f.get('grant_type') === 'authorization_code') {
        const c = codes.get(f.get('code') ?? '');
        if (!c) return new Reply(400, oauthError('invalid_grant', 'Authorization code is expired.'));
        if (c.redirectUri !== f.get('redirect_uri')) return new Reply(400, oauthError('invalid_request', 'Redirect_uri is not matched with the uri when requesting code.'));
        codes.delete(f.get('code') ?? '');
        return issue(c.scopes);
      }
      if (f.get('grant_type') === 'refresh_token') {
        const scopes = refreshTokens.get(f.get('refresh_token') ?? '');
        if (!scopes) return new Reply(400, oauthError('invalid_grant', 'Refresh token is invalid or expired.'));
        refreshTokens.delete(f.get('refresh_token') ?? ''); // rotated: the old one stops working
        return issue(scopes);
      }
      return new Reply(400, oauthError('unsupported_grant_type', 'The grant type is not supported.'));
    }

    // --- The v2 API.
    if (r.method === 'GET' && r.path === '/v2/user/info/') {
      const scopes = authed(r, ['user.info.basic']);
      if (scopes instanceof Reply) return scopes;
      const fields = (r.query.get('fields') ?? '').split(',').filter(Boolean);
      if (fields.length === 0) return fail(400, 'invalid_params', 'fields is required.');
      const needs = (group: string[], scope: string) => fields.some((f) => group.includes(f)) && !scopes.includes(scope);
      if (needs(PROFILE_FIELDS, 'user.info.profile') || needs(STATS_FIELDS, 'user.info.stats')) return fail(400, 'scope_permission_missed', 'Some fields need additional scopes.');
      const all: Record<string, unknown> = { open_id: account.openId, union_id: account.unionId, avatar_url: 'https://p16.tiktokcdn.example/a.jpeg', display_name: account.displayName, username: account.username };
      return apiOk({ user: Object.fromEntries(fields.filter((f) => BASIC_FIELDS.includes(f) || f === 'username').map((f) => [f, all[f]])) });
    }
    if (r.method !== 'POST' || !r.path.startsWith('/v2/post/publish/')) return fail(404, 'invalid_params', 'Unknown path.');
    const publishing = r.path === '/v2/post/publish/video/init/' || r.path === '/v2/post/publish/inbox/video/init/' || r.path === '/v2/post/publish/content/init/';
    if (r.json === null) return fail(400, 'invalid_param', 'The body must be JSON (application/json; charset=UTF-8).');

    if (r.path === '/v2/post/publish/creator_info/query/') {
      const scopes = authed(r, ['video.publish']);
      if (scopes instanceof Reply) return scopes;
      if (knobs.creatorError) return fail(200, knobs.creatorError, 'The creator cannot post now.');
      return apiOk({
        creator_avatar_url: 'https://p16.tiktokcdn.example/a.jpeg',
        creator_username: account.username,
        creator_nickname: account.displayName,
        privacy_level_options: privacyOptions(),
        comment_disabled: false,
        duet_disabled: knobs.accountPrivate,
        stitch_disabled: knobs.accountPrivate,
        max_video_post_duration_sec: 300,
      });
    }
    if (r.path === '/v2/post/publish/status/fetch/') {
      const scopes = authed(r, ['video.publish', 'video.upload']);
      if (scopes instanceof Reply) return scopes;
      const pub = publications.get(String(r.json.publish_id ?? ''));
      if (!pub) return fail(400, 'invalid_publish_id', 'The publish_id does not exist.');
      return statusOf(pub);
    }
    if (publishing) {
      const scopeFor = r.path === '/v2/post/publish/video/init/' || r.json.post_mode === 'DIRECT_POST' ? 'video.publish' : 'video.upload';
      const scopes = authed(r, [scopeFor]);
      if (scopes instanceof Reply) return scopes;
      const limited = rateLimited(r);
      if (limited) return limited;
      const si = r.json.source_info !== null && typeof r.json.source_info === 'object' ? (r.json.source_info as Record<string, unknown>) : null;
      const pi = r.json.post_info !== null && typeof r.json.post_info === 'object' ? (r.json.post_info as Record<string, unknown>) : {};
      if (!si) return fail(400, 'invalid_param', 'source_info is required.');
      const inbox = r.path === '/v2/post/publish/inbox/video/init/' || r.json.post_mode === 'MEDIA_UPLOAD';
      if (inbox && [...publications.values()].filter((p) => p.mode === 'inbox' && !p.userPosted).length >= 5) {
        return fail(403, 'spam_risk_too_many_pending_share', 'The daily upload cap from the API is reached for the current user.');
      }
      if (r.path === '/v2/post/publish/content/init/') {
        if (r.json.media_type !== 'PHOTO') return fail(400, 'invalid_param', 'media_type must be PHOTO.');
        if (r.json.post_mode !== 'DIRECT_POST' && r.json.post_mode !== 'MEDIA_UPLOAD') return fail(400, 'invalid_param', 'post_mode must be DIRECT_POST or MEDIA_UPLOAD.');
        if (si.source !== 'PULL_FROM_URL') return fail(400, 'invalid_param', 'Only PULL_FROM_URL is allowed for photos.');
        const images = Array.isArray(si.photo_images) ? si.photo_images : [];
        if (images.length === 0 || images.length > 35) return fail(400, 'invalid_param', 'photo_images takes 1 to 35 URLs.');
        const cover = si.photo_cover_index;
        if (typeof cover !== 'number' || cover < 0 || cover >= images.length) return fail(400, 'invalid_param', 'photo_cover_index is required and must index photo_images.');
        if (utf16(pi.description) > 4000) return fail(400, 'invalid_param', 'description is over 4000 UTF-16 runes.');
        if (!inbox) {
          const refused = directPostInfo(pi, 90);
          if (refused) return refused;
        } else if (utf16(pi.title) > 90) return fail(400, 'invalid_param', 'title is over 90 UTF-16 runes.');
        if (!images.every(verified)) return fail(403, 'url_ownership_unverified', 'The developer must verify the ownership of the URL prefix or domain.');
        return initAnswer(newPublication(r, { kind: 'photo', mode: inbox ? 'inbox' : 'direct', source: 'PULL_FROM_URL', postInfo: pi, media: images.map(String) }), base);
      }
      if (!inbox) {
        const refused = directPostInfo(pi, 2200);
        if (refused) return refused;
      } else if (r.json.post_info !== undefined) return fail(400, 'invalid_param', 'The upload endpoint takes source_info only.');
      const src = videoSource(si);
      if (src instanceof Reply) return src;
      const pub = newPublication(r, { kind: 'video', mode: inbox ? 'inbox' : 'direct', source: src.source, postInfo: pi, media: src.url ? [src.url] : [], total: src.total, chunkSize: src.chunkSize, chunks: src.chunks });
      return initAnswer(pub, base);
    }
    return fail(404, 'invalid_params', 'Unknown path.');
  }

  /** Answers a status check, moving the publication along as TikTok would. */
  function statusOf(pub: FakePublication): Reply {
    if (pub.committed && (pub.status === 'PROCESSING_UPLOAD' || pub.status === 'PROCESSING_DOWNLOAD')) {
      if (pub.pollsLeft > 0) pub.pollsLeft--;
      else pub.status = pub.failReason ? 'FAILED' : pub.mode === 'inbox' ? 'SEND_TO_USER_INBOX' : 'PUBLISH_COMPLETE';
    } else if (pub.status === 'PUBLISH_COMPLETE' && pub.videoId === null && pub.visibility === 'PUBLIC_TO_EVERYONE') {
      if (pub.moderationPollsLeft > 0) pub.moderationPollsLeft--;
    }
    if (pub.status === 'PUBLISH_COMPLETE' && pub.videoId === null && pub.visibility === 'PUBLIC_TO_EVERYONE' && pub.moderationPollsLeft === 0) {
      pub.videoId = `74${String(next()).padStart(17, '0')}`; // 19 digits: past Number.MAX_SAFE_INTEGER
    }
    const data: Record<string, unknown> = { status: pub.status, publicaly_available_post_id: '__IDS__' };
    if (pub.status === 'FAILED') data.fail_reason = pub.failReason;
    if (pub.source === 'FILE_UPLOAD') data.uploaded_bytes = pub.received;
    else data.downloaded_bytes = pub.committed ? 1024 : 0;
    return apiOk(data);
  }

  function upload(req: FakeRequest & { raw: Buffer; headers: IncomingMessage['headers'] }): Reply {
    const pub = publications.get(req.query.get('upload_id') ?? '');
    if (!pub || pub.source !== 'FILE_UPLOAD' || pub.uploadToken !== req.query.get('upload_token')) return new Reply(404, 'NotFound');
    if (pub.uploadExpired) return new Reply(403, 'Forbidden');
    if (!['video/mp4', 'video/quicktime', 'video/webm'].includes(String(req.headers['content-type']))) return new Reply(400, 'BadRequest');
    const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(req.headers['content-range'] ?? ''));
    if (!m || Number(m[3]) !== pub.total) return new Reply(400, 'BadRequest');
    const [first, last] = [Number(m[1]), Number(m[2])];
    if (first !== pub.received || pub.committed) return new Reply(416, 'RequestedRangeNotSatisfiable');
    const index = first / pub.chunkSize;
    const expectedLast = index === pub.chunks - 1 ? pub.total - 1 : first + pub.chunkSize - 1;
    if (last !== expectedLast || req.raw.length !== last - first + 1) return new Reply(400, 'BadRequest');
    pub.received = last + 1;
    const range = { 'content-range': `bytes 0-${pub.received - 1}/${pub.total}` };
    if (pub.received < pub.total) return new Reply(206, '', range);
    commit(pub);
    return new Reply(201, '', range);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', base);
    const type = String(req.headers['content-type'] ?? '');
    let json: Record<string, unknown> | null = null;
    if (type.startsWith('application/json')) {
      try {
        const parsed: unknown = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
        json = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
      } catch {
        json = null;
      }
    }
    const form = type.startsWith('application/x-www-form-urlencoded') ? new URLSearchParams(raw.toString('utf8')) : null;
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
    const r: FakeRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, json, form, token };
    requests.push(r);
    const rule = rules.find((x) => x.remaining > 0 && x.match(r));
    if (rule) rule.remaining--;
    const reply =
      rule && 'reply' in rule ? new Reply(rule.reply.status, rule.reply.body) : r.method === 'PUT' && r.path === '/upload/' ? upload({ ...r, raw, headers: req.headers }) : route(r, base);
    const send = () => {
      if (res.destroyed) return;
      if (typeof reply.body === 'string') {
        res.writeHead(reply.status, { ...reply.headers, ...(reply.body ? { 'content-type': 'text/plain' } : {}) }).end(reply.body);
        return;
      }
      // int64 ids go out as JSON numbers, as TikTok sends list<int64>.
      const p = publications.get(String(r.json?.publish_id ?? ''));
      const ids = r.path === '/v2/post/publish/status/fetch/' && p?.videoId ? `[${p.videoId}]` : '[]';
      res.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8', ...reply.headers }).end(JSON.stringify(reply.body).replace('"__IDS__"', ids));
    };
    if (rule && 'hangMs' in rule) {
      const t = setTimeout(() => {
        timers.delete(t);
        send();
      }, rule.hangMs);
      timers.add(t);
    } else send();
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl: base,
    authorizeUrl: `${base}/v2/auth/authorize/`,
    tokenUrl: `${base}/v2/oauth/token/`,
    clientKey: 'tt-client-key',
    clientSecret: 'tt-client-secret',
    token,
    account,
    knobs,
    publications,
    requests,
    authorizeRequests,
    /** Posts made (or certain to be made): publications TikTok holds whole, not failed, and for inbox drafts posted by the creator. */
    get posts(): FakePublication[] {
      return [...publications.values()].filter((p) => p.committed && p.failReason === null && (p.mode === 'direct' || p.userPosted));
    },
    /** Init calls that created a publication. */
    get inits(): number {
      return publications.size;
    },
    /** A token with only these scopes. */
    tokenWith(scopes: string[]): string {
      const t = `act.${next()}`;
      tokens.set(t, scopes);
      return t;
    },
    revokeToken(t: string): void {
      tokens.delete(t);
    },
    /** The upload URL of a publication has expired (an hour after init). */
    expireUpload(publishId: string): void {
      const p = publications.get(publishId);
      if (p) p.uploadExpired = true;
    },
    /** The creator opens the inbox notification and posts the draft. */
    userPostsFromInbox(publishId: string, visibility = 'SELF_ONLY'): void {
      const p = publications.get(publishId);
      if (!p || p.status !== 'SEND_TO_USER_INBOX') throw new Error('no draft in the inbox');
      p.userPosted = true;
      p.visibility = visibility;
      p.status = 'PUBLISH_COMPLETE';
    },
    /** The next `times` requests matching get this answer instead; nothing is done. */
    failNext(match: (r: FakeRequest) => boolean, status: number, body: unknown, times = 1): void {
      rules.push({ match, remaining: times, reply: { status, body } });
    },
    /** The next `times` requests matching are carried out, but answered `hangMs` late (the client has given up). */
    hangNext(match: (r: FakeRequest) => boolean, hangMs: number, times = 1): void {
      rules.push({ match, remaining: times, hangMs });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type FakeTiktok = Awaited<ReturnType<typeof startFakeTiktok>>;

/** Matchers for `failNext` / `hangNext`. */
export const on = {
  creatorInfo: (r: FakeRequest) => r.path === '/v2/post/publish/creator_info/query/',
  videoInit: (r: FakeRequest) => r.path === '/v2/post/publish/video/init/',
  inboxInit: (r: FakeRequest) => r.path === '/v2/post/publish/inbox/video/init/',
  contentInit: (r: FakeRequest) => r.path === '/v2/post/publish/content/init/',
  anyInit: (r: FakeRequest) => /\/(video|content)\/init\/$/.test(r.path),
  upload: (r: FakeRequest) => r.method === 'PUT' && r.path === '/upload/',
  status: (r: FakeRequest) => r.path === '/v2/post/publish/status/fetch/',
  token: (r: FakeRequest) => r.path === '/v2/oauth/token/',
  userInfo: (r: FakeRequest) => r.path === '/v2/user/info/',
};

/** The service settings that point its TikTok adapter and OAuth at this fake. */
export function tiktokEnv(fake: FakeTiktok): Record<string, string> {
  return serviceEnv(
    { TIKTOK_CLIENT_ID: fake.clientKey, TIKTOK_CLIENT_SECRET: fake.clientSecret },
    overrides({ TIKTOK_API_URL: fake.baseUrl, TIKTOK_AUTHORIZE_URL: fake.authorizeUrl, TIKTOK_TOKEN_URL: fake.tokenUrl }),
  );
}
