import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Timeouts } from '../core/lease.js';
import type { ScheduledStart, StartOutcome } from '../core/scheduling/scheduled-start.js';
import type { Logger } from '../observability/logger.js';
import { pollLoop } from './poll-loop.js';

/** The longest the scheduler holds the event loop during a burst before letting the rest of the process run. */
const TURN_MS = 20;

export interface SchedulerSettings {
  pollMs: number;
  /** Contents started at once by this process (PostgreSQL: several transactions in flight; SQLite: one writer). */
  lanes: number;
  /** Most contents one tick starts before yielding to the poll (a top-of-the-hour burst is spread over ticks). */
  perTick: number;
  /** Due contents started in one transaction (1: each alone); a refused charge falls back to one at a time. */
  batch?: number;
}

/**
 * The scheduling worker: every poll, starts the scheduled contents that are due, each in its own transaction (see
 * `createScheduledStart`), and wakes the publisher when it queued jobs. Holds nothing between ticks, so a crash
 * loses nothing: what was not started is still `scheduled` in the database. It claims no rows and holds no lease:
 * the conditional take in the database is what keeps two processes from starting one content.
 */
export function createScheduler(deps: {
  start: ScheduledStart;
  dialect: 'sqlite' | 'postgres';
  logger: Logger;
  settings: SchedulerSettings;
  timers?: Timeouts;
  /** Jobs were queued (once per started content): the publisher may claim now rather than at its next poll. */
  onStarted?(): void;
  /** Observability: one content's start outcome (not `idle`). */
  onOutcome?(outcome: Exclude<StartOutcome, { kind: 'idle' }>): void;
}) {
  const { logger, settings } = deps;

  function report(outcome: Exclude<StartOutcome, { kind: 'idle' }>): void {
    if (outcome.kind === 'missed') logger.warn({ content_id: outcome.contentId, publish_at: new Date(outcome.publishAt).toISOString() }, 'scheduled content missed beyond the grace period: schedule_missed');
    if (outcome.kind === 'unpaid') logger.warn({ content_id: outcome.contentId, code: outcome.code }, 'scheduled content could not be paid at its time');
    deps.onOutcome?.(outcome);
  }

  /**
   * better-sqlite3 answers synchronously, so on SQLite a run of starts would never leave the microtask queue: the
   * publisher (woken to claim what was just queued) and the HTTP server get a turn at least every `TURN_MS`. Not
   * after every content: the publisher then claims a few jobs at a time, and a burst takes several times longer.
   */
  let turnStartedAt = performance.now();
  async function yieldNow(): Promise<void> {
    if (performance.now() - turnStartedAt < TURN_MS) return;
    await nextTurn();
    turnStartedAt = performance.now();
  }

  /**
   * Starts due contents, a batch per transaction, until none is due, the budget is spent, or a charge is refused;
   * then one by one (each refusal on its own content) until none is due, the budget is spent, or a transient charge
   * race asks to wait.
   */
  async function lane(budget: { left: number }): Promise<number> {
    let handled = 0;
    const batch = Math.max(1, settings.batch ?? 1);
    // A refused batch changed nothing: its contents are then taken one by one here, even if another lane has
    // meanwhile found nothing left to take (the contents this lane held were invisible to it).
    let refused = false;
    while (batch > 1 && budget.left > 0) {
      const size = Math.min(batch, budget.left);
      const result = await deps.start.startDue(deps.dialect, size);
      if (result.kind === 'refused') {
        refused = true;
        break;
      }
      budget.left -= size;
      for (const outcome of result.outcomes) {
        report(outcome);
        if (outcome.kind === 'started') deps.onStarted?.();
      }
      handled += result.outcomes.length;
      // Fewer than asked: nothing else is due, or the rest is held by other lanes, which finish it.
      if (result.outcomes.length < size) return handled;
      await yieldNow();
    }
    while (refused || budget.left > 0) {
      refused = false;
      budget.left -= 1;
      const outcome = await deps.start.startNextDue(deps.dialect);
      if (outcome.kind === 'idle') {
        budget.left = 0;
        break;
      }
      handled += 1;
      report(outcome);
      if (outcome.kind === 'started') deps.onStarted?.();
      if (outcome.kind === 'retry') break;
      await yieldNow();
    }
    return handled;
  }

  /** One round: starts up to `perTick` due contents over the lanes; returns how many were handled. */
  async function tick(): Promise<number> {
    const budget = { left: settings.perTick };
    const lanes = deps.dialect === 'postgres' ? Math.max(1, settings.lanes) : 1;
    const counts = await Promise.all(Array.from({ length: lanes }, () => lane(budget)));
    return counts.reduce((a, b) => a + b, 0);
  }

  const loop = pollLoop({ what: 'starting scheduled contents', logger, pollMs: settings.pollMs, step: tick, timers: deps.timers });

  return {
    /** One round (tests drive it with a controlled clock): starts what is due; returns how many contents it handled. */
    tick,
    /** Starts everything due now, however many ticks that takes (bounded, should a charge race repeat). */
    async drain(maxTicks = 1000): Promise<number> {
      let total = 0;
      for (let i = 0; i < maxTicks; i += 1) {
        const n = await tick();
        total += n;
        if (n === 0) return total;
      }
      return total;
    },
    start: () => loop.start(),
    /** Stops polling and waits for the round in flight, so nothing runs on a database being closed. */
    stop: () => loop.stop(),
  };
}
