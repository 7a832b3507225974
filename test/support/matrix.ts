import { randomBytes, randomUUID } from 'node:crypto';
import { Browser, pkcePair } from './oauth-browser.js';
import { documentOperations, parseOpenApi } from './openapi.js';
import type { TestServer } from './server.js';
import { findUserByEmail, insertUser } from '../../db/repositories/users.repo.js';

/**
 * The pieces of the authorization matrix (OWASP API1 object level, API2 authentication, API5 function level):
 * the operations read from the served /openapi.yaml, one concrete request per operation and per MCP tool, a
 * sender that checks every answer against the document, and the checks shared by the matrix's rows.
 */

/** Operations that take no credential by design (spec: health, discovery, OAuth, provider callbacks). */
export const OPEN_OPERATIONS = [
  'GET /healthz',
  'GET /readyz',
  'GET /openapi.yaml',
  'GET /api/v1/platforms',
  'POST /api/v1/webhooks/verify',
  'GET /api/v1/oauth/networks/{platform}/callback',
  'POST /v1/payments/callback',
  'GET /api/oauth/mcp/authorize',
  'POST /api/oauth/mcp/token',
  'POST /api/oauth/mcp/register',
  'POST /api/oauth/mcp/revoke',
  'GET /.well-known/oauth-authorization-server/api/oauth/mcp',
  'GET /.well-known/oauth-protected-resource/mcp',
].sort();

export interface Operation {
  /** `METHOD /template`. */
  key: string;
  method: string;
  path: string;
  operationId: string;
  open: boolean;
  hasRequestBody: boolean;
  requiredQuery: string[];
}

/** Every operation of the document; `problems` names any whose security is neither `[]` nor bearer. */
export function operationsOf(yamlText: string): { operations: Operation[]; problems: string[] } {
  const operations: Operation[] = [];
  const problems: string[] = [];
  for (const { key, method, path, operationId, doc: op } of documentOperations(parseOpenApi(yamlText))) {
    const security = JSON.stringify(op.security);
    if (security !== '[]' && security !== '[{"bearerAuth":[]}]') problems.push(`${key}: security ${security ?? 'missing'}`);
    operations.push({
      key,
      method,
      path,
      operationId,
      open: security === '[]',
      hasRequestBody: op.requestBody !== undefined,
      requiredQuery: (op.parameters ?? []).filter((p) => p.in === 'query' && p.required === true).map((p) => p.name),
    });
  }
  return { operations, problems };
}

/**
 * The objects a request can name. `idemKey` is an Idempotency-Key already used by its workspace; `spareWhId` is a
 * second webhook for the tool that really deletes one (the REST control, which runs later, still needs `whId`).
 */
export const OBJECT_KEYS = ['brandId', 'connId', 'contentId', 'whId', 'spareWhId', 'delId', 'keyId', 'clientId', 'mediaId', 'idemKey', 'memberId', 'invitationId'] as const;
export type ObjectKey = (typeof OBJECT_KEYS)[number];
export type Ids = { wsId: string } & Record<ObjectKey, string>;

/** Path parameter → the object it names. A parameter missing here fails the matrix. */
export const PATH_PARAMS: Record<string, keyof Ids> = {
  wsId: 'wsId',
  brandId: 'brandId',
  connId: 'connId',
  contentId: 'contentId',
  whId: 'whId',
  delId: 'delId',
  mediaId: 'mediaId',
  keyId: 'keyId',
  clientId: 'clientId',
  memberId: 'memberId',
  invitationId: 'invitationId',
};

/** An id of the same shape as `id` that names nothing. */
export function missingId(id: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-/.test(id)) return randomUUID();
  const head = id.slice(0, -8);
  const alphabet = id.slice(-8);
  return head + [...randomBytes(8)].map((b) => alphabet[b % alphabet.length]).join('');
}

export const freshIdempotencyKey = (): string => `matrix-${randomUUID()}`;

export function missingIds(like: Ids): Ids {
  const out = { ...like };
  for (const key of OBJECT_KEYS) out[key] = key === 'idemKey' ? freshIdempotencyKey() : missingId(like[key]);
  return out;
}

/** A person with an account of the installation, in no workspace until a request adds them. */
const MATRIX_PERSON = 'matrix-person@example.com';

