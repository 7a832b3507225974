import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local fake of the Instagram API with Instagram Login (graph.instagram.com + api.instagram.com), close to
 * the official request and response shapes: versioned Graph paths, `fields` selection, Graph error bodies
 * `{error: {message, type, code, error_subcode, fbtrace_id}}`, the token host's `{error_type, code,
 * error_message}`. It rejects what Instagram rejects (missing parameters, bad tokens, publishing a container
 * that is not FINISHED or was already published, the daily cap) and counts every post in `posts`.
 *
 * Stricter than Instagram on purpose: Graph calls must carry `Authorization: Bearer` (Instagram also takes
 * `access_token` in the query, which would put the token in URLs that end up in logs).
 */

export type FakeEndpoint =
  | 'oauth_token'
  | 'exchange'
  | 'refresh'
  | 'me'
  | 'publishing_limit'
  | 'create_container'
  | 'container_status'
  | 'media_publish'
  | 'media_get'
  | 'media_list';

export interface FakeReply {
  status: number;
  body: unknown;
}

/** A Graph error body as Instagram sends it. */
export function graphError(code: number, subcode?: number, opts: { status?: number; transient?: boolean; message?: string } = {}): FakeReply {
  const error: Record<string, unknown> = { message: opts.message ?? `(#${code}) fake error`, type: 'OAuthException', code, is_transient: opts.transient ?? false, fbtrace_id: 'AfakeTrace' };
  if (subcode !== undefined) error.error_subcode = subcode;
  return { status: opts.status ?? 400, body: { error } };
}

export interface FakeContainer {
  id: string;
  userId: string;
  kind: 'IMAGE' | 'REELS' | 'CAROUSEL';
  isCarouselItem: boolean;
  caption: string;
  children: string[];
  statusCode: 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';
  pollsLeft: number;
}

export interface FakePost {
  id: string;
  containerId: string;
  userId: string;
  caption: string;
  mediaType: 'IMAGE' | 'VIDEO' | 'CAROUSEL_ALBUM';
  timestamp: string;
  permalink: string;
}

/** How a scripted slow request behaves: answer late after doing the work, do the work late, or never do it. */
export type DelayMode = 'respond-late' | 'arrive-late' | 'drop';

