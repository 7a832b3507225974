import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { overrides, serviceEnv } from '../support/overrides.js';

/**
 * A local stand-in for Pinterest API v5 (user_account, boards, board pins, pins, media), its OAuth endpoints and
 * the video storage (an S3-style form upload), with the official paths, fields and error bodies (`{code,
 * message}`; XML from the storage). It refuses what the real API refuses: a missing or bad bearer token (401
 * code 2), a scope the token lacks (401 code 3), HTTP Basic client authentication on the token endpoint, a
 * board that is not the user's (404 code 40), missing `board_id`/`media_source`, over-long title (100),
 * description (800) or alt text (500), carousels outside 2..5 images, a `video_id` that is not `succeeded`, an
 * upload form without its signed fields or with `file` not last. Every created pin is kept in `pins` so tests
 * can prove nothing was created twice.
 */

export interface FakeBoard {
  id: string;
  name: string;
  privacy: 'PUBLIC' | 'PROTECTED' | 'SECRET';
  is_ads_only: boolean;
  owner: string;
}

export interface FakePin {
  id: string;
  board_id: string;
  title: string | null;
  description: string | null;
  alt_text: string | null;
  media_source: Record<string, unknown>;
  created_at: string;
  createdMs: number;
}

export interface FakeMedia {
  id: string;
  owner: string;
  status: 'registered' | 'processing' | 'succeeded' | 'failed';
  pollsLeft: number;
  key: string;
  policy: string;
  bytes: number;
  fields: string[];
}

export interface ScriptedAnswer {
  method: string;
  /** Prefix of the request path and query, e.g. `/v5/pins`, `/v5/oauth/token`, `/media-upload`. */
  path: string;
  status: number;
  /** An object is sent as JSON, a string as is (XML from the storage). */
  body?: unknown;
  headers?: Record<string, string>;
}

