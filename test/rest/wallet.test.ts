import { createHmac } from 'node:crypto';
import { expect, it } from 'vitest';
import { ledgerSum } from '../../db/repositories/wallet.repo.js';
import { ManualClock } from '../../src/core/clock.js';
import { cycleOf } from '../../src/core/meters/plans.js';
import { brandWithConnections } from '../support/factories.js';
import { type ApiResponse, describeEachDb, type TestServer } from '../support/server.js';

const START = Date.UTC(2026, 10, 21, 12);
const PAYMENT_SECRET = 'payment-secret-for-tests';
const TINY = { brands: 5, connections: 10, media_storage: 1000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 1000, publicacoes: 1 };

/** Armed by the lote_vencido test: moves the clock between the choice of a batch and its charge. */
const between: { to: number | null } = { to: null };
let clockRef: ManualClock | undefined;

function expectError(res: ApiResponse, status: number, code: string, extra: Record<string, unknown>): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: code, message: expect.any(String), request_id: res.headers.get('x-request-id'), ...extra });
}

async function wallet(server: TestServer, key: string, wsId: string) {
  const res = await server.request('GET', `/v1/workspaces/${wsId}/wallet?limit=200`, { key });
  expect(res.status).toBe(200);
  return res.body as { saldo: number; lotes: { id: string; remaining: number; expired: boolean }[]; ledger: { data: { kind: string; amount: number; reference: string | null }[] } };
}

async function consistent(server: TestServer, wsId: string): Promise<number> {
  const sum = await ledgerSum(server.container.db.kysely, wsId);
  const batches = await server.container.db.kysely.selectFrom('credit_batches').select('remaining').where('workspace_id', '=', wsId).execute();
  const remainders = batches.reduce((s, b) => s + Number(b.remaining), 0);
  expect(sum).toBe(remainders);
  for (const b of batches) expect(Number(b.remaining)).toBeGreaterThanOrEqual(0);
  return sum;
}