const ACCOUNT = { userId: '17841400000000001', appScopedId: '26000000000000001', username: 'acme.studio' };
const STATUS_TEXT: Record<FakeContainer['statusCode'], string> = {
  IN_PROGRESS: 'In Progress: Media is still being processed.',
  FINISHED: 'Finished: Media has been uploaded and it is ready to be published.',
  ERROR: 'Error: Media upload has failed with error code 2207026',
  EXPIRED: 'Expired: Media was not published within 24 hours.',
  PUBLISHED: 'Published: Media has been successfully published.',
};

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startFakeInstagram(opts: { clientId?: string; clientSecret?: string } = {}) {
  const clientId = opts.clientId ?? '990602627938098';
  const clientSecret = opts.clientSecret ?? 'fake-app-secret';
  let seq = 0;
  const nextId = (prefix: string) => `${prefix}${String(++seq).padStart(8, '0')}`;

  const state = {
    account: ACCOUNT,
    /** Valid tokens and whose they are; `expired` ones answer 190/463. */
    tokens: new Map<string, { userId: string; kind: 'short' | 'long'; expired: boolean }>([['IGAA-test-token', { userId: ACCOUNT.userId, kind: 'long', expired: false }]]),
    codes: new Map<string, string>(),
    grantedPermissions: 'instagram_business_basic,instagram_business_content_publish',
    quota: { usage: 0, total: 100 },
    containers: new Map<string, FakeContainer>(),
    posts: [] as FakePost[],
    /** Status polls a new top-level container answers IN_PROGRESS before its outcome. */
    processingPolls: 0,
    /** What a top-level container becomes once processed, and the `status` text of an ERROR. */
    containerOutcome: 'FINISHED' as 'FINISHED' | 'ERROR' | 'EXPIRED',
    containerErrorText: STATUS_TEXT.ERROR,
    /** The media listing leaves out the newest posts for this many calls (Instagram's listing can lag). */
    listingLagCalls: 0,
    requests: [] as { method: string; endpoint: FakeEndpoint | 'authorize' | 'unknown'; path: string; params: Record<string, string> }[],
    authorizations: [] as URLSearchParams[],
    scripted: [] as { endpoint: FakeEndpoint; reply: FakeReply }[],
    delays: [] as { endpoint: FakeEndpoint; ms: number; mode: DelayMode }[],
  };

  const tokenError = () => graphError(190, undefined, { message: 'Invalid OAuth access token - Cannot parse access token' });
  const missing = (name: string) => graphError(100, undefined, { message: `(#100) The parameter ${name} is required` });
  const noObject = (id: string) => graphError(100, 33, { message: `Unsupported request - Object with ID '${id}' does not exist` });
  const pick = (obj: Record<string, unknown>, fields: string | undefined): Record<string, unknown> => {
    const wanted = new Set(['id', ...(fields ?? '').split(',').filter(Boolean)]);
    return Object.fromEntries(Object.entries(obj).filter(([k]) => wanted.has(k)));
  };
  const postFields = (p: FakePost) => ({ id: p.id, caption: p.caption, media_type: p.mediaType, media_product_type: p.mediaType === 'VIDEO' ? 'REELS' : 'FEED', timestamp: p.timestamp, permalink: p.permalink });

  function authUser(req: IncomingMessage): { userId: string } | FakeReply {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const t = m ? state.tokens.get(m[1]!) : undefined;
    if (!t) return tokenError();
    if (t.expired) return graphError(190, 463, { message: 'Error validating access token: Session has expired' });
    return { userId: t.userId };
  }

  function createContainer(userId: string, p: Record<string, string>): FakeReply {
    const isItem = p.is_carousel_item === 'true';
    const type = p.media_type;
    if ((p.caption ?? '').length > 2200) return graphError(100, 2207010, { message: 'The caption is too long' });
    if (type === 'CAROUSEL') {
      const ids = (p.children ?? '').split(',').filter(Boolean);
      if (ids.length < 2 || ids.length > 10) return graphError(100, undefined, { message: '(#100) The carousel takes 2 to 10 children' });
      for (const id of ids) {
        const c = state.containers.get(id);
        if (!c || c.userId !== userId || !c.isCarouselItem) return graphError(100, undefined, { message: `(#100) Invalid child ${id}` });
      }
      return add({ kind: 'CAROUSEL', children: ids });
    }
    if (type === 'REELS' || (type === 'VIDEO' && isItem)) {
      if (!/^https?:\/\//.test(p.video_url ?? '')) return missing('video_url');
      return add({ kind: 'REELS', children: [] });
    }
    if (type !== undefined && type !== 'IMAGE') return graphError(100, undefined, { message: `(#100) media_type ${type} is not supported here` });
    if (!/^https?:\/\//.test(p.image_url ?? '')) return missing('image_url');
    return add({ kind: 'IMAGE', children: [] });

    function add(c: Pick<FakeContainer, 'kind' | 'children'>): FakeReply {
      const id = nextId('1790');
      const polls = isItem ? 0 : state.processingPolls;
      state.containers.set(id, { id, userId, isCarouselItem: isItem, caption: isItem ? '' : (p.caption ?? ''), statusCode: polls > 0 ? 'IN_PROGRESS' : (isItem ? 'FINISHED' : state.containerOutcome), pollsLeft: polls, ...c });
      return { status: 200, body: { id } };
    }
  }

  function publish(userId: string, p: Record<string, string>): FakeReply {
    if (!p.creation_id) return missing('creation_id');
    const c = state.containers.get(p.creation_id);
    if (!c || c.userId !== userId) return noObject(p.creation_id);
    if (c.isCarouselItem) return graphError(100, undefined, { message: '(#100) A carousel item cannot be published on its own' });
    // Assumed from Meta's docs (a container is published once); the exact code of the refusal is ours.
    if (c.statusCode === 'PUBLISHED') return graphError(9007, undefined, { message: 'Media has already been published' });
    if (c.statusCode !== 'FINISHED') return graphError(9007, 2207027, { message: 'Media ID is not available' });
    if (state.quota.usage >= state.quota.total) return graphError(9, 2207042, { message: 'Application request limit reached' });
    const id = nextId('1800');
    const shortcode = `C${id.slice(-8)}xyz`;
    const mediaType = c.kind === 'CAROUSEL' ? 'CAROUSEL_ALBUM' : c.kind === 'REELS' ? 'VIDEO' : 'IMAGE';
    const timestamp = new Date().toISOString().replace(/\.\d{3}Z$/, '+0000');
    const permalink = `https://www.instagram.com/${mediaType === 'VIDEO' ? 'reel' : 'p'}/${shortcode}/`;
    state.posts.push({ id, containerId: c.id, userId, caption: c.caption, mediaType, timestamp, permalink });
    c.statusCode = 'PUBLISHED';
    state.quota.usage += 1;
    return { status: 200, body: { id } };
  }

  function graph(method: string, parts: string[], q: Record<string, string>, req: IncomingMessage): [FakeEndpoint | 'unknown', () => FakeReply] {
    const [node, edge] = parts;
    if (node === undefined || parts.length > 2) return ['unknown', () => graphError(100, undefined, { message: 'Unknown path components' })];
    const authed = (fn: (userId: string) => FakeReply) => () => {
      const who = authUser(req);
      return 'status' in who ? who : fn(who.userId);
    };
    const ownNode = (fn: (userId: string) => FakeReply) => authed((userId) => (node === userId ? fn(userId) : noObject(node)));
    if (method === 'GET' && node === 'me' && !edge) {
      return ['me', authed(() => ({ status: 200, body: pick({ id: state.account.appScopedId, user_id: state.account.userId, username: state.account.username }, q.fields) }))];
    }
    if (method === 'GET' && edge === 'content_publishing_limit') {
      return ['publishing_limit', ownNode(() => ({ status: 200, body: { data: [pick({ quota_usage: state.quota.usage, config: { quota_total: state.quota.total, quota_duration: 86400 } }, q.fields ?? 'quota_usage')] } }))];
    }
    if (method === 'POST' && edge === 'media') return ['create_container', ownNode((userId) => createContainer(userId, q))];
    if (method === 'POST' && edge === 'media_publish') return ['media_publish', ownNode((userId) => publish(userId, q))];
    if (method === 'GET' && edge === 'media') {
      return ['media_list', ownNode((userId) => {
        const lag = state.listingLagCalls > 0 ? (state.listingLagCalls--, 1) : 0;
        const mine = state.posts.filter((p) => p.userId === userId).reverse().slice(lag, lag + Number(q.limit ?? 25));
        return { status: 200, body: { data: mine.map((p) => pick(postFields(p), q.fields)), paging: {} } };
      })];
    }
    if (method === 'GET' && !edge && state.containers.has(node)) {
      return ['container_status', authed((userId) => {
        const c = state.containers.get(node)!;
        if (c.userId !== userId) return noObject(node);
        if (c.statusCode === 'IN_PROGRESS' && --c.pollsLeft <= 0) c.statusCode = state.containerOutcome;
        const text = c.statusCode === 'ERROR' ? state.containerErrorText : STATUS_TEXT[c.statusCode];
        return { status: 200, body: pick({ id: c.id, status_code: c.statusCode, status: text }, q.fields) };
      })];
    }
    if (method === 'GET' && !edge) {
      return ['media_get', authed((userId) => {
        const p = state.posts.find((x) => x.id === node && x.userId === userId);
        return p ? { status: 200, body: pick(postFields(p), q.fields) } : noObject(node);
      })];
    }
    return ['unknown', () => graphError(100, undefined, { message: `Unsupported ${method} request` })];
  }

  const oauthError = (message: string): FakeReply => ({ status: 400, body: { error_type: 'OAuthException', code: 400, error_message: message } });

  function route(method: string, path: string, q: Record<string, string>, req: IncomingMessage): [FakeEndpoint | 'authorize' | 'unknown', () => FakeReply] {
    if (method === 'GET' && path === '/oauth/authorize') return ['authorize', () => ({ status: 200, body: { page: 'authorization window' } })];
    if (method === 'POST' && path === '/oauth/access_token') {
      return ['oauth_token', () => {
        for (const k of ['client_id', 'client_secret', 'grant_type', 'redirect_uri', 'code']) if (!q[k]) return oauthError(`Missing required field ${k}`);
        if (q.client_id !== clientId || q.client_secret !== clientSecret) return oauthError('Invalid platform app');
        if (q.grant_type !== 'authorization_code') return oauthError('Unsupported grant_type');
        const redirect = state.codes.get(q.code!);
        state.codes.delete(q.code!);
        if (redirect === undefined || redirect !== q.redirect_uri) return oauthError('Invalid authorization code');
        const token = nextId('IGshort-');
        state.tokens.set(token, { userId: state.account.userId, kind: 'short', expired: false });
        return { status: 200, body: { data: [{ access_token: token, user_id: state.account.userId, permissions: state.grantedPermissions }] } };
      }];
    }
    if (method === 'GET' && (path === '/access_token' || path === '/refresh_access_token')) {
      const refresh = path === '/refresh_access_token';
      return [refresh ? 'refresh' : 'exchange', () => {
        if (q.grant_type !== (refresh ? 'ig_refresh_token' : 'ig_exchange_token')) return graphError(100, undefined, { message: 'Invalid grant_type' });
        if (!refresh && q.client_secret !== clientSecret) return graphError(101, undefined, { message: 'Error validating client secret' });
        const t = state.tokens.get(q.access_token ?? '');
        if (!t || t.expired || t.kind !== (refresh ? 'long' : 'short')) return tokenError();
        const token = nextId('IGlong-');
        state.tokens.set(token, { userId: t.userId, kind: 'long', expired: false });
        return { status: 200, body: { access_token: token, token_type: 'bearer', expires_in: 5_184_000 } };
      }];
    }
    const m = /^\/v\d+\.\d+\/(.+)$/.exec(path);
    if (!m) return ['unknown', () => graphError(100, undefined, { message: 'Unknown path' })];
    return graph(method, m[1]!.split('/').map(decodeURIComponent), q, req);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const q: Record<string, string> = Object.fromEntries(url.searchParams);
    // Graph reads parameters from the query and from a urlencoded or JSON body alike.
    if (raw) Object.assign(q, (req.headers['content-type'] ?? '').includes('json') ? (JSON.parse(raw) as Record<string, string>) : Object.fromEntries(new URLSearchParams(raw)));
    const method = req.method ?? 'GET';
    const [endpoint, run] = route(method, url.pathname, q, req);
    // Recorded without secrets, so tests can print requests freely.
    const params = Object.fromEntries(Object.entries(q).filter(([k]) => k !== 'access_token' && k !== 'client_secret'));
    state.requests.push({ method, endpoint, path: url.pathname, params });
    if (endpoint === 'authorize') state.authorizations.push(url.searchParams);

    const delayAt = state.delays.findIndex((d) => d.endpoint === endpoint);
    const delay = delayAt >= 0 ? state.delays.splice(delayAt, 1)[0] : undefined;
    const scriptedAt = state.scripted.findIndex((s) => s.endpoint === endpoint);
    const scripted = scriptedAt >= 0 ? state.scripted.splice(scriptedAt, 1)[0]!.reply : undefined;
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

    if (delay?.mode === 'drop') {
      await wait(delay.ms);
      res.destroy();
      return;
    }
    if (delay?.mode === 'arrive-late') await wait(delay.ms);
    const reply = scripted ?? run();
    if (delay?.mode === 'respond-late') await wait(delay.ms);
    if (res.destroyed) return;
    res.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(reply.body));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end('{"error":{"message":"fake crashed","code":1}}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    /** Every post made, in order: the proof that nothing was published twice. */
    get posts(): readonly FakePost[] {
      return state.posts;
    },
    /** Knobs and records (processingPolls, containerOutcome, quota, requests, authorizations…). */
    state,
    clientId,
    clientSecret,
    accessToken: 'IGAA-test-token',
    baseUrl: base,
    apiBaseUrl: `${base}/v23.0`,
    authorizeUrl: `${base}/oauth/authorize`,
    tokenUrl: `${base}/oauth/access_token`,
    /** Makes an authorization code for this redirect URI, as the authorization window would. */
    issueCode(redirectUri: string): string {
      const code = nextId('AQcode-');
      state.codes.set(code, redirectUri);
      return code;
    },
    /** The next request to `endpoint` gets this reply instead of being processed. */
    failNext(endpoint: FakeEndpoint, reply: FakeReply): void {
      state.scripted.push({ endpoint, reply });
    },
    /** The next request to `endpoint` is slow in the given way (see DelayMode). */
    delayNext(endpoint: FakeEndpoint, ms: number, mode: DelayMode): void {
      state.delays.push({ endpoint, ms, mode });
    },
    expireToken(token: string): void {
      const t = state.tokens.get(token);
      if (t) t.expired = true;
    },
    count(endpoint: FakeEndpoint): number {
      return state.requests.filter((r) => r.endpoint === endpoint).length;
    },
    async close(): Promise<void> {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export type FakeInstagram = Awaited<ReturnType<typeof startFakeInstagram>>;
