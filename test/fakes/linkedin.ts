import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for LinkedIn's REST API (Posts, Images, Videos), OpenID userinfo and OAuth endpoints, with the
 * official paths, headers and error bodies (`{status, code, serviceErrorCode?, message}`). It refuses what the
 * real API refuses — a missing `LinkedIn-Version` or `X-Restli-Protocol-Version`, a sunset version, a bad token,
 * unencoded URNs in paths, malformed bodies — and truncates commentary at an unescaped "little text" character
 * as LinkedIn silently does. Every created post is kept in `posts` so tests can prove nothing was posted twice.
 */

type AssetStatus = 'WAITING_UPLOAD' | 'PROCESSING' | 'AVAILABLE' | 'PROCESSING_FAILED';

export interface FakePost {
  id: string;
  author: string;
  commentary: string;
  visibility: string;
  distribution: unknown;
  lifecycleState: string;
  content?: unknown;
  createdAt: number;
  lastModifiedAt: number;
}

export interface FakeAsset {
  urn: string;
  owner: string;
  status: AssetStatus;
  /** Polls that still answer PROCESSING. */
  pollsLeft: number;
  bytes: number;
  /** Video: expected parts and the ETags handed out for uploaded ones. */
  parts: { firstByte: number; lastByte: number; etag: string | null }[];
  finalizedWith: string[] | null;
}

export interface ScriptedAnswer {
  method: string;
  /** Prefix of the request path and query, e.g. `/rest/posts`, `/rest/videos?action=finalizeUpload`, `/dms-uploads/video`. */
  path: string;
  status: number;
  body?: unknown;
}

export interface FakeLinkedin {
  /** API base (settings.apiBaseUrl); upload URLs are served from here too. */
  baseUrl: string;
  authorizeUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  member: { sub: string; name: string; urn: string };
  /** A valid access token of `member`. */
  token: string;
  /** Tokens that answer 401 EXPIRED_ACCESS_TOKEN. */
  expiredTokens: Set<string>;
  posts: FakePost[];
  /** POST /rest/posts requests that passed the header checks (created or not). */
  postAttempts: number;
  images: Map<string, FakeAsset>;
  videos: Map<string, FakeAsset>;
  initializeCalls: { images: number; videos: number };
  partUploads: number;
  authorizeRequests: URLSearchParams[];
  requests: { method: string; path: string }[];
  /** Knobs. */
  partSize: number;
  imageProcessingPolls: number;
  videoProcessingPolls: number;
  videoProcessingFails: boolean;
  newPostLifecycle: string;
  /** The author finder answers 403 (r_member_social is for partners only). */
  finderForbidden: boolean;
  /** The author finder does not list new posts yet (index lag). */
  finderLags: boolean;
  /** Refuse identical content by the same author with 422 "Content is a duplicate of …" (as LinkedIn does). */
  rejectDuplicates: boolean;
  /** Answer the next matching request with this status and body (once), without doing anything. */
  failNext(answer: ScriptedAnswer): void;
  /** Do the next matching request's work (method and path/query prefix) but never answer (the client times out). */
  hangNext(method: string, path: string): void;
  close(): Promise<void>;
}

const RESERVED = new Set(['\\', '|', '{', '}', '@', '[', ']', '(', ')', '<', '>', '*', '_', '~']);

/** LinkedIn cuts the commentary at the first unescaped reserved character ('#' starts a hashtag, so it stays). */
function littleTextAsStored(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (c === '\\') {
      i++;
      continue;
    }
    if (RESERVED.has(c)) return text.slice(0, i);
  }
  return text;
}

const rec = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const restError = (status: number, code: string, message: string, extra: Record<string, unknown> = {}) => ({ status, code, message, ...extra });
const required = (field: string) => ({ message: `ERROR :: ${field} :: field is required but not found and has no default value\n`, status: 422 });

