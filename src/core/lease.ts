/*
 * Timers are injected wherever something waits on time (a lease's renewals, a worker's poll), so tests drive them
 * by hand instead of sleeping.
 */

/** Repeating timers. */
export interface Timers {
  /** Calls `tick` every `ms` until the returned function is called. */
  every(ms: number, tick: () => void): () => void;
}

/** One-shot timers. */
export interface Timeouts {
  /** Calls `run` once after `ms`, unless the returned function is called first. */
  after(ms: number, run: () => void): () => void;
}

/**
 * Real timers. A renewal is unref'd, so it never keeps a stopping process alive; a poll is not, because a
 * worker-only process lives by its polls.
 */
export const realTimers: Timers & Timeouts = {
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
  after(ms, run) {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
};

export interface KeptLease {
  /** Stops renewing and waits for a renewal under way, so nothing touches the lease after its holder is done. */
  stop(): Promise<void>;
}

/**
 * Keeps a lease alive while its holder works: every `everyMs`, `renew` pushes the lease on, conditionally on the
 * holder's token (the fenced write is the caller's; this helper only paces it). One renewal at a time: a beat that
 * comes while the previous one is still settling is skipped. A renewal that fails (the database briefly away) is
 * reported to `onError` and tried again at the next beat; one that is refused (`renew` resolves false: the lease
 * was taken over, already released, or the holder gave up) ends the renewals, and the holder's fenced write then
 * decides. `everyMs` should let a few renewals fit in one lease, so one lost beat is harmless.
 */
export function keepLease(
  renew: () => Promise<boolean>,
  everyMs: number,
  timers: Timers,
  onError: (err: unknown) => void = () => undefined,
): KeptLease {
  let renewing: Promise<void> | null = null;
  let stopped = false;
  const cancel = timers.every(everyMs, () => {
    if (stopped || renewing) return;
    renewing = renew()
      .then((held) => {
        if (!held) end();
      }, onError)
      .finally(() => {
        renewing = null;
      });
  });
  function end(): void {
    stopped = true;
    cancel();
  }
  return {
    async stop() {
      end();
      await renewing;
    },
  };
}
