import { graphError } from './meta-graph.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { overrides, serviceEnv } from '../support/overrides.js';

/** A request as the fake saw it: query and form parameters merged, as the Graph API reads them. */
export interface FakeRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  token: string | null;
}

export interface FakeContainer {
  id: string;
  ownerId: string;
  mediaType: string;
  text: string | null;
  mediaUrl: string | null;
  replyToId: string | null;
  status: 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';
  /** Status checks left before IN_PROGRESS turns into FINISHED (or ERROR). */
  pollsLeft: number;
  errorMessage: string | null;
}

export interface FakePost {
  id: string;
  containerId: string;
  ownerId: string;
  mediaType: string;
  text: string | null;
  replyToId: string | null;
  permalink: string;
  timestamp: number;
}

/** A scripted answer for the next request(s) that `match`: an error instead of the real answer, or the real
 * answer sent `hangMs` late (the step is done on the fake, the client times out). */
type Rule = { match: (r: FakeRequest) => boolean; remaining: number } & ({ error: { status: number; body: unknown } } | { hangMs: number });

const USER_ID = '17841400000000001';
const USERNAME = 'acme';
const CLIENT_ID = 'threads-client';
const CLIENT_SECRET = 'threads-secret';

export { graphError };

class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}
const bad = (code: number, message: string, subcode?: number) => new Reply(400, graphError(code, message, subcode === undefined ? {} : { subcode }));
const ok = (body: unknown) => new Reply(200, body);

/**
 * A local Threads Graph API (graph.threads.net/v1.0 plus the OAuth endpoints) that follows the documented
 * shapes closely enough to catch mistakes: it validates the token (Bearer header or `access_token`), the
 * account in the path, `media_type` and the field it requires, the 500-character text limit, `reply_to_id`,
 * `creation_id` and the container's status, and `fields` on reads. Every published post is kept in `posts`.
 */
