import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { overrides } from '../support/overrides.js';

/**
 * A local stand-in for Bluesky: the entryway where accounts sign in (bsky.social), the account's data server (PDS)
 * and the video service (video.bsky.app), each on its own 127.0.0.1 port, speaking XRPC with the lexicons' paths,
 * parameters and `{error, message}` bodies. It refuses what the reference implementation refuses: a missing or
 * unknown token (AuthMissing 401, InvalidToken 400), an expired one (ExpiredToken 400), a refresh token used twice,
 * a record key that is not a TID or is already taken (500, as the reference PDS's MST refuses it), a post over 300
 * graphemes, a blob that was never uploaded (BlobNotFound) or whose type does not match (InvalidMimeType), reply
 * refs to unknown posts, service-auth tokens for the wrong audience or method. Repository calls on the entryway are
 * refused, so a client must find the PDS in the DID document. Every created post is kept in `posts`.
 */

export type Role = 'entryway' | 'pds' | 'video';

export interface FakeRecord {
  uri: string;
  cid: string;
  rkey: string;
  value: Record<string, unknown>;
}

export interface FakeBlob {
  cid: string;
  mimeType: string;
  size: number;
}

export interface FakeVideoJob {
  jobId: string;
  did: string;
  hash: string;
  size: number;
  /** getJobStatus answers that still say ENCODING. */
  pollsLeft: number;
  fails: boolean;
  blob: FakeBlob | null;
}

export interface XrpcRequest {
  role: Role;
  method: string;
  nsid: string;
  params: URLSearchParams;
  /** The bearer token's kind, never its value. */
  auth: 'access' | 'refresh' | 'service' | 'none' | 'unknown';
  /** The declared Content-Type ('' when none). */
  contentType: string;
}

interface Scripted {
  role?: Role;
  nsid: string;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const rec = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const xerr = (error: string, message: string) => ({ error, message });
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const cidOf = (data: Buffer | string, prefix = 'bafyrei') => `${prefix}${sha(data).slice(0, 52)}`;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const TID = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;
const IMAGE_MAX_SIZE = 2_000_000; // app.bsky.embed.images#image.image maxSize

/** The bytes' type, sniffed as the PDS does (it trusts the bytes before the Content-Type header). */
function sniff(bytes: Buffer, declared: string): string {
  if (bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))) return 'image/jpeg';
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.subarray(4, 8).toString('latin1') === 'ftyp') return 'video/mp4';
  return declared || 'application/octet-stream';
}

