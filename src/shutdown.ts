import type { Logger } from './observability/logger.js';

/**
 * The process's one way out: on SIGTERM or SIGINT (and whatever else the caller wires to the returned trigger),
 * `stop` runs once, then the process exits 0, or 1 if stopping failed. A second signal while stopping is ignored,
 * so an impatient Ctrl-C does not cut a graceful stop short.
 */
export function exitOnSignals(logger: Logger, stop: () => Promise<unknown>): (reason: string) => void {
  let stopping = false;
  const shutdown = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  return shutdown;
}
