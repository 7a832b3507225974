import { graphError } from './meta-graph.js';
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NetworkSettings } from '../../src/networks/network-deps.js';

/**
 * A local fake of the Graph API for Facebook Pages (v23.0), close enough to the official request and response
 * shapes to catch mistakes: it checks the bearer token (user vs Page token), `appsecret_proof`, required
 * parameters and requested `fields`, answers Graph error bodies, and counts every public post in `posts`.
 * Knobs script failures (`failNext`), hung answers (`hangNext`, before or after the action) and processing.
 */

export type PostKind = 'feed' | 'photo' | 'video' | 'reel';

export interface FakePost {
  id: string;
  kind: PostKind;
  message: string | null;
  createdTime: number;
  attachedMedia: string[];
  /** Status reads left that still show processing (videos and reels). */
  processingLeft: number;
}

export interface FakeRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Length of the raw body as received. */
  bodyBytes: number;
}

interface ReelSession {
  videoId: string;
  fileUrl: string | null;
  uploadPollsLeft: number;
  finished: boolean;
}

interface Match {
  method?: string;
  path?: RegExp;
}

const VERSION = '/v23.0';

export { graphError };

/** Facebook's timestamp shape: `2024-01-01T12:00:00+0000`. */
const fbTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+0000');

const FIELDS: Record<string, string[]> = {
  post: ['id', 'message', 'created_time', 'permalink_url', 'is_published'],
  video: ['id', 'description', 'created_time', 'permalink_url', 'status'],
  photo: ['id', 'created_time', 'page_story_id'],
  page: ['id', 'name', 'access_token', 'category', 'tasks'],
};