const JPEG = Buffer.from('\xff\xd8\xff matrix jpeg bytes '.repeat(64), 'latin1');
const REDIRECT = 'https://chat.openai.com/aip/g-matrix/oauth/callback';

/** Names a brand, its connection, an upload and (for publishing) an Idempotency-Key at once. */
export function contentBody(ids: Ids): Record<string, unknown> {
  return {
    brand_id: ids.brandId,
    target_platforms: ['instagram'],
    target_connections: [ids.connId],
    content_type: 'photo',
    media: [{ media_id: ids.mediaId }],
    text: 'Authorization matrix.',
  };
}

/**
 * The Idempotency-Key of a change of one content, one per action and content. Not `idemKey`: that key is taken by
 * the content's creation, so reusing it would only ever be the caller's own conflict.
 */
function contentActionKey(action: string, ids: Ids): string {
  return `matrix-${action}-${ids.contentId}`;
}

interface RequestParts {
  query?: Record<string, string>;
  headers?: Record<string, string>;
  json?: unknown;
  raw?: { contentType: string; bytes: Buffer };
}

/**
 * The part of each request the path does not say, by operationId. Every operation with a request body or a
 * required query parameter must have an entry (the matrix checks it), so a new route cannot be left out.
 */
export const REQUESTS: Record<string, (ids: Ids) => RequestParts> = {
  createApiKey: () => ({ json: { name: 'matrix key' } }),
  createBrand: () => ({ json: { name: 'matrix brand' } }),
  updateBrand: () => ({ json: { name: 'matrix brand renamed' } }),
  setBrandQueue: () => ({ json: { time_zone: 'America/New_York', slots: [{ days: ['mon', 'wed'], time: '09:30' }] } }),
  createSandboxConnection: () => ({ json: { platform_slug: 'threads', mode: 'sandbox', name: '@matrix' } }),
  listConnections: (ids) => ({ query: { brand_id: ids.brandId } }),
  createContent: (ids) => ({ headers: { 'idempotency-key': ids.idemKey }, json: contentBody(ids) }),
  updateContent: (ids) => ({ headers: { 'idempotency-key': contentActionKey('update', ids) }, json: { text: 'Authorization matrix, edited.' } }),
  cancelContent: (ids) => ({ headers: { 'idempotency-key': contentActionKey('cancel', ids) }, json: {} }),
  publishContentNow: (ids) => ({ headers: { 'idempotency-key': contentActionKey('publish', ids) }, json: {} }),
  retryContent: () => ({ json: {} }),
  submitContent: () => ({ json: {} }),
  approveContent: () => ({ json: {} }),
  requestContentChanges: () => ({ json: { comment: 'Authorization matrix.' } }),
  addContentComment: () => ({ json: { body: 'Authorization matrix.' } }),
  setApprovalPolicy: () => ({ json: { approval_roles: [] } }),
  uploadMedia: () => ({ raw: { contentType: 'image/jpeg', bytes: JPEG } }),
  createWebhook: () => ({ json: { url: 'http://127.0.0.1:9/matrix', enabled_events: ['content.published'] } }),
  updateWebhook: () => ({ json: { description: 'matrix' } }),
  sendWebhookTestEvent: () => ({ json: {} }),
  createOAuthClient: () => ({ json: { client_name: 'matrix client', redirect_uris: [REDIRECT] } }),
  updateOAuthClient: () => ({ json: { client_name: 'matrix client renamed' } }),
  startOAuthConnection: () => ({ json: { platform_slug: 'linkedin' } }),
  connectAppPassword: () => ({ json: { platform_slug: 'bluesky', identifier: 'matrix.bsky.social', app_password: 'matrix-app-password' } }),
  reconnectAppPassword: () => ({ json: { app_password: 'matrix-app-password' } }),
  chooseConnectionTarget: () => ({ json: { target_id: '1234567890' } }),
  getWalletPrice: () => ({ query: { operacao: 'publicacao' } }),
  // A person is not a workspace's object: anyone with an account here can be added (seeded once, see seedTenant).
  addMember: () => ({ json: { email: MATRIX_PERSON, role: 'viewer' } }),
  updateMember: () => ({ json: { role: 'editor' } }),
  createInvitation: () => ({ json: { email: 'matrix-invitee@example.com', role: 'viewer' } }),
  mcp: () => ({ json: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } }),
};

