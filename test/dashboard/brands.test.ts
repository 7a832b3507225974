import { expect, it } from 'vitest';
import { insertConnection } from '../../db/repositories/connections.repo.js';
import type { Principal } from '../../src/core/principal.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { overrides, serviceEnv } from '../support/overrides.js';

const GB = 1024 ** 3;
const ONE_CONNECTION = { brands: 10, connections: 1, media_storage: GB, webhooks: 10, inspiration_library: 10, criacao_de_conteudos: 100, publicacoes: 100 };

const principalOf = (ws: NewWorkspace): Principal => ({ kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null });

async function signedIn(server: TestServer) {
  const ws = await server.workspace();
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);
  return { ws, client };
}

async function createBrand(client: DashboardClient, name: string): Promise<string> {
  await client.get('/dashboard/brands');
  const page = await client.post('/dashboard/brands', { name });
  expect(page.status).toBe(200);
  const id = new RegExp(`<h2 id="brand-(brand_[^"]+)-h">${name}</h2>`).exec(page.html)?.[1];
  expect(id, `brand ${name} listed`).toBeDefined();
  return id!;
}

/** The `action` of every form on the page matching `pattern`. */
function formActions(html: string, pattern: RegExp): string[] {
  return [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]!).filter((a) => pattern.test(a));
}

