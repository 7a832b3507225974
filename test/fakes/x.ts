import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type XRequestSchema, xSchemaViolations } from './x-openapi.js';
import { overrides, serviceEnv } from '../support/overrides.js';

/**
 * A local stand-in for X API v2 (posts, the user timeline, users/me, media upload) and its OAuth 2.0 endpoints,
 * with the official paths, parameters and error shapes (RFC 7807-style problems `{title, detail, type, status}`,
 * OAuth's `{error, error_description}`). It refuses what X refuses — a missing or expired bearer token, a missing
 * scope, Basic client authentication missing at the token endpoint, a PKCE verifier that does not match, a used
 * code or refresh token (refresh tokens rotate), unknown query parameters and fields, media that is not processed,
 * a reply to a post that does not exist, and a text the account published already (403 duplicate content).
 * Every created post is kept in `tweets` so tests can prove nothing was posted twice.
 */

export interface FakeTweet {
  id: string;
  authorId: string;
  text: string;
  replyTo: string | null;
  mediaIds: string[];
  createdAt: number;
}

export interface FakeMedia {
  id: string;
  ownerId: string;
  kind: 'image' | 'gif' | 'video';
  mediaType: string;
  totalBytes: number;
  /** Bytes received per segment index (chunked uploads). */
  segments: Map<number, number>;
  finalized: boolean;
  state: 'pending' | 'in_progress' | 'succeeded' | 'failed' | null;
  /** STATUS checks left that still answer in_progress. */
  pollsLeft: number;
}

export interface ScriptedAnswer {
  method: string;
  /** Prefix of the request path (no query), e.g. `/2/tweets`, or a pattern, e.g. `/\/finalize$/`. */
  path: string | RegExp;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Only while this holds (e.g. "after the sixth post"); always when absent. */
  when?: () => boolean;
}

interface Grant {
  userId: string;
  scopes: Set<string>;
}

export const ALL_SCOPES = ['tweet.read', 'tweet.write', 'users.read', 'offline.access', 'media.write'];
const TWEET_FIELDS = new Set(['attachments', 'author_id', 'conversation_id', 'created_at', 'edit_history_tweet_ids', 'entities', 'id', 'in_reply_to_user_id', 'lang', 'public_metrics', 'referenced_tweets', 'reply_settings', 'text']);
const TIMELINE_PARAMS = new Set(['max_results', 'pagination_token', 'start_time', 'end_time', 'since_id', 'until_id', 'exclude', 'tweet.fields', 'expansions', 'media.fields', 'user.fields', 'poll.fields', 'place.fields']);
// Request bodies are first checked against X's OpenAPI (x-openapi.ts): there, GIFs (tweet_gif, image/gif)
// exist only in the chunked flow. The checks after it are the fake's own (what X does beyond its description).
const MB = 1024 * 1024;

const problem = (status: number, title: string, detail: string, type = 'about:blank', extra: Record<string, unknown> = {}) => ({ title, detail, type, status, ...extra });
const invalid = (detail: string) => problem(400, 'Invalid Request', detail, 'https://api.x.com/2/problems/invalid-request');
const rec = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const newer = (a: string, b: string) => (a.length === b.length ? b.localeCompare(a) : b.length - a.length);

