import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

/**
 * A local Mastodon server (one instance) with the documented paths, parameters and error bodies
 * (`{"error": "…"}`; RFC 6749 `{error, error_description}` on /oauth/token). It refuses what Mastodon refuses:
 * an unknown or revoked token (401), a token without the scope a method needs (403, including
 * `authorize_if_got_token!` reads), an app's unregistered redirect URI or scope, a code used twice or for another
 * redirect, a PKCE verifier that does not match, an upload without a file or with a type or size over the
 * configured limits, a status over the character limit or with too many, foreign, attached or unprocessed media,
 * a reply to a status that does not exist. It honours the Idempotency-Key header (the same status for a repeated
 * key, until `expireIdempotencyKeys()` plays the server's one-hour expiry) and keeps every status in `statuses`.
 */

export interface FakeApp {
  clientId: string;
  clientSecret: string;
  name: string;
  redirectUris: string[];
  scopes: string[];
  website: string | null;
}

export interface FakeStatus {
  id: string;
  accountId: string;
  text: string;
  mediaIds: string[];
  inReplyToId: string | null;
  visibility: string;
  createdAt: number;
  url: string;
}

export interface FakeMedia {
  id: string;
  accountId: string;
  mime: string;
  bytes: number;
  state: 'processing' | 'ready' | 'failed';
  /** Checks that still answer 206 before the attachment is processed. */
  pollsLeft: number;
  statusId: string | null;
}