/** Arguments of every MCP tool, one builder per way of calling it. A served tool missing here fails the matrix. */
export const TOOL_ARGS: Record<string, ((ids: Ids) => Record<string, unknown>)[]> = {
  publish_content: [(ids) => ({ ...contentBody(ids), idempotency_key: ids.idemKey })],
  preview_content: [(ids) => contentBody(ids)],
  update_content: [(ids) => ({ content_id: ids.contentId, text: 'Authorization matrix, edited.', idempotency_key: contentActionKey('update', ids) })],
  cancel_content: [(ids) => ({ content_id: ids.contentId, idempotency_key: contentActionKey('cancel', ids) })],
  publish_content_now: [(ids) => ({ content_id: ids.contentId, idempotency_key: contentActionKey('publish', ids) })],
  retry_failed_targets: [(ids) => ({ content_id: ids.contentId })],
  submit_for_approval: [(ids) => ({ content_id: ids.contentId })],
  list_pending_approvals: [() => ({})],
  approve_content: [(ids) => ({ content_id: ids.contentId })],
  request_changes: [(ids) => ({ content_id: ids.contentId, comment: 'Authorization matrix.' })],
  get_content: [(ids) => ({ content_id: ids.contentId })],
  list_contents: [() => ({})],
  list_platforms: [() => ({})],
  list_brands: [() => ({})],
  get_queue: [(ids) => ({ brand_id: ids.brandId })],
  set_queue: [(ids) => ({ brand_id: ids.brandId, time_zone: 'America/New_York', slots: [{ days: ['mon'], time: '09:30' }] })],
  list_connections: [(ids) => ({ brand_id: ids.brandId })],
  start_connection_oauth: [(ids) => ({ brand_id: ids.brandId, platform_slug: 'linkedin' }), (ids) => ({ connection_id: ids.connId })],
  list_publish_targets: [(ids) => ({ connection_id: ids.connId })],
  choose_publish_target: [(ids) => ({ connection_id: ids.connId, target_id: '1234567890' })],
  create_webhook: [() => ({ url: 'http://127.0.0.1:9/matrix', enabled_events: ['content.published'] })],
  list_webhooks: [() => ({})],
  list_deliveries: [(ids) => ({ webhook_id: ids.whId })],
  list_media: [() => ({})],
  redeliver_delivery: [(ids) => ({ delivery_id: ids.delId })],
  verify_webhook_signature: [() => ({ secret: 'whsec_matrix', signature_header: 'sha256=00', payload: '1.{}', tolerance_seconds: 300 })],
  get_usage: [() => ({})],
  get_wallet: [() => ({})],
  get_wallet_price: [() => ({ operacao: 'publicacao' })],
  list_wallet_offers: [() => ({})],
  get_audit_log: [() => ({})],
  create_brand: [() => ({ name: 'Authorization matrix brand' })],
  update_brand: [(ids) => ({ brand_id: ids.brandId, name: 'Authorization matrix' })],
  add_sandbox_connection: [(ids) => ({ brand_id: ids.brandId, platform_slug: 'linkedin', mode: 'sandbox', name: '@matrix' })],
  import_media_from_url: [() => ({ url: 'https://127.0.0.1:9/matrix.jpg' })],
  update_webhook: [(ids) => ({ webhook_id: ids.whId, description: 'Authorization matrix' })],
  send_webhook_test: [(ids) => ({ webhook_id: ids.whId })],
  delete_webhook: [(ids) => ({ webhook_id: ids.spareWhId })],
};

/** One concrete HTTP request of the matrix. */
export interface Call {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Set on `tools/call` requests. */
  tool?: string;
}

const MCP_ACCEPT = 'application/json, text/event-stream';

/** The REST request of `op` for these ids (for `/mcp`: `tools/list`). */
export function restCall(op: Operation, ids: Ids): Call {
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const key = PATH_PARAMS[name];
    if (key === undefined) throw new Error(`${op.key}: no object for path parameter {${name}} in PATH_PARAMS`);
    return encodeURIComponent(ids[key]);
  });
  const parts = REQUESTS[op.operationId]?.(ids) ?? {};
  const query = parts.query === undefined ? '' : `?${new URLSearchParams(parts.query).toString()}`;
  const headers: Record<string, string> = { ...parts.headers };
  let body: string | Buffer | undefined;
  if (parts.json !== undefined) {
    body = JSON.stringify(parts.json);
    headers['content-type'] = 'application/json';
  } else if (parts.raw !== undefined) {
    body = parts.raw.bytes;
    headers['content-type'] = parts.raw.contentType;
  }
  if (op.path === '/mcp') headers.accept = MCP_ACCEPT;
  return { label: op.key, method: op.method, path: `${path}${query}`, headers, body };
}

