import type { Clock } from '../core/clock.js';
import { newId } from '../core/ids.js';
import type { Logger } from '../observability/logger.js';
import { pollBackoff } from './poll-loop.js';

/** One claim: the rows it takes are leased under `lease` until `lockedUntil`, at most `limit` of them. */
export interface Claim {
  now: number;
  limit: number;
  lease: string;
  lockedUntil: number;
}

/**
 * The claiming shared by the workers. A tick claims only while the worker is not stopping and has room, under a
 * fresh lease token (`<workerId>:<random>`, so a lease names the worker that holds it) valid for `leaseMs`;
 * `claim` takes the rows and says how many it took on. The loop calls `tick` every `pollMs` and again while it
 * finds work, and also as soon as a slot frees (`refill`), so throughput is not bounded by the poll interval.
 * A claim that fails (the database unreachable, a statement timed out) is logged and the loop goes on, polling
 * less often while failures last (the backoff every worker's poll shares, `pollBackoff`).
 */
export function createClaimLoop(args: {
  /** Prefix of this worker's id (`wrk_`, `whd_`). */
  idPrefix: string;
  what: string;
  clock: Clock;
  logger: Logger;
  pollMs: number;
  leaseMs: number;
  /** How many more rows this worker can take on now. */
  room(): number;
  /** Claims and starts up to `claim.limit` rows; returns how many it took on. */
  claim(claim: Claim): Promise<number>;
}) {
  const workerId = newId(args.idPrefix, 8);
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let stopping = false;
  let refilling = false;

  /** While claims fail in a row (the database away), the poll backs off and refills wait for it. */
  const backoff = pollBackoff({ what: `claiming ${args.what}`, logger: args.logger, pollMs: args.pollMs });

  /** Claims what fits in the free room; returns how many rows were taken on. Tests and drains call it directly. */
  async function tick(): Promise<number> {
    if (stopping) return 0;
    const limit = args.room();
    if (limit <= 0) return 0;
    const lease = `${workerId}:${newId('', 10)}`;
    const now = args.clock.now();
    return args.claim({ now, limit, lease, lockedUntil: now + args.leaseMs });
  }

  /** The loop's claiming in flight, if any; `wanted`: slots freed while it ran, so it claims once more after. */
  let claiming: Promise<void> | undefined;
  let wanted = false;

  /**
   * Claims while there is work and room, one claim at a time: slots that free while a claim is in flight are taken
   * together by the next one instead of by a claim each (a claim costs about the same for one row as for thirty).
   * A poll or a refill that arrives meanwhile only asks for that next claim.
   */
  function claimWhileWork(): Promise<void> {
    if (claiming) {
      wanted = true;
      return claiming;
    }
    const run = (async () => {
      try {
        do {
          wanted = false;
          while (running && (await tick()) > 0) {
            /* keep claiming while there is work and room */
          }
          backoff.succeeded();
        } while (wanted && running);
      } catch (err) {
        backoff.failed(err);
      } finally {
        claiming = undefined;
      }
    })();
    claiming = run;
    return run;
  }

  function schedule(): void {
    timer = setTimeout(async () => {
      await claimWhileWork();
      if (running) schedule();
    }, backoff.delay());
  }

  return {
    workerId,
    tick,
    /** Set by `stop` until the next `start`: no claim is made, and work in hand is not taken up again. */
    get stopping() {
      return stopping;
    },
    start(): void {
      stopping = false;
      running = true;
      schedule();
    },
    stop(): void {
      stopping = true;
      running = false;
      if (timer) clearTimeout(timer);
    },
    /** A slot freed: claim again now (only while the loop runs; tests drive `tick` themselves). */
    refill(): void {
      // While claims fail, the backed-off poll alone tries again: a finished job must not make a claim each.
      if (!running || refilling || backoff.failures > 0) return;
      refilling = true;
      setImmediate(() => {
        refilling = false;
        void claimWhileWork();
      });
    },
  };
}
