import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NetworkSettings } from '../../src/networks/network-deps.js';

/**
 * A local fake of the YouTube Data API v3 and Google's OAuth endpoints, strict about what the real ones require
 * (resumable-upload headers, Content-Range arithmetic, 256 KiB chunk multiples, bearer tokens and their scopes,
 * metadata rules) and answering with Google's shapes (error bodies with `errors[].reason`, 308 + `Range`).
 * It counts every video it creates in `posts`; knobs script errors, dropped connections and hung answers.
 */

export const UPLOAD_SCOPE = 'https://www.googleapis.com/auth/youtube.upload';
export const READONLY_SCOPE = 'https://www.googleapis.com/auth/youtube.readonly';
const CHUNK_UNIT = 256 * 1024;
const CATEGORIES = new Set(['1', '2', '10', '15', '17', '19', '20', '22', '23', '24', '25', '26', '27', '28']);
/** Text that must never reach a caller of the adapter (only its log). */
export const RAW_TEXT = 'FAKE-UPSTREAM-RAW-TEXT';

export type FakeRoute = 'initiate' | 'chunk' | 'status' | 'channels' | 'videos' | 'token';
export type FakeScript =
  /** Answer a Google error body with this status and reason (nothing is stored). */
  | { kind: 'error'; status: number; reason?: string }
  /** Read the request (keeping a chunk's bytes when `persist`), then cut the connection without an answer. */
  | { kind: 'drop'; persist?: boolean }
  /** Do the work (a chunk is stored, a last chunk creates the video) but never answer: the client times out. */
  | { kind: 'hang' }
  /** Answer normally (to script the third chunk, pass the first two). */
  | { kind: 'pass' };

export interface FakeVideo {
  id: string;
  title: string;
  description: string;
  categoryId: string;
  privacyStatus: string;
  madeForKids: boolean;
  bytes: Buffer;
  uploadStatus: 'uploaded' | 'processed' | 'rejected' | 'failed' | 'deleted';
  /** videos.list answers `processing` this many more times. */
  processingPolls: number;
}

interface Session {
  id: string;
  total: number;
  contentType: string;
  received: Buffer[];
  receivedBytes: number;
  resource: { title: string; description: string; categoryId: string; privacyStatus: string; madeForKids: boolean };
  video: FakeVideo | null;
  expired: boolean;
}

export interface YoutubeFake {
  settings: NetworkSettings;
  /** A valid token with every scope, for adapter tests. */
  token: string;
  posts: FakeVideo[];
  sessions: Session[];
  /** Every request on the upload session: chunk PUTs (with their byte count) and status queries. */
  sessionRequests: Array<{ kind: 'chunk' | 'status'; contentRange: string; bytes: number; afterDone: boolean }>;
  /** Query strings the authorize endpoint saw. */
  authorizeRequests: URLSearchParams[];
  accessTokens: Map<string, string>;
  refreshTokens: Set<string>;
  /** The account's channel; null answers an empty list (a Google account without a channel). */
  channel: { id: string; title: string } | null;
  /** Overrides the scope the token endpoint reports granted (the user unticked one). */
  grantedScope: string | null;
  /** Each new video answers `processing` on this many videos.list calls. */
  processingPolls: number;
  /**
   * The API project has not passed YouTube's audit: every upload is locked private whatever it asked for, as
   * videos.insert documents for projects created after 28 July 2020.
   */
  unauditedProject: boolean;
  script(route: FakeRoute, ...steps: FakeScript[]): void;
  close(): Promise<void>;
}

const STATUS_NAMES: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };

