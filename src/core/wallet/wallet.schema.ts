import { z } from 'zod';

/** Spec 4.5: how a content is paid. The values are the spec's wire words (`modo`); the keys name them in code. */
export const PAYMENT_MODE = { plan: 'plano', credits: 'creditos', automatic: 'automatico' } as const;
export const PAYMENT_MODES = [PAYMENT_MODE.plan, PAYMENT_MODE.credits, PAYMENT_MODE.automatic] as const;
export type PaymentMode = (typeof PAYMENT_MODES)[number];

export const paymentModeSchema = z
  .enum(PAYMENT_MODES)
  .describe('plano (default): plan meters only (403 limit_reached when one is exhausted); creditos: every publication is paid in credits; automatico: the plan while it lasts, credits after.');

export const priceQuerySchema = z.strictObject({
  operacao: z.string().min(1).max(100).describe('Operation, e.g. publicacao or criacao_de_conteudo.'),
  quantidade: z.coerce.number().int().min(1).max(100_000).default(1).describe('How many units to price (quantity), 1 to 100000.'),
});

export const priceSchema = z
  .object({
    operacao: z.string(),
    preco_unitario: z.number().int().describe('Credits per unit.'),
    quantidade: z.number().int(),
    custo_estimado: z.number().int().describe('preco_unitario × quantidade.'),
    saldo_disponivel: z.number().int().describe('Credits available now (unexpired batches).'),
    coberto_pelo_plano: z.boolean().describe('Whether the plan meter still covers this quantity in the current cycle (then modo plano costs nothing).'),
  })
  .meta({ id: 'WalletPrice' });

export const batchSchema = z.object({
  id: z.string().describe('lote_…'),
  amount: z.number().int(),
  remaining: z.number().int(),
  source: z.enum(['purchase', 'grant', 'promotion']),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime().nullable(),
  expired: z.boolean(),
});

export const ledgerEntrySchema = z.object({
  id: z.string(),
  kind: z.enum(['grant', 'spend', 'refund', 'expiry']),
  amount: z.number().int().describe('Signed: grants and refunds add, spends and expiries subtract.'),
  batch_id: z.string(),
  operation: z.string().nullable(),
  reference: z.string().nullable().describe('What caused it: a content, a job, a payment event.'),
  created_at: z.iso.datetime(),
});

export const statementQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Ledger entries per page, 1 to 200 (newest first).'),
  cursor: z.string().max(200).optional().describe('ledger.next_cursor of the previous page.'),
});

export const statementSchema = z
  .object({
    saldo: z.number().int().describe('Balance: the sum of the ledger, equal to the sum of batch remainders.'),
    lotes: z.array(batchSchema),
    ledger: z.object({ data: z.array(ledgerEntrySchema), next_cursor: z.string().nullable() }),
  })
  .meta({ id: 'WalletStatement' });

export const offerViewSchema = z.object({
  id: z.string(),
  credits: z.number().int(),
  price: z.number(),
  currency: z.string(),
  payment_url: z.string().describe('Ready link to pay for this package for this workspace.'),
});
export const offerListSchema = z.object({ data: z.array(offerViewSchema) }).meta({ id: 'WalletOffers' });

export const paymentEventSchema = z.strictObject({
  event_id: z.string().min(1).max(200),
  type: z.literal('payment.succeeded'),
  workspace_id: z.string().min(1),
  offer_id: z.string().min(1),
});

export type PriceQuery = z.infer<typeof priceQuerySchema>;
export type Price = z.infer<typeof priceSchema>;
export type Statement = z.infer<typeof statementSchema>;
export type StatementQuery = z.infer<typeof statementQuerySchema>;
export type PaymentEvent = z.infer<typeof paymentEventSchema>;