/** A raw JSON-RPC `tools/call` on `/mcp`. */
export function toolCall(name: string, args: Record<string, unknown>, variant = 0): Call {
  return {
    label: `MCP ${name}${variant > 0 ? `#${variant + 1}` : ''}`,
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: MCP_ACCEPT },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    tool: name,
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
  /** Everything the caller sent: what the answer may echo without leaking. */
  sent: string;
  /** Differences from /openapi.yaml. */
  conformance: string[];
}

export async function send(server: TestServer, call: Call, authorization: string | undefined): Promise<Answer> {
  const headers = { ...call.headers, ...(authorization === undefined ? {} : { authorization }) };
  const res = await fetch(`${server.url}${call.path}`, { method: call.method, headers, body: call.body });
  const text = await res.text();
  const json: unknown = (res.headers.get('content-type') ?? '').includes('json') && text.length > 0 ? JSON.parse(text) : undefined;
  const pathname = new URL(call.path, server.url).pathname;
  const conformance = (await server.openapi()).check(call.method, pathname, res.status, json);
  const sent = [call.path, ...Object.values(headers), typeof call.body === 'string' ? call.body : ''].join('\n');
  return { status: res.status, headers: res.headers, text, json, sent, conformance };
}

/** The strings of `secrets` found in an answer (body and headers), except those the caller sent itself. */
export function leaks(answer: Answer, secrets: readonly string[]): string[] {
  const seen = `${answer.text}\n${[...answer.headers.values()].join('\n')}`;
  return secrets.filter((s) => !answer.sent.includes(s) && seen.includes(s));
}

export interface ErrorBody {
  error: string;
  message: string;
  request_id: string;
  [extra: string]: unknown;
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.error === 'string' && typeof v.message === 'string' && typeof v.request_id === 'string';
}

/** Codes whose body is exactly `{error, message, request_id}` (spec 7.2). */
const BARE_CODES = ['invalid_api_key', 'invalid_token', 'forbidden', 'not_found'];

/** Problems of an error body: the spec shape, `request_id` equal to X-Request-Id, no extra field on bare codes. */
export function errorBodyProblems(body: unknown, requestId: string | null): string[] {
  if (!isErrorBody(body)) return [`not an error body {error, message, request_id}: ${JSON.stringify(body)?.slice(0, 200)}`];
  const problems: string[] = [];
  if (body.request_id !== requestId) problems.push(`request_id ${body.request_id} ≠ X-Request-Id ${requestId}`);
  if (BARE_CODES.includes(body.error) && Object.keys(body).sort().join() !== 'error,message,request_id') problems.push(`extra fields: ${Object.keys(body).join()}`);
  return problems;
}

/**
 * Problems of a 401's `WWW-Authenticate` (RFC 6750 §3, RFC 9728 §5.1): a Bearer challenge naming the
 * protected-resource metadata, with `error="invalid_token"` exactly when a bearer token was sent. With `realm`
 * the challenge must also name the realm (the REST door's; `/mcp` chooses its own parameters).
 */
export function challengeProblems(answer: Answer, authorization: string | undefined, expected: { resourceMetadataUrl: string; realm?: string }): string[] {
  const challenge = answer.headers.get('www-authenticate');
  if (challenge === null) return ['401 without WWW-Authenticate'];
  const problems: string[] = [];
  if (!/^Bearer( |$)/.test(challenge)) problems.push(`not a Bearer challenge: ${challenge}`);
  if (!challenge.includes(`resource_metadata="${expected.resourceMetadataUrl}"`)) problems.push(`no resource_metadata="${expected.resourceMetadataUrl}": ${challenge}`);
  if (expected.realm !== undefined && !challenge.includes(`realm="${expected.realm}"`)) problems.push(`no realm="${expected.realm}": ${challenge}`);
  const bearerSent = authorization !== undefined && /^Bearer +\S/i.test(authorization);
  const saysInvalid = challenge.includes('error="invalid_token"');
  if (bearerSent && !saysInvalid) problems.push(`a refused bearer token without error="invalid_token": ${challenge}`);
  // RFC 6750 §3.1: no error code when the request carried no bearer credential (none, or another scheme).
  if (!bearerSent && saysInvalid && expected.realm !== undefined) problems.push(`error="invalid_token" without a bearer token: ${challenge}`);
  return problems;
}

