import { expect, it } from 'vitest';
import { ledgerSum } from '../../db/repositories/wallet.repo.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { brandWithConnections } from '../support/factories.js';
import { type Cluster, type Door, describeCluster, statuses } from './support.js';

/** Meter `used` as the usage endpoint reports it. */
async function used(cluster: Cluster, ws: NewWorkspace, meter: string): Promise<number> {
  const res = await cluster.doors[0]!.request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
  expect(res.status).toBe(200);
  const entry = (res.body.meters as { meter: string; used: number }[]).find((m) => m.meter === meter);
  if (!entry) throw new Error(`no meter ${meter}`);
  return entry.used;
}

async function contentIds(cluster: Cluster, workspaceId: string): Promise<string[]> {
  const rows = await cluster.server.container.db.kysely.selectFrom('contents').select('id').where('workspace_id', '=', workspaceId).execute();
  return rows.map((r) => r.id);
}

/** The wallet invariant: ledger sum = balance = sum of batch remainders, none negative. Returns the balance. */
async function walletConsistent(cluster: Cluster, ws: NewWorkspace): Promise<number> {
  const db = cluster.server.container.db.kysely;
  const sum = await ledgerSum(db, ws.workspace_id);
  const batches = await db.selectFrom('credit_batches').select('remaining').where('workspace_id', '=', ws.workspace_id).execute();
  for (const b of batches) expect(Number(b.remaining)).toBeGreaterThanOrEqual(0);
  expect(sum, 'ledger sum equals the batches\' remainders').toBe(batches.reduce((s, b) => s + Number(b.remaining), 0));
  const statement = await cluster.doors[0]!.request('GET', `/v1/workspaces/${ws.workspace_id}/wallet?limit=200`, { key: ws.api_key });
  expect(statement.body.saldo, 'the statement balance equals the ledger sum').toBe(sum);
  return sum;
}

