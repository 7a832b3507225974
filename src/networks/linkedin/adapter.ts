import type { MediaSource } from '../media-source.js';
import type { Confirmation, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { PLATFORMS, mediaKindOf } from '../../vocabulary/platforms.js';
import {
  LINKEDIN_ERROR_TABLE,
  LINKEDIN_NETWORK_FAILURE,
  LINKEDIN_OAUTH_ERROR_TABLE,
  LINKEDIN_PROCESSING_FAILED,
  classifyLinkedinError,
  linkedinErrorInfo,
  linkedinFailure,
  type LinkedinErrorInfo,
} from './errors.js';
import type { NetworkDeps, NetworkOAuth, NetworkSettings, TokenResult } from '../network-oauth.js';

const TIMEOUT_MS = 30_000;
const RESTLI_PROTOCOL = '2.0.0';
/** `openid profile` read the member (GET /v2/userinfo); `w_member_social` posts as them. */
const SCOPES = ['openid', 'profile', 'w_member_social'];
/** Container id of a post without media (LinkedIn has no container for text; publish posts directly). */
const TEXT_ONLY = 'text';
/** `content.multiImage` takes 2 to 20 images. */
const MAX_IMAGES = 20;
/** Media still processing: check a few times in one call, then hand back to the worker (never block). */
const POLLS_PER_CALL = 3;
const POLL_GAP_MS = 1_000;
const PROCESSING_RETRY_MS = 15_000;
/** How long after an unanswered POST the author finder may still not list the post (it reads an index). */
const LOOKUP_SETTLE_MS = 60_000;
/** Tolerated skew between our clock and LinkedIn's `createdAt` when matching an earlier attempt's post. */
const CLOCK_SLACK_MS = 10 * 60_000;

const LEASE_LOST = linkedinFailure('upstream_5xx', true, 'Another run took over this job; this one stopped.');
const LOOKUP_REFUSED = linkedinFailure(
  'upstream_unknown',
  false,
  'LinkedIn did not let us check whether an interrupted attempt was posted, so it was not posted again. Check the profile before republishing.',
);

type ImageStep = { kind: 'image'; urn: string; uploadUrl: string; uploaded: boolean };
type VideoPart = { uploadUrl: string; firstByte: number; lastByte: number };
type VideoStep = { kind: 'video'; urn: string; uploadToken: string; parts: VideoPart[]; etags: string[]; finalizeSent: boolean; finalized: boolean };
/** What this job did on LinkedIn (`req.progress`): per media item its upload, and the post attempt. */
type Progress = { media: (ImageStep | VideoStep | null)[]; post: { attemptedAt: number } | null; postUrn: string | null };

interface Ctx {
  deps: NetworkDeps;
  base: string;
  version: string;
  token: string;
  author: string;
  req: PublishRequest;
  state: Progress;
}

type Answer = { ok: true; res: Response; text: string } | { ok: false; status: number | null; info: LinkedinErrorInfo | null; failure: NetworkFailure };
type Uploaded = { ok: true; urn: string } | NetworkFailure;
type Lookup = { state: 'found'; urn: string } | { state: 'absent' } | { state: 'too_soon'; retryAfterMs: number } | { state: 'failed'; failure: NetworkFailure };

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const enc = encodeURIComponent;
function parse(text: string): Record<string, unknown> {
  try {
    return obj(JSON.parse(text));
  } catch {
    return {};
  }
}

/**
 * One HTTP exchange with a timeout. Failures come back as values: no answer → upstream_5xx (retryable); an error
 * status → the table's code. The raw body is logged, never returned; the token and upload URLs are not logged.
 */
async function send(deps: NetworkDeps, label: string, url: string, init: RequestInit, table = LINKEDIN_ERROR_TABLE): Promise<Answer> {
  let res: Response;
  let text: string;
  try {
    res = await deps.fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
    text = await res.text();
  } catch (err) {
    deps.log('linkedin: no answer', { call: label, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    return { ok: false, status: null, info: null, failure: LINKEDIN_NETWORK_FAILURE };
  }
  if (res.ok) return { ok: true, res, text };
  deps.log('linkedin: error answer', { call: label, status: res.status, body: text.slice(0, 4000) });
  const info = linkedinErrorInfo(res.status, text);
  return { ok: false, status: res.status, info, failure: classifyLinkedinError(info, table) };
}

/** A versioned Rest.li call: every /rest request needs LinkedIn-Version and the 2.0.0 protocol header. */
function rest(ctx: Ctx, method: string, path: string, json?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${ctx.token}`,
    'LinkedIn-Version': ctx.version,
    'X-Restli-Protocol-Version': RESTLI_PROTOCOL,
    ...extra,
  };
  if (json !== undefined) headers['Content-Type'] = 'application/json';
  const init: RequestInit = { method, headers, ...(json !== undefined ? { body: JSON.stringify(json) } : {}) };
  return send(ctx.deps, `${method} ${path.split('?')[0] ?? path}`, `${ctx.base}${path}`, init);
}

function unexpected(deps: NetworkDeps, what: string): NetworkFailure {
  deps.log('linkedin: unexpected answer', { call: what });
  return linkedinFailure('upstream_unknown', false);
}

async function openFile(ctx: Ctx, url: string): Promise<{ ok: true; source: MediaSource } | NetworkFailure> {
  try {
    return { ok: true, source: await ctx.deps.openMedia(url) };
  } catch (err) {
    ctx.deps.log('linkedin: media could not be read', { error: err instanceof Error ? err.message : String(err) });
    return linkedinFailure('upstream_unknown', false, 'The media file could not be read for upload to LinkedIn.');
  }
}

/**
 * LinkedIn's "little text" format treats \ | { } @ [ ] ( ) < > # * _ ~ as markup; unescaped, the commentary is
 * cut or mangled. A '#' that starts a word is left as is, so hashtags stay hashtags as in LinkedIn's composer.
 */
function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, (c, at: number) => {
    const hashtag = c === '#' && (at === 0 || /\s/.test(text[at - 1] ?? '')) && /[\p{L}\p{N}]/u.test(text[at + 1] ?? '');
    return hashtag ? c : `\\${c}`;
  });
}
const unescapeLittleText = (text: string): string => text.replace(/\\(.)/gsu, '$1');

function progressOf(raw: Record<string, unknown> | null): Progress {
  const p = obj(raw);
  const post = obj(p.post);
  return {
    media: list(p.media).map((m) => (obj(m).kind === 'image' || obj(m).kind === 'video' ? (m as ImageStep | VideoStep) : null)),
    post: typeof post.attemptedAt === 'number' ? { attemptedAt: post.attemptedAt } : null,
    postUrn: typeof p.postUrn === 'string' ? p.postUrn : null,
  };
}

/** Records progress durably (the whole state: the worker stores what it is given). False: the lease was lost. */
function save(ctx: Ctx, patch: Partial<Progress>): Promise<boolean> {
  ctx.state = { ...ctx.state, ...patch };
  return ctx.req.saveProgress({ ...ctx.state });
}
function saveStep(ctx: Ctx, i: number, step: ImageStep | VideoStep): Promise<boolean> {
  const media = [...ctx.state.media];
  while (media.length < i) media.push(null);
  media[i] = step;
  return save(ctx, { media });
}

/** Images API: initializeUpload, then PUT the bytes; a resumed run asks the image's status before re-sending. */
async function uploadImage(ctx: Ctx, i: number, url: string): Promise<Uploaded> {
  const prior = ctx.state.media[i];
  let step = prior?.kind === 'image' ? prior : null;
  if (step?.uploaded) return { ok: true, urn: step.urn };
  if (step) {
    const seen = await rest(ctx, 'GET', `/rest/images/${enc(step.urn)}`);
    if (seen.ok && str(parse(seen.text).status) !== 'WAITING_UPLOAD') {
      if (!(await saveStep(ctx, i, { ...step, uploaded: true }))) return LEASE_LOST;
      return { ok: true, urn: step.urn };
    }
    if (!seen.ok && seen.status !== 404) return seen.failure;
    if (!seen.ok) step = null; // the image is gone (upload expired): start over, nothing public was made
  }
  if (!step) {
    const init = await rest(ctx, 'POST', '/rest/images?action=initializeUpload', { initializeUploadRequest: { owner: ctx.author } });
    if (!init.ok) return init.failure;
    const value = obj(parse(init.text).value);
    if (!str(value.uploadUrl) || !str(value.image)) return unexpected(ctx.deps, 'images initializeUpload');
    step = { kind: 'image', urn: str(value.image), uploadUrl: str(value.uploadUrl), uploaded: false };
    if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
  }
  const file = await openFile(ctx, url);
  if (!file.ok) return file;
  let put;
  try {
    put = await send(ctx.deps, 'PUT image upload', step.uploadUrl, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${ctx.token}`, 'Content-Type': 'application/octet-stream' },
      body: await file.source.blob('application/octet-stream'),
    });
  } finally {
    await file.source.close();
  }
  if (!put.ok) return put.failure;
  if (!(await saveStep(ctx, i, { ...step, uploaded: true }))) return LEASE_LOST;
  return { ok: true, urn: step.urn };
}

