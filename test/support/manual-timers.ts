import type { Timeouts, Timers } from '../../src/core/lease.js';

/** Timers on a time of their own, which moves only when a test advances it: nothing here sleeps. */
export class ManualTimers implements Timers, Timeouts {
  private now = 0;
  private nextId = 0;
  private readonly pending = new Map<number, { at: number; run: () => void; every: number | null }>();

  every(ms: number, tick: () => void): () => void {
    return this.add(ms, tick, ms);
  }

  after(ms: number, run: () => void): () => void {
    return this.add(ms, run, null);
  }

  /** Timers still armed. */
  get armed(): number {
    return this.pending.size;
  }

  /** The delay of the one armed timer (a poll loop arms one at a time). */
  get nextDelay(): number | null {
    const [first] = [...this.pending.values()];
    return first ? first.at - this.now : null;
  }

  /** Moves time on by `ms`, firing what falls due in order (a repeating timer as often as it fits). */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.pending.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!due) break;
      const [id, timer] = due;
      this.now = timer.at;
      if (timer.every === null) this.pending.delete(id);
      else timer.at += timer.every;
      timer.run();
    }
    this.now = until;
  }

  private add(ms: number, run: () => void, every: number | null): () => void {
    const id = this.nextId++;
    this.pending.set(id, { at: this.now + ms, run, every });
    return () => this.pending.delete(id);
  }
}

/** Lets promise callbacks already queued run (no time passes). */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await new Promise<void>((r) => setImmediate(r));
}
