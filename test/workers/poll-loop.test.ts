import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { pollLoop } from '../../src/workers/poll-loop.js';
import { flush, ManualTimers } from '../support/manual-timers.js';

function capturedLogger() {
  const lines: { level: number; msg: string; retry_in_ms?: number }[] = [];
  const logger = createLogger('info', new Writable({ write: (c: Buffer, _e, done) => (lines.push(...c.toString().trim().split('\n').map((l) => JSON.parse(l) as (typeof lines)[number])), done()) }));
  return { logger, lines };
}

describe('pollLoop: a plain poll on injected timers', () => {
  it('waits one interval, steps again and again while a step finds work, then waits for the next poll', async () => {
    const timers = new ManualTimers();
    const work = [3, 1, 0, 2, 0];
    let steps = 0;
    const loop = pollLoop({ what: 'test', logger: capturedLogger().logger, pollMs: 50, timers, step: async () => (steps += 1, work.shift() ?? 0) });
    loop.start();
    timers.advance(49);
    await flush();
    expect(steps).toBe(0);
    timers.advance(1);
    await flush();
    expect(steps, 'three steps: two that found work, one that found none').toBe(3);
    expect(timers.nextDelay).toBe(50);
    timers.advance(50);
    await flush();
    expect(steps).toBe(5);
    await loop.stop();
    timers.advance(1_000);
    await flush();
    expect(steps).toBe(5);
  });

  it('backs off while steps fail (doubling, at most 5 s), logs the first failure as an error and the rest as warnings, and one success resets it', async () => {
    const timers = new ManualTimers();
    const { logger, lines } = capturedLogger();
    let failing = true;
    let steps = 0;
    const loop = pollLoop({
      what: 'starting things',
      logger,
      pollMs: 100,
      timers,
      step: async () => {
        steps += 1;
        if (failing) throw new Error('database away');
        return 0;
      },
    });
    loop.start();
    const delays: (number | null)[] = [];
    for (let i = 0; i < 8; i += 1) {
      timers.advance(timers.nextDelay ?? 0);
      await flush();
      delays.push(timers.nextDelay);
    }
    expect(steps).toBe(8);
    expect(delays).toEqual([200, 400, 800, 1_600, 3_200, 5_000, 5_000, 5_000]);
    const failures = lines.filter((l) => l.msg === 'starting things failed; retrying');
    expect(failures.map((l) => l.level)).toEqual([50, 40, 40, 40, 40, 40, 40, 40]);
    expect(failures[0]!.retry_in_ms).toBe(200);
    failing = false;
    timers.advance(5_000);
    await flush();
    expect(timers.nextDelay).toBe(100);
    await loop.stop();
  });

  it('stop waits for the round in flight and no step starts after it', async () => {
    const timers = new ManualTimers();
    let release!: () => void;
    let steps = 0;
    const loop = pollLoop({
      what: 'test',
      logger: capturedLogger().logger,
      pollMs: 10,
      timers,
      step: () => {
        steps += 1;
        return new Promise<number>((r) => (release = () => r(1)));
      },
    });
    loop.start();
    timers.advance(10);
    await flush();
    expect(steps).toBe(1);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false);
    release();
    await stopping;
    // The step reported work, but the loop was stopping: it did not step again, and nothing is armed.
    expect(steps).toBe(1);
    expect(timers.armed).toBe(0);
  });
});
