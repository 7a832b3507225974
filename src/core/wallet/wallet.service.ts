import type { Kysely } from 'kysely';
import {
  type BatchRow,
  chargeBatch,
  creditBatch,
  dueForExpiry,
  findBatch,
  insertBatch,
  insertLedger,
  jobCredit,
  listBatches,
  listLedger,
  liveBatches,
  markExpired,
  setJobCredit,
} from '../../../db/repositories/wallet.repo.js';
import { findWorkspace } from '../../../db/repositories/workspaces.repo.js';
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import type { MetersService } from '../meters/meters.service.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit } from '../audit/record.js';
import { CYCLE_METER } from '../meters/plans.js';
import { type Offer, OPERATION, OPERATION_METER, type PriceTable, priceOf, publicationOperationOn } from './prices.js';
import { PAYMENT_MODE, type PaymentMode, type Price, type PriceQuery, type Statement, type StatementQuery } from './wallet.schema.js';

export interface WalletHooks {
  /** Test seam: runs between choosing a batch and charging it (to reproduce an expiry in between). */
  afterChoice?(): void | Promise<void>;
}

export interface WalletDeps {
  db: Kysely<Database>;
  clock: Clock;
  meters: MetersService;
  prices: PriceTable;
  offers: Offer[];
  /** e.g. `https://pay.example.com/checkout?offer={offer_id}&workspace={workspace_id}`. */
  paymentUrlTemplate: string;
  hooks?: WalletHooks;
}

export type WalletService = ReturnType<typeof createWalletService>;