function partsOf(v: unknown): VideoPart[] | null {
  const parts = list(v).map((p) => ({ uploadUrl: str(obj(p).uploadUrl), firstByte: Number(obj(p).firstByte), lastByte: Number(obj(p).lastByte) }));
  const valid = parts.length > 0 && parts.every((p) => p.uploadUrl && Number.isInteger(p.firstByte) && Number.isInteger(p.lastByte) && p.lastByte >= p.firstByte);
  return valid ? parts : null;
}

/**
 * Videos API: initializeUpload → PUT each part (keeping its ETag, saved one by one so a resumed run sends only
 * the missing parts) → finalizeUpload. A finalize whose answer was lost is not repeated blindly: the video's
 * status tells whether it landed.
 */
async function uploadVideo(ctx: Ctx, i: number, url: string): Promise<Uploaded> {
  const prior = ctx.state.media[i];
  let step = prior?.kind === 'video' ? prior : null;
  if (step?.finalized) return { ok: true, urn: step.urn };
  // Opened only when a part must be sent; each part is read from disk on its own, never the whole video.
  let source: MediaSource | null = null;
  try {
    if (!step) {
      const read = await openFile(ctx, url);
      if (!read.ok) return read;
      source = read.source;
      const init = await rest(ctx, 'POST', '/rest/videos?action=initializeUpload', {
        initializeUploadRequest: { owner: ctx.author, fileSizeBytes: source.size, uploadCaptions: false, uploadThumbnail: false },
      });
      if (!init.ok) return init.failure;
      const value = obj(parse(init.text).value);
      const parts = partsOf(value.uploadInstructions);
      if (!str(value.video) || parts === null) return unexpected(ctx.deps, 'videos initializeUpload');
      step = { kind: 'video', urn: str(value.video), uploadToken: str(value.uploadToken), parts, etags: [], finalizeSent: false, finalized: false };
      if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
    }
    for (const [j, part] of step.parts.entries()) {
      if (step.etags[j]) continue; // sent by an earlier run
      if (source === null) {
        const read = await openFile(ctx, url);
        if (!read.ok) return read;
        source = read.source;
      }
      // Upload URLs are pre-signed: no bearer token goes to them.
      const put = await send(ctx.deps, `PUT video part ${j + 1}/${step.parts.length}`, part.uploadUrl, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/octet-stream' },
        body: await source.read(part.firstByte, part.lastByte - part.firstByte + 1),
      });
      if (!put.ok) return put.failure;
      const etag = put.res.headers.get('etag');
      if (!etag) return unexpected(ctx.deps, 'video part without ETag');
      const etags: string[] = [...step.etags];
      etags[j] = etag;
      step = { ...step, etags };
      if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
    }
    if (step.finalizeSent) {
      const seen = await rest(ctx, 'GET', `/rest/videos/${enc(step.urn)}`);
      if (!seen.ok) return seen.failure;
      if (str(parse(seen.text).status) !== 'WAITING_UPLOAD') {
        if (!(await saveStep(ctx, i, { ...step, finalized: true }))) return LEASE_LOST;
        return { ok: true, urn: step.urn };
      }
    }
    step = { ...step, finalizeSent: true };
    if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
    const fin = await rest(ctx, 'POST', '/rest/videos?action=finalizeUpload', {
      finalizeUploadRequest: { video: step.urn, uploadToken: step.uploadToken, uploadedPartIds: step.etags },
    });
    if (!fin.ok) return fin.failure;
    if (!(await saveStep(ctx, i, { ...step, finalized: true }))) return LEASE_LOST;
    return { ok: true, urn: step.urn };
  } finally {
    await source?.close();
  }
}