export async function startFakeBluesky() {
  const servers = {} as Record<Role, Server>;
  const origins = {} as Record<Role, string>;
  const scripted: Scripted[] = [];
  const drops: { role?: Role; nsid: string }[] = [];
  const hanging: ServerResponse[] = [];
  let seq = 0;
  const next = () => ++seq;

  const account = { did: 'did:plc:ewvi7nxzyoun6zhxrhs64oiz', handle: 'alice.test', email: 'alice@example.com', appPassword: 'abcd-efgh-ijkl-mnop' };
  /** Other accounts, for mentions. */
  const handles = new Map<string, string>([
    ['alice.test', account.did],
    ['bob.example.com', 'did:plc:bobbobbobbobbobbobbobbob'],
    ['carla.bsky.social', 'did:plc:carlacarlacarlacarlacarl'],
  ]);
  const access = new Map<string, { did: string; exp: number }>();
  const refresh = new Map<string, { did: string; exp: number }>();
  const service = new Map<string, { did: string; aud: string; lxm: string; exp: number }>();
  const records = new Map<string, FakeRecord>();
  const blobs = new Map<string, FakeBlob>();
  const videoJobs = new Map<string, FakeVideoJob>();

  const fake = {
    account,
    handles,
    origins,
    /** Created posts, in order. */
    posts: [] as FakeRecord[],
    records,
    blobs,
    videoJobs,
    requests: [] as XrpcRequest[],
    /** createRecord calls that passed authentication (created or not). */
    createAttempts: 0,
    knobs: {
      /** Lifetime of new access JWTs, seconds. */
      accessTtlSec: 2 * 3600,
      /** The account's status: sign-in refused as taken down, or writes refused as deactivated. */
      takendown: false,
      deactivated: false,
      /** The DID document names no PDS (the client must fall back to the sign-in service). */
      didDocWithoutPds: false,
      videoProcessingPolls: 0,
      videoProcessingFails: false,
      videoCanUpload: true,
      videoLimitMessage: undefined as string | undefined,
      /** The video service refuses the upload inside a job status (as it does for an unconfirmed e-mail). */
      videoUnconfirmedEmail: false,
    },
    /** Access tokens the PDS treats as expired (ExpiredToken). */
    expired: new Set<string>(),
    /** Answers the next matching call with this (once), doing nothing. */
    failNext(nsid: string, status: number, body?: unknown, headers?: Record<string, string>, role?: Role) {
      scripted.push({ nsid, status, body, ...(headers ? { headers } : {}), ...(role ? { role } : {}) });
    },
    /** Does the next matching call's work but never answers it (the client's deadline ends the wait). */
    dropAnswerNext(nsid: string, role?: Role) {
      drops.push({ nsid, ...(role ? { role } : {}) });
    },
    /** Issues a session as createSession would (for tests that skip the sign-in). */
    session: () => issueSession(account.did),
    /** Unreferenced blobs are deleted after a while: drop them all. */
    forgetUnreferencedBlobs() {
      const used = JSON.stringify([...records.values()].map((r) => r.value));
      for (const cid of [...blobs.keys()]) if (!used.includes(cid)) blobs.delete(cid);
    },
    async close() {
      for (const r of hanging) r.destroy();
      await Promise.all(
        Object.values(servers).map((s) => {
          s.closeAllConnections();
          return new Promise<void>((resolve) => s.close(() => resolve()));
        }),
      );
    },
  };

  function jwt(kind: 'access' | 'refresh', did: string, ttlSec: number): { token: string; exp: number } {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + ttlSec;
    const scope = kind === 'access' ? 'com.atproto.appPass' : 'com.atproto.refresh';
    const token = `${b64url({ typ: kind === 'access' ? 'at+jwt' : 'refresh+jwt', alg: 'HS256' })}.${b64url({ scope, sub: did, aud: `did:web:${new URL(origins.pds).host}`, iat: now, exp, jti: `j${next()}` })}.sig${next()}`;
    return { token, exp };
  }

  function issueSession(did: string) {
    const a = jwt('access', did, fake.knobs.accessTtlSec);
    const r = jwt('refresh', did, 90 * 86_400);
    access.set(a.token, { did, exp: a.exp });
    refresh.set(r.token, { did, exp: r.exp });
    return { accessJwt: a.token, refreshJwt: r.token, accessExp: a.exp };
  }

  function sessionBody(did: string) {
    const s = issueSession(did);
    const pdsService = { id: '#atproto_pds', type: 'AtprotoPersonalDataServer', serviceEndpoint: origins.pds };
    return {
      accessJwt: s.accessJwt,
      refreshJwt: s.refreshJwt,
      handle: account.handle,
      did,
      didDoc: {
        '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/multikey/v1'],
        id: did,
        alsoKnownAs: [`at://${account.handle}`],
        verificationMethod: [],
        service: fake.knobs.didDocWithoutPds ? [] : [pdsService],
      },
      email: account.email,
      emailConfirmed: true,
      active: true,
    };
  }

  function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { ...(text ? { 'content-type': typeof body === 'string' ? 'text/html' : 'application/json' } : {}), ...headers });
    res.end(text);
  }

  async function handle(role: Role, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', origins[role]);
    const method = req.method ?? 'GET';
    const nsid = url.pathname.startsWith('/xrpc/') ? url.pathname.slice('/xrpc/'.length) : '';
    const params = url.searchParams;
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? null;
    const auth: XrpcRequest['auth'] = bearer === null ? 'none' : access.has(bearer) ? 'access' : refresh.has(bearer) ? 'refresh' : service.has(bearer) ? 'service' : 'unknown';
    fake.requests.push({ role, method, nsid, params, auth, contentType: String(req.headers['content-type'] ?? '') });
    if (!nsid) return send(res, 404, xerr('XRPCNotSupported', 'Not found'));

    const dropAt = drops.findIndex((d) => d.nsid === nsid && (d.role === undefined || d.role === role));
    const drop = dropAt >= 0 ? drops.splice(dropAt, 1).length > 0 : false;
    const reply = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      if (drop) hanging.push(res);
      else send(res, status, body, headers);
    };
    const scriptedAnswer = (): boolean => {
      const i = scripted.findIndex((s) => s.nsid === nsid && (s.role === undefined || s.role === role));
      if (i < 0) return false;
      const [s] = scripted.splice(i, 1);
      send(res, s?.status ?? 500, s?.body, s?.headers ?? {});
      return true;
    };
    const json = (): Record<string, unknown> | null => {
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) return null;
      try {
        return rec(JSON.parse(raw.toString('utf8')));
      } catch {
        return null;
      }
    };
    const expectMethod = (wanted: 'GET' | 'POST'): boolean => {
      if (method === wanted) return true;
      send(res, 400, xrpcMethodError(wanted));
      return false;
    };
    const xrpcMethodError = (wanted: string) => xerr('InvalidRequest', `Incorrect HTTP method (${method}) expected ${wanted}`);
    /** The account behind an access token, or null after answering as the reference PDS does. */
    const requireAccess = (): string | null => {
      if (bearer === null) {
        send(res, 401, xerr('AuthMissing', 'Authentication Required'));
        return null;
      }
      const session = access.get(bearer);
      if (!session) {
        send(res, 400, xerr('InvalidToken', 'Token could not be verified'));
        return null;
      }
      if (fake.expired.has(bearer) || session.exp * 1000 < Date.now()) {
        send(res, 400, xerr('ExpiredToken', 'Token has expired'));
        return null;
      }
      if (fake.knobs.deactivated) {
        send(res, 401, xerr('AccountDeactivated', 'Account is deactivated'));
        return null;
      }
      return session.did;
    };
    const missing = (name: string) => send(res, 400, xerr('InvalidRequest', `Error: Params must have the property "${name}"`));

    // --- Sign-in and renewal (entryway; the PDS hands refreshSession on, so it answers there too).
    if (nsid === 'com.atproto.server.createSession' && role === 'entryway') {
      if (!expectMethod('POST')) return;
      if (scriptedAnswer()) return;
      const body = json();
      if (body === null) return send(res, 400, xerr('InvalidRequest', 'Request encoding (Content-Type) required but not provided'));
      for (const field of ['identifier', 'password']) {
        if (typeof body[field] !== 'string') return send(res, 400, xerr('InvalidRequest', `Input must have the property "${field}"`));
      }
      const id = String(body.identifier).toLowerCase();
      if ((id !== account.handle && id !== account.email && id !== account.did) || body.password !== account.appPassword) {
        return send(res, 401, xerr('AuthenticationRequired', 'Invalid identifier or password'));
      }
      if (fake.knobs.takendown) return send(res, 401, xerr('AccountTakedown', 'Account has been taken down'));
      return reply(200, sessionBody(account.did));
    }
    if (nsid === 'com.atproto.server.refreshSession' && role !== 'video') {
      if (!expectMethod('POST')) return;
      if (bearer === null) return send(res, 401, xerr('AuthMissing', 'Authentication Required'));
      if (scriptedAnswer()) return;
      if (access.has(bearer)) return send(res, 400, xerr('InvalidToken', 'Invalid token type'));
      const session = refresh.get(bearer);
      if (!session) return send(res, 400, xerr('InvalidToken', 'Token could not be verified'));
      if (session.exp * 1000 < Date.now()) return send(res, 400, xerr('ExpiredToken', 'Token has expired'));
      refresh.delete(bearer); // single use: rotated
      if (fake.knobs.takendown) return send(res, 401, xerr('AccountTakedown', 'Account has been taken down'));
      return reply(200, sessionBody(session.did));
    }

    // --- The video service.
    if (role === 'video') return handleVideo();
    if (role === 'entryway') return send(res, 400, xerr('InvalidRequest', `This fake entryway hosts no repositories (${nsid}): use the PDS from the DID document`));

    // --- The PDS.
    switch (nsid) {
      case 'com.atproto.repo.getRecord': {
        if (!expectMethod('GET')) return;
        if (scriptedAnswer()) return;
        for (const p of ['repo', 'collection', 'rkey']) if (!params.get(p)) return missing(p);
        const repo = params.get('repo') === account.handle ? account.did : params.get('repo');
        const record = repo === account.did && params.get('collection') === 'app.bsky.feed.post' ? records.get(params.get('rkey') ?? '') : undefined;
        const uri = `at://${repo ?? ''}/${params.get('collection') ?? ''}/${params.get('rkey') ?? ''}`;
        return record ? send(res, 200, { uri: record.uri, cid: record.cid, value: record.value }) : send(res, 400, xerr('RecordNotFound', `Could not locate record: ${uri}`));
      }
      case 'com.atproto.identity.resolveHandle': {
        if (!expectMethod('GET')) return;
        if (scriptedAnswer()) return;
        const h = params.get('handle');
        if (!h) return missing('handle');
        const did = handles.get(h.toLowerCase());
        return did ? send(res, 200, { did }) : send(res, 400, xerr('HandleNotFound', 'Unable to resolve handle'));
      }
      case 'com.atproto.server.getServiceAuth': {
        if (!expectMethod('GET')) return;
        const did = requireAccess();
        if (did === null) return;
        if (scriptedAnswer()) return;
        const aud = params.get('aud');
        if (!aud) return missing('aud');
        const lxm = params.get('lxm') ?? '';
        const now = Math.floor(Date.now() / 1000);
        const exp = params.get('exp') ? Number(params.get('exp')) : now + 60;
        if (!Number.isInteger(exp) || exp <= now || exp > now + 3600) return send(res, 400, xerr('BadExpiration', 'expiration must be within the next hour'));
        const token = `svc.${b64url({ iss: did, aud, lxm, exp })}.${next()}`;
        service.set(token, { did, aud, lxm, exp });
        return send(res, 200, { token });
      }
      case 'com.atproto.repo.uploadBlob': {
        if (!expectMethod('POST')) return;
        const did = requireAccess();
        if (did === null) return;
        if (scriptedAnswer()) return;
        const declared = String(req.headers['content-type'] ?? '');
        if (!declared) return send(res, 400, xerr('InvalidRequest', 'Request encoding (Content-Type) required but not provided'));
        if (raw.length === 0) return send(res, 400, xerr('InvalidRequest', 'Request body is required'));
        const blob = storeBlob(raw, declared);
        return reply(200, { blob: blobRef(blob) });
      }
      case 'com.atproto.repo.createRecord':
        return createRecord();
      default:
        return send(res, 501, xerr('MethodNotImplemented', `Method Not Implemented: ${nsid}`));
    }

    function createRecord(): void {
      if (!expectMethod('POST')) return;
      const did = requireAccess();
      if (did === null) return;
      fake.createAttempts++;
      if (scriptedAnswer()) return;
      const body = json();
      if (body === null) return send(res, 400, xerr('InvalidRequest', 'Request encoding (Content-Type) required but not provided'));
      for (const field of ['repo', 'collection', 'record']) if (body[field] === undefined) return send(res, 400, xerr('InvalidRequest', `Input must have the property "${field}"`));
      const repo = body.repo === account.handle ? account.did : body.repo;
      if (repo !== did) return send(res, 401, xerr('AuthenticationRequired', 'Authentication Required'));
      if (body.collection !== 'app.bsky.feed.post') return send(res, 400, xerr('InvalidRequest', 'This fake only stores app.bsky.feed.post'));
      const rkey = typeof body.rkey === 'string' ? body.rkey : `3lzz${String(next()).padStart(9, '2').replace(/[0189]/g, 'a')}`;
      if (!TID.test(rkey)) return send(res, 400, xerr('InvalidRequest', `Invalid app.bsky.feed.post record key: ${rkey}`));
      const invalid = validatePost(rec(body.record));
      if (invalid) return send(res, 400, invalid);
      // The reference PDS: MST.add throws "There is already a value at key", answered as a bare 500.
      if (records.has(rkey)) return send(res, 500, xerr('InternalServerError', 'Internal Server Error'));
      const value = rec(body.record);
      const record: FakeRecord = { uri: `at://${did}/app.bsky.feed.post/${rkey}`, cid: cidOf(JSON.stringify(value)), rkey, value };
      records.set(rkey, record);
      fake.posts.push(record);
      reply(200, { uri: record.uri, cid: record.cid, commit: { cid: cidOf(`commit${next()}`), rev: rkey }, validationStatus: 'valid' });
    }

    function handleVideo(): void {
      if (nsid === 'app.bsky.video.getJobStatus') {
        if (!expectMethod('GET')) return;
        if (scriptedAnswer()) return;
        const job = videoJobs.get(params.get('jobId') ?? '');
        if (!params.get('jobId')) return missing('jobId');
        if (!job) return send(res, 404, xerr('NotFound', 'job not found'));
        if (job.pollsLeft > 0) {
          job.pollsLeft--;
          return send(res, 200, { jobStatus: { jobId: job.jobId, did: job.did, state: 'JOB_STATE_ENCODING', progress: 40 } });
        }
        if (job.fails) return send(res, 200, { jobStatus: { jobId: job.jobId, did: job.did, state: 'JOB_STATE_FAILED', error: `video processing error for job: ${job.jobId}`, message: 'Failed to process video' } });
        job.blob ??= storeBlob(Buffer.from(`processed:${job.hash}`), 'video/mp4', job.size);
        return send(res, 200, { jobStatus: { jobId: job.jobId, did: job.did, state: 'JOB_STATE_COMPLETED', progress: 100, blob: blobRef(job.blob) } });
      }
      const token = bearer === null ? undefined : service.get(bearer);
      const refuseToken = () => send(res, 401, xerr('AuthenticationRequired', 'Invalid service token (audience, method or expiry)'));
      if (nsid === 'app.bsky.video.getUploadLimits') {
        if (!expectMethod('GET')) return;
        if (!token || token.aud !== `did:web:${new URL(origins.video).host.replace(':', '%3A')}` || token.lxm !== nsid) return refuseToken();
        if (scriptedAnswer()) return;
        const k = fake.knobs;
        return send(res, 200, { canUpload: k.videoCanUpload, remainingDailyVideos: k.videoCanUpload ? 25 : 0, remainingDailyBytes: k.videoCanUpload ? 10_000_000_000 : 0, ...(k.videoLimitMessage ? { message: k.videoLimitMessage } : {}) });
      }
      if (nsid === 'app.bsky.video.uploadVideo') {
        if (!expectMethod('POST')) return;
        const pdsAud = `did:web:${new URL(origins.pds).host.replace(':', '%3A')}`;
        if (!token || token.aud !== pdsAud || token.lxm !== 'com.atproto.repo.uploadBlob' || token.exp * 1000 < Date.now()) return refuseToken();
        if (scriptedAnswer()) return;
        for (const p of ['did', 'name']) if (!params.get(p)) return missing(p);
        if (params.get('did') !== token.did) return refuseToken();
        if (!String(req.headers['content-type'] ?? '').startsWith('video/')) return send(res, 400, xerr('InvalidRequest', 'unsupported content type'));
        if (raw.length === 0) return send(res, 400, xerr('InvalidRequest', 'empty body'));
        if (fake.knobs.videoUnconfirmedEmail) return send(res, 400, { jobStatus: { did: '', error: 'unconfirmed_email', jobId: '', state: '' } });
        const hash = sha(raw);
        const known = [...videoJobs.values()].find((j) => j.hash === hash && j.did === token.did);
        if (known) return reply(409, { did: known.did, error: 'already_exists', jobId: known.jobId, message: 'Video already processed', state: 'JOB_STATE_COMPLETED' });
        const job: FakeVideoJob = { jobId: `d0${next()}vjob`, did: token.did, hash, size: raw.length, pollsLeft: fake.knobs.videoProcessingPolls, fails: fake.knobs.videoProcessingFails, blob: null };
        videoJobs.set(job.jobId, job);
        // The live service answers the job status bare, not inside `jobStatus` as the lexicon says (atproto#3026).
        return reply(200, { did: job.did, jobId: job.jobId, state: 'JOB_STATE_CREATED' });
      }
      send(res, 501, xerr('MethodNotImplemented', `Method Not Implemented: ${nsid}`));
    }
  }

  function storeBlob(bytes: Buffer, declared: string, size = bytes.length): FakeBlob {
    const blob: FakeBlob = { cid: cidOf(bytes, 'bafkrei'), mimeType: sniff(bytes, declared), size };
    blobs.set(blob.cid, blob);
    return blob;
  }
  const blobRef = (b: FakeBlob) => ({ $type: 'blob', ref: { $link: b.cid }, mimeType: b.mimeType, size: b.size });

  /** What record validation refuses, as `{error, message}`; null when the post is valid. */
  function validatePost(r: Record<string, unknown>): { error: string; message: string } | null {
    const bad = (message: string) => xerr('InvalidRequest', `Invalid app.bsky.feed.post record: ${message}`);
    if (r.$type !== 'app.bsky.feed.post') return bad('Record/$type must be app.bsky.feed.post');
    if (typeof r.text !== 'string') return bad('Record must have the property "text"');
    if (Array.from(graphemes.segment(r.text)).length > 300) return bad('Record/text must not be longer than 300 graphemes');
    if (Buffer.byteLength(r.text) > 3000) return bad('Record/text must not be longer than 3000 characters');
    if (typeof r.createdAt !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(r.createdAt)) return bad('Record/createdAt must be an valid atproto datetime');
    const textBytes = Buffer.byteLength(r.text);
    const facets: unknown[] = r.facets === undefined ? [] : Array.isArray(r.facets) ? r.facets : [null];
    for (const f of facets) {
      const index = rec(rec(f).index);
      const [start, end] = [index.byteStart, index.byteEnd];
      if (typeof start !== 'number' || typeof end !== 'number' || start < 0 || end <= start || end > textBytes) return bad('Record/facets/index must be a byte range of the text');
      const features = rec(f).features;
      if (!Array.isArray(features) || features.length === 0) return bad('Record/facets/features must be a non-empty array');
      for (const feature of features.map(rec)) {
        const t = feature.$type;
        if (t === 'app.bsky.richtext.facet#mention' ? !String(feature.did).startsWith('did:') : t === 'app.bsky.richtext.facet#link' ? !/^[a-z]+:\/\/\S+$/.test(String(feature.uri)) : t === 'app.bsky.richtext.facet#tag' ? typeof feature.tag !== 'string' || feature.tag === '' : true) {
          return bad('Record/facets/features has an invalid feature');
        }
      }
    }
    if (r.reply !== undefined) {
      for (const which of ['root', 'parent']) {
        const ref = rec(rec(r.reply)[which]);
        const target = [...records.values()].find((x) => x.uri === ref.uri);
        if (!target || target.cid !== ref.cid) return bad(`Record/reply/${which} must reference an existing post by uri and cid`);
      }
    }
    if (r.embed !== undefined) {
      const embed = rec(r.embed);
      const refs: { blob: Record<string, unknown>; accept: string; maxSize: number; path: string }[] = [];
      if (embed.$type === 'app.bsky.embed.images') {
        const images = Array.isArray(embed.images) ? embed.images.map(rec) : [];
        if (images.length === 0 || images.length > 4) return bad('Record/embed/images must have 1 to 4 images');
        for (const [i, img] of images.entries()) {
          if (typeof img.alt !== 'string') return bad(`Record/embed/images/${i} must have the property "alt"`);
          refs.push({ blob: rec(img.image), accept: 'image/', maxSize: IMAGE_MAX_SIZE, path: `Record/embed/images/${i}/image` });
        }
      } else if (embed.$type === 'app.bsky.embed.video') {
        refs.push({ blob: rec(embed.video), accept: 'video/mp4', maxSize: 300_000_000, path: 'Record/embed/video/video' });
      } else return bad('Record/embed must be an images or video embed in this fake');
      for (const { blob, accept, maxSize, path } of refs) {
        const cid = String(rec(blob.ref).$link);
        if (blob.$type !== 'blob') return bad(`${path} should be a blob ref`);
        // Lexicon validation first (accept, maxSize), then the stored blob (as prepareCreate, then processWrites).
        if (!String(blob.mimeType).startsWith(accept)) return bad(`${path} mimeType must be one of ${accept}* (got ${String(blob.mimeType)})`);
        if (Number(blob.size) > maxSize) return bad(`${path} blob too big (maximum ${maxSize}, got ${String(blob.size)})`);
        const stored = blobs.get(cid);
        if (!stored) return xerr('BlobNotFound', `Could not find blob: ${cid}`);
        if (blob.mimeType !== stored.mimeType) return xerr('InvalidMimeType', `Referenced Mimetype does not match stored blob. Expected: ${stored.mimeType}, Got: ${String(blob.mimeType)}`);
      }
    }
    return null;
  }

  for (const role of ['entryway', 'pds', 'video'] as const) {
    const server = createServer((req, res) => {
      void handle(role, req, res).catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, xerr('InternalServerError', String(err)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers[role] = server;
    origins[role] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  return fake;
}

export type FakeBluesky = Awaited<ReturnType<typeof startFakeBluesky>>;

/** The service's configuration for live Bluesky against this fake: sign-in at its entryway, video at its video service. */
export function blueskyEnv(fake: FakeBluesky): Record<string, string> {
  return overrides({ BLUESKY_API_URL: fake.origins.entryway, BLUESKY_VIDEO_URL: fake.origins.video });
}
