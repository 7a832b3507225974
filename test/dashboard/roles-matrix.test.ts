import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertUser } from '../../db/repositories/users.repo.js';
import { ManualClock } from '../../src/core/clock.js';
import { type Permission, type Role, ROLES, roleCan } from '../../src/core/permissions/roles.js';
import type { PageHandler, PageRouter } from '../../src/dashboard/page-router.js';
import { registerPages } from '../../src/dashboard/router.js';
import { DashboardClient, type DashboardPage, textOf } from '../support/dashboard.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Every dashboard form action against the role matrix: a dashboard session opened with a key of each role posts
 * every action with a valid CSRF token and a minimal form. A role the matrix does not allow gets the dashboard's
 * refusal naming a permission it lacks; an allowed role never does (a validation or conflict answer is fine: the
 * door let it through). The core decisions themselves are checked on both databases through REST and MCP
 * (test/authz-matrix.test.ts); here only the dashboard's wiring is, so one SQLite server is enough.
 */

/** The form actions the dashboard registers, read from the page modules themselves through a recording router. */
function registeredActions(): string[] {
  const actions: string[] = [];
  const ignore = (_path: string, _handler: PageHandler) => undefined;
  const record = (path: string) => void actions.push(path);
  const recorder: PageRouter = { page: ignore, action: record, rawAction: record, verifyCsrf: () => false };
  registerPages(recorder);
  return actions;
}

/** A fresh object for a path parameter (its action may delete or change it), made with the owner's key. */
type Fixture = 'brandId' | 'connId' | 'draftId' | 'scheduledId' | 'pendingId' | 'keyId' | 'memberId' | 'invitationId' | 'mediaId' | 'clientId' | 'whId' | 'delId';

interface ActionCase {
  /**
   * What the action needs, as the page's core call checks it (the first `authorize` it meets). null: an action on
   * the person's own account (password, two-step sign-in, passkeys, sessions), which no role grants or withholds;
   * its answer must be the same for every role.
   */
  permission: Permission | null;
  /**
   * The objects the action names, made fresh for it: a path parameter of that name is replaced, and `fields` may
   * read them (a form field naming an object). `contentId` comes from the fixture of the state the action needs.
   */
  params?: Record<string, Fixture>;
  /** A minimal form that gets past the page's own validation, so the core's decision is what answers. */
  fields?: (ids: Record<string, string>) => Record<string, string | string[]>;
  /** A multipart form (the page reads the body itself). */
  multipart?: true;
}

const FUTURE = '2027-01-07T09:00:00Z';