/** Waits briefly for each asset to be AVAILABLE; null when all are, else pending or a failure. */
async function mediaReady(ctx: Ctx, urns: string[]): Promise<Published | null> {
  for (const urn of urns) {
    const kind = urn.startsWith('urn:li:video:') ? 'videos' : 'images';
    let status = '';
    for (let poll = 0; poll < POLLS_PER_CALL && status !== 'AVAILABLE'; poll++) {
      if (poll > 0) await ctx.deps.sleep(POLL_GAP_MS);
      const seen = await rest(ctx, 'GET', `/rest/${kind}/${enc(urn)}`);
      if (!seen.ok) return seen.failure;
      status = str(parse(seen.text).status);
      if (status === 'PROCESSING_FAILED') return LINKEDIN_PROCESSING_FAILED;
      if (status !== 'AVAILABLE' && status !== 'PROCESSING' && status !== 'WAITING_UPLOAD') return unexpected(ctx.deps, `${kind} status ${status}`);
    }
    if (status !== 'AVAILABLE') return { ok: 'pending', retryAfterMs: PROCESSING_RETRY_MS };
  }
  return null;
}

function sameMedia(content: unknown, urns: string[]): boolean {
  const c = obj(content);
  if (urns.length === 0) return c.media === undefined && c.multiImage === undefined;
  const ids = urns.length === 1 ? [str(obj(c.media).id)] : list(obj(c.multiImage).images).map((m) => str(obj(m).id));
  return ids.join(',') === urns.join(',');
}