describeEachDb(
  'dashboard brands & connections',
  (server) => {
    it('creates a brand through the form and lists it with the plan meters', async () => {
      const { ws, client } = await signedIn(server());
      const page = await client.get('/dashboard/brands');
      expect(page.status).toBe(200);
      expect(textOf(page.html)).toContain('Brands: 0 of 10 used');
      const after = await client.post('/dashboard/brands', { name: 'Acme' });
      expect(after.url).toMatch(/\/dashboard\/brands\?at=brand-brand_[^#]+#brand-brand_/);
      const text = textOf(after.html);
      expect(text).toContain('Brand “Acme” created, in UTC.');
      expect(after.html).toMatch(/<h2 id="brand-brand_[^"]+-h">Acme<\/h2>/);
      expect(text).toContain('Brands: 1 of 10 used');
      expect(text).toContain('Connections: 0 of 50 used');
      const brands = (await server().container.services.brands.list(principalOf(ws), ws.workspace_id)).data;
      expect(brands.map((b) => b.name)).toEqual(['Acme']);
    });

    it('asks the time zone when a brand is created: stored under its current IANA name; an unknown one creates nothing', async () => {
      const { ws, client } = await signedIn(server());
      const page = await client.get('/dashboard/brands');
      // The browser's zone replaces UTC through the page's script; without one UTC stays.
      expect(page.html).toMatch(/<input id="brand-zone" name="time_zone" type="text" list="brand-zone-list"[^>]* value="UTC" data-browser-zone/);
      const bad = await client.post('/dashboard/brands', { name: 'Nowhere', time_zone: 'Mars/Olympus' });
      expect(bad.status).toBe(400);
      expect(bad.html).toMatch(/<p class="field-error" id="brand-zone-error">[^<]*unknown time zone/);
      expect(bad.html).toContain('value="Mars/Olympus"');
      expect((await server().container.services.brands.list(principalOf(ws), ws.workspace_id)).data).toEqual([]);

      // A legacy name a browser may give is kept under today's name.
      const made = await client.post('/dashboard/brands', { name: 'Mumbai cafe', time_zone: 'Asia/Calcutta' });
      expect(textOf(made.html)).toContain('Brand “Mumbai cafe” created, in Asia/Kolkata.');
      const [brand] = (await server().container.services.brands.list(principalOf(ws), ws.workspace_id)).data;
      expect((await server().container.services.queue.getQueue(principalOf(ws), ws.workspace_id, brand!.id)).time_zone).toBe('Asia/Kolkata');
    });

    it('an empty brand name is shown next to the field with 400 and nothing is created', async () => {
      const { ws, client } = await signedIn(server());
      await client.get('/dashboard/brands');
      const page = await client.post('/dashboard/brands', { name: '   ' });
      expect(page.status).toBe(400);
      expect(page.html).toMatch(/<p class="field-error" id="brand-name-error">[^<]+<\/p>/);
      expect(page.html).toContain('aria-describedby="brand-name-error" aria-invalid="true"');
      expect((await server().container.services.brands.list(principalOf(ws), ws.workspace_id)).data).toEqual([]);
    });

    it('adds sandbox connections on two networks to a brand', async () => {
      const { ws, client } = await signedIn(server());
      const brandId = await createBrand(client, 'Two networks');
      const first = await client.post(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'threads', name: '@acme' });
      expect(textOf(first.html)).toContain('Connection “@acme” added to Two networks.');
      const second = await client.post(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'linkedin', name: 'Acme page' });
      expect(second.status).toBe(200);
      const text = textOf(second.html);
      expect(text).toContain('Connections: 2 of 50 used');
      expect(text).toContain('LinkedIn');
      const connections = (await server().container.services.connections.list(principalOf(ws), ws.workspace_id, {})).data;
      expect(connections.map((c) => [c.platform_slug, c.mode, c.brand_id, c.status]).sort()).toEqual([
        ['linkedin', 'sandbox', brandId, 'active'],
        ['threads', 'sandbox', brandId, 'active'],
      ]);
      // Each brand card has its own form, so the field ids carry the brand id.
      expect(second.html).toContain(`<label for="conn-net-${brandId}">Network</label>`);
      expect(second.html).toContain(`<label for="conn-name-${brandId}">Connection name</label>`);
    });

    it('every form of a card sends the person back to that card or row, with the notice inside the card', async () => {
      const { client } = await signedIn(server());
      const other = await createBrand(client, 'Other card');
      const brandId = await createBrand(client, 'Back here');

      const raw = async (path: string, fields: Record<string, string>) => {
        const body = new URLSearchParams({ csrf: client.csrf!, ...fields });
        const res = await client.raw(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
        expect(res.status, path).toBe(303);
        return res.headers.get('location')!;
      };
      const added = await raw(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'threads', name: 'Row one' });
      const connId = /#conn-(conn_[^&#]+)$/.exec(added)?.[1];
      expect(added).toBe(`/dashboard/brands?at=conn-${connId}#conn-${connId}`);
      expect(await raw(`/dashboard/brands/${brandId}/rename`, { name: 'Back here again' })).toBe(`/dashboard/brands?at=brand-${brandId}#brand-${brandId}`);
      expect(await raw(`/dashboard/connections/${connId}/deactivate`, {})).toBe(`/dashboard/brands?at=conn-${connId}#conn-${connId}`);

      // The anchors name elements of the page, and the notice is in that card, not at the top of the page.
      const page = await client.get(added);
      expect(page.html).toContain(`<tr id="conn-${connId}">`);
      expect(page.html).toContain(`<section class="card" id="brand-${brandId}"`);
      const landed = await client.post(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'linkedin', name: 'Row two' });
      const card = new RegExp(`<section class="card" id="brand-${brandId}"[\\s\\S]*?</section>`).exec(landed.html)?.[0] ?? '';
      expect(card).toContain('<p class="notice" role="status">Connection “Row two” added to Back here again.</p>');
      expect(landed.html.match(/class="notice"/g)).toHaveLength(1);
      expect(new RegExp(`<section class="card" id="brand-${other}"[\\s\\S]*?</section>`).exec(landed.html)?.[0]).not.toContain('class="notice"');
    });

    it('an empty connection name is shown next to its field in that brand card, with the network kept', async () => {
      const { ws, client } = await signedIn(server());
      const brandId = await createBrand(client, 'Empty name');
      const page = await client.post(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'youtube', name: '' });
      expect(page.status).toBe(400);
      expect(page.html).toMatch(new RegExp(`<p class="field-error" id="conn-name-${brandId}-error">[^<]+</p>`));
      expect(page.html).toContain('<option value="youtube" selected>YouTube</option>');
      expect((await server().container.services.connections.list(principalOf(ws), ws.workspace_id, {})).data).toEqual([]);
    });

    it('at the connections limit says how to free a slot; deactivating through the page frees it', async () => {
      const { ws, client } = await signedIn(server());
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'one_connection');
      const brandId = await createBrand(client, 'Small plan');
      await client.post(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'threads', name: 'First' });

      const refused = await client.post(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'facebook', name: 'Second' });
      expect(refused.status).toBe(403);
      const text = textOf(refused.html);
      expect(text).toContain('Connections: the plan allows 1 and 1 are used.');
      expect(text).toContain('Free a slot by deactivating');
      expect(refused.html).toMatch(new RegExp(`id="brand-${brandId}"[\\s\\S]*<div class="error-banner" role="alert" tabindex="-1" data-focus-on-load>`));
      // What was typed is kept.
      expect(refused.html).toContain(`id="conn-name-${brandId}" name="name" type="text" maxlength="100" required value="Second"`);
      expect(refused.html).toContain('<option value="facebook" selected>Facebook Pages</option>');

      const [deactivate] = formActions(refused.html, /^\/dashboard\/connections\/conn_[^/]+\/deactivate$/);
      expect(deactivate).toBeDefined();
      expect(refused.html).toContain('data-confirm="Deactivate First on Threads?');
      const freed = await client.post(deactivate!, {});
      expect(textOf(freed.html)).toContain('Connection “First” deactivated; its slot is free.');
      expect(textOf(freed.html)).toContain('Connections: 0 of 1 used');
      expect(formActions(freed.html, /\/deactivate$/)).toEqual([]);

      const added = await client.post(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'facebook', name: 'Second' });
      expect(textOf(added.html)).toContain('Connection “Second” added to Small plan.');
      const connections = (await server().container.services.connections.list(principalOf(ws), ws.workspace_id, {})).data;
      expect(connections.map((c) => [c.name, c.status, c.status_reason])).toEqual([
        ['First', 'inactive', 'deactivated'],
        ['Second', 'active', null],
      ]);
    });

    it('renames a brand, and deleting it deactivates its connections', async () => {
      const { ws, client } = await signedIn(server());
      const brandId = await createBrand(client, 'Old name');
      await client.post(`/dashboard/brands/${brandId}/connections`, { platform_slug: 'instagram', name: 'Insta' });
      const empty = await client.post(`/dashboard/brands/${brandId}/rename`, { name: '' });
      expect(empty.status).toBe(400);
      expect(empty.html).toMatch(new RegExp(`<p class="field-error" id="rename-${brandId}-error">[^<]+</p>`));
      const renamed = await client.post(`/dashboard/brands/${brandId}/rename`, { name: 'New name' });
      expect(textOf(renamed.html)).toContain('Brand renamed to “New name”.');
      expect(renamed.html).toContain(`<h2 id="brand-${brandId}-h">New name</h2>`);

      const deleted = await client.post(`/dashboard/brands/${brandId}/delete`, {});
      expect(textOf(deleted.html)).toContain('Brand “New name” deleted.');
      expect(deleted.html).not.toContain(`brand-${brandId}-h`);
      const connections = (await server().container.services.connections.list(principalOf(ws), ws.workspace_id, {})).data;
      expect(connections.map((c) => [c.status, c.status_reason])).toEqual([['inactive', 'brand_deleted']]);
    });

    it('without a configured OAuth client only the networks that need none are offered live, and the page says what to configure', async () => {
      const { client } = await signedIn(server());
      const brandId = await createBrand(client, 'No live');
      const page = await client.get('/dashboard/brands');
      const liveForm = new RegExp(`<form method="post" action="/dashboard/brands/${brandId}/connections/live"[\\s\\S]*?</form>`).exec(page.html)?.[0];
      // Mastodon registers this service on each user's server, so it needs no client of ours.
      expect([...(liveForm ?? '').matchAll(/<option value="([^"]+)"/g)].map((m) => m[1])).toEqual(['mastodon']);
      expect(liveForm).toContain('Server (Mastodon only)');
      expect(textOf(liveForm!)).toContain("Only networks whose OAuth client is configured on this installation ( <NETWORK>_CLIENT_ID and <NETWORK>_CLIENT_SECRET ) are listed.");
      // Bluesky signs in with an app password: its own form, the password never echoed.
      const passwordForm = new RegExp(`<form method="post" action="/dashboard/brands/${brandId}/connections/app-password"[\\s\\S]*?</form>`).exec(page.html)?.[0];
      expect([...(passwordForm ?? '').matchAll(/<option value="([^"]+)"/g)].map((m) => m[1])).toEqual(['bluesky']);
      expect(passwordForm).toContain('type="password"');
    });

    it("another workspace's brand or connection in the path is not found, and none of its data shows", async () => {
      const other = await server().workspace('Other');
      const otherBrand = await server().container.services.brands.create(principalOf(other), other.workspace_id, { name: 'Secret brand' });
      const otherConn = await server().container.services.connections.createSandbox(principalOf(other), other.workspace_id, otherBrand.id, {
        platform_slug: 'threads',
        mode: 'sandbox',
        name: 'Secret account',
      });
      const { client } = await signedIn(server());
      await client.get('/dashboard/brands');
      for (const path of [`/dashboard/brands/${otherBrand.id}/connections`, `/dashboard/brands/${otherBrand.id}/rename`, `/dashboard/brands/${otherBrand.id}/delete`, `/dashboard/brands/${otherBrand.id}/connections/live`]) {
        const page = await client.post(path, { name: 'Hijack', platform_slug: 'threads' });
        expect(page.url, path).toMatch(/\/dashboard\/brands$/);
        expect(textOf(page.html), path).toContain('That brand was not found in this workspace');
        expect(page.html).not.toContain('Secret');
      }
      const deactivate = await client.post(`/dashboard/connections/${otherConn.id}/deactivate`, {});
      expect(textOf(deactivate.html)).toContain('That connection was not found in this workspace');
      expect(deactivate.html).not.toContain('Secret');

      const brand = await server().container.services.brands.get(principalOf(other), other.workspace_id, otherBrand.id);
      expect(brand.name).toBe('Secret brand');
      const conns = (await server().container.services.connections.list(principalOf(other), other.workspace_id, {})).data;
      expect(conns.map((c) => [c.name, c.status])).toEqual([['Secret account', 'active']]);
    });
  },
  { PLANS_JSON: JSON.stringify({ one_connection: ONE_CONNECTION }) },
);