const ACTIONS: Record<string, ActionCase> = {
  '/dashboard/compose': { permission: 'contents.draft', multipart: true, fields: (ids) => ({ brand_id: ids.brandId!, target_platforms: 'linkedin', content_type: 'text', text: 'Roles matrix', when: 'draft' }) },
  '/dashboard/contents/:contentId/approve': { permission: 'contents.approve', params: { contentId: 'pendingId' } },
  '/dashboard/contents/:contentId/request-changes': { permission: 'contents.approve', params: { contentId: 'pendingId' }, fields: () => ({ comment: 'Shorter, please.' }) },
  '/dashboard/contents/:contentId/submit': { permission: 'contents.draft', params: { contentId: 'draftId' } },
  '/dashboard/contents/:contentId/comments': { permission: 'contents.comment', params: { contentId: 'pendingId' }, fields: () => ({ body: 'Looks good.' }) },
  '/dashboard/contents/:contentId/edit': { permission: 'contents.draft', params: { contentId: 'draftId' }, fields: () => ({ text: 'Edited by the matrix.' }) },
  '/dashboard/contents/:contentId/cancel': { permission: 'contents.publish', params: { contentId: 'scheduledId' } },
  '/dashboard/contents/:contentId/publish': { permission: 'contents.publish', params: { contentId: 'scheduledId' } },
  '/dashboard/contents/:contentId/retry': { permission: 'contents.publish', params: { contentId: 'scheduledId' } },
  '/dashboard/media': { permission: 'media.upload', multipart: true },
  '/dashboard/media/:mediaId/delete': { permission: 'media.delete', params: { mediaId: 'mediaId' } },
  '/dashboard/brands': { permission: 'brands.manage', fields: () => ({ name: `Matrix ${randomBytes(3).toString('hex')}`, time_zone: 'UTC' }) },
  '/dashboard/brands/:brandId/rename': { permission: 'brands.manage', params: { brandId: 'brandId' }, fields: () => ({ name: 'Renamed by the matrix' }) },
  '/dashboard/brands/:brandId/delete': { permission: 'brands.manage', params: { brandId: 'brandId' } },
  '/dashboard/brands/:brandId/connections': { permission: 'connections.manage', params: { brandId: 'brandId' }, fields: () => ({ platform_slug: 'threads', name: 'Matrix threads' }) },
  '/dashboard/brands/:brandId/connections/live': { permission: 'connections.manage', params: { brandId: 'brandId' }, fields: () => ({ platform_slug: 'linkedin' }) },
  '/dashboard/brands/:brandId/connections/app-password': {
    permission: 'connections.manage',
    params: { brandId: 'brandId' },
    fields: () => ({ platform_slug: 'bluesky', identifier: 'matrix.example.com', app_password: 'abcd-efgh-ijkl-mnop' }),
  },
  '/dashboard/brands/:brandId/queue': { permission: 'brands.manage', params: { brandId: 'brandId' }, fields: () => ({ time_zone: 'UTC' }) },
  '/dashboard/connections/:connId/app-password': { permission: 'connections.manage', params: { connId: 'connId' }, fields: () => ({ app_password: 'abcd-efgh-ijkl-mnop' }) },
  '/dashboard/connections/:connId/deactivate': { permission: 'connections.manage', params: { connId: 'connId' } },
  '/dashboard/connections/:connId/reconnect': { permission: 'connections.manage', params: { connId: 'connId' } },
  '/dashboard/connections/:connId/board': { permission: 'connections.manage', params: { connId: 'connId' }, fields: () => ({ target_id: 'board-1' }) },
  '/dashboard/webhooks': { permission: 'webhooks.manage', fields: () => ({ url: 'https://hooks.example.com/matrix', description: 'Matrix', enabled_events: 'content.published' }) },
  '/dashboard/webhooks/:whId': { permission: 'webhooks.manage', params: { whId: 'whId' }, fields: () => ({ url: 'https://hooks.example.com/matrix', description: 'Matrix', enabled_events: 'content.published', active: 'true' }) },
  '/dashboard/webhooks/:whId/delete': { permission: 'webhooks.manage', params: { whId: 'whId' } },
  '/dashboard/webhooks/:whId/test': { permission: 'webhooks.manage', params: { whId: 'whId' } },
  '/dashboard/deliveries/:delId/redeliver': { permission: 'webhooks.manage', params: { delId: 'delId' } },
  '/dashboard/api-keys': { permission: 'api_keys.manage', fields: () => ({ name: 'Matrix key', role: 'viewer' }) },
  '/dashboard/api-keys/:keyId/revoke': { permission: 'api_keys.manage', params: { keyId: 'keyId' } },
  '/dashboard/members/invite': { permission: 'members.manage', fields: () => ({ email: `invitee-${randomBytes(4).toString('hex')}@example.com`, role: 'viewer' }) },
  '/dashboard/members/:memberId': { permission: 'members.manage', params: { memberId: 'memberId' }, fields: () => ({ role: 'editor' }) },
  '/dashboard/members/:memberId/remove': { permission: 'members.manage', params: { memberId: 'memberId' } },
  '/dashboard/invitations/:invitationId/revoke': { permission: 'members.manage', params: { invitationId: 'invitationId' } },
  '/dashboard/connected-apps/revoke': { permission: 'oauth_clients.manage', fields: (ids) => ({ client_id: ids.clientId! }), params: { clientId: 'clientId' } },
  '/dashboard/oauth-clients': { permission: 'oauth_clients.manage', fields: () => ({ client_name: 'Matrix client', redirect_uris: 'https://example.com/callback' }) },
  '/dashboard/oauth-clients/:clientId': { permission: 'oauth_clients.manage', params: { clientId: 'clientId' }, fields: () => ({ client_name: 'Matrix client', redirect_uris: 'https://example.com/callback' }) },
  '/dashboard/oauth-clients/:clientId/delete': { permission: 'oauth_clients.manage', params: { clientId: 'clientId' } },
  '/dashboard/pay': { permission: 'wallet.pay', fields: () => ({ offer: 'pack_100', checkout_id: `chk_${randomBytes(12).toString('hex')}` }) },
  '/dashboard/account/workspace': { permission: null },
  '/dashboard/account/password': { permission: null },
  '/dashboard/account/totp/start': { permission: null },
  '/dashboard/account/totp/confirm': { permission: null },
  '/dashboard/account/totp/disable': { permission: null },
  '/dashboard/account/recovery-codes': { permission: null },
  '/dashboard/account/sessions/:sessionId/end': { permission: null },
  '/dashboard/account/sessions/end-all': { permission: null },
  '/dashboard/account/delete': { permission: null },
  '/dashboard/account/passkeys': { permission: null },
  '/dashboard/account/passkeys/:passkeyId/rename': { permission: null },
  '/dashboard/account/passkeys/:passkeyId/remove': { permission: null },
};