/**
 * After a POST whose answer was lost: is the post there? The author finder lists the latest posts; ours has the
 * same commentary and media and was created after the attempt (with some clock slack).
 */
async function findEarlierPost(ctx: Ctx, commentary: string, urns: string[], attemptedAt: number): Promise<Lookup> {
  const path = `/rest/posts?author=${enc(ctx.author)}&q=author&count=10&sortBy=LAST_MODIFIED`;
  const res = await rest(ctx, 'GET', path, undefined, { 'X-RestLi-Method': 'FINDER' });
  if (!res.ok) {
    // Reading posts needs r_member_social / r_organization_social. Without it we cannot know whether the
    // earlier attempt posted: stop rather than risk a second post (and do not expire the connection).
    return { state: 'failed', failure: res.failure.code === 'permission_revoked' ? LOOKUP_REFUSED : res.failure };
  }
  const wanted = unescapeLittleText(commentary);
  const match = list(parse(res.text).elements)
    .map(obj)
    .find((p) => str(p.id) && unescapeLittleText(str(p.commentary)) === wanted && sameMedia(p.content, urns) && !(typeof p.createdAt === 'number' && p.createdAt < attemptedAt - CLOCK_SLACK_MS));
  if (match) return { state: 'found', urn: str(match.id) };
  const waited = ctx.deps.now() - attemptedAt;
  return waited < LOOKUP_SETTLE_MS ? { state: 'too_soon', retryAfterMs: Math.max(5_000, LOOKUP_SETTLE_MS - waited) } : { state: 'absent' };
}