/** What an MCP answer says: the HTTP status, and for a tool result whether it is an error and its body. */
export interface ToolOutcome {
  status: number;
  isError: boolean;
  body: unknown;
}

export function toolOutcome(answer: Answer): ToolOutcome {
  const rpc = answer.json as
    | { result?: { isError?: boolean; structuredContent?: unknown; content?: { type: string; text?: string }[] }; error?: unknown }
    | undefined;
  if (rpc?.result !== undefined) {
    const isError = rpc.result.isError === true;
    // An error result carries its JSON body only as text (no structuredContent: it would break the output schema).
    const text = rpc.result.content?.[0]?.text;
    const body: unknown = isError && text !== undefined ? JSON.parse(text) : rpc.result.structuredContent;
    return { status: answer.status, isError, body };
  }
  return { status: answer.status, isError: true, body: rpc?.error ?? answer.json };
}

/**
 * What a caller sees of a refusal, for comparing two refusals: the status, the error code and the message with
 * the substituted ids written as their names. Naming another workspace's object and naming nothing must give the
 * same one, or the answer tells that the object exists.
 */
export function refusalFingerprint(status: number, body: unknown, substituted: Partial<Ids>): string {
  if (!isErrorBody(body)) return `${status}`;
  let message = body.message;
  for (const [name, value] of Object.entries(substituted)) message = message.split(value).join(`<${name}>`);
  return `${status} ${body.error} ${message}`;
}

/** Collects the failures of many cases, so one run reports every failing row at once. */
export class Findings {
  cases = 0;
  readonly failures: string[] = [];
  record(label: string, problems: readonly string[]): void {
    this.cases++;
    for (const p of problems) this.failures.push(`${label}: ${p}`);
  }
}

/**
 * DCR + PKCE + consent + code exchange, as an MCP client does; the token acts for `apiKey`'s workspace.
 * Returns the token and the public client it was issued to.
 */
export async function oauthAccessToken(server: TestServer, apiKey: string): Promise<{ token: string; clientId: string }> {
  const base = server.service.baseUrl;
  const redirect = 'https://claude.ai/api/mcp/auth_callback';
  const registered = await fetch(`${base}/api/oauth/mcp/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'matrix MCP client', redirect_uris: [redirect] }),
  });
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const { verifier, challenge } = pkcePair();
  const auth = new URL(`${base}/api/oauth/mcp/authorize`);
  auth.search = new URLSearchParams({ client_id: clientId, redirect_uri: redirect, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256', resource: `${base}/mcp` }).toString();
  const callback = await new Browser().authorize(auth.toString(), base, apiKey);
  const code = callback.searchParams.get('code');
  if (code === null) throw new Error(`no code: ${callback.toString()}`);
  const res = await fetch(`${base}/api/oauth/mcp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect, client_id: clientId, code_verifier: verifier, resource: `${base}/mcp` }).toString(),
  });
  const token = ((await res.json()) as { access_token?: string }).access_token;
  if (token === undefined) throw new Error(`token endpoint answered ${res.status}`);
  return { token, clientId };
}