export async function startFakeFacebook(options: { now?: () => number; appSecret?: string } = {}) {
  const now = options.now ?? (() => Date.now());
  const appId = 'fake-app-id';
  const appSecret = options.appSecret ?? 'fake-app-secret';
  const pageId = '1000000000001';
  const pageName = 'Acme Page';
  const pageToken = `EAAPage${randomBytes(8).toString('hex')}`;
  const codes = new Map<string, { redirectUri: string; used: boolean }>();
  const shortTokens = new Set<string>();
  const longTokens = new Set<string>();
  const posts: FakePost[] = [];
  const unpublishedPhotos = new Map<string, { attached: boolean }>();
  const reels = new Map<string, ReelSession>();
  const requests: FakeRequest[] = [];
  const authorizeRequests: URLSearchParams[] = [];
  const failures: { match: Match; status: number; body: unknown }[] = [];
  const hangs: { match: Match; when: 'before' | 'after' }[] = [];
  const knobs = { videoProcessingPolls: 0, reelUploadPolls: 0 };
  const accountsCalledWith: string[] = [];
  let seq = 0;
  const nextId = () => String(2000000000000 + ++seq);
  let origin = '';

  const takeScripted = <T extends { match: Match }>(list: T[], method: string, path: string): T | undefined => {
    const i = list.findIndex((f) => (!f.match.method || f.match.method === method) && (!f.match.path || f.match.path.test(path)));
    return i < 0 ? undefined : list.splice(i, 1)[0];
  };

  /** Picks the requested `fields` (plus id), refusing unknown ones as Graph does. */
  function pick(type: keyof typeof FIELDS, all: Record<string, unknown>, fields: string | undefined): Record<string, unknown> | { bad: string } {
    const wanted = (fields ?? 'id').split(',').filter(Boolean);
    const unknown = wanted.find((f) => !FIELDS[type]?.includes(f));
    if (unknown) return { bad: `(#100) Tried accessing nonexisting field (${unknown}) on node type (${type})` };
    return Object.fromEntries(['id', ...wanted].filter((f) => all[f] !== undefined).map((f) => [f, all[f]]));
  }

  const postView = (p: FakePost): Record<string, unknown> => {
    if (p.kind === 'video' || p.kind === 'reel') {
      const processing = p.processingLeft > 0;
      return {
        id: p.id,
        description: p.message ?? undefined,
        created_time: fbTime(p.createdTime),
        permalink_url: p.kind === 'reel' ? `/reel/${p.id}/` : `/${pageId}/videos/${p.id}/`,
        status: {
          video_status: processing ? 'processing' : 'ready',
          uploading_phase: { status: 'complete' },
          processing_phase: { status: processing ? 'in_progress' : 'complete' },
          publishing_phase: { status: 'complete', publish_status: 'published' },
        },
      };
    }
    const [, story] = p.id.split('_');
    return { id: p.id, message: p.message ?? undefined, created_time: fbTime(p.createdTime), permalink_url: `https://www.facebook.com/${pageId}/posts/${story}`, is_published: true };
  };

  const createPost = (kind: PostKind, message: string | undefined, attachedMedia: string[] = [], id = `${pageId}_${nextId()}`): FakePost => {
    const post: FakePost = { id, kind, message: message ?? null, createdTime: now(), attachedMedia, processingLeft: kind === 'video' || kind === 'reel' ? knobs.videoProcessingPolls : 0 };
    posts.push(post);
    return post;
  };

  type Answer = { status: number; body: unknown };
  const ok = (body: unknown): Answer => ({ status: 200, body });
  const bad = (code: number, message: string, extra: Parameters<typeof graphError>[2] = {}): Answer => ({ status: 400, body: graphError(code, message, extra) });
  const missing = (name: string) => bad(100, `(#100) The parameter ${name} is required`);

  function oauthToken(p: Record<string, string>): Answer {
    if (!p.client_id) return missing('client_id');
    if (p.client_id !== appId) return bad(101, 'Error validating application. Invalid application ID.');
    if (!p.client_secret) return missing('client_secret');
    if (p.client_secret !== appSecret) return bad(1, 'Error validating client secret.');
    if (p.grant_type === 'fb_exchange_token') {
      if (!p.fb_exchange_token) return missing('fb_exchange_token');
      if (!shortTokens.has(p.fb_exchange_token) && !longTokens.has(p.fb_exchange_token)) return bad(190, 'Invalid OAuth access token - Cannot parse access token');
      const token = `EAALong${randomBytes(8).toString('hex')}`;
      longTokens.add(token);
      return ok({ access_token: token, token_type: 'bearer', expires_in: 5_184_000 });
    }
    if (!p.redirect_uri) return missing('redirect_uri');
    if (!p.code) return missing('code');
    const issued = codes.get(p.code);
    if (!issued) return bad(100, 'Invalid verification code format.', { subcode: 36007 });
    if (issued.used) return bad(100, 'This authorization code has been used.', { subcode: 36009 });
    if (issued.redirectUri !== p.redirect_uri) return bad(100, 'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request', { subcode: 36008 });
    issued.used = true;
    const token = `EAAShort${randomBytes(8).toString('hex')}`;
    shortTokens.add(token);
    return ok({ access_token: token, token_type: 'bearer', expires_in: 5400 });
  }

  /** Page edges; the caller has checked the Page token. */
  function pageAction(method: string, edge: string, p: Record<string, string>): Answer {
    if (method === 'POST' && edge === 'feed') {
      if (!p.message && !p.link && !p.attached_media) return bad(100, '(#100) Missing message or attachment');
      let ids: string[] = [];
      if (p.attached_media) {
        try {
          const parsed = JSON.parse(p.attached_media) as unknown;
          if (!Array.isArray(parsed)) throw new Error('not a list');
          ids = parsed.map((m: unknown) => String((m as { media_fbid?: unknown }).media_fbid ?? ''));
        } catch {
          return bad(100, '(#100) param attached_media must be an array.');
        }
        for (const id of ids) {
          const photo = unpublishedPhotos.get(id);
          if (!photo) return bad(100, `(#100) Invalid media_fbid ${id}`);
          if (photo.attached) return bad(100, 'These photos were already posted.', { subcode: 1366051 });
        }
        for (const id of ids) unpublishedPhotos.set(id, { attached: true });
      }
      return ok({ id: createPost('feed', p.message, ids).id });
    }
    if (method === 'POST' && edge === 'photos') {
      if (!p.url && !p.source) return bad(324, '(#324) Requires upload file');
      if (p.published === 'false') {
        const id = nextId();
        unpublishedPhotos.set(id, { attached: false });
        return ok({ id });
      }
      const photoId = nextId();
      return ok({ id: photoId, post_id: createPost('photo', p.message).id });
    }
    if (method === 'POST' && edge === 'videos') {
      if (!p.file_url && !p.source) return bad(100, '(#100) The parameter file_url or source is required');
      return ok({ id: createPost('video', p.description, [], nextId()).id });
    }
    if (method === 'POST' && edge === 'video_reels') {
      if (p.upload_phase === 'start') {
        const videoId = nextId();
        reels.set(videoId, { videoId, fileUrl: null, uploadPollsLeft: 0, finished: false });
        return ok({ video_id: videoId, upload_url: `${origin}/video-upload${VERSION}/${videoId}` });
      }
      if (p.upload_phase === 'finish') {
        if (!p.video_id) return missing('video_id');
        if (!p.video_state) return missing('video_state');
        const reel = reels.get(p.video_id);
        if (!reel) return bad(100, '(#100) Invalid video_id');
        if (!reel.fileUrl || reel.uploadPollsLeft > 0) return bad(6000, 'There was a problem uploading your video file. Please try again with another file.');
        if (!reel.finished && p.video_state === 'PUBLISHED') createPost('reel', p.description, [], reel.videoId);
        reel.finished = true;
        return ok({ success: true });
      }
      return missing('upload_phase');
    }
    if (method === 'GET' && (edge === 'published_posts' || edge === 'videos')) {
      const videos = edge === 'videos';
      const since = p.since ? Number(p.since) * 1000 : 0;
      const limit = p.limit ? Number(p.limit) : 25;
      const type = videos ? 'video' : 'post';
      const rows: Record<string, unknown>[] = [];
      for (const post of [...posts].reverse()) {
        if (videos !== (post.kind === 'video' || post.kind === 'reel') || post.createdTime < since) continue;
        const row = pick(type, postView(post), p.fields);
        if ('bad' in row) return bad(100, String(row.bad));
        rows.push(row);
      }
      return ok({ data: rows.slice(0, limit), paging: {} });
    }
    return bad(2500, 'Unknown path components');
  }

  function nodeRead(id: string, p: Record<string, string>): Answer {
    const post = posts.find((x) => x.id === id);
    const reel = reels.get(id);
    if (!post && reel) {
      // A reel session not finished yet: the status shows the upload and publishing phases.
      const uploading = reel.fileUrl === null ? 'not_started' : reel.uploadPollsLeft > 0 ? 'in_progress' : 'complete';
      if (reel.fileUrl !== null && reel.uploadPollsLeft > 0) reel.uploadPollsLeft--;
      const all = { id, status: { video_status: 'upload_complete', uploading_phase: { status: uploading }, processing_phase: { status: 'not_started' }, publishing_phase: { status: 'not_started' } } };
      const row = pick('video', all, p.fields);
      return 'bad' in row ? bad(100, String(row.bad)) : ok(row);
    }
    if (!post) return bad(100, `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`, { subcode: 33, type: 'GraphMethodException' });
    const view = postView(post);
    const type = post.kind === 'video' || post.kind === 'reel' ? 'video' : 'post';
    const row = pick(type, view, p.fields);
    if ('bad' in row) return bad(100, String(row.bad));
    if (type === 'video' && p.fields?.includes('status') && post.processingLeft > 0) post.processingLeft--;
    return ok(row);
  }

  function route(method: string, path: string, p: Record<string, string>, headers: IncomingHttpHeaders): Answer {
    if (path === '/oauth/access_token') return oauthToken(p);
    // Tokens go in the Authorization header (Graph also takes ?access_token=, which would land in logs).
    if (p.access_token) return bad(100, 'fake: send the token in the Authorization header, not the URL');
    const auth = headers.authorization ?? '';
    const token = /^(Bearer|OAuth) (.+)$/.exec(auth)?.[2];
    if (!token) return bad(2500, 'An active access token must be used to query information about the current user.');
    const isUser = shortTokens.has(token) || longTokens.has(token);
    if (!isUser && token !== pageToken) return bad(190, 'Invalid OAuth access token - Cannot parse access token');
    if (p.appsecret_proof !== undefined && p.appsecret_proof !== createHmac('sha256', appSecret).update(token).digest('hex')) {
      return bad(100, 'Invalid appsecret_proof provided in the API argument', { type: 'GraphMethodException' });
    }
    const [first, edge, ...rest] = path.slice(1).split('/');
    if (rest.length > 0 || !first) return bad(2500, 'Unknown path components');
    if (first === 'me' && edge === 'accounts' && method === 'GET') {
      if (!isUser) return bad(100, '(#100) Tried accessing nonexisting field (accounts) on node type (Page)');
      accountsCalledWith.push(token);
      const row = pick('page', { id: pageId, name: pageName, access_token: pageToken, category: 'Brand', tasks: ['CREATE_CONTENT', 'MANAGE'] }, p.fields);
      return 'bad' in row ? bad(100, String(row.bad)) : ok({ data: [row], paging: { cursors: { before: 'x', after: 'x' } } });
    }
    if (isUser) return bad(200, '(#200) If posting to a page, requires both pages_read_engagement and pages_manage_posts as an admin with sufficient administrative permission');
    if (edge !== undefined) {
      if (first !== pageId) return bad(100, `Unsupported post request. Object with ID '${first}' does not exist`, { subcode: 33, type: 'GraphMethodException' });
      return pageAction(method, edge, p);
    }
    if (method !== 'GET') return bad(2500, 'Unknown path components');
    return nodeRead(first, p);
  }

  /** Reels hosted upload (rupload.facebook.com in production): `Authorization: OAuth`, `file_url` header. */
  function ruploadAction(videoId: string, headers: IncomingHttpHeaders, body: Buffer): Answer {
    if (headers.authorization !== `OAuth ${pageToken}`) return { status: 401, body: { debug_info: { type: 'AuthError', message: 'Invalid OAuth access token' } } };
    const reel = reels.get(videoId);
    if (!reel) return { status: 400, body: { debug_info: { type: 'NotFoundError', message: 'Invalid video id' } } };
    const fileUrl = headers.file_url;
    if (typeof fileUrl === 'string' && fileUrl) reel.fileUrl = fileUrl;
    else {
      // Local-file form: the bytes from `offset`, announced by `file_size`.
      if (headers.offset !== '0' || headers.file_size !== String(body.length) || body.length === 0) {
        return { status: 400, body: { debug_info: { type: 'ParameterValidationError', message: 'file_url, or offset and file_size matching the body, are required' } } };
      }
      reel.fileUrl = `bytes:${body.length}`;
    }
    reel.uploadPollsLeft = knobs.reelUploadPolls;
    return ok({ success: true });
  }

  async function answer(req: IncomingMessage, res: ServerResponse, raw: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const params: Record<string, string> = Object.fromEntries(url.searchParams);
    const type = String(req.headers['content-type'] ?? '');
    if (type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/form-data')) {
      // Files are recorded by size: `source=<file 123 bytes image/png>`.
      const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
      for (const [k, v] of form) params[k] = typeof v === 'string' ? v : `<file ${v.size} bytes ${v.type}>`;
    }
    requests.push({ method, path: url.pathname, params, headers: req.headers, bodyBytes: raw.length });
    // A string body goes out as is (a proxy's HTML error page, a plain-text 429).
    const send = (a: Answer): void =>
      void (typeof a.body === 'string' ? res.writeHead(a.status, { 'content-type': 'text/html' }).end(a.body) : res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body)));

    if (url.pathname === `${VERSION}/dialog/oauth`) {
      authorizeRequests.push(url.searchParams);
      const redirectUri = url.searchParams.get('redirect_uri');
      if (url.searchParams.get('client_id') !== appId || !redirectUri || url.searchParams.get('response_type') !== 'code') return void res.writeHead(400).end('bad authorize request');
      const code = `code-${randomBytes(6).toString('hex')}`;
      codes.set(code, { redirectUri, used: false });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return void res.writeHead(302, { location: back.toString() }).end();
    }

    const scripted = takeScripted(failures, method, url.pathname);
    if (scripted) return send(scripted);
    const hang = takeScripted(hangs, method, url.pathname);
    if (hang?.when === 'before') return; // never answers, does nothing
    let result: Answer;
    if (url.pathname.startsWith(`/video-upload${VERSION}/`)) result = ruploadAction(url.pathname.split('/').pop() ?? '', req.headers, raw);
    else if (!url.pathname.startsWith(`${VERSION}/`)) result = bad(2500, 'Unknown path components');
    else result = route(method, url.pathname.slice(VERSION.length), params, req.headers);
    if (hang?.when === 'after') return; // did the work, never answers
    send(result);
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => void answer(req, res, Buffer.concat(chunks)).catch(() => res.writeHead(500).end()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const settings: NetworkSettings = {
    clientId: appId,
    clientSecret: appSecret,
    apiBaseUrl: `${origin}${VERSION}`,
    authorizeUrl: `${origin}${VERSION}/dialog/oauth`,
    tokenUrl: `${origin}${VERSION}/oauth/access_token`,
    apiVersion: undefined,
  };

  return {
    settings,
    pageId,
    pageName,
    pageToken,
    /** Every public post (feed posts, published photos, videos, finished reels), in creation order. */
    posts,
    requests,
    authorizeRequests,
    knobs,
    /** User tokens `/me/accounts` was called with (proves the long-lived exchange happened first). */
    accountsCalledWith,
    longTokens,
    /** The next request matching `match` gets this answer instead (nothing is done). */
    failNext(match: Match, status: number, body: unknown) {
      failures.push({ match, status, body });
    },
    /** The next matching request never gets an answer: `after` does the work first (outcome unknown to the client). */
    hangNext(match: Match, when: 'before' | 'after') {
      hangs.push({ match, when });
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export type FakeFacebook = Awaited<ReturnType<typeof startFakeFacebook>>;
