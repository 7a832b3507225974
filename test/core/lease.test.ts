import { describe, expect, it } from 'vitest';
import { keepLease } from '../../src/core/lease.js';
import { flush, ManualTimers } from '../support/manual-timers.js';

/** A renewal the test settles by hand, to see what the helper does while one is under way. */
function renewals() {
  const calls: { resolve(held: boolean): void; reject(err: unknown): void }[] = [];
  const renew = () =>
    new Promise<boolean>((resolve, reject) => {
      calls.push({ resolve, reject });
    });
  return { calls, renew };
}

describe('keepLease: one lease-keeping rule, on injected timers', () => {
  it('renews every interval, never before it, and one renewal at a time: a beat during a renewal is skipped', async () => {
    const timers = new ManualTimers();
    const { calls, renew } = renewals();
    const lease = keepLease(renew, 1_000, timers);
    timers.advance(999);
    expect(calls).toHaveLength(0);
    timers.advance(1);
    expect(calls).toHaveLength(1);
    // Still settling when the next beat comes: no second renewal is sent beside it.
    timers.advance(1_000);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve(true);
    await flush();
    timers.advance(1_000);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(true);
    await lease.stop();
  });

  it('a refused renewal (lease taken over or released) ends the renewals for good', async () => {
    const timers = new ManualTimers();
    const { calls, renew } = renewals();
    keepLease(renew, 100, timers);
    timers.advance(100);
    calls[0]!.resolve(false);
    await flush();
    expect(timers.armed).toBe(0);
    timers.advance(10_000);
    expect(calls).toHaveLength(1);
  });

  it('a failed renewal is reported and tried again at the next beat', async () => {
    const timers = new ManualTimers();
    const { calls, renew } = renewals();
    const errors: unknown[] = [];
    const lease = keepLease(renew, 100, timers, (err) => errors.push(err));
    timers.advance(100);
    const down = new Error('database away');
    calls[0]!.reject(down);
    await flush();
    expect(errors).toEqual([down]);
    timers.advance(100);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(true);
    await flush();
    expect(errors).toHaveLength(1);
    expect(timers.armed).toBe(1);
    await lease.stop();
  });

  it('stop cancels the timer and waits for the renewal under way, so nothing touches the lease after it returns', async () => {
    const timers = new ManualTimers();
    const { calls, renew } = renewals();
    const lease = keepLease(renew, 100, timers);
    timers.advance(100);
    let stopped = false;
    const stopping = lease.stop().then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false);
    expect(timers.armed).toBe(0);
    calls[0]!.resolve(true);
    await stopping;
    expect(stopped).toBe(true);
    timers.advance(10_000);
    expect(calls).toHaveLength(1);
  });
});
