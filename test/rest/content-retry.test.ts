import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { brandWithConnections } from '../support/factories.js';
import type { ApiResponse, TestServer } from '../support/server.js';
import { describeEachDb } from '../support/server.js';

/**
 * Spec 7.3: a retry counts on `publicacoes` like a new publication, and a per-cycle meter is never given back.
 * Retries racing for one content must therefore requeue each failed job once and charge it once.
 */

async function publicacoes(server: TestServer, ws: NewWorkspace): Promise<number> {
  const usage = await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
  return (usage.body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'publicacoes')!.used;
}

async function failedContent(server: TestServer, platforms: string[], outcomes: Record<string, string>, ws?: NewWorkspace) {
  const made = await brandWithConnections(server, platforms, ws);
  const created = await server.request('POST', `/api/v1/workspaces/${made.ws.workspace_id}/contents`, {
    key: made.ws.api_key,
    body: { brand_id: made.brandId, target_platforms: platforms, content_type: 'text', text: 'retry me', sandbox_outcomes: outcomes },
  });
  expect(created.status).toBe(201);
  await server.settle();
  return { ws: made.ws, contentId: created.body.content_id as string };
}

function retry(server: TestServer, ws: NewWorkspace, contentId: string): Promise<ApiResponse> {
  return server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}/retry`, { key: ws.api_key, body: {} });
}

describeEachDb(
  'content retry under concurrency',
  (server) => {
    it('10 parallel retries of a failed content requeue its job once and charge exactly one publication', async () => {
      const { ws, contentId } = await failedContent(server(), ['threads'], { threads: 'quota_exceeded' });
      const before = await publicacoes(server(), ws);

      const results = await Promise.all(Array.from({ length: 10 }, () => retry(server(), ws, contentId)));
      for (const r of results) expect(r.status).toBe(200);
      const requeued = results.flatMap((r) => r.body.requeued as { platform_slug: string }[]);
      expect(requeued.map((j) => j.platform_slug)).toEqual(['threads']);
      expect(await publicacoes(server(), ws)).toBe(before + 1);

      const jobs = await server().container.db.kysely.selectFrom('jobs').select('status').where('content_id', '=', contentId).execute();
      expect(jobs.map((j) => j.status)).toEqual(['queued']);
    });

    it('with two failed jobs, racing retries charge two publications and name each job in one answer only', async () => {
      const { ws, contentId } = await failedContent(server(), ['threads', 'linkedin'], { threads: 'quota_exceeded', linkedin: 'upstream_unknown' });
      const before = await publicacoes(server(), ws);

      const results = await Promise.all(Array.from({ length: 10 }, () => retry(server(), ws, contentId)));
      const requeued = results.flatMap((r) => (r.body.requeued as { platform_slug: string }[]).map((j) => j.platform_slug));
      expect(requeued.sort()).toEqual(['linkedin', 'threads']);
      expect(await publicacoes(server(), ws)).toBe(before + 2);
    });

    it('a retry refused by the meter requeues nothing and charges nothing', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'two');
      const { contentId } = await failedContent(server(), ['threads'], { threads: 'quota_exceeded' }, ws);
      // The creation took 1 of 2; fill the second with another content.
      const filler = await failedContent(server(), ['threads'], { threads: 'quota_exceeded' }, ws);
      expect(await publicacoes(server(), ws)).toBe(2);

      const refused = await retry(server(), ws, contentId);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ error: 'limit_reached', meter: 'publicacoes', limit: 2, used: 2 });
      const jobs = await server().container.db.kysely.selectFrom('jobs').select('status').where('content_id', 'in', [contentId, filler.contentId]).execute();
      expect(jobs.map((j) => j.status)).toEqual(['failed', 'failed']);
      expect(await publicacoes(server(), ws)).toBe(2);
    });

    it('a job whose connection has expired is skipped and named, and costs nothing; after a reconnect it is retried', async () => {
      const { ws, contentId } = await failedContent(server(), ['threads', 'linkedin'], { threads: 'token_expired', linkedin: 'quota_exceeded' });
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}`, { key: ws.api_key });
      const threads = (content.body.jobs as { job_id: string; platform_slug: string; connection_id: string }[]).find((j) => j.platform_slug === 'threads')!;
      const conn = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${threads.connection_id}`, { key: ws.api_key });
      expect(conn.body.status).toBe('expired');
      const before = await publicacoes(server(), ws);

      const first = await retry(server(), ws, contentId);
      expect(first.status).toBe(200);
      expect((first.body.requeued as { platform_slug: string }[]).map((j) => j.platform_slug)).toEqual(['linkedin']);
      expect(first.body.skipped).toEqual([
        {
          job_id: threads.job_id,
          platform_slug: 'threads',
          connection_id: threads.connection_id,
          connection_status: 'expired',
          reason: 'connection_not_active',
          message: `The connection ${threads.connection_id} has expired: reconnect it, then retry.`,
        },
      ]);
      expect(await publicacoes(server(), ws)).toBe(before + 1);

      // Only the expired one left: nothing requeued, nothing charged, the job still failed.
      const second = await retry(server(), ws, contentId);
      expect(second.body.requeued).toEqual([]);
      expect((second.body.skipped as { job_id: string }[]).map((j) => j.job_id)).toEqual([threads.job_id]);
      expect(await publicacoes(server(), ws)).toBe(before + 1);
      const job = await server().container.db.kysely.selectFrom('jobs').select('status').where('id', '=', threads.job_id).executeTakeFirstOrThrow();
      expect(job.status).toBe('failed');

      const principal = { kind: 'api_key' as const, workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin' as const, brandIds: null };
      await server().container.services.connections.reconnectSandbox(principal, ws.workspace_id, threads.connection_id);
      const third = await retry(server(), ws, contentId);
      expect((third.body.requeued as { job_id: string }[]).map((j) => j.job_id)).toEqual([threads.job_id]);
      expect(third.body.skipped).toEqual([]);
      expect(await publicacoes(server(), ws)).toBe(before + 2);
    });

    it('a deactivated connection is skipped with force too', async () => {
      const { ws, contentId } = await failedContent(server(), ['threads'], { threads: 'quota_exceeded' });
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}`, { key: ws.api_key });
      const connectionId = (content.body.jobs as { connection_id: string }[])[0]!.connection_id;
      const off = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/connections/${connectionId}/deactivate`, { key: ws.api_key, body: {} });
      expect(off.status).toBe(200);
      const before = await publicacoes(server(), ws);

      const forced = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}/retry`, { key: ws.api_key, body: { force: true } });
      expect(forced.body.requeued).toEqual([]);
      expect(forced.body.skipped).toMatchObject([{ platform_slug: 'threads', connection_status: 'inactive', reason: 'connection_not_active' }]);
      expect(await publicacoes(server(), ws)).toBe(before);
    });
  },
  { PLANS_JSON: JSON.stringify({ two: { brands: 5, connections: 10, media_storage: 1000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 10, publicacoes: 2 } }) },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
