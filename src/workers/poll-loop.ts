import { setImmediate as nextTurn } from 'node:timers/promises';
import { realTimers, type Timeouts } from '../core/lease.js';
import type { Logger } from '../observability/logger.js';

/** The longest pause between polls while they fail, so a worker resumes within it once the database is back. */
const BACKOFF_MAX_MS = 5_000;

/**
 * How a worker's polling reacts to failures (the database unreachable, a statement timed out): each failure is
 * logged, the first as an error and the rest of an outage as warnings, one per poll; the poll's delay is `pollMs`,
 * doubled per failure in a row up to `BACKOFF_MAX_MS` (or `pollMs` if that is longer); one success resets it.
 */
export function pollBackoff(args: { what: string; logger: Logger; pollMs: number }) {
  let failures = 0;
  const delay = () => (failures === 0 ? args.pollMs : Math.max(args.pollMs, Math.min(args.pollMs * 2 ** failures, BACKOFF_MAX_MS)));
  return {
    /** Failures in a row: while there are any, only the backed-off poll tries again. */
    get failures() {
      return failures;
    },
    delay,
    failed(err: unknown): void {
      failures += 1;
      const log = failures === 1 ? args.logger.error.bind(args.logger) : args.logger.warn.bind(args.logger);
      log({ err, failures, retry_in_ms: delay() }, `${args.what} failed; retrying`);
    },
    succeeded(): void {
      failures = 0;
    },
  };
}

/**
 * A worker's plain poll: every `pollMs` it runs `step` again and again while a step reports work done (returns
 * more than 0), then waits for the next poll. A failing step is logged and the loop goes on, backing off while
 * failures last (see `pollBackoff`). Timers are injected, so tests drive the loop without real sleeps.
 */
export function pollLoop(args: {
  /** What a step does, for the logs ("starting scheduled contents"). */
  what: string;
  logger: Logger;
  pollMs: number;
  /** One round of work; returns how much it did (0: nothing to do, wait for the next poll). */
  step(): Promise<number>;
  timers?: Timeouts;
}) {
  const timers = args.timers ?? realTimers;
  const backoff = pollBackoff(args);
  let running = false;
  let cancel: (() => void) | undefined;
  /** The round in flight, if any: `stop` waits for it, so nothing runs on a database being closed. */
  let round: Promise<void> | undefined;

  async function poll(): Promise<void> {
    try {
      while (running && (await args.step()) > 0) {
        // A step that answers without I/O (SQLite is synchronous) must not hold the event loop: yield a turn.
        await nextTurn();
      }
      backoff.succeeded();
    } catch (err) {
      backoff.failed(err);
    }
  }

  function schedule(): void {
    cancel?.();
    cancel = timers.after(backoff.delay(), () => {
      round = poll().finally(() => {
        round = undefined;
        if (running) schedule();
      });
    });
  }

  return {
    start(): void {
      if (running) return;
      running = true;
      schedule();
    },
    /** Stops polling and waits for the round in flight. */
    async stop(): Promise<void> {
      running = false;
      cancel?.();
      await round;
    },
  };
}