/** RFC 7009 revocation by the public client the token was issued to. */
export async function revokeAccessToken(server: TestServer, token: string, clientId: string): Promise<number> {
  const res = await fetch(`${server.service.baseUrl}/api/oauth/mcp/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, token_type_hint: 'access_token', client_id: clientId }).toString(),
  });
  return res.status;
}

/** A workspace with one object of every kind, and every id, secret and name of it (to look for in answers). */
export interface Tenant {
  apiKey: string;
  ids: Ids;
  secrets: string[];
}

async function created(server: TestServer, apiKey: string, call: Call): Promise<Record<string, unknown>> {
  const answer = await send(server, call, `Bearer ${apiKey}`);
  if (answer.status !== 201 || answer.conformance.length > 0) throw new Error(`${call.label}: ${answer.status} ${answer.text} ${answer.conformance.join('; ')}`);
  return answer.json as Record<string, unknown>;
}

/** Creates the tenant's objects; its content and webhook delivery are completed by `finishTenant`. */
export async function seedTenant(server: TestServer, label: string): Promise<Tenant> {
  const mark = `${label}-${randomBytes(6).toString('hex')}`;
  const ws = await server.workspace(`${mark} workspace`);
  const base = `/api/v1/workspaces/${ws.workspace_id}`;
  const json = (path: string, body: unknown, headers: Record<string, string> = {}): Call => ({
    label: `seed POST ${path}`,
    method: 'POST',
    path: `${base}${path}`,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const brand = await created(server, ws.api_key, json('/brands', { name: `${mark} brand` }));
  const conn = await created(server, ws.api_key, json(`/brands/${String(brand.id)}/connections`, { platform_slug: 'instagram', mode: 'sandbox', name: `${mark} connection` }));
  const media = await created(server, ws.api_key, { label: 'seed media', method: 'POST', path: `${base}/media`, headers: { 'content-type': 'image/jpeg' }, body: JPEG });
  const hook = await created(server, ws.api_key, json('/webhooks', { url: 'http://127.0.0.1:9/x', description: `${mark} webhook`, enabled_events: ['content.published'] }));
  const spareHook = await created(server, ws.api_key, json('/webhooks', { url: 'http://127.0.0.1:9/spare', description: `${mark} spare webhook`, enabled_events: ['content.failed'] }));
  const key = await created(server, ws.api_key, json('/api-keys', { name: `${mark} key` }));
  const client = await created(server, ws.api_key, json('/oauth-clients', { client_name: `${mark} client`, redirect_uris: [REDIRECT] }));
  const memberEmail = `${mark}-member@example.com`;
  for (const email of [memberEmail, MATRIX_PERSON]) {
    const now = Date.now();
    if ((await findUserByEmail(server.container.db.kysely, email)) !== undefined) continue;
    await insertUser(server.container.db.kysely, { id: `usr_${randomBytes(10).toString('hex')}`, email, name: null, passwordHash: null, emailVerifiedAt: null, createdAt: now, updatedAt: now });
  }
  const member = await created(server, ws.api_key, json('/members', { email: memberEmail, role: 'viewer' }));
  const invitation = await created(server, ws.api_key, json('/invitations', { email: `${mark}-invitee@example.com`, role: 'viewer' }));
  const ids: Ids = {
    wsId: ws.workspace_id,
    brandId: String(brand.id),
    connId: String(conn.id),
    mediaId: String(media.id),
    whId: String(hook.id),
    spareWhId: String(spareHook.id),
    keyId: String(key.id),
    clientId: String(client.client_id),
    idemKey: `${mark}-idempotency-key`,
    memberId: String(member.id),
    invitationId: String(invitation.id),
    contentId: '',
    delId: '',
  };
  const content = await created(server, ws.api_key, json('/contents', contentBody(ids), { 'idempotency-key': ids.idemKey }));
  ids.contentId = String(content.content_id);
  const jobs = (content.jobs as { job_id: string }[]).map((j) => j.job_id);
  const secrets = [ws.workspace_id, ws.key_id, ws.api_key, mark, String(hook.secret), String(spareHook.secret), String(key.api_key), String(client.client_secret), String(invitation.token), String(member.user_id), memberEmail, ...jobs];
  for (const key of OBJECT_KEYS) if (ids[key] !== '') secrets.push(ids[key]);
  return { apiKey: ws.api_key, ids, secrets };
}

/** After the content was published and the dispatcher ran once: records the webhook's delivery and its event. */
export async function finishTenant(server: TestServer, tenant: Tenant): Promise<void> {
  const answer = await send(server, { label: 'seed deliveries', method: 'GET', path: `/api/v1/workspaces/${tenant.ids.wsId}/webhooks/${tenant.ids.whId}/deliveries`, headers: {} }, `Bearer ${tenant.apiKey}`);
  const delivery = (answer.json as { data: { id: string; event_id: string }[] }).data[0];
  if (delivery === undefined) throw new Error(`no delivery for ${tenant.ids.whId}: ${answer.text}`);
  tenant.ids.delId = delivery.id;
  tenant.secrets.push(delivery.id, delivery.event_id);
}
