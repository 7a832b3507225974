import { expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.js';
import { brandWithConnections } from './support/factories.js';
import { describeEachDb, startTestServer } from './support/server.js';
import { testDatabaseKinds } from './support/databases.js';

describeEachDb(
  'metrics',
  (server) => {
    it('/metrics reports requests by route template, queue depth and job outcomes', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'measured', sandbox_outcomes: { threads: 'quota_exceeded' } },
      });
      const before = await (await fetch(`${server().url}/metrics`)).text();
      expect(before).toMatch(/publish_jobs_due 1\b/);
      await server().settle();
      const text = await (await fetch(`${server().url}/metrics`)).text();
      expect(text).toContain('http_request_duration_seconds_count{route="/api/v1/workspaces/:wsId/contents",method="POST",status="201"} 1');
      expect(text).toContain('publish_job_outcomes_total{platform="threads",status="failed",code="quota_exceeded"} 1');
      expect(text).toMatch(/publish_jobs_due 0\b/);
      expect(text).toContain('process_resident_memory_bytes');
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);

it('METRICS_TOKEN protects /metrics; a worker-role process serves health and metrics, not the API', async () => {
  const kind = testDatabaseKinds()[0]!;
  const guarded = await startTestServer(kind, { METRICS_TOKEN: 'a-long-metrics-token' });
  try {
    expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer a-long-metrics-token' } })).status).toBe(200);
  } finally {
    await guarded.stop();
  }
  const worker = await startTestServer(kind, { SERVICE_ROLE: 'worker' });
  try {
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${worker.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${worker.url}/api/v1/platforms`)).status).toBe(404);
  } finally {
    await worker.stop();
  }
});