describeEachDb(
  'credit wallet',
  (server) => {
    const grant = (wsId: string, amount: number, expiresAt: number | null = null) =>
      server().container.services.wallet.grant({ workspaceId: wsId, amount, source: 'grant', expiresAt });
    const post = (key: string, wsId: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
      server().request('POST', `/api/v1/workspaces/${wsId}/contents`, { key, body, headers });

    it('prices an operation, and an operation without a price fails closed with operacao_sem_preco', async () => {
      const ws = await server().workspace();
      await grant(ws.workspace_id, 7);
      const price = await server().request('GET', `/v1/workspaces/${ws.workspace_id}/wallet/preco?operacao=publicacao&quantidade=3`, { key: ws.api_key });
      expect(price.body).toEqual({ operacao: 'publicacao', preco_unitario: 1, quantidade: 3, custo_estimado: 3, saldo_disponivel: 7, coberto_pelo_plano: true });
      const unknown = await server().request('GET', `/v1/workspaces/${ws.workspace_id}/wallet/preco?operacao=boost_post`, { key: ws.api_key });
      expectError(unknown, 402, 'operacao_sem_preco', { operacao: 'boost_post' });
      const offers = await server().request('GET', `/v1/workspaces/${ws.workspace_id}/wallet/offers`, { key: ws.api_key });
      const first = (offers.body.data as { id: string; payment_url: string }[])[0]!;
      expect(first.payment_url).toContain(ws.workspace_id);
      expect(first.payment_url).toContain(first.id);
    });

    it('402 saldo_insuficiente with the exact fields; nothing stored, nothing spent', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      await grant(ws.workspace_id, 1);
      const res = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'hi', modo: 'creditos' });
      expectError(res, 402, 'saldo_insuficiente', { meter: 'publicacoes', modo: 'creditos', preco_unitario: 1, custo_estimado: 2, saldo_disponivel: 1, recoverable: true });
      const w = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(w.saldo).toBe(1);
      expect(w.ledger.data.map((l) => l.kind)).toEqual(['grant']);
      expect((await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key })).body.data).toEqual([]);
    });

    it('402 saldo_fragmentado when the total covers the cost but no single batch does', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      await grant(ws.workspace_id, 1);
      await grant(ws.workspace_id, 1);
      const res = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'hi', modo: 'creditos' });
      expectError(res, 402, 'saldo_fragmentado', { meter: 'publicacoes', modo: 'creditos', custo_estimado: 2, saldo_disponivel: 2, maior_lote_disponivel: 1, recoverable: true });
      expect(await consistent(server(), ws.workspace_id)).toBe(2);
    });

    it('402 lote_vencido when the chosen batch expires at the cycle rollover between choice and charge; nothing spent', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const clock = server().container.clock as ManualClock;
      const rollover = cycleOf(clock.now()).end;
      const saved = clock.now();
      const batch = await grant(ws.workspace_id, 5, rollover);
      clock.set(rollover - 1);
      between.to = rollover;
      try {
        const res = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'hi', modo: 'creditos' });
        expectError(res, 402, 'lote_vencido', { lote_id: batch!.batchId, recoverable: true });
      } finally {
        between.to = null;
        clock.set(saved);
      }
      const w = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(w.ledger.data.map((l) => l.kind)).toEqual(['grant']);
      expect(w.saldo).toBe(5);
    });

    it('automatico uses the plan while it lasts, then credits; creditos pays every publication', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const { brandId } = await brandWithConnections(server(), ['threads', 'linkedin'], ws);
      await grant(ws.workspace_id, 10);
      const auto = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'a', modo: 'automatico' });
      expect(auto.status).toBe(201);
      expect((await wallet(server(), ws.api_key, ws.workspace_id)).saldo).toBe(9);
      const plano = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'b' });
      expect(plano.status).toBe(403);
      const creditos = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'c', modo: 'creditos' });
      expect(creditos.status).toBe(201);
      const w = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(w.saldo).toBe(7);
      expect(w.ledger.data.filter((l) => l.kind === 'spend').map((l) => l.amount).sort((a, b) => a - b)).toEqual([-2, -1]);
      await consistent(server(), ws.workspace_id);
    });

    it('200 concurrent spends of 1 credit against 100: exactly 100 succeed, the balance ends at 0, the ledger matches', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      await grant(ws.workspace_id, 100);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `n${i}`, modo: 'creditos' })),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(100);
      const refused = results.filter((r) => r.status !== 201);
      expect(refused).toHaveLength(100);
      for (const r of refused) expect(r.body.error).toBe('saldo_insuficiente');
      const w = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(w.saldo).toBe(0);
      expect(w.ledger.data.filter((l) => l.kind === 'spend')).toHaveLength(100);
      expect(await consistent(server(), ws.workspace_id)).toBe(0);
    }, 60_000);

    it('an idempotent replay does not charge twice', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      await grant(ws.workspace_id, 5);
      const body = { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'once', modo: 'creditos' };
      const a = await post(ws.api_key, ws.workspace_id, body, { 'idempotency-key': 'pay-once' });
      const b = await post(ws.api_key, ws.workspace_id, body, { 'idempotency-key': 'pay-once' });
      expect(b.headers.get('idempotent-replayed')).toBe('true');
      expect(b.body.content_id).toBe(a.body.content_id);
      expect((await wallet(server(), ws.api_key, ws.workspace_id)).saldo).toBe(4);
    });

    it('a publication that fails for a network reason gives its credit back; a confirmation failure does not', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      await grant(ws.workspace_id, 10);
      const res = await post(ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin'],
        content_type: 'text',
        text: 'hi',
        modo: 'creditos',
        sandbox_outcomes: { threads: 'quota_exceeded', linkedin: 'post_inexistente' },
      });
      expect(res.status).toBe(201);
      await server().settle();
      const w = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(w.saldo).toBe(9);
      const refunds = w.ledger.data.filter((l) => l.kind === 'refund');
      expect(refunds).toHaveLength(1);
      expect(refunds[0]?.amount).toBe(1);
      await consistent(server(), ws.workspace_id);
    });

    it('a network with its own publication price (X, paid per post) is charged that price, and refunded it on failure', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'x']);
      await grant(ws.workspace_id, 10);
      const price = await server().request('GET', `/v1/workspaces/${ws.workspace_id}/wallet/preco?operacao=publicacao_x`, { key: ws.api_key });
      expect(price.body).toMatchObject({ operacao: 'publicacao_x', preco_unitario: 4 });
      const res = await post(ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['threads', 'x'],
        content_type: 'text',
        text: 'hi',
        modo: 'creditos',
        sandbox_outcomes: { x: 'quota_exceeded' },
      });
      expect(res.status).toBe(201);
      const charged = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(charged.saldo).toBe(10 - 1 - 4);
      await server().settle();
      const w = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(w.saldo).toBe(10 - 1);
      expect(w.ledger.data.filter((l) => l.kind === 'refund').map((l) => l.amount)).toEqual([4]);
      await consistent(server(), ws.workspace_id);

      // 4 credits cover Threads (1) but not Threads and X (5): refused whole, nothing spent.
      const poor = await brandWithConnections(server(), ['threads', 'x']);
      await grant(poor.ws.workspace_id, 4);
      const broke = await post(poor.ws.api_key, poor.ws.workspace_id, { brand_id: poor.brandId, target_platforms: ['threads', 'x'], content_type: 'text', text: 'again', modo: 'creditos' });
      expect([broke.status, broke.body.error]).toEqual([402, 'saldo_insuficiente']);
      expect((await wallet(server(), poor.ws.api_key, poor.ws.workspace_id)).saldo).toBe(4);
    });

    it('batches expire at their time with a ledger entry; spending takes the soonest-expiring batch first', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const clock = server().container.clock as ManualClock;
      const saved = clock.now();
      const later = await grant(ws.workspace_id, 3, saved + 10 * 86_400_000);
      const sooner = await grant(ws.workspace_id, 2, saved + 86_400_000);
      expect((await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'x', modo: 'creditos' })).status).toBe(201);
      let w = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(w.lotes.find((l) => l.id === sooner!.batchId)?.remaining).toBe(1);
      clock.set(saved + 2 * 86_400_000);
      try {
        w = await wallet(server(), ws.api_key, ws.workspace_id);
        expect(w.saldo).toBe(3);
        expect(w.lotes.find((l) => l.id === sooner!.batchId)).toMatchObject({ remaining: 0, expired: true });
        expect(w.lotes.find((l) => l.id === later!.batchId)).toMatchObject({ remaining: 3, expired: false });
        expect(w.ledger.data[0]).toMatchObject({ kind: 'expiry', amount: -1 });
        expect(await consistent(server(), ws.workspace_id)).toBe(3);
      } finally {
        clock.set(saved);
      }
    });

    it('the same signed payment callback delivered twice adds credits once; a bad signature is refused', async () => {
      const ws = await server().workspace();
      const body = JSON.stringify({ event_id: `evt_pay_${ws.workspace_id}`, type: 'payment.succeeded', workspace_id: ws.workspace_id, offer_id: 'pack_100' });
      const ts = String(Math.floor((server().container.clock as ManualClock).now() / 1000));
      const signature = `sha256=${createHmac('sha256', PAYMENT_SECRET).update(`${ts}.${body}`).digest('hex')}`;
      const send = (sig: string) =>
        server().request('POST', '/v1/payments/callback', { rawBody: body, headers: { 'content-type': 'application/json', 'payment-timestamp': ts, 'payment-signature': sig } });
      expect((await send(signature)).body).toEqual({ applied: true });
      expect((await send(signature)).body).toEqual({ applied: false });
      const forged = await send(signature.replace(/.$/, (c) => (c === '0' ? '1' : '0')));
      expect(forged.status).toBe(400);
      const w = await wallet(server(), ws.api_key, ws.workspace_id);
      expect(w.saldo).toBe(100);
      expect(w.lotes).toHaveLength(1);
    });
  },
  { PRICES_JSON: JSON.stringify({ default: { publicacao: 1, criacao_de_conteudo: 1, publicacao_x: 4 } }), PAYMENT_WEBHOOK_SECRET: PAYMENT_SECRET, PLANS_JSON: JSON.stringify({ tiny: TINY }) },
  () => {
    clockRef = new ManualClock(START);
    const clock = clockRef;
    return {
      clock,
      workers: false,
      walletHooks: {
        afterChoice: () => {
          if (between.to !== null) clock.set(between.to);
        },
      },
    };
  },
);