/** Starts the fake on 127.0.0.1 and a free port. */
export async function startFakeX() {
  const scripted: ScriptedAnswer[] = [];
  const hangs: { method: string; path: string | RegExp; when?: (() => boolean) | undefined }[] = [];
  const on = (method: string, path: string) => (r: { method: string; path: string | RegExp; when?: (() => boolean) | undefined }) =>
    r.method === method && (typeof r.path === 'string' ? path.startsWith(r.path) : r.path.test(path)) && (r.when?.() ?? true);
  const hanging: ServerResponse[] = [];
  const tokens = new Map<string, Grant>();
  const refreshTokens = new Map<string, Grant>();
  const codes = new Map<string, { redirectUri: string; challenge: string; scopes: Set<string> }>();
  let seq = 0;
  // Snowflake-like ids: 19 digits, past Number.MAX_SAFE_INTEGER, so only ever handled as text.
  const nextId = () => String(1_880_000_000_000_000_000n + BigInt(++seq));

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, problem(500, 'Internal Server Error', String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake = {
    baseUrl: base,
    authorizeUrl: `${base}/i/oauth2/authorize`,
    tokenUrl: `${base}/2/oauth2/token`,
    clientId: 'x-client-id',
    clientSecret: 'x-client-secret',
    user: { id: '1500000000000000001', username: 'acme', name: 'Acme Inc.' },
    /** A valid access token of `user` with every scope. */
    token: 'x-access-token',
    tweets: [] as FakeTweet[],
    /** POST /2/tweets requests that reached the endpoint (created or refused). */
    postAttempts: 0,
    /** Request bodies refused for breaking X's OpenAPI, each as "METHOD path: what". */
    schemaViolations: [] as string[],
    media: new Map<string, FakeMedia>(),
    requests: [] as { method: string; path: string; query: Record<string, string>; authorization: string }[],
    authorizeRequests: [] as URLSearchParams[],
    knobs: {
      /** STATUS checks that answer in_progress after a finalize. */
      processingPolls: 0,
      processingFails: false,
      /** What a failed processing says in `processing_info.error.message` (X words each cause its own way). */
      processingError: 'Unsupported video format',
      checkAfterSecs: 1,
      /** Timeline reads that still miss every post (X's timeline lags behind a POST). */
      timelineLag: 0,
      rejectDuplicates: true,
      /** The largest APPEND segment accepted. */
      maxSegmentBytes: 5 * MB,
    },
    /** Answer the next matching request (method, path prefix) with this status and body, without doing anything. */
    failNext: (answer: ScriptedAnswer) => void scripted.push(answer),
    /** Do the next matching request's work but never answer (the client times out). */
    hangNext: (method: string, path: string | RegExp, when?: () => boolean) => void hangs.push({ method, path, when }),
    /** The access token stops working (401), as after two hours or a revocation. */
    expire: (token: string) => void tokens.delete(token),
    /** A refresh token as issued with the consent; it works once (rotation). */
    grantRefreshToken: (): string => {
      const rt = `x-refresh-${++seq}`;
      refreshTokens.set(rt, { userId: fake.user.id, scopes: new Set(ALL_SCOPES) });
      return rt;
    },
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  tokens.set(fake.token, { userId: fake.user.id, scopes: new Set(ALL_SCOPES) });

  function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const type = typeof body === 'string' ? 'text/html' : 'application/json; charset=utf-8';
    res.writeHead(status, { ...(text ? { 'content-type': type } : {}), ...headers });
    res.end(text);
  }

  function timelineItem(t: FakeTweet, fields: Set<string>): Record<string, unknown> {
    // As X renders it: links as t.co, HTML-escaped, a t.co link appended for attached media.
    let text = escapeHtml(t.text.replace(/\bhttps?:\/\/\S+/gi, () => `https://t.co/${(++seq).toString(36)}`));
    if (t.mediaIds.length > 0) text = `${text} https://t.co/m${(++seq).toString(36)}`.trim();
    const item: Record<string, unknown> = { id: t.id, text, edit_history_tweet_ids: [t.id] };
    if (fields.has('created_at')) item.created_at = new Date(t.createdAt).toISOString();
    if (fields.has('referenced_tweets') && t.replyTo) item.referenced_tweets = [{ type: 'replied_to', id: t.replyTo }];
    if (fields.has('attachments') && t.mediaIds.length > 0) {
      item.attachments = { media_keys: t.mediaIds.map((id) => `${fake.media.get(id)?.kind === 'video' ? 7 : fake.media.get(id)?.kind === 'gif' ? 16 : 3}_${id}`) };
    }
    return item;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', base);
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const header = (name: string) => {
      const v = req.headers[name.toLowerCase()];
      return Array.isArray(v) ? (v[0] ?? '') : (v ?? '');
    };
    fake.requests.push({ method, path, query: Object.fromEntries(url.searchParams), authorization: header('authorization') });
    /** Refuses a body X's OpenAPI does not allow (400, as X's validation answers); true when it did. */
    const breaks = (schema: XRequestSchema, body: unknown): boolean => {
      const violations = xSchemaViolations(schema, body);
      if (violations.length === 0) return false;
      fake.schemaViolations.push(...violations.map((v) => `${method} ${path}: ${v}`));
      send(res, 400, invalid(violations.join('; ')));
      return true;
    };
    const contentType = header('content-type');
    const json = (): Record<string, unknown> | null => {
      try {
        const v: unknown = JSON.parse(raw.toString('utf8'));
        return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
      } catch {
        return null;
      }
    };
    const form = async () => (contentType.startsWith('multipart/form-data') || contentType.startsWith('application/x-www-form-urlencoded')
      ? new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData()
      : null);

    const scriptedAt = scripted.findIndex(on(method, path));
    if (scriptedAt >= 0) {
      const [s] = scripted.splice(scriptedAt, 1);
      return send(res, s?.status ?? 500, s?.body, s?.headers);
    }
    const hangAt = hangs.findIndex(on(method, path));
    const hang = hangAt >= 0 && hangs.splice(hangAt, 1).length > 0;
    const reply = (status: number, body?: unknown, headers: Record<string, string> = {}) => (hang ? void hanging.push(res) : send(res, status, body, headers));

    // --- OAuth 2.0: authorize page, token endpoint.
    if (method === 'GET' && path === '/i/oauth2/authorize') {
      fake.authorizeRequests.push(url.searchParams);
      const q = url.searchParams;
      const redirect = q.get('redirect_uri');
      const scopes = (q.get('scope') ?? '').split(' ').filter(Boolean);
      if (q.get('response_type') !== 'code' || q.get('client_id') !== fake.clientId || !redirect || scopes.length === 0 || !q.get('state')) {
        return send(res, 400, 'Something went wrong: the authorize request is missing required parameters.');
      }
      if (!q.get('code_challenge') || q.get('code_challenge_method') !== 'S256') return send(res, 400, 'Something went wrong: code_challenge with S256 is required.');
      const code = `x-code-${++seq}`;
      codes.set(code, { redirectUri: redirect, challenge: q.get('code_challenge') ?? '', scopes: new Set(scopes) });
      const to = new URL(redirect);
      to.searchParams.set('state', q.get('state') ?? '');
      to.searchParams.set('code', code);
      return send(res, 302, undefined, { location: to.toString() });
    }
    if (path === '/2/oauth2/token') {
      if (method !== 'POST' || !contentType.startsWith('application/x-www-form-urlencoded')) return send(res, 400, { error: 'invalid_request', error_description: 'A form-encoded POST is required.' });
      const basic = /^Basic (.+)$/.exec(header('authorization'))?.[1] ?? '';
      const [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent);
      if (id !== fake.clientId || secret !== fake.clientSecret) return send(res, 401, { error: 'unauthorized_client', error_description: 'Missing valid authorization header' });
      const f = new URLSearchParams(raw.toString('utf8'));
      let grant: Grant;
      if (f.get('grant_type') === 'authorization_code') {
        const code = codes.get(f.get('code') ?? '');
        const verifier = f.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (!code || code.redirectUri !== f.get('redirect_uri') || code.challenge !== challenge) {
          return send(res, 400, { error: 'invalid_request', error_description: 'Value passed for the authorization code was invalid.' });
        }
        codes.delete(f.get('code') ?? ''); // single use
        grant = { userId: fake.user.id, scopes: code.scopes };
      } else if (f.get('grant_type') === 'refresh_token') {
        const old = refreshTokens.get(f.get('refresh_token') ?? '');
        if (!old) return send(res, 400, { error: 'invalid_request', error_description: 'Value passed for the token was invalid.' });
        refreshTokens.delete(f.get('refresh_token') ?? ''); // rotation: the old refresh token stops working
        grant = old;
      } else {
        return send(res, 400, { error: 'unsupported_grant_type', error_description: 'Grant type is not supported.' });
      }
      const accessToken = `x-access-${++seq}`;
      tokens.set(accessToken, grant);
      const answer: Record<string, unknown> = { token_type: 'bearer', expires_in: 7200, access_token: accessToken, scope: [...grant.scopes].join(' ') };
      if (grant.scopes.has('offline.access')) {
        const rt = `x-refresh-${++seq}`;
        refreshTokens.set(rt, grant);
        answer.refresh_token = rt;
      }
      return reply(200, answer);
    }

    // --- API v2: bearer token, scopes.
    const grant = tokens.get(/^Bearer (.+)$/.exec(header('authorization'))?.[1] ?? '');
    if (!grant) return send(res, 401, problem(401, 'Unauthorized', 'Unauthorized'));
    const lacks = (...scopes: string[]) => {
      if (scopes.every((s) => grant.scopes.has(s))) return false;
      send(res, 403, problem(403, 'Forbidden', 'You are not permitted to perform this action.'));
      return true;
    };

    if (method === 'GET' && path === '/2/users/me') {
      if (lacks('users.read', 'tweet.read')) return;
      return reply(200, { data: { id: fake.user.id, name: fake.user.name, username: fake.user.username } });
    }

    if (method === 'POST' && path === '/2/tweets') {
      if (lacks('tweet.write', 'tweet.read', 'users.read')) return;
      fake.postAttempts++;
      const body = json();
      if (body === null) return send(res, 400, invalid('Request body is not valid JSON.'));
      if (breaks('TweetCreateRequest', body)) return;
      const unknown = Object.keys(body).filter((k) => !['text', 'media', 'reply', 'quote_tweet_id', 'reply_settings', 'poll', 'geo', 'nullcast'].includes(k));
      if (unknown.length > 0) return send(res, 400, invalid(`[${unknown.join(', ')}] is not a valid field.`));
      const text = body.text === undefined ? '' : body.text;
      if (typeof text !== 'string') return send(res, 400, invalid('text must be a string.'));
      const mediaIds = body.media === undefined ? [] : rec(body.media).media_ids;
      if (!Array.isArray(mediaIds) || (body.media !== undefined && (mediaIds.length < 1 || mediaIds.length > 4)) || mediaIds.some((m) => typeof m !== 'string' || !/^\d{1,19}$/.test(m))) {
        return send(res, 400, invalid('media.media_ids must hold 1 to 4 media ids.'));
      }
      if (text.trim() === '' && mediaIds.length === 0) return send(res, 400, invalid('You must provide text or media.'));
      if ([...text].length > 280) return send(res, 400, invalid('Your Tweet text is too long.'));
      const media = (mediaIds as string[]).map((id) => fake.media.get(id));
      if (media.some((m) => !m || m.ownerId !== grant.userId || m.state === 'failed' || (m.kind !== 'image' && !m.finalized) || (m.state !== null && m.state !== 'succeeded'))) {
        return send(res, 400, invalid('Your media IDs are invalid.'));
      }
      if (media.some((m) => m?.kind !== 'image') && media.length > 1) return send(res, 400, invalid('A post may carry one video or GIF.'));
      const replyTo = body.reply === undefined ? null : rec(body.reply).in_reply_to_tweet_id;
      if (replyTo !== null && (typeof replyTo !== 'string' || !fake.tweets.some((t) => t.id === replyTo))) {
        return send(res, 403, problem(403, 'Forbidden', 'You attempted to reply to a Tweet that is deleted or not visible to you.'));
      }
      if (fake.knobs.rejectDuplicates && text.trim() !== '' && fake.tweets.some((t) => t.authorId === grant.userId && t.text === text)) {
        return send(res, 403, problem(403, 'Forbidden', 'You are not allowed to create a Tweet with duplicate content.'));
      }
      const tweet: FakeTweet = { id: nextId(), authorId: grant.userId, text, replyTo: replyTo as string | null, mediaIds: mediaIds as string[], createdAt: Date.now() };
      fake.tweets.push(tweet);
      return reply(201, { data: { id: tweet.id, text, edit_history_tweet_ids: [tweet.id] } });
    }

    const single = /^\/2\/tweets\/(\d{1,19})$/.exec(path);
    if (method === 'GET' && single) {
      if (lacks('tweet.read', 'users.read')) return;
      const t = fake.tweets.find((x) => x.id === single[1]);
      if (t) return reply(200, { data: { id: t.id, text: escapeHtml(t.text), edit_history_tweet_ids: [t.id] } });
      const id = single[1] ?? '';
      return reply(200, { errors: [{ value: id, detail: `Could not find tweet with id: [${id}].`, title: 'Not Found Error', resource_type: 'tweet', parameter: 'id', resource_id: id, type: 'https://api.x.com/2/problems/resource-not-found' }] });
    }

    const timeline = /^\/2\/users\/(\d{1,19})\/tweets$/.exec(path);
    if (method === 'GET' && timeline) {
      if (lacks('tweet.read', 'users.read')) return;
      const q = url.searchParams;
      const unknown = [...q.keys()].filter((k) => !TIMELINE_PARAMS.has(k));
      if (unknown.length > 0) return send(res, 400, invalid(`The query parameters [${unknown.join(', ')}] are not one of [${[...TIMELINE_PARAMS].join(',')}]`));
      const fields = new Set((q.get('tweet.fields') ?? '').split(',').filter(Boolean));
      const badField = [...fields].find((f) => !TWEET_FIELDS.has(f));
      if (badField) return send(res, 400, invalid(`The \`tweet.fields\` query parameter value [${badField}] is not one of [${[...TWEET_FIELDS].join(',')}]`));
      const max = Number(q.get('max_results') ?? 10);
      if (!Number.isInteger(max) || max < 5 || max > 100) return send(res, 400, invalid(`The \`max_results\` query parameter value [${q.get('max_results') ?? ''}] is not between 5 and 100`));
      const start = q.get('start_time');
      if (start !== null && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/.test(start)) return send(res, 400, invalid(`Invalid 'start_time':'${start}'.`));
      if (fake.knobs.timelineLag > 0) {
        fake.knobs.timelineLag--;
        return reply(200, { meta: { result_count: 0 } });
      }
      const since = start === null ? 0 : Date.parse(start);
      const items = fake.tweets
        .filter((t) => t.authorId === timeline[1] && t.createdAt >= since)
        .sort((a, b) => newer(a.id, b.id))
        .slice(0, max)
        .map((t) => timelineItem(t, fields));
      if (items.length === 0) return reply(200, { meta: { result_count: 0 } });
      return reply(200, { data: items, meta: { result_count: items.length, newest_id: items[0]?.id, oldest_id: items.at(-1)?.id } });
    }

    // --- Media upload (media.write).
    if (path.startsWith('/2/media/upload') && lacks('media.write')) return;
    if (method === 'POST' && path === '/2/media/upload') {
      const f = await form();
      const file = f?.get('media');
      const category = f?.get('media_category');
      if (!f || typeof file === 'string' || !file || typeof category !== 'string') return send(res, 400, invalid('media and media_category are required.'));
      // Without a media_type field, the file part's own type stands for it.
      const declared = f.get('media_type');
      const type = typeof declared === 'string' ? declared : file.type;
      if (breaks('MediaUploadRequestOneShot', { ...Object.fromEntries([...f.entries()].filter(([, v]) => typeof v === 'string')), media_type: type })) return;
      if (file.size === 0) return send(res, 400, invalid('media is empty.'));
      if (file.size > 5 * MB) return send(res, 400, invalid(`File size exceeds ${5 * MB} bytes.`));
      const m: FakeMedia = { id: nextId(), ownerId: grant.userId, kind: 'image', mediaType: type, totalBytes: file.size, segments: new Map([[0, file.size]]), finalized: true, state: null, pollsLeft: 0 };
      fake.media.set(m.id, m);
      return reply(200, { data: { id: m.id, media_key: `3_${m.id}`, size: m.totalBytes, expires_after_secs: 86_400, image: { image_type: type, w: 1200, h: 800 } } });
    }
    if (method === 'GET' && path === '/2/media/upload') {
      const m = fake.media.get(url.searchParams.get('media_id') ?? '');
      if (url.searchParams.get('command') !== 'STATUS' || !m || m.ownerId !== grant.userId || !m.finalized) return send(res, 400, invalid('Invalid media_id or command.'));
      if (m.state === 'pending' || m.state === 'in_progress') {
        if (m.pollsLeft > 0) {
          m.pollsLeft--;
          m.state = 'in_progress';
        } else {
          m.state = fake.knobs.processingFails ? 'failed' : 'succeeded';
        }
      }
      const info: Record<string, unknown> = m.state === 'failed'
        ? { state: 'failed', progress_percent: 100, error: { code: 1, name: 'InvalidMedia', message: fake.knobs.processingError } }
        : m.state === 'succeeded' || m.state === null ? { state: 'succeeded', progress_percent: 100 } : { state: m.state, check_after_secs: fake.knobs.checkAfterSecs, progress_percent: 50 };
      return reply(200, { data: { id: m.id, media_key: `${m.kind === 'video' ? 7 : m.kind === 'gif' ? 16 : 3}_${m.id}`, expires_after_secs: 86_000, processing_info: info } });
    }
    if (method === 'POST' && path === '/2/media/upload/initialize') {
      const body = json();
      if (!contentType.startsWith('application/json') || body === null) return send(res, 400, invalid('A JSON body is required.'));
      if (breaks('MediaUploadConfigRequest', body)) return;
      const type = body.media_type;
      if (typeof type !== 'string') return send(res, 400, invalid('media_type is required.'));
      if (!Number.isInteger(body.total_bytes) || Number(body.total_bytes) <= 0) return send(res, 400, invalid('total_bytes is required.'));
      const category = body.media_category;
      if (typeof category !== 'string') return send(res, 400, invalid('media_category is required here.'));
      // This fake takes posts' videos and GIFs in segments; each category wants its own kind of file.
      const gif = category === 'tweet_gif';
      if (!(gif ? type === 'image/gif' : (category === 'tweet_video' || category === 'amplify_video') && type.startsWith('video/'))) {
        return send(res, 400, invalid(`media_type [${type}] does not match media_category [${category}].`));
      }
      const limit = gif ? 15 * MB : 512 * MB;
      if (Number(body.total_bytes) > limit) return send(res, 400, invalid('total_bytes exceeds the maximum allowed file size.'));
      const m: FakeMedia = { id: nextId(), ownerId: grant.userId, kind: gif ? 'gif' : 'video', mediaType: type, totalBytes: Number(body.total_bytes), segments: new Map(), finalized: false, state: null, pollsLeft: 0 };
      fake.media.set(m.id, m);
      return reply(200, { data: { id: m.id, media_key: `${gif ? 16 : 7}_${m.id}`, expires_after_secs: 1_295_999 } });
    }
    const action = /^\/2\/media\/upload\/(\d{1,19})\/(append|finalize)$/.exec(path);
    if (method === 'POST' && action) {
      const m = fake.media.get(action[1] ?? '');
      if (!m || m.ownerId !== grant.userId || m.kind === 'image') return send(res, 400, invalid('Invalid media id.'));
      if (m.finalized) return send(res, 400, invalid('The upload was already finalized.'));
      if (action[2] === 'append') {
        const f = await form();
        const file = f?.get('media');
        const index = Number(f?.get('segment_index'));
        if (!f || typeof file === 'string' || !file || !Number.isInteger(index) || index < 0 || index > 999) return send(res, 400, invalid('media and segment_index (0-999) are required.'));
        if (file.size === 0 || file.size > fake.knobs.maxSegmentBytes) return send(res, 400, invalid('The segment size is not valid.'));
        m.segments.set(index, file.size);
        return reply(200, { data: { expires_at: Math.floor(Date.now() / 1000) + 86_400 } });
      }
      const received = [...m.segments.keys()].sort((a, b) => a - b);
      const total = [...m.segments.values()].reduce((a, b) => a + b, 0);
      if (received.some((s, i) => s !== i) || total !== m.totalBytes) return send(res, 400, invalid(`Segments do not add up to total_bytes (${total} of ${m.totalBytes}).`));
      m.finalized = true;
      m.state = 'pending';
      m.pollsLeft = fake.knobs.processingPolls;
      return reply(200, { data: { id: m.id, media_key: `${m.kind === 'gif' ? 16 : 7}_${m.id}`, size: m.totalBytes, expires_after_secs: 86_400, processing_info: { state: 'pending', check_after_secs: fake.knobs.checkAfterSecs } } });
    }
    return send(res, 404, problem(404, 'Not Found Error', `No route for ${method} ${path}`));
  }

  return fake;
}

export type FakeX = Awaited<ReturnType<typeof startFakeX>>;

/** The service's configuration for live X against this fake. */
export function xEnv(fake: FakeX): Record<string, string> {
  return serviceEnv(
    { X_CLIENT_ID: fake.clientId, X_CLIENT_SECRET: fake.clientSecret },
    overrides({ X_API_URL: fake.baseUrl, X_AUTHORIZE_URL: fake.authorizeUrl, X_TOKEN_URL: fake.tokenUrl }),
  );
}
