/** The one source of "now" for the core and the workers; tests pass a clock they can move. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

// eslint-disable-next-line no-restricted-properties -- the one place that reads the wall clock
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

/** ISO 8601 UTC rendering used in every response. */
export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
