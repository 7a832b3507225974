import { z } from 'zod';
import { CYCLE_METER, type CycleMeter } from '../meters/plans.js';

/**
 * The priced operations by their English names; the values are the wire names a price table, a price query
 * (`operacao`) and a ledger entry use. A network may have its own publication price, `publicacao_<network>`.
 */
export const OPERATION = { publication: 'publicacao', contentCreation: 'criacao_de_conteudo' } as const;

/** The operation priced per network on `platform`, e.g. X's pay-per-use posting. */
export function publicationOperationOn(platform: string): string {
  return `${OPERATION.publication}_${platform}`;
}

/** Operations with a price, and the per-cycle meter each one goes beyond. */
export const OPERATION_METER: Record<string, CycleMeter> = {
  [OPERATION.publication]: CYCLE_METER.publications,
  [OPERATION.contentCreation]: CYCLE_METER.contentCreations,
};

/** `{"default": {"publicacao": 2}, "<plan>": {...}}`: credits per unit; a plan's table overrides the default. */
export const priceTableSchema = z.record(z.string(), z.record(z.string(), z.number().int().nonnegative()));
export type PriceTable = z.infer<typeof priceTableSchema>;

export const DEFAULT_PRICES: PriceTable = { default: { [OPERATION.publication]: 2, [OPERATION.contentCreation]: 1 } };

/** Credits per unit of `operation` on `plan`, or undefined when it has no published price (fails closed). */
export function priceOf(table: PriceTable, plan: string, operation: string): number | undefined {
  // Own properties only: `__proto__`, `constructor`… are not operations.
  const own = (t: Record<string, number> | undefined) => (t !== undefined && Object.hasOwn(t, operation) ? t[operation] : undefined);
  const planTable = Object.hasOwn(table, plan) ? table[plan] : undefined;
  return own(planTable) ?? own(table.default);
}

export const offerSchema = z.strictObject({
  id: z.string().min(1),
  credits: z.number().int().positive(),
  price: z.number().nonnegative(),
  currency: z.string().length(3),
  /** Days the purchased credits stay valid. */
  valid_days: z.number().int().positive().default(365),
});
export type Offer = z.infer<typeof offerSchema>;

export const DEFAULT_OFFERS: Offer[] = [
  { id: 'pack_100', credits: 100, price: 49, currency: 'BRL', valid_days: 365 },
  { id: 'pack_500', credits: 500, price: 199, currency: 'BRL', valid_days: 365 },
  { id: 'pack_2000', credits: 2000, price: 699, currency: 'BRL', valid_days: 365 },
];