/** Starts the fake on 127.0.0.1 and a free port. */
export async function startFakeLinkedin(options: { activeSince?: string } = {}): Promise<FakeLinkedin> {
  const activeSince = options.activeSince ?? '202506';
  const scripted: ScriptedAnswer[] = [];
  const hangs: { method: string; path: string }[] = [];
  const hanging: ServerResponse[] = [];
  const tokens = new Map<string, string>();
  const codes = new Map<string, string>();
  let seq = 0;
  const next = () => ++seq;

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, restError(500, 'INTERNAL_SERVER_ERROR', String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake: FakeLinkedin = {
    baseUrl: base,
    authorizeUrl: `${base}/oauth/v2/authorization`,
    tokenUrl: `${base}/oauth/v2/accessToken`,
    clientId: 'fake-client-id',
    clientSecret: 'fake-client-secret',
    member: { sub: 'yrZCpj2Z12', name: 'Ada Lovelace', urn: 'urn:li:person:yrZCpj2Z12' },
    token: 'AQV-valid-token',
    expiredTokens: new Set(),
    posts: [],
    postAttempts: 0,
    images: new Map(),
    videos: new Map(),
    initializeCalls: { images: 0, videos: 0 },
    partUploads: 0,
    authorizeRequests: [],
    requests: [],
    partSize: 4 * 1024 * 1024,
    imageProcessingPolls: 0,
    videoProcessingPolls: 0,
    videoProcessingFails: false,
    newPostLifecycle: 'PUBLISHED',
    finderForbidden: false,
    finderLags: false,
    rejectDuplicates: true,
    failNext: (answer) => void scripted.push(answer),
    hangNext: (method, path) => void hangs.push({ method, path }),
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  tokens.set(fake.token, fake.member.sub);

  function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, { ...(text ? { 'content-type': 'application/json' } : {}), ...headers });
    res.end(text);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    fake.requests.push({ method, path: rawPath });
    const header = (name: string) => {
      const v = req.headers[name.toLowerCase()];
      return Array.isArray(v) ? v[0] : v;
    };
    const json = (): Record<string, unknown> | null => {
      try {
        return rec(JSON.parse(raw.toString('utf8')));
      } catch {
        return null;
      }
    };
    const target = req.url ?? '/';
    const hangAt = hangs.findIndex((h) => h.method === method && target.startsWith(h.path));
    const hang = hangAt >= 0 ? hangs.splice(hangAt, 1).length > 0 : false;
    const reply = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      if (hang) hanging.push(res);
      else send(res, status, body, headers);
    };
    const scriptedAnswer = () => {
      const i = scripted.findIndex((s) => s.method === method && target.startsWith(s.path));
      if (i < 0) return false;
      const [s] = scripted.splice(i, 1);
      send(res, s?.status ?? 500, s?.body);
      return true;
    };
    /** The member behind the bearer token, or null after answering 401. */
    const bearer = (): string | null => {
      const token = /^Bearer (.+)$/.exec(header('authorization') ?? '')?.[1] ?? '';
      if (fake.expiredTokens.has(token)) {
        send(res, 401, restError(401, 'EXPIRED_ACCESS_TOKEN', 'The token used in the request has expired', { serviceErrorCode: 65602 }));
        return null;
      }
      const sub = tokens.get(token);
      if (!sub) send(res, 401, restError(401, 'INVALID_ACCESS_TOKEN', 'Invalid access token', { serviceErrorCode: 65600 }));
      return sub ? `urn:li:person:${sub}` : null;
    };

    // --- OAuth 2.0 (3-legged) and OpenID userinfo: unversioned, no Rest.li headers.
    if (method === 'GET' && rawPath === '/oauth/v2/authorization') {
      fake.authorizeRequests.push(url.searchParams);
      const q = url.searchParams;
      const redirect = q.get('redirect_uri');
      if (q.get('response_type') !== 'code' || q.get('client_id') !== fake.clientId || !redirect || !q.get('scope')) {
        return send(res, 400, { error: 'invalid_request', error_description: 'response_type, client_id, redirect_uri and scope are required' });
      }
      const code = `AQT-code-${next()}`;
      codes.set(code, redirect);
      const to = new URL(redirect);
      to.searchParams.set('code', code);
      if (q.get('state')) to.searchParams.set('state', q.get('state') ?? '');
      return send(res, 302, undefined, { location: to.toString() });
    }
    if (rawPath === '/oauth/v2/accessToken') {
      if (method !== 'POST' || !(header('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) {
        return send(res, 400, { error: 'invalid_request', error_description: 'A form-encoded POST is required' });
      }
      if (scriptedAnswer()) return;
      const form = new URLSearchParams(raw.toString('utf8'));
      if (form.get('grant_type') !== 'authorization_code') return send(res, 400, { error: 'unsupported_grant_type', error_description: 'Unsupported grant type' });
      if (form.get('client_id') !== fake.clientId || form.get('client_secret') !== fake.clientSecret) {
        return send(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed' });
      }
      const code = form.get('code') ?? '';
      if (!codes.has(code) || codes.get(code) !== form.get('redirect_uri')) {
        return send(res, 400, {
          error: 'invalid_request',
          error_description: 'Unable to retrieve access token: appid/redirect uri/code verifier does not match authorization code. Or authorization code expired.',
        });
      }
      codes.delete(code); // single use
      const accessToken = `AQV-issued-${next()}`;
      tokens.set(accessToken, fake.member.sub);
      return send(res, 200, { access_token: accessToken, expires_in: 5_183_999, scope: 'openid,profile,w_member_social', token_type: 'Bearer', id_token: 'eyJ.fake.jwt' });
    }
    if (method === 'GET' && rawPath === '/v2/userinfo') {
      if (bearer() === null) return;
      if (scriptedAnswer()) return;
      const [given, family] = fake.member.name.split(' ');
      return send(res, 200, { sub: fake.member.sub, name: fake.member.name, given_name: given, family_name: family, locale: { country: 'US', language: 'en' }, email_verified: true });
    }

    // --- Pre-signed upload URLs.
    const imageUpload = /^\/dms-uploads\/image\/([\w-]+)$/.exec(rawPath);
    if (method === 'PUT' && imageUpload) {
      if (bearer() === null) return;
      if (scriptedAnswer()) return;
      const asset = fake.images.get(`urn:li:image:${imageUpload[1] ?? ''}`);
      if (!asset || asset.status !== 'WAITING_UPLOAD') return send(res, 400, restError(400, 'BAD_REQUEST', 'Upload URL is not valid or was already used'));
      if (raw.length === 0) return send(res, 400, restError(400, 'BAD_REQUEST', 'Empty upload'));
      asset.bytes = raw.length;
      asset.status = fake.imageProcessingPolls > 0 ? 'PROCESSING' : 'AVAILABLE';
      asset.pollsLeft = fake.imageProcessingPolls;
      return reply(201);
    }
    const videoUpload = /^\/dms-uploads\/video\/([\w-]+)\/(\d+)$/.exec(rawPath);
    if (method === 'PUT' && videoUpload) {
      if (scriptedAnswer()) return;
      const asset = fake.videos.get(`urn:li:video:${videoUpload[1] ?? ''}`);
      const part = asset?.parts[Number(videoUpload[2])];
      if (!asset || !part || asset.status !== 'WAITING_UPLOAD') return send(res, 400, restError(400, 'BAD_REQUEST', 'Upload URL is not valid'));
      if (raw.length !== part.lastByte - part.firstByte + 1) return send(res, 400, restError(400, 'BAD_REQUEST', 'Part length does not match its byte range'));
      fake.partUploads++;
      part.etag = `/AQF-etag-${videoUpload[2]}-${next()}`;
      return reply(200, undefined, { etag: part.etag });
    }

    if (!rawPath.startsWith('/rest/')) return send(res, 404, restError(404, 'NOT_FOUND', 'No resource found'));

    // --- Rest.li: versioned API, protocol 2.0.0, bearer token.
    const version = header('linkedin-version');
    if (!version) {
      return send(res, 400, restError(400, 'VERSION_MISSING', 'A version must be present. Please specify a version by adding the LinkedIn-Version header.'));
    }
    if (!/^\d{6}(\.\d{2})?$/.test(version) || version.slice(0, 6) < activeSince) {
      return send(res, 426, restError(426, 'NONEXISTENT_VERSION', `Requested version ${version} is not active`));
    }
    if (header('x-restli-protocol-version') !== '2.0.0') {
      return send(res, 400, restError(400, 'ILLEGAL_ARGUMENT', 'This resource requires the header X-Restli-Protocol-Version: 2.0.0'));
    }
    const member = bearer();
    if (member === null) return;
    if (scriptedAnswer()) return;
    const action = url.searchParams.get('action');
    const forbidden = (what: string) => send(res, 403, restError(403, 'ACCESS_DENIED', `Not enough permissions to access: ${what}`, { serviceErrorCode: 100 }));
    /** A URN in a path must be URL-encoded under Rest.li 2.0 (`urn%3Ali%3A…`). */
    const urnIn = (prefix: string): string | null => {
      const segment = rawPath.slice(prefix.length);
      if (segment.includes(':') || segment.includes('/')) {
        send(res, 400, restError(400, 'ILLEGAL_ARGUMENT', 'Invalid key: URNs in paths must be URL-encoded'));
        return null;
      }
      return decodeURIComponent(segment);
    };
    const poll = (asset: FakeAsset, failAtEnd: boolean) => {
      if (asset.status === 'PROCESSING') {
        if (asset.pollsLeft > 0) asset.pollsLeft--;
        else asset.status = failAtEnd ? 'PROCESSING_FAILED' : 'AVAILABLE';
      }
      return { id: asset.urn, owner: asset.owner, status: asset.status };
    };

    if (rawPath === '/rest/posts' && method === 'POST') {
      fake.postAttempts++;
      const body = json();
      if (body === null) return send(res, 400, restError(400, 'ILLEGAL_ARGUMENT', 'Request body could not be converted to data map'));
      for (const field of ['author', 'commentary', 'visibility', 'distribution', 'lifecycleState']) {
        if (body[field] === undefined) return send(res, 422, required(`/${field}`));
      }
      if (body.author !== member) return forbidden('partnerApiPostsExternal.CREATE');
      const dist = rec(body.distribution);
      if (dist.feedDistribution !== 'MAIN_FEED' || !Array.isArray(dist.targetEntities) || !Array.isArray(dist.thirdPartyDistributionChannels)) {
        return send(res, 422, required('/distribution/feedDistribution'));
      }
      if (body.visibility !== 'PUBLIC' || body.lifecycleState !== 'PUBLISHED' || typeof body.commentary !== 'string') {
        return send(res, 422, { message: 'ERROR :: invalid visibility, lifecycleState or commentary\n', status: 422 });
      }
      const content = rec(body.content);
      const mediaIds = body.content === undefined ? [] : content.media ? [String(rec(content.media).id)] : (Array.isArray(rec(content.multiImage).images) ? (rec(content.multiImage).images as unknown[]) : []).map((m) => String(rec(m).id));
      if (body.content !== undefined && (mediaIds.length === 0 || (content.multiImage !== undefined && mediaIds.length < 2))) {
        return send(res, 422, required('/content/media/id'));
      }
      for (const id of mediaIds) {
        const asset = fake.images.get(id) ?? fake.videos.get(id);
        if (!asset || asset.owner !== member) return send(res, 422, { message: `ERROR :: /content :: media ${id} does not exist\n`, status: 422 });
        if (asset.status !== 'AVAILABLE') return send(res, 422, { message: `ERROR :: /content :: media ${id} is not AVAILABLE\n`, status: 422 });
      }
      const commentary = littleTextAsStored(body.commentary);
      const same = fake.posts.find((p) => p.author === member && p.commentary === commentary && JSON.stringify(p.content ?? null) === JSON.stringify(body.content ?? null));
      if (fake.rejectDuplicates && same) {
        return send(res, 422, { errorDetailType: 'com.linkedin.common.error.BadRequest', message: `Content is a duplicate of ${same.id}`, errorDetails: {}, status: 422 });
      }
      const now = Date.now();
      const post: FakePost = { id: `urn:li:share:${7_300_000_000_000_000_000n + BigInt(next())}`, author: member, commentary, visibility: 'PUBLIC', distribution: body.distribution, lifecycleState: fake.newPostLifecycle, createdAt: now, lastModifiedAt: now };
      if (body.content !== undefined) post.content = body.content;
      fake.posts.push(post);
      return reply(201, undefined, { 'x-restli-id': post.id });
    }
    if (rawPath === '/rest/posts' && method === 'GET') {
      if (url.searchParams.get('q') !== 'author' || !url.searchParams.get('author')) return send(res, 400, restError(400, 'ILLEGAL_ARGUMENT', 'Finder requires q=author and author'));
      if (header('x-restli-method') !== 'FINDER') return send(res, 400, restError(400, 'ILLEGAL_ARGUMENT', 'X-RestLi-Method: FINDER is required for finders'));
      if (fake.finderForbidden || url.searchParams.get('author') !== member) return forbidden('partnerApiPostsExternal.FINDER-author');
      const count = Math.min(Number(url.searchParams.get('count') ?? 10), 100);
      const elements = fake.finderLags ? [] : fake.posts.filter((p) => p.author === member).sort((a, b) => b.lastModifiedAt - a.lastModifiedAt).slice(0, count);
      return send(res, 200, { paging: { start: 0, count, links: [] }, elements });
    }
    if (rawPath.startsWith('/rest/posts/') && method === 'GET') {
      const urn = urnIn('/rest/posts/');
      if (urn === null) return;
      const post = fake.posts.find((p) => p.id === urn);
      return post ? send(res, 200, { ...post, isReshareDisabledByAuthor: false, lifecycleStateInfo: { isEditedByAuthor: false } }) : send(res, 404, restError(404, 'NOT_FOUND', `Post ${urn} not found`));
    }
    if (rawPath === '/rest/images' && method === 'POST' && action === 'initializeUpload') {
      const owner = rec(rec(json()).initializeUploadRequest).owner;
      if (typeof owner !== 'string') return send(res, 422, required('/initializeUploadRequest/owner'));
      if (owner !== member) return forbidden('partnerApiImages.ACTION-initializeUpload');
      fake.initializeCalls.images++;
      const id = `D4E10AQ${next()}`;
      const urn = `urn:li:image:${id}`;
      fake.images.set(urn, { urn, owner, status: 'WAITING_UPLOAD', pollsLeft: 0, bytes: 0, parts: [], finalizedWith: null });
      return reply(200, { value: { uploadUrlExpiresAt: Date.now() + 86_400_000, uploadUrl: `${base}/dms-uploads/image/${id}?ca=vector_feedshare&sig=s1`, image: urn } });
    }
    if (rawPath.startsWith('/rest/images/') && method === 'GET') {
      const urn = urnIn('/rest/images/');
      if (urn === null) return;
      const asset = fake.images.get(urn);
      return asset ? send(res, 200, poll(asset, false)) : send(res, 404, restError(404, 'NOT_FOUND', `Image ${urn} not found`));
    }
    if (rawPath === '/rest/videos' && method === 'POST' && action === 'initializeUpload') {
      const request = rec(rec(json()).initializeUploadRequest);
      if (typeof request.owner !== 'string') return send(res, 422, required('/initializeUploadRequest/owner'));
      if (!Number.isInteger(request.fileSizeBytes) || Number(request.fileSizeBytes) <= 0) return send(res, 422, required('/initializeUploadRequest/fileSizeBytes'));
      if (request.owner !== member) return forbidden('partnerApiVideos.ACTION-initializeUpload');
      fake.initializeCalls.videos++;
      const size = Number(request.fileSizeBytes);
      const id = `D5605AQ${next()}`;
      const urn = `urn:li:video:${id}`;
      const parts: FakeAsset['parts'] = [];
      for (let first = 0; first < size; first += fake.partSize) parts.push({ firstByte: first, lastByte: Math.min(first + fake.partSize, size) - 1, etag: null });
      fake.videos.set(urn, { urn, owner: request.owner, status: 'WAITING_UPLOAD', pollsLeft: 0, bytes: size, parts, finalizedWith: null });
      const uploadInstructions = parts.map((p, j) => ({ uploadUrl: `${base}/dms-uploads/video/${id}/${j}?ca=vector_feedshare&sig=s${j}`, firstByte: p.firstByte, lastByte: p.lastByte }));
      return reply(200, { value: { uploadUrlsExpireAt: Date.now() + 86_400_000, video: urn, uploadInstructions, uploadToken: '' } });
    }
    if (rawPath === '/rest/videos' && method === 'POST' && action === 'finalizeUpload') {
      const request = rec(rec(json()).finalizeUploadRequest);
      const asset = fake.videos.get(String(request.video));
      if (!asset || asset.owner !== member) return send(res, 404, restError(404, 'NOT_FOUND', 'Video not found'));
      if (typeof request.uploadToken !== 'string' || !Array.isArray(request.uploadedPartIds)) return send(res, 422, required('/finalizeUploadRequest/uploadedPartIds'));
      if (asset.status !== 'WAITING_UPLOAD') return send(res, 400, restError(400, 'BAD_REQUEST', 'The upload was already finalized'));
      const etags = asset.parts.map((p) => p.etag);
      if (etags.includes(null) || JSON.stringify(etags) !== JSON.stringify(request.uploadedPartIds)) {
        return send(res, 400, restError(400, 'BAD_REQUEST', 'uploadedPartIds do not match the uploaded parts'));
      }
      asset.finalizedWith = request.uploadedPartIds.map(String);
      asset.status = 'PROCESSING';
      asset.pollsLeft = fake.videoProcessingPolls;
      return reply(200);
    }
    if (rawPath.startsWith('/rest/videos/') && method === 'GET') {
      const urn = urnIn('/rest/videos/');
      if (urn === null) return;
      const asset = fake.videos.get(urn);
      return asset ? send(res, 200, poll(asset, fake.videoProcessingFails)) : send(res, 404, restError(404, 'NOT_FOUND', `Video ${urn} not found`));
    }
    return send(res, 404, restError(404, 'NOT_FOUND', 'No resource found'));
  }

  return fake;
}
