import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { WalletService } from '../wallet/wallet.service.js';
import type { PaymentMode } from '../wallet/wallet.schema.js';

/**
 * Charges a content when it starts publishing, never when it is scheduled, so a post waiting for its time spends
 * nothing until then; inside the transaction that starts it: 1 on criacao_de_conteudos and one publication per
 * job, in the cycle of that instant. In payment mode `creditos` or `automatico` what the plan does not cover is
 * paid in credits, and each paid job records its share so a failure gives it back.
 * @throws ServiceError `limit_reached`, `saldo_insuficiente`, `saldo_fragmentado`, `lote_vencido`,
 *   `operacao_sem_preco`; the caller's transaction then rolls back whole.
 */
export async function chargeStart(
  tx: Kysely<Database>,
  wallet: WalletService,
  args: { workspaceId: string; mode: PaymentMode; contentId: string; jobs: readonly { id: string; platformSlug: string }[]; plan?: string | undefined },
): Promise<void> {
  const charge = await wallet.chargeContent(tx, { workspaceId: args.workspaceId, mode: args.mode, platforms: args.jobs.map((j) => j.platformSlug), reference: args.contentId, plan: args.plan });
  // The last jobs were paid in credits: each records its own price (a network may have its own), refundable on failure.
  if (charge.creditBatchId === null) return;
  const paid = args.jobs.slice(args.jobs.length - charge.paidPrices.length);
  for (const [i, job] of paid.entries()) {
    const price = charge.paidPrices[i] ?? 0;
    if (price > 0) await wallet.recordJobCredit(tx, job.id, charge.creditBatchId, price);
  }
}
