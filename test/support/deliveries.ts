import type { ManualClock } from '../../src/core/clock.js';
import type { TestServer } from './server.js';

/**
 * Attempts every due delivery, moving the server's manual clock to each next attempt, until nothing is pending or
 * `maxSteps` rounds have run; says whether the deliveries settled.
 */
export async function walkDeliveries(server: TestServer, maxSteps = 20): Promise<boolean> {
  const clock = server.container.clock as ManualClock;
  for (let i = 0; i < maxSteps; i++) {
    await server.container.dispatcher.drain();
    const next = await server.container.db.kysely
      .selectFrom('deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (next?.at === null || next?.at === undefined) return true;
    clock.set(Math.max(clock.now(), Number(next.at)));
  }
  return false;
}