export function createWalletService(deps: WalletDeps) {
  const { db, clock, meters } = deps;

  async function planOf(tx: Kysely<Database>, workspaceId: string): Promise<string> {
    return (await findWorkspace(tx, workspaceId))?.plan ?? 'default';
  }

  /** Writes the expiry of every batch whose time has come (spec: expiry writes ledger entries). */
  async function expireDue(tx: Kysely<Database>, workspaceId: string | null): Promise<void> {
    const now = clock.now();
    for (const batch of await dueForExpiry(tx, workspaceId, now)) {
      if (!(await markExpired(tx, batch.id, batch.remaining, now)) || batch.remaining === 0) continue;
      await insertLedger(tx, { id: newId('led_'), workspaceId: batch.workspaceId, batchId: batch.id, kind: 'expiry', amount: -batch.remaining, operation: null, reference: null, createdAt: now });
    }
  }

  async function balance(tx: Kysely<Database>, workspaceId: string): Promise<number> {
    return (await liveBatches(tx, workspaceId, clock.now())).reduce((sum, b) => sum + b.remaining, 0);
  }

  /**
   * The price of `quantity` units of `operation` for this workspace's plan.
   * @throws ServiceError `operacao_sem_preco` when there is no published price: it fails closed, never free.
   */
  async function unitPrice(tx: Kysely<Database>, workspaceId: string, operation: string): Promise<number> {
    return priceOn(await planOf(tx, workspaceId), operation);
  }

  /** @throws ServiceError `operacao_sem_preco` (see unitPrice). */
  function priceOn(plan: string, operation: string): number {
    const price = priceOf(deps.prices, plan, operation);
    if (price === undefined) {
      throw new ServiceError('operacao_sem_preco', `The operation ${operation} has no published price; nothing was spent. Contact support.`, { operacao: operation });
    }
    return price;
  }

  /** A publication's price on `platform`: its own (`publicacao_<platform>`) where published, else `publicacao`. */
  function publicationPriceOn(plan: string, platform: string): number {
    return priceOf(deps.prices, plan, publicationOperationOn(platform)) ?? priceOn(plan, OPERATION.publication);
  }

  /**
   * Takes `cost` credits from ONE batch, soonest expiry first, inside the caller's transaction. A content's charge
   * comes from a single batch so that its refunds and its expiry belong to one batch (documented in the README).
   * @throws ServiceError `saldo_insuficiente`, `saldo_fragmentado`, `lote_vencido`.
   */
  async function spend(
    tx: Kysely<Database>,
    args: { workspaceId: string; cost: number; mode: PaymentMode; meter: string; unitPrice: number; operation: string; reference: string },
  ): Promise<string> {
    await expireDue(tx, args.workspaceId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const batches = await liveBatches(tx, args.workspaceId, clock.now());
      const total = batches.reduce((sum, b) => sum + b.remaining, 0);
      if (total < args.cost) {
        throw new ServiceError('saldo_insuficiente', `The credit balance (${total}) does not cover this operation (${args.cost}). Buy credits or change modo.`, {
          meter: args.meter,
          modo: args.mode,
          preco_unitario: args.unitPrice,
          custo_estimado: args.cost,
          saldo_disponivel: total,
          recoverable: true,
        });
      }
      const chosen: BatchRow | undefined = batches.find((b) => b.remaining >= args.cost);
      if (!chosen) {
        const largest = Math.max(...batches.map((b) => b.remaining));
        throw new ServiceError('saldo_fragmentado', `The balance (${total}) covers ${args.cost}, but a content is paid from one batch and the largest has ${largest}.`, {
          meter: args.meter,
          modo: args.mode,
          custo_estimado: args.cost,
          saldo_disponivel: total,
          maior_lote_disponivel: largest,
          recoverable: true,
        });
      }
      await deps.hooks?.afterChoice?.();
      const chargedAt = clock.now();
      if (await chargeBatch(tx, chosen.id, args.cost, chargedAt)) {
        await insertLedger(tx, { id: newId('led_'), workspaceId: args.workspaceId, batchId: chosen.id, kind: 'spend', amount: -args.cost, operation: args.operation, reference: args.reference, createdAt: chargedAt });
        return chosen.id;
      }
      const fresh = await findBatch(tx, chosen.id);
      if (fresh?.expiresAt !== null && fresh?.expiresAt !== undefined && fresh.expiresAt <= chargedAt) {
        throw new ServiceError('lote_vencido', `The credit batch ${chosen.id} expired between choice and charge; nothing was spent. Retry.`, { lote_id: chosen.id, recoverable: true });
      }
      // Another request took that batch's last credits first: choose again.
    }
    throw new ServiceError('saldo_insuficiente', 'The balance changed too often while charging; nothing was spent. Retry.', {
      meter: args.meter,
      modo: args.mode,
      preco_unitario: args.unitPrice,
      custo_estimado: args.cost,
      saldo_disponivel: await balance(tx, args.workspaceId),
      recoverable: true,
    });
  }

  return {
    expireDue,

    /**
     * Takes what a new content needs, by payment mode (spec 4.5), inside the content's transaction (a failed
     * request spends nothing): plan meters for `plano`; credits for every publication in `creditos`; the plan while
     * it lasts and credits after in `automatico`. Returns the credit-paid publications (charged to `creditBatchId`).
     * @throws ServiceError `limit_reached`, `saldo_insuficiente`, `saldo_fragmentado`, `lote_vencido`, `operacao_sem_preco`.
     */
    /**
     * Plan-paid contents starting together: `contents` on criacao_de_conteudos and `publications` on publicacoes,
     * as `chargeContent` counts each in payment mode `plano`.
     * @throws ServiceError `limit_reached` when the sum does not fit; nothing is counted.
     */
    async chargePlanStarts(tx: Kysely<Database>, args: { workspaceId: string; contents: number; publications: number; plan?: string | undefined }): Promise<void> {
      await meters.consume(
        tx,
        args.workspaceId,
        [
          { meter: CYCLE_METER.contentCreations, amount: args.contents },
          { meter: CYCLE_METER.publications, amount: args.publications },
        ],
        args.plan,
      );
    },

    async chargeContent(
      tx: Kysely<Database>,
      args: { workspaceId: string; mode: PaymentMode; platforms: readonly string[]; reference: string; plan?: string | undefined },
    ): Promise<{ paidPrices: number[]; creditBatchId: string | null }> {
      const publications = args.platforms.length;
      if (args.mode === PAYMENT_MODE.plan) {
        await meters.consume(
          tx,
          args.workspaceId,
          [
            { meter: CYCLE_METER.contentCreations, amount: 1 },
            { meter: CYCLE_METER.publications, amount: publications },
          ],
          args.plan,
        );
        return { paidPrices: [], creditBatchId: null };
      }
      let paidCreation = 0;
      let paidPublications: number;
      if (args.mode === PAYMENT_MODE.credits) {
        await meters.consume(tx, args.workspaceId, [{ meter: CYCLE_METER.contentCreations, amount: 1 }], args.plan);
        paidPublications = publications;
      } else {
        paidCreation = 1 - (await meters.consumeUpTo(tx, args.workspaceId, CYCLE_METER.contentCreations, 1));
        paidPublications = publications - (await meters.consumeUpTo(tx, args.workspaceId, CYCLE_METER.publications, publications));
      }
      // The last `paidPublications` publications are paid, each at its network's price where one is published
      // (`publicacao_<network>`, e.g. X's pay-per-use posting), else at `publicacao`.
      if (paidPublications <= 0 && paidCreation <= 0) return { paidPrices: [], creditBatchId: null };
      const plan = args.plan ?? (await planOf(tx, args.workspaceId));
      const creationCost = paidCreation > 0 ? priceOn(plan, OPERATION.contentCreation) : 0;
      const paidPrices = args.platforms.slice(publications - paidPublications).map((platform) => publicationPriceOn(plan, platform));
      const cost = creationCost + paidPrices.reduce((a, b) => a + b, 0);
      if (cost === 0) return { paidPrices, creditBatchId: null };
      const byPublication = paidPrices.length > 0 && paidCreation === 0;
      const batchId = await spend(tx, {
        workspaceId: args.workspaceId,
        cost,
        mode: args.mode,
        meter: byPublication ? CYCLE_METER.publications : CYCLE_METER.contentCreations,
        unitPrice: byPublication ? (paidPrices[0] ?? 0) : creationCost,
        operation: byPublication ? OPERATION.publication : OPERATION.contentCreation,
        reference: args.reference,
      });
      return { paidPrices, creditBatchId: batchId };
    },

    /** Records on a job what its publication cost, so a failure can give it back. */
    recordJobCredit: (tx: Kysely<Database>, jobId: string, batchId: string, cost: number) => setJobCredit(tx, jobId, batchId, cost),

    /**
     * Gives a failed job's credits back to the batch they came from (policy: a publication that certainly did not
     * happen is not paid for). Safe to call twice: the job's cost is cleared.
     */
    async refundJob(tx: Kysely<Database>, jobId: string, workspaceId: string): Promise<void> {
      const credit = await jobCredit(tx, jobId);
      if (!credit) return;
      const now = clock.now();
      await setJobCredit(tx, jobId, credit.batchId, 0);
      await creditBatch(tx, credit.batchId, credit.cost);
      await insertLedger(tx, { id: newId('led_'), workspaceId, batchId: credit.batchId, kind: 'refund', amount: credit.cost, operation: OPERATION.publication, reference: jobId, createdAt: now });
      await expireDue(tx, workspaceId);
    },

    /** Adds a batch (operators' grants, promotions, purchases); returns null when `externalRef` was already used. */
    async grant(args: { workspaceId: string; amount: number; source: 'grant' | 'promotion' | 'purchase'; expiresAt: number | null; externalRef?: string | null }): Promise<{ batchId: string } | null> {
      if (!Number.isSafeInteger(args.amount) || args.amount <= 0) throw new ServiceError('validation_failed', 'amount: must be a positive integer');
      if (!(await findWorkspace(db, args.workspaceId))) throw new ServiceError('not_found', `Workspace ${args.workspaceId} was not found.`);
      const now = clock.now();
      const id = newId('lote_');
      return db.transaction().execute(async (tx) => {
        const created = await insertBatch(tx, {
          id,
          workspaceId: args.workspaceId,
          amount: args.amount,
          remaining: args.amount,
          source: args.source,
          externalRef: args.externalRef ?? null,
          createdAt: now,
          expiresAt: args.expiresAt,
          expiredAt: null,
        });
        if (!created) return null;
        await insertLedger(tx, { id: newId('led_'), workspaceId: args.workspaceId, batchId: id, kind: 'grant', amount: args.amount, operation: null, reference: args.externalRef ?? args.source, createdAt: now });
        // Purchases arrive from the payment provider's callback; grants and promotions from an operator's command.
        const actor = args.source === 'purchase' ? { kind: 'system' as const, workspaceId: args.workspaceId, label: 'payment provider' } : { kind: 'system' as const, workspaceId: args.workspaceId, label: 'operator (command line)', via: 'cli' as const };
        await recordAudit(tx, actor, 'wallet.topped_up', { type: 'wallet', id: args.workspaceId, label: `${args.amount} credits` }, now, {
          amount: args.amount,
          source: args.source,
          batch_id: id,
          expires_at: args.expiresAt === null ? null : toIso(args.expiresAt),
          ...(args.externalRef ? { reference: args.externalRef } : {}),
        });
        return { batchId: id };
      });
    },

    /** GET …/wallet/preco. @throws ServiceError `operacao_sem_preco`. */
    async price(principal: Principal, workspaceId: string, query: PriceQuery): Promise<Price> {
      assertWorkspaceAccess(principal, workspaceId, 'wallet.read');
      const unit = await unitPrice(db, workspaceId, query.operacao);
      await db.transaction().execute((tx) => expireDue(tx, workspaceId));
      const meter = OPERATION_METER[query.operacao];
      const usage = await meters.usage(workspaceId);
      const m = usage.meters.find((u) => u.meter === meter);
      return {
        operacao: query.operacao,
        preco_unitario: unit,
        quantidade: query.quantidade,
        custo_estimado: unit * query.quantidade,
        saldo_disponivel: await balance(db, workspaceId),
        coberto_pelo_plano: m !== undefined && m.limit - m.used >= query.quantidade,
      };
    },

    /** GET …/wallet: balance, batches and the ledger, newest first. */
    async statement(principal: Principal, workspaceId: string, query: StatementQuery): Promise<Statement> {
      assertWorkspaceAccess(principal, workspaceId, 'wallet.read');
      await db.transaction().execute((tx) => expireDue(tx, workspaceId));
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const rows = await listLedger(db, workspaceId, { after, limit: query.limit + 1 });
      const page = rows.slice(0, query.limit);
      const batches = await listBatches(db, workspaceId);
      return {
        saldo: await balance(db, workspaceId),
        lotes: batches.map((b) => ({
          id: b.id,
          amount: b.amount,
          remaining: b.remaining,
          source: b.source as 'purchase' | 'grant' | 'promotion',
          created_at: toIso(b.createdAt),
          expires_at: b.expiresAt === null ? null : toIso(b.expiresAt),
          expired: b.expiredAt !== null,
        })),
        ledger: {
          data: page.map((l) => ({
            id: l.id,
            kind: l.kind as 'grant' | 'spend' | 'refund' | 'expiry',
            amount: l.amount,
            batch_id: l.batchId,
            operation: l.operation,
            reference: l.reference,
            created_at: toIso(l.createdAt),
          })),
          next_cursor: rows.length > query.limit && page.length > 0 ? encodeCursor(page[page.length - 1]!) : null,
        },
      };
    },

    /** GET …/wallet/offers: packages with a payment link for this workspace. */
    offers(principal: Principal, workspaceId: string) {
      assertWorkspaceAccess(principal, workspaceId, 'wallet.pay');
      return {
        data: deps.offers.map((o) => ({
          id: o.id,
          credits: o.credits,
          price: o.price,
          currency: o.currency,
          payment_url: deps.paymentUrlTemplate.replaceAll('{offer_id}', encodeURIComponent(o.id)).replaceAll('{workspace_id}', encodeURIComponent(workspaceId)),
        })),
      };
    },

    /**
     * A paid offer from the payment provider becomes a purchase batch, exactly once per provider event.
     * @returns whether credits were added (false on a repeated delivery).
     * @throws ServiceError `validation_failed` (unknown offer), `not_found` (workspace).
     */
    async applyPayment(event: { eventId: string; workspaceId: string; offerId: string }): Promise<boolean> {
      const offer = deps.offers.find((o) => o.id === event.offerId);
      if (!offer) throw new ServiceError('validation_failed', `offer_id: unknown offer ${event.offerId}`);
      const now = clock.now();
      const created = await this.grant({
        workspaceId: event.workspaceId,
        amount: offer.credits,
        source: 'purchase',
        expiresAt: now + offer.valid_days * 86_400_000,
        externalRef: `payment:${event.eventId}`,
      });
      return created !== null;
    },
  };
}
