import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withinDeadline } from '../../src/outbound/deadline.js';

// A full collection while a request waits is what lost the abort on Node 20 (see src/outbound/deadline.ts).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A server that takes every request and never answers. */
let silent: Server;
let url: string;

beforeAll(async () => {
  silent = createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((r) => silent.close(r));
});

/**
 * How the started work settled and after how long, counted from before it starts (a first `fetch` spends tens of
 * milliseconds loading before it returns its promise); a hang shows as 'still waiting' after `patienceMs`.
 */
async function settle(start: () => Promise<unknown>, patienceMs = 5_000): Promise<{ outcome: string; ms: number }> {
  const started = performance.now();
  const p = start();
  let guard: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    p.then(
      () => 'resolved',
      (err: unknown) => (err instanceof Error ? err.name : 'rejected'),
    ),
    new Promise<string>((r) => (guard = setTimeout(() => r('still waiting'), patienceMs))),
  ]);
  clearTimeout(guard);
  return { outcome, ms: performance.now() - started };
}

describe('withinDeadline', () => {
  // With AbortSignal.any([AbortSignal.timeout(300)]) in its place, this fetch was still waiting after 3 s on Node 20.
  it('ends a fetch to a silent server at its time even when a garbage collection runs while it waits', async () => {
    for (let round = 0; round < 3; round++) {
      const pending = settle(() => withinDeadline(300, (signal) => fetch(url, { signal })));
      setTimeout(gc, 50);
      const { outcome, ms } = await pending;
      expect(outcome).toBe('TimeoutError');
      expect(ms).toBeGreaterThanOrEqual(290);
      expect(ms).toBeLessThan(2_000);
    }
  });

  it("ends at the parent's abort, with the parent's reason, when the parent aborts first", async () => {
    const parent = new AbortController();
    const pending = withinDeadline(60_000, (signal) => fetch(url, { signal }), parent.signal);
    setTimeout(() => {
      gc();
      parent.abort(new Error('the request ended'));
    }, 50);
    await expect(pending).rejects.toThrow('the request ended');
  });

  it('gives the work its value and rejects at once for a parent already aborted', async () => {
    await expect(withinDeadline(1_000, async () => 42)).resolves.toBe(42);
    const parent = new AbortController();
    parent.abort(new Error('already over'));
    await expect(withinDeadline(1_000, () => new Promise(() => undefined), parent.signal)).rejects.toThrow('already over');
  });
});