export interface ScriptedAnswer {
  method: string;
  /** Prefix of the request path, e.g. `/api/v1/statuses`. */
  path: string;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface InstanceConfig {
  /** False: answer 404 as servers before 4.0 do (no /api/v2/instance). */
  available: boolean;
  maxCharacters: number;
  maxMediaAttachments: number;
  charactersReservedPerUrl: number;
  imageSizeLimit: number;
  videoSizeLimit: number;
  supportedMimeTypes: string[];
}

export interface FakeMastodon {
  origin: string;
  host: string;
  account: { id: string; username: string };
  /** A valid token of `account` with every scope. */
  token: string;
  apps: Map<string, FakeApp>;
  statuses: FakeStatus[];
  media: Map<string, FakeMedia>;
  /** POST /api/v1/statuses requests that passed authentication, with their Idempotency-Key. */
  statusRequests: { key: string | null }[];
  /** POST /api/v2/media requests that stored a file. */
  uploads: number;
  instanceRequests: number;
  requests: { method: string; path: string; authorization: string | null }[];
  authorizeRequests: URLSearchParams[];
  instance: InstanceConfig;
  knobs: {
    /** 206 answers before an uploaded attachment is processed (images with 0 are processed synchronously: 200). */
    processingPolls: number;
    processingFails: boolean;
    /** The next consent is refused by the user (redirect with error=access_denied). */
    denyConsent: boolean;
  };
  /** A token of `account` with the given scopes. */
  issueToken(scopes: string[]): string;
  revoke(token: string): void;
  /** The server's one-hour expiry of idempotency keys, played now. */
  expireIdempotencyKeys(): void;
  /** Answer the next matching request with this status, body and headers (once), without doing anything. */
  failNext(answer: ScriptedAnswer): void;
  /** Do the next matching request's work, then cut the connection without answering. */
  dropNext(method: string, path: string): void;
  close(): Promise<void>;
}

const MB = 1024 * 1024;
const KNOWN_SCOPES = new Set(['read', 'write', 'follow', 'push', 'profile', 'read:accounts', 'read:statuses', 'write:statuses', 'write:media', 'write:accounts']);
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const rec = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const strOf = (v: unknown): string | null => (typeof v === 'string' ? v : null);

interface Body {
  fields: Map<string, string[]>;
  file: { mime: string; bytes: number } | null;
}

/** Starts the fake on 127.0.0.1 and a free port. */
export async function startFakeMastodon(): Promise<FakeMastodon> {
  const scripted: ScriptedAnswer[] = [];
  const drops: { method: string; path: string }[] = [];
  const tokens = new Map<string, { accountId: string; scopes: string[]; revoked: boolean }>();
  const codes = new Map<string, { clientId: string; redirectUri: string; scopes: string[]; challenge: string | null }>();
  const idempotency = new Map<string, string>();
  let seq = 0;
  let snowflake = 113_000_000_000_000_000n;
  const nextId = () => String((snowflake += 7n));

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, { error: String(err) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const origin = `http://${host}`;

  const fake: FakeMastodon = {
    origin,
    host,
    account: { id: '109348123456789012', username: 'ada' },
    token: 'mastodon-token-ada',
    apps: new Map(),
    statuses: [],
    media: new Map(),
    statusRequests: [],
    uploads: 0,
    instanceRequests: 0,
    requests: [],
    authorizeRequests: [],
    instance: {
      available: true,
      maxCharacters: 500,
      maxMediaAttachments: 4,
      charactersReservedPerUrl: 23,
      imageSizeLimit: 16 * MB,
      videoSizeLimit: 99 * MB,
      supportedMimeTypes: ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'video/mp4', 'video/quicktime', 'video/webm'],
    },
    knobs: { processingPolls: 0, processingFails: false, denyConsent: false },
    issueToken(scopes) {
      const token = `mastodon-token-${++seq}`;
      tokens.set(token, { accountId: fake.account.id, scopes, revoked: false });
      return token;
    },
    revoke(token) {
      const t = tokens.get(token);
      if (t) t.revoked = true;
    },
    expireIdempotencyKeys: () => idempotency.clear(),
    failNext: (answer) => void scripted.push(answer),
    dropNext: (method, path) => void drops.push({ method, path }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  tokens.set(fake.token, { accountId: fake.account.id, scopes: ['read', 'write'], revoked: false });

  function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/html' : 'application/json; charset=utf-8', ...headers });
    res.end(text);
  }

  /** Form, JSON or multipart, as Rails reads them (`media_ids[]` repeated; a JSON array under `media_ids`). */
  async function readBody(req: IncomingMessage): Promise<Body> {
    const type = req.headers['content-type'] ?? '';
    const fields = new Map<string, string[]>();
    const add = (k: string, v: string) => fields.set(k, [...(fields.get(k) ?? []), v]);
    if (type.startsWith('multipart/form-data')) {
      let file: Body['file'] = null;
      await new Promise<void>((resolve, reject) => {
        const bb = busboy({ headers: req.headers });
        bb.on('file', (name, stream, info) => {
          let bytes = 0;
          stream.on('data', (c: Buffer) => (bytes += c.length));
          stream.on('end', () => {
            if (name === 'file') file = { mime: info.mimeType, bytes };
          });
        });
        bb.on('field', (name, value) => add(name, value));
        bb.on('close', resolve);
        bb.on('error', reject);
        req.pipe(bb);
      });
      return { fields, file };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (type.startsWith('application/json')) {
      for (const [k, v] of Object.entries(rec(JSON.parse(raw || '{}')))) {
        if (Array.isArray(v)) for (const x of v) add(`${k}[]`, String(x));
        else if (v !== null && v !== undefined) add(k, String(v));
      }
    } else {
      for (const [k, v] of new URLSearchParams(raw)) add(k, v);
    }
    return { fields, file: null };
  }

  const statusJson = (s: FakeStatus) => ({
    id: s.id,
    created_at: new Date(s.createdAt).toISOString(),
    in_reply_to_id: s.inReplyToId,
    in_reply_to_account_id: s.inReplyToId ? fake.account.id : null,
    sensitive: false,
    spoiler_text: '',
    visibility: s.visibility,
    uri: `${origin}/users/${fake.account.username}/statuses/${s.id}`,
    url: s.url,
    content: `<p>${s.text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`,
    account: { id: fake.account.id, username: fake.account.username, acct: fake.account.username },
    media_attachments: s.mediaIds.map((id) => ({ id, type: fake.media.get(id)?.mime.startsWith('video/') ? 'video' : 'image', url: `${origin}/files/${id}` })),
  });
  const mediaJson = (m: FakeMedia) => ({ id: m.id, type: m.mime.startsWith('video/') ? 'video' : 'image', url: m.state === 'ready' ? `${origin}/files/${m.id}` : null, preview_url: `${origin}/files/${m.id}/small`, description: null });

  /** Mastodon's StatusLengthValidator, simplified: graphemes, every link as the reserved length. */
  const lengthOf = (text: string) => Array.from(graphemes.segment(text.replace(/https?:\/\/\S+/g, 'x'.repeat(fake.instance.charactersReservedPerUrl)))).length;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', origin);
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const authorization = strOf(req.headers.authorization) ?? null;
    fake.requests.push({ method, path, authorization });
    const body = method === 'POST' ? await readBody(req) : { fields: new Map<string, string[]>(), file: null };
    const field = (k: string) => body.fields.get(k)?.[0] ?? url.searchParams.get(k);
    const fieldsOf = (k: string) => body.fields.get(k) ?? [];

    const dropAt = drops.findIndex((d) => d.method === method && path.startsWith(d.path));
    const drop = dropAt >= 0 && drops.splice(dropAt, 1).length > 0;
    /** The real answer, or (for a dropped request) the work done and the connection cut. */
    const reply = (status: number, json?: unknown) => (drop ? void res.socket?.destroy() : send(res, status, json));
    const scriptedAnswer = () => {
      const i = scripted.findIndex((s) => s.method === method && path.startsWith(s.path));
      if (i < 0) return false;
      const [s] = scripted.splice(i, 1);
      send(res, s?.status ?? 500, s?.body, s?.headers);
      return true;
    };
    const bearer = /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? null;
    const tokenInfo = bearer ? tokens.get(bearer) : undefined;
    const covers = (scopes: string[], needed: string[]) => needed.some((n) => scopes.includes(n) || scopes.includes(n.split(':')[0] ?? n));
    /** doorkeeper_authorize!: a valid token with one of `needed`; null after answering 401/403. */
    const authorize = (...needed: string[]): string | null => {
      if (!tokenInfo || tokenInfo.revoked) {
        send(res, 401, { error: tokenInfo?.revoked ? 'The access token was revoked' : 'The access token is invalid' });
        return null;
      }
      if (!covers(tokenInfo.scopes, needed)) {
        send(res, 403, { error: 'This action is outside the authorized scopes' });
        return null;
      }
      return tokenInfo.accountId;
    };
    /** authorize_if_got_token!: anonymous is fine, a token must be valid and scoped. */
    const authorizeIfToken = (...needed: string[]): string | null | false => (bearer === null ? null : (authorize(...needed) ?? false));

    // --- Apps and OAuth (docs: methods/apps, methods/oauth).
    if (method === 'POST' && path === '/api/v1/apps') {
      if (scriptedAnswer()) return;
      const name = field('client_name');
      const redirects = [...fieldsOf('redirect_uris'), ...fieldsOf('redirect_uris[]')].flatMap((r) => r.split('\n')).filter(Boolean);
      if (!name || redirects.length === 0) return send(res, 422, { error: "Validation failed: Name can't be blank, Redirect URI can't be blank" });
      if (!redirects.every((r) => /^[a-z][\w+.-]*:\/\/\S+$/i.test(r) || r === 'urn:ietf:wg:oauth:2.0:oob')) {
        return send(res, 422, { error: 'Validation failed: Redirect URI must be an absolute URI.' });
      }
      const scopes = (field('scopes') ?? 'read').split(/[\s+]+/).filter(Boolean);
      if (!scopes.every((s) => KNOWN_SCOPES.has(s))) return send(res, 422, { error: 'Validation failed: Scopes must be a valid scope' });
      const app: FakeApp = { clientId: `client-${++seq}`, clientSecret: `secret-${seq}`, name, redirectUris: redirects, scopes, website: field('website') };
      fake.apps.set(app.clientId, app);
      return send(res, 200, { id: String(seq), name, website: app.website, scopes, redirect_uri: redirects.join('\n'), redirect_uris: redirects, client_id: app.clientId, client_secret: app.clientSecret, client_secret_expires_at: 0 });
    }
    if (method === 'GET' && path === '/oauth/authorize') {
      const q = url.searchParams;
      fake.authorizeRequests.push(q);
      const app = fake.apps.get(q.get('client_id') ?? '');
      const redirect = q.get('redirect_uri') ?? '';
      if (q.get('response_type') !== 'code' || !app || !app.redirectUris.includes(redirect)) {
        return send(res, 400, '<html>The redirect uri included is not valid, or the client is unknown.</html>');
      }
      const scopes = (q.get('scope') ?? 'read').split(/[\s+]+/).filter(Boolean);
      const to = new URL(redirect);
      if (q.get('state')) to.searchParams.set('state', q.get('state') ?? '');
      const challenge = q.get('code_challenge');
      if (!scopes.every((s) => app.scopes.includes(s)) || (challenge !== null && q.get('code_challenge_method') !== 'S256')) {
        to.searchParams.set('error', scopes.every((s) => app.scopes.includes(s)) ? 'invalid_request' : 'invalid_scope');
        return send(res, 302, undefined, { location: to.toString() });
      }
      if (fake.knobs.denyConsent) {
        fake.knobs.denyConsent = false;
        to.searchParams.set('error', 'access_denied');
        to.searchParams.set('error_description', 'The resource owner or authorization server denied the request.');
        return send(res, 302, undefined, { location: to.toString() });
      }
      const code = `code-${++seq}`;
      codes.set(code, { clientId: app.clientId, redirectUri: redirect, scopes, challenge });
      to.searchParams.set('code', code);
      return send(res, 302, undefined, { location: to.toString() });
    }
    if (method === 'POST' && path === '/oauth/token') {
      if (scriptedAnswer()) return;
      const basic = /^Basic (.+)$/.exec(authorization ?? '')?.[1];
      const [basicId, basicSecret] = basic ? Buffer.from(basic, 'base64').toString('utf8').split(':') : [];
      const app = fake.apps.get(field('client_id') ?? basicId ?? '');
      if (!app || app.clientSecret !== (field('client_secret') ?? basicSecret)) {
        return send(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.' });
      }
      if (field('grant_type') !== 'authorization_code') return send(res, 400, { error: 'unsupported_grant_type', error_description: 'The authorization grant type is not supported by the authorization server.' });
      const code = codes.get(field('code') ?? '');
      const verifier = field('code_verifier');
      const pkceOk = !code?.challenge || (verifier !== null && createHash('sha256').update(verifier).digest('base64url') === code.challenge);
      if (!code || code.clientId !== app.clientId || code.redirectUri !== field('redirect_uri') || !pkceOk) {
        return send(res, 400, {
          error: 'invalid_grant',
          error_description: 'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
        });
      }
      codes.delete(field('code') ?? ''); // single use
      const token = fake.issueToken(code.scopes);
      return send(res, 200, { access_token: token, token_type: 'Bearer', scope: code.scopes.join(' '), created_at: Math.floor(Date.now() / 1000) });
    }

    // --- REST API.
    if (method === 'GET' && path === '/api/v2/instance') {
      fake.instanceRequests++;
      if (scriptedAnswer()) return;
      if (!fake.instance.available) return send(res, 404, '<html><body>The page you were looking for does not exist.</body></html>');
      const i = fake.instance;
      return send(res, 200, {
        domain: host,
        title: 'Fake Mastodon',
        version: '4.5.0',
        configuration: {
          statuses: { max_characters: i.maxCharacters, max_media_attachments: i.maxMediaAttachments, characters_reserved_per_url: i.charactersReservedPerUrl },
          media_attachments: { supported_mime_types: i.supportedMimeTypes, image_size_limit: i.imageSizeLimit, video_size_limit: i.videoSizeLimit, description_limit: 1500 },
        },
      });
    }
    if (method === 'GET' && path === '/api/v1/accounts/verify_credentials') {
      const account = authorize('read:accounts', 'profile');
      if (account === null || scriptedAnswer()) return;
      return send(res, 200, { id: fake.account.id, username: fake.account.username, acct: fake.account.username, display_name: 'Ada', url: `${origin}/@${fake.account.username}`, source: { privacy: 'public' } });
    }
    if (method === 'POST' && path === '/api/v2/media') {
      const account = authorize('write:media');
      if (account === null || scriptedAnswer()) return;
      const file = body.file;
      if (!file || file.bytes === 0) return send(res, 400, { error: 'param is missing or the value is empty: file' });
      if (!fake.instance.supportedMimeTypes.includes(file.mime)) return send(res, 422, { error: 'Validation failed: File content type is invalid, File is invalid' });
      const video = file.mime.startsWith('video/');
      const limit = video ? fake.instance.videoSizeLimit : fake.instance.imageSizeLimit;
      if (file.bytes > limit) return send(res, 422, { error: `Validation failed: File file size must be less than ${Math.round(limit / MB)} MB` });
      const processing = video || fake.knobs.processingPolls > 0;
      const m: FakeMedia = { id: nextId(), accountId: account, mime: file.mime, bytes: file.bytes, state: processing ? 'processing' : 'ready', pollsLeft: fake.knobs.processingPolls, statusId: null };
      fake.media.set(m.id, m);
      fake.uploads++;
      return reply(processing ? 202 : 200, mediaJson(m));
    }
    const mediaGet = /^\/api\/v1\/media\/([^/]+)$/.exec(path);
    if (method === 'GET' && mediaGet) {
      const account = authorize('write:media');
      if (account === null || scriptedAnswer()) return;
      const m = fake.media.get(decodeURIComponent(mediaGet[1] ?? ''));
      if (!m || m.accountId !== account) return send(res, 404, { error: 'Record not found' });
      if (m.state === 'processing') {
        if (m.pollsLeft > 0) m.pollsLeft--;
        else m.state = fake.knobs.processingFails ? 'failed' : 'ready';
      }
      if (m.state === 'failed') return send(res, 422, { error: 'Error processing thumbnail for uploaded media' });
      return send(res, m.state === 'ready' ? 200 : 206, mediaJson(m));
    }
    if (method === 'POST' && path === '/api/v1/statuses') {
      const account = authorize('write:statuses');
      if (account === null) return;
      const key = strOf(req.headers['idempotency-key']);
      fake.statusRequests.push({ key });
      if (scriptedAnswer()) return;
      // PostStatusService#with_idempotency: a known key returns the status it made, before any validation.
      const known = key ? idempotency.get(`${account}:${key}`) : undefined;
      const existing = known ? fake.statuses.find((s) => s.id === known) : undefined;
      if (existing) return reply(200, statusJson(existing));
      const text = field('status') ?? '';
      const mediaIds = fieldsOf('media_ids[]');
      const replyTo = field('in_reply_to_id');
      const visibility = field('visibility') ?? 'public';
      if (!['public', 'unlisted', 'private', 'direct'].includes(visibility)) return send(res, 422, { error: 'Validation failed: Visibility is invalid' });
      if (replyTo && !fake.statuses.some((s) => s.id === replyTo)) return send(res, 404, { error: 'The post you are trying to reply to does not appear to exist.' });
      if (mediaIds.length > fake.instance.maxMediaAttachments) return send(res, 422, { error: `Cannot attach more than ${fake.instance.maxMediaAttachments} files` });
      const media = mediaIds.map((id) => fake.media.get(id));
      const missing = mediaIds.filter((id, i) => !media[i] || media[i]?.accountId !== account || media[i]?.statusId !== null);
      if (missing.length > 0) return send(res, 422, { error: `Media ${missing.join(', ')} not found or already attached to another post` });
      if (media.length > 1 && media.some((m) => m?.mime.startsWith('video/'))) return send(res, 422, { error: 'Cannot attach a video to a post that already contains images' });
      if (media.some((m) => m?.state !== 'ready')) return send(res, 422, { error: 'Cannot attach files that have not finished processing. Try again in a moment!' });
      if (text.trim() === '' && mediaIds.length === 0) return send(res, 422, { error: "Validation failed: Text can't be blank" });
      if (lengthOf(text) > fake.instance.maxCharacters) return send(res, 422, { error: `Validation failed: Text character limit of ${fake.instance.maxCharacters} exceeded` });
      const id = nextId();
      const status: FakeStatus = { id, accountId: account, text, mediaIds, inReplyToId: replyTo, visibility, createdAt: Date.now(), url: `${origin}/@${fake.account.username}/${id}` };
      for (const m of media) if (m) m.statusId = id;
      fake.statuses.push(status);
      if (key) idempotency.set(`${account}:${key}`, id);
      return reply(200, statusJson(status));
    }
    const statusSource = /^\/api\/v1\/statuses\/([^/]+)\/source$/.exec(path);
    if (method === 'GET' && statusSource) {
      const account = authorize('read:statuses');
      if (account === null || scriptedAnswer()) return;
      const s = fake.statuses.find((x) => x.id === decodeURIComponent(statusSource[1] ?? ''));
      if (!s || s.accountId !== account) return send(res, 404, { error: 'Record not found' });
      return send(res, 200, { id: s.id, text: s.text, spoiler_text: '' });
    }
    const statusGet = /^\/api\/v1\/statuses\/([^/]+)$/.exec(path);
    if (method === 'GET' && statusGet) {
      if (authorizeIfToken('read:statuses') === false || scriptedAnswer()) return;
      const s = fake.statuses.find((x) => x.id === decodeURIComponent(statusGet[1] ?? ''));
      return s ? send(res, 200, statusJson(s)) : send(res, 404, { error: 'Record not found' });
    }
    const accountStatuses = /^\/api\/v1\/accounts\/([^/]+)\/statuses$/.exec(path);
    if (method === 'GET' && accountStatuses) {
      if (authorizeIfToken('read:statuses') === false || scriptedAnswer()) return;
      const id = decodeURIComponent(accountStatuses[1] ?? '');
      if (id !== fake.account.id) return send(res, 404, { error: 'Record not found' });
      const limit = Math.min(Number(url.searchParams.get('limit') ?? 20), 40);
      return send(res, 200, [...fake.statuses].filter((s) => s.accountId === id).reverse().slice(0, limit).map(statusJson));
    }
    return send(res, 404, { error: 'Record not found' });
  }

  return fake;
}