describeCluster('concurrent content creation, retry and credit spend', (cluster) => {
  const post = (door: Door, ws: NewWorkspace, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body, headers });

  it('30 parallel creations with one Idempotency-Key and the same body: one content, one charge, the other 29 replay it with Idempotent-Replayed', async () => {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['threads', 'linkedin']);
    const body = { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'same body' };
    const results = await cluster().split(30, (door) => post(door, ws, body, { 'idempotency-key': 'same-body' }));

    expect(statuses(results)).toEqual({ 201: 30 });
    expect(new Set(results.map((r) => r.body.content_id)).size).toBe(1);
    const replayed = results.filter((r) => r.headers.get('idempotent-replayed') === 'true');
    expect(replayed).toHaveLength(29);
    expect(await contentIds(cluster(), ws.workspace_id)).toEqual([results[0]!.body.content_id]);
    expect(await used(cluster(), ws, 'criacao_de_conteudos')).toBe(1);
    expect(await used(cluster(), ws, 'publicacoes')).toBe(2);
  });

  it('30 parallel creations with one Idempotency-Key and 30 different bodies: exactly one 201, the other 29 answer 409 idempotency_conflict', async () => {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['linkedin']);
    const results = await cluster().split(30, (door, i) =>
      post(door, ws, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `body ${i}` }, { 'idempotency-key': 'different-bodies' }),
    );

    expect(statuses(results)).toEqual({ 201: 1, 409: 29 });
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.error).toBe('idempotency_conflict');
    const winner = results.findIndex((r) => r.status === 201);
    const ids = await contentIds(cluster(), ws.workspace_id);
    expect(ids).toEqual([results[winner]!.body.content_id]);
    const stored = await cluster().server.container.db.kysely.selectFrom('contents').select('request').where('id', '=', ids[0]!).executeTakeFirstOrThrow();
    expect(JSON.parse(stored.request)).toMatchObject({ text: `body ${winner}` });
    expect(await used(cluster(), ws, 'publicacoes')).toBe(1);
    // The key stays bound to the winning body afterwards, on every process.
    for (const door of cluster().doors) {
      const again = await post(door, ws, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `body ${winner}` }, { 'idempotency-key': 'different-bodies' });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.content_id).toBe(ids[0]);
    }
  });

  it('20 parallel retries of one failed content: the failed job is requeued once and publicacoes is charged once per requeued job', async () => {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['threads', 'linkedin']);
    const created = await post(cluster().doors[0]!, ws, {
      brand_id: brandId,
      target_platforms: ['threads', 'linkedin'],
      content_type: 'text',
      text: 'fails on both',
      sandbox_outcomes: { threads: 'quota_exceeded', linkedin: 'quota_exceeded' },
    });
    expect(created.status, created.text).toBe(201);
    const contentId = created.body.content_id as string;
    await cluster().drainJobs();
    const failed = await cluster().doors[0]!.request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}`, { key: ws.api_key });
    expect(failed.body.status).toBe('failed');
    const before = await used(cluster(), ws, 'publicacoes');

    const results = await cluster().split(20, (door) => door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}/retry`, { key: ws.api_key, body: {} }));
    expect(statuses(results)).toEqual({ 200: 20 });
    const requeued = results.flatMap((r) => r.body.requeued as { job_id: string }[]);
    const jobIds = (failed.body.jobs as { job_id: string }[]).map((j) => j.job_id).sort();
    expect(jobIds).toHaveLength(2);
    expect(requeued.map((j) => j.job_id).sort(), 'each failed job is requeued by exactly one retry').toEqual(jobIds);
    expect(await used(cluster(), ws, 'publicacoes'), 'publicacoes charged once per requeued job').toBe(before + 2);
  });

  it('30 parallel spends of 1 credit (modo creditos) against 15, read while they run: exactly 15 succeed, the balance is never negative and ends at 0, the ledger sums to it', async () => {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['linkedin']);
    await cluster().server.container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 15, source: 'grant', expiresAt: null });
    const body = (i: number) => ({ brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `spend ${i}`, modo: 'creditos' });
    // Every fourth call reads the wallet instead: the balance seen mid-run must never be negative.
    const results = await cluster().split(40, (door, i) => (i % 4 === 3 ? door.request('GET', `/v1/workspaces/${ws.workspace_id}/wallet`, { key: ws.api_key }) : post(door, ws, body(i))));
    const spends = results.filter((_, i) => i % 4 !== 3);
    const reads = results.filter((_, i) => i % 4 === 3);

    expect(statuses(spends)).toEqual({ 201: 15, 402: 15 });
    for (const r of spends.filter((r) => r.status === 402)) {
      expect(r.body).toEqual({
        error: 'saldo_insuficiente',
        message: expect.any(String),
        request_id: r.headers.get('x-request-id'),
        meter: 'publicacoes',
        modo: 'creditos',
        preco_unitario: 1,
        custo_estimado: 1,
        saldo_disponivel: 0,
        recoverable: true,
      });
    }
    for (const r of reads) {
      expect(r.status).toBe(200);
      expect(r.body.saldo as number).toBeGreaterThanOrEqual(0);
    }
    expect(await walletConsistent(cluster(), ws)).toBe(0);
    expect(await contentIds(cluster(), ws.workspace_id)).toHaveLength(15);
  });

  it('20 parallel spends of 2 credits against 11: exactly 5 succeed, 1 credit is left, never negative, the ledger sums to it', async () => {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['threads', 'linkedin']);
    await cluster().server.container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 11, source: 'grant', expiresAt: null });
    const results = await cluster().split(20, (door, i) =>
      post(door, ws, { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: `pair ${i}`, modo: 'creditos' }),
    );
    expect(statuses(results)).toEqual({ 201: 5, 402: 15 });
    for (const r of results.filter((r) => r.status === 402)) {
      expect(r.body).toMatchObject({ error: 'saldo_insuficiente', custo_estimado: 2, recoverable: true });
      expect(r.body.saldo_disponivel as number).toBeLessThan(2);
      expect(r.body.saldo_disponivel as number).toBeGreaterThanOrEqual(0);
    }
    expect(await walletConsistent(cluster(), ws)).toBe(1);
    const spent = await cluster().server.container.db.kysely.selectFrom('credit_ledger').select('amount').where('workspace_id', '=', ws.workspace_id).where('kind', '=', 'spend').execute();
    expect(spent.map((l) => Number(l.amount))).toEqual([-2, -2, -2, -2, -2]);
  });

  it('publicacoes: 20 parallel creations against a per-cycle limit of 5 publish exactly 5; the rest 403 limit_reached (resolve upgrade), nothing stored for them', async () => {
    const ws = await cluster().workspace();
    await cluster().server.container.services.workspaces.setPlan(ws.workspace_id, 'few_posts');
    const { brandId } = await brandWithConnections(cluster().server, ['linkedin'], ws);
    const results = await cluster().split(20, (door, i) => post(door, ws, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `plan ${i}` }));
    expect(statuses(results)).toEqual({ 201: 5, 403: 15 });
    for (const r of results.filter((r) => r.status === 403)) {
      expect(r.body).toEqual({ error: 'limit_reached', message: expect.any(String), request_id: r.headers.get('x-request-id'), meter: 'publicacoes', limit: 5, used: 5, resolve: 'upgrade' });
    }
    expect(await contentIds(cluster(), ws.workspace_id)).toHaveLength(5);
    expect(await used(cluster(), ws, 'publicacoes')).toBe(5);
    // Both meters are taken in one statement: the refused creations' criacao_de_conteudos went back with them.
    expect(await used(cluster(), ws, 'criacao_de_conteudos')).toBe(5);
  });

  it('modo automatico: 20 parallel creations with 5 publications left in the plan and 5 credits: exactly 10 succeed, the plan is used first, the credits end at 0, the ledger sums to it', async () => {
    const ws = await cluster().workspace();
    await cluster().server.container.services.workspaces.setPlan(ws.workspace_id, 'few_posts');
    const { brandId } = await brandWithConnections(cluster().server, ['linkedin'], ws);
    await cluster().server.container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 5, source: 'grant', expiresAt: null });
    const results = await cluster().split(20, (door, i) =>
      post(door, ws, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `auto ${i}`, modo: 'automatico' }),
    );
    expect(statuses(results)).toEqual({ 201: 10, 402: 10 });
    for (const r of results.filter((r) => r.status === 402)) expect(r.body).toMatchObject({ error: 'saldo_insuficiente', modo: 'automatico', saldo_disponivel: 0 });
    expect(await used(cluster(), ws, 'publicacoes')).toBe(5);
    expect(await walletConsistent(cluster(), ws)).toBe(0);
    expect(await contentIds(cluster(), ws.workspace_id)).toHaveLength(10);
  });
});
