import { z } from 'zod';

/** Spec 7.3: stock meters count what exists; per-cycle meters count what was done in the plan cycle. */
export const STOCK_METERS = ['brands', 'connections', 'media_storage', 'webhooks', 'inspiration_library'] as const;
/** The per-cycle meters by their English names; the values are the spec's wire names (7.3). */
export const CYCLE_METER = { contentCreations: 'criacao_de_conteudos', publications: 'publicacoes' } as const;
export const CYCLE_METERS = [CYCLE_METER.contentCreations, CYCLE_METER.publications] as const;
export type StockMeter = (typeof STOCK_METERS)[number];
export type CycleMeter = (typeof CYCLE_METERS)[number];
export type Meter = StockMeter | CycleMeter;
export const METERS: readonly Meter[] = [...STOCK_METERS, ...CYCLE_METERS];

export function isStockMeter(meter: Meter): meter is StockMeter {
  return (STOCK_METERS as readonly string[]).includes(meter);
}

export const planSchema = z.strictObject({
  brands: z.number().int().nonnegative(),
  connections: z.number().int().nonnegative(),
  /** Bytes of uploaded media kept. */
  media_storage: z.number().int().nonnegative(),
  webhooks: z.number().int().nonnegative(),
  inspiration_library: z.number().int().nonnegative(),
  criacao_de_conteudos: z.number().int().nonnegative(),
  publicacoes: z.number().int().nonnegative(),
});
export type Plan = z.infer<typeof planSchema>;

const GB = 1024 ** 3;

/** Built-in plans; `PLANS_JSON` may override or add plans by name. */
export const DEFAULT_PLANS: Record<string, Plan> = {
  free: { brands: 1, connections: 5, media_storage: 1 * GB, webhooks: 2, inspiration_library: 20, criacao_de_conteudos: 30, publicacoes: 90 },
  default: { brands: 10, connections: 50, media_storage: 10 * GB, webhooks: 10, inspiration_library: 500, criacao_de_conteudos: 2000, publicacoes: 10000 },
  business: { brands: 100, connections: 500, media_storage: 200 * GB, webhooks: 50, inspiration_library: 10000, criacao_de_conteudos: 50000, publicacoes: 250000 },
};

/** The plan cycle is the calendar month in UTC: its key and its end. */
export function cycleOf(now: number): { key: string; start: number; end: number } {
  const d = new Date(now);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return { key: `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`, start, end };
}
