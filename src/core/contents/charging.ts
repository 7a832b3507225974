import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { WalletService } from '../wallet/wallet.service.js';
import { PAYMENT_MODE, type PaymentMode } from '../wallet/wallet.schema.js';

/**
 * Charges a content when it starts publishing, never when it is scheduled, so a post waiting for its time spends
 * nothing until then; inside the transaction that starts it: 1 on criacao_de_conteudos and one publication per
 * job, in the cycle of that instant. In payment mode `creditos` or `automatico` what the plan does not cover is
 * paid in credits, and each paid job records its share so a failure gives it back.
 * @throws ServiceError `limit_reached`, `saldo_insuficiente`, `saldo_fragmentado`, `lote_vencido`,
 *   `operacao_sem_preco`; the caller's transaction then rolls back whole.
 */
export async function chargeStart(tx: Kysely<Database>, wallet: WalletService, args: StartCharge): Promise<void> {
  await chargeStarts(tx, wallet, [args]);
}

/** One content starting to publish: what `chargeStart` charges. */
export interface StartCharge {
  workspaceId: string;
  mode: PaymentMode;
  contentId: string;
  jobs: readonly { id: string; platformSlug: string }[];
  plan?: string | undefined;
}

/**
 * `chargeStart` for several contents starting in one transaction, with the same outcome as charging each in
 * turn. Contents paid by the plan count on their workspace's two cycle meters together, one update per
 * workspace: the scheduler starts a top-of-the-hour burst in batches, and one meter update per content would make
 * every batch of a workspace wait on the previous one's row lock. A refusal refuses the whole set (the caller's
 * transaction rolls back), so a caller that must know which content was refused charges them one at a time.
 */
export async function chargeStarts(tx: Kysely<Database>, wallet: WalletService, starts: readonly StartCharge[]): Promise<void> {
  const planPaid = new Map<string, { workspaceId: string; plan: string | undefined; contents: number; publications: number }>();
  for (const start of starts) {
    if (start.mode !== PAYMENT_MODE.plan) {
      await chargeOne(tx, wallet, start);
      continue;
    }
    const key = `${start.workspaceId}\u0000${start.plan ?? ''}`;
    const sum = planPaid.get(key) ?? { workspaceId: start.workspaceId, plan: start.plan, contents: 0, publications: 0 };
    sum.contents += 1;
    sum.publications += start.jobs.length;
    planPaid.set(key, sum);
  }
  for (const sum of planPaid.values()) await wallet.chargePlanStarts(tx, sum);
}

async function chargeOne(tx: Kysely<Database>, wallet: WalletService, args: StartCharge): Promise<void> {
  const charge = await wallet.chargeContent(tx, { workspaceId: args.workspaceId, mode: args.mode, platforms: args.jobs.map((j) => j.platformSlug), reference: args.contentId, plan: args.plan });
  // The last jobs were paid in credits: each records its own price (a network may have its own), refundable on failure.
  if (charge.creditBatchId === null) return;
  const paid = args.jobs.slice(args.jobs.length - charge.paidPrices.length);
  for (const [i, job] of paid.entries()) {
    const price = charge.paidPrices[i] ?? 0;
    if (price > 0) await wallet.recordJobCredit(tx, job.id, charge.creditBatchId, price);
  }
}