export async function startFakeThreads() {
  let seq = 0;
  // Graph ids are digit strings past Number.MAX_SAFE_INTEGER: built as text, never as numbers.
  const nextId = () => `180000000${String(++seq).padStart(8, '0')}`;
  const validTokens = new Set<string>(['tok-live']);
  const shortTokens = new Set<string>();
  const codes = new Map<string, string>(); // code → redirect_uri
  const containers = new Map<string, FakeContainer>();
  const posts: FakePost[] = [];
  const requests: FakeRequest[] = [];
  const authorizeRequests: Record<string, string>[] = [];
  const rules: Rule[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const knobs = {
    /** IN_PROGRESS status checks of each new container. */
    processingPolls: 0,
    /** The next container ends in ERROR with this error_message. */
    nextContainerError: null as string | null,
    quota: { usage: 0, total: 250, replyUsage: 0, replyTotal: 1000 },
  };

  function authed(r: FakeRequest): string | Reply {
    if (!r.token) return bad(2500, 'An active access token must be used to query information about the current user.');
    if (!validTokens.has(r.token)) return new Reply(400, graphError(190, 'Error validating access token: Session has expired.', { subcode: 463 }));
    return USER_ID;
  }
  const needFields = (r: FakeRequest) => (r.params.fields ? null : bad(100, 'The fields parameter is required here.'));

  function createContainer(r: FakeRequest): Reply {
    const p = r.params;
    const type = p.media_type;
    if (!type || !['TEXT', 'IMAGE', 'VIDEO', 'CAROUSEL'].includes(type)) return bad(100, 'Param media_type must be one of {TEXT, IMAGE, VIDEO, CAROUSEL}');
    if (type === 'TEXT' && !p.text) return bad(100, 'Param text is required for media_type TEXT');
    if (type === 'IMAGE' && !p.image_url) return bad(100, 'Param image_url is required for media_type IMAGE');
    if (type === 'VIDEO' && !p.video_url) return bad(100, 'Param video_url is required for media_type VIDEO');
    if (p.text && [...p.text].length > 500) return bad(100, 'Param text must be at most 500 characters long.');
    if (p.reply_to_id && !posts.some((x) => x.id === p.reply_to_id)) return bad(100, 'Invalid parameter reply_to_id', 4279009);
    const c: FakeContainer = {
      id: nextId(),
      ownerId: USER_ID,
      mediaType: type,
      text: p.text ?? null,
      mediaUrl: p.image_url ?? p.video_url ?? null,
      replyToId: p.reply_to_id ?? null,
      status: knobs.processingPolls > 0 ? 'IN_PROGRESS' : knobs.nextContainerError ? 'ERROR' : 'FINISHED',
      pollsLeft: knobs.processingPolls,
      errorMessage: knobs.nextContainerError,
    };
    knobs.nextContainerError = null;
    containers.set(c.id, c);
    return ok({ id: c.id });
  }

  function publish(r: FakeRequest): Reply {
    const id = r.params.creation_id;
    if (!id) return bad(100, 'The parameter creation_id is required');
    const c = containers.get(id);
    if (!c || c.ownerId !== USER_ID) return bad(100, 'Media container not found', 4279009);
    if (c.status === 'IN_PROGRESS') return bad(9007, 'The media is not ready for publishing, please wait for a moment', 2207027);
    if (c.status !== 'FINISHED') return bad(100, `The container cannot be published (status ${c.status})`);
    const isReply = c.replyToId !== null;
    if (isReply ? knobs.quota.replyUsage >= knobs.quota.replyTotal : knobs.quota.usage >= knobs.quota.total) {
      return bad(9, 'The user has reached the publishing limit', 2207042);
    }
    if (isReply) knobs.quota.replyUsage++;
    else knobs.quota.usage++;
    const post: FakePost = {
      id: nextId(),
      containerId: c.id,
      ownerId: USER_ID,
      mediaType: c.mediaType,
      text: c.text,
      replyToId: c.replyToId,
      permalink: `https://www.threads.net/@${USERNAME}/post/C${seq.toString(36).toUpperCase()}x`,
      timestamp: Date.now(),
    };
    posts.push(post);
    c.status = 'PUBLISHED';
    return ok({ id: post.id });
  }

  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+0000');

  function readNode(r: FakeRequest, id: string): Reply {
    const missing = needFields(r);
    if (missing) return missing;
    const c = containers.get(id);
    if (c) {
      if (c.status === 'IN_PROGRESS') {
        // Answers IN_PROGRESS to the first `processingPolls` checks, then the final status.
        if (c.pollsLeft > 0) c.pollsLeft--;
        else c.status = c.errorMessage ? 'ERROR' : 'FINISHED';
      }
      return ok({ id: c.id, status: c.status, ...(c.status === 'ERROR' ? { error_message: c.errorMessage ?? 'UNKNOWN' } : {}) });
    }
    const post = posts.find((x) => x.id === id);
    if (!post) return bad(100, `Unsupported get request. Object with ID '${id}' does not exist.`, 33);
    return ok({ id: post.id, permalink: post.permalink, text: post.text, timestamp: iso(post.timestamp) });
  }

  function route(r: FakeRequest): Reply {
    const parts = r.path.split('/').filter(Boolean);
    // OAuth (on the API host, outside /v1.0).
    if (r.method === 'GET' && r.path === '/oauth/authorize') {
      authorizeRequests.push(r.params);
      return ok({ recorded: true });
    }
    if (r.method === 'POST' && r.path === '/oauth/access_token') {
      const p = r.params;
      if (p.client_id !== CLIENT_ID || p.client_secret !== CLIENT_SECRET) return bad(101, 'Error validating client secret.');
      if (p.grant_type !== 'authorization_code') return bad(100, 'Unsupported grant_type');
      const redirect = p.code ? codes.get(p.code) : undefined;
      if (!redirect) return bad(100, 'Invalid verification code format.');
      if (redirect !== p.redirect_uri) return bad(100, 'Error validating verification code. Please make sure your redirect_uri is identical.');
      codes.delete(p.code ?? '');
      const short = `short-${nextId()}`;
      shortTokens.add(short);
      return ok({ access_token: short, user_id: Number(USER_ID) });
    }
    if (r.method === 'GET' && r.path === '/access_token') {
      const p = r.params;
      if (p.grant_type !== 'th_exchange_token' || p.client_secret !== CLIENT_SECRET) return bad(100, 'Invalid exchange request');
      if (!p.access_token || !shortTokens.delete(p.access_token)) return new Reply(400, graphError(190, 'Error validating access token'));
      const long = `long-${nextId()}`;
      validTokens.add(long);
      return ok({ access_token: long, token_type: 'bearer', expires_in: 5_183_944 });
    }
    if (r.method === 'GET' && r.path === '/refresh_access_token') {
      const p = r.params;
      if (p.grant_type !== 'th_refresh_token') return bad(100, 'Invalid refresh request');
      if (!p.access_token || !validTokens.has(p.access_token)) return new Reply(400, graphError(190, 'Error validating access token'));
      const renewed = `long-${nextId()}`;
      validTokens.add(renewed);
      return ok({ access_token: renewed, token_type: 'bearer', expires_in: 5_183_944 });
    }

    if (parts[0] !== 'v1.0') return new Reply(404, graphError(803, 'Unknown path'));
    const who = authed(r);
    if (who instanceof Reply) return who;
    const [, node, edge, extra] = parts;
    if (!node || extra !== undefined) return bad(100, 'Unsupported request');
    const me = node === 'me' || node === who;
    if (r.method === 'GET' && node === 'me' && !edge) return needFields(r) ?? ok({ id: USER_ID, username: USERNAME });
    if (edge === 'threads' || edge === 'threads_publish' || edge === 'threads_publishing_limit') {
      if (!me) return bad(100, `Unsupported request: object '${node}' is not this token's user`, 33);
      if (r.method === 'POST' && edge === 'threads') return createContainer(r);
      if (r.method === 'POST' && edge === 'threads_publish') return publish(r);
      if (r.method === 'GET' && edge === 'threads_publishing_limit') {
        const q = knobs.quota;
        return needFields(r) ?? ok({ data: [{ quota_usage: q.usage, config: { quota_total: q.total, quota_duration: 86400 }, reply_quota_usage: q.replyUsage, reply_config: { quota_total: q.replyTotal, quota_duration: 86400 } }] });
      }
      if (r.method === 'GET' && edge === 'threads') {
        const since = Number(r.params.since ?? 0) * 1000;
        const list = posts.filter((x) => x.replyToId === null && x.timestamp >= since).reverse();
        return needFields(r) ?? ok({ data: list.map((x) => ({ id: x.id, text: x.text, timestamp: iso(x.timestamp) })) });
      }
    }
    if (r.method === 'GET' && edge === 'replies') {
      if (!posts.some((x) => x.id === node)) return bad(100, `Object with ID '${node}' does not exist.`, 33);
      const list = posts.filter((x) => x.replyToId === node);
      return needFields(r) ?? ok({ data: list.map((x) => ({ id: x.id, text: x.text, timestamp: iso(x.timestamp), is_reply_owned_by_me: x.ownerId === who })) });
    }
    if (r.method === 'GET' && !edge) return readNode(r, node);
    return bad(100, 'Unsupported request');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const params = Object.fromEntries(url.searchParams);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (raw && (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) Object.assign(params, Object.fromEntries(new URLSearchParams(raw)));
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
    const r: FakeRequest = { method: req.method ?? 'GET', path: url.pathname, params, token: bearer ?? (url.pathname.startsWith('/v1.0') ? (params.access_token ?? null) : null) };
    requests.push(r);
    const rule = rules.find((x) => x.remaining > 0 && x.match(r));
    if (rule) rule.remaining--;
    const reply = rule && 'error' in rule ? new Reply(rule.error.status, rule.error.body) : route(r);
    const send = () => {
      if (res.destroyed) return;
      // A string body is sent as is (a proxy's or load balancer's page), anything else as Graph JSON.
      if (typeof reply.body === 'string') res.writeHead(reply.status, { 'content-type': 'text/html; charset=UTF-8' }).end(reply.body);
      else res.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(reply.body));
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
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    apiBaseUrl: `${origin}/v1.0`,
    authorizeUrl: `${origin}/oauth/authorize`,
    tokenUrl: `${origin}/oauth/access_token`,
    userId: USER_ID,
    username: USERNAME,
    token: 'tok-live',
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    posts,
    containers,
    requests,
    authorizeRequests,
    knobs,
    /** Makes a code valid for one exchange with this redirect URI (the user approved on threads.net). */
    issueCode(redirectUri: string): string {
      const code = `code-${nextId()}`;
      codes.set(code, redirectUri);
      return code;
    },
    /** Kills a token as a password change or an expiry would. */
    revokeToken(token: string): void {
      validTokens.delete(token);
    },
    /** The next `times` requests matching answer this error instead (Infinity: every one). */
    failNext(match: (r: FakeRequest) => boolean, status: number, body: unknown, times = 1): void {
      rules.push({ match, remaining: times, error: { status, body } });
    },
    /** The next `times` requests matching are carried out, but answered `hangMs` late. */
    hangNext(match: (r: FakeRequest) => boolean, hangMs: number, times = 1): void {
      rules.push({ match, remaining: times, hangMs });
    },
    /** Posts created from `/threads_publish` of one container (more than one would be a duplicate). */
    postsOf(containerId: string): FakePost[] {
      return posts.filter((p) => p.containerId === containerId);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type FakeThreads = Awaited<ReturnType<typeof startFakeThreads>>;

/** Matchers for `failNext` / `hangNext`. */
export const on = {
  createContainer: (r: FakeRequest) => r.method === 'POST' && r.path.endsWith('/threads'),
  publish: (r: FakeRequest) => r.method === 'POST' && r.path.endsWith('/threads_publish'),
  status: (r: FakeRequest) => r.method === 'GET' && (r.params.fields ?? '').includes('status'),
  quota: (r: FakeRequest) => r.path.endsWith('/threads_publishing_limit'),
};

/** The service settings that point its Threads adapter and OAuth at this fake. */
export function threadsEnv(fake: FakeThreads): Record<string, string> {
  return serviceEnv(
    { THREADS_CLIENT_ID: fake.clientId, THREADS_CLIENT_SECRET: fake.clientSecret },
    overrides({ THREADS_API_URL: fake.apiBaseUrl, THREADS_AUTHORIZE_URL: fake.authorizeUrl, THREADS_TOKEN_URL: fake.tokenUrl }),
  );
}
