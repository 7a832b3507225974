import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { JOB_ERROR_MESSAGES } from '../../src/vocabulary/job-errors.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { brandWithConnections } from '../support/factories.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';

const TINY_PLAN = { brands: 1, connections: 3, media_storage: 1000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 5, publicacoes: 2 };

type JobView = { job_id: string; platform_slug: string; status: string; error_code: string | null; external_post_url: string | null };

async function publish(server: TestServer, ws: NewWorkspace, body: Record<string, unknown>): Promise<string> {
  const res = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body });
  if (res.status !== 201) throw new Error(`create content: ${res.status} ${res.text}`);
  return res.body.content_id as string;
}

async function read(server: TestServer, ws: NewWorkspace, contentId: string) {
  const res = await server.request<{ status: string; jobs: JobView[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}`, { key: ws.api_key });
  expect(res.status).toBe(200);
  return res.body;
}

/** A fresh session: settling walks the clock past the session's idle deadline, so sign in after it. */
async function signedIn(server: TestServer, ws: NewWorkspace): Promise<DashboardClient> {
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);
  return client;
}

/** The element with this id carries data-refresh-while. */
function refreshing(html: string, id: string): boolean {
  return new RegExp(`id="${id}"[^>]*data-refresh-while`).test(html);
}

function decode(text: string): string {
  return text.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
}

describeEachDb(
  'dashboard contents',
  (server) => {
    it('shows a content publishing to two networks, refreshing while it runs, then both posts with links to them', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const contentId = await publish(server(), ws, { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'Launch day at <Acme> & friends.' });
      const client = await signedIn(server(), ws);

      const running = await client.get(`/dashboard/contents/${contentId}`);
      expect(running.status).toBe(200);
      expect(refreshing(running.html, 'content-live')).toBe(true);
      expect(running.html).toContain('Launch day at &lt;Acme&gt; &amp; friends.');
      const listed = await client.get('/dashboard/contents');
      expect(refreshing(listed.html, 'contents')).toBe(true);
      expect(listed.html).toContain(`href="/dashboard/contents/${contentId}"`);

      await server().settle();
      const api = await read(server(), ws, contentId);
      expect(api.status).toBe('published');
      const after = await signedIn(server(), ws);
      const page = await after.get(`/dashboard/contents/${contentId}`);
      expect(refreshing(page.html, 'content-live')).toBe(false);
      expect(page.html).not.toContain('data-refresh-while');
      const text = textOf(page.html);
      // Named by its first line, with its brand and the accounts it went out from; sandbox links say so.
      expect(page.html).toContain('<h1>Launch day at &lt;Acme&gt; &amp; friends.</h1>');
      expect(text).toContain('Brand Acme');
      expect(text).toContain('Threads @acme-threads sandbox');
      expect(page.html).not.toContain('Content <time');
      expect(text).toContain('Networks');
      const links = [...page.html.matchAll(/<a href="([^"]+)" rel="noopener noreferrer">(View post on [^<]+) \(sandbox\)<\/a>/g)].map((m) => ({ href: decode(m[1]!), label: m[2]! }));
      expect(links.map((l) => l.label).sort()).toEqual(['View post on LinkedIn', 'View post on Threads']);
      const byName: Record<string, string> = { threads: 'Threads', linkedin: 'LinkedIn' };
      for (const job of api.jobs) {
        expect(job.status).toBe('published');
        expect(links.find((l) => l.label === `View post on ${byName[job.platform_slug]}`)?.href).toBe(job.external_post_url);
      }
      const list = await after.get('/dashboard/contents');
      expect(refreshing(list.html, 'contents')).toBe(false);
      expect(textOf(list.html)).toContain('Threads (@acme-threads): published');
      expect(textOf(list.html)).toContain('LinkedIn (@acme-linkedin): published');
      // The list links to each post too, named by its network for screen readers.
      for (const job of api.jobs) {
        expect(list.html).toContain(`<a href="${job.external_post_url!}" rel="noopener noreferrer">post<span class="vh"> on ${byName[job.platform_slug]!}</span> (sandbox)</a>`);
      }
      // The list titles each content by its first line and names the brand and the accounts, not ids.
      expect(list.html).toContain(`<a href="/dashboard/contents/${contentId}">Launch day at &lt;Acme&gt; &amp; friends.</a>`);
      expect(textOf(list.html)).toContain('Acme · text');
      expect(textOf(list.html)).toContain('Threads (@acme-threads): published');
      expect(list.html).not.toMatch(/conn_[a-z0-9]+<\/code>/);
    });

    it('a failed network shows its code and the explanation, and retrying from the page queues it again', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const contentId = await publish(server(), ws, {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin'],
        content_type: 'text',
        text: 'Hello',
        sandbox_outcomes: { threads: 'quota_exceeded' },
      });
      await server().settle();
      const client = await signedIn(server(), ws);
      const page = await client.get(`/dashboard/contents/${contentId}`);
      expect(page.html).toContain('<code>quota_exceeded</code>');
      expect(textOf(page.html)).toContain(JOB_ERROR_MESSAGES.quota_exceeded);
      expect(textOf(page.html)).toContain('Retry failed networks');
      // Not a confirmation failure: no duplicate-risk box.
      expect(page.html).not.toContain('name="force"');

      const retried = await client.post(`/dashboard/contents/${contentId}/retry`, {});
      expect(retried.url).toMatch(new RegExp(`/dashboard/contents/${contentId}\\?retried=job_`));
      expect(textOf(retried.html)).toContain('1 network(s) queued again.');
      expect(refreshing(retried.html, 'content-live')).toBe(true);
      const api = await read(server(), ws, contentId);
      expect(api.jobs.find((j) => j.platform_slug === 'threads')?.status).toBe('queued');
      expect(api.jobs.find((j) => j.platform_slug === 'linkedin')?.status).toBe('published');
    });

    it('a network that fails again after a retry says so on the page the retry led to', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const contentId = await publish(server(), ws, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Hello', sandbox_outcomes: { threads: 'quota_exceeded' } });
      await server().settle();
      const client = await signedIn(server(), ws);
      await client.get(`/dashboard/contents/${contentId}`);
      const retried = await client.post(`/dashboard/contents/${contentId}/retry`, {});
      expect(textOf(retried.html)).not.toContain('Failed again');
      await server().settle();
      // The page refreshes itself from its own address, which names the jobs the retry requeued.
      const again = await (await signedIn(server(), ws)).get(new URL(retried.url).pathname + new URL(retried.url).search);
      expect(again.html).toContain('role="alert"');
      expect(textOf(again.html)).toContain('Failed again after the retry: Threads.');
      expect(textOf(again.html)).toContain('Failed again after the retry. quota_exceeded');
    });

    it('a network whose connection expired offers "Reconnect first" instead of Retry; a sandbox reconnect brings Retry back', async () => {
      const { ws, brandId, connections } = await brandWithConnections(server(), ['threads']);
      const contentId = await publish(server(), ws, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Hello', sandbox_outcomes: { threads: 'token_expired' } });
      await server().settle();
      const usage = async () =>
        ((await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key })).body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'publicacoes')!.used;
      const client = await signedIn(server(), ws);
      const page = await client.get(`/dashboard/contents/${contentId}`);
      expect(page.html).not.toContain('Retry failed networks');
      expect(textOf(page.html)).toContain('Threads (@acme-threads): its connection has expired, so a retry would fail at once.');
      expect(page.html).toContain(`<a class="button" href="/dashboard/brands#conn-${connections.threads!}">Reconnect first`);

      // The overview offers the same, not a Retry that would charge and fail.
      const overview = await client.get('/dashboard');
      expect(overview.html).not.toContain(`action="/dashboard/contents/${contentId}/retry"`);
      expect(overview.html).toContain(`href="/dashboard/brands#conn-${connections.threads!}">Reconnect first`);

      // A retry posted anyway (an old tab) charges nothing and says why.
      const before = await usage();
      const stale = await client.post(`/dashboard/contents/${contentId}/retry`, {});
      expect(textOf(stale.html)).toContain('Not retried, nothing counted: Threads (reconnect first).');
      expect(await usage()).toBe(before);

      // The brands page offers Reconnect for the expired sandbox connection, beside Deactivate.
      const brands = await client.get('/dashboard/brands');
      expect(brands.html).toContain(`<tr id="conn-${connections.threads!}">`);
      expect(brands.html).toContain(`action="/dashboard/connections/${connections.threads!}/reconnect"`);
      const reconnected = await client.post(`/dashboard/connections/${connections.threads!}/reconnect`, {});
      expect(textOf(reconnected.html)).toContain('Reconnected “@acme-threads”.');
      const conn = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${connections.threads!}`, { key: ws.api_key });
      expect(conn.body.status).toBe('active');

      const after = await client.get(`/dashboard/contents/${contentId}`);
      expect(after.html).toContain('Retry failed networks');
      const retried = await client.post(`/dashboard/contents/${contentId}/retry`, {});
      expect(textOf(retried.html)).toContain('1 network(s) queued again.');
      expect(await usage()).toBe(before + 1);
    });

    it('a job corrected by a late confirmation shows its post and says it was corrected', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const contentId = await publish(server(), ws, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Hello', sandbox_outcomes: { threads: 'late_confirmation' } });
      await server().settle();
      const api = await read(server(), ws, contentId);
      const page = await (await signedIn(server(), ws)).get(`/dashboard/contents/${contentId}`);
      expect(page.html).toContain(`<a href="${api.jobs[0]!.external_post_url!}" rel="noopener noreferrer">View post on Threads (sandbox)</a>`);
      expect(textOf(page.html)).toContain('First marked failed; a late confirmation from the network corrected it.');
      expect(page.html).not.toContain('Retry failed networks');
    });

    it('a confirmation failure is retried only with the duplicate-risk box ticked', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const contentId = await publish(server(), ws, {
        brand_id: brandId,
        target_platforms: ['threads'],
        content_type: 'text',
        text: 'Hello',
        sandbox_outcomes: { threads: 'confirmacao_esgotada' },
      });
      await server().settle();
      const client = await signedIn(server(), ws);
      const page = await client.get(`/dashboard/contents/${contentId}`);
      expect(page.html).toContain('<code>confirmacao_esgotada</code>');
      expect(page.html).toMatch(/<label for="retry-force">Also retry networks whose post may already be live \(risk of a duplicate\)<\/label>/);

      const plain = await client.post(`/dashboard/contents/${contentId}/retry`, {});
      expect(textOf(plain.html)).toContain('Nothing to retry.');
      expect((await read(server(), ws, contentId)).jobs[0]?.status).toBe('failed');

      const forced = await client.post(`/dashboard/contents/${contentId}/retry`, { force: 'true' });
      expect(textOf(forced.html)).toContain('1 network(s) queued again.');
      expect((await read(server(), ws, contentId)).jobs[0]?.status).toBe('queued');
    });

    it('a retry over the plan is refused on the content page with what to do', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const { brandId } = await brandWithConnections(server(), ['threads', 'linkedin'], ws);
      const contentId = await publish(server(), ws, {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin'],
        content_type: 'text',
        text: 'Hello',
        sandbox_outcomes: { threads: 'quota_exceeded', linkedin: 'upstream_unknown' },
      });
      await server().settle();
      const client = await signedIn(server(), ws);
      await client.get(`/dashboard/contents/${contentId}`);
      const refused = await client.post(`/dashboard/contents/${contentId}/retry`, {});
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('role="alert"');
      expect(textOf(refused.html)).toContain('Publications this cycle: the plan allows 2 and 2 are used.');
      const failed = await read(server(), ws, contentId);
      expect(failed.jobs.every((j) => j.status === 'failed')).toBe(true);
      // upstream_unknown asks to report the job id (spec 7.4): the page shows it next to that sentence.
      const unknown = failed.jobs.find((j) => j.platform_slug === 'linkedin')!;
      expect(textOf(refused.html)).toContain(`Job id to report: ${unknown.job_id}`);
    });

    it('lists newest first, filters by status and pages with "Older contents" keeping the filter', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const clock = server().container.clock as ManualClock;
      const ids: string[] = [];
      for (const outcome of ['published', 'quota_exceeded', 'published', 'upstream_unknown', 'published']) {
        ids.push(await publish(server(), ws, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: `Post ${ids.length}`, sandbox_outcomes: { threads: outcome } }));
        clock.advance(1000);
      }
      await server().settle();
      const client = await signedIn(server(), ws);
      const linked = (html: string) => [...html.matchAll(/href="\/dashboard\/contents\/([0-9a-f-]{36})"/g)].map((m) => m[1]!);

      const first = await client.get('/dashboard/contents?limit=2');
      expect(first.status).toBe(200);
      expect(linked(first.html)).toEqual([ids[4], ids[3]]);
      const older = /<a href="([^"]+)">Older contents<\/a>/.exec(first.html)?.[1];
      expect(older).toBeDefined();
      const second = await client.get(decode(older!));
      expect(linked(second.html)).toEqual([ids[2], ids[1]]);
      const third = await client.get(decode(/<a href="([^"]+)">Older contents<\/a>/.exec(second.html)![1]!));
      expect(linked(third.html)).toEqual([ids[0]]);
      expect(third.html).not.toContain('Older contents');

      const failed = await client.get('/dashboard/contents?status=failed');
      expect(linked(failed.html)).toEqual([ids[3], ids[1]]);
      expect(failed.html).toMatch(/<option value="failed" selected>/);
      const published = await client.get('/dashboard/contents?status=published&limit=2');
      expect(linked(published.html)).toEqual([ids[4], ids[2]]);
      const next = decode(/<a href="([^"]+)">Older contents<\/a>/.exec(published.html)![1]!);
      expect(next).toContain('status=published');
      expect(linked((await client.get(next)).html)).toEqual([ids[0]]);
      // "all" sends an empty status: every content.
      expect(linked((await client.get('/dashboard/contents?status=')).html)).toHaveLength(5);
    });

    it('a bad filter or a damaged page link gives a clear 400 page, not a failure', async () => {
      const ws = await server().workspace();
      const client = await signedIn(server(), ws);
      const status = await client.get('/dashboard/contents?status=bogus');
      expect(status.status).toBe(400);
      expect(textOf(status.html)).toContain('Choose one of the listed statuses');
      expect(status.html).toContain('aria-invalid="true"');
      const cursor = await client.get('/dashboard/contents?cursor=not-a-cursor');
      expect(cursor.status).toBe(400);
      expect(textOf(cursor.html)).toContain('The link to older contents is damaged or out of date');
      const limit = await client.get('/dashboard/contents?limit=1000');
      expect(limit.status).toBe(400);
      expect(textOf(limit.html)).toContain('from 1 to 100');
    });

    it("another workspace's content, or an id that is not one, is a 404 page that shows nothing of it", async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const contentId = await publish(server(), ws, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Secret plans of Acme', sandbox_outcomes: { threads: 'quota_exceeded' } });
      await server().settle();
      const stranger = await signedIn(server(), await server().workspace('Other'));
      const page = await stranger.get(`/dashboard/contents/${contentId}`);
      expect(page.status).toBe(404);
      expect(textOf(page.html)).toContain('Not found');
      expect(page.html).not.toContain('Secret plans');
      await stranger.get('/dashboard/contents');
      const retry = await stranger.post(`/dashboard/contents/${contentId}/retry`, {});
      expect(retry.status).toBe(404);
      expect((await read(server(), ws, contentId)).jobs[0]?.status).toBe('failed');
      for (const odd of ['not-a-uuid', '%27%3Cscript%3E', `${contentId}x`]) {
        const res = await stranger.get(`/dashboard/contents/${odd}`);
        expect(res.status).toBe(404);
        expect(res.html).not.toContain('<script>');
      }
    });
  },
  { PLANS_JSON: JSON.stringify({ tiny: TINY_PLAN }) },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
