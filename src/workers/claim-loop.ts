import type { Logger } from '../observability/logger.js';

/**
 * The polling shared by the workers: call `tick` every `pollMs` and again while it finds work, and also as soon
 * as a slot frees (`refill`), so throughput is not bounded by the poll interval.
 */
export function createClaimLoop(args: { tick(): Promise<number>; pollMs: number; logger: Logger; what: string }) {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let refilling = false;

  const fail = (err: unknown) => args.logger.error({ err }, `claiming ${args.what} failed`);

  function schedule(): void {
    timer = setTimeout(async () => {
      try {
        while (running && (await args.tick()) > 0) {
          /* keep claiming while there is work and room */
        }
      } catch (err) {
        fail(err);
      }
      if (running) schedule();
    }, args.pollMs);
  }

  return {
    get running() {
      return running;
    },
    start(): void {
      running = true;
      schedule();
    },
    stop(): void {
      running = false;
      if (timer) clearTimeout(timer);
    },
    /** A slot freed: claim again now (only while the loop runs; tests drive `tick` themselves). */
    refill(): void {
      if (!running || refilling) return;
      refilling = true;
      setImmediate(() => {
        refilling = false;
        args.tick().catch(fail);
      });
    },
  };
}