function googleError(status: number, reason: string): string {
  return JSON.stringify({
    error: { code: status, message: `${RAW_TEXT} (${reason})`, errors: [{ message: RAW_TEXT, domain: 'youtube.video', reason }], status: STATUS_NAMES[status] ?? 'UNKNOWN' },
  });
}

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=UTF-8', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startYoutubeFake(): Promise<YoutubeFake> {
  const clientId = 'fake-client.apps.googleusercontent.com';
  const clientSecret = 'fake-secret';
  const scripts = new Map<FakeRoute, FakeScript[]>();
  const codes = new Map<string, { redirectUri: string; scope: string; offline: boolean }>();
  const token = `ya29.${randomBytes(8).toString('hex')}`;
  let base = '';

  const fake: YoutubeFake = {
    settings: { clientId, clientSecret, apiBaseUrl: '', authorizeUrl: '', tokenUrl: '', apiVersion: undefined },
    token,
    posts: [],
    sessions: [],
    sessionRequests: [],
    authorizeRequests: [],
    accessTokens: new Map([[token, `${UPLOAD_SCOPE} ${READONLY_SCOPE}`]]),
    refreshTokens: new Set(),
    channel: { id: 'UCfakeChannel0000000000', title: 'Acme Videos' },
    grantedScope: null,
    processingPolls: 0,
    unauditedProject: false,
    script(route, ...steps) {
      scripts.set(route, [...(scripts.get(route) ?? []), ...steps]);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const nextScript = (route: FakeRoute) => scripts.get(route)?.shift();

  /** Checks the bearer token and its scope; answers 401/403 like Google and returns false when refused. */
  function authorized(req: http.IncomingMessage, res: http.ServerResponse, scope: string): boolean {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const granted = m?.[1] === undefined ? undefined : fake.accessTokens.get(m[1]);
    if (granted === undefined) {
      json(res, 401, googleError(401, 'authError'));
      return false;
    }
    if (!granted.split(' ').includes(scope)) {
      json(res, 403, googleError(403, 'insufficientPermissions'));
      return false;
    }
    return true;
  }

  /** Plays the next scripted step of a JSON route; true when it took the request (answered, dropped or hung). */
  async function scripted(route: FakeRoute, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
    const step = nextScript(route);
    if (!step || step.kind === 'pass') return false;
    await readBody(req);
    if (step.kind === 'drop') req.socket.destroy();
    else if (step.kind === 'error' && route === 'token') json(res, step.status, { error: step.reason ?? 'server_error', error_description: RAW_TEXT });
    else if (step.kind === 'error') json(res, step.status, googleError(step.status, step.reason ?? 'backendError'));
    return true;
  }

  function videoResource(v: FakeVideo) {
    return {
      kind: 'youtube#video',
      id: v.id,
      snippet: { title: v.title, description: v.description, categoryId: v.categoryId },
      status: { uploadStatus: v.uploadStatus, privacyStatus: v.privacyStatus, selfDeclaredMadeForKids: v.madeForKids },
    };
  }

  async function tokenEndpoint(req: http.IncomingMessage, res: http.ServerResponse) {
    if (await scripted('token', req, res)) return;
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return json(res, 400, { error: 'invalid_request', error_description: RAW_TEXT });
    const form = new URLSearchParams((await readBody(req)).toString('utf8'));
    if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) return json(res, 401, { error: 'invalid_client', error_description: RAW_TEXT });
    const issue = (scope: string, refresh: boolean) => {
      const access = `ya29.${randomBytes(8).toString('hex')}`;
      fake.accessTokens.set(access, scope);
      const out: Record<string, unknown> = { access_token: access, expires_in: 3599, scope, token_type: 'Bearer' };
      if (refresh) {
        out.refresh_token = `1//${randomBytes(8).toString('hex')}`;
        fake.refreshTokens.add(out.refresh_token as string);
      }
      return out;
    };
    if (form.get('grant_type') === 'authorization_code') {
      const code = codes.get(form.get('code') ?? '');
      if (!code || code.redirectUri !== form.get('redirect_uri')) return json(res, 400, { error: 'invalid_grant', error_description: RAW_TEXT });
      codes.delete(form.get('code') ?? '');
      return json(res, 200, issue(fake.grantedScope ?? code.scope, code.offline));
    }
    if (form.get('grant_type') === 'refresh_token') {
      if (!fake.refreshTokens.has(form.get('refresh_token') ?? '')) return json(res, 400, { error: 'invalid_grant', error_description: RAW_TEXT });
      return json(res, 200, issue(`${UPLOAD_SCOPE} ${READONLY_SCOPE}`, false));
    }
    return json(res, 400, { error: 'unsupported_grant_type', error_description: RAW_TEXT });
  }

  function authorizeEndpoint(url: URL, res: http.ServerResponse) {
    const q = url.searchParams;
    fake.authorizeRequests.push(q);
    const redirectUri = q.get('redirect_uri');
    const scope = q.get('scope') ?? '';
    if (q.get('client_id') !== clientId || !redirectUri || q.get('response_type') !== 'code' || !scope.split(' ').includes(UPLOAD_SCOPE)) {
      res.writeHead(400).end('invalid authorization request');
      return;
    }
    const code = `4/${randomBytes(8).toString('hex')}`;
    // Google returns a refresh token only for offline access on a consent screen.
    codes.set(code, { redirectUri, scope, offline: q.get('access_type') === 'offline' && q.get('prompt') === 'consent' });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    if (q.get('state') !== null) back.searchParams.set('state', q.get('state') ?? '');
    res.writeHead(302, { Location: back.toString() }).end();
  }

  async function initiate(url: URL, req: http.IncomingMessage, res: http.ServerResponse) {
    if (!authorized(req, res, UPLOAD_SCOPE)) return;
    if (await scripted('initiate', req, res)) return;
    const parts = (url.searchParams.get('part') ?? '').split(',');
    const length = Number(req.headers['x-upload-content-length']);
    const type = req.headers['x-upload-content-type'];
    const body = await readBody(req);
    if (url.searchParams.get('uploadType') !== 'resumable' || !parts.includes('snippet') || !parts.includes('status')) return json(res, 400, googleError(400, 'missingRequiredParameter'));
    if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return json(res, 400, googleError(400, 'parseError'));
    if (!Number.isInteger(length) || length <= 0) return json(res, 400, googleError(400, 'mediaBodyRequired'));
    if (typeof type !== 'string' || !(type.startsWith('video/') || type === 'application/octet-stream')) return json(res, 400, googleError(400, 'badContent'));
    const resource = JSON.parse(body.toString('utf8')) as { snippet?: Record<string, unknown>; status?: Record<string, unknown> };
    const title = resource.snippet?.title;
    const description = resource.snippet?.description ?? '';
    const categoryId = resource.snippet?.categoryId;
    if (typeof title !== 'string' || title.trim() === '' || [...title].length > 100 || /[<>]/.test(title)) return json(res, 400, googleError(400, 'invalidTitle'));
    if (typeof description !== 'string' || Buffer.byteLength(description) > 5000 || /[<>]/.test(description)) return json(res, 400, googleError(400, 'invalidDescription'));
    if (typeof categoryId !== 'string' || !CATEGORIES.has(categoryId)) return json(res, 400, googleError(400, 'invalidCategoryId'));
    const privacyStatus = resource.status?.privacyStatus;
    if (privacyStatus !== 'public' && privacyStatus !== 'private' && privacyStatus !== 'unlisted') return json(res, 400, googleError(400, 'invalidVideoMetadata'));
    const session: Session = {
      id: randomBytes(12).toString('base64url'),
      total: length,
      contentType: type,
      received: [],
      receivedBytes: 0,
      resource: { title, description, categoryId, privacyStatus, madeForKids: resource.status?.selfDeclaredMadeForKids === true },
      video: null,
      expired: false,
    };
    fake.sessions.push(session);
    res.writeHead(200, { Location: `${base}/upload/youtube/v3/videos?uploadType=resumable&part=snippet,status&upload_id=${session.id}` }).end();
  }

  /** Appends a chunk; the last byte creates the video (the only place a post is made). */
  function store(session: Session, chunk: Buffer) {
    session.received.push(chunk);
    session.receivedBytes += chunk.length;
    if (session.receivedBytes === session.total && !session.video) {
      const v: FakeVideo = {
        id: randomBytes(8).toString('base64url').slice(0, 11),
        ...session.resource,
        ...(fake.unauditedProject ? { privacyStatus: 'private' } : {}),
        bytes: Buffer.concat(session.received),
        uploadStatus: 'uploaded',
        processingPolls: fake.processingPolls,
      };
      session.video = v;
      fake.posts.push(v);
    }
  }

  function answerSession(session: Session, res: http.ServerResponse) {
    if (session.video) return json(res, 200, videoResource(session.video));
    // 308 Resume Incomplete: no Location (this is not a redirect), Range only once something was kept.
    res.writeHead(308, session.receivedBytes > 0 ? { Range: `bytes=0-${session.receivedBytes - 1}` } : {}).end();
  }

  async function sessionPut(url: URL, req: http.IncomingMessage, res: http.ServerResponse) {
    const session = fake.sessions.find((s) => s.id === url.searchParams.get('upload_id'));
    if (!authorized(req, res, UPLOAD_SCOPE)) return;
    if (!session || session.expired) return json(res, 404, googleError(404, 'notFound'));
    const range = req.headers['content-range'] ?? '';
    const query = /^bytes \*\/(\d+)$/.exec(range);
    const chunk = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range);
    const route: FakeRoute = query ? 'status' : 'chunk';
    const body = await readBody(req);
    fake.sessionRequests.push({ kind: route === 'status' ? 'status' : 'chunk', contentRange: range, bytes: body.length, afterDone: session.video !== null });
    const step = nextScript(route);
    if (step?.kind === 'error') return json(res, step.status, googleError(step.status, step.reason ?? 'backendError'));
    if (step?.kind === 'drop' && !step.persist) return req.socket.destroy();
    if (query) {
      // Google's status query is an empty PUT that says so (Content-Length: 0).
      if (Number(query[1]) !== session.total || body.length !== 0 || req.headers['content-length'] !== '0') return json(res, 400, googleError(400, 'badRequest'));
      if (step?.kind === 'hang') return;
      return answerSession(session, res);
    }
    if (!chunk) return json(res, 400, googleError(400, 'badRequest'));
    const [first, last, total] = [Number(chunk[1]), Number(chunk[2]), Number(chunk[3])];
    if (session.video) return answerSession(session, res);
    if (total !== session.total || first !== session.receivedBytes || last < first || last >= total || body.length !== last - first + 1) return json(res, 400, googleError(400, 'badRequest'));
    if (last + 1 < total && body.length % CHUNK_UNIT !== 0) return json(res, 400, googleError(400, 'badRequest'));
    store(session, body);
    if (step?.kind === 'drop') return req.socket.destroy();
    if (step?.kind === 'hang') return;
    answerSession(session, res);
  }

  async function channels(url: URL, req: http.IncomingMessage, res: http.ServerResponse) {
    if (!authorized(req, res, READONLY_SCOPE)) return;
    if (await scripted('channels', req, res)) return;
    if (!(url.searchParams.get('part') ?? '').split(',').includes('snippet') || url.searchParams.get('mine') !== 'true') return json(res, 400, googleError(400, 'missingRequiredParameter'));
    const items = fake.channel ? [{ kind: 'youtube#channel', id: fake.channel.id, snippet: { title: fake.channel.title } }] : [];
    json(res, 200, { kind: 'youtube#channelListResponse', items });
  }

  async function videos(url: URL, req: http.IncomingMessage, res: http.ServerResponse) {
    if (!authorized(req, res, READONLY_SCOPE)) return;
    if (await scripted('videos', req, res)) return;
    const ids = (url.searchParams.get('id') ?? '').split(',').filter(Boolean);
    if (!url.searchParams.get('part') || ids.length === 0) return json(res, 400, googleError(400, 'missingRequiredParameter'));
    const items = fake.posts
      .filter((v) => ids.includes(v.id))
      .map((v) => {
        const processing = v.processingPolls > 0 && v.uploadStatus === 'uploaded';
        if (processing) v.processingPolls -= 1;
        else if (v.uploadStatus === 'uploaded') v.uploadStatus = 'processed';
        return { ...videoResource(v), processingDetails: { processingStatus: processing ? 'processing' : 'succeeded' } };
      });
    json(res, 200, { kind: 'youtube#videoListResponse', items });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    const route = `${req.method ?? ''} ${url.pathname}`;
    const handled = (async () => {
      if (route === 'GET /o/oauth2/v2/auth') return authorizeEndpoint(url, res);
      if (route === 'POST /token') return tokenEndpoint(req, res);
      if (route === 'POST /upload/youtube/v3/videos') return initiate(url, req, res);
      if (route === 'PUT /upload/youtube/v3/videos') return sessionPut(url, req, res);
      if (route === 'GET /youtube/v3/channels') return channels(url, req, res);
      if (route === 'GET /youtube/v3/videos') return videos(url, req, res);
      json(res, 404, googleError(404, 'notFound'));
    })();
    handled.catch(() => {
      if (!res.headersSent) json(res, 500, googleError(500, 'backendError'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.settings = { ...fake.settings, apiBaseUrl: base, authorizeUrl: `${base}/o/oauth2/v2/auth`, tokenUrl: `${base}/token` };
  return fake;
}