const postUrl = (urn: string): string => `${PLATFORMS.linkedin.postUrlBase}${urn}/`;

/** LinkedIn refuses identical content with 422 "Content is a duplicate of urn:li:share:…": that post is ours. */
function duplicateOf(answer: Answer): string | null {
  if (answer.ok || answer.status !== 422 || answer.info === null) return null;
  return /duplicate of (urn:li:(?:share|ugcPost):[\w-]+)/i.exec(answer.info.text)?.[1] ?? null;
}

/**
 * LinkedIn (Posts API). `submit` uploads the media (images, or a video in parts) and returns their URNs as the
 * container id — nothing public yet; `publish` waits for the media to be AVAILABLE and creates the post, looking
 * up an earlier attempt whose answer was lost before posting again; `confirm` reads the post.
 */
export function createLinkedinAdapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  function context(req: PublishRequest): Ctx | NetworkFailure {
    if (!req.credentials) return linkedinFailure('upstream_unknown', false, 'This LinkedIn connection has no credentials. Reconnect it.');
    if (!settings.apiVersion) {
      deps.log('linkedin: LinkedIn-Version is not configured', {});
      return linkedinFailure('upstream_unknown', false, 'LinkedIn is not fully configured on this service (API version).');
    }
    const { accessToken, accountId } = req.credentials;
    return { deps, base: settings.apiBaseUrl, version: settings.apiVersion, token: accessToken, author: accountId, req, state: progressOf(req.progress) };
  }

  return {
    async submit(req): Promise<Submitted> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const kind = mediaKindOf(req.contentType);
      if (kind === null || req.media.length === 0) return { ok: true, containerId: TEXT_ONLY };
      // A post carries one video, or up to 20 images.
      const items = kind === 'video' ? req.media.slice(0, 1) : req.media.slice(0, MAX_IMAGES);
      const urns: string[] = [];
      for (const [i, item] of items.entries()) {
        const up = kind === 'video' ? await uploadVideo(ctx, i, item.url) : await uploadImage(ctx, i, item.url);
        if (!up.ok) return up;
        urns.push(up.urn);
      }
      return { ok: true, containerId: urns.join(',') };
    },

    async publish(req, containerId): Promise<Published> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      if (ctx.state.postUrn) return { ok: true, postId: ctx.state.postUrn, url: postUrl(ctx.state.postUrn) };
      const urns = containerId === TEXT_ONLY ? [] : containerId.split(',');
      const notReady = await mediaReady(ctx, urns);
      if (notReady) return notReady;

      const commentary = escapeLittleText(req.text ?? '');
      const earlier = ctx.state.post;
      if (earlier) {
        const seen = await findEarlierPost(ctx, commentary, urns, earlier.attemptedAt);
        if (seen.state === 'failed') return seen.failure;
        if (seen.state === 'too_soon') return { ok: 'pending', retryAfterMs: seen.retryAfterMs };
        if (seen.state === 'found') {
          await save(ctx, { postUrn: seen.urn });
          return { ok: true, postId: seen.urn, url: postUrl(seen.urn) };
        }
      }

      const content = urns.length === 0 ? {} : urns.length === 1 ? { content: { media: { id: urns[0] } } } : { content: { multiImage: { images: urns.map((id) => ({ id })) } } };
      const body = {
        author: ctx.author,
        commentary,
        visibility: 'PUBLIC',
        distribution: { feedDistribution: 'MAIN_FEED', targetEntities: [], thirdPartyDistributionChannels: [] },
        lifecycleState: 'PUBLISHED',
        ...content,
      };
      // Saved before the POST: if its answer is lost, the next run looks the post up instead of posting again.
      if (!(await save(ctx, { post: { attemptedAt: deps.now() } }))) return LEASE_LOST;
      const res = await rest(ctx, 'POST', '/rest/posts', body);
      if (res.ok) {
        const urn = res.res.headers.get('x-restli-id');
        if (!urn) {
          // Created but unnamed: keep the marker and retry, so the next run finds the post by lookup.
          deps.log('linkedin: unexpected answer', { call: 'POST /rest/posts without x-restli-id' });
          return linkedinFailure('upstream_5xx', true, 'LinkedIn accepted the post without naming it; it is looked up on the next attempt.');
        }
        // Even if this save fails (lease lost), the attempt marker lets the next run find the post.
        await save(ctx, { postUrn: urn });
        return { ok: true, postId: urn, url: postUrl(urn) };
      }
      const duplicate = earlier ? duplicateOf(res) : null;
      if (duplicate) {
        await save(ctx, { postUrn: duplicate });
        return { ok: true, postId: duplicate, url: postUrl(duplicate) };
      }
      // A 4xx is a refusal: nothing was created, so a later run may post without looking up first. A 5xx or no
      // answer leaves the outcome unknown and the marker in place.
      if (res.status !== null && res.status < 500 && res.status !== 408) await save(ctx, { post: null });
      return res.failure;
    },

    async confirm(req, postId): Promise<Confirmation> {
      const ctx = context(req);
      if ('ok' in ctx) return { state: 'unavailable' };
      const res = await rest(ctx, 'GET', `/rest/posts/${enc(postId)}`);
      if (!res.ok) return res.status === 404 || res.status === 410 ? { state: 'not_found' } : { state: 'unavailable' };
      const lifecycle = str(parse(res.text).lifecycleState);
      if (lifecycle === 'PUBLISH_FAILED') return { state: 'not_found' };
      if (lifecycle === 'PUBLISH_REQUESTED' || lifecycle === 'DRAFT') return { state: 'pending' };
      return { state: 'found', url: postUrl(postId) };
    },
  };
}