const ALL_SCOPES = ['boards:read', 'boards:write', 'pins:read', 'pins:write', 'user_accounts:read', 'boards:read_secret', 'pins:read_secret'];
const rec = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const err = (code: number, message: string) => ({ code, message });
const s3Error = (code: string, message: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>4442587FB7D0A2F9</RequestId></Error>`;
const chars = (s: unknown) => (typeof s === 'string' ? [...s].length : 0);

/** Starts the fake on 127.0.0.1 and a free port. */
export async function startFakePinterest() {
  let seq = 0;
  // Pinterest ids are digit strings past Number.MAX_SAFE_INTEGER: built as text.
  const nextId = () => `10${String(Date.now() % 1e9).padStart(9, '0')}${String(++seq).padStart(6, '0')}`;
  const scripted: ScriptedAnswer[] = [];
  const hangs: { method: string; path: string }[] = [];
  const hanging: ServerResponse[] = [];
  const tokens = new Map<string, string[]>(); // access token → scopes
  const refreshTokens = new Map<string, string[]>();
  const codes = new Map<string, { redirect: string; scopes: string[] }>();

  const server = createServer((req, res) => {
    void handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) send(res, 500, err(500, String(e)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fake = {
    origin,
    apiBaseUrl: `${origin}/v5`,
    authorizeUrl: `${origin}/oauth/`,
    tokenUrl: `${origin}/v5/oauth/token`,
    clientId: '1484362',
    clientSecret: 'fake-app-secret',
    /** The service's settings that point its Pinterest app at this fake. */
    get serviceEnv(): Record<string, string> {
      return serviceEnv(
        { PINTEREST_CLIENT_ID: fake.clientId, PINTEREST_CLIENT_SECRET: fake.clientSecret },
        overrides({ PINTEREST_API_URL: fake.apiBaseUrl, PINTEREST_AUTHORIZE_URL: fake.authorizeUrl, PINTEREST_TOKEN_URL: fake.tokenUrl }),
      );
    },
    user: { id: '549755885175', username: 'acme_studio' },
    /** A valid access token with every scope we ask for. */
    token: 'pina_valid-token',
    boards: [] as FakeBoard[],
    pins: [] as FakePin[],
    media: new Map<string, FakeMedia>(),
    /** POST /v5/pins requests that passed auth and validation (created or not). */
    pinAttempts: 0,
    registrations: 0,
    uploads: 0,
    authorizeRequests: [] as URLSearchParams[],
    tokenRequests: [] as URLSearchParams[],
    requests: [] as { method: string; path: string; query: string }[],
    expiredTokens: new Set<string>(),
    /** Knobs. */
    processingPolls: 0,
    videoFails: false,
    maxUploadBytes: 2 * 1024 ** 3,
    /** GET /v5/boards/{id}/pins does not list new pins yet (index lag). */
    listingLags: false,
    /** Answer the next matching request with this status and body (once), without doing anything. */
    failNext: (answer: ScriptedAnswer) => void scripted.push(answer),
    /** Do the next matching request's work (method and path/query prefix) but never answer (the client times out). */
    hangNext: (method: string, path: string) => void hangs.push({ method, path }),
    /** Makes a code valid for one exchange with this redirect URI (the user approved on pinterest.com). */
    issueCode(redirectUri: string, scopes = ALL_SCOPES.slice(0, 5)): string {
      const code = `code-${nextId()}`;
      codes.set(code, { redirect: redirectUri, scopes });
      return code;
    },
    /** An access token with exactly these scopes (as if the user had granted only them). */
    tokenWith(scopes: string[]): string {
      const t = `pina_${nextId()}`;
      tokens.set(t, scopes);
      return t;
    },
    /** The user removed the app's access: its refresh tokens stop working. */
    revokeRefreshTokens: () => refreshTokens.clear(),
    addBoard(name: string, over: Partial<FakeBoard> = {}): FakeBoard {
      const board: FakeBoard = { id: nextId(), name, privacy: 'PUBLIC', is_ads_only: false, owner: fake.user.username, ...over };
      fake.boards.push(board);
      return board;
    },
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  tokens.set(fake.token, ALL_SCOPES.slice(0, 5));

  function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const type = typeof body === 'string' ? 'application/xml' : 'application/json';
    res.writeHead(status, { ...(text ? { 'content-type': type } : {}), ...headers });
    res.end(text);
  }

  const boardJson = (b: FakeBoard) => ({ id: b.id, name: b.name, description: '', privacy: b.privacy, is_ads_only: b.is_ads_only, owner: { username: b.owner }, pin_count: fake.pins.filter((p) => p.board_id === b.id).length });
  const mediaType = (source: Record<string, unknown>) => (source.source_type === 'video_id' ? 'video' : String(source.source_type).startsWith('multiple') ? 'multiple_images' : 'image');
  const pinJson = (p: FakePin) => ({
    id: p.id,
    created_at: p.created_at,
    board_id: p.board_id,
    board_owner: { username: fake.user.username },
    title: p.title,
    description: p.description,
    alt_text: p.alt_text,
    link: null,
    is_owner: true,
    creative_type: p.media_source.source_type === 'video_id' ? 'VIDEO' : 'REGULAR',
    media: { media_type: mediaType(p.media_source) },
  });

  /** `media_source` as POST /v5/pins checks it (PinMediaSource*); an error message, or null when valid. */
  function mediaSourceError(source: Record<string, unknown>, user: string): string | null {
    const url = (u: unknown) => typeof u === 'string' && /^https?:\/\/[^\s]+$/.test(u);
    const b64 = (item: Record<string, unknown>) => ['image/jpeg', 'image/png'].includes(String(item.content_type)) && typeof item.data === 'string' && /^[a-zA-Z0-9+/=]+$/.test(item.data);
    const items = Array.isArray(source.items) ? source.items.map(rec) : [];
    switch (source.source_type) {
      case 'image_url':
        return url(source.url) ? null : 'Whoops! It looks like you entered an invalid URL. Try creating a Pin again with a valid URL.';
      case 'multiple_image_urls':
        if (items.length < 2 || items.length > 5) return "Invalid request: 'items' must hold 2 to 5 images";
        return items.every((i) => url(i.url)) ? null : 'Whoops! It looks like you entered an invalid URL. Try creating a Pin again with a valid URL.';
      case 'image_base64':
        return b64(source) ? null : "Invalid request: 'content_type' and 'data' are required";
      case 'multiple_image_base64':
        if (items.length < 2 || items.length > 5) return "Invalid request: 'items' must hold 2 to 5 images";
        return items.every(b64) ? null : "Invalid request: 'content_type' and 'data' are required";
      case 'video_id': {
        const m = fake.media.get(String(source.media_id));
        if (!m || m.owner !== user) return "Invalid request: unknown 'media_id'";
        return m.status === 'succeeded' ? null : `Invalid request: media ${m.id} is ${m.status}`;
      }
      default:
        return "Invalid request: 'media_source.source_type' is required";
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', origin);
    const path = url.pathname;
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    fake.requests.push({ method, path, query: url.search });
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
    const hangAt = hangs.findIndex((h) => h.method === method && target.startsWith(h.path));
    const hang = hangAt >= 0 ? hangs.splice(hangAt, 1).length > 0 : false;
    const reply = (status: number, body?: unknown) => {
      if (hang) hanging.push(res);
      else send(res, status, body);
    };
    const scriptedAnswer = () => {
      const i = scripted.findIndex((s) => s.method === method && target.startsWith(s.path));
      if (i < 0) return false;
      const [s] = scripted.splice(i, 1);
      send(res, s?.status ?? 500, s?.body, s?.headers);
      return true;
    };
    const pageSize = (): number | null => {
      const v = url.searchParams.get('page_size') ?? '25';
      const n = Number(v);
      if (!/^\d+$/.test(v) || n < 1 || n > 250) {
        send(res, 400, err(1, `Parameter 'page_size' was not valid (was ${v})`));
        return null;
      }
      return n;
    };

    // --- OAuth: the consent page and the token endpoint (HTTP Basic client authentication, form body).
    if (method === 'GET' && path === '/oauth/') {
      const q = url.searchParams;
      fake.authorizeRequests.push(q);
      const redirect = q.get('redirect_uri');
      const scopes = (q.get('scope') ?? '').split(',');
      if (q.get('response_type') !== 'code' || q.get('client_id') !== fake.clientId || !redirect || !scopes.every((s) => ALL_SCOPES.includes(s))) {
        return send(res, 400, err(1, 'client_id, redirect_uri, response_type=code and valid scopes are required'));
      }
      const code = fake.issueCode(redirect, scopes);
      const to = new URL(redirect);
      to.searchParams.set('code', code);
      if (q.get('state')) to.searchParams.set('state', q.get('state') ?? '');
      return send(res, 302, undefined, { location: to.toString() });
    }
    if (path === '/v5/oauth/token') {
      const basic = Buffer.from(`${fake.clientId}:${fake.clientSecret}`).toString('base64');
      if (method !== 'POST' || header('authorization') !== `Basic ${basic}`) return send(res, 401, err(2, 'Authentication failed.'));
      if (!(header('content-type') ?? '').startsWith('application/x-www-form-urlencoded')) return send(res, 400, err(1, 'A form-encoded body is required'));
      const form = new URLSearchParams(raw.toString('utf8'));
      fake.tokenRequests.push(form);
      if (scriptedAnswer()) return;
      let scopes: string[];
      if (form.get('grant_type') === 'authorization_code') {
        const code = codes.get(form.get('code') ?? '');
        if (!code || code.redirect !== form.get('redirect_uri')) return send(res, 400, err(1, 'Invalid authorization code or redirect_uri.'));
        codes.delete(form.get('code') ?? ''); // single use
        scopes = code.scopes;
      } else if (form.get('grant_type') === 'refresh_token') {
        const known = refreshTokens.get(form.get('refresh_token') ?? '');
        if (!known) return send(res, 400, err(1, 'Invalid refresh token.'));
        scopes = known;
      } else {
        return send(res, 400, err(1, 'Unsupported grant_type'));
      }
      const accessToken = `pina_${nextId()}`;
      const refreshToken = `pinr_${nextId()}`;
      tokens.set(accessToken, scopes);
      refreshTokens.set(refreshToken, scopes);
      return send(res, 200, {
        access_token: accessToken,
        token_type: 'bearer',
        expires_in: 2_592_000,
        scope: scopes.join(','),
        refresh_token: refreshToken,
        refresh_token_expires_in: 5_184_000,
        refresh_token_expires_at: Math.floor(Date.now() / 1000) + 5_184_000,
        response_type: form.get('grant_type'),
      });
    }

    // --- The video storage: an S3 POST form. The signed fields must all come back, `file` last.
    if (path === '/media-upload/' && method === 'POST') {
      if (scriptedAnswer()) return;
      let form: FormData;
      try {
        form = await new Response(raw, { headers: { 'content-type': header('content-type') ?? '' } }).formData();
      } catch {
        return send(res, 400, s3Error('MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.'));
      }
      const names = [...form.keys()];
      const media = [...fake.media.values()].find((m) => m.key === form.get('key'));
      if (!media || form.get('policy') !== media.policy || media.fields.some((f) => form.get(f) === null)) {
        return send(res, 403, s3Error('AccessDenied', 'Invalid according to Policy: Policy Condition failed'));
      }
      const file = form.get('file');
      if (!(file instanceof Blob) || names.at(-1) !== 'file') return send(res, 400, s3Error('InvalidArgument', "Bucket POST must contain a field named 'file'."));
      if (file.size > fake.maxUploadBytes) return send(res, 400, s3Error('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size'));
      fake.uploads++;
      media.bytes = file.size;
      media.status = 'processing';
      media.pollsLeft = fake.processingPolls;
      return reply(204);
    }

    if (!path.startsWith('/v5/')) return send(res, 404, err(404, 'Not found'));

    // --- API v5: bearer token, then the scopes of the endpoint (the OpenAPI `security` lists).
    const token = /^Bearer (.+)$/.exec(header('authorization') ?? '')?.[1] ?? '';
    const scopes = tokens.get(token);
    if (!scopes || fake.expiredTokens.has(token)) return send(res, 401, err(2, 'Authentication failed.'));
    const need = (...wanted: string[]) => {
      if (wanted.every((s) => scopes.includes(s))) return true;
      send(res, 401, err(3, 'Your token does not have sufficient permissions to perform this operation. Please ensure your token is authorized with the correct set of scopes.'));
      return false;
    };
    if (scriptedAnswer()) return;
    const user = fake.user.username;
    const ownBoard = (id: string) => fake.boards.find((b) => b.id === id && b.owner === user);

    if (method === 'GET' && path === '/v5/user_account') {
      if (!need('user_accounts:read')) return;
      return send(res, 200, { account_type: 'BUSINESS', id: fake.user.id, username: user, profile_image: 'https://i.pinimg.com/p.jpg', website_url: '' });
    }
    if (method === 'GET' && path === '/v5/boards') {
      if (!need('boards:read')) return;
      const size = pageSize();
      if (size === null) return;
      // Secret boards need boards:read_secret.
      const visible = fake.boards.filter((b) => b.privacy !== 'SECRET' || scopes.includes('boards:read_secret'));
      return send(res, 200, { items: visible.slice(0, size).map(boardJson), bookmark: null });
    }
    if (method === 'POST' && path === '/v5/boards') {
      if (!need('boards:read', 'boards:write')) return;
      const body = json();
      if (!body || typeof body.name !== 'string' || body.name.trim() === '') return send(res, 400, err(1, "Invalid request: 'name' is a required property"));
      if (fake.boards.some((b) => b.owner === user && b.name.toLowerCase() === String(body.name).toLowerCase())) return send(res, 400, err(400, 'The board name is invalid or duplicated.'));
      const privacy = body.privacy === undefined ? 'PUBLIC' : body.privacy;
      if (privacy !== 'PUBLIC' && privacy !== 'PROTECTED' && privacy !== 'SECRET') return send(res, 400, err(1, "Invalid request: 'privacy' is not valid"));
      return send(res, 201, boardJson(fake.addBoard(body.name, { privacy })));
    }
    const boardPins = /^\/v5\/boards\/(\d+)\/pins$/.exec(path);
    if (method === 'GET' && boardPins) {
      if (!need('boards:read', 'pins:read')) return;
      const size = pageSize();
      if (size === null) return;
      if (!ownBoard(boardPins[1] ?? '')) return send(res, 404, err(404, 'Board not found.'));
      const onBoard = fake.listingLags ? [] : fake.pins.filter((p) => p.board_id === boardPins[1]).reverse();
      const from = Number(url.searchParams.get('bookmark') ?? 0);
      const page = onBoard.slice(from, from + size);
      return send(res, 200, { items: page.map(pinJson), bookmark: from + size < onBoard.length ? String(from + size) : null });
    }
    if (method === 'POST' && path === '/v5/pins') {
      if (!need('boards:read', 'boards:write', 'pins:read', 'pins:write')) return;
      const body = json();
      if (!body) return send(res, 400, err(1, 'Invalid request: the body is not JSON'));
      if (typeof body.board_id !== 'string' || !/^\d+$/.test(body.board_id)) return send(res, 400, err(1, "Invalid request: 'board_id' is a required property"));
      if (!ownBoard(body.board_id)) return send(res, 404, err(40, 'Board not found.'));
      if (chars(body.title) > 100 || chars(body.description) > 800 || chars(body.alt_text) > 500) return send(res, 400, err(1, 'Invalid request: title, description or alt_text is too long'));
      const source = rec(body.media_source);
      const invalid = mediaSourceError(source, user);
      if (invalid) return send(res, 400, err(1, invalid));
      fake.pinAttempts++;
      const now = Date.now();
      const pin: FakePin = {
        id: nextId(),
        board_id: body.board_id,
        title: typeof body.title === 'string' ? body.title : null,
        description: typeof body.description === 'string' ? body.description : null,
        alt_text: typeof body.alt_text === 'string' ? body.alt_text : null,
        media_source: source,
        created_at: new Date(now).toISOString().replace(/\.\d{3}Z$/, '-00:00'),
        createdMs: now,
      };
      fake.pins.push(pin);
      return reply(201, pinJson(pin));
    }
    const onePin = /^\/v5\/pins\/([^/]+)$/.exec(path);
    if (method === 'GET' && onePin) {
      if (!need('boards:read', 'pins:read')) return;
      const pin = fake.pins.find((p) => p.id === decodeURIComponent(onePin[1] ?? ''));
      return pin ? send(res, 200, pinJson(pin)) : send(res, 404, err(50, 'Pin not found.'));
    }
    if (method === 'POST' && path === '/v5/media') {
      if (!need('pins:read', 'pins:write')) return;
      if (json()?.media_type !== 'video') return send(res, 400, err(1, "Invalid request: 'media_type' must be 'video'"));
      fake.registrations++;
      const id = nextId();
      const key = `uploads/11/aa/22/3:video:${fake.user.id}:${id}`;
      const policy = Buffer.from(JSON.stringify({ expiration: new Date(Date.now() + 3_600_000).toISOString(), key })).toString('base64');
      const upload_parameters = {
        'x-amz-date': '20260127T185143Z',
        'x-amz-signature': `sig${id}`,
        'x-amz-security-token': 'IQoJb3JpZ2luX2VjEJr==',
        'x-amz-algorithm': 'AWS4-HMAC-SHA256',
        key,
        policy,
        'x-amz-credential': 'ASIA6QZJ64OPIKV7FRVX/20260127/us-east-1/s3/aws4_request',
        'Content-Type': 'multipart/form-data',
      };
      fake.media.set(id, { id, owner: user, status: 'registered', pollsLeft: 0, key, policy, bytes: 0, fields: Object.keys(upload_parameters) });
      return reply(201, { media_id: id, media_type: 'video', upload_url: `${origin}/media-upload/`, upload_parameters });
    }
    const oneMedia = /^\/v5\/media\/(\d+)$/.exec(path);
    if (method === 'GET' && oneMedia) {
      if (!need('pins:read')) return;
      const m = fake.media.get(oneMedia[1] ?? '');
      if (!m || m.owner !== user) return send(res, 404, err(404, 'Media upload not found'));
      if (m.status === 'processing') {
        if (m.pollsLeft > 0) m.pollsLeft--;
        else m.status = fake.videoFails ? 'failed' : 'succeeded';
      }
      return send(res, 200, { media_id: m.id, media_type: 'video', status: m.status });
    }
    return send(res, 404, err(404, 'Not found'));
  }

  return fake;
}

export type FakePinterest = Awaited<ReturnType<typeof startFakePinterest>>;