const AUTHORIZE_URL = 'https://threads.example/oauth/authorize';

describeEachDb(
  'dashboard live connections',
  (server) => {
    it('lists only the configured networks and sends the browser to the network to approve', async () => {
      const { client } = await signedIn(server());
      const brandId = await createBrand(client, 'Live brand');
      const page = await client.get('/dashboard/brands');
      const liveForm = new RegExp(`<form method="post" action="/dashboard/brands/${brandId}/connections/live"[\\s\\S]*?</form>`).exec(page.html)?.[0];
      expect(liveForm).toBeDefined();
      expect(liveForm).toContain(`<label for="live-net-${brandId}">Network</label>`);
      expect([...liveForm!.matchAll(/<option value="([^"]+)"/g)].map((m) => m[1])).toEqual(['threads', 'mastodon']);
      expect(liveForm).toContain('Connect a live account</button>');
      // The browser checks form-action (redirects included) against the CSP of the page holding the form.
      expect(page.headers.get('content-security-policy')).toMatch(/form-action 'self'[^;]*https:\/\/threads\.example/);

      const res = await client.raw(`/dashboard/brands/${brandId}/connections/live`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: client.csrf!, platform_slug: 'threads' }).toString(),
      });
      expect(res.status).toBe(303);
      const location = res.headers.get('location')!;
      expect(location.startsWith(AUTHORIZE_URL)).toBe(true);
      expect(new URL(location).searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    });

    it('a network that is not configured here is refused in words inside the brand card', async () => {
      const { client } = await signedIn(server());
      const brandId = await createBrand(client, 'Not here');
      const page = await client.post(`/dashboard/brands/${brandId}/connections/live`, { platform_slug: 'linkedin' });
      expect(page.status).toBe(422);
      expect(textOf(page.html)).toContain('Live connections to LinkedIn are not configured on this installation');
    });

    it('an expired live connection offers Reconnect, which goes to the network with a state', async () => {
      const { ws, client } = await signedIn(server());
      const brandId = await createBrand(client, 'Expired');
      const now = Date.now();
      await insertConnection(server().container.db.kysely, {
        id: 'conn_expiredlive01',
        workspaceId: ws.workspace_id,
        brandId,
        platformSlug: 'threads',
        mode: 'live',
        name: '@expired',
        status: 'expired',
        statusReason: 'token_expired',
        createdAt: now,
        updatedAt: now,
      });
      const page = await client.get('/dashboard/brands');
      expect(textOf(page.html)).toContain("The network's authorization expired or was refused. Reconnect it.");
      expect(formActions(page.html, /\/reconnect$/)).toEqual(['/dashboard/connections/conn_expiredlive01/reconnect']);
      const res = await client.raw('/dashboard/connections/conn_expiredlive01/reconnect', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: client.csrf! }).toString(),
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')!.startsWith(AUTHORIZE_URL)).toBe(true);
      expect(new URL(res.headers.get('location')!).searchParams.get('state')).toBeTruthy();
    });
  },
  serviceEnv({ THREADS_CLIENT_ID: 'threads-client', THREADS_CLIENT_SECRET: 'threads-secret' }, overrides({ THREADS_AUTHORIZE_URL: AUTHORIZE_URL })),
);