/**
 * LinkedIn's 3-legged OAuth (authorization code). Access tokens last 60 days; refresh tokens exist only for
 * approved partners, so there is no `refresh`: members reconnect. The member is read with OpenID's
 * GET /v2/userinfo; the account id is their author URN `urn:li:person:{sub}`.
 */
export function createLinkedinOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  return {
    authorizationUrl({ state, redirectUri }) {
      const query = new URLSearchParams({ response_type: 'code', client_id: settings.clientId ?? '', redirect_uri: redirectUri, state, scope: SCOPES.join(' ') });
      return `${settings.authorizeUrl}?${query.toString().replace(/\+/g, '%20')}`;
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      if (!settings.clientId || !settings.clientSecret) {
        deps.log('linkedin: client id or secret is not configured', {});
        return linkedinFailure('upstream_unknown', false, 'LinkedIn is not configured on this service (client id and secret).');
      }
      const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: settings.clientId, client_secret: settings.clientSecret });
      const token = await send(deps, 'POST accessToken', settings.tokenUrl, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form }, LINKEDIN_OAUTH_ERROR_TABLE);
      if (!token.ok) return token.failure;
      const t = parse(token.text);
      const accessToken = str(t.access_token);
      if (!accessToken) return unexpected(deps, 'accessToken without access_token');

      const me = await send(deps, 'GET /v2/userinfo', `${settings.apiBaseUrl}/v2/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } });
      if (!me.ok) return me.failure;
      const user = parse(me.text);
      const sub = str(user.sub);
      if (!sub) return unexpected(deps, 'userinfo without sub');
      const name = str(user.name) || [str(user.given_name), str(user.family_name)].filter(Boolean).join(' ') || sub;
      return {
        ok: true,
        tokens: {
          accessToken,
          refreshToken: str(t.refresh_token) || null,
          expiresAt: typeof t.expires_in === 'number' ? deps.now() + t.expires_in * 1000 : null,
          accountId: `urn:li:person:${sub}`,
          accountName: name,
        },
      };
    },
  };
}
