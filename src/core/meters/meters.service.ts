import type { Kysely } from 'kysely';
import { decrement, incrementAllWithin, incrementWithin, readCounters } from '../../../db/repositories/meters.repo.js';
import { findWorkspace } from '../../../db/repositories/workspaces.repo.js';
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { type CycleMeter, type Meter, type Plan, type StockMeter, METERS, cycleOf, isStockMeter } from './plans.js';
import type { Usage } from './meters.schema.js';

export type MetersService = ReturnType<typeof createMetersService>;

export function createMetersService(deps: { db: Kysely<Database>; clock: Clock; plans: Record<string, Plan> }) {
  const { db, clock, plans } = deps;

  /** The workspace's plan; `known` when the caller read it already (a creation reads it with the brand). */
  async function planOf(tx: Kysely<Database>, workspaceId: string, known?: string): Promise<{ name: string; plan: Plan }> {
    const name = known ?? (await findWorkspace(tx, workspaceId))?.plan ?? 'default';
    const plan = plans[name] ?? plans.default;
    if (!plan) throw new Error(`no plan named ${name} and no default plan`);
    return { name, plan };
  }

  function period(meter: Meter, now: number): string {
    return isStockMeter(meter) ? 'stock' : cycleOf(now).key;
  }

  return {
    /**
     * Takes `amount` of each meter inside the caller's transaction, all or nothing.
     * @throws ServiceError `limit_reached` with {meter, limit, used, resolve} for the first meter that would
     *   pass its ceiling; the caller's transaction then rolls back whatever was taken.
     */
    async consume(tx: Kysely<Database>, workspaceId: string, items: { meter: Meter; amount: number }[], knownPlan?: string): Promise<void> {
      const { plan } = await planOf(tx, workspaceId, knownPlan);
      const now = clock.now();
      const takes = items.filter(({ amount }) => amount !== 0).map(({ meter, amount }) => ({ workspaceId, meter, period: period(meter, now), amount, limit: plan[meter] }));
      if (takes.length === 0) return;
      const [over] = await incrementAllWithin(tx, takes);
      if (over === undefined) return;
      const { meter } = over;
      const [row] = await readCounters(tx, workspaceId, [over.period]).then((rows) => rows.filter((r) => r.meter === meter));
      throw new ServiceError('limit_reached', `The plan's ${meter} meter is at its ceiling (${over.limit}).`, {
        meter,
        limit: over.limit,
        used: row?.used ?? 0,
        resolve: isStockMeter(meter) ? 'desativar_outra' : 'upgrade',
      });
    },

    /**
     * Takes as much of `amount` as the plan still has on a per-cycle meter (automatico mode) and returns what it
     * took; racing callers cannot take the same room (each step is a conditional update).
     */
    async consumeUpTo(tx: Kysely<Database>, workspaceId: string, meter: CycleMeter, amount: number): Promise<number> {
      const { plan } = await planOf(tx, workspaceId);
      const key = { workspaceId, meter, period: period(meter, clock.now()) };
      for (let want = amount; want > 0; ) {
        if (await incrementWithin(tx, key, want, plan[meter])) return want;
        const used = (await readCounters(tx, workspaceId, [key.period])).find((r) => r.meter === meter)?.used ?? 0;
        const room = Math.max(0, plan[meter] - used);
        if (room === 0) return 0;
        want = Math.min(want - 1, room);
      }
      return 0;
    },

    /** Frees stock (a deactivated item); per-cycle meters are never given back (spec 7.3). */
    async release(tx: Kysely<Database>, workspaceId: string, meter: StockMeter, amount: number): Promise<void> {
      await decrement(tx, { workspaceId, meter, period: 'stock' }, amount);
    },

    /** Every meter with limit, used and, for cycle meters, when the cycle ends. */
    async usage(workspaceId: string): Promise<Usage> {
      const { name, plan } = await planOf(db, workspaceId);
      const cycle = cycleOf(clock.now());
      const counters = await readCounters(db, workspaceId, ['stock', cycle.key]);
      return {
        plan: name,
        cycle_end: toIso(cycle.end),
        meters: METERS.map((meter) => ({
          meter,
          kind: isStockMeter(meter) ? ('stock' as const) : ('cycle' as const),
          limit: plan[meter],
          used: counters.find((c) => c.meter === meter && c.period === (isStockMeter(meter) ? 'stock' : cycle.key))?.used ?? 0,
          cycle_end: isStockMeter(meter) ? null : toIso(cycle.end),
        })),
      };
    },

    /** Plans known to this installation, by name. */
    planNames: () => Object.keys(plans),
  };
}