/** The permission a refusal names, when the answer is the dashboard's refusal (the "Not allowed" page or its words in a message). */
function refusalOf(page: DashboardPage): string | null {
  return /does not allow ([a-z_]+\.[a-z_]+)/.exec(textOf(page.html))?.[1] ?? null;
}

/** A tiny JPEG-looking upload: the media service sniffs the first bytes. */
const JPEG = Buffer.from('\xff\xd8\xff roles matrix jpeg bytes '.repeat(32), 'latin1');

describe('every dashboard form action by role [sqlite]', () => {
  let server: TestServer;
  let ownerKey: string;
  let wsId: string;
  let contributorKey: string;
  const sessions = new Map<Role, DashboardClient>();

  const api = async (method: string, path: string, body?: unknown, key = ownerKey, headers: Record<string, string> = {}) => {
    const res = await server.request(method, `/api/v1/workspaces/${wsId}${path}`, { key, ...(body === undefined ? {} : { body }), headers });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };

  let sharedBrand = '';
  let sharedConn = '';
  const content = async (timing: Record<string, unknown>, key = ownerKey) =>
    String(
      (
        await api('POST', '/contents', { brand_id: sharedBrand, target_platforms: ['linkedin'], target_connections: [sharedConn], content_type: 'text', text: 'Roles matrix.', ...timing }, key, {
          'idempotency-key': `matrix-${randomBytes(8).toString('hex')}`,
        })
      ).content_id,
    );

  const FIXTURES: Record<Fixture, () => Promise<string>> = {
    brandId: async () => String((await api('POST', '/brands', { name: `Matrix brand ${randomBytes(3).toString('hex')}` })).id),
    connId: async () => String((await api('POST', `/brands/${sharedBrand}/connections`, { platform_slug: 'pinterest', mode: 'sandbox', name: 'Matrix pins' })).id),
    draftId: () => content({ draft: true }),
    scheduledId: () => content({ publish_at: FUTURE }),
    // A contributor's scheduled content waits for a person's approval.
    pendingId: () => content({ publish_at: FUTURE }, contributorKey),
    keyId: async () => String((await api('POST', '/api-keys', { name: 'Matrix spare', role: 'viewer' })).id),
    memberId: async () => {
      const email = `member-${randomBytes(4).toString('hex')}@example.com`;
      const now = Date.now();
      await insertUser(server.container.db.kysely, { id: `usr_${randomBytes(10).toString('hex')}`, email, name: null, passwordHash: null, emailVerifiedAt: null, createdAt: now, updatedAt: now });
      return String((await api('POST', '/members', { email, role: 'viewer' })).id);
    },
    invitationId: async () => String((await api('POST', '/invitations', { email: `invited-${randomBytes(4).toString('hex')}@example.com`, role: 'viewer' })).id),
    mediaId: async () => {
      const res = await fetch(`${server.url}/api/v1/workspaces/${wsId}/media`, { method: 'POST', headers: { authorization: `Bearer ${ownerKey}`, 'content-type': 'image/jpeg' }, body: JPEG });
      expect(res.status).toBe(201);
      return String(((await res.json()) as { id: string }).id);
    },
    clientId: async () => String((await api('POST', '/oauth-clients', { client_name: 'Matrix client', redirect_uris: ['https://example.com/callback'] })).client_id),
    whId: async () => String((await api('POST', '/webhooks', { url: 'https://hooks.example.com/hook', description: 'Matrix hook', enabled_events: ['content.published'] })).id),
    delId: async () => {
      const whId = await FIXTURES.whId();
      return String((await api('POST', `/webhooks/${whId}/test`, {})).id);
    },
  };

  beforeAll(async () => {
    server = await startTestServer(testDatabaseKinds().find((k) => k.name === 'sqlite')!, { RATE_LIMIT_PER_MINUTE: '100000' }, { clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false });
    const ws = await server.workspace('Roles matrix');
    ownerKey = ws.api_key;
    wsId = ws.workspace_id;
    sharedBrand = String((await api('POST', '/brands', { name: 'Matrix shared' })).id);
    sharedConn = String((await api('POST', `/brands/${sharedBrand}/connections`, { platform_slug: 'linkedin', mode: 'sandbox', name: 'Matrix linkedin' })).id);
    for (const role of ROLES) {
      const key = role === 'owner' ? ownerKey : String((await api('POST', '/api-keys', { name: `matrix ${role}`, role })).api_key);
      if (role === 'contributor') contributorKey = key;
      const client = new DashboardClient(server.url);
      await client.signIn(key);
      sessions.set(role, client);
    }
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('the table names every form action the dashboard registers, and only those', () => {
    expect(Object.keys(ACTIONS).sort()).toEqual(registeredActions().sort());
  });

  it('every action refuses exactly the roles the matrix does not allow', async () => {
    const problems: string[] = [];
    for (const [route, spec] of Object.entries(ACTIONS)) {
      const ids: Record<string, string> = { brandId: sharedBrand };
      let path = route;
      for (const [param, fixture] of Object.entries(spec.params ?? {})) {
        ids[param] = await FIXTURES[fixture]();
        path = path.replace(`:${param}`, ids[param]);
      }
      path = path.replace(/:[a-zA-Z]+/g, 'none_of_these');
      // Refused roles first: an allowed role may delete or change the object, and a refusal must not depend on that.
      const roles = [...ROLES].sort((a, b) => Number(spec.permission !== null && roleCan(a, spec.permission)) - Number(spec.permission !== null && roleCan(b, spec.permission)));
      const answers: string[] = [];
      for (const role of roles) {
        const client = sessions.get(role)!;
        const fields = spec.fields?.(ids) ?? {};
        const page = spec.multipart ? await postMultipart(client, path, fields) : await client.post(path, fields);
        const refused = refusalOf(page);
        const where = `${route} as ${role} (${page.status})`;
        if (spec.permission === null) {
          if (refused !== null) problems.push(`${where}: refused for ${refused}, but it is a person's own account action`);
          answers.push(`${page.status} ${page.url.replace(/\?.*$/, '')}`);
          continue;
        }
        if (roleCan(role, spec.permission)) {
          if (refused !== null) problems.push(`${where}: allowed ${spec.permission} but refused for ${refused}`);
          if (page.status === 500) problems.push(`${where}: failed: ${textOf(page.html).slice(0, 200)}`);
        } else if (refused === null || roleCan(role, refused as Permission)) {
          problems.push(`${where}: lacks ${spec.permission} but was not refused: ${textOf(page.html).slice(-300)}`);
        }
      }
      // An account action answers a key's session the same way whatever its role.
      if (spec.permission === null && new Set(answers).size !== 1) problems.push(`${route}: answers differ by role: ${answers.join(' | ')}`);
    }
    expect(problems).toEqual([]);
  });
});

/** Posts a multipart form as the browser does: the CSRF token first, then the fields, and a photo for the library. */
async function postMultipart(client: DashboardClient, path: string, fields: Record<string, string | string[]>): Promise<DashboardPage> {
  const form = new FormData();
  form.append('csrf', client.csrf!);
  form.append('idempotency_key', `matrix-${randomBytes(8).toString('hex')}`);
  for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  if (path === '/dashboard/media') form.append('file', new Blob([JPEG], { type: 'image/jpeg' }), 'matrix.jpg');
  const res = await client.raw(path, { method: 'POST', body: form });
  let current = res;
  let at = new URL(path, client.baseUrl).toString();
  for (let i = 0; i < 5 && current.status >= 300 && current.status < 400; i++) {
    at = new URL(current.headers.get('location')!, at).toString();
    current = await client.raw(at);
  }
  return { status: current.status, url: at, html: await current.text(), headers: current.headers };
}
